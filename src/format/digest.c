// SPDX-License-Identifier: MIT
/*
 * A chunk's digest (see digest.h): one pass over the payload's records,
 * the groups of the open run in an index keyed by the sample's fields.
 * Groups of earlier runs stay in the index (cleared once a build) and
 * never match: their run number differs.
 */
#include "format/digest.h"
#include "format/format.h"
#include "format/wire.h"
#include "util/hash.h"
#include "util/le.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The parts of a SAMPLE record at p (len bytes, framing checked) that
 * the key needs, or false when it is no plain sample: a user stack, or
 * what dec_sample (reader.c) would refuse (sample_parts, wire.h). */
struct plain {
	const uint8_t *p;
	uint16_t flags;
	uint64_t asid;
	uint32_t nr;
	const uint8_t *chain;
};

static bool plain_sample(const uint8_t *p, uint32_t len, struct plain *s)
{
	uint16_t fl = get16(p + 2);
	struct sample_parts sp;
	if (len < DP_REC_HDR + DP_SAMPLE_FIXED || (fl & (DP_SAMPLE_F_USTACK | DP_SAMPLE_F_USTACK_DELTA)) ||
	    !sample_parts(p, len, fl, &sp))
		return false;
	s->p = p;
	s->flags = fl;
	s->asid = sp.asid;
	s->nr = sp.nr;
	s->chain = sp.chain;
	return true;
}

bool dg_plain(const uint8_t *p, uint32_t len)
{
	struct plain s;
	return get16(p) == DP_REC_SAMPLE && plain_sample(p, len, &s);
}

/* Offsets in the fixed part (the head of struct dp_sample, reader.c's
 * sample_fixed): ip 8, pid 24, tid 28, cpu 32, event 36, mode 38. */
static uint64_t key_hash(const struct plain *s, unsigned flags)
{
	const uint8_t *b = s->p + DP_REC_HDR;
	uint64_t h = 0x5bd1e995u;
	h = hash_fold64(h, get64(b + 8));
	h = hash_fold64(h, get32(b + 24) | (uint64_t)get16(b + 36) << 32 | (uint64_t)b[38] << 48);
	if (flags & DG_BY_TID)
		h = hash_fold64(h, get32(b + 28));
	if (flags & DG_BY_CPU)
		h = hash_fold64(h, get32(b + 32));
	h = hash_fold64(h, s->flags & DP_SAMPLE_F_ASID ? s->asid : 0);
	if (flags & DG_NO_CHAINS)
		return hash_fold64(h, s->nr != 0);
	h = hash_fold64(h, s->nr);
	for (uint32_t i = 0; i < s->nr; i++)
		h = hash_fold64(h, get64(s->chain + 8 * (size_t)i));
	return h;
}

struct want {
	const struct dp_digest *d;
	const uint8_t *pl;
	const struct plain *s;
	uint64_t h;
	uint32_t run, domain;
	unsigned flags;
};

static bool same_key(const void *ctx, uint32_t e)
{
	const struct want *w = ctx;
	const struct dg_group *g = &w->d->groups[e];
	if (g->run != w->run || g->hash != w->h || g->domain != w->domain)
		return false;
	struct plain o;
	const uint8_t *q = w->pl + g->off;
	(void)plain_sample(q, get32(q + 4), &o);  /* it was plain when the group was made */
	const uint8_t *a = w->s->p + DP_REC_HDR, *b = q + DP_REC_HDR;
	if (get64(a + 8) != get64(b + 8) || get32(a + 24) != get32(b + 24) ||
	    get16(a + 36) != get16(b + 36) || a[38] != b[38])
		return false;
	if ((w->flags & DG_BY_TID) && get32(a + 28) != get32(b + 28))
		return false;
	if ((w->flags & DG_BY_CPU) && get32(a + 32) != get32(b + 32))
		return false;
	if ((w->s->flags & DP_SAMPLE_F_ASID) != (o.flags & DP_SAMPLE_F_ASID) || w->s->asid != o.asid)
		return false;
	if (w->flags & DG_NO_CHAINS)
		return (w->s->nr != 0) == (o.nr != 0);
	return w->s->nr == o.nr && (!o.nr || !memcmp(w->s->chain, o.chain, 8 * (size_t)o.nr));
}

static void push_item(struct dp_digest *d, uint32_t v)
{
	xgrow((void **)&d->items, &d->capitems, d->nitems + 1, sizeof(*d->items));
	d->items[d->nitems++] = v;
}

void dg_build(struct dp_digest *d, const uint8_t *pl, size_t len, unsigned flags)
{
	d->nitems = d->ngroups = d->nsamples = 0;
	if (len > DP_CHUNK_MAX)
		len = 0;   /* not a chunk's payload: an empty digest (callers never pass one) */
	if (!d->idx.cap)
		hidx_init(&d->idx, 1024);
	else
		hidx_clear(&d->idx);
	uint32_t run = 0, domain = DP_HOST_DOMAIN;  /* as the reader at a chunk's start */
	size_t pos = 0;
	/* each step moves on by a record of >= 8 bytes, or ends */
	while (pos < len) {
		const uint8_t *p = pl + pos;
		size_t left = len - pos;
		uint32_t rl = left >= DP_REC_HDR ? get32(p + 4) : 0;
		if (left < DP_REC_HDR || rl < DP_REC_HDR || rl % 8 || rl > left) {
			push_item(d, (uint32_t)pos);   /* the reader reports it, skips the rest */
			return;
		}
		/* A DOMAIN_SWITCH the reader takes (dec_switch: DP_SWITCH_LEN
		 * bytes or more) changes the domain of the samples after it, not the
		 * state a counter looks samples up in: the run goes on, its
		 * groups keyed by domain as well. */
		if (get16(p) == DP_REC_DOMAIN_SWITCH && rl >= DP_SWITCH_LEN) {
			domain = get32(p + DP_REC_HDR);
			push_item(d, (uint32_t)pos);
			pos += rl;
			continue;
		}
		struct plain s;
		if (get16(p) != DP_REC_SAMPLE || !plain_sample(p, rl, &s)) {
			push_item(d, (uint32_t)pos);
			run++;
			pos += rl;
			continue;
		}
		struct want w = { d, pl, &s, hash_fold64(key_hash(&s, flags), domain), run, domain, flags };
		size_t slot;
		uint32_t e = hidx_find(&d->idx, w.h, same_key, &w, &slot);
		uint64_t period = get64(p + DP_REC_HDR + 16);
		d->nsamples++;
		if (e != HIDX_NONE) {
			d->groups[e].count++;
			d->groups[e].period += period;
		} else {
			xgrow((void **)&d->groups, &d->capgroups, d->ngroups + 1, sizeof(*d->groups));
			struct dg_group *g = &d->groups[d->ngroups];
			g->off = (uint32_t)pos;
			g->count = 1;
			g->period = period;
			g->hash = w.h;
			g->run = run;
			g->domain = domain;
			hidx_fill(&d->idx, slot, w.h, (uint32_t)d->ngroups);
			push_item(d, DG_GROUP | (uint32_t)d->ngroups++);
		}
		pos += rl;
	}
}

void dg_trim(struct dp_digest *d)
{
	if (d->capitems * sizeof(*d->items) + d->capgroups * sizeof(*d->groups) > (2u << 20))
		dg_release(d);
}

void dg_release(struct dp_digest *d)
{
	free(d->items);
	free(d->groups);
	hidx_release(&d->idx);
	memset(d, 0, sizeof(*d));
}
