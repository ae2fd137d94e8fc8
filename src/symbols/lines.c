// SPDX-License-Identifier: MIT
/*
 * Source lines of addresses (symbols.h: sym_srcline), from the DWARF line
 * tables of an image through elfutils' libdw: the image's own file (its
 * embedded copy or the file on this machine) when it carries DWARF, else
 * its separate debug file (build-id directory, debuglink, debuginfod: the
 * search the symbol loader uses). One libdw handle per image, opened on
 * the first lookup and kept until the session ends; a lookup is one CU
 * search (.debug_aranges, or a bounded walk over the CUs) and one line
 * table search. Inlined code: the deepest inlined instance whose ranges
 * hold the address says which inlined function the code belongs to and
 * where it was inlined. That is what dwarf_getscopes answers, but it
 * walks the CU's DIE tree from its root for every address, which made
 * `report -s srcline` of a 200k-sample recording of domprof itself
 * (~20k distinct addresses, large CUs) spend 1.8 s in libdw; each CU's
 * tree is walked once instead, into a sorted table of address segments
 * and the inlined instance each is in (struct cu_inl).
 *
 * The DWARF is hostile input: libdw bounds its own reads; here every walk
 * (CUs, scopes) has a count bound, and names are copied into the
 * session's pool.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "symbols/lcache.h"
#include "symbols/symbols.h"
#include "util/file.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#define LINES_MAX_CUS 200000   /* CUs walked when .debug_aranges misses */
#define LINES_MAX_SCOPES 64    /* DIE nesting followed in a CU */
#define INL_MAX_DIES (4u << 20)    /* DIEs visited per CU */
#define INL_MAX_RANGES (1u << 20)  /* pc ranges kept per CU */
#define INL_MAX_DIE_RANGES 4096    /* pc ranges read per DIE */
#define INL_NONE UINT32_MAX

/* One CU's inlined code: disjoint segments sorted by address, each with
 * the deepest inlined instance (a DIE offset) holding it. Addresses in
 * no segment are in no inlined code, or in a subprogram nested deeper
 * than the last inlined instance around them. */
struct inl_seg {
	uint64_t lo, hi;
	uint32_t die;            /* index into dies */
};
struct cu_inl {
	struct inl_seg *seg;
	size_t nseg;
	Dwarf_Off *dies;
	size_t ndies;
};

struct img_lines {
	Elf *elf;                /* the image's file (lowest_code reads it) */
	Elf *delf;               /* libdw's: elf, or dwsect_image's copy in dbuf */
	void *dbuf;
	size_t dlen;
	const void *buf;         /* the image's bytes when it came from memory */
	size_t len;
	struct img_lines *twin;  /* a second handle on the same bytes (lines_twin) */
	bool borrowed;           /* a twin's: dbuf and fd are its owner's */
	Dwarf *dw;
	int fd;
	bool aranges_ok;
	uint64_t shift;          /* a kernel's: recorded address - file address */
	struct hmap cus;         /* CU DIE offset + 1 -> struct cu_inl * */
	struct cu_rng *rng;      /* every CU's pc ranges, sorted; built on */
	size_t nrng;             /* the first miss in .debug_aranges */
	bool rng_done;
	struct hmap paths;       /* line table's file name (libdw's, stable) -> pooled full path */
	struct sym_pool pool;    /* the answers' strings (live until lines_free) */
	struct hmap memo;        /* address + 1 -> struct memo_ent *: sym_srcline_prefetch's answers */
	int lc_kind;             /* the line cache key its file has (LC_OWN, LC_DEBUG), or -1:
				  * its answers are not cached */
};

/*
 * An image's line cache (lcache.h). Its key says which file the lines
 * came from: LC_OWN the image's file, LC_DEBUG the debug file the symbols
 * came from (src_path), as image_lines tries them; lines found any other
 * way (an embedded copy, the debug file a binary with its own .symtab
 * leads to: that search may find another file later) are not cached.
 */
enum { LC_OWN, LC_DEBUG, LC_KINDS };

struct img_lc {
	bool usable;             /* a build-id and a file on this machine, the cache on */
	bool tried;              /* the file was looked for */
	char *path[LC_KINDS];    /* the cache file of each kind */
	uint8_t key[LC_KINDS][LCACHE_KEY];
	bool has_key[LC_KINDS];
	int c_kind;              /* the key c was read with, -1: none read */
	struct lcache c;         /* its entries (after this run's store: with this run's) */
	struct lcache_ent *add;  /* answers from DWARF not in c (lines_cache_end writes them) */
	size_t nadd, cadd;
	int load_rc, store_rc;   /* 1: not done */
	char why[256], swhy[256];
	size_t hits, misses;     /* distinct addresses answered by c, by DWARF (prefetch) */
	struct lcache emb;       /* the recording's own line table of the image (SYMTAB kind
				  * 10, emb_load), asked before c; strings in the blob */
	struct lcache_ent *exp;  /* sym_lines_collect: the answers given, for sym_lines_export */
	bool no_store;           /* sym_lines_collect: the cache is read, never written (the
				  * recorder's read-back is not a report the user asked for) */
	size_t nexp, cexp;
};

struct memo_ent {
	struct sym_srcline out;
	bool ok;
};

struct cu_rng {
	uint64_t lo, hi;
	Dwarf_Off die;
};

/* by the leading u64: addresses, and the ranges' lo (their first field) */
static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const char *base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static bool has_debug_line(Elf *e)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 65536 && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (nm && (!strcmp(nm, ".debug_line") || !strcmp(nm, ".zdebug_line")))
			return true;
	}
	return false;
}

/* An image's file (a buffer or a regular file) when it has line tables:
 * its libelf handle open, libdw not yet (lines_dwarf); NULL otherwise */
