// SPDX-License-Identifier: MIT
/*
 * The format reader: maps a file, walks its chunks, verifies each one's
 * header CRC and payload CRC, decompresses, and decodes records with the
 * current domain as explicit state (host at every chunk start, changed
 * only by DOMAIN_SWITCH). Every length is checked before use because
 * files are crafted input; damage is recorded and skipped, never fatal
 * once the header is valid. From format 1.1 it also follows the chunk
 * sequence numbers (a chunk cut out, repeated or moved keeps valid CRCs)
 * and compares the STATS record's totals with what it read, so nothing
 * goes missing or counts twice silently. See docs/file-format.md.
 */
#include "format/format.h"
#include "format/prefetch.h"
#include "format/counts.h"
#include "format/digest.h"
#include "format/ustack.h"
#include "format/wire.h"
#include "format/perfdata.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

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

	/* a perf.data read in the place of a domprof file (perfdata.h) */
	struct pd_reader *perf;
	uint64_t mtime_ns;
};

static void damage(struct dp_reader *r, uint64_t off, uint64_t lost, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void damage(struct dp_reader *r, uint64_t off, uint64_t lost, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dp_damage_vadd(&r->damage, &r->ndamage, &r->damage_cap, r->damage_until, off, lost, fmt, ap);
	va_end(ap);
}

static int parse_header(struct dp_reader *r, int *err, char *msg, size_t msglen)
{
	const uint8_t *p = r->map;
	if (r->size < 8 || memcmp(p, DP_MAGIC, 8))
		return dp_open_fail(err, msg, msglen, DP_ERR_NOT_DOMPROF, "not a domprof file (bad magic)");
	if (r->size < DP_FILE_HDR_FIXED)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged header: file truncated inside the header (%zu bytes)", r->size);
	r->hdr.major = get16(p + 8);
	r->hdr.minor = get16(p + 10);
	if (r->hdr.major > DP_VERSION_MAJOR)
		return dp_open_fail(err, msg, msglen, DP_ERR_VERSION,
			    "made by a newer domprof (format %u.%u; this build reads %u.x)",
			    r->hdr.major, r->hdr.minor, DP_VERSION_MAJOR);
	if (r->hdr.major < 1)
		return dp_open_fail(err, msg, msglen, DP_ERR_VERSION, "unsupported format version %u.%u",
			    r->hdr.major, r->hdr.minor);
	if (p[12] != 1)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "unsupported byte order %u (only little-endian files exist)", p[12]);
	uint32_t hlen = get32(p + 16);
	if (hlen < DP_FILE_HDR_FIXED || hlen > DP_FILE_HDR_MAX)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER, "damaged header: bad length %u", hlen);
	if (hlen > r->size)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged header: file truncated inside the header (%zu of %u bytes)",
			    r->size, hlen);
	if (crc32c(0, p + 24, hlen - 24) != get32(p + 20))
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER, "damaged header: CRC mismatch");
	r->hdr.created_ns = get64(p + 24);
	r->hdr.ncpus = get32(p + 32);
	uint32_t nfields = get32(p + 36);
	size_t off = DP_FILE_HDR_FIXED;
	for (uint32_t i = 0; i < nfields && off + 4 <= hlen; i++) {
		uint16_t id = get16(p + off), n = get16(p + off + 2);
		if (off + 4 + n > hlen)
			break;
		if (id >= 1 && id <= 4) {
			free(r->hstr[id]);
			r->hstr[id] = xstrndup((const char *)p + off + 4, n);
		}
		off += 4 + n;
	}
	for (int i = 1; i <= 4; i++)
		if (!r->hstr[i])
			r->hstr[i] = xstrdup("");
	r->hdr.hostname = r->hstr[DP_FIELD_HOSTNAME];
	r->hdr.release = r->hstr[DP_FIELD_RELEASE];
	r->hdr.cpu_desc = r->hstr[DP_FIELD_CPU];
	r->hdr.cmdline = r->hstr[DP_FIELD_CMDLINE];
	r->first_chunk = align8(hlen);
	r->pos = r->first_chunk;
	r->check_seq = r->hdr.minor >= 1;
	return 0;
}

static struct dp_reader *open_common(struct dp_reader *r, int *err, char *msg, size_t msglen)
{
	r->track = true;
	r->counts_off = cnt_off();
	if (pd_is_perf(r->map, r->size)) {
		r->perf = pd_open(r->map, r->size, r->mtime_ns, err, msg, msglen);
		if (!r->perf) {
			dp_reader_free(r);
			return NULL;
		}
		if (r->mapped)
			pd_set_mapped(r->perf);
		r->hdr = *pd_header(r->perf);
		return r;
	}
	if (parse_header(r, err, msg, msglen) < 0) {
		dp_reader_free(r);
		return NULL;
	}
	r->dctx = ZSTD_createDCtx();
	return r;
}

struct dp_reader *dp_reader_open(const char *path, int *err, char *msg, size_t msglen)
{
	/* a FIFO or device named here must not block or be read forever */
	uint64_t fsize = 0;
	int fd = file_open_regular(path, &fsize);
	if (fd < 0) {
		dp_open_fail(err, msg, msglen, fd == FILE_ERR_NOT_REGULAR ? -EINVAL : fd, "cannot %s '%s': %s",
		     fd == FILE_ERR_NOT_REGULAR ? "read" : "open", path, file_strerror(fd));
		return NULL;
	}
	struct dp_reader *r = xcalloc(1, sizeof(*r));
	r->size = (size_t)fsize;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			free(r);
			dp_open_fail(err, msg, msglen, -e, "cannot map '%s': %s", path, strerror(e));
			return NULL;
		}
		madvise(m, r->size, MADV_SEQUENTIAL);
		r->map = m;
		r->mapped = true;
	} else {
		r->map = (const uint8_t *)"";
	}
	struct stat st;
	if (fstat(fd, &st) == 0)
		r->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	close(fd);
	return open_common(r, err, msg, msglen);
}

struct dp_reader *dp_reader_open_mem(const void *buf, size_t len, int *err, char *msg,
				     size_t msglen)
{
	struct dp_reader *r = xcalloc(1, sizeof(*r));
	/* An aligned private copy: records are 8-aligned relative to it. */
	r->owned = xmalloc(len ? len : 1);
	memcpy(r->owned, buf, len);
	r->map = r->owned;
	r->size = len;
	return open_common(r, err, msg, msglen);
}

