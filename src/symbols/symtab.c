// SPDX-License-Identifier: MIT
/*
 * Sorted symbol tables with one string arena each, and the session's
 * chunked string pool. A table is appended to while a loader runs, then
 * frozen (sorted, aliases dropped, sizes filled); lookups are a binary
 * search with no allocation, so resolving an address costs O(log n).
 */
#include "symbols/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void symtab_init(struct sym_table *t)
{
	memset(t, 0, sizeof(*t));
}

void symtab_release(struct sym_table *t)
{
	free(t->v);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

void symtab_reserve(struct sym_table *t, size_t nsyms, size_t nbytes)
{
	if (t->finished)
		return;
	if (t->n + nsyms > t->cap)
		xgrow((void **)&t->v, &t->cap, t->n + nsyms, sizeof(*t->v));
	if (t->alen + nbytes > t->acap) {
		t->arena = xrealloc(t->arena, t->alen + nbytes);
		t->acap = t->alen + nbytes;
	}
}

void symtab_add(struct sym_table *t, uint64_t start, uint64_t size, uint64_t limit,
		const char *name, size_t len, unsigned prio)
{
	if (t->finished)
		return;
	if (t->n == t->cap)
		xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	if (t->alen + len + 1 > t->acap) {
		size_t need = t->alen + len + 1;
		size_t cap = t->acap ? t->acap : 4096;
		while (cap < need)
			cap *= 2;
		t->arena = xrealloc(t->arena, cap);
		t->acap = cap;
	}
	struct sym_entry *e = &t->v[t->n++];
	e->start = start;
	e->u.off = t->alen;
	memcpy(t->arena + t->alen, name, len);
	t->arena[t->alen + len] = '\0';
	t->alen += len + 1;
	e->flags = prio & SYM_F_PRIO_MASK;
	if (size) {
		/* saturate: a hostile size must not wrap below start */
		e->end = start + size < start ? UINT64_MAX : start + size;
	} else {
		e->end = limit;
		e->flags |= SYM_F_UNSIZED;
	}
}

static unsigned leading_underscores(const char *s)
{
	unsigned n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* <0 if a is the better name for a shared address. */
static int better(const struct sym_entry *a, const struct sym_entry *b, const char *arena)
{
	int as = !(a->flags & SYM_F_UNSIZED), bs = !(b->flags & SYM_F_UNSIZED);
	if (as != bs)
		return bs - as;
	int ap = a->flags & SYM_F_PRIO_MASK, bp = b->flags & SYM_F_PRIO_MASK;
	if (ap != bp)
		return bp - ap;
	const char *an = arena + a->u.off, *bn = arena + b->u.off;
	unsigned au = leading_underscores(an), bu = leading_underscores(bn);
	if (au != bu)
		return au < bu ? -1 : 1;
	size_t al = strlen(an), bl = strlen(bn);
	if (al != bl)
		return al < bl ? -1 : 1;
	return strcmp(an, bn);
}

/*
 * Sort v[0..n) by start, stably: a least-significant-digit radix sort
 * over the bytes of start that differ between entries (3-5 of 8 in an
 * image), instead of qsort's n log n calls of a comparator that also
 * ranked the names (11% of a small `report -g`'s instructions). Entries
 * of one start stay in their order, so picking the best of each run
 * below keeps what the stable sort by (start, name rank) kept first.
 * Short tables by insertion, stable too.
 */
static void sort_by_start(struct sym_entry *v, size_t n)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) {
			struct sym_entry e = v[i];
			size_t k = i;
			for (; k && v[k - 1].start > e.start; k--)
				v[k] = v[k - 1];
			v[k] = e;
		}
		return;
	}
	uint64_t any = 0, all = ~(uint64_t)0;
	for (size_t i = 0; i < n; i++) {
		any |= v[i].start;
		all &= v[i].start;
	}
	uint64_t varies = any ^ all;
	struct sym_entry *tmp = xmalloc(n * sizeof(*v)), *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		if (!((varies >> shift) & 0xff))
			continue;
		size_t cnt[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[(src[i].start >> shift) & 0xff]++;
		size_t sum = 0;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = cnt[b];
			cnt[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i].start >> shift) & 0xff]++] = src[i];
		struct sym_entry *x = src;
		src = dst;
		dst = x;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

void symtab_finish(struct sym_table *t, uint64_t last_size)
{
	if (t->finished)
		return;
	t->finished = true;
	if (t->n)
		sort_by_start(t->v, t->n);
	/* keep the best entry of each address (the first of the best, as
	 * a stable sort by (start, better name) would put it first) */
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (w && t->v[w - 1].start == t->v[i].start) {
			if (better(&t->v[i], &t->v[w - 1], t->arena) < 0)
				t->v[w - 1] = t->v[i];
			continue;
		}
		t->v[w++] = t->v[i];
	}
	t->n = w;
	for (size_t i = 0; i < t->n; i++) {
		struct sym_entry *e = &t->v[i];
		if (e->flags & SYM_F_UNSIZED) {
			uint64_t end = i + 1 < t->n ? t->v[i + 1].start
				: (e->start + last_size < e->start ? UINT64_MAX : e->start + last_size);
			if (e->end > e->start && e->end < end)
				end = e->end;    /* the section ends first */
			e->end = end;
			e->flags &= ~SYM_F_UNSIZED;
			e->flags |= SYM_F_GUESSED;
		}
		e->u.name = t->arena + e->u.off;
	}
	if (t->n < t->cap / 2 && t->n) {
		t->v = xrealloc(t->v, t->n * sizeof(*t->v));
		t->cap = t->n;
	}
}

struct sym_entry *symtab_find(const struct sym_table *t, uint64_t addr)
{
	if (!t->finished || !t->n || addr < t->v[0].start)
		return NULL;
	size_t lo = 0, hi = t->n;    /* last entry with start <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	struct sym_entry *e = &t->v[lo];
	return addr < e->end ? e : NULL;
}

/* ---- pool ---- */

struct pool_block {
	struct pool_block *next;
	size_t used, cap;
	char data[];
};

const char *pool_strndup(struct sym_pool *p, const char *s, size_t n)
{
	struct pool_block *b = p->head;
	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > 65536 ? n + 1 : 65536;
		b = xmalloc(sizeof(*b) + cap);
		b->used = 0;
		b->cap = cap;
		b->next = p->head;
		p->head = b;
	}
	char *d = b->data + b->used;
	memcpy(d, s, n);
	d[n] = '\0';
	b->used += n + 1;
	return d;
}

const char *pool_strdup(struct sym_pool *p, const char *s)
{
	return pool_strndup(p, s, strlen(s));
}

void pool_release(struct sym_pool *p)
{
	while (p->head) {
		struct pool_block *n = p->head->next;
		free(p->head);
		p->head = n;
	}
}
