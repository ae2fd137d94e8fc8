// SPDX-License-Identifier: MIT
/*
 * The file's framing for the reader (reader_internal.h): the file header,
 * and the walk over chunks: each chunk header's
 * CRC and lengths, the payload's CRC, decompression (here or by the
 * prefetch workers), the counts part, the chunk sequence (format >= 1.1:
 * a chunk cut out, repeated or moved keeps valid CRCs), resynchronisation
 * after damage. See docs/file-format.md.
 */
#include "format/counts.h"
#include "format/prefetch.h"
#include "format/reader_internal.h"
#include "format/wire.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

void rd_damage(struct dp_reader *r, uint64_t off, uint64_t lost, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dp_damage_vadd(&r->damage, &r->ndamage, &r->damage_cap, r->damage_until, off, lost, fmt, ap);
	va_end(ap);
}

int rd_parse_header(struct dp_reader *r, int *err, char *msg, size_t msglen)
{
	const uint8_t *p = r->map;
	if (r->size < 8 || memcmp(p, DP_MAGIC, 8))
		return dp_open_fail(err, msg, msglen, DP_ERR_NOT_DOMPROF, "not a domprof file (bad magic)");
	if (r->size < DP_FILE_HDR_FIXED)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged header: file truncated inside the header (%zu bytes)", r->size);
	r->hdr.major = get16(p + DP_FH_MAJOR);
	r->hdr.minor = get16(p + DP_FH_MINOR);
	if (r->hdr.major > DP_VERSION_MAJOR)
		return dp_open_fail(err, msg, msglen, DP_ERR_VERSION,
			    "made by a newer domprof (format %u.%u; this build reads %u.x)",
			    r->hdr.major, r->hdr.minor, DP_VERSION_MAJOR);
	if (r->hdr.major < 1)
		return dp_open_fail(err, msg, msglen, DP_ERR_VERSION, "unsupported format version %u.%u",
			    r->hdr.major, r->hdr.minor);
	if (p[DP_FH_ORDER] != 1)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "unsupported byte order %u (only little-endian files exist)", p[DP_FH_ORDER]);
	uint32_t hlen = get32(p + DP_FH_LEN);
	if (hlen < DP_FILE_HDR_FIXED || hlen > DP_FILE_HDR_MAX)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER, "damaged header: bad length %u", hlen);
	if (hlen > r->size)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged header: file truncated inside the header (%zu of %u bytes)",
			    r->size, hlen);
	if (crc32c(0, p + DP_FH_CREATED, hlen - DP_FH_CREATED) != get32(p + DP_FH_CRC))
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER, "damaged header: CRC mismatch");
	r->hdr.created_ns = get64(p + DP_FH_CREATED);
	r->hdr.ncpus = get32(p + DP_FH_NCPUS);
	uint32_t nfields = get32(p + DP_FH_NFIELDS);
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
		rd_damage(r, off, bytes, "chunk %u repeated at offset %" PRIu64 "; skipped", seq, off);
		return false;
	}
	if (a < n)
		rd_damage(r, off, 0, "chunk %u out of order at offset %" PRIu64 " (read)", seq, off);
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
		rd_damage(r, off, 0, "chunk sequence too disordered; not checked from offset %" PRIu64, off);
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
			rd_damage(r, r->runs[i].off, 0, "%s missing at offset %" PRIu64,
			       seq_range(buf, sizeof(buf), from, r->runs[i].lo), r->runs[i].off);
	}
	r->damage_until = until;
}


static bool chunk_header_ok(const uint8_t *h)
{
	return get32(h + DP_CH_MAGIC) == DP_CHUNK_MAGIC && crc32c(0, h, DP_CH_HDR_CRC) == get32(h + DP_CH_HDR_CRC);
}

