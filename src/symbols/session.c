// SPDX-License-Identifier: MIT
/*
 * The symbol session: domains, processes and their mappings, images and
 * the lookups of symbols.h. Naming rules (see docs/symbols.md):
 *
 *  - host and active domains: user ips through the pid's mappings, kernel
 *    ips to "[kernel.kallsyms]" or a module "[mod]";
 *  - passive domains: kernel ips to "[guest.kernel]"/"[mod]", user ips to
 *    one pseudo image per address space "[guest user cr3=0x...]";
 *  - whatever no table names is "[unknown]" under the right image.
 *
 * Maps are never freed or changed once returned (a replaced mapping is
 * dropped from the process's list, not destroyed), so a map returned for
 * an early sample stays valid after a later exec or munmap. The only
 * field filled later is the placement (image address delta), computed on
 * first use: that is why some functions cast away const on a map the
 * session itself allocated.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "util/addrspace.h"
#include "util/hmap.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "util/file.h"
#include "util/xalloc.h"

#define UNKNOWN "[unknown]"

/* Bounds on what embedded symbol tables may decompress to, charged when a
 * table is first used (docs/symbols.md, "Limits"). A real domain needs one
 * kernel table (a kallsyms is 5-15 MB of text, System.map alike) and the
 * binaries its samples hit (a few MB each; the agent ships at most 256 MiB
 * per file): 256 MiB per domain is ten times a large real need. 512 MiB
 * per file bounds what one report holds for every domain together. A
 * table over the limit is refused: its samples keep their image name.
 * DOMPROF_MAX_SYMTAB=PER_DOMAIN[:PER_FILE] (bytes, K/M/G suffixes)
 * changes them. */
#define SYMTAB_DOMAIN_MAX (256ull << 20)
#define SYMTAB_FILE_MAX (512ull << 20)
/* Distinct warnings kept; a file with 20,000 domains lacking kernel
 * tables would otherwise print 20,000 lines. Further ones are counted. */
#define MAX_WARNINGS 100
/* Entries of all processes' mapping lists together (8 bytes each), as
 * inserted or copied: a fork shares its parent's list, but a crafted file
 * can fork a process with thousands of mappings and map again in each
 * child, copying the list each time. A real system-wide recording holds
 * a few million (thousands of processes, hundreds of mappings each). */
#define MAX_MAP_ENTRIES (16u << 20)
/* This machine's /proc/kallsyms, /proc/modules or a perf map. */
#define LOCAL_TEXT_MAX (256u << 20)

enum img_kind {
	IMG_ELF,      /* a file (or embedded ELF): link-time addresses, placed by map */
	IMG_ABS,      /* absolute addresses: kernel, modules, perf maps */
	IMG_PSEUDO,   /* no symbols at all */
	IMG_PERFMAP,  /* absolute, table from a perf map */
};

struct sym_image {
	const char *name, *path;
	uint8_t kind;
	bool is_vdso;
	bool info_done, syms_done;
	uint8_t buildid[20];
	uint8_t buildid_len;
	uint32_t pid;               /* IMG_PERFMAP */
	struct sym_domain *dom;
	struct sym_session *sess;
	const char *src_path;       /* file read for symbols (path or a debug file) */
	bool tab_loaded;            /* tab filled early (debug file by build-id) */
	struct elf_info info;
	bool info_usable;           /* the ELF source matches (build-id) */
	const uint8_t *blob;        /* embedded ELF chosen for it, or NULL */
	size_t blob_size;
	struct sym_table tab;
	struct ktab *kt;            /* core kernel from kallsyms/System.map (tab unused) */
	struct sym_image *next_all;
};

struct sym_map {
	uint64_t start, end, pgoff;
	struct sym_image *img;
	uint64_t delta;             /* image address = ip + delta (mod 2^64) */
	bool placed;
	bool anon;                  /* anonymous exec memory: JIT map candidate */
};

/* An embedded SYMTAB. Kept as stored (zstd) until used: a kallsyms is
 * only ever streamed (ktab.c); other kinds are decompressed on first use. */
struct blob {
	uint32_t kind;
	const char *name;
	uint8_t *data;              /* plain bytes + NUL, or NULL while compressed */
	size_t size;                /* uncompressed size */
	uint8_t *z;                 /* the zstd frame, or NULL */
	size_t zsize;
	uint8_t admit;              /* 0 not asked yet, 1 within the limits, 2 refused */
};

struct kmod {
	const char *name;
	uint64_t start, end;        /* end == 0: not known yet */
	struct sym_image *img;
	struct sym_map *map;
};

struct sym_domain {
	uint32_t id;
	uint8_t kind;
	const char *name;
	uint64_t kaslr;
	struct blob *blobs;
	size_t nblobs, cblobs;
	/* blob lookups, index+1 of the first blob of each: a file may carry
	 * tens of thousands of tables and as many images to match */
	size_t first_kind[8];       /* by kind (kinds < 8) */
	struct hmap blobidx;        /* "kind|lowercase name" -> index+1 */
	struct hmap perfmapidx;     /* perf map tables by pid -> index+1 */
	bool kernel_done;
	struct sym_image *kimg;
	struct sym_map *kmap;
	struct kmod *mods;
	size_t nmods, cmods;
	struct hmap modidx;       /* module name -> index+1 while loading */
	struct hmap pseudo;       /* name -> map */
	struct hmap asids;        /* guest cr3 -> map */
	struct sym_map *last_asid_map;
	uint64_t last_asid;
	uint64_t symtab_used;       /* bytes decompressed for its tables (admitted) */
	bool symtab_refused;        /* a table of it was over the limits */
};

