/* SPDX-License-Identifier: MIT */
/*
 * Private types of src/symbols/: the sorted symbol table with its string
 * arena, the chunked string pool, the loaders (ELF, kallsyms-style
 * text) that fill tables, and the session's containers shared by the
 * files that implement symbols.h. Only the .c files of src/symbols/
 * include this; the public contract is symbols.h.
 *
 * Where each concept lives:
 *   session.c  the session and its domains, warnings, the lookups
 *   blobs.c    embedded SYMTAB records: index, lazy decompression, limits
 *   maps.c     per-process mapping lists (fork sharing), JIT perf maps
 *   image.c    ELF images: choosing the source, build-id, debug files, placement
 *   kernel.c   a domain's kernel image and its modules
 *   kallsyms.c the one kallsyms/System.map line parser (kallsyms.h)
 *   textsyms.c text loaders: kallsyms/System.map, /proc/modules, perf maps
 *   ktab.c     the compact core-kernel table over (compressed) kallsyms text
 *   symtab.c   sorted symbol tables and the string pool
 *   elf.c      reading ELF files (libelf), separate debug files
 *   elfopen.c  opening one (a buffer or a regular file)
 *   lines.c    source lines (libdw); dwsect.c the DWARF sections it
 *              reads, decompressed into a small in-memory ELF file
 *   fde.c      function ranges from .eh_frame(_hdr)/.debug_frame, for
 *              addresses no symbol covers
 *   unwind.c   DWARF unwinding of recorded user stacks (libdwfl), symbols.h
 *   unwind_quick.c  the quick step in front of it (simple CFI rules)
 *   vdso.c, vmlinux.c, buildid.c   small helpers exported to other modules
 *
 * A sym_table is built by appending (symtab_add), then frozen once by
 * symtab_finish, which sorts, removes aliases and fills missing sizes.
 * After that it never changes, so the name pointers it hands out stay
 * valid until symtab_release. Lookups are one binary search.
 */
#ifndef DOMPROF_SYMBOLS_INTERNAL_H
#define DOMPROF_SYMBOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "util/hmap.h"

/* Entry flags. PRIO bits rank aliases at one address while building. */
#define SYM_F_PRIO_MASK  0x0fu
#define SYM_F_UNSIZED    0x10u   /* size unknown: end holds a limit (0 = none) */
#define SYM_F_DEMANGLED  0x20u   /* name already passed through the demangler */
#define SYM_F_GUESSED    0x40u   /* after finish: end inferred (was unsized) */

struct sym_entry {
	uint64_t start;
	uint64_t end;            /* exclusive */
	union {
		const char *name;    /* after symtab_finish */
		size_t off;          /* while building: offset in the arena */
	} u;
	uint32_t flags;
};

struct sym_table {
	struct sym_entry *v;
	size_t n, cap;
	char *arena;             /* all names, NUL-terminated, one allocation */
	size_t alen, acap;
	bool finished;
};

void symtab_init(struct sym_table *t);
void symtab_release(struct sym_table *t);
/* Room for nsyms more symbols with nbytes more of names (their NULs
 * included), allocated at once: appending an ELF symbol table then
 * copies no array twice. Untouched room costs no memory. */
void symtab_reserve(struct sym_table *t, size_t nsyms, size_t nbytes);
/* Append a symbol. size 0 = unknown (then limit, if not 0, bounds its end).
 * prio ranks aliases at the same address (higher wins). */
void symtab_add(struct sym_table *t, uint64_t start, uint64_t size, uint64_t limit,
		const char *name, size_t len, unsigned prio);
/* Sort, drop aliases, give unsized symbols the distance to the next one
 * (at most `last_size` for the last one). */
void symtab_finish(struct sym_table *t, uint64_t last_size);
/* The entry containing addr, or NULL. */
struct sym_entry *symtab_find(const struct sym_table *t, uint64_t addr);

/* Chunked string pool: strings never move, freed all at once. */
struct sym_pool {
	struct pool_block *head;
};
const char *pool_strdup(struct sym_pool *p, const char *s);
const char *pool_strndup(struct sym_pool *p, const char *s, size_t n);
void pool_release(struct sym_pool *p);