void dp_reader_free(struct dp_reader *r)
{
	if (!r)
		return;
	pf_free(r->pf);  /* its workers read the mapping */
	pd_free(r->perf);
	if (r->mapped)
		munmap((void *)r->map, r->size);
	free(r->owned);
	for (int i = 0; i < 5; i++)
		free(r->hstr[i]);
	ZSTD_freeDCtx(r->dctx);
	free(r->zbuf);
	free(r->sbuf);
	free(r->chain);
	free(r->ctr);
	free(r->ctr_names);
	free(r->damage);
	free(r->runs);
	usd_free(&r->usd);
	dg_release(&r->own_dg);
	dg_release(&r->vpart);
	dg_release(&r->vrecs);
	free(r->vbuf);
	free(r);
}

void dp_reader_set_flags(struct dp_reader *r, unsigned flags) { r->flags = flags; }

int dp_reader_set_threads(struct dp_reader *r, unsigned n)
{
	if (r->perf)
		return 0;   /* a perf.data has no chunks: read by one thread */
	if (n > DP_READ_THREADS_MAX)
		n = DP_READ_THREADS_MAX;
	if (r->pf && r->payload)
		return -EBUSY;  /* the open chunk's payload is a worker's buffer */
	if (r->pf) {
		pf_free(r->pf);
		r->pf = NULL;
	}
	if (n <= 1)
		return 0;
	/* n - 1 workers: the caller's thread decodes too (pf_take) */
	r->pf = pf_new(n - 1);
	return r->pf ? 0 : -EAGAIN;
}
const struct dp_header *dp_reader_header(const struct dp_reader *r) { return &r->hdr; }
uint64_t dp_reader_pos(const struct dp_reader *r) { return r->perf ? pd_pos(r->perf) : r->pos; }
bool dp_reader_is_perf(const struct dp_reader *r) { return r->perf != NULL; }
const char *dp_reader_note(const struct dp_reader *r) { return r->perf ? pd_note(r->perf) : NULL; }

int dp_reader_perf_guest(struct dp_reader *r, const struct dp_perf_guest *g)
{
	return r->perf ? pd_set_guest(r->perf, g) : -EINVAL;
}
uint64_t dp_reader_size(const struct dp_reader *r) { return r->size; }
uint64_t dp_reader_chunks(const struct dp_reader *r) { return r->chunks; }
uint64_t dp_reader_chunks_counts(const struct dp_reader *r) { return r->chunks_counts; }

size_t dp_reader_damage(const struct dp_reader *r, const struct dp_damage **out)
{
	if (r->perf)
		return pd_damage(r->perf, out);
	*out = r->damage;
	return r->ndamage;
}

void dp_reader_rewind(struct dp_reader *r)
{
	if (r->perf) {
		pd_rewind(r->perf);
		return;
	}
	if (r->pos > r->damage_until)
		r->damage_until = r->pos;
	if (r->at_end)
		r->damage_until = UINT64_MAX;
	r->pos = r->first_chunk;
	r->dropped = 0;
	if (r->pf)
		pf_reset(r->pf);
	r->pf_ahead = 0;
	r->payload = NULL;
	r->dg = NULL;
	r->dg_bo = (struct dg_backoff){ 0 };
	r->plen = r->ppos = 0;
	r->chunks = r->chunks_counts = 0;
	r->at_end = false;
	r->check_seq = r->hdr.minor >= 1;
	r->nruns = 0;
	r->nrec_read = r->nsamples_read = 0;
}

const char *dp_reader_incomplete(const struct dp_reader *r)
{
	if (r->perf)
		return pd_incomplete(r->perf);
	if (!r->ended)
		return NULL;
	if (!r->stats_seen)
		return "recording incomplete (no end-of-recording STATS record; the recorder was "
		       "killed?): up to the last 250 ms may be missing";
	if (r->stats_flags & DP_STATS_INCOMPLETE)
		return "recording incomplete: merged from a recording that had no end-of-recording "
		       "STATS record";
	return NULL;
}

/* "chunk 5" or "chunks 5..7" into buf. */
static const char *seq_range(char *buf, size_t n, uint64_t lo, uint64_t hi)
{
	if (hi - lo == 1)
		snprintf(buf, n, "chunk %" PRIu64, lo);
	else
		snprintf(buf, n, "chunks %" PRIu64 "..%" PRIu64, lo, hi - 1);
	return buf;
}

/*
 * Account for chunk `seq` at `off` (its header CRC is valid, so seq is
 * what the writer wrote). Returns false when the chunk repeats one already
 * read: the caller skips it. A chunk that fills an earlier gap is read and
 * reported as out of order; gaps still open at the end of the file are
 * reported by seq_end().
 */
static bool seq_note(struct dp_reader *r, uint32_t seq, uint64_t off, uint64_t bytes)
{
	if (!r->check_seq)
		return true;
	struct seq_run *v = r->runs;
	size_t n = r->nruns;
	if (n && seq == v[n - 1].hi) {
		v[n - 1].hi++;  /* the common case: the next chunk */
		return true;
	}
	/* first run whose lo > seq */
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (v[m].lo > seq)
			b = m;
		else
			a = m + 1;
	}
	if (a && seq < v[a - 1].hi) {
		damage(r, off, bytes, "chunk %u repeated at offset %" PRIu64 "; skipped", seq, off);
		return false;
	}
	if (a < n)
		damage(r, off, 0, "chunk %u out of order at offset %" PRIu64 " (read)", seq, off);
	bool join_prev = a && v[a - 1].hi == seq, join_next = a < n && v[a].lo == (uint64_t)seq + 1;
	if (join_prev && join_next) {
		v[a - 1].hi = v[a].hi;
		memmove(v + a, v + a + 1, (n - a - 1) * sizeof(*v));
		r->nruns--;
	} else if (join_prev) {
		v[a - 1].hi++;
	} else if (join_next) {
		v[a].lo = seq;
		v[a].off = off;
	} else if (n >= MAX_SEQ_RUNS) {
		damage(r, off, 0, "chunk sequence too disordered; not checked from offset %" PRIu64, off);
		r->check_seq = false;
	} else {
		xgrow((void **)&r->runs, &r->runcap, n + 1, sizeof(*r->runs));
		v = r->runs;
		memmove(v + a + 1, v + a, (n - a) * sizeof(*v));
		v[a] = (struct seq_run){ .lo = seq, .hi = (uint64_t)seq + 1, .off = off };
		r->nruns++;
	}
	return true;
}

/* At the end of the first full pass: report the gaps of the sequence,
 * each where the chunk after it was found. (Chunks lost after the last
 * one read are what STATS, or its absence, tells.) */