static struct img_lines *lines_elf(const char *path, const void *buf, size_t len)
{
	struct img_lines *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	L->fd = -1;
	L->lc_kind = -1;
	elf_version(EV_CURRENT);   /* a kernel's file may be the first ELF read */
	if (buf) {
		L->buf = buf;
		L->len = len;
		L->elf = elf_memory((char *)buf, len);
	} else {
		L->fd = file_open_regular(path, NULL);
		if (L->fd >= 0)
			L->elf = elf_begin(L->fd, ELF_C_READ_MMAP, NULL);
	}
	if (L->elf && has_debug_line(L->elf))
		return L;
	if (L->elf)
		elf_end(L->elf);
	if (L->fd >= 0)
		close(L->fd);
	free(L);
	return NULL;
}

/* libdw on L: on its inflated copy (L->dbuf, dwsect.c) when it has one,
 * else on its file; NULL (L freed) when libdw refuses it */
static struct img_lines *lines_dwarf(struct img_lines *L)
{
	if (L->dbuf && !(L->delf = elf_memory(L->dbuf, L->dlen))) {
		free(L->dbuf);
		L->dbuf = NULL;
	}
	if (!L->delf)
		L->delf = L->elf;
	L->dw = dwarf_begin_elf(L->delf, DWARF_C_READ, NULL);
	if (!L->dw) {
		if (L->delf != L->elf)
			elf_end(L->delf);
		free(L->dbuf);
		elf_end(L->elf);
		if (L->fd >= 0)
			close(L->fd);
		free(L);
		return NULL;
	}
	Dwarf_Aranges *ar;
	size_t nar;
	L->aranges_ok = dwarf_getaranges(L->dw, &ar, &nar) == 0 && nar > 0;
	return L;
}

/* libdw on a buffer or a regular file; NULL when it has no line tables */
static struct img_lines *open_lines(const char *path, const void *buf, size_t len, unsigned threads)
{
	struct img_lines *L = lines_elf(path, buf, len);
	if (!L)
		return NULL;
	/* compressed sections: only those the lookups read, inflated
	 * faster than libdw would (dwsect.c) */
	if (dwsect_image(L->elf, threads, &L->dbuf, &L->dlen) != 0)
		L->dbuf = NULL;
	return lines_dwarf(L);
}

void lines_free(void *p)
{
	struct img_lines *L = p;
	if (!L)
		return;
	lines_free(L->twin);   /* before the bytes and the file it reads */
	for (size_t i = 0; i < L->cus.cap; i++) {
		struct cu_inl *ci = L->cus.v[i].val;
		if (ci) {
			free(ci->seg);
			free(ci->dies);
			free(ci);
		}
	}
	hmap_release(&L->cus);
	free(L->rng);
	hmap_release(&L->paths);
	for (size_t i = 0; i < L->memo.cap; i++)
		free(L->memo.v[i].val);
	hmap_release(&L->memo);
	pool_release(&L->pool);
	dwarf_end(L->dw);
	if (L->delf != L->elf)
		elf_end(L->delf);
	elf_end(L->elf);
	if (!L->borrowed) {
		free(L->dbuf);
		if (L->fd >= 0)
			close(L->fd);
	}
	free(L);
}

/* A second libdw handle on L's bytes (its inflated copy, its buffer or
 * its file), for another thread: libdw's handles are not shared between
 * threads, the bytes are only read. NULL when libdw refuses them. */
static struct img_lines *lines_twin(struct img_lines *L)
{
	struct img_lines *T = calloc(1, sizeof(*T));
	if (!T)
		return NULL;
	T->borrowed = true;
	T->fd = L->fd;
	T->lc_kind = -1;
	if (L->dbuf)
		T->elf = elf_memory(L->dbuf, L->dlen);
	else if (L->buf)
		T->elf = elf_memory((char *)L->buf, L->len);
	else if (L->fd >= 0)
		T->elf = elf_begin(L->fd, ELF_C_READ_MMAP, NULL);
	T->delf = T->elf;
	T->dw = T->elf ? dwarf_begin_elf(T->elf, DWARF_C_READ, NULL) : NULL;
	if (!T->dw) {
		if (T->elf)
			elf_end(T->elf);
		free(T);
		return NULL;
	}
	Dwarf_Aranges *ar;
	size_t nar;
	T->aranges_ok = dwarf_getaranges(T->dw, &ar, &nar) == 0 && nar > 0;
	if (T->aranges_ok != L->aranges_ok) {   /* then it would not answer the same */
		lines_free(T);
		return NULL;
	}
	return T;
}

/* the CPUs this process may run on (taskset, cgroup cpusets), as
 * analysis/options.c's jobs_for_size counts them */
static unsigned online_cpus(void)
{
	cpu_set_t set;
	long n = 1;
	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	return n > 1 ? (n > 64 ? 64 : (unsigned)n) : 1;
}

/* the debug file the symbols came from, when it is not the image's file */
static bool other_src(const struct sym_image *img)
{
	return img->src_path && img->src_path != img->path && strcmp(img->src_path, img->path);
}

static struct img_lines *image_lines(struct sym_session *s, struct sym_image *img)
{
	if (img->lines_done)
		return img->lines;
	img->lines_done = true;
	image_load_symbols(s, img);
	if (!img->info.ok || !img->info_usable)
		return NULL;
	unsigned th = online_cpus();
	struct img_lines *L = img->blob ? open_lines(NULL, img->blob, img->blob_size, th)
					: open_lines(img->path, NULL, 0, th);
	if (L && !img->blob)
		L->lc_kind = LC_OWN;
	if (!L && other_src(img) && (L = open_lines(img->src_path, NULL, 0, th)))   /* the debug file symbols came from */
		L->lc_kind = LC_DEBUG;
	if (!L && !img->is_vdso) {
		/* a binary with its own .symtab never looked for a debug file */
		struct sym_table t;
		char *found = NULL;
		symtab_init(&t);
		if (elf_load_debug(s, img->blob ? NULL : img->path, &img->info, &t, &found) >= 0 && found)
			L = open_lines(found, NULL, 0, th);
		symtab_release(&t);
		free(found);
	}
	img->lines = L;
	return L;
}

/* ---- the line cache (lcache.h) ---- */

/* What the cached answers depend on besides the files: the code that
 * makes them (LINES_ANSWERS: raise it with any change to what
 * lines_lookup answers, so that older files are not used) and libdw's
 * version (its line tables and DIE walks). */