/* ---- ELF (elf.c) ---- */

struct sym_session;

struct elf_seg {
	uint64_t off, vaddr, filesz;
	bool exec;
};

/* Runs fn on a libelf handle (an Elf *, passed as void * so that this
 * header needs no libelf) of buf[len] (only read) or, when buf is NULL,
 * of the regular file path; the handle is closed after. Returns fn's
 * value, -EINVAL when it is not ELF, or the open's errno. */
int elf_with(const char *path, const void *buf, size_t len, int (*fn)(void *elf, void *ctx), void *ctx);
/* The ELF handle elf_with gives fn, kept: the caller ends it with
 * elf_end and then closes *fd when it is not -1. NULL with *err the
 * -errno (or -EINVAL) when it cannot be opened. */
typedef struct Elf Elf;
Elf *elf_open(const char *path, const void *buf, size_t len, int *fd, int *err);

/* What a loader learns about an ELF file. */
struct elf_info {
	bool ok;                 /* parsed as ELF at all */
	bool is_exec;            /* ET_EXEC: placed at its link addresses */
	struct elf_seg *segs;    /* PT_LOAD program headers (xmalloc'd) */
	size_t nsegs;
	uint8_t buildid[20];
	uint8_t buildid_len;
	char *debuglink;         /* .gnu_debuglink file name (xmalloc'd) or NULL */
	uint32_t debuglink_crc;
	bool has_symtab;         /* .symtab present (not just .dynsym) */
	/* elf_load_probe: whether the string tables of .symtab and .dynsym
	 * hold the probed name anywhere (probed false: not at all) */
	bool probed, probe_hit;
};

void elf_info_release(struct elf_info *info);

/*
 * Read an ELF from a file or from memory (buf != NULL: len bytes, not
 * modified, must outlive the call). Fills *info; when t is not NULL also
 * appends its function symbols (+bias) to t (not finished). Returns the
 * number of function symbols added, or -errno / -EINVAL for non-ELF.
 */
int elf_load(const char *path, const void *buf, size_t len,
	     struct elf_info *info, struct sym_table *t, uint64_t bias);
/* elf_load without a table, and whether `name` occurs in the string
 * tables of its .symtab and .dynsym (info->probed, info->probe_hit): a
 * symbol table read from the file cannot have an entry of that name, or
 * of a mangled name holding it, when it does not. */
int elf_load_probe(const char *path, const void *buf, size_t len, struct elf_info *info,
		   const char *name);
/* false when no separate debug file elf_load_debug could choose for a
 * binary (path, info) holds `name` in its string tables (and no
 * debuginfod server would be asked); true when one may. */
bool elf_debug_may_have(struct sym_session *s, const char *path, const struct elf_info *info,
			const char *name);

/*
 * Find and load a separate debug file for a binary at `path` whose info is
 * known: build-id directory first, then the .gnu_debuglink name beside
 * it, in its .debug/ subdirectory and under <debug_dir>/<dir>/
 * (s->debug_dir, normally /usr/lib/debug), last from debuginfod
 * servers (sym_debuginfod).
 * Fills t (not finished) and returns the number of symbols, or <= 0.
 * *found gets the debug file's path (xmalloc'd) when one was used.
 */
int elf_load_debug(struct sym_session *s, const char *path, const struct elf_info *info,
		   struct sym_table *t, char **found);

/* lines.c: frees an image's libdw handle (NULL is fine). */
void lines_free(void *lines);
/* lines.c: writes the answers of the image's later lookups (annotate's)
 * into its line cache (lcache.h) and frees its cache state; before
 * lines_free, whose strings they borrow. */
struct sym_image;
void lines_cache_end(struct sym_image *img);
/* lines.c: the line tables of an ELF file in buf (borrowed: it must
 * outlive the handle), or NULL when it has none; free with lines_free.
 * lines_lookup: sym_srcline's answer for file address a (*out zeroed
 * first; has_table set when lines is not NULL; strings owned by the
 * handle). Both take hostile files (tests/fuzz/fuzz-lines.c). */
