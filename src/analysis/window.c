// SPDX-License-Identifier: MIT
/*
 * Windows in time and in CPUs (see window.h): the option syntax, the
 * per-domain spans of sample times, and the bounds of a window.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/window.h"
#include "format/scan.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* A non-negative decimal number that ends at `stop` (or the string's
 * end); "" gives *v = -1 (not given). */
static int number_until(const char *s, const char *stop, double *v)
{
	size_t len = stop ? (size_t)(stop - s) : strlen(s);
	if (!len) {
		*v = -1;
		return 0;
	}
	char buf[64];
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	/* plain decimals only (strtod would take hex, inf and exponents) */
	if (strspn(buf, "0123456789.") != len)
		return -EINVAL;
	char *end;
	errno = 0;
	double x = strtod(buf, &end);
	if (errno || end == buf || *end || !isfinite(x) || x < 0)
		return -EINVAL;
	*v = x;
	return 0;
}

int window_parse_time(const char *arg, double *from, double *to, bool *pct,
		      char *err, size_t errlen)
{
	const char *pc = strchr(arg, '%');
	*pct = pc != NULL;
	double a, b;
	int bad;
	if (*pct) {
		/* "A%-B%" or "A%,B%": both ends given, each with its % */
		const char *sep = pc + 1;
		size_t alen = strlen(arg);
		bad = (*sep != '-' && *sep != ',') || alen < 2 || arg[alen - 1] != '%' ||
		      strchr(sep + 1, '%') != arg + alen - 1 ||
		      number_until(arg, pc, &a) || number_until(sep + 1, arg + alen - 1, &b) ||
		      a < 0 || b < 0 || a > 100 || b > 100;
	} else {
		const char *comma = strchr(arg, ',');
		bad = !comma || strchr(comma + 1, ',') || number_until(arg, comma, &a) ||
		      number_until(comma + 1, NULL, &b);
	}
	if (!bad && a < 0)
		a = 0;
	if (bad || (b >= 0 && b < a) || (b >= 0 && b == a)) {
		snprintf(err, errlen, "--time '%s' is not a window: START,END in seconds "
			 "(either may be empty) or START%%-END%%, END after START", arg);
		return -EINVAL;
	}
	*from = a;
	*to = *pct && b >= 100 ? -1 : b;
	return 0;
}

int window_parse_cpus(const char *arg, uint64_t *bits, char *err, size_t errlen)
{
	memset(bits, 0, WINDOW_CPU_WORDS * sizeof(uint64_t));
	const char *s = arg;
	for (unsigned items = 0; items < WINDOW_MAX_CPUS; items++) {
		char *end;
		errno = 0;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;
		if (errno || end == s || *s == '-' || *s == '+' || lo >= WINDOW_MAX_CPUS)
			goto bad;
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
			if (errno || end == s || *s == '-' || *s == '+' || hi >= WINDOW_MAX_CPUS || hi < lo)
				goto bad;
		}
		for (unsigned long c = lo; c <= hi; c++)
			bits[c / 64] |= 1ull << (c % 64);
		if (!*end)
			return 0;
		if (*end != ',')
			goto bad;
		s = end + 1;
	}
bad:
	snprintf(err, errlen, "--cpu '%s' is not a CPU list (e.g. 0,2-3; CPUs 0..%u)", arg,
		 WINDOW_MAX_CPUS - 1);
	return -EINVAL;
}

const struct window_span *window_span_of(struct window_spans *s, uint32_t domain)
{
	if (s->last_hit && s->last_dom == domain)
		return s->last_hit;
	if (!s->idx)
		return NULL;
	uintptr_t at = (uintptr_t)u64map_get(s->idx, domain);
	if (!at)
		return NULL;
	s->last_dom = domain;
	s->last_hit = &s->v[at - 1];
	return s->last_hit;
}

static int on_span_sample(void *ctx, const struct dp_record *rec)
{
	struct window_spans *s = ctx;
	uint64_t t = rec->u.sample.time;
	struct window_span *sp = (struct window_span *)window_span_of(s, rec->domain);
	if (!sp) {
		if (s->n >= WINDOW_MAX_DOMAINS)
			return 0;
		if (!s->idx)
			s->idx = xcalloc(1, sizeof(struct hmap));
		xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
		s->v[s->n] = (struct window_span){ .domain = rec->domain, .first = t, .last = t };
		u64map_put(s->idx, rec->domain, (void *)(uintptr_t)(s->n + 1));
		s->n++;
		s->last_hit = NULL;   /* v may have moved */
		return 0;
	}
	if (t < sp->first)
		sp->first = t;
	if (t > sp->last)
		sp->last = t;
	return 0;
}

int window_spans_scan(struct dp_reader *r, struct window_spans *out)
{
	const struct dp_visitor vis = { .sample = on_span_sample };
	dp_reader_rewind(r);
	int rc = dp_scan(r, &vis, out, NULL);
	dp_reader_rewind(r);
	out->last_hit = NULL;
	return rc;
}

void window_spans_release(struct window_spans *s)
{
	if (s->idx) {
		hmap_release(s->idx);
		free(s->idx);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* first + x, saturating */
static uint64_t add_sat(uint64_t first, double x)
{
	if (x >= 18446744073709551615.0 - (double)first)
		return UINT64_MAX;
	return first + (uint64_t)x;
}

bool window_bounds(const struct window_span *sp, double from, double to, bool pct,
		   uint64_t *lo, uint64_t *hi)
{
	if (!sp)
		return false;
	double span = (double)(sp->last - sp->first);
	*lo = add_sat(sp->first, pct ? span * from / 100.0 : from * 1e9);
	*hi = to < 0 ? UINT64_MAX : add_sat(sp->first, pct ? span * to / 100.0 : to * 1e9);
	return true;
}