#define LINES_ANSWERS 1
static const char *lc_salt(void)
{
	static char salt[64];
	if (!salt[0])
		snprintf(salt, sizeof(salt), "lines %d, libdw %s", LINES_ANSWERS, dwfl_version(NULL));
	return salt;
}

/* $DOMPROF_EMBEDDED_LINES: "0", "off" or "no" leaves the recording's
 * line tables unused (the DWARF and the line cache answer). */
static bool emb_on(void)
{
	const char *e = getenv("DOMPROF_EMBEDDED_LINES");
	return !e || (strcmp(e, "0") && strcmp(e, "off") && strcmp(e, "no"));
}

static void bid_hex(const struct sym_image *img, char out[2 * 20 + 1])
{
	for (unsigned i = 0; i < img->buildid_len && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", img->buildid[i]);
	out[2 * (img->buildid_len < 20 ? img->buildid_len : 20)] = 0;
}

/*
 * The recording's line table of img (SYMTAB kind 10 named by its
 * build-id, `record` writes them: docs/file-format.md), read into
 * lc->emb. It is the recording's, so hostile: lcache_parse checks it as
 * it checks a cache file (any key: the table was made on the recording's
 * machine), a table that fails is not used (one warning; the DWARF
 * answers), and what it says only ever names this recording's rows:
 * nothing of it goes into the line cache.
 */
static void emb_load(struct sym_session *s, struct sym_image *img, struct img_lc *lc)
{
	if (!emb_on() || img->kind != IMG_ELF || img->is_vdso || !img->buildid_len || !img->dom)
		return;
	char name[2 * 20 + 1];
	bid_hex(img, name);
	struct blob *b = find_blob(img->dom, DP_SYMTAB_LINES, name);
	const uint8_t *data = b ? blob_data(s, img->dom, b) : NULL;
	char why[256];
	if (data && lcache_parse(data, b->size, NULL, 0, NULL, &lc->emb, why, sizeof(why)) != 0)
		sym_warn(s, "the recording's line table of %s is not used (%s): its lines come from its DWARF",
			 img->name, why);
}

/* The image's cache state, made once (its keys: two stat calls; not
 * usable when the image's lines may not be cached), and the recording's
 * table of its lines (emb_load). The cache file is not loaded here:
 * lc_load. Main thread (reads the environment). */
static struct img_lc *lc_prepare(struct sym_session *s, struct sym_image *img)
{
	if (img->lcache)
		return img->lcache;
	struct img_lc *lc = xcalloc(1, sizeof(*lc));
	img->lcache = lc;
	lc->c_kind = -1;
	lc->load_rc = lc->store_rc = 1;
	lc->no_store = s->lines_collect;
	emb_load(s, img, lc);
	/* the lines of an image whose bytes are this machine's files only:
	 * an embedded copy is the recording's (hostile) */
	if (!lcache_mode() || img->kind != IMG_ELF || img->blob || img->is_vdso || !img->buildid_len ||
	    !img->info.ok || !img->info_usable || !img->path || (img->dom && img->dom->kind == DP_DOMAIN_PASSIVE))
		return lc;
	char path[4200], why[256];
	for (int k = 0; k < LC_KINDS; k++) {
		const char *src = k == LC_OWN ? img->path : other_src(img) ? img->src_path : NULL;
		if (src && lcache_path(img->buildid, img->buildid_len, src, k == LC_DEBUG, path, sizeof(path)) &&
		    lcache_key(lc->key[k], lc_salt(), img->buildid, img->buildid_len, img->path, k == LC_DEBUG ? src : NULL,
			       why, sizeof(why)) == 0) {
			lc->has_key[k] = true;
			lc->path[k] = xstrdup(path);
			lc->usable = true;
		}
	}
	return lc;
}

/* Reads the cache file once (any thread: only this image's state). */
static void lc_load(struct img_lc *lc)
{
	if (!lc->usable || lc->tried)
		return;
	lc->tried = true;
	/* the image's own file first, as image_lines opens them; a file of
	 * the kind that does not answer is missing or refused (its key) */
	char why[256];
	for (int k = 0; k < LC_KINDS; k++) {
		if (!lc->has_key[k])
			continue;
		int r = lcache_load(lc->path[k], (const uint8_t (*)[LCACHE_KEY])lc->key[k], 1, NULL, &lc->c, why,
				    sizeof(why));
		if (r == 0) {
			lc->c_kind = k;
			lc->load_rc = 0;
			return;
		}
		if (lc->load_rc > 0 || lc->load_rc == -ENOENT) {
			lc->load_rc = r;
			snprintf(lc->why, sizeof(lc->why), "%s", why);
		}
	}
}

static void lc_answer(const struct lcache_ent *e, struct sym_srcline *out)
{
	memset(out, 0, sizeof(*out));
	out->has_table = true;
	if (!e->ok)
		return;
	out->path = e->path;
	out->file = base(e->path);
	out->line = e->line;
	out->inlined = e->inlined;
	out->call_file = e->call_file;
	out->call_line = e->call_line;
}

static struct lcache_ent lc_ent(uint64_t a, const struct sym_srcline *o, bool ok)
{
	return (struct lcache_ent){ .addr = a, .path = o->path, .inlined = o->inlined, .call_file = o->call_file,
				    .line = o->line, .call_line = o->call_line, .ok = ok };
}

/* Whether lines from L may go into lc's file: its kind has a key, and
 * what the file held was read with the same key (else the two disagree
 * on which file answers: nothing is written). */
static bool lc_takes(const struct img_lc *lc, const struct img_lines *L)
{
	return lc && lc->usable && !lc->no_store && L && L->lc_kind >= 0 && lc->has_key[L->lc_kind] &&
	       (lc->c_kind < 0 || lc->c_kind == L->lc_kind);
}

/* c and add[0..nadd) merged and written under L's key; c then holds the
 * merged entries (their strings: c's buffer and L's pool). */
static void lc_store(struct img_lc *lc, const struct img_lines *L, struct lcache_ent *add, size_t nadd)
{
	struct lcache_ent *v;
	size_t n;
	lcache_merge(&lc->c, add, nadd, &v, &n);
	uint8_t *data;
	size_t len;
	int r = lcache_encode(lc->key[L->lc_kind], v, n, &data, &len);
	if (r == 0) {
		r = lcache_store(lc->path[L->lc_kind], data, len, lc->swhy, sizeof(lc->swhy));
		free(data);
	} else {
		snprintf(lc->swhy, sizeof(lc->swhy), "%s: %s", lc->path[L->lc_kind],
			 r == -EFBIG ? "over the file's limits" : "entries refused");
	}
	lc->store_rc = r;
	free(lc->c.e);
	lc->c.e = v;
	lc->c.n = n;
	lc->c_kind = L->lc_kind;
}

void lines_cache_end(struct sym_image *img)
{
	struct img_lc *lc = img->lcache;
	if (!lc)
		return;
	if (lc->nadd && lc_takes(lc, img->lines))
		lc_store(lc, img->lines, lc->add, lc->nadd);
	lcache_release(&lc->c);
	lcache_release(&lc->emb);
	free(lc->add);
	free(lc->exp);
	for (int k = 0; k < LC_KINDS; k++)
		free(lc->path[k]);
	free(lc);
	img->lcache = NULL;
}

/* The lowest address of an executable section of e, or 0. */
static uint64_t lowest_code(Elf *e)
{
	uint64_t lo = 0;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 65536 && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr &&
		    (!lo || sh.sh_addr < lo))
			lo = sh.sh_addr;
	}
	return lo;
}