struct sym_srcline;
void *lines_open_buffer(const void *buf, size_t len);
bool lines_lookup(void *lines, uint64_t a, struct sym_srcline *out);
/* dwsect.c: a new in-memory ELF file (*out, malloc'ed, the caller's to
 * free after libdw and libelf are done with it) of only the DWARF
 * sections lines.c reads, decompressed, on up to `threads` threads (at
 * most 2 are used). elf is a libelf handle (Elf *). -1 (nothing
 * allocated) when the file has no compressed such section or is of a
 * kind this does not rebuild (32-bit, other-endian, ET_REL, .zdebug,
 * dwz, split DWARF) or is malformed: then libdw reads elf itself. */
int dwsect_image(void *elf, unsigned threads, void **out, size_t *outlen);
/* The same in steps, for a caller that spreads the sections of several
 * files over its own threads (lines.c's prefetch): dwsect_plan finds
 * the sections and allocates the image (NULL where dwsect_image returns
 * -1); dwsect_fill inflates section k (k < dwsect_count; each k once,
 * any thread, different k at once; *inflater: that thread's state, NULL
 * at first, freed with dwsect_inflater_free); dwsect_cost is section
 * k's bytes in the file; dwsect_finish, after every fill, frees d and
 * gives the image as dwsect_image does (-1, nothing kept, when a fill
 * failed). elf must outlive d. */
struct dwsect;
struct dwsect *dwsect_plan(void *elf);
size_t dwsect_count(const struct dwsect *d);
uint64_t dwsect_cost(const struct dwsect *d, size_t k);
bool dwsect_fill(struct dwsect *d, size_t k, void **inflater);
void dwsect_inflater_free(void *inflater);
int dwsect_finish(struct dwsect *d, void **out, size_t *outlen);

/* ---- the quick unwind step (unwind_quick.c), used by unwind.c ---- */

/*
 * Walks a recorded user stack with the simple CFI rules of the images'
 * .eh_frame (kept per image address, shared by all processes), as
 * libdwfl would, and says how it ended; UWQ_FALLBACK: this sample is
 * libdwfl's (the pcs written are to be ignored). UWQ_NO_FDE: the last pc
 * written has no FDE in *nofde_img's .eh_frame; the caller decides
 * whether a .debug_frame makes it libdwfl's. Owns the images' ELF
 * handles it opens (at most 1024) and its rules; borrows the session.
 */
struct uwq;
struct sym_image;
enum uwq_end { UWQ_FALLBACK, UWQ_OUTERMOST, UWQ_STOPPED, UWQ_NO_FDE, UWQ_DEPTH };
struct uwq *uwq_new(struct sym_session *s);
void uwq_free(struct uwq *q);
enum uwq_end uwq_walk(struct uwq *q, uint32_t domain, uint32_t pid, const struct dp_sample *smp,
		      uint64_t ip, uint64_t sp, uint64_t bp, uint64_t *pcs, uint32_t max,
		      uint32_t *n, const struct sym_image **nofde_img);
/* The image's ELF as the walk opened it (an Elf *, as void * here: this
 * header does not include libelf), or NULL. */
void *uwq_image_elf(struct uwq *q, const struct sym_image *img);

/* ---- function ranges from unwind tables (fde.c) ---- */

/* One FDE: the function at [start, end) in the image's address space. */
struct fde_range {
	uint64_t start, end;
};

/* Sorted by start, distinct starts. names[i] is the name made for
 * entry i on first use (session pool), NULL before; the array is
 * allocated on the first name. A table made by fde_open may be lazy
 * (lz set): then n is the .eh_frame_hdr table's entry count, v[i] is
 * filled when a lookup first reads entry i, and only fde_find reads v. */
struct fde_lazy;
struct fde_table {
	struct fde_range *v;
	size_t n;
	const char **names;
	struct fde_lazy *lz;
};

/* Bound on the ranges of one image (an FDE takes >= 16 bytes of a
 * section, so a real table is far below: libc has ~3000). */
#define FDE_MAX_ENTRIES (1u << 22)