static void seq_end(struct dp_reader *r)
{
	r->ended = true;
	if (r->end_reported)
		return;
	r->end_reported = true;
	if (!r->check_seq)
		return;
	uint64_t until = r->damage_until;
	r->damage_until = 0;  /* found only now, even where a partial pass had been */
	char buf[64];
	for (size_t i = 0; i < r->nruns; i++) {
		uint64_t from = i ? r->runs[i - 1].hi : 0;
		if (from < r->runs[i].lo)
			damage(r, r->runs[i].off, 0, "%s missing at offset %" PRIu64,
			       seq_range(buf, sizeof(buf), from, r->runs[i].lo), r->runs[i].off);
	}
	r->damage_until = until;
}

/* A STATS record: compare its totals with the records found before it. */
static void stats_check(struct dp_reader *r, const struct dp_stats *st, uint64_t nrec)
{
	r->stats_seen = true;
	r->stats_flags = st->flags;
	if (!st->has_totals || (st->records == nrec && st->sample_records == r->nsamples_read))
		return;
	damage(r, r->chunk_off, 0,
	       "STATS counts %" PRIu64 " records (%" PRIu64 " samples), %" PRIu64 " (%" PRIu64 ") read",
	       st->records, st->sample_records, nrec, r->nsamples_read);
}

static bool chunk_header_ok(const uint8_t *h)
{
	return get32(h) == DP_CHUNK_MAGIC && crc32c(0, h, 28) == get32(h + 28);
}

/* Finish the open chunk: check its record count. */
static void close_chunk(struct dp_reader *r)
{
	if (r->payload && r->nrec_seen != r->nrec_expected)
		damage(r, r->chunk_off, 0, "chunk holds %u records, header says %u",
		       r->nrec_seen, r->nrec_expected);
	r->payload = NULL;
	r->dg = NULL;
	if (r->pf)
		pf_release(r->pf);
	dg_trim(&r->own_dg);   /* nor a large digest */
	dg_trim(&r->vpart);
	dg_trim(&r->vrecs);
	/* SYMTAB data is only valid inside its chunk; a large table (a
	 * kallsyms is ~10 MB) is not kept for the rest of the read. */
	if (r->scap > (1u << 20)) {
		free(r->sbuf);
		r->sbuf = NULL;
		r->scap = 0;
	}
}

/* pf_submit's digest argument for this reader's flags */
static unsigned digest_flags(const struct dp_reader *r)
{
	if (!(r->flags & DP_READ_GROUPS))
		return 0;
	/* a verifying read reads the records (DP_READ_VERIFY_COUNTS) */
	bool counts = !r->counts_off && !(r->flags & DP_READ_VERIFY_COUNTS);
	return PF_DIGEST | (counts ? PF_COUNTS : 0) | (r->flags & DP_READ_GROUP_TID ? DG_BY_TID : 0) |
	       (r->flags & DP_READ_GROUP_CPU ? DG_BY_CPU : 0) |
	       (r->flags & DP_READ_NO_CHAINS ? DG_NO_CHAINS : 0);
}

/*
 * Hand the chunks from `from` on to the workers, as far as the queue
 * takes them, walking as next_chunk would over valid headers; the walk
 * stops where next_chunk would report damage or resynchronise (it gets
 * there itself and decodes such chunks inline).
 */
static void prefetch_ahead(struct dp_reader *r, uint64_t from)
{
	uint64_t q = from > r->pf_ahead ? from : r->pf_ahead;
	unsigned digest = digest_flags(r);
	while (q < r->size && r->size - q >= DP_CHUNK_HDR) {
		const uint8_t *h = r->map + q;
		if (!chunk_header_ok(h))
			break;
		uint32_t flags = get32(h + 4), stored = get32(h + 8), raw = get32(h + 12);
		if (stored > DP_CHUNK_MAX || raw > DP_CHUNK_MAX || q + DP_CHUNK_HDR + stored > r->size)
			break;
		if (!pf_submit(r->pf, q, h + DP_CHUNK_HDR, stored, raw, flags, get32(h + 20), get32(h + 16), digest))
			break;
		q += DP_CHUNK_HDR + align8(stored);
	}
	r->pf_ahead = q;
}

/*
 * A digest of the open chunk made on this thread, or NULL when digests
 * do not pay here. Making one costs about what counting 2/3 of its
 * samples one by one costs (the break-even group size is in
 * docs/benchmarks.md, "Design measurements"), so after a digest whose groups average under 3 samples (or
 * one without groups of a chunk of
 * records: a file of user stacks) the next chunks are read sample by
 * sample, 4 of them, twice as many after each such digest in a row (at
 * most 32), then it is tried again. A worker's digest is always taken:
 * it costs this thread nothing.
 */
static const struct dp_digest *own_digest(struct dp_reader *r)
{
	if (dg_backoff_skip(&r->dg_bo))
		return NULL;
	dg_build(&r->own_dg, r->payload, r->plen, digest_flags(r) & ~(PF_DIGEST | PF_COUNTS));
	const struct dp_digest *d = &r->own_dg;
	dg_backoff_paid(&r->dg_bo, !(d->nitems > 64 && (!d->ngroups || d->ngroups * 3 > d->nsamples)));
	return d->ngroups < d->nsamples ? d : NULL;  /* made: used if it groups at all */
}

/* zbuf holds at least raw bytes: a quarter more when it grows, as the
 * next chunk is a little larger as often as not, and a new buffer costs
 * a page fault a 4 KiB */
static void zbuf_fit(struct dp_reader *r, uint32_t raw)
{
	if (raw <= r->zcap)
		return;
	size_t cap = raw + (size_t)raw / 4;
	free(r->zbuf);
	r->zbuf = xmalloc(cap);
	r->zcap = cap;
}

/*
 * DP_READ_VERIFY_COUNTS: the counts part of the chunk at off (stored
 * payload pl[0..stored), raw decoded bytes, nrec records, flags) against
 * its records, r->payload[0..plen): damage when it does not hold up or
 * disagrees. The records stay what is read.
 */
static void verify_counts(struct dp_reader *r, uint64_t off, const uint8_t *pl, uint32_t stored, uint32_t raw,
			  uint32_t nrec, uint32_t flags)
{
	const uint8_t *recs;
	size_t rlen;
	if (raw > r->vcap) {
		free(r->vbuf);
		r->vcap = raw;
		r->vbuf = xmalloc(r->vcap ? r->vcap : 1);
	}
	if (!(flags & DP_CHUNK_ZSTD) ||
	    !cnt_decode(r->dctx, pl, stored, raw, nrec, r->vbuf, &r->vpart, &recs, &rlen)) {
		damage(r, off, 0, "counts part of chunk at offset %" PRIu64 " does not hold up (not read)", off);
		return;
	}
	char why[256];
	if (!cnt_agrees(&r->vpart, recs, rlen, r->payload, r->plen, &r->vrecs, why, sizeof(why)))
		damage(r, off, 0, "counts part of chunk at offset %" PRIu64 " disagrees with its records: %s",
		       off, why);
}

