/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: a chunk's digest, for a reader that counts
 * samples rather than looks at each one (DP_READ_GROUPS). The
 * prefetcher's workers build it beside the chunk's decompression, from
 * the decoded payload alone: the chunk's records in order, each run of
 * plain samples (samples without a user stack, between two records other
 * than samples and domain switches) folded into groups of samples that
 * agree on every field
 * a counting reader keys by: ip, pid, mode, event, asid, the call chain
 * (with DG_NO_CHAINS only whether there is one), and tid and cpu when
 * asked, and the domain (a DOMAIN_SWITCH does not end a run: it is an
 * item of its own, and the samples after it are of another domain). A
 * group stands for `count` samples whose periods sum (mod 2^64)
 * to `period`; its other fields are its first sample's. A group's item
 * is where its first sample was, so a counter that makes an entry at
 * each new key makes them in the order it would sample by sample.
 *
 * Everything else is an item of its own, decoded by the reader at its
 * offset as without a digest: records of other types, samples with a
 * user stack (the delta form depends on the stacks before them),
 * samples whose parts are malformed, and a record whose length is bad
 * (the last item: the reader reports it and skips the rest of the
 * chunk). A read with digests thus gives the same damage and, each run
 * expanded, the same samples as one without.
 *
 * Bounds: a payload of at most DP_CHUNK_MAX bytes (offsets and counts
 * fit 31 bits); at most one item per 8 payload bytes; nothing outside
 * the payload is read. Ownership: the digest owns its arrays, kept
 * across builds; dg_release frees them. Not shared between threads.
 */
#ifndef DOMPROF_FORMAT_DIGEST_H
#define DOMPROF_FORMAT_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hmap.h"

#define DG_BY_TID 1u     /* samples of different threads stay apart */
#define DG_BY_CPU 2u     /* ... of different CPUs */
#define DG_NO_CHAINS 4u  /* chains are not read (DP_READ_NO_CHAINS) */

#define DG_GROUP 0x80000000u  /* an item with this bit is a group index,
			       * without it a record's payload offset */

struct dg_group {
	uint32_t off;     /* payload offset of its first sample */
	uint32_t count;   /* samples, >= 1 */
	uint64_t period;  /* their periods' sum, mod 2^64 */
	uint64_t hash;
	uint32_t run;     /* the run it belongs to (private) */
	uint32_t domain;  /* the domain its samples are in (private) */
};

struct dp_digest {
	uint32_t *items;
	size_t nitems, capitems;
	struct dg_group *groups;
	size_t ngroups, capgroups;
	size_t nsamples;  /* samples in the groups */
	struct hidx idx;  /* private */
};

/* Digest pl[0..len) (a decoded chunk payload, 8-aligned) with DG_*
 * flags, replacing what d held. */
void dg_build(struct dp_digest *d, const uint8_t *pl, size_t len, unsigned flags);
void dg_release(struct dp_digest *d);
/* The record p[0..len) (framing checked) is a SAMPLE a group can stand
 * for: no user stack, its parts within it (what dg_build groups). */
bool dg_plain(const uint8_t *p, uint32_t len);
/* Digests that do not pay are not built for a while (the reader's own,
 * the writer's counts parts): after one that did not, the next 4 chunks
 * go without, twice as many after each such one in a row, at most 32. */
struct dg_backoff {
	unsigned skip, wait;    /* chunks still to go without; the next wait */
};
/* true (and one fewer to skip) when this chunk goes without */
static inline bool dg_backoff_skip(struct dg_backoff *b)
{
	return b->skip ? (b->skip--, true) : false;
}
/* what the digest just built was worth */
static inline void dg_backoff_paid(struct dg_backoff *b, bool paid)
{
	b->wait = paid ? 0 : !b->wait ? 4 : b->wait < 32 ? 2 * b->wait : 32;
	b->skip = b->wait;
}
/* Releases a digest that grew large (over 2 MiB: a large chunk's), so a
 * holder keeps at most that much between builds. */
void dg_trim(struct dp_digest *d);

#endif