/* The unwind sections of one file, as raw bytes (none is kept). */
struct fde_sections {
	const uint8_t *hdr;      /* .eh_frame_hdr, or NULL */
	size_t hdr_size;
	uint64_t hdr_addr;
	const uint8_t *eh;       /* .eh_frame, or NULL */
	size_t eh_size;
	uint64_t eh_addr;
	const uint8_t *dbg;      /* .debug_frame (absolute addresses), or NULL */
	size_t dbg_size;
	unsigned addr_size;      /* 4 or 8 (ELF class) */
	bool big_endian;
};

/* Fill t (initialised here) from the sections: .eh_frame_hdr's table
 * when usable, else a walk of .eh_frame; plus .debug_frame. Entries that
 * do not parse are skipped. Returns the number of ranges. */
int fde_parse(const struct fde_sections *sec, struct fde_table *t);
/* The same from an ELF file or memory image (as elf_load). Returns the
 * number of ranges or -errno / -EINVAL. */
int fde_load(const char *path, const void *buf, size_t len, struct fde_table *t);
/* As fde_load and fde_parse, but lazy where that gives the same answers
 * (docs/dwarf-notes.md, "Fixed costs of a small report"): when
 * .eh_frame_hdr's table is usable and strictly sorted and there is no
 * .debug_frame, the table keeps the sections (fde_open: the ELF file,
 * open; fde_open_sections: sec's bytes, which must outlive it) and a
 * lookup reads only the FDE its binary search lands on, instead of every
 * FDE up front. Returns the number of entries (lazy: the hdr table's)
 * or, as fde_load, -errno / -EINVAL. */
int fde_open(const char *path, const void *buf, size_t len, struct fde_table *t);
int fde_open_sections(const struct fde_sections *sec, struct fde_table *t);
/* The range holding addr (and its index), or NULL: one binary search
 * (lazy: and the FDE it lands on read, once). */
const struct fde_range *fde_find(struct fde_table *t, uint64_t addr, size_t *idx);
void fde_release(struct fde_table *t);

/* ---- text sources (kallsyms.c: the line parser, textsyms.c: loaders) ---- */

/* Bounded helpers of the text parsers: the end of the line at p (its
 * '\n' or end); 1-16 hex digits (optional 0x) at *pp, advancing it;
 * p past spaces and tabs. */
const char *text_line_end(const char *p, const char *end);
bool text_parse_hex(const char **pp, const char *end, uint64_t *out);
const char *text_skip_blank(const char *p, const char *end);

struct ktab;

/* Callback per module symbol: module name is [mod, mod+modlen). */
struct ksym_sink {
	struct sym_table *kernel;
	struct ktab *core;       /* if set, kernel (non-module) symbols go here, not to `kernel` */
	uint64_t base;           /* offset of the parsed text in the whole text (for core) */
	void *ctx;
	struct sym_table *(*module)(void *ctx, const char *mod, size_t modlen);
	size_t lines, bad_lines, zero_addrs;
	bool delta;              /* DP_SYMTAB_KALLSYMS_DELTA: each address is
				  * relative to the previous line's ('-' = minus) */
	uint64_t prev;           /* previous absolute address, for delta; reset
				  * to 0 before each pass over a text */
};
/* Parse "addr type name [mod]" lines; text symbols (t T w W) only.
 * bias is added to every address (KASLR for System.map). */
void ksyms_parse(const char *text, size_t len, uint64_t bias, struct ksym_sink *sink);
/* Length of a kallsyms name starting at p: up to a blank, '\r', '\n' or
 * end. The one rule for where a name ends (kallsyms_next and ktab.c,
 * which finds names again by their offset in the text). */
size_t kallsyms_name_len(const char *p, const char *end);

/* ---- compact kernel table (ktab.c) ---- */

/*
 * A kallsyms-style text, either plain (kept in memory) or one zstd frame
 * as stored in the recording (~5x smaller). Compressed text is never
 * materialised: it is streamed in blocks of whole lines.
 */
struct ktext {
	const char *plain;       /* plain text, or NULL */
	const uint8_t *z;        /* else the zstd frame */
	size_t zlen;
	size_t raw;              /* uncompressed length */
};
typedef void (*ktext_fn)(void *ctx, const char *block, size_t len, uint64_t base);
/* Call fn on consecutive blocks of whole lines (a line longer than the
 * buffer is cut); base is the block's offset in the text. Returns 0, or
 * -EINVAL when the stream is corrupt (the blocks before were delivered). */
