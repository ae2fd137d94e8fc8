// SPDX-License-Identifier: MIT
/*
 * User stacks in delta form: the per-chunk thread table shared by the
 * writer and the reader (contract in ustack.h). Both sides run the same
 * code on the same sequence of stacks, so the writer's "previous stack"
 * is the reader's; every offset the reader takes from the file is
 * checked here against what the table holds.
 */
#include "format/ustack.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define USD_SLOTS (2 * USD_MAX_THREADS) /* a power of two */

void usd_init(struct usd_table *tb)
{
	memset(tb, 0, sizeof(*tb));
}

void usd_free(struct usd_table *tb)
{
	for (uint32_t i = 0; i < tb->alloc; i++)
		free(tb->t[i].buf);
	free(tb->t);
	free(tb->slot);
	memset(tb, 0, sizeof(*tb));
}

static uint32_t slot_of(uint32_t domain, uint32_t tid)
{
	uint32_t h = tid * 0x9e3779b1u ^ (domain + 1) * 0x85ebca77u;
	h ^= h >> 15;
	return h & (USD_SLOTS - 1);
}

void usd_reset(struct usd_table *tb)
{
	if (!tb->n || !tb->slot) {
		tb->n = 0;
		return;
	}
	if (tb->n > USD_SLOTS / 64) {
		memset(tb->slot, 0, USD_SLOTS * sizeof(*tb->slot));
	} else {
		/* A chunk holds the stacks of a few threads: clear their
		 * slots, not all 32 KiB of them at every chunk (0.9% of a
		 * report's instructions). Each entry lies on the probe path
		 * from its home slot; zeros cleared before it on that path
		 * are stepped over, so the walk ends at it. */
		for (uint32_t i = 0; i < tb->n; i++) {
			uint32_t s = slot_of(tb->t[i].domain, tb->t[i].tid);
			for (uint32_t k = 0; k < USD_SLOTS && tb->slot[s] != i + 1; k++)
				s = (s + 1) & (USD_SLOTS - 1);
			if (tb->slot[s] == i + 1)
				tb->slot[s] = 0;
		}
	}
	tb->n = 0;
}

struct usd_thread *usd_get(struct usd_table *tb, uint32_t domain, uint32_t tid, bool add)
{
	if (!tb->slot) {
		if (!add)
			return NULL;
		tb->slot = xcalloc(USD_SLOTS, sizeof(*tb->slot));
	}
	uint32_t s = slot_of(domain, tid);
	/* at most USD_MAX_THREADS of the USD_SLOTS are used: a free slot
	 * ends every probe */
	while (tb->slot[s]) {
		struct usd_thread *th = &tb->t[tb->slot[s] - 1];
		if (th->tid == tid && th->domain == domain)
			return th;
		s = (s + 1) & (USD_SLOTS - 1);
	}
	if (!add || tb->n >= USD_MAX_THREADS)
		return NULL;
	if (tb->n == tb->alloc) {
		uint32_t na = tb->alloc ? 2 * tb->alloc : 16;
		tb->t = xrealloc(tb->t, na * sizeof(*tb->t));
		memset(tb->t + tb->alloc, 0, (na - tb->alloc) * sizeof(*tb->t));
		tb->alloc = na;
	}
	struct usd_thread *th = &tb->t[tb->n];
	th->domain = domain;
	th->tid = tid;
	th->has_prev = false;
	th->prev_in_window = false;
	th->pptr = NULL;
	th->psp = 0;
	th->plen = 0;
	tb->slot[s] = ++tb->n;
	return th;
}

/*
 * Make the window cover [sp, sp+len) (sp + len does not wrap) holding at
 * [at, at+run) (inside it) the previous stack's bytes, which are at
 * th->pptr + (at - th->psp). Returns the window at sp, or NULL (nothing
 * changed) when len is too large or the budget is spent.
 */