/*
 * Enter the next readable chunk. Returns true when a chunk is open, false
 * at the end of the file. Resynchronises on the next valid chunk header
 * after damage.
 */
static bool next_chunk(struct dp_reader *r)
{
	close_chunk(r);
	/* Pages of chunks already decoded are not needed again (a rewind
	 * faults them back in): drop them so a report's resident memory does
	 * not grow with the file. */
	if (r->mapped && r->pos > r->dropped + (256u << 10)) {
		uint64_t upto = r->pos & ~(uint64_t)4095;
		madvise((void *)(r->map + r->dropped), upto - r->dropped, MADV_DONTNEED);
		r->dropped = upto;
	}
	while (!r->at_end) {
		uint64_t off = r->pos;
		if (off >= r->size) {
			r->at_end = true;
			seq_end(r);
			return false;
		}
		if (r->size - off < DP_CHUNK_HDR) {
			damage(r, off, r->size - off,
			       "file truncated: %" PRIu64 " bytes of an incomplete chunk header lost",
			       r->size - off);
			r->at_end = true;
			seq_end(r);
			return false;
		}
		const uint8_t *h = r->map + off;
		if (!chunk_header_ok(h)) {
			/* Scan for the next plausible chunk in steps of 8. */
			uint64_t q = off + 8;
			while (q + DP_CHUNK_HDR <= r->size && !chunk_header_ok(r->map + q))
				q += 8;
			if (q + DP_CHUNK_HDR > r->size)
				q = r->size;
			damage(r, off, q - off, "damaged chunk header; %" PRIu64 " bytes skipped",
			       q - off);
			r->pos = q;
			continue;
		}
		uint32_t flags = get32(h + 4), stored = get32(h + 8), raw = get32(h + 12);
		uint64_t end = off + DP_CHUNK_HDR + align8(stored);
		if (stored > DP_CHUNK_MAX || raw > DP_CHUNK_MAX) {
			damage(r, off, DP_CHUNK_HDR, "chunk with impossible length %u/%u", stored, raw);
			r->pos = off + 8;
			continue;
		}
		if (off + DP_CHUNK_HDR + stored > r->size) {
			damage(r, off, r->size - off,
			       "file truncated: last chunk (%u bytes) incomplete, %" PRIu64 " bytes lost",
			       stored, r->size - off);
			r->at_end = true;
			seq_end(r);
			return false;
		}
		r->pos = end;
		if (!seq_note(r, get32(h + 24), off, end - off))
			continue;
		const uint8_t *pl = h + DP_CHUNK_HDR;
		/* with workers: their result for this chunk, the same as
		 * what the lines below work out without */
		const struct pf_result *pr = NULL;
		if (r->pf) {
			prefetch_ahead(r, end);
			pr = pf_take(r->pf, off);
		}
		if (pr ? !pr->crc_ok : crc32c(0, pl, stored) != get32(h + 20)) {
			damage(r, off, DP_CHUNK_HDR + stored,
			       "bad CRC in chunk at offset %" PRIu64 "; %u bytes skipped", off, stored);
			continue;
		}
		/* a counting read takes the chunk's counts part where it has a
		 * sound one (format/counts.h), from a worker or made here */
		const struct dp_digest *cdg = NULL;
		if (pr && pr->counts) {
			cdg = pr->dg;
			r->payload = pr->data;
			r->plen = pr->len;
		} else if (!pr && (flags & DP_CHUNK_COUNTS) && (flags & DP_CHUNK_ZSTD) &&
			   (digest_flags(r) & PF_COUNTS) && raw <= PF_MAX_RAW) {
			const uint8_t *recs;
			size_t rlen;
			zbuf_fit(r, raw);
			if (cnt_decode(r->dctx, pl, stored, raw, get32(h + 16), r->zbuf, &r->own_dg, &recs, &rlen)) {
				cdg = &r->own_dg;
				r->payload = recs;
				r->plen = rlen;
			}
		}
		if (!cdg && (flags & DP_CHUNK_ZSTD)) {
			const uint8_t *data = pr ? pr->data : NULL;
			if (!pr) {
				zbuf_fit(r, raw);
				size_t n = ZSTD_decompressDCtx(r->dctx, r->zbuf, raw, pl, stored);
				if (!ZSTD_isError(n) && n == raw)
					data = r->zbuf;
			} else if (!pr->dec_ok) {
				data = NULL;
			}
			if (!data) {
				damage(r, off, DP_CHUNK_HDR + stored,
				       "chunk at offset %" PRIu64 " does not decompress", off);
				continue;
			}
			r->payload = data;
			r->plen = raw;
		} else if (!cdg) {
			if (raw != stored) {
				damage(r, off, DP_CHUNK_HDR + stored,
				       "chunk at offset %" PRIu64 " has inconsistent lengths", off);
				continue;
			}
			r->payload = pl;
			r->plen = stored;
		}
		if ((r->flags & DP_READ_VERIFY_COUNTS) && (flags & DP_CHUNK_COUNTS))
			verify_counts(r, off, pl, stored, raw, get32(h + 16), flags);
		r->ppos = 0;
		r->nrec_expected = get32(h + 16);
		r->nrec_seen = 0;
		r->chunk_off = off;
		r->cur_domain = DP_HOST_DOMAIN;
		usd_reset(&r->usd);
		r->chunks++;
		r->chunks_counts += (flags & DP_CHUNK_COUNTS) != 0;
		/* groups: the worker's digest, else one made here (the same:
		 * a digest is a function of the payload), so every chunk
		 * within the bound reads alike on any number of threads */
		const struct dp_digest *dg = cdg;   /* a counts part's items are its records: always walked */
		if (!cdg) {
			dg = pr ? pr->dg : NULL;
			if (dg && dg->ngroups == dg->nsamples)
				dg = NULL;   /* it groups nothing: its walk would only cost */
			else if (!dg && (r->flags & DP_READ_GROUPS) && r->plen <= PF_MAX_RAW)
				dg = own_digest(r);
		}
		if (dg) {
			r->dg = dg;
			r->dg_i = 0;
			r->dg_plen = r->plen;
			r->ppos = r->plen;
		}
		return true;
	}
	return false;
}

