/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: a chunk's counts part (format 1.6,
 * docs/file-format.md "Counts part"). A counting reader (DP_READ_GROUPS)
 * wants each run of samples folded into groups (digest.h); the writer
 * folds them once, when it writes the chunk, and stores the result after
 * the records' zstd frame as a zstd skippable frame, which every zstd
 * decoder (and so every reader before 1.6) passes over. A counting
 * reader then decompresses that part alone: a tenth to a fifth of the
 * chunk's bytes where samples repeat (a busy loop's ip, cpu, tid and
 * chain), and no digest to build.
 *
 * The part, decompressed: u32 magic "CNT1", u32 nitems, u32 recs_len,
 * u32 0; nitems entries of (u32 count, u32 0, u64 period); then recs_len
 * bytes: one record per entry, in the chunk's order: a record of its own
 * (count 0: every record that is not a plain sample, and samples with a
 * user stack) or the first sample of a group of count samples whose
 * periods sum to period (its other fields are all the group's: the
 * writer keys groups by ip, pid, tid, cpu, mode, event, asid, domain and
 * chain, finer than any counting reader asks).
 *
 * Hostile input: cnt_read checks every length, that each entry's record
 * is framed, that a group's record is a plain sample, that the counts
 * add up to the chunk header's record count; a part that fails any of
 * it is not used (the chunk's records frame is read instead, the same
 * records without groups), nothing else. Bounds as digest.h.
 */
#ifndef DOMPROF_FORMAT_COUNTS_H
#define DOMPROF_FORMAT_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "format/digest.h"

#define CNT_MAGIC 0x31544e43u          /* "CNT1" little-endian */
#define CNT_SKIPPABLE 0x184d2a5du      /* a zstd skippable frame's magic (0x184D2A5?) */
#define CNT_HDR 16u
#define CNT_ENT 16u

/* The counts part's bytes (decompressed) for the chunk payload
 * pl[0..len) and its digest d (dg_build with DG_BY_TID | DG_BY_CPU) into
 * *out (grown as needed, *cap its size): its length, or 0 when the chunk
 * should have none: groups averaging under 2 samples, a user stack in
 * it, or a part over half the payload. */
size_t cnt_encode(const struct dp_digest *d, const uint8_t *pl, size_t len, uint8_t **out, size_t *cap);

/* In the stored payload pl[0..stored) of a chunk with DP_CHUNK_COUNTS:
 * the zstd frame of its counts part (*z, *zlen) and the part's
 * decompressed size (*raw, at most max). false when it is not there as
 * described. */
bool cnt_locate(const uint8_t *pl, uint32_t stored, uint32_t max, const uint8_t **z, size_t *zlen,
		uint32_t *raw);

/* The decompressed part p[0..len) of a chunk of nrec records checked and
 * read into d (its arrays reused) over its records (*recs, *recs_len:
 * inside p); false when it does not hold up (cnt_read then leaves d
 * empty). */
bool cnt_read(const uint8_t *p, size_t len, uint32_t nrec, struct dp_digest *d, const uint8_t **recs,
	      size_t *recs_len);

/* The counts part of the stored chunk payload pl[0..stored) (a chunk of
 * nrec records, raw bytes decompressed, with DP_CHUNK_COUNTS):
 * cnt_locate, decompressed with dctx into buf (raw bytes or more), then
 * cnt_read into d, *recs inside buf. false when any step fails. */
bool cnt_decode(ZSTD_DCtx *dctx, const uint8_t *pl, uint32_t stored, uint32_t raw, uint32_t nrec,
		uint8_t *buf, struct dp_digest *d, const uint8_t **recs, size_t *recs_len);

/* The counts part d over its records prt[0..plen) (cnt_read's) against
 * the chunk's own records pl[0..len) (its records frame decompressed):
 * true when the part is what the writer makes of those records
 * (cnt_encode of dg_build with DG_BY_TID | DG_BY_CPU): the same items in
 * the same order, each record byte for byte, each group with the same
 * first sample, count and period sum. Otherwise false, with why[] saying
 * which item differs first and how, and how many more do (one line,
 * "item I/N: 10 samples, mode differs (+2 more)", no offset).
 * mine is a digest of the caller's, the records' (its arrays reused).
 * Bounded by the two lengths: one pass over each. */
bool cnt_agrees(const struct dp_digest *d, const uint8_t *prt, size_t plen, const uint8_t *pl, size_t len,
		struct dp_digest *mine, char *why, size_t whylen);

/* $DOMPROF_CHUNK_COUNTS is "0": write no counts parts, read none. */
bool cnt_off(void);

#endif