int ktext_stream(const struct ktext *src, ktext_fn fn, void *ctx);

/*
 * The core kernel's symbol table, built for size: per symbol only its
 * address (8 bytes) and where its name is in the text (4 bytes); names
 * are copied out of the text only for the symbols a lookup names, in
 * batches (one streaming pass per batch: see ktab_want). ~122k kallsyms
 * text symbols take 1.5 MB instead of ~7 MB as a sym_table.
 * Same rules as symtab_finish: aliases at one address ranked by priority,
 * then fewer leading underscores, shorter, then alphabetically; an
 * entry ends where the next address begins (last: + last_size).
 */
struct ktab *ktab_new(const struct ktext *src);   /* src copied; its bytes must outlive the table */
/* The text the table reads: src, or its decompressed copy (owned by the
 * table) when the frame decompresses whole. Stream this, not src. */
const struct ktext *ktab_text(const struct ktab *k);
void ktab_free(struct ktab *k);
/* While building: name is [name, name+nlen) at offset name_off of the text. */
void ktab_add(struct ktab *k, uint64_t addr, uint64_t name_off, const char *name, size_t nlen,
	      unsigned prio);
void ktab_finish(struct ktab *k, uint64_t last_size);
size_t ktab_count(const struct ktab *k);
/* The lowest symbol address of a finished table, false when it is empty. */
bool ktab_first(const struct ktab *k, uint64_t *start);
/* A new table expects addresses in ascending order (kallsyms and
 * System.map are sorted) and keeps only 12 bytes per symbol while
 * building. Fed a lower address, it stops taking symbols and
 * ktab_unsorted() is true: then ktab_restart_slow() empties it into the
 * general mode (sorts 16-byte records at the end) and the caller feeds it
 * again. */
bool ktab_unsorted(const struct ktab *k);
void ktab_restart_slow(struct ktab *k);
/* The symbol holding addr: true and *idx, *start, *end; false if none. */
bool ktab_find(const struct ktab *k, uint64_t addr, size_t *idx, uint64_t *start, uint64_t *end);
/*
 * A table over a kernel symbol index (SYMTAB kind DP_SYMTAB_KSYMIDX),
 * which it owns from here on: the same entries, ranges and names as the
 * text table of the same kallsyms, with bias added to every address and
 * last_size after the last symbol, but nothing is parsed before a lookup,
 * and a lookup decodes only the block it falls in (kept until
 * ktab_free). A damaged block is said once to s as a warning for domain
 * dom (a string that outlives the table); its symbols are not found. Such
 * a table's ktab_find decodes blocks: it is not thread-safe either.
 */
struct dp_ksymidx;
/* The index of a table made by ktab_new_index (owned by it), else NULL. */
struct dp_ksymidx *ktab_index(const struct ktab *k);
struct ktab *ktab_new_index(struct dp_ksymidx *ix, uint64_t bias, uint64_t last_size,
			    struct sym_session *s, const char *dom);
/* The name filter of a table made by ktab_new_index (owned by it from
 * here on; freed at once for any other table). */
struct dp_ksymnf;
struct sym_range;
void ktab_set_filter(struct ktab *k, struct dp_ksymnf *nf);
/* Append to *v (*n entries, *cap allocated) the ranges [start, end) of
 * the core text symbols ktab_name calls name (as sym_name_ranges, with
 * the table's bias), decoding only the blocks the name filter says may
 * hold it. Returns how many it appended, or -1 when the table has no
 * filter (it cannot tell without decoding every block). */
long ktab_name_ranges(struct ktab *k, const char *name, struct sym_pool *pool,
		      struct sym_range **v, size_t *n, size_t *cap);
/* The caller will want the name of symbol idx: fetched with the next batch. */
void ktab_want(struct ktab *k, size_t idx);
/* Name of symbol idx (demangled), fetching the pending batch if needed.
 * Strings live in pool. */
const char *ktab_name(struct ktab *k, size_t idx, struct sym_pool *pool);

