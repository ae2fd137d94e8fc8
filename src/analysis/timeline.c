// SPDX-License-Identifier: MIT
/*
 * report --timeline: the matched samples per time bucket per domain, so
 * a user sees when each domain was busy. Buckets count from each
 * domain's first sample, as --time does (analysis/window.h), over the
 * spans found by the pass before the samples.
 *
 * While reading, samples are counted per (sample key, bucket): the
 * comm and image filters are decided per key only after the file is
 * read (profile_build), and so the timeline holds exactly the samples
 * the report shows. Cells grow with distinct (key, bucket) pairs, not
 * with samples.
 *
 * Bounds: at most PROFILE_TIMELINE_MAX buckets (a long recording gets
 * wider buckets) and TIMELINE_MAX_ROWS domain rows; the samples of
 * further domains (a crafted file can name 65536) go to one last row,
 * "(other domains)", so the rows stay rows x buckets.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#define TIMELINE_MAX_ROWS 64u
#define TIMELINE_OTHER UINT32_MAX   /* the row of the domains past the bound */

/* 1, 2 or 5 times a power of ten ns, at least x (and 1 ms) */
static uint64_t nice_ns(uint64_t x)
{
	uint64_t b = 1000000;
	while (b < x && b < UINT64_MAX / 10) {
		if (2 * b >= x)
			return 2 * b;
		if (5 * b >= x)
			return 5 * b;
		b *= 10;
	}
	return b;
}

void timeline_setup(struct loader *L)
{
	struct profile *p = L->p;
	uint64_t span = 0;
	for (size_t i = 0; i < L->spans.n; i++)
		if (L->spans.v[i].last - L->spans.v[i].first > span)
			span = L->spans.v[i].last - L->spans.v[i].first;
	uint64_t b = L->o.timeline_ns ? L->o.timeline_ns : nice_ns(span / 40);
	if (span / b >= PROFILE_TIMELINE_MAX) {
		b = span / (PROFILE_TIMELINE_MAX - 1) + 1;
		p->timeline.bucket_widened = true;
	}
	p->timeline.bucket_ns = b;
	p->timeline.nbuckets = (size_t)(span / b) + 1;
}

static struct profile_timeline_row *row_of(struct profile *p, uint32_t domain)
{
	for (size_t i = 0; i < p->timeline.nrows; i++)
		if (p->timeline.rows[i].domain == domain)
			return &p->timeline.rows[i];
	if (p->timeline.nrows == TIMELINE_MAX_ROWS - 1 && domain != TIMELINE_OTHER)
		return row_of(p, TIMELINE_OTHER);
	p->timeline.rows = xrealloc(p->timeline.rows, (p->timeline.nrows + 1) * sizeof(*p->timeline.rows));
	struct profile_timeline_row *r = &p->timeline.rows[p->timeline.nrows++];
	r->domain = domain;
	r->name = NULL;
	r->counts = xcalloc(p->timeline.nbuckets, sizeof(uint64_t));
	return r;
}

struct cell_want {
	const struct loader *L;
	uint32_t key, bucket;
};

static bool cell_eq(const void *ctx, uint32_t e)
{
	const struct cell_want *w = ctx;
	const struct tl_cell *c = &w->L->tl_cells[e];
	return c->key == w->key && c->bucket == w->bucket;
}

void timeline_add(struct loader *L, uint32_t key, uint32_t domain, uint64_t t)
{
	struct profile *p = L->p;
	const struct window_span *sp = window_span_of(&L->spans, domain);
	if (!sp || t < sp->first || !p->timeline.nbuckets)
		return;
	uint64_t k = (t - sp->first) / p->timeline.bucket_ns;
	if (k >= p->timeline.nbuckets)
		return;
	if (!L->tl_tab.cap)
		hidx_init(&L->tl_tab, 1024);
	uint64_t h = hash_fold64(hash_fold64(0x7131ull, key), k);
	struct cell_want want = { L, key, (uint32_t)k };
	size_t i;
	uint32_t e = hidx_find(&L->tl_tab, h, cell_eq, &want, &i);
	if (e != HIDX_NONE) {
		L->tl_cells[e].count++;
		return;
	}
	xgrow((void **)&L->tl_cells, &L->captl_cells, L->ntl_cells + 1, sizeof(*L->tl_cells));
	L->tl_cells[L->ntl_cells] = (struct tl_cell){ key, (uint32_t)k, 1 };
	hidx_fill(&L->tl_tab, i, h, (uint32_t)L->ntl_cells);
	L->ntl_cells++;
}

void timeline_release(struct loader *L)
{
	free(L->tl_cells);
	L->tl_cells = NULL;
	L->ntl_cells = L->captl_cells = 0;
	hidx_release(&L->tl_tab);
}

static int cmp_row(const void *a, const void *b)
{
	uint32_t x = ((const struct profile_timeline_row *)a)->domain;
	uint32_t y = ((const struct profile_timeline_row *)b)->domain;
	return x < y ? -1 : x > y;
}

void timeline_finish(struct loader *L)
{
	struct profile *p = L->p;
	size_t at = SIZE_MAX;   /* an index: row_of may move the rows */
	for (size_t i = 0; i < L->ntl_cells; i++) {
		const struct tl_cell *c = &L->tl_cells[i];
		const struct key *k = &L->keys[c->key];
		if (!k->keep)
			continue;
		if (at == SIZE_MAX || p->timeline.rows[at].domain != k->domain)
			at = (size_t)(row_of(p, k->domain) - p->timeline.rows);
		p->timeline.rows[at].counts[c->bucket] += c->count;
	}
	qsort(p->timeline.rows, p->timeline.nrows, sizeof(*p->timeline.rows), cmp_row);
	for (size_t i = 0; i < p->timeline.nrows; i++) {
		struct profile_timeline_row *r = &p->timeline.rows[i];
		const struct profile_domain *d = r->domain == TIMELINE_OTHER ? NULL
									  : profile_domain_by_id(p, r->domain);
		r->name = r->domain == TIMELINE_OTHER ? "(other domains)" : d ? d->name : "?";
	}
	/* a bucket count past the last sample of every shown domain adds
	 * nothing: trim the trailing empty buckets */
	size_t used = 0;
	for (size_t i = 0; i < p->timeline.nrows; i++)
		for (size_t k = p->timeline.nbuckets; k-- > used;)
			if (p->timeline.rows[i].counts[k]) {
				used = k + 1;
				break;
			}
	p->timeline.nbuckets = used;
}

void timeline_free(struct profile *p)
{
	for (size_t i = 0; i < p->timeline.nrows; i++)
		free(p->timeline.rows[i].counts);
	free(p->timeline.rows);
}