struct proc {
	struct sym_map **maps;      /* sorted by start, not overlapping */
	size_t n, cap;
	size_t *shared;             /* when maps is shared with forks: the number
				     * of processes holding it (copied on change);
				     * NULL when this process owns it alone */
	const char *comm;
	uint8_t perfmap_state;      /* 0 unchecked, 1 none, 2 present */
	struct sym_map *perfmap;
};

static void proc_drop_maps(struct proc *p);

struct sym_session {
	struct sym_pool pool;
	struct sym_domain **doms;   /* in order of first appearance */
	size_t ndoms, cdoms;
	struct hmap domidx;         /* domain id -> sym_domain */
	struct sym_domain *last_dom;
	struct hmap procs;
	struct proc *last_proc;
	uint64_t last_proc_key;
	struct hmap images;
	struct sym_image *all_images;
	struct sym_map **maps;      /* every map ever made, for freeing */
	size_t nmaps, cmaps;
	const char **warn;
	size_t nwarn, cwarn;
	uint8_t *own_vdso;
	size_t own_vdso_size;
	bool own_vdso_done;
	const char *debug_dir;      /* root of separate debug files */
	struct hmap warnidx;        /* warning text -> 1, to keep each once */
	uint64_t symtab_domain_max, symtab_file_max, symtab_used;
	uint64_t refused_tables, refused_bytes;
	size_t refused_warn;        /* index+1 in warn[] of the refusal summary */
	char refused_line[320];
	uint64_t map_entries;       /* mapping-list entries made so far */
	uint64_t warn_more;         /* distinct warnings past MAX_WARNINGS */
	bool more_warn;
	char more_line[64];
};

/* ---- session ---- */

/* "123", "64K", "256M", "1G" -> bytes; false when not a size. */
static bool parse_size(const char *p, const char **end, uint64_t *out)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(p, &e, 10);
	if (e == p || errno || *p == '-')
		return false;
	unsigned shift = 0;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	default: break;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	*end = e;
	return true;
}

static void warn(struct sym_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The decompression limits, from DOMPROF_MAX_SYMTAB=PER_DOMAIN[:PER_FILE]
 * when set (a single value bounds both). */
static void symtab_limits(struct sym_session *s)
{
	s->symtab_domain_max = SYMTAB_DOMAIN_MAX;
	s->symtab_file_max = SYMTAB_FILE_MAX;
	const char *env = getenv("DOMPROF_MAX_SYMTAB");
	if (!env || !*env)
		return;
	uint64_t dom, file;
	const char *e;
	bool ok = parse_size(env, &e, &dom);
	file = dom;
	if (ok && *e == ':')
		ok = parse_size(e + 1, &e, &file);
	if (ok && !*e) {
		s->symtab_domain_max = dom;
		s->symtab_file_max = file;
	} else {
		warn(s, "DOMPROF_MAX_SYMTAB='%.64s' is not PER_DOMAIN[:PER_FILE] (bytes, K/M/G): "
		     "using %llu MiB per domain, %llu MiB per file", env,
		     SYMTAB_DOMAIN_MAX >> 20, SYMTAB_FILE_MAX >> 20);
	}
}

struct sym_session *sym_session_new(void)
{
	struct sym_session *s = xcalloc(1, sizeof(struct sym_session));
	s->debug_dir = "/usr/lib/debug";
	symtab_limits(s);
	return s;
}

void sym_set_debug_dir(struct sym_session *s, const char *dir)
{
	if (dir && *dir) {
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			n--;
		s->debug_dir = pool_strndup(&s->pool, dir, n);
	}
}

static void warn(struct sym_session *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* a file with many domains gives many warnings: each kept once,
	 * found by hash, not by comparing with every earlier one */
	if (strmap_get(&s->warnidx, buf))
		return;
	if (s->nwarn >= MAX_WARNINGS) {
		/* past the cap, one line counts the rest (each still once) */
		const char *seen = pool_strdup(&s->pool, buf);
		strmap_put(&s->warnidx, seen, (void *)seen);
		s->warn_more++;
		snprintf(s->more_line, sizeof(s->more_line),
			 "%" PRIu64 " more symbol warnings not shown", s->warn_more);
		if (!s->more_warn) {
			if (s->nwarn == s->cwarn)
				xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
			s->warn[s->nwarn++] = s->more_line;
			s->more_warn = true;
		}
		return;
	}
	if (s->nwarn == s->cwarn)
		xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
	const char *w = pool_strdup(&s->pool, buf);
	s->warn[s->nwarn++] = w;
	strmap_put(&s->warnidx, w, (void *)w);
}

size_t sym_warnings(const struct sym_session *s, const char *const **out)
{
	*out = (const char *const *)s->warn;
	return s->nwarn;
}

void sym_session_free(struct sym_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndoms; i++) {
		struct sym_domain *d = s->doms[i];
		for (size_t j = 0; j < d->nblobs; j++) {
			free(d->blobs[j].data);
			free(d->blobs[j].z);
		}
		free(d->blobs);
		hmap_release(&d->blobidx);
		hmap_release(&d->perfmapidx);
		free(d->mods);
		free(d->modidx.v);
		free(d->pseudo.v);
		free(d->asids.v);
		free(d);
	}
	free(s->doms);
	free(s->domidx.v);
	free(s->warnidx.v);
	for (size_t i = 0; i < s->procs.cap; i++) {
		struct proc *p = s->procs.v[i].val;
		if (p) {
			proc_drop_maps(p);
			free(p);
		}
	}
	free(s->procs.v);
	for (struct sym_image *img = s->all_images, *n; img; img = n) {
		n = img->next_all;
		elf_info_release(&img->info);
		symtab_release(&img->tab);
		ktab_free(img->kt);
		free(img);
	}
	free(s->images.v);
	for (size_t i = 0; i < s->nmaps; i++)
		free(s->maps[i]);
	free(s->maps);
	free(s->warn);
	free(s->own_vdso);
	pool_release(&s->pool);
	free(s);
}