static uint8_t *place(struct usd_table *tb, struct usd_thread *th, uint64_t sp, uint32_t len,
		      uint64_t at, uint32_t run)
{
	if (len > USD_MAX_WINDOW / 2)
		return NULL;
	const uint8_t *src = run ? th->pptr + (at - th->psp) : NULL;
	if (th->buf && sp >= th->base && sp - th->base <= th->cap - len) {
		uint8_t *dst = th->buf + (at - th->base);
		if (run && !th->prev_in_window)
			memcpy(dst, src, run);
		/* in the window, the run is where it was */
		return th->buf + (sp - th->base);
	}
	uint32_t ncap = USD_MIN_WINDOW;
	while (ncap < 2 * len)
		ncap *= 2;
	uint8_t *nb = th->buf;
	if (ncap > th->cap) {
		if (tb->bytes - th->cap + ncap > USD_MAX_BYTES)
			return NULL;
		nb = xmalloc(ncap);
	} else {
		ncap = th->cap;
	}
	/* the stack in the middle: sp moves both ways between samples */
	uint64_t slack = ((ncap - len) / 2) & ~(uint64_t)7;
	uint64_t nbase = sp - (sp < slack ? sp : slack);
	if (run)
		memmove(nb + (at - nbase), src, run);
	if (nb != th->buf) {
		free(th->buf);
		tb->bytes = tb->bytes - th->cap + ncap;
		th->buf = nb;
		th->cap = ncap;
	}
	th->base = nbase;
	return nb + (sp - nbase);
}

const uint8_t *usd_apply(struct usd_table *tb, struct usd_thread *th, uint64_t sp, uint32_t len,
			 uint32_t head, uint32_t run, const uint8_t *lit_head, const uint8_t *lit_tail)
{
	if (!th->has_prev || head > len || run > len - head || sp > UINT64_MAX - len)
		return NULL;
	uint64_t at = sp + head;
	if (at < th->psp || at - th->psp > th->plen || run > th->plen - (at - th->psp))
		return NULL;
	uint8_t *w = place(tb, th, sp, len, at, run);
	if (!w)
		return NULL;
	if (head)
		memcpy(w, lit_head, head);
	if (len - head - run)
		memcpy(w + head + run, lit_tail, len - head - run);
	th->psp = sp;
	th->plen = len;
	th->pptr = w;
	th->prev_in_window = true;
	return w;
}

void usd_full(struct usd_table *tb, struct usd_thread *th, uint64_t sp, uint32_t len,
	      const uint8_t *p, bool copy)
{
	th->has_prev = false;
	if (sp > UINT64_MAX - len)
		return;
	if (copy) {
		uint8_t *w = place(tb, th, sp, len, sp, 0);
		if (!w)
			return;
		if (len)
			memcpy(w, p, len);
		p = w;
	}
	th->has_prev = true;
	th->prev_in_window = copy;
	th->psp = sp;
	th->plen = len;
	th->pptr = p;
}

bool usd_diff(const struct usd_thread *th, uint64_t sp, uint32_t len, const uint8_t *p,
	      uint32_t *head, uint32_t *run)
{
	if (!th->has_prev || sp > UINT64_MAX - len)
		return false;
	uint64_t end = sp + len, pend = th->psp + th->plen;
	uint64_t lo = sp > th->psp ? sp : th->psp, hi = end < pend ? end : pend;
	if (hi <= lo || hi - lo < USD_MIN_COPY)
		return false;
	const uint8_t *a = p + (hi - sp), *b = th->pptr + (hi - th->psp);
	uint64_t x = hi;
	while (x - lo >= 32 && !memcmp(a - 32, b - 32, 32)) {
		x -= 32;
		a -= 32;
		b -= 32;
	}
	while (x - lo >= 8 && !memcmp(a - 8, b - 8, 8)) {
		x -= 8;
		a -= 8;
		b -= 8;
	}
	if (hi - x < USD_MIN_COPY)
		return false;
	*head = (uint32_t)(x - sp);
	*run = (uint32_t)(hi - x);
	return true;
}
