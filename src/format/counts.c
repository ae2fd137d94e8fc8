// SPDX-License-Identifier: MIT
/* A chunk's counts part: written from its digest, read back as one (counts.h). */
#include "format/counts.h"
#include "format/raw.h"
#include "format/wire.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

bool cnt_off(void)
{
	const char *e = getenv("DOMPROF_CHUNK_COUNTS");
	return e && !strcmp(e, "0");
}

/* the payload offset of item it */
static uint32_t item_off(const struct dp_digest *d, uint32_t it)
{
	return it & DG_GROUP ? d->groups[it & ~DG_GROUP].off : it;
}

size_t cnt_encode(const struct dp_digest *d, const uint8_t *pl, size_t len, uint8_t **out, size_t *cap)
{
	if (!d->ngroups || d->nsamples < 2 * d->ngroups)
		return 0;
	size_t recs = 0;
	for (size_t i = 0; i < d->nitems; i++) {
		size_t at = item_off(d, d->items[i]);
		uint16_t tag;
		uint32_t rl;
		if (dp_raw_next(pl, len, &at, &tag, &rl) != 1)
			return 0;
		/* a user stack in delta form refers to the thread's stack
		 * before it in the chunk's records: kept out of the question */
		if (tag == DP_REC_SAMPLE && (get16(pl + at - rl + 2) & (DP_SAMPLE_F_USTACK | DP_SAMPLE_F_USTACK_DELTA)))
			return 0;
		recs += rl;
	}
	size_t total = CNT_HDR + CNT_ENT * d->nitems + recs;
	if (total > len / 2)
		return 0;
	if (total > *cap) {
		free(*out);
		*cap = total + total / 4;
		*out = xmalloc(*cap);
	}
	uint8_t *o = *out;
	put32(o, CNT_MAGIC);
	put32(o + 4, (uint32_t)d->nitems);
	put32(o + 8, (uint32_t)recs);
	put32(o + 12, 0);
	uint8_t *e = o + CNT_HDR, *r = e + CNT_ENT * d->nitems;
	for (size_t i = 0; i < d->nitems; i++, e += CNT_ENT) {
		uint32_t it = d->items[i], off = item_off(d, it);
		const struct dg_group *g = it & DG_GROUP ? &d->groups[it & ~DG_GROUP] : NULL;
		put32(e, g ? g->count : 0);
		put32(e + 4, 0);
		put64(e + 8, g ? g->period : 0);
		uint32_t rl = get32(pl + off + 4);
		memcpy(r, pl + off, rl);
		r += rl;
	}
	return total;
}

bool cnt_locate(const uint8_t *pl, uint32_t stored, uint32_t max, const uint8_t **z, size_t *zlen,
		uint32_t *raw)
{
	size_t m = ZSTD_findFrameCompressedSize(pl, stored);
	if (ZSTD_isError(m) || m > stored || stored - m < 16)
		return false;
	const uint8_t *s = pl + m;
	uint32_t sz = get32(s + 4);
	if (get32(s) != CNT_SKIPPABLE || sz != stored - m - 8 || get32(s + 12) != 0)
		return false;
	*raw = get32(s + 8);
	if (*raw < CNT_HDR || *raw > max)
		return false;
	*z = s + 16;
	*zlen = sz - 8;
	return true;
}

bool cnt_read(const uint8_t *p, size_t len, uint32_t nrec, struct dp_digest *d, const uint8_t **recs,
	      size_t *recs_len)
{
	d->nitems = d->ngroups = d->nsamples = 0;
	if (len < CNT_HDR || len > DP_CHUNK_MAX || get32(p) != CNT_MAGIC || get32(p + 12) != 0)
		return false;
	size_t n = get32(p + 4), rlen = get32(p + 8);
	if (n > (len - CNT_HDR) / CNT_ENT || CNT_HDR + CNT_ENT * n + rlen != len || rlen % 8)
		return false;
	const uint8_t *r = p + CNT_HDR + CNT_ENT * n;
	xgrow((void **)&d->items, &d->capitems, n ? n : 1, sizeof(*d->items));
	uint64_t total = 0;
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = p + CNT_HDR + CNT_ENT * i;
		uint32_t count = get32(e), rl;
		size_t at = pos;
		uint16_t tag;
		if (get32(e + 4) != 0 || dp_raw_next(r, rlen, &at, &tag, &rl) != 1 || rl % 8)
			goto bad;
		if (count) {
			if (!dg_plain(r + pos, rl))
				goto bad;
			xgrow((void **)&d->groups, &d->capgroups, d->ngroups + 1, sizeof(*d->groups));
			struct dg_group *g = &d->groups[d->ngroups];
			memset(g, 0, sizeof(*g));
			g->off = (uint32_t)pos;
			g->count = count;
			g->period = get64(e + 8);
			d->items[d->nitems++] = DG_GROUP | (uint32_t)d->ngroups++;
			d->nsamples += count;
		} else {
			d->items[d->nitems++] = (uint32_t)pos;
		}
		total += count ? count : 1;
		pos += rl;
	}
	if (pos != rlen || total != nrec)
		goto bad;
	*recs = r;
	*recs_len = rlen;
	return true;
bad:
	d->nitems = d->ngroups = d->nsamples = 0;
	return false;
}