static struct sym_domain *get_domain(struct sym_session *s, uint32_t id)
{
	if (s->last_dom && s->last_dom->id == id)
		return s->last_dom;
	struct sym_domain *d = u64map_get(&s->domidx, id);
	if (d)
		return s->last_dom = d;
	d = xcalloc(1, sizeof(*d));
	d->id = id;
	/* a domain without a DOMAIN record: the host if 0, else host-like */
	d->kind = id == DP_HOST_DOMAIN ? DP_DOMAIN_HOST : DP_DOMAIN_ACTIVE;
	d->name = pool_strdup(&s->pool, id == DP_HOST_DOMAIN ? "host" : "?");
	if (s->ndoms == s->cdoms)
		xgrow((void **)&s->doms, &s->cdoms, s->ndoms + 1, sizeof(*s->doms));
	s->doms[s->ndoms++] = d;
	u64map_put(&s->domidx, id, d);
	return s->last_dom = d;
}

void sym_set_domain(struct sym_session *s, uint32_t domain, uint8_t kind,
		    const char *name, uint64_t kaslr_offset)
{
	struct sym_domain *d = get_domain(s, domain);
	d->kind = kind;
	if (name)
		d->name = pool_strdup(&s->pool, name);
	d->kaslr = kaslr_offset;
}

static struct sym_map *new_map(struct sym_session *s, struct sym_image *img,
			       uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct sym_map *m = xcalloc(1, sizeof(*m));
	m->img = img;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	if (img && img->kind != IMG_ELF)
		m->placed = true;    /* absolute or symbol-less: delta 0 */
	if (s->nmaps == s->cmaps)
		xgrow((void **)&s->maps, &s->cmaps, s->nmaps + 1, sizeof(*s->maps));
	s->maps[s->nmaps++] = m;
	return m;
}

static struct sym_image *new_image(struct sym_session *s, struct sym_domain *d,
				   uint8_t kind, const char *name, const char *path)
{
	struct sym_image *img = xcalloc(1, sizeof(*img));
	img->kind = kind;
	img->dom = d;
	img->sess = s;
	img->name = pool_strdup(&s->pool, name);
	img->path = path && strcmp(path, name) ? pool_strdup(&s->pool, path) : img->name;
	symtab_init(&img->tab);
	if (kind == IMG_PSEUDO) {
		img->syms_done = img->info_done = true;
		symtab_finish(&img->tab, 0);
	}
	img->next_all = s->all_images;
	s->all_images = img;
	return img;
}

/* A symbol-less image and its one map covering everything, per domain. */
static struct sym_map *pseudo_map(struct sym_session *s, struct sym_domain *d, const char *name)
{
	struct sym_map *m = strmap_get(&d->pseudo, name);
	if (m)
		return m;
	struct sym_image *img = new_image(s, d, IMG_PSEUDO, name, name);
	m = new_map(s, img, 0, UINT64_MAX, 0);
	strmap_put(&d->pseudo, img->name, m);
	return m;
}

/* ---- embedded symbol tables ---- */

/* The blob index key of (kind, name): names match without case. The
 * caller frees it. */
static char *blob_key(uint32_t kind, const char *name)
{
	size_t n = strlen(name);
	char *k = xmalloc(n + 16);
	int o = snprintf(k, 16, "%" PRIu32 "|", kind);
	for (size_t i = 0; i <= n; i++)
		k[o + i] = (char)tolower((unsigned char)name[i]);
	return k;
}

/* The pid a perf map table is for: the number after "perf-" in its name
 * (or at its start when there is none); false when there is none. */
static bool perfmap_pid(const char *name, uint64_t *pid)
{
	const char *q = strstr(name, "perf-");
	q = q ? q + 5 : name;
	char *endp;
	unsigned long v = strtoul(q, &endp, 10);
	*pid = v;
	return endp != q && v <= UINT32_MAX;
}

static void index_blob(struct sym_session *s, struct sym_domain *d, size_t at)
{
	const struct blob *b = &d->blobs[at];
	void *val = (void *)(uintptr_t)(at + 1);
	if (b->kind < 8 && !d->first_kind[b->kind])
		d->first_kind[b->kind] = at + 1;
	char *k = blob_key(b->kind, b->name);
	if (!strmap_get(&d->blobidx, k))
		strmap_put(&d->blobidx, pool_strdup(&s->pool, k), val);
	free(k);
	uint64_t pid;
	if (b->kind == DP_SYMTAB_PERFMAP && perfmap_pid(b->name, &pid) &&
	    !u64map_get(&d->perfmapidx, pid))
		u64map_put(&d->perfmapidx, pid, val);
}

