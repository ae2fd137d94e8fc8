// SPDX-License-Identifier: MIT
/*
 * dp_scan: the one loop over a recording's records (see scan.h). It
 * keeps the file's metadata (domains and events indexed by id, because a
 * crafted file may name tens of thousands of them; counts; saturating
 * lost sums) and dispatches each record to the visitor by its tag.
 */
#include "format/scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/sat.h"
#include "util/xalloc.h"

static struct dp_meta_domain *dom_get(struct dp_meta *m, uint32_t id)
{
	uintptr_t at = (uintptr_t)u64map_get(&m->domidx, id);
	if (at)
		return &m->domains[at - 1];
	xgrow((void **)&m->domains, &m->domcap, m->ndomains + 1, sizeof(*m->domains));
	struct dp_meta_domain *d = &m->domains[m->ndomains++];
	memset(d, 0, sizeof(*d));
	d->id = id;
	d->d.id = id;
	d->d.name = xstrdup("");
	d->d.address = xstrdup("");
	d->d.symsrc = xstrdup("");
	u64map_put(&m->domidx, id, (void *)(uintptr_t)m->ndomains);
	return d;
}

static void dom_listed(struct dp_meta *m, struct dp_meta_domain *d)
{
	if (!d->listed)
		d->listed = ++m->nlisted;
}

static void dom_strings_free(struct dp_meta_domain *d)
{
	free((char *)d->d.name);
	free((char *)d->d.address);
	free((char *)d->d.symsrc);
}

/* Records that belong to the current domain. */
static bool scoped(uint16_t type)
{
	return type == DP_REC_TASK || type == DP_REC_MMAP || type == DP_REC_SAMPLE ||
	       type == DP_REC_SYMTAB || type == DP_REC_COUNTERS || type > DP_REC_MAX_KNOWN;
}

/* ---- counter sums ---- */

struct sum_want {
	const struct dp_counter_sums *s;
	uint32_t domain;
	const char *name;
};

static bool sum_eq(const void *ctx, uint32_t e)
{
	const struct sum_want *w = ctx;
	const struct dp_counter_sum *c = &w->s->v[e];
	return c->domain == w->domain && !strcmp(c->name, w->name);
}

static uint64_t sum_hash(uint32_t domain, const char *name)
{
	return hash_fold64(hash_mix64(domain), hash_str64(name));
}

/* Index of (domain, name), or HIDX_NONE with *slot the free slot. */
static uint32_t sum_find(const struct dp_counter_sums *s, uint32_t domain, const char *name,
			 uint64_t *h, size_t *slot)
{
	struct sum_want w = { s, domain, name };
	*h = sum_hash(domain, name);
	size_t dummy;
	if (!s->idx.cap)
		return HIDX_NONE;
	return hidx_find(&s->idx, *h, sum_eq, &w, slot ? slot : &dummy);
}

void dp_counter_sums_add(struct dp_counter_sums *s, uint32_t domain, const struct dp_counters *c)
{
	if (!c || !c->c)
		return;
	if (!s->idx.cap)
		hidx_init(&s->idx, 64);
	for (uint32_t i = 0; i < c->n && i < DP_MAX_COUNTERS; i++) {
		const char *name = c->c[i].name;
		size_t len = name ? strnlen(name, DP_MAX_COUNTER_NAME + 1) : 0;
		uint64_t h;
		size_t slot;
		if (!len || len > DP_MAX_COUNTER_NAME) {
			s->dropped++;  /* the reader never returns one; a caller might */
			continue;
		}
		uint32_t e = sum_find(s, domain, name, &h, &slot);
		if (e != HIDX_NONE) {
			s->v[e].value = sat_add64(s->v[e].value, c->c[i].value);
			continue;
		}
		if (s->n >= DP_COUNTER_SUMS_MAX) {
			s->dropped++;
			continue;
		}
		xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
		struct dp_counter_sum *v = &s->v[s->n];
		v->domain = domain;
		v->value = c->c[i].value;
		memcpy(v->name, name, len);
		v->name[len] = 0;
		hidx_fill(&s->idx, slot, h, (uint32_t)s->n);
		s->n++;
	}
}

