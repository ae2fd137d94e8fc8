// SPDX-License-Identifier: MIT
/*
 * ELF images (executables, libraries, the vDSO, JIT perf maps): one per
 * (domain, path, build-id), loaded lazily. On first use an image chooses
 * its source — an embedded ELF with its build-id, the recorded [vdso]
 * or this machine's, else the file at its path if its build-id matches
 * the recording's, else a debug file with that build-id — and reads its
 * layout; on first resolve its symbols, from a separate debug file when
 * the binary has no .symtab (elf.c); on the first address no symbol
 * covers, its unwind tables (fde.c, image_fde). image_place() turns a map's ip into the
 * image's link-time address from the program headers.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "symbols/vdso.h"
#include "util/hash.h"
#include "util/hmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/xalloc.h"

static struct sym_image *image_elf_key_slow(struct sym_session *s, struct sym_domain *d,
					    const char *path, const uint8_t *bid, uint8_t bidlen,
					    bool vdso, const struct dp_mmap *ident);

/* The image of an identical earlier call, from s->image_memo: the same
 * domain, path, build-id and identity are the same key below (a stricter
 * test than the key's: its path is cut at 4000 bytes), found without
 * writing and hashing the key, ~150 bytes per mapping record. */
static uint64_t memo_hash(uint32_t dom, const char *path, size_t pl, const uint8_t *bid, uint8_t bidlen,
			  const struct dp_mmap *ident)
{
	uint64_t h = hash_fold64(hash_bytes64(path, pl), dom);
	h = hash_fold64(h, hash_bytes64(bid, bidlen));
	if (ident && ident->has_ident)
		h = hash_fold64(hash_fold64(hash_fold64(hash_fold64(h, ident->dev), ident->ino), ident->size),
				ident->mtime_ns);
	return h;
}

static bool memo_same(const struct image_memo *e, uint64_t h, uint32_t dom, const char *path,
		      const uint8_t *bid, uint8_t bidlen, const struct dp_mmap *ident)
{
	bool hid = ident && ident->has_ident;
	return e->img && e->h == h && e->dom == dom && e->bidlen == bidlen && e->has_ident == hid &&
	       (!hid || (e->dev == ident->dev && e->ino == ident->ino && e->size == ident->size &&
			 e->mtime == ident->mtime_ns)) &&
	       !memcmp(e->bid, bid, bidlen) && !strcmp(e->img->path, path);
}

static struct sym_image *image_elf_key(struct sym_session *s, struct sym_domain *d,
				       const char *path, const uint8_t *bid, uint8_t bidlen,
				       bool vdso, const struct dp_mmap *ident)
{
	if (bidlen > 20)
		bidlen = 20;    /* as the key's hex */
	uint64_t mh = memo_hash(d->id, path, strlen(path), bid, bidlen, ident);
	struct image_memo *me = &s->image_memo[mh % IMAGE_MEMO];
	if (memo_same(me, mh, d->id, path, bid, bidlen, ident))
		return me->img;
	struct sym_image *img = image_elf_key_slow(s, d, path, bid, bidlen, vdso, ident);
	bool hid = ident && ident->has_ident;
	*me = (struct image_memo){ .img = img, .h = mh, .dom = d->id, .bidlen = bidlen, .has_ident = hid };
	memcpy(me->bid, bid, bidlen);
	if (hid) {
		me->dev = ident->dev;
		me->ino = ident->ino;
		me->size = ident->size;
		me->mtime = ident->mtime_ns;
	}
	return img;
}