/* Finish the open chunk: check its record count. */
static void close_chunk(struct dp_reader *r)
{
	if (r->payload && r->nrec_seen != r->nrec_expected)
		rd_damage(r, r->chunk_off, 0, "chunk holds %u records, header says %u",
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
		uint32_t flags = get32(h + DP_CH_FLAGS), stored = get32(h + DP_CH_STORED), raw = get32(h + DP_CH_RAW);
		if (stored > DP_CHUNK_MAX || raw > DP_CHUNK_MAX || q + DP_CHUNK_HDR + stored > r->size)
			break;
		if (!pf_submit(r->pf, q, h + DP_CHUNK_HDR, stored, raw, flags, get32(h + DP_CH_PAYLOAD_CRC),
			       get32(h + DP_CH_NREC), digest))
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
		rd_damage(r, off, 0, "counts part of chunk at offset %" PRIu64 " does not hold up (not read)", off);
		return;
	}
	char why[256];
	if (!cnt_agrees(&r->vpart, recs, rlen, r->payload, r->plen, &r->vrecs, why, sizeof(why)))
		rd_damage(r, off, 0, "counts part of chunk at offset %" PRIu64 " disagrees with its records: %s",
		       off, why);
}

/* The file ends at off: the gaps of the sequence are reported. */
static bool at_end(struct dp_reader *r)
{
	r->at_end = true;
	seq_end(r);
	return false;
}

/*
 * The next chunk whose header holds up, from r->pos: true with *at its
 * offset and r->pos past it (a chunk the sequence check skips is passed
 * over), false at the end of the file. Damage on the way is recorded and
 * skipped: after a bad header the walk resynchronises on the next valid
 * one, in steps of 8.
 */
static bool chunk_find(struct dp_reader *r, uint64_t *at)
{
	while (!r->at_end) {
		uint64_t off = r->pos;
		if (off >= r->size)
			return at_end(r);
		if (r->size - off < DP_CHUNK_HDR) {
			rd_damage(r, off, r->size - off,
				  "file truncated: %" PRIu64 " bytes of an incomplete chunk header lost",
				  r->size - off);
			return at_end(r);
		}
		const uint8_t *h = r->map + off;
		if (!chunk_header_ok(h)) {
			uint64_t q = off + 8;
			while (q + DP_CHUNK_HDR <= r->size && !chunk_header_ok(r->map + q))
				q += 8;
			if (q + DP_CHUNK_HDR > r->size)
				q = r->size;
			rd_damage(r, off, q - off, "damaged chunk header; %" PRIu64 " bytes skipped", q - off);
			r->pos = q;
			continue;
		}
		uint32_t stored = get32(h + DP_CH_STORED), raw = get32(h + DP_CH_RAW);
		if (stored > DP_CHUNK_MAX || raw > DP_CHUNK_MAX) {
			rd_damage(r, off, DP_CHUNK_HDR, "chunk with impossible length %u/%u", stored, raw);
			r->pos = off + 8;
			continue;
		}
		if (off + DP_CHUNK_HDR + stored > r->size) {
			rd_damage(r, off, r->size - off,
				  "file truncated: last chunk (%u bytes) incomplete, %" PRIu64 " bytes lost",
				  stored, r->size - off);
			return at_end(r);
		}
		uint64_t end = off + DP_CHUNK_HDR + align8(stored);
		r->pos = end;
		if (!seq_note(r, get32(h + DP_CH_SEQ), off, end - off))
			continue;
		*at = off;
		return true;
	}
	return false;
}

/*
 * The records of the chunk at off into r->payload/r->plen: a worker's
 * result (pr), the counts part's records with its digest (*cdg) where a
 * counting read can take it, or the payload decompressed here or taken
 * as stored. False (damage recorded) when it does not hold up.
 */