struct kmod_range {
	const char *name; size_t namelen;
	uint64_t start, size;
};
/* Parse /proc/modules text; calls cb for each well-formed line. */
void kmodules_parse(const char *text, size_t len,
		    void (*cb)(void *ctx, const struct kmod_range *r), void *ctx);

/* Parse perf map text "START SIZE name" (hex) into t. */
void perfmap_parse(const char *text, size_t len, struct sym_table *t);

/* ---- the session's containers (session.c and the files it names) ---- */

/*
 * Maps are never freed or changed once returned (a replaced mapping is
 * dropped from the process's list, not destroyed), so a map returned for
 * an early sample stays valid after a later exec or munmap. The only
 * field filled later is the placement (image address delta), computed on
 * first use: that is why some functions cast away const on a map the
 * session itself allocated. Everything below is owned by the session and
 * freed by sym_session_free.
 */

#define SYM_UNKNOWN "[unknown]"
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
	bool perfmap_tried;         /* IMG_PERFMAP: /tmp looked at (once) */
	bool perfmap_none;          /* IMG_PERFMAP: no map found (yet): named [anon] */
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
	uint32_t kidx_mod;          /* a module whose symbols are in the domain's kernel
				     * symbol index: 1 + its number there, loaded into
				     * tab by image_load_symbols (kernel_load_module) */
	char *ktext;                /* the text kt reads when it was read from a file (owned) */
	struct fde_table fde;       /* unwind-table ranges, loaded on the first
				     * address no symbol covers (image_fde) */
	bool fde_done;
	void *lines;                /* libdw handle for source lines (lines.c), or NULL */
	bool lines_done;
	void *lcache;               /* its line cache state (lines.c, lcache.h), or NULL */
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
	uint64_t ix_lo, ix_end;     /* its text symbols' span in the kernel symbol
				     * index (ix_end 0: none), for the range */
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
	size_t first_kind[16];      /* by kind (kinds < 16) */
	struct hmap blobidx;        /* "kind|lowercase name" -> index+1 */
	struct hmap perfmapidx;     /* perf map tables by pid -> index+1 */
	bool kernel_done;
	uint8_t kbuildid[20];       /* the kernel's build-id from its MMAP record */
	uint8_t kbuildid_len;
	struct sym_image *kimg;
	struct sym_map *kmap;
	struct kmod *mods;
	size_t nmods, cmods;
	struct hmap modidx;       /* module name -> index+1 while loading */
	struct hmap pseudo;       /* name -> map */
	struct sym_map *unknown;  /* pseudo's SYM_UNKNOWN map, once made: every
				   * frame outside all mappings (a chain's junk
				   * return addresses) asks for it */
	struct hmap asids;        /* guest cr3 -> map, for samples of no known process */
	struct sym_map *last_asid_map;  /* guest_user_map's memo: its last answer, */
	uint64_t last_asid;             /* for that cr3, */
	uint32_t last_asid_pid;         /* pid */
	const char *last_asid_comm;     /* and that pid's name then (by pointer) */
	uint64_t symtab_used;       /* bytes decompressed for its tables (admitted) */
	bool symtab_refused;        /* a table of it was over the limits */
	bool no_live_kernel;        /* this machine's kallsyms would lie (sym_set_kernel_local) */
	bool perf_cache;            /* look in perf's build-id cache first (sym_set_perf_origin) */
	/* sym_name_ranges_final answered for an image of it while reading:
	 * a later DOMAIN record changing it (early), or an embedded ELF
	 * (early_elf, an ELF image answered), makes those answers stale */
	bool early, early_elf;
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
	struct sym_map *last;       /* the map of maps[] the last lookup found
				     * (NULL when none or after a change of
				     * maps[]): consecutive samples of a process
				     * mostly fall in one mapping */
	uint64_t gen;               /* bumped whenever maps[] or the perf map
				     * state change: find-cache entries of an
				     * older gen are stale */
};

/* sym_find_map's memo of user lookups that found one of a process's
 * mappings (session.c): per (domain, pid) and address range, the answer
 * and the process's gen it was given under. A system-wide recording's
 * samples alternate between processes, so the one-entry last_proc misses
 * and each sample paid a hash lookup of the process and a search of its
 * list (a sixth of a flat report). Direct-mapped by (pid, page). */