static struct sym_image *image_elf_key_slow(struct sym_session *s, struct sym_domain *d,
					    const char *path, const uint8_t *bid, uint8_t bidlen,
					    bool vdso, const struct dp_mmap *ident)
{
	/* "ID|PATH|BUILDID[|dev:ino:size:mtime]" (hex), made once per
	 * mapping: without snprintf, whose two calls were 5% of an
	 * annotate of a recording with 4,400 mappings */
	char key[4300];
	size_t o = fmt_u64(key, d->id);
	size_t pl = strnlen(path, 4000);
	key[o++] = '|';
	memcpy(key + o, path, pl);
	o += pl;
	key[o++] = '|';
	static const char hex[] = "0123456789abcdef";
	for (unsigned i = 0; i < bidlen && i < 20; i++) {
		key[o++] = hex[bid[i] >> 4];
		key[o++] = hex[bid[i] & 15];
	}
	if (ident && ident->has_ident) {
		const uint64_t f[4] = { ident->dev, ident->ino, ident->size, ident->mtime_ns };
		for (int i = 0; i < 4; i++) {
			key[o++] = i ? ':' : '|';
			int sh = 60;
			while (sh > 0 && !(f[i] >> sh))   /* as %x: no leading zeros */
				sh -= 4;
			for (; sh >= 0; sh -= 4)
				key[o++] = hex[(f[i] >> sh) & 15];
		}
	}
	key[o] = 0;
	struct sym_image *img = strmap_get(&s->images, key);
	if (img)
		return img;
	img = sym_image_new(s, d, IMG_ELF, vdso ? "[vdso]" : sym_base_name(path), path);
	img->is_vdso = vdso;
	img->buildid_len = bidlen > 20 ? 20 : bidlen;
	memcpy(img->buildid, bid, img->buildid_len);
	strmap_put(&s->images, pool_strdup(&s->pool, key), img);
	return img;
}

struct sym_image *image_elf(struct sym_session *s, struct sym_domain *d,
				   const char *path, const uint8_t *bid, uint8_t bidlen,
				   bool vdso)
{
	return image_elf_key(s, d, path, bid, bidlen, vdso, NULL);
}

struct sym_image *image_elf_ident(struct sym_session *s, struct sym_domain *d, const char *path,
				  const struct dp_mmap *mm, bool vdso)
{
	return image_elf_key(s, d, path, mm->buildid, mm->buildid_len, vdso, mm);
}

/* ---- images: loading ---- */

