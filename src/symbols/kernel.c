// SPDX-License-Identifier: MIT
/*
 * The kernel image of a domain and its modules, built on the first
 * kernel lookup: the core table from the recording's kernel symbol index
 * (kind 8, decoded a block at a time by lookups), else its kallsyms (or
 * its delta form), else an embedded vmlinux, else System.map (relocated
 * by the domain's KASLR offset), else for the host this machine's
 * /proc/kallsyms with a warning. Only the table used is charged to the
 * limits (blobs.c). Module ranges come from /proc/modules text or kernel
 * MMAP records and are widened to cover the module's symbols (with an
 * index, the span of them it records: their symbols load on the
 * module's first lookup).
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "util/hmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "symbols/kcache.h"
#include "util/file.h"
#include "util/le.h"
#include "util/xalloc.h"

static bool is_vmlinux_name(const char *name)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	return !strncmp(b, "vmlinux", 7);
}

/* Module name from a kernel MMAP path: "/lib/modules/.../ext4.ko.xz" ->
 * "ext4"; perf and the kernel spell '-' as '_' in module names. */
static const char *module_name(struct sym_session *s, const char *path)
{
	const char *b = sym_base_name(path);
	size_t n = strcspn(b, ".");
	char buf[256];
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = b[i] == '-' ? '_' : b[i];
	buf[n] = '\0';
	if (buf[0] == '[' && n > 2 && buf[n - 1] == ']') {
		buf[n - 1] = '\0';
		return pool_strdup(&s->pool, buf + 1);
	}
	return pool_strdup(&s->pool, buf);
}

static struct kmod *get_kmod(struct sym_session *s, struct sym_domain *d, const char *name, size_t len)
{
	char buf[256];
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	uintptr_t idx = (uintptr_t)strmap_get(&d->modidx, buf);
	if (idx)
		return &d->mods[idx - 1];
	if (d->nmods == d->cmods)
		xgrow((void **)&d->mods, &d->cmods, d->nmods + 1, sizeof(*d->mods));
	struct kmod *m = &d->mods[d->nmods++];
	memset(m, 0, sizeof(*m));
	m->name = pool_strdup(&s->pool, buf);
	char img[260];
	snprintf(img, sizeof(img), "[%s]", buf);
	m->img = sym_image_new(s, d, IMG_ABS, img, img);
	strmap_put(&d->modidx, m->name, (void *)(uintptr_t)d->nmods);
	return m;
}

void kernel_add_mmap(struct sym_session *s, struct sym_domain *d, const struct dp_mmap *mm,
		     uint64_t end)
{
	const char *path = mm->path ? mm->path : "";
	uint64_t start = mm->start;
	if (!strncmp(path, "[kernel.kallsyms]", 17) && mm->buildid_len && !d->kbuildid_len) {
		d->kbuildid_len = mm->buildid_len > 20 ? 20 : mm->buildid_len;
		memcpy(d->kbuildid, mm->buildid, d->kbuildid_len);
	}
	if (strncmp(path, "[kernel.kallsyms]", 17) && !d->kernel_done) {
		const char *nm = module_name(s, path);
		struct kmod *k = get_kmod(s, d, nm, strlen(nm));
		if (!k->end) {
			k->start = start;
			k->end = end;
		}
	}
}

/* ---- kernel ---- */

struct kctx {
	struct sym_session *s;
	struct sym_domain *d;
};

static struct sym_table *kmod_table(void *ctx, const char *mod, size_t len)
{
	struct kctx *k = ctx;
	return &get_kmod(k->s, k->d, mod, len)->img->tab;
}

static void kmod_range(void *ctx, const struct kmod_range *r)
{
	struct kctx *k = ctx;
	struct kmod *m = get_kmod(k->s, k->d, r->name, r->namelen);
	m->start = r->start;
	m->end = r->start + r->size < r->start ? UINT64_MAX : r->start + r->size;
}

/* This machine's /proc/kallsyms or /proc/modules (regular, size 0). */
static char *read_file(struct sym_session *s, const char *path, size_t *len)
{
	char *buf;
	return file_read_all(path, LOCAL_TEXT_MAX, &buf, len) == 0 ? buf : NULL;
}