#define FIND_CACHE 4096
struct find_cache_ent {
	uint64_t key;               /* domain << 32 | pid */
	uint64_t lo, hi;            /* the mapping's range */
	const struct proc *p;       /* NULL: empty slot */
	uint64_t gen;
	const struct sym_map *res;
};

struct sym_session {
	struct sym_pool pool;
	struct sym_domain **doms;   /* in order of first appearance */
	size_t ndoms, cdoms;
	struct hmap domidx;         /* domain id -> sym_domain */
	struct sym_domain *last_dom;
	struct hmap procs;
	struct proc *last_proc;
	uint64_t last_proc_key;
	struct find_cache_ent *find_cache; /* find_cache_cap entries, made on first use */
	uint32_t find_cache_cap;     /* 256 first, 4x as stores pass it, FIND_CACHE at most */
	uint32_t find_cache_stores;  /* entries written since it was made */
	struct hmap images;
	/* image_elf's last answers, direct-mapped (image.c) */
#define IMAGE_MEMO 256
	struct image_memo { struct sym_image *img; uint64_t h, dev, ino, size, mtime; uint32_t dom;
			    uint8_t bidlen, bid[20]; bool has_ident; } image_memo[IMAGE_MEMO];
	struct sym_image *all_images;
	struct sym_map **maps;      /* every map ever made, for freeing */
	size_t nmaps, cmaps;
	const char **warn;
	size_t nwarn, cwarn;
	uint8_t *own_vdso;
	size_t own_vdso_size;
	bool own_vdso_done;
	const char *debug_dir;      /* root of separate debug files */
	/* --vmlinux: a kernel ELF with DWARF per domain name (lines.c) */
	struct sym_kdebug { const char *domain, *path; } *kdebug;
	size_t nkdebug, ckdebug;
	struct dbgfd *dbgfd;        /* debuginfod client, on first use (debuginfod.h) */
	struct hmap warnidx;        /* warning text -> 1, to keep each once */
	uint64_t symtab_domain_max, symtab_file_max, symtab_used;
	uint64_t refused_tables, refused_bytes;
	size_t refused_warn;        /* index+1 in warn[] of the refusal summary */
	char refused_line[320];
	uint64_t map_entries;       /* mapping-list entries made so far */
	uint64_t map_max;           /* their bound (sym_set_map_model; 0: MAX_MAP_ENTRIES) */
	bool map_budget_spent;      /* a mapping was dropped for it */
	bool key_identity;          /* images keyed by the mapped file's identity too */
	uint64_t warn_more;         /* distinct warnings past MAX_WARNINGS */
	bool more_warn;
	char more_line[64];
	/* sym_warn_hold: warnings kept aside with a tag until sym_warn_flush */
	bool holding;
	uint64_t hold_tag;
	struct held_warn { uint64_t tag; size_t seq; char *text; } *held;
	size_t nheld, cheld;
	bool early_stale;           /* see sym_domain.early */
	const char *probe;          /* sym_set_name_probe (pool), or NULL */
	bool lines_collect;         /* sym_lines_collect (lines.c) */
};

