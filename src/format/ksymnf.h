/* SPDX-License-Identifier: MIT */
/*
 * The kernel symbol name filter: the payload of a SYMTAB record of kind
 * DP_SYMTAB_KSYMNF (docs/file-format.md, "Kind 9"), written beside a
 * kernel symbol index (kind 8, ksymidx.h). For each block of the index, a
 * Bloom filter of the names of its core text symbols, so that a lookup by
 * name (`annotate NAME`: which kernel addresses are NAME?) decodes only
 * the blocks that may hold NAME instead of every block a sample falls in.
 * A filter answers "maybe" or "no"; "no" is never wrong for the index it
 * was built from, which a filter names by a checksum of that index's
 * table of blocks (dp_ksymidx_check): a filter for another index is
 * refused.
 *
 * The payload is hostile input: open validates every size against the
 * payload and the index; nothing is read outside the payload. A forged
 * filter that says "no" wrongly makes annotate miss samples, as a forged
 * symbol table names them wrongly: it is trusted as much as the index.
 *
 * Ownership: a filter keeps pointers into the payload it was opened on
 * (which must outlive it). Not thread-safe against its own free only.
 */
#ifndef DOMPROF_FORMAT_KSYMNF_H
#define DOMPROF_FORMAT_KSYMNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ksymidx.h"

#define DP_KSYMNF_MAGIC "DPKNF1\0"         /* 8 bytes with its NUL */
#define DP_KSYMNF_HEAD 24u                 /* header bytes */
#define DP_KSYMNF_BYTES_MIN 8u             /* filter bytes per block */
#define DP_KSYMNF_BYTES_MAX 4096u
#define DP_KSYMNF_K_MAX 16u                /* bits set per name */
/* Block flag: some core text name of the block may read differently
 * once demangled (it starts with _Z or _R): a lookup by name decodes it. */
#define DP_KSYMNF_F_MANGLED 1u

/* The writer's choice: 256 bytes (2048 bits) and 5 bits per name for a
 * block of DP_KSYMIDX_BLOCK entries: ~2% of the blocks without a name
 * answer "maybe" for it. */
#define DP_KSYMNF_BYTES 256u
#define DP_KSYMNF_K 5u

/* Build the filter of index ix (opened on a payload whose blocks decode)
 * into a malloc'd *out of *outlen bytes; each block is decoded and
 * dropped again (dp_ksymidx_drop). Returns 0, -EINVAL when a block
 * does not decode (why says which), -ENOMEM. */
int dp_ksymnf_build(struct dp_ksymidx *ix, uint8_t **out, size_t *outlen, char *why,
		    size_t whylen);

struct dp_ksymnf;

/* Validate the filter payload [data, data+len) against index ix and open
 * it. Returns 0, or -EINVAL with a short cause in why ("built for
 * another index", "cut", ...). */
int dp_ksymnf_open(const uint8_t *data, size_t len, const struct dp_ksymidx *ix,
		   struct dp_ksymnf **out, char *why, size_t whylen);
void dp_ksymnf_free(struct dp_ksymnf *f);

/* false: block b of the index holds no core text symbol named
 * name[0..len) (before demangling); true: it may (or b is out of range). */
bool dp_ksymnf_maybe(const struct dp_ksymnf *f, size_t b, const char *name, size_t len);

#endif
