// SPDX-License-Identifier: MIT
/*
 * Self samples per address of each symbol (profile_opts.hits), for
 * annotate: which instructions of a function the samples fell on. The
 * addresses are the image's link-time ones (as the symbol's start and
 * the ELF file's code), so the same function in two processes at two
 * load addresses adds up. One entry per (symbol, address) with samples:
 * memory grows with distinct addresses, not samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"
#include "util/xalloc.h"

/* the map's ip of image address addr (the inverse of sym_map_to_image) */
static uint64_t map_ip(const struct sym_map *m, uint64_t addr)
{
	return addr - sym_map_to_image(m, 0);
}

/* one per kept key, while building (L->hit_raw) */
void hits_add(struct loader *L, const struct key *k)
{
	xgrow((void **)&L->hit_raw, &L->caphit_raw, L->nhit_raw + 1, sizeof(*L->hit_raw));
	L->hit_raw[L->nhit_raw++] = (struct hit_raw){ k->leaf_sym, sym_map_to_image(k->map, k->ip),
						      k->count, k->map };
}

static int cmp_raw(const void *a, const void *b)
{
	const struct hit_raw *x = a, *y = b;
	if (x->sym != y->sym)
		return x->sym < y->sym ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void hits_finish(struct loader *L)
{
	struct priv *pv = L->pv;
	if (L->nhit_raw)
		qsort(L->hit_raw, L->nhit_raw, sizeof(*L->hit_raw), cmp_raw);
	for (size_t i = 0; i < L->nhit_raw; i++) {
		const struct hit_raw *h = &L->hit_raw[i];
		bool new_sym = !pv->nhsyms || pv->hsyms[pv->nhsyms - 1].sym != h->sym;
		if (new_sym) {
			pv->hsyms = xrealloc(pv->hsyms, (pv->nhsyms + 1) * sizeof(*pv->hsyms));
			struct hit_sym *s = &pv->hsyms[pv->nhsyms++];
			struct sym_result r;
			memset(&r, 0, sizeof(r));
			/* resolve again for the symbol's range */
			sym_resolve(pv->sym, h->map, map_ip(h->map, h->addr), &r);
			*s = (struct hit_sym){ h->sym, (uint32_t)pv->nhits, 0, h->map, r.sym_start, r.sym_end };
		}
		struct hit_sym *s = &pv->hsyms[pv->nhsyms - 1];
		if (!new_sym && pv->hits[pv->nhits - 1].addr == h->addr) {
			pv->hits[pv->nhits - 1].count += h->count;
			continue;
		}
		xgrow((void **)&pv->hits, &pv->caphits, pv->nhits + 1, sizeof(*pv->hits));
		pv->hits[pv->nhits++] = (struct profile_hit){ h->addr, h->count };
		s->n++;
	}
	free(L->hit_raw);
	L->hit_raw = NULL;
	L->nhit_raw = L->caphit_raw = 0;
}

void hits_free(struct priv *pv)
{
	free(pv->hits);
	free(pv->hsyms);
}

static const struct hit_sym *find_sym(const struct priv *pv, uint32_t sym)
{
	size_t lo = 0, hi = pv->nhsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pv->hsyms[mid].sym < sym)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pv->nhsyms && pv->hsyms[lo].sym == sym ? &pv->hsyms[lo] : NULL;
}

size_t profile_symbol_hits(const struct profile *p, uint32_t sym, const struct profile_hit **out,
			   uint64_t *start, uint64_t *end)
{
	const struct priv *pv = p->priv;
	const struct hit_sym *s = find_sym(pv, sym);
	if (!s)
		return 0;
	*out = pv->hits + s->first;
	if (start)
		*start = s->start;
	if (end)
		*end = s->end;
	return s->n;
}


bool profile_symbol_name_at(const struct profile *p, uint32_t sym, uint64_t addr, char *buf, size_t n)
{
	const struct priv *pv = p->priv;
	const struct hit_sym *s = find_sym(pv, sym);
	if (!s)
		return false;
	struct sym_result r;
	memset(&r, 0, sizeof(r));
	sym_resolve(pv->sym, s->map, map_ip(s->map, addr), &r);
	if (!r.symbol || !strcmp(r.symbol, "[unknown]"))
		return false;
	snprintf(buf, n, "%s+%#" PRIx64, r.symbol, r.offset);
	return true;
}

bool profile_symbol_line_at(const struct profile *p, uint32_t sym, uint64_t addr, const char **path,
			    unsigned *line)
{
	const struct priv *pv = p->priv;
	const struct hit_sym *s = find_sym(pv, sym);
	struct sym_srcline sl;
	if (!s || !sym_srcline(pv->sym, s->map, map_ip(s->map, addr), &sl))
		return false;
	*path = sl.path;
	*line = sl.line;
	return true;
}