bool cnt_decode(ZSTD_DCtx *dctx, const uint8_t *pl, uint32_t stored, uint32_t raw, uint32_t nrec, uint8_t *buf,
		struct dp_digest *d, const uint8_t **recs, size_t *recs_len)
{
	const uint8_t *z;
	size_t zlen;
	uint32_t n;
	if (!cnt_locate(pl, stored, raw, &z, &zlen, &n))
		return false;
	size_t got = ZSTD_decompressDCtx(dctx, buf, n, z, zlen);
	return !ZSTD_isError(got) && got == n && cnt_read(buf, n, nrec, d, recs, recs_len);
}

/* The first fixed field in which the samples a[0..al) and b[0..bl) (both
 * framed) differ, for a message: the SAMPLE record's fixed part by
 * offset (reader.c's sample_fixed), then what follows it. */
static const char *sample_diff(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
	static const struct {
		uint8_t off, len;
		const char *name;
	} f[] = {
		{ 2, 2, "flags" }, { 4, 4, "length" }, { 8, 8, "time" }, { 16, 8, "ip" },
		{ 24, 8, "period" }, { 32, 4, "pid" }, { 36, 4, "tid" }, { 40, 4, "cpu" },
		{ 44, 2, "event" }, { 46, 1, "mode" }, { 47, 1, "reserved byte" },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if ((uint32_t)f[i].off + f[i].len > al || (uint32_t)f[i].off + f[i].len > bl)
			break;
		if (memcmp(a + f[i].off, b + f[i].off, f[i].len))
			return f[i].name;
	}
	return "asid or chain";
}

/* Item i of the part (d over prt) and of the records' digest (m over pl)
 * compared: NULL when they agree, else what differs, in buf. */
static const char *item_diff(const struct dp_digest *d, const uint8_t *prt, size_t plen,
			     const struct dp_digest *m, const uint8_t *pl, size_t len, size_t i, char *buf,
			     size_t buflen)
{
	uint32_t a = d->items[i], b = m->items[i];
	const struct dg_group *ga = a & DG_GROUP ? &d->groups[a & ~DG_GROUP] : NULL;
	const struct dg_group *gb = b & DG_GROUP ? &m->groups[b & ~DG_GROUP] : NULL;
	/* the part's items are framed in prt (cnt_read); the records' are
	 * but for a last one whose framing is bad (dg_build) */
	size_t at = item_off(d, a), bt = item_off(m, b);
	uint16_t ta, tb;
	uint32_t la, lb;
	if (dp_raw_next(prt, plen, &at, &ta, &la) != 1) {
		snprintf(buf, buflen, "the part's record does not frame");  /* not after cnt_read */
		return buf;
	}
	if (dp_raw_next(pl, len, &bt, &tb, &lb) != 1) {
		snprintf(buf, buflen, "the records end in a record whose length is bad");
		return buf;
	}
	const uint8_t *ra = prt + at - la, *rb = pl + bt - lb;
	if (ga && !gb) {
		snprintf(buf, buflen, "%u samples, a %s record in the records", ga->count,
			 dp_rec_type_name(tb));
	} else if (!ga && gb) {
		snprintf(buf, buflen, "a %s record, %u samples in the records",
			 dp_rec_type_name(ta), gb->count);
	} else if (!ga) {
		if (la == lb && !memcmp(ra, rb, la))
			return NULL;
		snprintf(buf, buflen, "a %s record differs", dp_rec_type_name(ta));
	} else if (la != lb || memcmp(ra, rb, la)) {
		snprintf(buf, buflen, "%u samples, %s differs", ga->count,
			 sample_diff(ra, la, rb, lb));
	} else if (ga->count != gb->count) {
		snprintf(buf, buflen, "%u samples, %u in the records", ga->count, gb->count);
	} else if (ga->period != gb->period) {
		snprintf(buf, buflen, "%u samples, period sum differs", ga->count);
	} else {
		return NULL;
	}
	return buf;
}

bool cnt_agrees(const struct dp_digest *d, const uint8_t *prt, size_t plen, const uint8_t *pl, size_t len,
		struct dp_digest *mine, char *why, size_t whylen)
{
	dg_build(mine, pl, len, DG_BY_TID | DG_BY_CPU);
	size_t n = d->nitems < mine->nitems ? d->nitems : mine->nitems, ndiff = 0, first = 0;
	char buf[160], what[160] = "";
	for (size_t i = 0; i < n; i++) {
		const char *w = item_diff(d, prt, plen, mine, pl, len, i, buf, sizeof(buf));
		if (w && !ndiff++) {
			first = i;
			snprintf(what, sizeof(what), "%s", w);
		}
	}
	if (!ndiff && d->nitems == mine->nitems)
		return true;
	if (!ndiff) {
		snprintf(why, whylen, "%zu items, %zu in the records", d->nitems, mine->nitems);
		return false;
	}
	ndiff += d->nitems > n ? d->nitems - n : mine->nitems - n;
	if (ndiff > 1)
		snprintf(why, whylen, "item %zu/%zu: %s (+%zu more)", first, d->nitems, what, ndiff - 1);
	else
		snprintf(why, whylen, "item %zu/%zu: %s", first, d->nitems, what);
	return false;
}