/* String reader over [p, end): u16 n, n bytes ending in NUL. */
static const char *get_str(const uint8_t **p, const uint8_t *end)
{
	if (end - *p < 2)
		return NULL;
	uint16_t n = get16(*p);
	if (n < 1 || end - *p - 2 < n || (*p)[2 + n - 1] != 0)
		return NULL;
	const char *s = (const char *)*p + 2;
	*p += 2 + n;
	return s;
}

/* A SAMPLE's user registers and stack (1.4) at q, the block after the
 * chain: u64 mask, u32 abi, u32 0, u32 size, u32 len, the registers, the
 * stack. Malformed (false) when a part runs past the record or len >
 * size > DP_MAX_USTACK. */
static bool dec_ustack(struct dp_reader *r, struct dp_sample *s, uint16_t flags,
		       const uint8_t *q, const uint8_t *end)
{
	s->has_uregs = false;
	s->uregs_abi = 0;
	s->uregs_mask = 0;
	s->uregs = NULL;
	s->ustack_size = s->ustack_len = s->ustack_ref = 0;
	s->ustack = NULL;
	bool delta = flags & DP_SAMPLE_F_USTACK_DELTA;
	if (!(flags & DP_SAMPLE_F_USTACK) && !delta)
		return true;
	if ((flags & DP_SAMPLE_F_USTACK) && delta)
		return false;
	if (end - q < DP_USTACK_FIXED)
		return false;
	uint64_t mask = get64(q);
	uint32_t size = get32(q + 16), len = get32(q + 20);
	uint32_t nregs = dp_uregs_count(mask);  /* <= 64 */
	q += DP_USTACK_FIXED;
	if (size > DP_MAX_USTACK || len > size || (size_t)(end - q) / 8 < nregs)
		return false;
	const uint8_t *regs = q;
	q += 8 * (size_t)nregs;
	/* delta form: u32 head, u32 run, then the len - run literal bytes */
	uint32_t head = 0, run = 0, lit = len;
	if (delta) {
		if (end - q < 8)
			return false;
		head = get32(q);
		run = get32(q + 4);
		q += 8;
		if (head > len || run > len - head)
			return false;
		lit = len - run;
	}
	if ((size_t)(end - q) < lit)
		return false;
	s->has_uregs = true;
	s->uregs_mask = mask;
	s->uregs_abi = get32(regs - DP_USTACK_FIXED + 8);
	if (((uintptr_t)regs & 7) == 0) {
		s->uregs = (const uint64_t *)(const void *)regs;
	} else {
		memcpy(r->uregs, regs, 8 * (size_t)nregs);
		s->uregs = r->uregs;
	}
	s->ustack_size = size;
	s->ustack_len = len;
	s->ustack = len ? q : NULL;
	uint64_t sp;
	bool has_sp = dp_sample_ureg(s, DP_X86_REG_SP, &sp);
	if (!r->track)
		return !delta;
	if (delta && !has_sp)
		return false;   /* no address to align the stacks by */
	/* every sample with a stack is its thread's previous one for the
	 * next, as the writer keeps them (format/ustack.h) */
	struct usd_thread *th = usd_get(&r->usd, r->cur_domain, s->tid, true);
	if (!delta) {
		if (th && has_sp)
			usd_full(&r->usd, th, sp, len, q, false);
		else if (th)
			th->has_prev = false;
		return true;
	}
	const uint8_t *st = th ? usd_apply(&r->usd, th, sp, len, head, run, q, q + head) : NULL;
	if (st) {
		s->ustack = st;
		s->ustack_ref = run;
		return true;
	}
	/* a reference to a stack the chunk does not hold (or past the
	 * bounds): the stack ends where its own bytes do */
	damage(r, r->chunk_off, 0,
	       "SAMPLE in chunk at offset %" PRIu64 " refers to a missing earlier user stack; "
	       "stack cut at %u of %u bytes", r->chunk_off, head, len);
	s->ustack_len = head;
	s->ustack = head ? q : NULL;
	if (th)
		usd_full(&r->usd, th, sp, head, q, false);
	return true;
}

/* A sample's fixed part at b (time, ip, period, pid, tid, cpu, event,
 * mode), copied as it is on disk (little-endian hosts, util/le.h): the
 * head of struct dp_sample has the same layout. The record's last fixed
 * byte is padding, where has_asid goes; it and the optional fields after
 * it start out absent. */
static inline __attribute__((always_inline)) void sample_fixed(struct dp_sample *s,
								const uint8_t *b)
{
	_Static_assert(offsetof(struct dp_sample, has_asid) == DP_SAMPLE_FIXED - 1 &&
		       offsetof(struct dp_sample, asid) == DP_SAMPLE_FIXED &&
		       offsetof(struct dp_sample, mode) == 38 && offsetof(struct dp_sample, pid) == 24,
		       "dp_sample's head is the SAMPLE record's fixed part");
	memcpy(s, b, DP_SAMPLE_FIXED);
	s->has_asid = false;
	memset(&s->asid, 0, sizeof(*s) - offsetof(struct dp_sample, asid));
}

/* Per-tag decoders of a record body at p (len bytes, header included):
 * false when it is too short or malformed. dec_sample is inlined into
 * dp_reader_next (most records are samples; see docs/file-format.md on
 * the decoder's speed), the others go through decode()'s switch. */
static inline __attribute__((always_inline)) bool
dec_sample(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	uint16_t flags = get16(p + 2);
	struct dp_sample *s = &rec->u.sample;
	if (len < DP_REC_HDR + DP_SAMPLE_FIXED)
		return false;
	sample_fixed(s, p + DP_REC_HDR);
	if (__builtin_expect(!(flags & DP_SAMPLE_F_PARTS), 1))
		return true;
	struct sample_parts sp;
	if (!sample_parts(p, len, flags, &sp))
		return false;
	if (flags & DP_SAMPLE_F_ASID) {
		s->has_asid = true;
		s->asid = sp.asid;
	}
	uint32_t nr = sp.nr;
	if (r->flags & DP_READ_NO_CHAINS) {
		s->chain_omitted = nr != 0;
	} else if (!(flags & DP_SAMPLE_F_CHAIN)) {
		/* none */
	} else if (((uintptr_t)sp.chain & 7) == 0) {
		s->nr_callchain = nr;
		s->callchain = (const uint64_t *)(const void *)sp.chain;
	} else {
		s->nr_callchain = nr;
		xgrow((void **)&r->chain, &r->chain_cap, nr, 8);
		memcpy(r->chain, sp.chain, 8 * (size_t)nr);
		s->callchain = r->chain;
	}
	return dec_ustack(r, s, flags, sp.rest, p + len);
}