static void buildid_hex(const uint8_t *id, unsigned len, char *out)
{
	for (unsigned i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* Our own process's vDSO, copied: the same kernel gives the same vDSO. */
static void own_vdso(struct sym_session *s)
{
	if (s->own_vdso_done)
		return;
	s->own_vdso_done = true;
	if (vdso_copy(&s->own_vdso, &s->own_vdso_size) < 0) {
		s->own_vdso = NULL;
		s->own_vdso_size = 0;
	}
}

static bool same_buildid(const struct sym_image *img, const struct elf_info *info)
{
	return !img->buildid_len || !info->buildid_len ||
	       (img->buildid_len == info->buildid_len &&
		!memcmp(img->buildid, info->buildid, img->buildid_len));
}

/*
 * perf's build-id cache (what `perf record` and `perf buildid-cache`
 * fill: $PERF_BUILDID_DIR, else ~/.debug): DIR/.build-id/xx/rest/elf is
 * the file as it was when recorded. Looked at first, as perf does, for a
 * host image whose recording names its build-id; the copy is used only
 * when its own build-id is that one. Loads its layout and symbols.
 */
static bool buildid_cache_load(struct sym_session *s, struct sym_image *img)
{
	const char *dir = getenv("PERF_BUILDID_DIR");
	const char *home = getenv("HOME");
	char path[4200], hex[41];
	if (!img->buildid_len || img->buildid_len > 20)
		return false;
	buildid_hex(img->buildid, img->buildid_len, hex);
	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2);
	else if (home && *home)
		snprintf(path, sizeof(path), "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2);
	else
		return false;
	if (access(path, R_OK) != 0)
		return false;
	if (elf_load(path, NULL, 0, &img->info, &img->tab, 0) < 0 || !img->info.ok ||
	    !img->info.buildid_len || !same_buildid(img, &img->info)) {
		elf_info_release(&img->info);
		symtab_release(&img->tab);
		symtab_init(&img->tab);
		return false;
	}
	img->tab_loaded = true;
	img->info_usable = true;
	img->src_path = pool_strdup(&s->pool, path);
	if (!img->info.has_symtab) {
		/* a stripped copy: its debug file (by build-id) names more */
		struct sym_table dbg;
		char *found = NULL;
		symtab_init(&dbg);
		if (elf_load_debug(s, img->path, &img->info, &dbg, &found) > (int)img->tab.n) {
			symtab_release(&img->tab);
			img->tab = dbg;
		} else {
			symtab_release(&dbg);
		}
		free(found);
	}
	return true;
}

/* Choose the image's ELF source and read its layout (not its symbols). */
static void ensure_info(struct sym_session *s, struct sym_image *img)
{
	if (img->info_done)
		return;
	img->info_done = true;
	img->src_path = img->path;
	struct sym_domain *d = img->dom;
	bool refused = false;       /* its embedded ELF is over the limits */
	if (img->buildid_len) {
		char hex[41];
		buildid_hex(img->buildid, img->buildid_len, hex);
		struct blob *b = find_blob(d, DP_SYMTAB_ELF, hex);
		if (b && (img->blob = blob_data(s, d, b)))
			img->blob_size = b->size;
		refused = b && !img->blob;
	}
	if (!img->blob && img->is_vdso) {
		struct blob *b = find_blob(d, DP_SYMTAB_ELF, "[vdso]");
		if (!b)
			b = find_blob(d, DP_SYMTAB_ELF, "vdso");
		if (b) {
			if ((img->blob = blob_data(s, d, b)))
				img->blob_size = b->size;
			refused = !img->blob;
		} else if (d->kind == DP_DOMAIN_HOST) {
			own_vdso(s);
			img->blob = s->own_vdso;
			img->blob_size = s->own_vdso_size;
		}
	}
	int r;
	if (!img->blob && !img->is_vdso && !refused && d->kind == DP_DOMAIN_HOST && d->perf_cache &&
	    buildid_cache_load(s, img))
		return;
	/* with a name probe, whether its string tables hold the name comes
	 * with the layout: sym_name_ranges need not load a table without it */
	if (img->blob)
		r = elf_load_probe(NULL, img->blob, img->blob_size, &img->info, s->probe);
	else if (img->is_vdso || d->kind == DP_DOMAIN_PASSIVE || refused)
		r = -ENOENT;   /* a guest's files are not on this machine */
	else
		r = elf_load_probe(img->path, NULL, 0, &img->info, s->probe);
	if (r < 0 || !img->info.ok) {
		if (img->blob)
			sym_warn(s, "domain %s: embedded ELF for %s is not valid, its samples are [unknown]",
			     d->name, img->path);
		else if (!img->is_vdso && !refused)
			sym_warn(s, "%s: %s, its samples are [unknown]", img->path,
			     r == -EINVAL || r >= 0 ? "not an ELF file" : file_strerror(r));
		return;
	}
	if (img->blob || same_buildid(img, &img->info)) {
		img->info_usable = true;
		return;
	}
	/* the file changed since the recording: its symbols would lie; only a
	 * debug file with the recorded build-id can still name the samples */
	struct elf_info q;
	memset(&q, 0, sizeof(q));
	memcpy(q.buildid, img->buildid, img->buildid_len);
	q.buildid_len = img->buildid_len;
	char *found = NULL;
	elf_info_release(&img->info);
	if (elf_load_debug(s, img->path, &q, &img->tab, &found) > 0 &&
	    elf_load(found, NULL, 0, &img->info, NULL, 0) >= 0 && img->info.ok) {
		img->tab_loaded = true;
		img->info_usable = true;
		img->src_path = pool_strdup(&s->pool, found);
	} else {
		elf_info_release(&img->info);
		symtab_release(&img->tab);
		sym_warn(s, "%s: build-id differs from the recording's (file replaced?), "
		     "its samples are [unknown]", img->path);
	}
	free(found);
}

void image_load_symbols(struct sym_session *s, struct sym_image *img)
{
	if (img->syms_done)
		return;
	img->syms_done = true;
	if (img->kind == IMG_PERFMAP) {
		/* The embedded map first: what the recorder read, with the
		 * owner checks, while the process ran. Else, for the host, the
		 * /tmp file if believable (sym_perfmap_read), looked at once. */
		struct sym_domain *d = img->dom;
		struct blob *b = perfmap_blob(d, img->pid);
		const char *text = b ? (const char *)blob_data(s, d, b) : NULL;
		if (text) {
			perfmap_parse(text, b->size, &img->tab);
		} else if (d->kind == DP_DOMAIN_HOST && !img->perfmap_tried) {
			img->perfmap_tried = true;
			char *buf, why[200];
			size_t len;
			if (sym_perfmap_read(img->pid, SYM_NO_OWNER, &buf, &len, why, sizeof(why)) == 0) {
				perfmap_parse(buf, len, &img->tab);
				free(buf);
				text = "";
			} else if (why[0]) {
				sym_warn(s, "%s; its JIT samples are [anon]", why);
			}
		}
		if (!text) {
			/* none yet: a lookup before the file's end may still find
			 * the embedded map, read later */
			img->perfmap_none = true;
			img->syms_done = false;
			return;
		}
		img->perfmap_none = false;
		symtab_finish(&img->tab, 0);
		return;
	}
	if (img->kind != IMG_ELF) {
		if (img->kidx_mod)
			kernel_load_module(s, img);
		symtab_finish(&img->tab, 4096);
		return;
	}
	ensure_info(s, img);
	if (img->tab_loaded || !img->info_usable) {
		symtab_finish(&img->tab, 4096);
		return;
	}
	struct elf_info tmp;
	int n = img->blob ? elf_load(NULL, img->blob, img->blob_size, &tmp, &img->tab, 0)
			  : elf_load(img->path, NULL, 0, &tmp, &img->tab, 0);
	elf_info_release(&tmp);
	if (n < 0)
		n = 0;
	if (!img->info.has_symtab && !img->is_vdso) {
		struct sym_table dbg;
		char *found = NULL;
		symtab_init(&dbg);
		int dn = elf_load_debug(s, img->blob ? NULL : img->path, &img->info, &dbg, &found);
		if (dn > n) {        /* the richer table wins */
			symtab_release(&img->tab);
			img->tab = dbg;
			img->src_path = pool_strdup(&s->pool, found);
		} else {
			symtab_release(&dbg);
		}
		free(found);
	}
	symtab_finish(&img->tab, 4096);
}

const struct fde_range *image_fde(struct sym_session *s, struct sym_image *img, uint64_t addr,
				  const char **name)
{
	if (img->kind != IMG_ELF)
		return NULL;
	if (!img->fde_done) {
		img->fde_done = true;
		ensure_info(s, img);
		/* the unwind tables are in the binary (a debug file made with
		 * --only-keep-debug has .eh_frame as NOBITS, maybe .debug_frame);
		 * a replaced file only through the debug file found by build-id */
		if (img->info_usable) {
			int r = img->blob ? fde_open(NULL, img->blob, img->blob_size, &img->fde)
					  : fde_open(img->tab_loaded ? img->src_path : img->path,
						     NULL, 0, &img->fde);
			if (r <= 0)
				fde_release(&img->fde);
		}
	}
	size_t i;
	const struct fde_range *f = fde_find(&img->fde, addr, &i);
	if (!f)
		return NULL;
	if (!img->fde.names)
		img->fde.names = xcalloc(img->fde.n, sizeof(*img->fde.names));
	if (!img->fde.names[i]) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%.480s+0x%" PRIx64, img->name, f->start);
		img->fde.names[i] = pool_strdup(&s->pool, buf);
	}
	*name = img->fde.names[i];
	return f;
}

/* Delta from ip to the image's link-time address for an ELF map. */
void image_place(struct sym_session *s, struct sym_map *m)
{
	if (m->placed)
		return;
	m->placed = true;
	struct sym_image *img = m->img;
	ensure_info(s, img);
	const struct elf_info *in = &img->info;
	/* default: file offset == address, as in a shared library with
	 * matching offsets and addresses (no program headers known) */
	m->delta = m->pgoff - m->start;
	if (!in->ok || !in->nsegs)
		return;
	if (in->is_exec) {
		m->delta = 0;
		return;
	}
	uint64_t len = m->end - m->start;
	const struct elf_seg *best = NULL;
	for (size_t i = 0; i < in->nsegs; i++) {
		const struct elf_seg *g = &in->segs[i];
		uint64_t lo = g->off & ~(uint64_t)0xfff, hi = g->off + g->filesz;
		if (m->pgoff < hi && m->pgoff + len > lo) {
			if (!best || (g->exec && !best->exec))
				best = g;
		}
	}
	if (best)
		m->delta = best->vaddr - best->off + m->pgoff - m->start;
}