static void add_symtab(struct sym_session *s, uint32_t domain, const struct dp_symtab *st,
		       uint32_t compression, const uint8_t *stored, size_t stored_size)
{
	struct sym_domain *d = get_domain(s, domain);
	if (d->nblobs == d->cblobs)
		xgrow((void **)&d->blobs, &d->cblobs, d->nblobs + 1, sizeof(*d->blobs));
	struct blob *b = &d->blobs[d->nblobs++];
	b->kind = st->kind;
	b->name = pool_strdup(&s->pool, st->name ? st->name : "");
	b->z = NULL;
	b->admit = 0;
	b->zsize = 0;
	if (!st->data && compression == 1 && stored && stored_size && st->size) {
		/* the reader left it compressed (DP_READ_SYMTAB_STORED) */
		b->data = NULL;
		b->size = st->size;
		b->z = xmalloc(stored_size);
		memcpy(b->z, stored, stored_size);
		b->zsize = stored_size;
	} else {
		b->size = st->data ? st->size : 0;
		b->data = xmalloc(b->size + 1);
		if (b->size)
			memcpy(b->data, st->data, b->size);
		b->data[b->size] = '\0';
	}
	index_blob(s, d, d->nblobs - 1);
}

void sym_add_symtab(struct sym_session *s, uint32_t domain, const struct dp_symtab *st)
{
	if (st)
		add_symtab(s, domain, st, 0, NULL, 0);
}

void sym_add_symtab_rec(struct sym_session *s, const struct dp_record *rec)
{
	if (rec && rec->type == DP_REC_SYMTAB)
		add_symtab(s, rec->domain, &rec->u.symtab, rec->symtab_compression,
			   rec->symtab_stored, rec->symtab_stored_size);
}

/* "12288 MiB", "64 KiB", "100 bytes" (rounded up), into buf[32]. */
static const char *size_str(uint64_t n, char *buf)
{
	if (n >= (1u << 20))
		snprintf(buf, 32, "%" PRIu64 " MiB", (n >> 20) + !!(n & ((1u << 20) - 1)));
	else if (n >= 1024)
		snprintf(buf, 32, "%" PRIu64 " KiB", (n >> 10) + !!(n & 1023));
	else
		snprintf(buf, 32, "%" PRIu64 " bytes", n);
	return buf;
}

/*
 * May blob b of domain d be decompressed? Asked once per blob, when it is
 * first needed; its size is charged to the domain's and the file's
 * budgets. A refused table stays compressed and unused, and is counted in
 * one summary warning (updated in place, so it stays one line).
 */
static bool blob_admit(struct sym_session *s, struct sym_domain *d, struct blob *b)
{
	if (b->admit)
		return b->admit == 1;
	if (!b->z) {
		b->admit = 1;        /* stored plain: already in memory, nothing to expand */
		return true;
	}
	uint64_t n = b->size;
	if (n <= s->symtab_domain_max - d->symtab_used &&
	    n <= s->symtab_file_max - s->symtab_used) {
		d->symtab_used += n;
		s->symtab_used += n;
		b->admit = 1;
		return true;
	}
	b->admit = 2;
	d->symtab_refused = true;
	/* the stored copy is not needed any more */
	free(b->z);
	b->z = NULL;
	b->zsize = 0;
	s->refused_tables++;
	s->refused_bytes += n;
	char all[32], dom[32], file[32];
	snprintf(s->refused_line, sizeof(s->refused_line),
		 "%" PRIu64 " embedded symbol table(s) refused, %s uncompressed in all "
		 "(limits: %s per domain, %s per file; DOMPROF_MAX_SYMTAB raises them): "
		 "their samples are named by image only", s->refused_tables,
		 size_str(s->refused_bytes, all), size_str(s->symtab_domain_max, dom),
		 size_str(s->symtab_file_max, file));
	if (!s->refused_warn) {
		if (s->nwarn == s->cwarn)
			xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
		s->warn[s->nwarn++] = s->refused_line;
		s->refused_warn = s->nwarn;
	}
	return false;
}

/* The plain bytes of a blob, decompressed on first use (NUL-terminated),
 * or NULL when the limits refuse it (blob_admit). A blob that does not
 * decompress becomes empty, with a warning. */
static const uint8_t *blob_data(struct sym_session *s, struct sym_domain *d, struct blob *b)
{
	if (!blob_admit(s, d, b))
		return NULL;
	if (b->data)
		return b->data;
	uint8_t *buf = xmalloc(b->size + 1);
	size_t n = ZSTD_decompress(buf, b->size, b->z, b->zsize);
	if (ZSTD_isError(n) || n != b->size) {
		warn(s, "domain %s: embedded symbol table %s does not decompress, ignored",
		     d->name, b->name);
		b->size = 0;
	}
	buf[b->size] = '\0';
	b->data = buf;
	free(b->z);
	b->z = NULL;
	b->zsize = 0;
	return b->data;
}

/* Where the text of a kallsyms/System.map blob is, for ktab.c. */
static struct ktext blob_text(const struct blob *b)
{
	struct ktext t = { NULL, NULL, 0, b->size };
	if (b->data)
		t.plain = (const char *)b->data;
	else {
		t.z = b->z;
		t.zlen = b->zsize;
	}
	return t;
}

/* The first blob of a kind (name NULL) or of a kind and name (any case). */
static struct blob *find_blob(const struct sym_domain *d, uint32_t kind, const char *name)
{
	uintptr_t at;
	if (!name) {
		at = kind < 8 ? d->first_kind[kind] : 0;
	} else {
		char *k = blob_key(kind, name);
		at = (uintptr_t)strmap_get(&d->blobidx, k);
		free(k);
	}
	return at ? &d->blobs[at - 1] : NULL;
}

