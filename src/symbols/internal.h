/* SPDX-License-Identifier: MIT */
/*
 * Private types of src/symbols/: the sorted symbol table with its string
 * arena, the chunked string pool, and the loaders (ELF, kallsyms-style
 * text) that fill tables. Only the .c files of src/symbols/ include this; the public
 * contract is symbols.h.
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

/* Entry flags. PRIO bits rank aliases at one address while building. */
#define SYM_F_PRIO_MASK  0x0fu
#define SYM_F_UNSIZED    0x10u   /* size unknown: end holds a limit (0 = none) */
#define SYM_F_DEMANGLED  0x20u   /* name already passed through the demangler */

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

struct elf_seg {
	uint64_t off, vaddr, filesz;
	bool exec;
};

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

/*
 * Find and load a separate debug file for a binary at `path` whose info is
 * known: build-id directory first, then the .gnu_debuglink name beside
 * it, in its .debug/ subdirectory and under <debug_dir>/<dir>/
 * (debug_dir is normally /usr/lib/debug).
 * Fills t (not finished) and returns the number of symbols, or <= 0.
 * *found gets the debug file's path (xmalloc'd) when one was used.
 */
int elf_load_debug(const char *debug_dir, const char *path, const struct elf_info *info,
		   struct sym_table *t, char **found);

/* ---- kallsyms-style text (kernel.c) ---- */

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
void ktab_free(struct ktab *k);
/* While building: name is [name, name+nlen) at offset name_off of the text. */
void ktab_add(struct ktab *k, uint64_t addr, uint64_t name_off, const char *name, size_t nlen,
	      unsigned prio);
void ktab_finish(struct ktab *k, uint64_t last_size);
size_t ktab_count(const struct ktab *k);
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

#endif