static bool dec_switch(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	if (len < DP_SWITCH_LEN)
		return false;
	rec->u.switch_to = get32(b);
	return true;
}

static bool dec_event(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_event *e = &rec->u.event;
	if (len < DP_REC_HDR + 32)
		return false;
	e->id = get32(b);
	e->type = get32(b + 4);
	e->config = get64(b + 8);
	e->period = get64(b + 16);
	e->freq = get32(b + 24) & 1;
	q = b + 32;
	return (e->name = get_str(&q, end)) != NULL;
}

static bool dec_domain(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_domain *d = &rec->u.domain;
	if (len < DP_REC_HDR + 24)
		return false;
	d->id = get32(b);
	d->kind = b[4];
	d->vcpus = get32(b + 8);
	d->kaslr_offset = get64(b + 16);
	q = b + 24;
	return (d->name = get_str(&q, end)) && (d->address = get_str(&q, end)) &&
	       (d->symsrc = get_str(&q, end));
}

static bool dec_task(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_task *t = &rec->u.task;
	if (len < DP_REC_HDR + 32)
		return false;
	t->kind = b[0];
	t->pid = get32(b + 4);
	t->tid = get32(b + 8);
	t->ppid = get32(b + 12);
	t->ptid = get32(b + 16);
	t->time = get64(b + 24);
	q = b + 32;
	if (!(t->comm = get_str(&q, end)))
		return false;
	/* 1.2 address-space block at the next 8-byte boundary, if there */
	size_t at = align8((uint32_t)(q - p));
	t->has_asid = len >= at + DP_TASK_ASID && (get32(p + at) & 1);
	t->asid = t->has_asid ? get64(p + at + 8) : 0;
	return true;
}

static bool dec_mmap(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_mmap *m = &rec->u.mmap;
	if (len < DP_REC_HDR + 64)
		return false;
	m->pid = get32(b);
	m->buildid_len = b[4] > 20 ? 20 : b[4];
	m->start = get64(b + 8);
	m->len = get64(b + 16);
	m->pgoff = get64(b + 24);
	m->time = get64(b + 32);
	memcpy(m->buildid, b + 40, 20);
	q = b + 64;
	if (!(m->path = get_str(&q, end)))
		return false;
	/* 1.1 identity block at the next 8-byte boundary, if there */
	size_t at = align8((uint32_t)(q - p));
	m->has_ident = len >= at + DP_MMAP_IDENT && (get32(p + at) & 1);
	m->dev = m->has_ident ? get64(p + at + 8) : 0;
	m->ino = m->has_ident ? get64(p + at + 16) : 0;
	m->size = m->has_ident ? get64(p + at + 24) : 0;
	m->mtime_ns = m->has_ident ? get64(p + at + 32) : 0;
	return true;
}

static bool dec_lost(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	if (len < 24)
		return false;
	rec->u.lost.count = get64(b);
	rec->u.lost.source = get32(b + 8);
	rec->u.lost.where = get32(b + 12);
	return true;
}

static bool dec_stats(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	struct dp_stats *s = &rec->u.stats;
	if (len < 56)
		return false;
	s->samples = get64(b);
	s->lost = get64(b + 8);
	s->start_time = get64(b + 16);
	s->end_time = get64(b + 24);
	s->wall_ns = get64(b + 32);
	s->exit_status = get32(b + 40);
	s->flags = get32(b + 44);
	s->has_totals = len >= 72;  /* format 1.1 */
	s->records = s->has_totals ? get64(b + 48) : 0;
	s->sample_records = s->has_totals ? get64(b + 56) : 0;
	return true;
}

static bool dec_symtab(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_symtab *st = &rec->u.symtab;
	if (len < DP_REC_HDR + 24)
		return false;
	st->kind = get32(b);
	uint32_t comp = get32(b + 4);
	uint64_t raw = get64(b + 8), stored = get64(b + 16);
	q = b + 24;
	if (!(st->name = get_str(&q, end)))
		return false;
	size_t head = align8((uint32_t)(q - p));
	if (head > len || stored > len - head || raw > DP_SYMTAB_MAX_RAW)
		return false;
	const uint8_t *data = p + head;
	rec->symtab_compression = comp;
	rec->symtab_stored = data;
	rec->symtab_stored_size = stored;
	if (comp == 0) {
		if (raw != stored)
			return false;
		st->data = data;
		st->size = raw;
	} else if (comp == 1) {
		unsigned long long fs = ZSTD_getFrameContentSize(data, stored);
		if (fs != raw)
			return false;
		if (r->flags & DP_READ_SYMTAB_STORED) {
			/* the caller decompresses (and checks) it when needed */
			st->data = NULL;
			st->size = raw;
			return true;
		}
		if (raw + 1 > r->scap) {
			free(r->sbuf);
			r->sbuf = xmalloc(raw + 1);
			r->scap = raw + 1;
		}
		size_t n = ZSTD_decompressDCtx(r->dctx, r->sbuf, raw, data, stored);
		if (ZSTD_isError(n) || n != raw)
			return false;
		r->sbuf[raw] = 0;
		st->data = r->sbuf;
		st->size = raw;
	} else {
		return false;
	}
	return true;
}

/* COUNTERS (1.3): u32 n, u32 reserved, then n entries of u64 value,
 * u16 len, len name bytes (no NUL), packed; bytes after the last entry
 * are padding or fields of a later version. Names are copied out with a
 * NUL into buffers of the maximal record's size, allocated once. */
static bool dec_counters(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *q = p + DP_REC_HDR + DP_COUNTERS_FIXED;
	if (len < DP_REC_HDR + DP_COUNTERS_FIXED)
		return false;
	uint32_t n = get32(p + DP_REC_HDR);
	if (n > DP_MAX_COUNTERS)
		return false;
	if (n && !r->ctr) {
		r->ctr = xcalloc(DP_MAX_COUNTERS, sizeof(*r->ctr));
		r->ctr_names = xmalloc(DP_MAX_COUNTERS * (DP_MAX_COUNTER_NAME + 1));
	}
	for (uint32_t i = 0; i < n; i++) {
		if (end - q < DP_COUNTER_ENTRY)
			return false;
		uint16_t nl = get16(q + 8);
		const char *name = (const char *)q + DP_COUNTER_ENTRY;
		if (end - q - DP_COUNTER_ENTRY < nl || !dp_counter_name_ok(name, nl))
			return false;
		char *to = r->ctr_names + (size_t)i * (DP_MAX_COUNTER_NAME + 1);
		memcpy(to, name, nl);
		to[nl] = 0;
		r->ctr[i].name = to;
		r->ctr[i].value = get64(q);
		q += DP_COUNTER_ENTRY + nl;
	}
	rec->u.counters.n = n;
	rec->u.counters.c = n ? r->ctr : NULL;
	return true;
}