static int cmp_kmod(const void *a, const void *b)
{
	const struct kmod *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

struct kparse {
	struct ksym_sink *sink;
	uint64_t bias;
};

static void kparse_block(void *ctx, const char *block, size_t len, uint64_t base)
{
	struct kparse *kp = ctx;
	kp->sink->base = base;
	ksyms_parse(block, len, kp->bias, kp->sink);
}

/* Parse an embedded kallsyms/System.map: core symbols into a compact
 * table over the (possibly compressed) blob, modules into their tables. */
static void parse_ksyms_blob(struct sym_session *s, struct sym_domain *d, struct blob *b,
			     uint64_t bias, struct ksym_sink *sink, const char *what)
{
	struct ktext bt = blob_text(b);
	d->kimg->kt = ktab_new(&bt);
	const struct ktext src = *ktab_text(d->kimg->kt);
	sink->core = d->kimg->kt;
	struct kparse kp = { sink, bias };
	sink->delta = b->kind == DP_SYMTAB_KALLSYMS_DELTA;
	sink->prev = 0;
	int r = ktext_stream(&src, kparse_block, &kp);
	if (ktab_unsorted(d->kimg->kt)) {
		/* not in address order: once more, collecting everything (the
		 * module symbols were taken the first time) */
		ktab_restart_slow(d->kimg->kt);
		struct ksym_sink again = { .core = d->kimg->kt, .delta = sink->delta };
		kp.sink = &again;
		r = ktext_stream(&src, kparse_block, &kp);
	}
	if (r < 0)
		sym_warn(s, "domain %s: embedded %s does not decompress completely, "
		     "some kernel samples may be [unknown]", d->name, what);
	sink->core = NULL;
	ktab_finish(d->kimg->kt, 4096);
}

/* A kernel symbol index opened as the domain's core table: a module gets
 * its image now, with the span of its text symbols from the index's module
 * table (so module ranges are what the text gives), and its symbols when a
 * lookup first needs them (kernel_load_module). */
static void use_ksymidx(struct sym_session *s, struct sym_domain *d, struct dp_ksymidx *ix,
			struct kctx *kc)
{
	/* in the order of the module table (the order the text names them
	 * first), as the text table makes them */
	for (size_t m = 0; m < dp_ksymidx_nmods(ix); m++) {
		uint64_t lo, hi;
		if (!dp_ksymidx_mod_range(ix, m, &lo, &hi))
			continue;
		size_t len;
		const char *name = dp_ksymidx_mod(ix, m, &len);
		struct kmod *km = get_kmod(kc->s, d, name, len);
		km->img->kidx_mod = (uint32_t)m + 1;
		/* as symtab_finish ends the last symbol: 4096 bytes on */
		km->ix_lo = lo + d->kaslr;
		km->ix_end = hi + d->kaslr + 4096 < hi + d->kaslr ? UINT64_MAX : hi + d->kaslr + 4096;
	}
	d->kimg->kt = ktab_new_index(ix, d->kaslr, 4096, s, d->name);
}

/*
 * The index's name filter (DP_SYMTAB_KSYMNF), when the recording has one
 * for this index: lookups by name (annotate) then decode only the blocks
 * that may hold the name. A refused one costs nothing but that speed: it
 * is said in a warning and the table works without it.
 * DOMPROF_IGNORE_KSYMNF=1: as a reader without kind 9 (tests compare).
 */
static void load_name_filter(struct sym_session *s, struct sym_domain *d, struct dp_ksymidx *ix)
{
	const char *ign = getenv("DOMPROF_IGNORE_KSYMNF");
	struct blob *b = ign && *ign == '1' ? NULL : find_blob(d, DP_SYMTAB_KSYMNF, NULL);
	if (!b || !blob_admit(s, d, b))
		return;
	const uint8_t *data = blob_data(s, d, b);
	struct dp_ksymnf *nf;
	char why[160];
	if (!data || dp_ksymnf_open(data, b->size, ix, &nf, why, sizeof(why)) < 0) {
		sym_warn(s, "domain %s: embedded kernel symbol name filter refused (%s)", d->name,
			 data ? why : "empty");
		return;
	}
	ktab_set_filter(d->kimg->kt, nf);
}

/*
 * The kernel symbol index (DP_SYMTAB_KSYMIDX): validated, and nothing of
 * it decoded here: the core kernel's table is the index's, whose blocks
 * lookups decode one at a time (use_ksymidx). Returns false when the
 * index is refused (a one-line warning says why), true when the domain's
 * core table is made. text_too: a kallsyms text of the domain replaces a
 * refused index.
 */
static bool load_ksymidx(struct sym_session *s, struct sym_domain *d, struct blob *b,
			 struct kctx *kc, bool text_too)
{
	/* a plain index expands by its blocks' raw sizes: charged as that */
	uint64_t expand = 0;
	if (!b->z && b->data && b->size >= DP_KSYMIDX_HEAD && !memcmp(b->data, DP_KSYMIDX_MAGIC, 8))
		expand = get64(b->data + 24);
	if (b->z ? !blob_admit(s, d, b) : !blob_admit_n(s, d, b, expand))
		return false;
	const uint8_t *data = blob_data(s, d, b);
	struct dp_ksymidx *ix;
	char why[160];
	if (!data || dp_ksymidx_open(data, b->size, &ix, why, sizeof(why)) < 0) {
		sym_warn(s, "domain %s: embedded kernel symbol index refused (%s): %s", d->name,
			 data ? why : "empty",
			 text_too ? "kernel symbols from the kallsyms text beside it"
				  : "kernel samples are [unknown]");
		return false;
	}
	use_ksymidx(s, d, ix, kc);
	load_name_filter(s, d, ix);
	return true;
}

void kernel_load_module(struct sym_session *s, struct sym_image *img)
{
	struct sym_domain *d = img->dom;
	struct dp_ksymidx *ix = d->kimg ? ktab_index(d->kimg->kt) : NULL;
	uint32_t m = img->kidx_mod;
	uint64_t lo, hi;
	if (!ix || !dp_ksymidx_mod_range(ix, m - 1, &lo, &hi))
		return;
	size_t nb = dp_ksymidx_nblocks(ix), b = 0, hi_b = nb;
	while (b < hi_b) {    /* the first block starting above lo, then one back */
		size_t mid = b + (hi_b - b) / 2;
		if (dp_ksymidx_index(ix, mid)->first_addr <= lo)
			b = mid + 1;
		else
			hi_b = mid;
	}
	if (b)
		b--;
	char why[160];
	for (; b < nb && dp_ksymidx_index(ix, b)->first_addr <= hi; b++) {
		if (!(dp_ksymidx_index(ix, b)->flags & DP_KSYMIDX_F_MODULES))
			continue;
		const struct dp_ksymblk *k = dp_ksymidx_block(ix, b, why, sizeof(why));
		if (!k) {
			sym_warn(s, "domain %s: embedded kernel symbol index damaged (%s): "
				 "some kernel samples are [unknown]", d->name, why);
			continue;
		}
		for (uint32_t e = 0; e < k->n; e++) {
			char t = k->type[e];
			if (k->mod[e] != m || !dp_ksym_text(t, k->addr[e]))
				continue;
			unsigned prio = t == 'T' ? 3 : t == 'W' || t == 'w' ? 2 : 1;
			symtab_add(&img->tab, k->addr[e] + d->kaslr, 0, 0, k->names + k->name[e],
				   k->namelen[e], prio);
		}
	}
}

/* A kallsyms read from a file (perf's build-id cache, this machine's
 * /proc/kallsyms; text is taken over by the image, which keeps it for the
 * names): core symbols into the compact table as an embedded kallsyms's,
 * modules into their tables. A sym_table of its ~120k symbols took ~9 MB
 * and a sort, most of a perf.data export's memory and a third of its
 * instructions. */
static void parse_ksyms_file(struct sym_domain *d, char *text, size_t len, struct ksym_sink *sink)
{
	struct ktext t = { .plain = text, .raw = len };
	d->kimg->ktext = text;
	d->kimg->kt = ktab_new(&t);
	sink->core = d->kimg->kt;
	sink->base = 0;
	ksyms_parse(text, len, 0, sink);
	if (ktab_unsorted(d->kimg->kt)) {
		/* as parse_ksyms_blob: once more, the core symbols only */
		ktab_restart_slow(d->kimg->kt);
		struct ksym_sink again = { .core = d->kimg->kt };
		ksyms_parse(text, len, 0, &again);
	}
	sink->core = NULL;
	ktab_finish(d->kimg->kt, 4096);
}

/* perf's build-id cache copy of the kernel's kallsyms, taken when it
 * recorded: $PERF_BUILDID_DIR (else ~/.debug)/[kernel.kallsyms]/BUILDID/
 * kallsyms, for the host kernel whose build-id the recording names. False
 * when there is no build-id or no directory to look in. */
static bool kallsyms_copy_path(const struct sym_domain *d, char *path, size_t pathlen)
{
	const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char hex[41];
	if (!d->kbuildid_len)
		return false;
	for (unsigned i = 0; i < d->kbuildid_len; i++)
		sprintf(hex + 2 * i, "%02x", d->kbuildid[i]);
	if (dir && *dir)
		snprintf(path, pathlen, "%s/[kernel.kallsyms]/%s/kallsyms", dir, hex);
	else if (home && *home)
		snprintf(path, pathlen, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, hex);
	else
		return false;
	return true;
}

/* A note of the kernel symbol cache, only with DOMPROF_KSYM_CACHE=verbose. */
#define kcache_note(s, mode, ...) \
	do { \
		if ((mode) == 2) \
			sym_warn(s, "kernel symbol cache: " __VA_ARGS__); \
	} while (0)

/*
 * The kallsyms text file path (this machine's /proc/kallsyms, perf's
 * build-id cache copy) as the domain's kernel table, through the kernel
 * symbol cache (kcache.h) when key is given: its index when the cache
 * holds one for the key, else the text, whose index is then stored in the
 * cache and used (so that a report reads the same table cold or warm).
 * A text with lines a text table would warn about is parsed as text, not
 * cached. warn is said when the table is this file's. Returns false,
 * having done nothing, when neither the cache nor the file can be read.
 */
static bool text_via_cache(struct sym_session *s, struct sym_domain *d, struct kctx *kc,
			   struct ksym_sink *sink, const char *path, const struct kcache_key *key,
			   int mode, const char *warn)
{
	char *buf = NULL, why[4400];
	size_t len = 0;
	struct dp_ksymidx *ix = NULL;
	if (key) {
		const uint8_t *data;
		size_t dlen;
		int r = kcache_load(key, &buf, &data, &dlen, why, sizeof(why));
		if (r == 0 && dp_ksymidx_open(data, dlen, &ix, why, sizeof(why)) == 0) {
			char cpath[4200];
			sym_warn(s, "%s", warn);
			kcache_note(s, mode, "read %s",
				    kcache_path(key, cpath, sizeof(cpath)) ? cpath : "the index");
			d->kimg->ktext = buf;
			use_ksymidx(s, d, ix, kc);
			return true;
		}
		if (r != -ENOENT)
			kcache_note(s, mode, "refused, %s read instead: %s", path, why);
		free(buf);
	}
	if (!(buf = read_file(s, path, &len)))
		return false;
	sym_warn(s, "%s", warn);
	size_t ixlen = 0, odd = 0;
	/* zstd's fast level -5: the cache is local, and compressing is most
	 * of what the cold report adds (a system-wide perf.data's cold
	 * export, 122k kallsyms symbols: 390 M instructions at level 1, 354 M
	 * at -5, for a file of 930 KB instead of 650) */
	uint8_t *made = key ? ksyms_index_build(buf, len, KCACHE_LEVEL, &ixlen, &odd) : NULL;
	if (made && !odd && dp_ksymidx_open(made, ixlen, &ix, why, sizeof(why)) == 0) {
		if (kcache_store(key, made, ixlen, why, sizeof(why)) < 0)
			kcache_note(s, mode, "not written: %s", why);
		else
			kcache_note(s, mode, "written");
		free(buf);
		d->kimg->ktext = (char *)made;
		use_ksymidx(s, d, ix, kc);
		return true;
	}
	if (made)
		kcache_note(s, mode, "not written: %s has lines a text table warns about", path);
	if (ix)
		dp_ksymidx_free(ix);
	free(made);
	parse_ksyms_file(d, buf, len, sink);
	return true;
}

/*
 * This machine's kernel symbols for a recording without a table of its
 * own: the live /proc/kallsyms, through the kernel symbol cache when the
 * recording names the running kernel's build-id and the machine's state
 * can be keyed (as before without the cache otherwise).
 */
static void live_kernel(struct sym_session *s, struct sym_domain *d, struct kctx *kc,
			struct ksym_sink *sink)
{
	size_t mlen = 0;
	bool modblob = find_blob(d, DP_SYMTAB_MODULES, NULL) != NULL;
	char *mods = read_file(s, "/proc/modules", &mlen);
	char why[4400];
	int mode = kcache_mode();
	struct kcache_key key;
	bool keyed = false;
	if (mode && !d->kbuildid_len) {
		kcache_note(s, mode, "not used: the recording names no kernel build-id");
	} else if (mode) {
		if (kcache_key_live(&key, mods, mlen, why, sizeof(why)) < 0)
			kcache_note(s, mode, "not used: %s", why);
		else if (key.buildid_len != d->kbuildid_len ||
			 memcmp(key.buildid, d->kbuildid, d->kbuildid_len))
			kcache_note(s, mode, "not used: the recording's kernel build-id is not the "
				    "running kernel's");
		else
			keyed = true;
	}
	if (!text_via_cache(s, d, kc, sink, "/proc/kallsyms", keyed ? &key : NULL, mode,
			    "no kallsyms in the recording: using this machine's /proc/kallsyms "
			    "(wrong if the kernel was rebooted since)")) {
		sym_warn(s, "no kallsyms in the recording and /proc/kallsyms unreadable: "
			 "kernel samples are [unknown]");
		free(mods);
		return;
	}
	if (!modblob && mods)
		kmodules_parse(mods, mlen, kmod_range, kc);
	free(mods);
}

/* perf's build-id cache copy of the kernel's kallsyms (cached_kallsyms's
 * path), through the kernel symbol cache keyed by the copy's identity.
 * False when there is no copy to read. */
static bool perf_copy_kernel(struct sym_session *s, struct sym_domain *d, struct kctx *kc,
			     struct ksym_sink *sink)
{
	char path[4200], why[4400], warn[4400];
	if (!kallsyms_copy_path(d, path, sizeof(path)))
		return false;
	int mode = kcache_mode();
	struct kcache_key key;
	bool keyed = false;
	struct stat st;
	if (stat(path, &st) < 0)
		return false;    /* no copy: nothing to say */
	if (mode && kcache_key_file(&key, d->kbuildid, d->kbuildid_len, path, why, sizeof(why)) < 0)
		kcache_note(s, mode, "not used: %s", why);
	else if (mode)
		keyed = true;
	snprintf(warn, sizeof(warn),
		 "no kallsyms in the recording: kernel symbols from perf's build-id cache (%s)", path);
	return text_via_cache(s, d, kc, sink, path, keyed ? &key : NULL, mode, warn);
}

static void ensure_kernel(struct sym_session *s, struct sym_domain *d)
{
	if (d->kernel_done)
		return;
	d->kernel_done = true;
	const char *kname = d->kind == DP_DOMAIN_PASSIVE ? "[guest.kernel]" : "[kernel.kallsyms]";
	d->kimg = sym_image_new(s, d, IMG_ABS, kname, kname);
	struct kctx kc = { s, d };
	struct ksym_sink sink = { .kernel = &d->kimg->tab, .ctx = &kc, .module = kmod_table };
	/* DOMPROF_IGNORE_KSYMIDX=1: as a reader that knows no kind 8 (for the
	 * tests comparing it with the text table written beside it) */
	const char *ign = getenv("DOMPROF_IGNORE_KSYMIDX");
	struct blob *xi = ign && *ign == '1' ? NULL : find_blob(d, DP_SYMTAB_KSYMIDX, NULL);
	struct blob *ks = find_blob(d, DP_SYMTAB_KALLSYMS, NULL);
	if (!ks)
		ks = find_blob(d, DP_SYMTAB_KALLSYMS_DELTA, NULL);
	bool xi_done = xi && load_ksymidx(s, d, xi, &kc, ks != NULL);
	if (xi_done || (xi && !ks))
		ks = NULL;    /* a refused index is not replaced by this machine's kallsyms */
	struct blob *sm = find_blob(d, DP_SYMTAB_SYSMAP, NULL);
	struct blob *vm = NULL;
	for (size_t i = 0; i < d->nblobs && !vm; i++)
		if (d->blobs[i].kind == DP_SYMTAB_ELF && is_vmlinux_name(d->blobs[i].name))
			vm = &d->blobs[i];
	/* only the table used is charged to the limits; a refused one is
	 * not replaced by this machine's kallsyms (it would name the
	 * samples wrongly), its kernel samples are [unknown] */
	if (ks && !blob_admit(s, d, ks))
		ks = NULL;
	if (xi)
		vm = sm = NULL;
	if (!ks && vm && !blob_admit(s, d, vm))
		vm = NULL;
	if (!ks && !vm && sm && !blob_admit(s, d, sm))
		sm = NULL;
	const char *what = "kallsyms";
	if (xi_done) {
		/* the core kernel's table is the index's */
	} else if (xi && !ks) {
		/* refused, said by load_ksymidx */
	} else if (ks) {
		/* The recorder stores offset 0 for a kallsyms of the same boot
		 * (already relocated) and a real offset only for a copy from
		 * another (nokaslr) boot, found by kaslr=auto or given. */
		parse_ksyms_blob(s, d, ks, d->kaslr, &sink, what);
	} else if (vm) {
		struct elf_info info;
		const uint8_t *data = blob_data(s, d, vm);
		int n = elf_load(NULL, data, vm->size, &info, &d->kimg->tab, d->kaslr);
		elf_info_release(&info);
		if (n <= 0)
			sym_warn(s, "domain %s: embedded vmlinux has no usable symbols", d->name);
		what = "vmlinux";
	} else if (sm) {
		what = "System.map";
		parse_ksyms_blob(s, d, sm, d->kaslr, &sink, what);
	} else if (d->symtab_refused) {
		/* said once for all domains by the refusal summary */
	} else if (d->id == DP_HOST_DOMAIN && d->kind == DP_DOMAIN_HOST && d->perf_cache &&
		   perf_copy_kernel(s, d, &kc, &sink)) {
		/* perf's copy, said by perf_copy_kernel */
	} else if (d->id == DP_HOST_DOMAIN && d->kind == DP_DOMAIN_HOST && d->no_live_kernel) {
		sym_warn(s, "no kallsyms in the recording, which was made on another host: "
		     "kernel samples are [unknown]");
	} else if (d->id == DP_HOST_DOMAIN && d->kind == DP_DOMAIN_HOST) {
		live_kernel(s, d, &kc, &sink);
	} else {
		sym_warn(s, "domain %s: no kernel symbol table in the recording, kernel samples are [unknown]",
		     d->name);
	}
	if (sink.zero_addrs && !d->kimg->tab.n && !(d->kimg->kt && ktab_count(d->kimg->kt)))
		sym_warn(s, "domain %s: %s addresses are all zero (kptr_restrict?): kernel samples are [unknown]",
		     d->name, what);
	if (sink.bad_lines)
		sym_warn(s, "domain %s: %zu malformed %s lines skipped", d->name, sink.bad_lines, what);
	for (size_t i = 0; i < d->nblobs; i++)
		if (d->blobs[i].kind == DP_SYMTAB_MODULES) {
			const char *text = (const char *)blob_data(s, d, &d->blobs[i]);
			if (text)
				kmodules_parse(text, d->blobs[i].size, kmod_range, &kc);
		}
	symtab_finish(&d->kimg->tab, 4096);

	/* modules: a range from /proc/modules or a kernel MMAP, widened to
	 * cover the module's symbols (text and data may be apart) */
	size_t w = 0;
	for (size_t i = 0; i < d->nmods; i++) {
		struct kmod *m = &d->mods[i];
		struct sym_table *t = &m->img->tab;
		uint64_t lo = 0, hi = 0;
		if (m->img->kidx_mod) {
			/* symbols loaded on first use: the index says their span */
			lo = m->ix_lo;
			hi = m->ix_end;
		} else {
			symtab_finish(t, 4096);
			if (t->n) {
				lo = t->v[0].start;
				hi = t->v[t->n - 1].end;
			}
		}
		if (hi) {
			if (!m->end || lo < m->start)
				m->start = lo;
			if (!m->end || hi > m->end)
				m->end = hi;
		}
		if (!m->end || m->end <= m->start)
			continue;    /* nowhere to put it */
		m->map = sym_map_new(s, m->img, m->start, m->end, 0);
		d->mods[w++] = *m;
	}
	d->nmods = w;
	if (d->nmods)
		qsort(d->mods, d->nmods, sizeof(*d->mods), cmp_kmod);
	free(d->modidx.v);
	memset(&d->modidx, 0, sizeof(d->modidx));
	d->kmap = sym_map_new(s, d->kimg, 0, UINT64_MAX, 0);
}

const struct sym_map *kernel_map(struct sym_session *s, struct sym_domain *d, uint64_t ip)
{
	ensure_kernel(s, d);
	size_t lo = 0, hi = d->nmods;
	while (lo < hi) {    /* first module with start > ip */
		size_t mid = lo + (hi - lo) / 2;
		if (d->mods[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest after widening: look back a little */
	for (size_t i = lo, k = 0; i > 0 && k < 4; i--, k++)
		if (ip < d->mods[i - 1].end)
			return d->mods[i - 1].map;
	return d->kmap;
}