static bool chunk_payload(struct dp_reader *r, uint64_t off, const struct pf_result *pr,
			  const struct dp_digest **cdg)
{
	const uint8_t *h = r->map + off, *pl = h + DP_CHUNK_HDR;
	uint32_t flags = get32(h + DP_CH_FLAGS), stored = get32(h + DP_CH_STORED), raw = get32(h + DP_CH_RAW);
	if (pr ? !pr->crc_ok : crc32c(0, pl, stored) != get32(h + DP_CH_PAYLOAD_CRC)) {
		rd_damage(r, off, DP_CHUNK_HDR + stored, "bad CRC in chunk at offset %" PRIu64 "; %u bytes skipped",
			  off, stored);
		return false;
	}
	*cdg = NULL;
	/* a counting read takes the chunk's counts part where it has a
	 * sound one (format/counts.h), from a worker or made here */
	if (pr && pr->counts) {
		*cdg = pr->dg;
		r->payload = pr->data;
		r->plen = pr->len;
		return true;
	}
	if (!pr && (flags & DP_CHUNK_COUNTS) && (flags & DP_CHUNK_ZSTD) && (digest_flags(r) & PF_COUNTS) &&
	    raw <= PF_MAX_RAW) {
		const uint8_t *recs;
		size_t rlen;
		zbuf_fit(r, raw);
		if (cnt_decode(r->dctx, pl, stored, raw, get32(h + DP_CH_NREC), r->zbuf, &r->own_dg, &recs, &rlen)) {
			*cdg = &r->own_dg;
			r->payload = recs;
			r->plen = rlen;
			return true;
		}
	}
	if (flags & DP_CHUNK_ZSTD) {
		const uint8_t *data = pr && pr->dec_ok ? pr->data : NULL;
		if (!pr) {
			zbuf_fit(r, raw);
			size_t n = ZSTD_decompressDCtx(r->dctx, r->zbuf, raw, pl, stored);
			if (!ZSTD_isError(n) && n == raw)
				data = r->zbuf;
		}
		if (!data) {
			rd_damage(r, off, DP_CHUNK_HDR + stored, "chunk at offset %" PRIu64 " does not decompress", off);
			return false;
		}
		r->payload = data;
		r->plen = raw;
		return true;
	}
	if (raw != stored) {
		rd_damage(r, off, DP_CHUNK_HDR + stored, "chunk at offset %" PRIu64 " has inconsistent lengths", off);
		return false;
	}
	r->payload = pl;
	r->plen = stored;
	return true;
}

/* Opens the chunk at off whose records are in r->payload: its state, and
 * the digest its items are walked by (the counts part's, a worker's, or
 * one made here: the same, a digest being a function of the payload, so
 * every chunk within the bound reads alike on any number of threads). */
static void chunk_enter(struct dp_reader *r, uint64_t off, const struct pf_result *pr,
			const struct dp_digest *cdg)
{
	const uint8_t *h = r->map + off;
	uint32_t flags = get32(h + DP_CH_FLAGS);
	if ((r->flags & DP_READ_VERIFY_COUNTS) && (flags & DP_CHUNK_COUNTS))
		verify_counts(r, off, h + DP_CHUNK_HDR, get32(h + DP_CH_STORED), get32(h + DP_CH_RAW),
			      get32(h + DP_CH_NREC), flags);
	r->ppos = 0;
	r->nrec_expected = get32(h + DP_CH_NREC);
	r->nrec_seen = 0;
	r->chunk_off = off;
	r->cur_domain = DP_HOST_DOMAIN;
	usd_reset(&r->usd);
	r->chunks++;
	r->chunks_counts += (flags & DP_CHUNK_COUNTS) != 0;
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
}

bool rd_next_chunk(struct dp_reader *r)
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
	uint64_t off;
	while (chunk_find(r, &off)) {
		/* with workers: their result for this chunk, the same as
		 * what chunk_payload works out without */
		const struct pf_result *pr = NULL;
		if (r->pf) {
			prefetch_ahead(r, r->pos);
			pr = pf_take(r->pf, off);
		}
		const struct dp_digest *cdg;
		if (!chunk_payload(r, off, pr, &cdg))
			continue;
		chunk_enter(r, off, pr, cdg);
		return true;
	}
	return false;
}