static int cmp_sum(const void *a, const void *b)
{
	const struct dp_counter_sum *x = a, *y = b;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	return strcmp(x->name, y->name);
}

void dp_counter_sums_sort(struct dp_counter_sums *s)
{
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_sum);
	/* the index holds entry numbers: rebuild it for the new order */
	hidx_release(&s->idx);
	hidx_init(&s->idx, 64);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t h;
		size_t slot;
		sum_find(s, s->v[i].domain, s->v[i].name, &h, &slot);
		hidx_fill(&s->idx, slot, h, (uint32_t)i);
	}
}

size_t dp_counter_sums_of(const struct dp_counter_sums *s, uint32_t domain,
			  const struct dp_counter_sum **out)
{
	/* first entry of the domain, by bisection over the sorted array */
	size_t a = 0, b = s->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (s->v[m].domain < domain)
			a = m + 1;
		else
			b = m;
	}
	size_t e = a;
	while (e < s->n && s->v[e].domain == domain)
		e++;
	*out = e > a ? &s->v[a] : NULL;
	return e - a;
}

uint64_t dp_counter_sums_get(const struct dp_counter_sums *s, uint32_t domain, const char *name)
{
	uint64_t h;
	if (!name)
		return 0;
	uint32_t e = sum_find(s, domain, name, &h, NULL);
	return e == HIDX_NONE ? 0 : s->v[e].value;
}

void dp_counter_sums_release(struct dp_counter_sums *s)
{
	free(s->v);
	hidx_release(&s->idx);
	memset(s, 0, sizeof(*s));
}

static void meta_note(struct dp_meta *m, const struct dp_record *rec)
{
	if (rec->type <= DP_REC_MAX_KNOWN)
		m->counts[rec->type] += rec->weight;  /* 1, or a group's samples */
	else
		m->unknown++;
	if (scoped(rec->type))
		dom_get(m, rec->domain);
	switch (rec->type) {
	case DP_REC_SAMPLE: {
		struct dp_meta_domain *d = dom_get(m, rec->domain);
		dom_listed(m, d);
		d->samples += rec->weight;
		m->samples += rec->weight;
		if (rec->u.sample.has_uregs) {
			m->ustack_samples++;
			m->ustack_bytes += rec->u.sample.ustack_len;  /* <= 64 KiB a record: no wrap */
			m->ustack_ref_bytes += rec->u.sample.ustack_ref;
			m->ustack_full += rec->u.sample.ustack_len == rec->u.sample.ustack_size &&
					  rec->u.sample.ustack_size;
		}
		break;
	}
	case DP_REC_DOMAIN: {
		const struct dp_domain *in = &rec->u.domain;
		struct dp_meta_domain *d = dom_get(m, in->id);
		dom_listed(m, d);
		dom_strings_free(d);
		d->has_record = true;
		d->d = *in;
		d->d.name = xstrdup(in->name ? in->name : "");
		d->d.address = xstrdup(in->address ? in->address : "");
		d->d.symsrc = xstrdup(in->symsrc ? in->symsrc : "");
		break;
	}
	case DP_REC_EVENT: {
		if (u64map_get(&m->evidx, rec->u.event.id))
			break;
		xgrow((void **)&m->events, &m->evcap, m->nevents + 1, sizeof(*m->events));
		struct dp_meta_event *e = &m->events[m->nevents++];
		e->e = rec->u.event;
		e->e.name = xstrdup(rec->u.event.name ? rec->u.event.name : "");
		u64map_put(&m->evidx, rec->u.event.id, (void *)(uintptr_t)m->nevents);
		break;
	}
	case DP_REC_LOST: {
		/* crafted counts saturate instead of wrapping */
		const struct dp_lost *l = &rec->u.lost;
		m->lost = sat_add64(m->lost, l->count);
		uint64_t *slot = l->source < DP_LOST_SOURCES ? &m->lost_by_source[l->source] : &m->lost_other;
		*slot = sat_add64(*slot, l->count);
		break;
	}
	case DP_REC_STATS:
		m->has_stats = true;
		m->stats = rec->u.stats;
		break;
	case DP_REC_COUNTERS:
		dp_counter_sums_add(&m->counters, rec->domain, &rec->u.counters);
		break;
	}
}