/* The line tables of a domain's kernel from the file --vmlinux gave for
 * it (sym_set_kernel_debug), placed by the domain's KASLR offset when
 * the recording knows it, else by its lowest kernel symbol against the
 * file's lowest code section; NULL without such a file, with a warning
 * when it has no line tables. */
static struct img_lines *kernel_lines(struct sym_session *s, struct sym_image *img)
{
	if (img->lines_done)
		return img->lines;
	img->lines_done = true;
	const struct sym_domain *d = img->dom;
	const char *path = NULL;
	for (size_t i = 0; d && i < s->nkdebug; i++)
		if (!strcmp(s->kdebug[i].domain, d->name))
			path = s->kdebug[i].path;
	if (!path)
		return NULL;
	struct img_lines *L = open_lines(path, NULL, 0, online_cpus());
	if (!L) {
		sym_warn(s, "domain %s: %s has no DWARF line tables (--vmlinux wants the "
			 "kernel's debug file, e.g. from the linux-image-*-dbg package)", d->name, path);
		return NULL;
	}
	uint64_t first = 0;
	if (d->kind == DP_DOMAIN_PASSIVE && d->kaslr)
		L->shift = d->kaslr;
	else if (img->kt && ktab_first(img->kt, &first) && lowest_code(L->elf))
		L->shift = first - lowest_code(L->elf);
	img->lines = L;
	return L;
}

/* Every CU's ranges, read once (bounded in CUs and ranges): addresses
 * .debug_aranges does not cover (clang, some LTO, PLT and start-up code
 * that no CU holds) used to cost a walk over all CUs each. */