static bool is_vmlinux_name(const char *name)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	return !strncmp(b, "vmlinux", 7);
}

/* ---- tasks ---- */

static struct proc *get_proc(struct sym_session *s, uint32_t domain, uint32_t pid, bool create)
{
	uint64_t key = (uint64_t)domain << 32 | pid;
	if (s->last_proc && s->last_proc_key == key)
		return s->last_proc;
	struct proc *p = u64map_get(&s->procs, key);
	if (!p && create) {
		p = xcalloc(1, sizeof(*p));
		u64map_put(&s->procs, key, p);
	}
	if (p) {
		s->last_proc = p;
		s->last_proc_key = key;
	}
	return p;
}

/* Charge n more mapping-list entries (see MAX_MAP_ENTRIES); false, with
 * one warning, when the budget is spent. */
static bool map_budget(struct sym_session *s, size_t n)
{
	if (n <= MAX_MAP_ENTRIES - s->map_entries) {
		s->map_entries += n;
		return true;
	}
	warn(s, "mapping records dropped: the recording needs more than %u M mapping entries "
	     "(forks of large processes that map again?); some user samples may be [unknown]",
	     MAX_MAP_ENTRIES >> 20);
	return false;
}

/* Let go of p's mapping list (shared or not); p has none after. */
static void proc_drop_maps(struct proc *p)
{
	if (!p->shared || --*p->shared == 0) {
		free(p->maps);
		free(p->shared);
	}
	p->maps = NULL;
	p->n = p->cap = 0;
	p->shared = NULL;
}

/* Before changing p's list: a list shared with forks is copied first,
 * within the session's budget of list entries. False when over it. */
static bool proc_own_maps(struct sym_session *s, struct proc *p)
{
	if (!p->shared)
		return true;
	if (*p->shared == 1) {
		free(p->shared);
	} else {
		if (!map_budget(s, p->n))
			return false;
		struct sym_map **own = xmalloc((p->cap ? p->cap : 1) * sizeof(*own));
		if (p->n)
			memcpy(own, p->maps, p->n * sizeof(*own));
		--*p->shared;
		p->maps = own;
	}
	p->shared = NULL;
	return true;
}

void sym_add_task(struct sym_session *s, uint32_t domain, const struct dp_task *t)
{
	if (!t)
		return;
	get_domain(s, domain);
	switch (t->kind) {
	case DP_TASK_COMM: {
		struct proc *p = get_proc(s, domain, t->pid, true);
		/* the process is named by its main thread; others name it only
		 * until the main thread is seen */
		if (t->comm && (t->tid == t->pid || !p->comm))
			p->comm = pool_strdup(&s->pool, t->comm);
		break;
	}
	case DP_TASK_FORK: {
		if (t->pid == t->ppid)
			break;       /* a new thread shares its process's maps */
		struct proc *parent = get_proc(s, domain, t->ppid, false);
		struct proc *c = get_proc(s, domain, t->pid, true);
		proc_drop_maps(c);   /* a reused pid starts over */
		c->perfmap_state = 0;
		c->perfmap = NULL;
		if (parent) {
			/* the child shares the parent's list until either maps
			 * something: a crafted file may fork a process with
			 * thousands of mappings a hundred thousand times */
			if (parent->n) {
				if (!parent->shared) {
					parent->shared = xmalloc(sizeof(*parent->shared));
					*parent->shared = 1;
				}
				++*parent->shared;
				c->maps = parent->maps;
				c->n = parent->n;
				c->cap = parent->cap;
				c->shared = parent->shared;
			}
			c->comm = parent->comm;
		}
		if (t->comm && *t->comm)
			c->comm = pool_strdup(&s->pool, t->comm);
		break;
	}
	default:
		/* EXIT: keep the maps, late samples of the process still need them */
		break;
	}
}

const char *sym_comm(struct sym_session *s, uint32_t domain, uint32_t pid)
{
	struct proc *p = get_proc(s, domain, pid, false);
	return p && p->comm ? p->comm : UNKNOWN;
}

/* ---- mappings ---- */

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

static struct sym_image *elf_image(struct sym_session *s, struct sym_domain *d,
				   const char *path, const uint8_t *bid, uint8_t bidlen,
				   bool vdso)
{
	char key[4200];
	int o = snprintf(key, sizeof(key), "%" PRIu32 "|%.4000s|", d->id, path);
	for (unsigned i = 0; i < bidlen && i < 20; i++)
		o += snprintf(key + o, sizeof(key) - o, "%02x", bid[i]);
	struct sym_image *img = strmap_get(&s->images, key);
	if (img)
		return img;
	img = new_image(s, d, IMG_ELF, vdso ? "[vdso]" : base_name(path), path);
	img->is_vdso = vdso;
	img->buildid_len = bidlen > 20 ? 20 : bidlen;
	memcpy(img->buildid, bid, img->buildid_len);
	strmap_put(&s->images, pool_strdup(&s->pool, key), img);
	return img;
}

static bool is_anon_path(const char *p)
{
	return !*p || !strcmp(p, "//anon") || !strncmp(p, "[anon", 5) ||
	       !strncmp(p, "/memfd:", 7) || !strncmp(p, "/dev/zero", 9);
}

/* Module name from a kernel MMAP path: "/lib/modules/.../ext4.ko.xz" ->
 * "ext4"; perf and the kernel spell '-' as '_' in module names. */
