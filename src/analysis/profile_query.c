// SPDX-License-Identifier: MIT
/*
 * Queries on a built profile (see profile.h): percentages, domain by id,
 * sort-key parsing, the sorted report rows and call-graph entries
 * (qsort_r with the sort in its context, no global state), and each
 * symbol's callers and callees. Reads the profile only.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"

double profile_pct(const struct profile *p, uint64_t n)
{
	return p->matched ? 100.0 * (double)n / (double)p->matched : 0.0;
}

const struct profile_domain *profile_domain_by_id(const struct profile *p, uint32_t id)
{
	const struct priv *pv = p->priv;
	uintptr_t at = pv ? (uintptr_t)u64map_get(&pv->domidx, id) : 0;
	return at ? &p->domains[at - 1] : NULL;
}

size_t profile_counters(const struct profile *p, uint32_t domain,
			const struct profile_counter **out)
{
	/* p->counters is sorted by domain: bisect to the domain's first */
	size_t a = 0, b = p->ncounters;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (p->counters[m].domain < domain)
			a = m + 1;
		else
			b = m;
	}
	size_t e = a;
	while (e < p->ncounters && p->counters[e].domain == domain)
		e++;
	*out = e > a ? &p->counters[a] : NULL;
	return e - a;
}

uint64_t profile_counter(const struct profile *p, uint32_t domain, const char *name)
{
	const struct priv *pv = p->priv;
	return pv ? dp_counter_sums_get(&pv->counters, domain, name) : 0;
}

int profile_parse_sort(const char *keys, enum profile_sort_key *out, const char **bad)
{
	static const struct { const char *name; enum profile_sort_key k; } names[] = {
		{ "sample", PROFILE_SORT_SAMPLE }, { "samples", PROFILE_SORT_SAMPLE },
		{ "symbol", PROFILE_SORT_SYMBOL }, { "sym", PROFILE_SORT_SYMBOL },
		{ "image", PROFILE_SORT_IMAGE }, { "dso", PROFILE_SORT_IMAGE },
		{ "domain", PROFILE_SORT_DOMAIN }, { "pid", PROFILE_SORT_PID },
		{ "comm", PROFILE_SORT_COMM }, { "srcline", PROFILE_SORT_SRCLINE },
	};
	int n = 0;
	const char *s = keys;
	while (s && *s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		size_t k;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strlen(names[k].name) == len && !strncmp(names[k].name, s, len))
				break;
		if (k == sizeof(names) / sizeof(names[0]) || n >= PROFILE_MAX_SORT) {
			if (bad)
				*bad = s;
			return -1;
		}
		out[n++] = names[k].k;
		s = e ? e + 1 : NULL;
	}
	return n;
}

/* What a row sort compares by, passed to qsort_r (no global state: two
 * profiles may be sorted at once, e.g. by diff). */
struct row_sort {
	const struct profile *p;
	const enum profile_sort_key *keys;
	int nkeys;
};

static int cmp_str0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct row_sort *rs = ctx;
	const struct profile_symbol *x = &rs->p->syms[*(const uint32_t *)a];
	const struct profile_symbol *y = &rs->p->syms[*(const uint32_t *)b];
	for (int i = 0; i < rs->nkeys; i++) {
		int c = 0;
		switch (rs->keys[i]) {
		case PROFILE_SORT_SAMPLE:
			c = x->self != y->self ? (x->self > y->self ? -1 : 1) : 0;
			break;
		case PROFILE_SORT_SYMBOL: c = strcmp(x->symbol, y->symbol); break;
		case PROFILE_SORT_IMAGE: c = strcmp(x->image, y->image); break;
		case PROFILE_SORT_DOMAIN:
			c = x->domain != y->domain ? (x->domain < y->domain ? -1 : 1) : 0;
			break;
		case PROFILE_SORT_PID:
			c = x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : 0;
			break;
		case PROFILE_SORT_COMM: c = cmp_str0(x->comm, y->comm); break;
		case PROFILE_SORT_SRCLINE: break;
		}
		if (c)
			return c;
	}
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	int c = strcmp(x->image, y->image);
	if (c)
		return c;
	c = strcmp(x->symbol, y->symbol);
	if (c)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

uint32_t *profile_rows(const struct profile *p, const enum profile_sort_key *keys,
		       int nkeys, double threshold_pct, size_t *n)
{
	uint32_t *v = xmalloc((p->nsyms ? p->nsyms : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < p->nsyms; i++)
		if (p->syms[i].self && profile_pct(p, p->syms[i].self) >= threshold_pct)
			v[m++] = (uint32_t)i;
	static const enum profile_sort_key def = PROFILE_SORT_SAMPLE;
	struct row_sort rs = { p, nkeys > 0 ? keys : &def, nkeys > 0 ? nkeys : 1 };
	qsort_r(v, m, sizeof(*v), cmp_row, &rs);
	*n = m;
	return v;
}

static int cmp_cg(const void *a, const void *b, void *ctx)
{
	const struct profile *sp = ctx;
	const struct profile_symbol *x = &sp->syms[*(const uint32_t *)a];
	const struct profile_symbol *y = &sp->syms[*(const uint32_t *)b];
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	int c = strcmp(x->symbol, y->symbol);
	if (c)
		return c;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

uint32_t *profile_cg_entries(const struct profile *p, double threshold_pct, size_t *n)
{
	uint32_t *v = xmalloc((p->nsyms ? p->nsyms : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < p->nsyms; i++)
		if (p->syms[i].total && profile_pct(p, p->syms[i].total) >= threshold_pct)
			v[m++] = (uint32_t)i;
	qsort_r(v, m, sizeof(*v), cmp_cg, (void *)p);
	*n = m;
	return v;
}

size_t profile_callers(const struct profile *p, uint32_t sym, const struct profile_edge *const **out)
{
	const struct priv *pv = p->priv;
	if (!pv->in_off || sym >= p->nsyms) {
		*out = NULL;
		return 0;
	}
	*out = pv->in_ptrs + pv->in_off[sym];
	return pv->in_off[sym + 1] - pv->in_off[sym];
}

size_t profile_callees(const struct profile *p, uint32_t sym, const struct profile_edge *const **out)
{
	const struct priv *pv = p->priv;
	if (!pv->out_off || sym >= p->nsyms) {
		*out = NULL;
		return 0;
	}
	*out = pv->out_ptrs + pv->out_off[sym];
	return pv->out_off[sym + 1] - pv->out_off[sym];
}
