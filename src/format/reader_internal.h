/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: the reader's state, shared by reader.c (open,
 * the public calls, record decoding), reader_frame.c (the file header and
 * the walk over chunks: header and payload checks, decompression, the
 * sequence check, damage) and reader_perf.c (perf.data behind it). One dp_reader is used by one thread at a time.
 */
#ifndef DOMPROF_FORMAT_READER_INTERNAL_H
#define DOMPROF_FORMAT_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "format/digest.h"
#include "format/format.h"
#include "format/ustack.h"

struct dp_prefetch;

/*
 * A recording in a format other than domprof's, read behind dp_reader
 * and translated into domprof records (dp_reader_open tries each in
 * rd_foreign_formats before its own header). Each call is the dp_reader
 * call of the same name; ctx is what open returned, freed by free. The
 * strings and records it hands out are its own (perfdata.h says for how
 * long).
 */
struct rd_foreign {
	const char *name;
	bool (*is)(const uint8_t *p, size_t n);     /* its magic at p (n >= 8) */
	/* mapped: map is a read-only file mapping whose read pages may be
	 * dropped (never a caller's buffer) */
	void *(*open)(const uint8_t *map, size_t size, uint64_t mtime_ns, bool mapped, int *err,
		      char *msg, size_t msglen);
	const struct dp_header *(*header)(const void *ctx);
	int (*next)(void *ctx, struct dp_record *rec);
	void (*rewind)(void *ctx);
	uint64_t (*pos)(const void *ctx);
	size_t (*damage)(const void *ctx, const struct dp_damage **out);
	const char *(*incomplete)(const void *ctx);
	const char *(*note)(const void *ctx);
	int (*set_guest)(void *ctx, const struct dp_perf_guest *g);   /* NULL: -EINVAL */
	void (*free)(void *ctx);
};

/* perf's perf.data (reader_perf.c, perfdata.h) */
extern const struct rd_foreign rd_perfdata;

/* Runs of chunk sequence numbers kept for the sequence check: one in an
 * intact file, one more per gap or out-of-order chunk. A file disordered
 * past this is reported once and not checked further (bounded memory and
 * time whatever the file says). */
#define MAX_SEQ_RUNS 4096

/* Chunks [lo, hi) of the sequence were seen; `off` is the file offset of
 * the chunk that began the run, where a gap before it is reported. */
struct seq_run {
	uint64_t lo, hi;
	uint64_t off;
};

struct dp_reader {
	const uint8_t *map;     /* whole file */
	size_t size;
	void *owned;            /* aligned copy for open_mem */
	bool mapped;
	uint64_t dropped;       /* file pages before this offset were released */
	struct dp_header hdr;
	char *hstr[5];          /* NUL-terminated header strings */
	uint64_t first_chunk;

	uint64_t pos;           /* next chunk header offset */
	uint64_t chunks;
	uint64_t chunks_counts;  /* of them, with a counts part (flag; not checked) */
	/* open chunk */
	const uint8_t *payload; /* decoded payload */
	size_t plen, ppos;
	uint32_t nrec_expected, nrec_seen;
	uint64_t chunk_off;
	uint32_t cur_domain;
	uint8_t *zbuf;          /* decompression buffer */
	size_t zcap;
	ZSTD_DCtx *dctx;
	uint8_t *sbuf;          /* symtab decompression buffer */
	size_t scap;
	unsigned flags;         /* DP_READ_* */
	bool counts_off;        /* $DOMPROF_CHUNK_COUNTS=0: counts parts not read */
	uint64_t *chain;        /* aligned copy of a call chain */
	size_t chain_cap;
	uint64_t uregs[64];     /* aligned copy of a sample's user registers */
	/* threads' last user stacks in the open chunk, for samples in delta
	 * form (1.5); reset at every chunk. `track` is off in the scratch
	 * reader of dp_record_check, which refuses delta samples. */
	bool track;
	struct usd_table usd;
	struct dp_counter *ctr; /* a COUNTERS record decoded: DP_MAX_COUNTERS entries */
	char *ctr_names;        /* their names, NUL-terminated, DP_MAX_COUNTER_NAME + 1 each */

	/* dp_reader_set_threads: workers decoding the chunks ahead, and the
	 * offset up to which chunks were handed to them */
	struct dp_prefetch *pf;
	uint64_t pf_ahead;
	/* DP_READ_GROUPS: the open chunk's digest (digest.h; a worker's or
	 * own_dg), its next item, and the payload's length. While it is
	 * open, plen == ppos, so dp_reader_next's fast path goes to
	 * next_slow, which walks the items. */
	const struct dp_digest *dg;
	size_t dg_i, dg_plen;
	struct dp_digest own_dg;  /* made by this thread (no worker's) */
	/* DP_READ_VERIFY_COUNTS: the open chunk's counts part decoded into
	 * vbuf (vcap bytes) as a digest (vpart), and the digest of the
	 * chunk's records it is compared with (vrecs; counts.h cnt_agrees) */
	uint8_t *vbuf;
	size_t vcap;
	struct dp_digest vpart, vrecs;
	struct dg_backoff dg_bo; /* chunks to read without one (own_digest) */

	struct dp_damage *damage;
	size_t ndamage, damage_cap;
	uint64_t damage_until;  /* damage before this offset was already recorded */
	bool at_end;

	/* Completeness, per pass (reset by rewind): the chunk sequence seen
	 * (format >= 1.1 only) and the records found, for STATS to check. */
	bool check_seq;
	struct seq_run *runs;
	size_t nruns, runcap;
	uint64_t nrec_read, nsamples_read;
	/* over all passes */
	bool end_reported;      /* the end-of-file damage (gaps) was recorded */
	bool ended;             /* a pass reached the end of the file */
	bool stats_seen;
	uint32_t stats_flags;

	/* a recording of another format read in the place of a domprof
	 * file (fx: its calls, fctx: what its open returned); NULL: ours */
	const struct rd_foreign *fx;
	void *fctx;
	uint64_t mtime_ns;
};

/* Records damage at file offset off (lost bytes), once per offset over
 * all passes (damage before r->damage_until was recorded already). */
void rd_damage(struct dp_reader *r, uint64_t off, uint64_t lost, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Checks the domprof file header at r->map and fills r->hdr, r->hstr,
 * r->first_chunk, r->pos. 0, or dp_open_fail's return (*err, msg). */
int rd_parse_header(struct dp_reader *r, int *err, char *msg, size_t msglen);

/* Closes the open chunk and enters the next readable one: true when a
 * chunk is open (r->payload, r->plen; r->dg when its digest is walked),
 * false at the end of the file. Damage is recorded and skipped: the walk
 * resynchronises on the next valid chunk header. */
bool rd_next_chunk(struct dp_reader *r);

#endif