static const char *module_name(struct sym_session *s, const char *path)
{
	const char *b = base_name(path);
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
	m->img = new_image(s, d, IMG_ABS, img, img);
	strmap_put(&d->modidx, m->name, (void *)(uintptr_t)d->nmods);
	return m;
}

void sym_add_mmap(struct sym_session *s, uint32_t domain, const struct dp_mmap *mm)
{
	if (!mm)
		return;
	struct sym_domain *d = get_domain(s, domain);
	const char *path = mm->path ? mm->path : "";
	uint64_t end = mm->start + mm->len < mm->start ? UINT64_MAX : mm->start + mm->len;
	if (mm->len == 0)
		return;
	if (mm->pid == UINT32_MAX) {
		/* kernel mappings: modules give ranges the tables may lack */
		if (strncmp(path, "[kernel.kallsyms]", 17) && !d->kernel_done) {
			const char *nm = module_name(s, path);
			struct kmod *k = get_kmod(s, d, nm, strlen(nm));
			if (!k->end) {
				k->start = mm->start;
				k->end = end;
			}
		}
		return;
	}
	struct proc *p = get_proc(s, domain, mm->pid, true);
	struct sym_map *m;
	if (!strcmp(path, "[vdso]")) {
		m = new_map(s, elf_image(s, d, "[vdso]", mm->buildid, mm->buildid_len, true),
			    mm->start, end, mm->pgoff);
	} else if (is_anon_path(path)) {
		struct sym_map *a = pseudo_map(s, d, "[anon]");
		m = new_map(s, a->img, mm->start, end, mm->pgoff);
		m->anon = true;
	} else if (path[0] == '[' || path[0] != '/') {
		/* [heap], [stack], [vsyscall], odd names: named, never resolved */
		struct sym_map *a = pseudo_map(s, d, path);
		m = new_map(s, a->img, mm->start, end, mm->pgoff);
	} else {
		m = new_map(s, elf_image(s, d, path, mm->buildid, mm->buildid_len, false),
			    mm->start, end, mm->pgoff);
	}

	/* replace what the new mapping overlaps; trim partial overlaps into
	 * new map objects so maps handed out earlier never change */
	if (!proc_own_maps(s, p))
		return;
	size_t lo = 0, hi = p->n;
	while (lo < hi) {    /* first map with end > start */
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid]->end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t first = lo, last = lo;   /* [first, last) overlap */
	while (last < p->n && p->maps[last]->start < m->end)
		last++;
	struct sym_map *left = NULL, *right = NULL;
	if (first < last) {
		struct sym_map *a = p->maps[first], *b = p->maps[last - 1];
		if (a->start < m->start) {
			left = new_map(s, a->img, a->start, m->start, a->pgoff);
			left->anon = a->anon;
		}
		if (b->end > m->end) {
			right = new_map(s, b->img, m->end, b->end, b->pgoff + (m->end - b->start));
			right->anon = b->anon;
		}
	}
	size_t add = 1 + (left != NULL) + (right != NULL);
	size_t newn = p->n - (last - first) + add;
	if (newn > p->n && !map_budget(s, newn - p->n))
		return;
	if (newn > p->cap)
		xgrow((void **)&p->maps, &p->cap, newn, sizeof(*p->maps));
	memmove(p->maps + first + add, p->maps + last, (p->n - last) * sizeof(*p->maps));
	size_t w = first;
	if (left)
		p->maps[w++] = left;
	p->maps[w++] = m;
	if (right)
		p->maps[w++] = right;
	p->n = newn;
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
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &a, &b) == 2 && a == base && b > a) {
			s->own_vdso_size = b - a;
			s->own_vdso = xmalloc(s->own_vdso_size);
			memcpy(s->own_vdso, (const void *)a, s->own_vdso_size);
			break;
		}
	}
	fclose(f);
}

