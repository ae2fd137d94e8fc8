/* SPDX-License-Identifier: MIT */
/*
 * The kernel symbol index: the payload of a SYMTAB record of kind
 * DP_SYMTAB_KSYMIDX (docs/file-format.md, "SYMTAB (8)", kind 8). A
 * kallsyms sorted by address in blocks of a fixed number of entries, each
 * block one zstd frame, behind an uncompressed block index, so that a
 * report decompresses only the blocks its kernel addresses fall in
 * instead of parsing the whole text (~100 M instructions a report).
 *
 * The writer (dp_ksymidx_encode) is the recorder's; the reader
 * (dp_ksymidx_open, dp_ksymidx_block) is the symbols module's. The payload
 * is hostile input: open validates the header, the module table and the
 * block index (bounds below) and refuses the table on any fault; a block
 * is validated completely when it is decoded (a bad one is refused alone,
 * and stays refused). Nothing is read outside the payload.
 *
 * Ownership: an index keeps pointers into the payload it was opened on
 * (which must outlive it) and owns its decoded blocks, which stay valid
 * until dp_ksymidx_free. Not thread-safe.
 */
#ifndef DOMPROF_FORMAT_KSYMIDX_H
#define DOMPROF_FORMAT_KSYMIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_KSYMIDX_MAGIC "DPKSYM1"       /* 8 bytes with its NUL */
#define DP_KSYMIDX_HEAD 40u              /* header bytes */
#define DP_KSYMIDX_MOD_RANGE 16u         /* bytes of a module's text range */
#define DP_KSYMIDX_ENTRY 48u             /* bytes of one block index entry */
#define DP_KSYMIDX_BLOCK 256u           /* entries the writer puts in a block */
#define DP_KSYMIDX_BLOCK_MAX 4096u       /* entries a block may hold */
#define DP_KSYMIDX_NAME_MAX 1024u        /* bytes of a symbol name */
#define DP_KSYMIDX_MOD_NAME_MAX 255u     /* bytes of a module name */
#define DP_KSYMIDX_MODS_MAX 65535u       /* module names */
#define DP_KSYMIDX_SYMS_MAX (1u << 24)   /* symbols in a table */
/* The raw bytes of an entry are at most 10 (address) + 1 (type) + 3
 * (module) + NAME_MAX + 1 (NUL), at least 4. */
#define DP_KSYMIDX_ENTRY_RAW_MAX (15u + DP_KSYMIDX_NAME_MAX)
#define DP_KSYMIDX_ENTRY_RAW_MIN 4u
#define DP_KSYMIDX_F_MODULES 1u          /* block flag: some entry has a module */
/* A name "\1PREFIX" is PREFIX followed by the next entry's (plain) name. */
#define DP_KSYMIDX_REF 1
#define DP_KSYMIDX_REF_PREFIX_MAX 32u

/* A text symbol: what a report names code with (t T w W, address not 0). */
static inline bool dp_ksym_text(char type, uint64_t addr)
{
	return addr && (type == 't' || type == 'T' || type == 'w' || type == 'W');
}

/* A text symbol of the core kernel: the entries a report's kernel table
 * is made of (the block index's text_first/text_last are theirs). */
static inline bool dp_ksym_core_text(char type, uint32_t mod, uint64_t addr)
{
	return !mod && dp_ksym_text(type, addr);
}

/* One symbol to encode. mod: 0 for the core kernel, else 1 + the index
 * of its module name. */
struct dp_ksym {
	uint64_t addr;
	const char *name;
	uint32_t namelen;
	uint32_t mod;
	char type;
};

/*
 * Encode v[0..n) (sorted by address; equal addresses keep their order)
 * with module names mods[0..nmods) (lengths modlens) into a malloc'd
 * payload *out of *outlen bytes, each block compressed at zstd `level`.
 * Entries that cannot be stored are dropped and counted in *dropped (may
 * be NULL): an empty name or one over DP_KSYMIDX_NAME_MAX or holding a
 * NUL, a module index past nmods, and symbols of one address past a
 * block's DP_KSYMIDX_BLOCK_MAX (a block never splits an address, so a
 * report sees every alias of an address in one block). Returns 0,
 * -EINVAL (unsorted input, a bad module name, too many symbols or
 * modules) or -ENOMEM.
 */
int dp_ksymidx_encode(const struct dp_ksym *v, size_t n, const char *const *mods,
		      const uint32_t *modlens, size_t nmods, int level, uint8_t **out,
		      size_t *outlen, size_t *dropped);

/* A block's index entry, validated by dp_ksymidx_open. */
struct dp_ksymidx_block {
	uint64_t first_addr;      /* the address of its first entry */
	uint64_t text_first;      /* lowest / highest core text symbol address (0: none) */
	uint64_t text_last;
	uint32_t offset, stored, raw, count, flags;
	uint32_t first_entry;     /* index of its first entry in the table */
};

/* A decoded block: count entries in address order. */
struct dp_ksymblk {
	uint32_t n;
	const uint64_t *addr;
	const char *type;
	const uint16_t *mod;      /* 0 core, else 1 + module index */
	const uint32_t *name;     /* offset of the NUL-terminated name in names */
	const uint16_t *namelen;
	const char *names;
};

struct dp_ksymidx;

/* Validate the index of payload [data, data+len) and open it. Returns 0,
 * or -EINVAL with a short cause in why (e.g. "block 3 offset past the
 * end"). */
int dp_ksymidx_open(const uint8_t *data, size_t len, struct dp_ksymidx **out, char *why,
		    size_t whylen);
void dp_ksymidx_free(struct dp_ksymidx *ix);

size_t dp_ksymidx_nblocks(const struct dp_ksymidx *ix);
/* crc32c of the payload's bytes before the block area (header, modules,
 * block index): what a name filter (ksymnf.h) names its index by. */
uint32_t dp_ksymidx_check(const struct dp_ksymidx *ix);
size_t dp_ksymidx_nsyms(const struct dp_ksymidx *ix);
uint64_t dp_ksymidx_total_raw(const struct dp_ksymidx *ix);
const struct dp_ksymidx_block *dp_ksymidx_index(const struct dp_ksymidx *ix, size_t i);
size_t dp_ksymidx_nmods(const struct dp_ksymidx *ix);
/* Module name i (not NUL-terminated), *len its length. */
const char *dp_ksymidx_mod(const struct dp_ksymidx *ix, size_t i, size_t *len);
/* The lowest and highest address of module i's text symbols (validated:
 * lo <= hi; its blocks' entries are checked against them when decoded);
 * false when it has none. */
bool dp_ksymidx_mod_range(const struct dp_ksymidx *ix, size_t i, uint64_t *lo, uint64_t *hi);
/* The block holding entry number e (binary search), or SIZE_MAX. */
size_t dp_ksymidx_block_of(const struct dp_ksymidx *ix, size_t e);

/* Decode block i (once: cached). NULL when it is damaged (why says how;
 * it stays refused). */
const struct dp_ksymblk *dp_ksymidx_block(struct dp_ksymidx *ix, size_t i, char *why,
					  size_t whylen);
/* Forget decoded block i (its entries no longer valid; decoded again
 * when asked): a pass over every block holds one at a time. */
void dp_ksymidx_drop(struct dp_ksymidx *ix, size_t i);
/* Bytes decoded so far (the blocks' raw sizes). */
uint64_t dp_ksymidx_decoded(const struct dp_ksymidx *ix);

#endif