/* Decode a known record body; false when it is too short or malformed. */
static bool decode(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	switch (rec->type) {
	case DP_REC_SAMPLE: return dec_sample(r, rec, p, len);
	case DP_REC_DOMAIN_SWITCH: return dec_switch(r, rec, p, len);
	case DP_REC_EVENT: return dec_event(r, rec, p, len);
	case DP_REC_DOMAIN: return dec_domain(r, rec, p, len);
	case DP_REC_TASK: return dec_task(r, rec, p, len);
	case DP_REC_MMAP: return dec_mmap(r, rec, p, len);
	case DP_REC_LOST: return dec_lost(r, rec, p, len);
	case DP_REC_STATS: return dec_stats(r, rec, p, len);
	case DP_REC_SYMTAB: return dec_symtab(r, rec, p, len);
	case DP_REC_COUNTERS: return dec_counters(r, rec, p, len);
	default:
		return true; /* unknown tag: raw only */
	}
}

static inline bool flags_delta(const uint8_t *p)
{
	return get16(p + 2) & DP_SAMPLE_F_USTACK_DELTA;
}

/* The record at ppos of the open chunk (ppos < plen): returns 1 with
 * *rec filled, or 0 when it was malformed (damage recorded, skipped;
 * after a bad length the rest of the chunk). */
static inline __attribute__((always_inline)) int record_at(struct dp_reader *r, struct dp_record *rec)
{
	const uint8_t *p = r->payload + r->ppos;
	size_t left = r->plen - r->ppos;
	uint32_t len = left >= DP_REC_HDR ? get32(p + 4) : 0;
	if (left < DP_REC_HDR || len < DP_REC_HDR || len % 8 || len > left) {
		damage(r, r->chunk_off, left,
		       "bad record length in chunk at offset %" PRIu64 "; rest of chunk skipped",
		       r->chunk_off);
		r->ppos = r->plen;
		return 0;
	}
	r->ppos += len;
	r->nrec_seen++;
	uint64_t nrec_before = r->nrec_read++;
	uint16_t type = get16(p);
	rec->type = type;
	rec->raw = p;
	rec->raw_len = len;
	rec->chunk_offset = r->chunk_off;
	rec->weight = 1;
	if (__builtin_expect(type == DP_REC_SAMPLE, 1)) {
		r->nsamples_read++;
		if (__builtin_expect(dec_sample(r, rec, p, len), 1)) {
			rec->domain = r->cur_domain;
			if (flags_delta(p)) {
				rec->raw = NULL;
				rec->raw_len = 0;
			}
			return 1;
		}
	} else if (decode(r, rec, p, len)) {
		if (type == DP_REC_DOMAIN_SWITCH)
			r->cur_domain = rec->u.switch_to;
		if (type == DP_REC_STATS)
			stats_check(r, &rec->u.stats, nrec_before);
		rec->domain = r->cur_domain;
		return 1;
	}
	damage(r, r->chunk_off, len, "malformed %s record in chunk at offset %" PRIu64 " skipped",
	       dp_rec_type_name(type), r->chunk_off);
	return 0;
}

/* The open digest's next item: 1 with *rec filled (a record, or a group
 * as one SAMPLE of weight count), 0 when the item was a record skipped
 * as damage, -1 when the digest is done (closed; the chunk ends with
 * it). A group's first sample is decoded again for its fields; it was
 * found plain (digest.h), so it decodes. */
static int next_item(struct dp_reader *r, struct dp_record *rec)
{
	const struct dp_digest *d = r->dg;
	if (r->dg_i >= d->nitems) {
		r->dg = NULL;
		r->ppos = r->plen = r->dg_plen;
		return -1;
	}
	uint32_t it = d->items[r->dg_i++];
	r->plen = r->dg_plen;
	if (!(it & DG_GROUP)) {
		r->ppos = it;
		int got = record_at(r, rec);
		r->ppos = r->plen;  /* the items say where the next record is */
		return got;
	}
	const struct dg_group *g = &d->groups[it & ~DG_GROUP];
	const uint8_t *p = r->payload + g->off;
	uint32_t len = get32(p + 4);
	rec->type = DP_REC_SAMPLE;
	rec->raw = NULL;  /* it stands for several records: none of them */
	rec->raw_len = 0;
	rec->chunk_offset = r->chunk_off;
	rec->domain = r->cur_domain;
	rec->weight = g->count;
	(void)dec_sample(r, rec, p, len);
	rec->u.sample.period = g->period;
	r->ppos = r->plen;
	r->nrec_seen += g->count;
	r->nrec_read += g->count;
	r->nsamples_read += g->count;
	return 1;
}

/* dp_reader_next for everything but the next record being a well-formed
 * SAMPLE of the open chunk without optional parts: chunk changes, other
 * tags, damage, digests. */
static __attribute__((noinline)) int next_slow(struct dp_reader *r, struct dp_record *rec)
{
	if (r->perf) {
		int rc = pd_next(r->perf, rec);
		rec->weight = 1;   /* after: pd_next clears the record */
		return rc;
	}
	/* A DOMAIN_SWITCH, before the general loop: a file of several
	 * domains switches every few samples */
	if (r->payload && r->plen - r->ppos >= DP_SWITCH_LEN) {
		const uint8_t *p = r->payload + r->ppos;
		uint32_t len = get32(p + 4);
		if (get16(p) == DP_REC_DOMAIN_SWITCH && len >= DP_SWITCH_LEN && len % 8 == 0 &&
		    len <= r->plen - r->ppos) {
			r->ppos += len;
			r->nrec_seen++;
			r->nrec_read++;
			rec->type = DP_REC_DOMAIN_SWITCH;
			rec->raw = p;
			rec->raw_len = len;
			rec->chunk_offset = r->chunk_off;
			rec->weight = 1;
			rec->u.switch_to = get32(p + DP_REC_HDR);
			r->cur_domain = rec->u.switch_to;
			rec->domain = r->cur_domain;
			return 1;
		}
	}
	for (;;) {
		if (r->dg) {
			/* 0: a record skipped as damage; -1: the digest
			 * is done, the chunk too (ppos == plen) */
			if (next_item(r, rec) > 0)
				return 1;
			continue;
		}
		if (!r->payload || r->ppos >= r->plen) {
			if (!next_chunk(r))
				return 0;
			continue;
		}
		if (record_at(r, rec))
			return 1;
	}
}