static void build_cu_ranges(struct img_lines *L)
{
	L->rng_done = true;
	size_t cap = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	for (unsigned n = 0; n < LINES_MAX_CUS && dwarf_nextcu(L->dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
	     n++, off = next) {
		Dwarf_Die cu;
		if (!dwarf_offdie(L->dw, off + hsize, &cu))
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t o = 0;
		for (unsigned k = 0; k < INL_MAX_DIE_RANGES && L->nrng < INL_MAX_RANGES &&
				     (o = dwarf_ranges(&cu, o, &base, &lo, &hi)) > 0; k++) {
			if (lo >= hi)
				continue;
			if (L->nrng == cap) {
				cap = cap ? 2 * cap : 64;
				L->rng = xrealloc(L->rng, cap * sizeof(*L->rng));
			}
			L->rng[L->nrng++] = (struct cu_rng){ lo, hi, off + hsize };
		}
	}
	if (L->nrng)
		qsort(L->rng, L->nrng, sizeof(*L->rng), u64_cmp);
}

static bool cu_of(struct img_lines *L, Dwarf_Addr a, Dwarf_Die *cu)
{
	if (L->aranges_ok && dwarf_addrdie(L->dw, a, cu))
		return true;
	if (!L->rng_done)
		build_cu_ranges(L);
	size_t lo = 0, hi = L->nrng;   /* the last range starting at or below a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->rng[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < L->rng[lo - 1].hi && dwarf_offdie(L->dw, L->rng[lo - 1].die, cu);
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute at;
	const char *n = NULL;
	if (dwarf_attr_integrate(d, DW_AT_name, &at))
		n = dwarf_formstring(&at);
	return n;
}

/* DIEs that may hold nested scopes, as dwarf_getscopes descends them */
static bool scope_tag(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_entry_point:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	default:
		return false;
	}
}

struct inl_range {
	uint64_t lo, hi;
	uint32_t die;            /* index into dies, or INL_NONE: a subprogram */
	uint32_t depth;
};

/* The segments from the ranges: sweep the range boundaries in order,
 * keeping the range open at each depth; a segment belongs to the
 * deepest open one. Well-formed DWARF nests ranges, so one open range
 * per depth is enough; a file where siblings overlap gets some answer,
 * bounded, never a crash. */
static void build_segments(struct cu_inl *ci, struct inl_range *r, size_t nr)
{
	if (!nr)
		return;
	qsort(r, nr, sizeof(*r), u64_cmp);
	uint64_t *b = xmalloc(2 * nr * sizeof(*b));
	for (size_t i = 0; i < nr; i++) {
		b[2 * i] = r[i].lo;
		b[2 * i + 1] = r[i].hi;
	}
	qsort(b, 2 * nr, sizeof(*b), u64_cmp);
	size_t nb = 0;
	for (size_t i = 0; i < 2 * nr; i++)
		if (!nb || b[i] != b[nb - 1])
			b[nb++] = b[i];
	uint64_t open_hi[LINES_MAX_SCOPES] = { 0 };
	uint32_t open_die[LINES_MAX_SCOPES];
	unsigned top = 0;        /* depths < top may be open */
	size_t p = 0, cap = 0;
	for (size_t i = 0; i + 1 < nb; i++) {
		uint64_t x = b[i];
		for (; p < nr && r[p].lo <= x; p++) {
			if (r[p].hi > x) {
				open_hi[r[p].depth] = r[p].hi;
				open_die[r[p].depth] = r[p].die;
				if (r[p].depth >= top)
					top = r[p].depth + 1;
			}
		}
		while (top && open_hi[top - 1] <= x)
			top--;
		int d = (int)top - 1;
		while (d >= 0 && open_hi[d] <= x)
			d--;
		if (d < 0 || open_die[d] == INL_NONE)
			continue;
		struct inl_seg *last = ci->nseg ? &ci->seg[ci->nseg - 1] : NULL;
		if (last && last->hi == x && last->die == open_die[d]) {
			last->hi = b[i + 1];
			continue;
		}
		if (ci->nseg == cap) {
			cap = cap ? 2 * cap : 64;
			ci->seg = xrealloc(ci->seg, cap * sizeof(*ci->seg));
		}
		ci->seg[ci->nseg++] = (struct inl_seg){ x, b[i + 1], open_die[d] };
	}
	free(b);
}

/* Walks the CU's tree of scopes once (bounded in DIEs, depth and
 * ranges), as dwarf_getscopes would for every address: only into DIEs
 * that can hold scopes and have a pc range. */
static void build_cu_inl(struct cu_inl *ci, Dwarf_Die *cu)
{
	Dwarf_Die st[LINES_MAX_SCOPES];
	struct inl_range *r = NULL;
	size_t nr = 0, rcap = 0, dcap = 0;
	if (dwarf_child(cu, &st[0]) != 0)
		return;
	int depth = 0;
	for (unsigned visits = 0; visits < INL_MAX_DIES; visits++) {
		Dwarf_Die *d = &st[depth];
		int tag = dwarf_tag(d);
		bool has = false;
		if (scope_tag(tag)) {
			bool keep = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
			uint32_t idx = tag == DW_TAG_inlined_subroutine ? (uint32_t)ci->ndies : INL_NONE;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			for (unsigned k = 0; k < INL_MAX_DIE_RANGES && (off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0; k++) {
				if (lo >= hi)
					continue;
				has = true;
				if (!keep || nr >= INL_MAX_RANGES)
					continue;
				if (nr == rcap) {
					rcap = rcap ? 2 * rcap : 64;
					r = xrealloc(r, rcap * sizeof(*r));
				}
				r[nr++] = (struct inl_range){ lo, hi, idx, (uint32_t)depth };
			}
			if (has && idx != INL_NONE) {
				if (ci->ndies == dcap) {
					dcap = dcap ? 2 * dcap : 32;
					ci->dies = xrealloc(ci->dies, dcap * sizeof(*ci->dies));
				}
				ci->dies[ci->ndies++] = dwarf_dieoffset(d);
			}
		}
		if (has && depth + 1 < LINES_MAX_SCOPES && dwarf_child(d, &st[depth + 1]) == 0) {
			depth++;
			continue;
		}
		Dwarf_Die sib;
		while (depth >= 0 && dwarf_siblingof(&st[depth], &sib) != 0)
			depth--;
		if (depth < 0)
			break;
		st[depth] = sib;
	}
	build_segments(ci, r, nr);
	free(r);
}

static struct cu_inl *cu_inlines(struct img_lines *L, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	struct cu_inl *ci = u64map_get(&L->cus, key);
	if (!ci) {
		ci = xcalloc(1, sizeof(*ci));
		build_cu_inl(ci, cu);
		u64map_put(&L->cus, key, ci);
	}
	return ci;
}

/* The DIE offset of the inlined instance holding a, or false */
static bool inl_find(const struct cu_inl *ci, uint64_t a, Dwarf_Off *die)
{
	size_t lo = 0, hi = ci->nseg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ci->seg[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ci->nseg || ci->seg[lo].lo > a)
		return false;
	*die = ci->dies[ci->seg[lo].die];
	return true;
}

void *lines_open_buffer(const void *buf, size_t len)
{
	return open_lines(NULL, buf, len, 1);
}

bool lines_lookup(void *lines, uint64_t a, struct sym_srcline *out)
{
	struct img_lines *L = lines;
	memset(out, 0, sizeof(*out));
	out->has_table = L != NULL;
	if (!L)
		return false;
	struct sym_pool *pool = &L->pool;
	Dwarf_Die cu;
	if (!cu_of(L, a, &cu))
		return false;
	Dwarf_Line *ln = dwarf_getsrc_die(&cu, a);
	int line = 0;
	const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(ln, &line) != 0)
		return false;
	/* a relative name is relative to the CU's compilation directory;
	 * joined once per file of a line table (the name's pointer is the
	 * table's own, so it names one CU's file) */
	out->path = u64map_get(&L->paths, (uint64_t)(uintptr_t)file);
	if (!out->path) {
		Dwarf_Attribute cd;
		const char *dir = file[0] != '/' && dwarf_attr(&cu, DW_AT_comp_dir, &cd) ? dwarf_formstring(&cd) : NULL;
		if (dir && *dir) {
			char full[4096];
			snprintf(full, sizeof(full), "%s/%s", dir, file);
			out->path = pool_strdup(pool, full);
		} else {
			out->path = pool_strdup(pool, file);
		}
		u64map_put(&L->paths, (uint64_t)(uintptr_t)file, (void *)out->path);
	}
	out->file = base(out->path);
	out->line = (unsigned)line;
	/* inlined code: the innermost inlined instance at a, and its call
	 * site: a line of the function (or inlined instance) the code was
	 * inlined into. The function around it the caller names from the
	 * symbol table. */
	Dwarf_Off inl_off;
	Dwarf_Die inl;
	if (inl_find(cu_inlines(L, &cu), a, &inl_off) && dwarf_offdie(L->dw, inl_off, &inl)) {
		const char *n = die_name(&inl);
		out->inlined = pool_strdup(pool, n ? n : "?");
		Dwarf_Attribute at;
		Dwarf_Word fidx = 0, cl = 0;
		Dwarf_Files *files;
		size_t nfiles;
		if (dwarf_attr(&inl, DW_AT_call_line, &at) && dwarf_formudata(&at, &cl) == 0)
			out->call_line = (unsigned)cl;
		if (dwarf_attr(&inl, DW_AT_call_file, &at) && dwarf_formudata(&at, &fidx) == 0 &&
		    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && fidx < nfiles) {
			const char *cf = dwarf_filesrc(files, fidx, NULL, NULL);
			out->call_file = cf ? pool_strdup(pool, base(cf)) : NULL;
		}
	}
	return true;
}

/* With sym_lines_collect: an answer kept for sym_lines_export. */
static void lc_collect(const struct sym_session *s, struct img_lc *lc, uint64_t a,
		       const struct sym_srcline *out, bool ok)
{
	if (!s->lines_collect || !lc || a == UINT64_MAX || !out->has_table)
		return;
	if (lc->nexp == lc->cexp)
		xgrow((void **)&lc->exp, &lc->cexp, lc->nexp + 1, sizeof(*lc->exp));
	lc->exp[lc->nexp++] = lc_ent(a, out, ok);
}

bool sym_srcline(struct sym_session *s, const struct sym_map *cm, uint64_t ip, struct sym_srcline *out)
{
	memset(out, 0, sizeof(*out));
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned (internal.h) */
	bool kernel = m->img->kind == IMG_ABS && m->img->dom && m->img == m->img->dom->kimg;
	if (m->img->kind != IMG_ELF && !kernel)
		return false;
	struct img_lc *lc = NULL;
	if (!kernel) {
		/* the recording's table and the line cache first: what
		 * image_lines checks first, then the file's answer without
		 * opening the DWARF */
		image_load_symbols(s, m->img);
		if (m->img->info.ok && m->img->info_usable) {
			lc = lc_prepare(s, m->img);
			uint64_t a = sym_map_to_image(m, ip);
			const struct lcache_ent *e = lc->emb.n ? lcache_find(&lc->emb, a) : NULL;
			if (!e) {
				lc_load(lc);
				e = lc->c.n ? lcache_find(&lc->c, a) : NULL;
			}
			if (e) {
				lc_answer(e, out);
				lc_collect(s, lc, a, out, e->ok);
				return e->ok;
			}
		}
	}
	struct img_lines *L = kernel ? kernel_lines(s, m->img) : image_lines(s, m->img);
	if (!L) {
		out->has_table = false;
		return false;
	}
	uint64_t a = kernel ? ip - L->shift : sym_map_to_image(m, ip);
	const struct memo_ent *me = a != UINT64_MAX ? u64map_get(&L->memo, a + 1) : NULL;
	if (me) {
		*out = me->out;
		lc_collect(s, lc, a, out, me->ok);
		return me->ok;
	}
	bool ok = lines_lookup(L, a, out);
	lc_collect(s, lc, a, out, ok);
	if (lc_takes(lc, L)) {   /* written at the session's end (lines_cache_end) */
		if (lc->nadd == lc->cadd)
			xgrow((void **)&lc->add, &lc->cadd, lc->nadd + 1, sizeof(*lc->add));
		lc->add[lc->nadd++] = lc_ent(a, out, ok);
	}
	return ok;
}

void sym_lines_collect(struct sym_session *s)
{
	s->lines_collect = true;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct lcache_ent *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int sym_lines_export(struct sym_session *s, sym_lines_fn fn, void *ctx, struct sym_lines_stats *st)
{
	static const uint8_t zero[LCACHE_KEY];
	memset(st, 0, sizeof(*st));
	for (struct sym_image *img = s->all_images; img; img = img->next_all) {
		struct img_lc *lc = img->lcache;
		if (!lc || !lc->nexp || !img->dom)
			continue;
		/* one entry per address: an address asked twice (by two
		 * processes' rows) has the one answer */
		qsort(lc->exp, lc->nexp, sizeof(*lc->exp), ent_cmp);
		size_t n = 0;
		for (size_t i = 0; i < lc->nexp; i++)
			if (!n || lc->exp[i].addr != lc->exp[n - 1].addr)
				lc->exp[n++] = lc->exp[i];
		lc->nexp = n;
		uint8_t *data;
		size_t len;
		if (lcache_encode(zero, lc->exp, n, &data, &len) != 0) {
			st->refused++;
			continue;
		}
		char name[2 * 20 + 1];
		bid_hex(img, name);
		int r = fn(ctx, img->dom->id, name, data, len);
		free(data);
		if (r < 0)
			return r;
		st->images++;
		st->addrs += n;
		st->bytes += len;
	}
	return 0;
}

/*
 * sym_srcline_prefetch: the images' line tables opened and their
 * addresses looked up on several threads (libdw and libelf handles are
 * not shared between threads; each image's tables, path cache and
 * strings are its own). What the main thread does first is what
 * sym_resolve and image_lines would: place the map and load the image's
 * symbols (which find its debug file), in the order the rows would have;
 * then it opens each image's file, or its debug file, and plans the
 * inflation of its compressed DWARF sections (dwsect.c). An image whose
 * file and debug file have no line tables is left to image_lines (its
 * later fallbacks may warn).
 *
 * The threads then take units, the costliest first: one compressed
 * section of one file, or a whole image whose DWARF needs no inflating.
 * The thread that fills an image's last section looks its addresses up.
 * Units of sections, not of files, because one section is most of the
 * work: libc6-dbg's .debug_info is 2.3 of its 3.8 MB of compressed
 * sections; with a file a unit, the other files' jobs and the file's own
 * second thread shared the CPUs with it, and on 2 CPUs it took twice
 * its time (a system-wide recording's srcline report: libc's file open
 * after 27.6 ms, its .debug_info alone inflates in 12 ms).
 */
struct lines_job {
	struct sym_image *img;
	const char *path, *path2;   /* the image's file, the debug file (or NULL) */
	const void *blob;
	size_t blob_size;
	uint64_t *a;
	size_t n, cap;
	struct img_lines *L;        /* opened (lines_elf), then with libdw */
	int kind;                   /* L's line cache kind (LC_OWN, LC_DEBUG) or -1 */
	struct dwsect *plan;        /* L's sections to inflate, or NULL */
	unsigned left;              /* plan's sections not yet filled (atomic) */
	struct img_lc *lc;          /* its line cache, or NULL (lc_prepare) */
};

/* One unit of work: section k of j's plan, or (k == WHOLE) j without one */
#define WHOLE SIZE_MAX
struct lines_unit {
	struct lines_job *j;
	size_t k;
	uint64_t cost;
};

struct lines_pool {
	struct lines_unit *units;
	size_t nunits;
	size_t next;                /* taken with __atomic_fetch_add */
	unsigned threads;           /* for the lookups' second handle */
};

#define SPLIT_MIN 256    /* distinct addresses in an image worth a second handle */
/* rough costs, to order the units: inflating a compressed byte and
 * looking a distinct address up (CU tables built) */
#define NS_INFLATED_BYTE 5
#define NS_LOOKUP 20000

struct half {
	struct img_lines *L;
	const uint64_t *a;
	struct memo_ent **res;
	size_t from, to;
};

static void *run_half(void *p)
{
	struct half *h = p;
	for (size_t i = h->from; i < h->to; i++) {
		struct memo_ent *me = xmalloc(sizeof(*me));
		me->ok = lines_lookup(h->L, h->a[i], &me->out);
		h->res[i] = me;
	}
	return NULL;
}

/* The addresses the recording's table or the image's line cache answers taken out of j->a (the
 * rows' sym_srcline calls find them there), counted once each; with the
 * file empty or missing nothing is taken. */
static void lc_take_answered(struct lines_job *j)
{
	struct img_lc *lc = j->lc;
	lc_load(lc);
	if (!lc->c.n && !lc->emb.n)
		return;
	uint8_t *seen = xcalloc(lc->c.n ? lc->c.n : 1, 1);
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (j->a[i] == UINT64_MAX)
			continue;   /* no image address: dropped below too (not a reason to open) */
		if (lc->emb.n && lcache_find(&lc->emb, j->a[i]))
			continue;   /* the recording's table answers it */
		const struct lcache_ent *e = lc->c.n ? lcache_find(&lc->c, j->a[i]) : NULL;
		if (!e) {
			j->a[k++] = j->a[i];
			continue;
		}
		size_t x = (size_t)(e - lc->c.e);
		lc->hits += !seen[x];
		seen[x] = 1;
	}
	j->n = k;
	free(seen);
}

/* On the main thread, in image order: the line cache's answers taken,
 * the file libdw will read opened and its inflation planned. false: no
 * lookups to do (all answered, or no file with line tables: image_lines
 * decides later) */
static bool plan_lines_job(struct lines_job *j)
{
	if (j->lc && (j->lc->usable || j->lc->emb.n)) {
		lc_take_answered(j);
		if (!j->n)
			return false;   /* all answered: the DWARF stays closed */
	}
	j->kind = j->blob ? -1 : LC_OWN;
	j->L = j->blob ? lines_elf(NULL, j->blob, j->blob_size) : lines_elf(j->path, NULL, 0);
	if (!j->L && j->path2 && (j->L = lines_elf(j->path2, NULL, 0)))
		j->kind = LC_DEBUG;
	if (!j->L)
		return false;
	j->plan = dwsect_plan(j->L->elf);
	j->left = j->plan ? (unsigned)dwsect_count(j->plan) : 0;
	return true;
}

/* j's libdw handle (its plan's sections all filled), and its lookups */
static void run_lines_job(struct lines_job *j, unsigned threads)
{
	struct img_lines *L = j->L;
	if (j->plan && dwsect_finish(j->plan, &L->dbuf, &L->dlen) != 0)
		L->dbuf = NULL;
	j->plan = NULL;
	int own = j->kind;
	L = j->L = lines_dwarf(L);
	/* libdw refused the image's own file: its debug file, as open_lines' callers do */
	if (!L && own != LC_DEBUG && j->path2 && (L = j->L = open_lines(j->path2, NULL, 0, 1)))
		j->kind = LC_DEBUG;
	if (!L)
		return;
	L->lc_kind = j->kind;
	/* in address order: a CU's tables are built by its first lookup and
	 * the next addresses are mostly in the same CU */
	qsort(j->a, j->n, sizeof(*j->a), u64_cmp);
	size_t m = 0;
	for (size_t i = 0; i < j->n; i++)
		if (j->a[i] != UINT64_MAX && (!m || j->a[i] != j->a[m - 1]))
			j->a[m++] = j->a[i];
	j->n = m;
	struct memo_ent **res = xmalloc((m ? m : 1) * sizeof(*res));
	/* many addresses (libc's in a large recording: 5k in as many CUs
	 * as inflating its DWARF costs): the upper half on a second handle
	 * and thread */
	struct half hi = { NULL, j->a, res, m / 2, m };
	pthread_t th;
	bool split = threads > 1 && m >= SPLIT_MIN && (hi.L = L->twin = lines_twin(L)) &&
		     pthread_create(&th, NULL, run_half, &hi) == 0;
	struct half lo = { L, j->a, res, 0, split ? m / 2 : m };
	run_half(&lo);
	if (split)
		pthread_join(th, NULL);
	for (size_t i = 0; i < m; i++)
		u64map_put(&L->memo, j->a[i] + 1, res[i]);
	if (j->lc)
		j->lc->misses = m;
	if (lc_takes(j->lc, L)) {
		struct lcache_ent *add = xmalloc((m ? m : 1) * sizeof(*add));
		for (size_t i = 0; i < m; i++)
			add[i] = lc_ent(j->a[i], &res[i]->out, res[i]->ok);
		lc_store(j->lc, L, add, m);
		free(add);
	}
	free(res);
}

static void *lines_worker(void *p)
{
	struct lines_pool *lp = p;
	void *dd = NULL;
	for (;;) {
		size_t i = __atomic_fetch_add(&lp->next, 1, __ATOMIC_RELAXED);
		if (i >= lp->nunits)
			break;
		struct lines_unit *u = &lp->units[i];
		if (u->k == WHOLE) {
			run_lines_job(u->j, lp->threads);
			continue;
		}
		dwsect_fill(u->j->plan, u->k, &dd);   /* a failure: dwsect_finish says it */
		/* the last of the image's sections: the fills of other threads
		 * are seen here (acquire-release) */
		if (__atomic_sub_fetch(&u->j->left, 1, __ATOMIC_ACQ_REL) == 0)
			run_lines_job(u->j, lp->threads);
	}
	dwsect_inflater_free(dd);
	return NULL;
}

static int cmp_unit_cost(const void *a, const void *b)
{
	const struct lines_unit *x = a, *y = b;
	return x->cost < y->cost ? 1 : x->cost > y->cost ? -1 : 0;
}

#define PREFETCH_MAX_THREADS 8

/* DOMPROF_LINE_CACHE=verbose: one warning line of what the line cache
 * did for the prefetched images. */
static void lc_note(struct sym_session *s, const struct lines_job *jobs, size_t njobs)
{
	size_t imgs = 0, read = 0, written = 0, hits = 0, misses = 0;
	const char *refused = NULL, *unwritten = NULL;
	for (size_t i = 0; i < njobs; i++) {
		const struct img_lc *lc = jobs[i].lc;
		if (!lc || !lc->usable)
			continue;
		imgs++;
		read += lc->load_rc == 0;
		written += lc->store_rc == 0;
		hits += lc->hits;
		misses += lc->misses;
		if (!refused && lc->load_rc < 0 && lc->load_rc != -ENOENT)
			refused = lc->why;
		if (!unwritten && lc->store_rc < 0)
			unwritten = lc->swhy;
	}
	sym_warn(s, "line cache: %zu images: %zu addresses from %zu cache files, %zu looked up in DWARF, "
		 "%zu files written%s%s%s%s", imgs, hits, read, misses, written,
		 refused ? "; refused: " : "", refused ? refused : "", unwritten ? "; not written: " : "",
		 unwritten ? unwritten : "");
}

void sym_srcline_prefetch(struct sym_session *s, const struct sym_map *const *maps, const uint64_t *ips,
			  size_t n, unsigned threads)
{
	struct lines_job *jobs = NULL;
	size_t njobs = 0, cap = 0;
	struct hmap which = { 0 };   /* image -> job index + 1 */
	for (size_t i = 0; i < n; i++) {
		struct sym_map *m = (struct sym_map *)maps[i];   /* session-owned (internal.h) */
		if (!m)
			continue;
		/* what sym_resolve does first, for every map in the order the
		 * rows will resolve them: loading (and its warnings) happens
		 * in the same order as without this */
		image_place(s, m);
		image_load_symbols(s, m->img);
		if (m->img->kind != IMG_ELF || m->img->lines_done)
			continue;
		struct sym_image *img = m->img;
		uintptr_t ji = (uintptr_t)u64map_get(&which, (uint64_t)(uintptr_t)img);
		if (!ji) {
			if (!img->info.ok || !img->info_usable) {
				/* no lines, as image_lines says: its answer now */
				img->lines_done = true;
				continue;
			}
			if (njobs == cap) {
				cap = cap ? 2 * cap : 16;
				jobs = xrealloc(jobs, cap * sizeof(*jobs));
			}
			struct lines_job *j = &jobs[njobs++];
			*j = (struct lines_job){ .img = img, .blob = img->blob, .blob_size = img->blob_size,
						 .path = img->path, .path2 = other_src(img) ? img->src_path : NULL,
						 .lc = lc_prepare(s, img) };
			ji = njobs;
			u64map_put(&which, (uint64_t)(uintptr_t)img, (void *)ji);
		}
		struct lines_job *j = &jobs[ji - 1];
		if (j->n == j->cap) {
			j->cap = j->cap ? 2 * j->cap : 64;
			j->a = xrealloc(j->a, j->cap * sizeof(*j->a));
		}
		j->a[j->n++] = sym_map_to_image(m, ips[i]);
	}
	hmap_release(&which);
	elf_version(EV_CURRENT);   /* once, before any thread reads an ELF */
	struct lines_unit *units = NULL;
	size_t nunits = 0, ucap = 0;
	for (size_t i = 0; i < njobs; i++) {
		struct lines_job *j = &jobs[i];
		if (!plan_lines_job(j))
			continue;
		size_t nk = j->plan ? dwsect_count(j->plan) : 1, big = 0;
		if (nunits + nk > ucap) {
			ucap = 2 * (nunits + nk);
			units = xrealloc(units, ucap * sizeof(*units));
		}
		for (size_t k = 0; k < nk; k++) {
			uint64_t c = j->plan ? dwsect_cost(j->plan, k) * NS_INFLATED_BYTE : 0;
			units[nunits + k] = (struct lines_unit){ j, j->plan ? k : WHOLE, c };
			if (c > units[nunits + big].cost)
				big = k;
		}
		/* the lookups follow the image's largest section (or are the
		 * whole unit) */
		units[nunits + big].cost += (uint64_t)j->n * NS_LOOKUP;
		nunits += nk;
	}
	if (nunits > 1)
		qsort(units, nunits, sizeof(*units), cmp_unit_cost);
	unsigned ncpu = online_cpus();
	unsigned nt = threads ? threads : ncpu;
	if (nt > nunits)
		nt = (unsigned)nunits;
	if (nt > PREFETCH_MAX_THREADS)
		nt = PREFETCH_MAX_THREADS;
	struct lines_pool lp = { units, nunits, 0, ncpu };
	pthread_t th[PREFETCH_MAX_THREADS];
	unsigned started = 0;
	for (unsigned t = 1; t < nt; t++)
		if (pthread_create(&th[started], NULL, lines_worker, &lp) == 0)
			started++;
	lines_worker(&lp);
	for (unsigned t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	free(units);
	if (lcache_mode() == 2)
		lc_note(s, jobs, njobs);
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].L) {
			jobs[i].img->lines = jobs[i].L;
			jobs[i].img->lines_done = true;
		}
		free(jobs[i].a);
	}
	free(jobs);
}