static int dispatch(const struct dp_visitor *v, void *ctx, const struct dp_record *rec)
{
	int (*fn)(void *, const struct dp_record *);
	if (v->record) {
		int rc = v->record(ctx, rec);
		if (rc)
			return rc;
	}
	switch (rec->type) {
	case DP_REC_SAMPLE: fn = v->sample; break;
	case DP_REC_MMAP: fn = v->mmap; break;
	case DP_REC_TASK: fn = v->task; break;
	case DP_REC_SYMTAB: fn = v->symtab; break;
	case DP_REC_DOMAIN: fn = v->domain; break;
	case DP_REC_EVENT: fn = v->event; break;
	case DP_REC_LOST: fn = v->lost; break;
	case DP_REC_STATS: fn = v->stats; break;
	case DP_REC_COUNTERS: fn = v->counters; break;
	default: fn = v->other; break;  /* DOMAIN_SWITCH, unknown tags */
	}
	return fn ? fn(ctx, rec) : 0;
}

int dp_scan(struct dp_reader *r, const struct dp_visitor *v, void *ctx, struct dp_meta *meta)
{
	if (!r)
		return -EINVAL;
	if (meta) {
		dp_meta_release(meta);
		meta->header = *dp_reader_header(r);
		dom_listed(meta, dom_get(meta, DP_HOST_DOMAIN));
	}
	dp_reader_rewind(r);
	struct dp_record rec;
	uint64_t nrec = 0, size = dp_reader_size(r);
	int rc = 0;
	while (!rc && dp_reader_next(r, &rec) == 1) {
		if (v && v->progress && (++nrec % DP_SCAN_PROGRESS_EVERY) == 0)
			v->progress(ctx, dp_reader_pos(r), size);
		if (meta)
			meta_note(meta, &rec);
		if (v)
			rc = dispatch(v, ctx, &rec);
	}
	if (meta) {
		meta->ndamage = dp_reader_damage(r, &meta->damage);
		meta->incomplete = dp_reader_incomplete(r);
	}
	return rc;
}

long dp_meta_domain_index(const struct dp_meta *meta, uint32_t id)
{
	uintptr_t at = (uintptr_t)u64map_get(&meta->domidx, id);
	return at ? (long)at - 1 : -1;
}

long dp_meta_event_index(const struct dp_meta *meta, uint32_t id)
{
	uintptr_t at = (uintptr_t)u64map_get(&meta->evidx, id);
	return at ? (long)at - 1 : -1;
}

const struct dp_meta_domain *dp_meta_domain(const struct dp_meta *meta, uint32_t id)
{
	long i = dp_meta_domain_index(meta, id);
	return i < 0 ? NULL : &meta->domains[i];
}

const struct dp_meta_event *dp_meta_event(const struct dp_meta *meta, uint32_t id)
{
	long i = dp_meta_event_index(meta, id);
	return i < 0 ? NULL : &meta->events[i];
}

uint64_t dp_meta_lost_of(const struct dp_meta *meta, uint32_t src)
{
	return src < DP_LOST_SOURCES ? meta->lost_by_source[src] : meta->lost_other;
}

void dp_meta_release(struct dp_meta *meta)
{
	for (size_t i = 0; i < meta->ndomains; i++)
		dom_strings_free(&meta->domains[i]);
	free(meta->domains);
	for (size_t i = 0; i < meta->nevents; i++)
		free((char *)meta->events[i].e.name);
	free(meta->events);
	hmap_release(&meta->domidx);
	hmap_release(&meta->evidx);
	dp_counter_sums_release(&meta->counters);
	memset(meta, 0, sizeof(*meta));
}