static bool same_buildid(const struct sym_image *img, const struct elf_info *info)
{
	return !img->buildid_len || !info->buildid_len ||
	       (img->buildid_len == info->buildid_len &&
		!memcmp(img->buildid, info->buildid, img->buildid_len));
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
	if (img->blob)
		r = elf_load(NULL, img->blob, img->blob_size, &img->info, NULL, 0);
	else if (img->is_vdso || d->kind == DP_DOMAIN_PASSIVE || refused)
		r = -ENOENT;   /* a guest's files are not on this machine */
	else
		r = elf_load(img->path, NULL, 0, &img->info, NULL, 0);
	if (r < 0 || !img->info.ok) {
		if (img->blob)
			warn(s, "domain %s: embedded ELF for %s is not valid, its samples are [unknown]",
			     d->name, img->path);
		else if (!img->is_vdso && !refused)
			warn(s, "%s: %s, its samples are [unknown]", img->path,
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
	if (elf_load_debug(s->debug_dir, img->path, &q, &img->tab, &found) > 0 &&
	    elf_load(found, NULL, 0, &img->info, NULL, 0) >= 0 && img->info.ok) {
		img->tab_loaded = true;
		img->info_usable = true;
		img->src_path = pool_strdup(&s->pool, found);
	} else {
		elf_info_release(&img->info);
		symtab_release(&img->tab);
		warn(s, "%s: build-id differs from the recording's (file replaced?), "
		     "its samples are [unknown]", img->path);
	}
	free(found);
}

/* The perf map (/tmp/perf-PID.map) stored in the recording for pid, or
 * NULL: the blob whose name holds pid after "perf-" (or starts with it
 * when there is no "perf-"). */
static struct blob *perfmap_blob(struct sym_domain *d, uint32_t pid)
{
	uintptr_t at = (uintptr_t)u64map_get(&d->perfmapidx, pid);
	return at ? &d->blobs[at - 1] : NULL;
}

static void load_symbols(struct sym_session *s, struct sym_image *img)
{
	if (img->syms_done)
		return;
	img->syms_done = true;
	if (img->kind == IMG_PERFMAP) {
		struct sym_domain *d = img->dom;
		struct blob *b = perfmap_blob(d, img->pid);
		if (b) {
			const char *text = (const char *)blob_data(s, d, b);
			if (text)
				perfmap_parse(text, b->size, &img->tab);
		} else {
			char *buf;
			size_t len;
			int r = file_read_all(img->path, LOCAL_TEXT_MAX, &buf, &len);
			if (r == 0) {
				perfmap_parse(buf, len, &img->tab);
				free(buf);
			} else if (r != -ENOENT) {
				warn(s, "%s: %s, JIT samples are [unknown]", img->path, file_strerror(r));
			}
		}
		symtab_finish(&img->tab, 0);
		return;
	}
	if (img->kind != IMG_ELF) {
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
		int dn = elf_load_debug(s->debug_dir, img->blob ? NULL : img->path, &img->info, &dbg, &found);
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

/* Delta from ip to the image's link-time address for an ELF map. */
static void place(struct sym_session *s, struct sym_map *m)
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
	struct ktext src = blob_text(b);
	d->kimg->kt = ktab_new(&src);
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
		warn(s, "domain %s: embedded %s does not decompress completely, "
		     "some kernel samples may be [unknown]", d->name, what);
	sink->core = NULL;
	ktab_finish(d->kimg->kt, 4096);
}

static void ensure_kernel(struct sym_session *s, struct sym_domain *d)
{
	if (d->kernel_done)
		return;
	d->kernel_done = true;
	const char *kname = d->kind == DP_DOMAIN_PASSIVE ? "[guest.kernel]" : "[kernel.kallsyms]";
	d->kimg = new_image(s, d, IMG_ABS, kname, kname);
	struct kctx kc = { s, d };
	struct ksym_sink sink = { .kernel = &d->kimg->tab, .ctx = &kc, .module = kmod_table };
	struct blob *ks = find_blob(d, DP_SYMTAB_KALLSYMS, NULL);
	if (!ks)
		ks = find_blob(d, DP_SYMTAB_KALLSYMS_DELTA, NULL);
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
	if (!ks && vm && !blob_admit(s, d, vm))
		vm = NULL;
	if (!ks && !vm && sm && !blob_admit(s, d, sm))
		sm = NULL;
	const char *what = "kallsyms";
	if (ks) {
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
			warn(s, "domain %s: embedded vmlinux has no usable symbols", d->name);
		what = "vmlinux";
	} else if (sm) {
		what = "System.map";
		parse_ksyms_blob(s, d, sm, d->kaslr, &sink, what);
	} else if (d->symtab_refused) {
		/* said once for all domains by the refusal summary */
	} else if (d->id == DP_HOST_DOMAIN && d->kind == DP_DOMAIN_HOST) {
		size_t len;
		char *buf = read_file(s, "/proc/kallsyms", &len);
		if (buf) {
			warn(s, "no kallsyms in the recording: using this machine's /proc/kallsyms "
			     "(wrong if the kernel was rebooted since)");
			ksyms_parse(buf, len, 0, &sink);
			free(buf);
			if (!find_blob(d, DP_SYMTAB_MODULES, NULL) && (buf = read_file(s, "/proc/modules", &len))) {
				kmodules_parse(buf, len, kmod_range, &kc);
				free(buf);
			}
		} else {
			warn(s, "no kallsyms in the recording and /proc/kallsyms unreadable: "
			     "kernel samples are [unknown]");
		}
	} else {
		warn(s, "domain %s: no kernel symbol table in the recording, kernel samples are [unknown]",
		     d->name);
	}
	if (sink.zero_addrs && !d->kimg->tab.n && !(d->kimg->kt && ktab_count(d->kimg->kt)))
		warn(s, "domain %s: %s addresses are all zero (kptr_restrict?): kernel samples are [unknown]",
		     d->name, what);
	if (sink.bad_lines)
		warn(s, "domain %s: %zu malformed %s lines skipped", d->name, sink.bad_lines, what);
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
		symtab_finish(t, 4096);
		if (t->n) {
			uint64_t lo = t->v[0].start, hi = t->v[t->n - 1].end;
			if (!m->end || lo < m->start)
				m->start = lo;
			if (!m->end || hi > m->end)
				m->end = hi;
		}
		if (!m->end || m->end <= m->start)
			continue;    /* nowhere to put it */
		m->map = new_map(s, m->img, m->start, m->end, 0);
		d->mods[w++] = *m;
	}
	d->nmods = w;
	if (d->nmods)
		qsort(d->mods, d->nmods, sizeof(*d->mods), cmp_kmod);
	free(d->modidx.v);
	memset(&d->modidx, 0, sizeof(d->modidx));
	d->kmap = new_map(s, d->kimg, 0, UINT64_MAX, 0);
}

static const struct sym_map *kernel_map(struct sym_session *s, struct sym_domain *d, uint64_t ip)
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

/* ---- lookup ---- */

static const struct sym_map *guest_user_map(struct sym_session *s, struct sym_domain *d,
					    bool has_asid, uint64_t asid)
{
	if (!has_asid)
		return pseudo_map(s, d, "[guest user]");
	if (d->last_asid_map && d->last_asid == asid)
		return d->last_asid_map;
	struct sym_map *m = u64map_get(&d->asids, asid);
	if (!m) {
		char name[64];
		snprintf(name, sizeof(name), "[guest user cr3=0x%" PRIx64 "]", asid);
		struct sym_image *img = new_image(s, d, IMG_PSEUDO, name, name);
		m = new_map(s, img, 0, UINT64_MAX, 0);
		u64map_put(&d->asids, asid, m);
	}
	d->last_asid = asid;
	return d->last_asid_map = m;
}

/* The pid's JIT map image, if a perf map exists for it. */
static struct sym_map *perfmap_map(struct sym_session *s, struct sym_domain *d,
				   struct proc *p, uint32_t pid)
{
	if (p->perfmap_state == 0) {
		p->perfmap_state = 1;
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
		bool have = perfmap_blob(d, pid) != NULL;
		struct stat st;
		if (!have && d->kind == DP_DOMAIN_HOST && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			have = true;
		if (have) {
			struct sym_image *img = new_image(s, d, IMG_PERFMAP, base_name(path), path);
			img->pid = pid;
			p->perfmap = new_map(s, img, 0, UINT64_MAX, 0);
			p->perfmap_state = 2;
		}
	}
	return p->perfmap;
}

const struct sym_map *sym_find_map(struct sym_session *s, uint32_t domain,
				   uint32_t pid, uint8_t mode, bool has_asid,
				   uint64_t asid, uint64_t ip)
{
	struct sym_domain *d = get_domain(s, domain);
	bool khalf = ip >= KERNEL_ADDR_START;
	if (mode == DP_MODE_HYPERVISOR)
		return pseudo_map(s, d, "[hypervisor]");
	if (d->kind == DP_DOMAIN_PASSIVE) {
		if (mode == DP_MODE_KERNEL || mode == DP_MODE_GUEST_KERNEL ||
		    (mode == DP_MODE_UNKNOWN && khalf))
			return kernel_map(s, d, ip);
		return guest_user_map(s, d, has_asid, asid);
	}
	switch (mode) {
	case DP_MODE_KERNEL:
		return kernel_map(s, d, ip);
	case DP_MODE_GUEST_KERNEL:
		/* a KVM host's view of some guest's kernel: no table for it */
		return pseudo_map(s, d, "[guest.kernel]");
	case DP_MODE_GUEST_USER:
		return guest_user_map(s, d, has_asid, asid);
	default:
		break;
	}
	struct proc *p = get_proc(s, domain, pid, false);
	if (p && p->n) {
		size_t lo = 0, hi = p->n;
		while (lo < hi) {    /* first map with start > ip */
			size_t mid = lo + (hi - lo) / 2;
			if (p->maps[mid]->start <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && ip < p->maps[lo - 1]->end) {
			struct sym_map *m = p->maps[lo - 1];
			if (m->anon) {
				struct sym_map *j = perfmap_map(s, d, p, pid);
				if (j)
					return j;
			}
			return m;
		}
	}
	if (khalf)
		return kernel_map(s, d, ip);
	if (p) {
		/* JIT code whose mapping was not recorded */
		struct sym_map *j = perfmap_map(s, d, p, pid);
		if (j) {
			load_symbols(s, j->img);
			if (symtab_find(&j->img->tab, ip))
				return j;
		}
	}
	return pseudo_map(s, d, UNKNOWN);
}

void sym_want(struct sym_session *s, const struct sym_map *cm, uint64_t ip)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	struct sym_image *img = m->img;
	if (!img->kt)
		return;    /* only the kernel table fetches names in batches */
	place(s, m);
	size_t idx;
	uint64_t start, end;
	if (ktab_find(img->kt, ip + m->delta, &idx, &start, &end))
		ktab_want(img->kt, idx);
}

const struct sym_image *sym_map_image(const struct sym_map *m)
{
	return m->img;
}

const char *sym_image_name(const struct sym_image *img)
{
	return img->name;
}

uint64_t sym_map_to_image(const struct sym_map *cm, uint64_t ip)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	if (!m->placed)
		place(m->img->sess, m);
	return ip + m->delta;
}

void sym_resolve(struct sym_session *s, const struct sym_map *cm, uint64_t ip,
		 struct sym_result *out)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	struct sym_image *img = m->img;
	place(s, m);
	uint64_t addr = ip + m->delta;
	out->image = img->name;
	out->image_path = img->path;
	load_symbols(s, img);
	if (img->kt) {
		size_t idx;
		uint64_t start, end;
		if (ktab_find(img->kt, addr, &idx, &start, &end)) {
			out->symbol = ktab_name(img->kt, idx, &s->pool);
			out->sym_start = start;
			out->offset = addr - start;
			out->known = true;
			return;
		}
	}
	struct sym_entry *e = symtab_find(&img->tab, addr);
	if (!e) {
		out->symbol = UNKNOWN;
		out->sym_start = 0;
		out->offset = addr;
		out->known = false;
		return;
	}
	if (!(e->flags & SYM_F_DEMANGLED)) {
		e->flags |= SYM_F_DEMANGLED;
		char *dm = sym_demangle(e->u.name);
		if (dm) {
			e->u.name = pool_strdup(&s->pool, dm);
			free(dm);
		}
	}
	out->symbol = e->u.name;
	out->sym_start = e->start;
	out->offset = addr - e->start;
	out->known = true;
}