/*
 * The common cases inline, in a function small enough to need no stack
 * frame: the next record is a SAMPLE with no asid, chain or user stack,
 * or one with only a chain, and its length is valid (what next_slow
 * would check, so both give the same record). Everything else goes to
 * next_slow.
 */
/* A fast path's record: the sample at p (pos in the payload, len checked)
 * taken, its fixed part decoded; the optional parts are the caller's. */
static inline __attribute__((always_inline)) struct dp_sample *
fast_sample(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, size_t pos, uint32_t len)
{
	r->ppos = pos + len;
	r->nrec_seen++;
	r->nrec_read++;
	r->nsamples_read++;
	rec->type = DP_REC_SAMPLE;
	rec->raw = p;
	rec->raw_len = len;
	rec->chunk_offset = r->chunk_off;
	rec->domain = r->cur_domain;
	rec->weight = 1;
	sample_fixed(&rec->u.sample, p + DP_REC_HDR);
	return &rec->u.sample;
}

int dp_reader_next(struct dp_reader *r, struct dp_record *rec)
{
	const uint8_t *pl = r->payload;
	size_t pos = r->ppos, left = r->plen - pos;  /* ppos <= plen always */
	if (__builtin_expect(pl != NULL && left >= DP_REC_HDR + DP_SAMPLE_FIXED, 1)) {
		const uint8_t *p = pl + pos;
		uint32_t len = get32(p + 4);
		uint16_t flags = get16(p + 2);
		if (__builtin_expect(get16(p) == DP_REC_SAMPLE && !(flags & DP_SAMPLE_F_PARTS) &&
				     len >= DP_REC_HDR + DP_SAMPLE_FIXED && len % 8 == 0 && len <= left, 1)) {
			fast_sample(r, rec, p, pos, len);
			return 1;
		}
		/* A sample with a call chain and nothing else optional (every
		 * sample of a -g recording), its chain aligned in the payload:
		 * the checks dec_sample makes, without next_slow's frame. */
		const uint8_t *q = p + DP_REC_HDR + DP_SAMPLE_FIXED;
		if (get16(p) == DP_REC_SAMPLE &&
		    (flags & DP_SAMPLE_F_PARTS) == DP_SAMPLE_F_CHAIN &&
		    len >= DP_REC_HDR + DP_SAMPLE_FIXED + 8 && len % 8 == 0 && len <= left &&
		    ((uintptr_t)q & 7) == 0) {
			uint32_t nr = get32(q);
			if (nr <= DP_MAX_CALLCHAIN &&
			    (len - (DP_REC_HDR + DP_SAMPLE_FIXED + 8)) / 8 >= nr) {
				struct dp_sample *sm = fast_sample(r, rec, p, pos, len);
				if (__builtin_expect(r->flags & DP_READ_NO_CHAINS, 0)) {
					sm->chain_omitted = nr != 0;
					return 1;
				}
				sm->nr_callchain = nr;
				sm->callchain = (const uint64_t *)(const void *)(q + 8);
				return 1;
			}
		}
	}
	return next_slow(r, rec);
}

/* A zstd frame decompresses to exactly `raw` bytes, checked in a small
 * window so a hostile size cannot make us allocate it. */
static bool zstd_exact(const uint8_t *p, size_t n, uint64_t raw)
{
	if (ZSTD_getFrameContentSize(p, n) != raw)
		return false;
	ZSTD_DStream *ds = ZSTD_createDStream();
	size_t cap = 1 << 16;
	uint8_t *out = xmalloc(cap);
	ZSTD_inBuffer in = { p, n, 0 };
	uint64_t total = 0;
	bool ok = false;
	for (;;) {
		ZSTD_outBuffer o = { out, cap, 0 };
		size_t r = ZSTD_decompressStream(ds, &o, &in);
		if (ZSTD_isError(r) || (total += o.pos) > raw)
			break;
		if (r == 0 && in.pos == in.size) {
			ok = total == raw;
			break;
		}
		if (o.pos == 0 && in.pos == in.size)
			break; /* truncated */
	}
	free(out);
	ZSTD_freeDStream(ds);
	return ok;
}

bool dp_record_check(const void *raw, size_t len)
{
	if (len < DP_REC_HDR || len % 8 || len > UINT32_MAX || get32((const uint8_t *)raw + 4) != len)
		return false;
	if (get16(raw) == DP_REC_SAMPLE && (get16((const uint8_t *)raw + 2) & DP_SAMPLE_F_USTACK_DELTA))
		return false;   /* refers to earlier records of its chunk */
	/* decode() as the reader runs it, keeping SYMTAB blobs stored */
	struct dp_reader r = { .flags = DP_READ_SYMTAB_STORED };
	struct dp_record rec = { .type = get16(raw) };
	bool ok = decode(&r, &rec, raw, (uint32_t)len);
	free(r.chain);
	free(r.ctr);
	free(r.ctr_names);
	if (ok && rec.type == DP_REC_SYMTAB && rec.symtab_compression == 1)
		ok = zstd_exact(rec.symtab_stored, rec.symtab_stored_size, rec.u.symtab.size);
	return ok;
}

const char *dp_rec_type_name(uint16_t type)
{
	static const char *const names[] = {
		[DP_REC_EVENT] = "EVENT", [DP_REC_DOMAIN] = "DOMAIN",
		[DP_REC_DOMAIN_SWITCH] = "DOMAIN_SWITCH", [DP_REC_TASK] = "TASK",
		[DP_REC_MMAP] = "MMAP", [DP_REC_SAMPLE] = "SAMPLE", [DP_REC_LOST] = "LOST",
		[DP_REC_SYMTAB] = "SYMTAB", [DP_REC_STATS] = "STATS",
		[DP_REC_COUNTERS] = "COUNTERS",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "UNKNOWN";
}

const char *dp_mode_name(uint8_t mode)
{
	static const char *const names[] = { "unknown", "user", "kernel", "guest-kernel",
					     "guest-user", "hypervisor" };
	return mode < 6 ? names[mode] : "invalid";
}

const char *dp_domain_kind_name(uint8_t kind)
{
	static const char *const names[] = { "host", "passive", "active" };
	return kind < 3 ? names[kind] : "invalid";
}

const char *dp_lost_source_name(uint32_t src)
{
	static const char *const names[] = { "ring-overflow", "throttled", "vm-sampler",
					     "agent", "writer" };
	return src < DP_LOST_SOURCES ? names[src] : "other";
}
