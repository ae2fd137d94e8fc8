/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: parallel chunk decoding for the reader
 * (dp_reader_set_threads). Worker threads check the payload CRC of the
 * chunks ahead of the one being read and decompress them, each into a
 * buffer of its own; the reader takes the result of a chunk when it gets
 * there, in file order, and decides everything else (sequence, damage,
 * records) itself as it does without workers. What a worker computes is
 * a pure function of the chunk's bytes, so a read with workers returns
 * exactly the records and damage of a read without. With a digest
 * (DP_READ_GROUPS) the reader returns groups of samples where a worker
 * left one, the same samples counted (digest.h).
 *
 * Bounds: at most PF_SLOTS_MAX chunks are queued, each of at most
 * PF_MAX_RAW decoded bytes, PF_MAX_BYTES in all; a larger chunk is left
 * to the reader (decoded inline, as without workers). A chunk no worker
 * has started when the reader needs it is decoded by the reader's thread;
 * while a worker is on it, the reader decodes the next queued one (as a
 * worker, digest included) instead of waiting.
 *
 * Ownership: the prefetcher owns its threads, buffers and zstd contexts;
 * the payload pointers it is given point into the reader's file and must
 * stay mapped until pf_free (or pf_reset) returns. A result's buffer is
 * valid until the next pf_take, pf_release, pf_reset or pf_free.
 * Called from one thread (the reader's).
 */
#ifndef DOMPROF_FORMAT_PREFETCH_H
#define DOMPROF_FORMAT_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_THREADS_MAX 63u
#define PF_SLOTS_MAX 64u
#define PF_MAX_RAW (16u << 20)
#define PF_MAX_BYTES (64u << 20)

struct dp_prefetch;
struct dp_digest;

/* What the reader would compute for the chunk: crc_ok is the payload's
 * CRC check; for a zstd chunk with a good CRC, dec_ok says it
 * decompressed to exactly raw bytes, into data. */
struct pf_result {
	bool crc_ok;
	bool dec_ok;
	const uint8_t *data;
	size_t len;
	/* the chunk's digest (digest.h) when it was asked for and a worker
	 * decoded the chunk with a good CRC (and, zstd, dec_ok); NULL when
	 * the reader's own thread decoded it (next_chunk then makes it), or
	 * none was asked */
	const struct dp_digest *dg;
	/* data is the chunk's counts part (format/counts.h: its records, dg
	 * its groups), not its payload: asked with PF_COUNTS, and the chunk
	 * had a sound one */
	bool counts;
};

/* threads: workers to start (1..PF_THREADS_MAX). NULL when none could be
 * started (the reader then reads alone). */
struct dp_prefetch *pf_new(unsigned threads);
void pf_free(struct dp_prefetch *pf);

/* Queue the chunk at file offset off (its header is valid): payload
 * pl[0..stored), CRC crc, flags, raw size and record count nrec from
 * its header; digest:
 * PF_DIGEST | DG_* flags to have a worker digest it too, or 0. false when
 * the queue is full or the chunk is over the bounds (not queued). */
#define PF_DIGEST 0x100u
#define PF_COUNTS 0x200u  /* with PF_DIGEST: a chunk's counts part in place of its payload
			   * and digest, where it has a sound one (on any thread) */
bool pf_submit(struct dp_prefetch *pf, uint64_t off, const uint8_t *pl, uint32_t stored,
	       uint32_t raw, uint32_t flags, uint32_t crc, uint32_t nrec, unsigned digest);
/* Offset after the last chunk queued (0 when nothing is queued). */
uint64_t pf_queued_end(const struct dp_prefetch *pf);
/* The result for the chunk at off, waiting for a worker that is on it or
 * decoding it here if none started; NULL when it was not queued. Drops
 * the results of chunks before off (the reader skipped them). */
const struct pf_result *pf_take(struct dp_prefetch *pf, uint64_t off);
/* The reader is done with the last result taken. */
void pf_release(struct dp_prefetch *pf);
/* Drop everything queued (rewind). */
void pf_reset(struct dp_prefetch *pf);

#endif