long profile_symbol_code(const struct profile *p, uint32_t sym, uint8_t *buf, size_t cap)
{
	const struct priv *pv = p->priv;
	const struct hit_sym *s = find_sym(pv, sym);
	if (!s)
		return -ENOENT;
	return sym_image_code(pv->sym, s->map, s->start, s->end, buf, cap);
}

/* ---- opts.hits_only: which keys may be hits_symbol's ---- */

struct narrow_img {
	long n;                      /* sym_name_ranges: -1 any address,
				      * SYM_RANGES_LATER: asked at the end */
	struct sym_range *r;
	uint64_t ord;                /* the sample that first asked (L->early) */
};

struct hits_narrow {
	struct loader *L;
	struct hmap idx;             /* image -> index + 1 in v */
	struct narrow_img *v;
	size_t n, cap;
	/* images answered lately, direct-mapped: keys and samples of a few
	 * images come in runs (a process's user and kernel samples
	 * alternate) */
	struct { const struct sym_image *img; size_t at; } recent[8];
};

struct hits_narrow *hits_narrow_new(struct loader *L)
{
	struct hits_narrow *h = xcalloc(1, sizeof(*h));
	h->L = L;
	sym_set_name_probe(L->pv->sym, L->o.hits_symbol);
	return h;
}

/* narrow_img past its cache: the image's entry found or made */
static __attribute__((noinline)) struct narrow_img *
narrow_img_slow(struct hits_narrow *h, const struct sym_map *m, const struct sym_image *img, size_t slot,
		bool reading, uint64_t ord)
{
	struct sym_session *sym = h->L->pv->sym;
	struct narrow_img *e;
	uintptr_t got = (uintptr_t)u64map_get(&h->idx, (uint64_t)(uintptr_t)img);
	if (got) {
		e = &h->v[got - 1];
	} else {
		xgrow((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v));
		e = &h->v[h->n++];
		e->ord = ord;
		if (reading) {
			sym_warn_hold(sym, ord);
			e->n = sym_name_ranges_final(sym, m, h->L->o.hits_symbol, &e->r);
			sym_warn_unhold(sym);
		} else {
			e->n = sym_name_ranges(sym, m, h->L->o.hits_symbol, &e->r);
		}
		u64map_put(&h->idx, (uint64_t)(uintptr_t)img, (void *)(uintptr_t)h->n);
	}
	h->recent[slot].img = img;
	h->recent[slot].at = (size_t)(e - h->v);
	return e;
}

/* The ranges of map m's image: while reading (ord: the sample's number),
 * those that cannot change any more, their warnings held at the
 * sample's turn; at the end, the rest. Inline: asked once per sample. */
static inline const struct narrow_img *narrow_img(struct hits_narrow *h, const struct sym_map *m,
						  bool reading, uint64_t ord)
{
	const struct sym_image *img = sym_map_image(m);
	size_t slot = (size_t)(hash_fold64(0, (uint64_t)(uintptr_t)img) >> 61);
	struct narrow_img *e = h->recent[slot].img == img ? &h->v[h->recent[slot].at]
							  : narrow_img_slow(h, m, img, slot, reading, ord);
	if (!reading && e->n == SYM_RANGES_LATER) {
		/* its warnings at the turn of its first sample, among those
		 * held while reading (the order of the keys: sample order) */
		struct sym_session *sym = h->L->pv->sym;
		sym_warn_hold(sym, e->ord);
		e->n = sym_name_ranges(sym, m, h->L->o.hits_symbol, &e->r);
		sym_warn_unhold(sym);
	}
	return e;
}

static bool in_ranges(const struct narrow_img *e, const struct sym_map *m, uint64_t ip)
{
	if (e->n < 0)
		return true;
	if (!e->n)
		return false;
	uint64_t a = sym_map_to_image(m, ip);
	/* the last range starting at or before a (sorted by start; entries
	 * of a symbol table do not overlap) */
	size_t lo = 0, hi = (size_t)e->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < e->r[lo - 1].end;
}

bool hits_narrow_in(struct hits_narrow *h, const struct key *k)
{
	if (!k->map)
		return false;    /* dropped while reading (hits_early_in) */
	return in_ranges(narrow_img(h, k->map, false, 0), k->map, k->ip);
}

bool hits_early_in(struct loader *L, const struct sym_map *m, uint64_t ip)
{
	if (!L->narrow)
		L->narrow = hits_narrow_new(L);
	const struct narrow_img *e = narrow_img(L->narrow, m, true, L->p->total_samples);
	return e->n == SYM_RANGES_LATER || in_ranges(e, m, ip);
}

void hits_narrow_free(struct hits_narrow *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].r);
	free(h->v);
	hmap_release(&h->idx);
	free(h);
}