/* session.c */
/* Keep a warning (formatted, each distinct text once, capped). */
void sym_warn(struct sym_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The domain of id, created (host-like) when first named. */
struct sym_domain *sym_domain_get(struct sym_session *s, uint32_t id);
struct sym_map *sym_map_new(struct sym_session *s, struct sym_image *img,
			    uint64_t start, uint64_t end, uint64_t pgoff);
struct sym_image *sym_image_new(struct sym_session *s, struct sym_domain *d,
				uint8_t kind, const char *name, const char *path);
/* A symbol-less image and its one map covering everything, per domain. */
struct sym_map *sym_pseudo_map(struct sym_session *s, struct sym_domain *d, const char *name);
/* The debug file of build-id bid from debuginfod servers (debuginfod.h:
 * DEBUGINFOD_URLS, each build-id asked once, bounded, the download's
 * build-id checked), or NULL; a failure becomes one warning. The path
 * stays valid until sym_session_free. */
const char *sym_debuginfod(struct sym_session *s, const uint8_t *bid, uint8_t len);
/* The file name of a path ("/a/b" -> "b"; "/a/" stays whole). */
const char *sym_base_name(const char *path);

/* blobs.c */
/* The decompression limits, from DOMPROF_MAX_SYMTAB when set. */
void blob_limits(struct sym_session *s);
/* Free the blobs of d and their indexes. */
void blobs_release(struct sym_domain *d);
/* May blob b be decompressed (charged to the limits once)? */
bool blob_admit(struct sym_session *s, struct sym_domain *d, struct blob *b);
/* The same, charging n bytes: what a table stored plain will expand to
 * (a kernel symbol index's blocks). */
bool blob_admit_n(struct sym_session *s, struct sym_domain *d, struct blob *b, uint64_t n);
/* Its plain bytes (NUL-terminated), decompressed on first use; NULL if refused. */
const uint8_t *blob_data(struct sym_session *s, struct sym_domain *d, struct blob *b);
/* Where the text of a kallsyms/System.map blob is, for ktab.c. */
struct ktext blob_text(const struct blob *b);
/* The first blob of a kind (name NULL) or of a kind and name (any case). */
struct blob *find_blob(const struct sym_domain *d, uint32_t kind, const char *name);
/* The perf map stored for pid, or NULL. */
struct blob *perfmap_blob(struct sym_domain *d, uint32_t pid);

/* maps.c */
/* The process (domain, pid); created when create, else NULL if unseen. */
struct proc *sym_proc_get(struct sym_session *s, uint32_t domain, uint32_t pid, bool create);
/* p's own mapping holding ip (no perf map), or NULL: what
 * sym_find_proc_map gives for p's domain and pid. */
struct sym_map *sym_proc_map_at(const struct proc *p, uint64_t ip);
/* Let go of p's mapping list (shared or not); p has none after. */
void proc_drop_maps(struct proc *p);
/* The map of p holding ip (a JIT perf map for anonymous memory), or NULL. */
struct sym_map *proc_find_map(struct sym_session *s, struct sym_domain *d,
			      struct proc *p, uint32_t pid, uint64_t ip);
/* The pid's JIT map image, if a perf map exists for it. */
struct sym_map *perfmap_map(struct sym_session *s, struct sym_domain *d,
			    struct proc *p, uint32_t pid);

/* image.c */
/* The ELF image of (domain, path, build-id), made once. */
struct sym_image *image_elf(struct sym_session *s, struct sym_domain *d, const char *path,
			    const uint8_t *bid, uint8_t bidlen, bool vdso);
/* The same, keyed also by the identity mm recorded (sym_set_map_model). */
struct sym_image *image_elf_ident(struct sym_session *s, struct sym_domain *d, const char *path,
				  const struct dp_mmap *mm, bool vdso);
/* Load the image's symbol table (once). */
void image_load_symbols(struct sym_session *s, struct sym_image *img);
/* The FDE range holding addr for an address no symbol covers, with its
 * name "IMAGE+0xSTART" (made once per range); NULL when none covers it
 * or the image is not an ELF. Loads the image's unwind tables once. */
const struct fde_range *image_fde(struct sym_session *s, struct sym_image *img, uint64_t addr,
				  const char **name);
/* Compute m's delta from ip to the image's link-time address (once). */
void image_place(struct sym_session *s, struct sym_map *m);

/* kernel.c */
/* Load module image img's symbols from its domain's kernel symbol index
 * into img->tab (not finished): the blocks holding them are decoded. */
void kernel_load_module(struct sym_session *s, struct sym_image *img);
/* The kernel (or module) map of d holding a kernel-half ip. */
const struct sym_map *kernel_map(struct sym_session *s, struct sym_domain *d, uint64_t ip);
/* A kernel MMAP record (pid -1) of d: a module range the tables may
 * lack; the kernel's own ("[kernel.kallsyms]...") may carry its build-id
 * (a perf.data's build-id table), for perf's build-id cache. */
void kernel_add_mmap(struct sym_session *s, struct sym_domain *d, const struct dp_mmap *mm,
		     uint64_t end);

#endif
