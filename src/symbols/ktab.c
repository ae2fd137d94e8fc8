// SPDX-License-Identifier: MIT
/*
 * The compact core-kernel symbol table (see internal.h) and the streaming
 * reader of kallsyms-style text it is built from.
 *
 * Why: a kallsyms holds ~120k text symbols in ~5 MB of text, and a report
 * names maybe a thousand of them. Decompressing the text, keeping it, and
 * copying every name into a sym_table made the kernel table most of a
 * report's resident memory. Here the text stays compressed (as stored in
 * the recording), the table keeps 12 bytes per symbol, and names are
 * copied out of the text only when asked for: callers announce the
 * symbols they will name (ktab_want), and the first ktab_name of an
 * unnamed symbol fetches the whole announced batch in one streaming pass.
 * A caller that never announces still works: each miss costs a pass, and
 * after a few passes every name is fetched at once.
 */
#include "symbols/internal.h"
#include "symbols/symbols.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "util/xalloc.h"

/* ref[i]: where symbol i's name is. */
#define REF_NAMED   0x80000000u  /* low bits: index in names[] */
#define REF_PENDING 0x40000000u  /* queued for the next fetch (low bits: offset) */
#define REF_OFF     0x3fffffffu  /* offset of the name in the text (< 1 GiB) */

/* Passes after which every remaining name is fetched at once. */
#define MAX_PASSES 4

struct kbuild {
	uint64_t start;
	uint32_t off;
	uint32_t rank;               /* smaller is the better alias */
};

struct kix;

struct ktab {
	struct kix *x;               /* a table over a kernel symbol index, or NULL */
	struct ktext src;
	/* building, slow mode (input not sorted by address): everything is
	 * collected, then sorted */
	bool slow;
	bool unsorted;               /* fast mode met a lower address: rebuild slow */
	struct kbuild *b;
	size_t nb, capb;
	/* building, fast mode: aliases of the current address wait in grp,
	 * the winners go straight to start[]/ref[] */
	struct kbuild *grp;
	size_t ngrp, capgrp;
	size_t capstart, capref;
	/* finished: start64[], or start32[] + base when the table spans
	 * less than 4 GiB (the core kernel does) */
	uint64_t *start;
	uint32_t *start32;
	uint64_t base;
	uint32_t *ref;
	size_t n;
	uint64_t last_end;
	const char **names;
	size_t nnames, capnames;
	uint32_t *pend;              /* symbol indexes waiting for a fetch */
	size_t npend, cappend;
	unsigned passes;
	bool finished;
	char *owned;                 /* the decompressed text (src.plain), or NULL */
};

/* Texts up to this size are decompressed once and kept (ktab_new). */
#define KTEXT_KEEP_MAX (256u << 20)

/* ---- streaming ---- */

#define STREAM_BUF (256u << 10)
/* Frames needing a larger window (not ours: the writer uses level 3) are
 * decompressed in one piece instead. */
#define STREAM_WINDOW_LOG_MAX 23

static int stream_whole(const struct ktext *src, ktext_fn fn, void *ctx)
{
	char *buf = xmalloc(src->raw ? src->raw : 1);
	size_t n = ZSTD_decompress(buf, src->raw, src->z, src->zlen);
	int ret = 0;
	if (ZSTD_isError(n) || n != src->raw)
		ret = -EINVAL;
	else if (n)
		fn(ctx, buf, n, 0);
	free(buf);
	return ret;
}

int ktext_stream(const struct ktext *src, ktext_fn fn, void *ctx)
{
	if (src->plain) {
		if (src->raw)
			fn(ctx, src->plain, src->raw, 0);
		return 0;
	}
	if (!src->z || !src->zlen)
		return src->raw ? -EINVAL : 0;
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!dc)
		return -ENOMEM;
	ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, STREAM_WINDOW_LOG_MAX);
	char *buf = xmalloc(STREAM_BUF);
	size_t fill = 0;
	uint64_t base = 0;
	ZSTD_inBuffer in = { src->z, src->zlen, 0 };
	int ret = 0;
	for (;;) {
		ZSTD_outBuffer out = { buf, STREAM_BUF, fill };
		size_t r = ZSTD_decompressStream(dc, &out, &in);
		if (ZSTD_isError(r)) {
			if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge && !base && !fill)
				ret = stream_whole(src, fn, ctx);
			else
				ret = -EINVAL;
			break;
		}
		fill = out.pos;
		bool done = r == 0;
		size_t cut = fill;
		if (!done) {
			const char *nl = memrchr(buf, '\n', fill);
			if (nl)
				cut = (size_t)(nl - buf) + 1;
			else if (fill < STREAM_BUF)
				cut = 0;    /* wait for the rest of the line */
			/* else: a line longer than the buffer, delivered cut */
		}
		if (cut) {
			fn(ctx, buf, cut, base);
			base += cut;
			memmove(buf, buf + cut, fill - cut);
			fill -= cut;
		}
		if (done) {
			if (base != src->raw)
				ret = -EINVAL;
			break;
		}
		if (in.pos == in.size && out.pos < out.size) {
			ret = -EINVAL;   /* input ended inside the frame */
			break;
		}
	}
	free(buf);
	ZSTD_freeDCtx(dc);
	return ret;
}

/* ---- building ---- */

struct ktab *ktab_new(const struct ktext *src)
{
	struct ktab *k = xcalloc(1, sizeof(*k));
	k->src = *src;
	/* Decompressed once and kept, when the frame decompresses whole: the
	 * build pass and the name fetches then read it in place. Streaming
	 * it for each pass kept less resident but decompressed the text
	 * twice or more, a large part of a small report's instructions
	 * (docs/benchmarks.md, "Design measurements"). A frame that does not
	 * decompress whole is streamed as before, so the lines before the
	 * damage are still read. */
	if (!src->plain && src->z && src->raw && src->raw <= KTEXT_KEEP_MAX) {
		char *buf = xmalloc(src->raw);
		size_t n = ZSTD_decompress(buf, src->raw, src->z, src->zlen);
		if (!ZSTD_isError(n) && n == src->raw) {
			k->owned = buf;
			k->src.plain = buf;
		} else {
			free(buf);
		}
	}
	return k;
}

const struct ktext *ktab_text(const struct ktab *k)
{
	return &k->src;
}

static void kix_free(struct kix *x);

void ktab_free(struct ktab *k)
{
	if (!k)
		return;
	kix_free(k->x);
	free(k->b);
	free(k->grp);
	free(k->start);
	free(k->start32);
	free(k->ref);
	free(k->names);
	free(k->pend);
	free(k->owned);
	free(k);
}

bool ktab_unsorted(const struct ktab *k)
{
	return k->unsorted;
}

void ktab_restart_slow(struct ktab *k)
{
	struct ktext src = k->src;
	char *owned = k->owned;
	free(k->b);
	free(k->grp);
	free(k->start);
	free(k->ref);
	memset(k, 0, sizeof(*k));
	k->src = src;
	k->owned = owned;
	k->slow = true;
}

/* Fast mode: the best-ranked aliases of the pending address become entries. */
static void flush_group(struct ktab *k)
{
	uint32_t best = UINT32_MAX;
	for (size_t i = 0; i < k->ngrp; i++)
		if (k->grp[i].rank < best)
			best = k->grp[i].rank;
	for (size_t i = 0; i < k->ngrp; i++) {
		if (k->grp[i].rank != best)
			continue;
		if (k->n == k->capstart)
			xgrow((void **)&k->start, &k->capstart, k->n + 1, sizeof(*k->start));
		if (k->n == k->capref)
			xgrow((void **)&k->ref, &k->capref, k->n + 1, sizeof(*k->ref));
		k->start[k->n] = k->grp[i].start;
		k->ref[k->n++] = k->grp[i].off;
	}
	k->ngrp = 0;
}

void ktab_add(struct ktab *k, uint64_t addr, uint64_t name_off, const char *name, size_t nlen,
	      unsigned prio)
{
	if (k->finished || k->unsorted || name_off > REF_OFF)
		return;
	unsigned us = 0;
	while (us < nlen && name[us] == '_')
		us++;
	/* the order of symtab.c's better(): priority, underscores, length */
	uint32_t rank = (uint32_t)(15 - (prio & 15)) << 28 | (uint32_t)(us > 15 ? 15 : us) << 24 |
			(uint32_t)(nlen > 0xffffff ? 0xffffff : nlen);
	struct kbuild e = { addr, (uint32_t)name_off, rank };
	if (k->slow) {
		if (k->nb == k->capb)
			xgrow((void **)&k->b, &k->capb, k->nb + 1, sizeof(*k->b));
		k->b[k->nb++] = e;
		return;
	}
	if (k->ngrp && addr != k->grp[0].start) {
		if (addr < k->grp[0].start) {
			k->unsorted = true;    /* the caller rebuilds in slow mode */
			return;
		}
		flush_group(k);
	}
	if (k->ngrp == k->capgrp)
		xgrow((void **)&k->grp, &k->capgrp, k->ngrp + 1, sizeof(*k->grp));
	k->grp[k->ngrp++] = e;
}

static int cmp_kbuild(const void *pa, const void *pb)
{
	const struct kbuild *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* A table spanning less than 4 GiB keeps 4-byte offsets from its first address. */
static void narrow(struct ktab *k)
{
	size_t n = k->n;
	if (!n || k->start[n - 1] - k->start[0] > UINT32_MAX)
		return;
	k->base = k->start[0];
	k->start32 = xmalloc(n * sizeof(*k->start32));
	for (size_t i = 0; i < n; i++)
		k->start32[i] = (uint32_t)(k->start[i] - k->base);
	free(k->start);
	k->start = NULL;
}

static inline uint64_t kstart(const struct ktab *k, size_t i)
{
	return k->start32 ? k->base + k->start32[i] : k->start[i];
}

void ktab_finish(struct ktab *k, uint64_t last_size)
{
	if (k->finished)
		return;
	k->finished = true;
	if (!k->slow) {
		if (k->unsorted) {     /* the caller did not rebuild: no table */
			k->ngrp = k->n = 0;
		}
		flush_group(k);
		free(k->grp);
		k->grp = NULL;
		k->capgrp = 0;
		size_t n = k->n;
		if (n) {
			k->start = xrealloc(k->start, n * sizeof(*k->start));
			k->ref = xrealloc(k->ref, n * sizeof(*k->ref));
			k->last_end = k->start[n - 1] + last_size < k->start[n - 1] ? UINT64_MAX
				      : k->start[n - 1] + last_size;
		} else {
			k->ref = xrealloc(k->ref, sizeof(*k->ref));
		}
		narrow(k);
		return;
	}
	size_t n = k->nb;
	bool sorted = true;  /* kallsyms and System.map come sorted: skip qsort's copy */
	for (size_t i = 1; i < n && sorted; i++)
		sorted = k->b[i - 1].start <= k->b[i].start;
	if (!sorted)
		qsort(k->b, n, sizeof(*k->b), cmp_kbuild);
	/* per address keep the best-ranked aliases; equal ranks stay as a
	 * group, decided by name when one is asked for */
	size_t w = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint32_t best = k->b[i].rank;
		while (j < n && k->b[j].start == k->b[i].start) {
			if (k->b[j].rank < best)
				best = k->b[j].rank;
			j++;
		}
		for (size_t q = i; q < j; q++)
			if (k->b[q].rank == best)
				k->b[w++] = k->b[q];
		i = j;
	}
	n = w;
	k->n = n;
	k->ref = xmalloc((n ? n : 1) * sizeof(*k->ref));
	for (size_t i = 0; i < n; i++)
		k->ref[i] = k->b[i].off;
	/* addresses in place: entry i's start moves from byte 16i to 8i */
	uint64_t *st = (uint64_t *)(void *)k->b;
	for (size_t i = 0; i < n; i++)
		st[i] = k->b[i].start;
	k->b = NULL;
	k->nb = k->capb = 0;
	k->start = n ? xrealloc(st, n * sizeof(*st)) : (free(st), NULL);
	if (n)
		k->last_end = k->start[n - 1] + last_size < k->start[n - 1] ? UINT64_MAX
			      : k->start[n - 1] + last_size;
	narrow(k);
}

static bool kix_first(const struct kix *x, uint64_t *start);
static bool kix_find(struct ktab *k, uint64_t addr, size_t *idx, uint64_t *start, uint64_t *end);
static const char *kix_name(struct ktab *k, size_t idx, struct sym_pool *pool);

bool ktab_first(const struct ktab *k, uint64_t *start)
{
	if (k->x)
		return kix_first(k->x, start);
	if (!k->finished || !k->n)
		return false;
	*start = kstart(k, 0);
	return true;
}

size_t ktab_count(const struct ktab *k)
{
	if (k->x)
		return k->n;
	return k->finished || !k->slow ? k->n + k->ngrp : k->nb;
}

bool ktab_find(const struct ktab *k, uint64_t addr, size_t *idx, uint64_t *start, uint64_t *end)
{
	if (k->x)    /* decodes blocks: the table is the caller's (see internal.h) */
		return kix_find((struct ktab *)k, addr, idx, start, end);
	if (!k->finished || !k->n || addr < kstart(k, 0))
		return false;
	size_t lo = 0, hi = k->n;    /* last entry with start <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (kstart(k, mid) <= addr)
			lo = mid;
		else
			hi = mid;
	}
	size_t last = lo;
	uint64_t s0 = kstart(k, last);
	while (lo > 0 && kstart(k, lo - 1) == s0)
		lo--;    /* first of an alias group */
	uint64_t e = last + 1 < k->n ? kstart(k, last + 1) : k->last_end;
	if (addr >= e)
		return false;
	*idx = lo;
	*start = s0;
	*end = e;
	return true;
}

/* ---- names ---- */

static void queue(struct ktab *k, size_t i)
{
	if (k->ref[i] & (REF_NAMED | REF_PENDING))
		return;
	k->ref[i] |= REF_PENDING;
	if (k->npend == k->cappend)
		xgrow((void **)&k->pend, &k->cappend, k->npend + 1, sizeof(*k->pend));
	k->pend[k->npend++] = (uint32_t)i;
}

void ktab_want(struct ktab *k, size_t idx)
{
	if (k->x)
		return;    /* names come with the block a lookup decoded */
	if (!k->finished || idx >= k->n)
		return;
	uint64_t s0 = kstart(k, idx);
	for (size_t i = idx; i < k->n && kstart(k, i) == s0; i++)
		queue(k, i);
}

struct fetch {
	struct ktab *k;
	struct sym_pool *pool;
	size_t next;                 /* next pend[] entry (sorted by offset) */
};

static void set_name(struct ktab *k, struct sym_pool *pool, uint32_t i, const char *name, size_t len)
{
	const char *s = pool_strndup(pool, name, len);
	char *dm = sym_demangle(s);
	if (dm) {
		s = pool_strdup(pool, dm);
		free(dm);
	}
	if (k->nnames == k->capnames)
		xgrow((void **)&k->names, &k->capnames, k->nnames + 1, sizeof(*k->names));
	k->ref[i] = REF_NAMED | (uint32_t)k->nnames;
	k->names[k->nnames++] = s;
}

static void fetch_block(void *ctx, const char *block, size_t len, uint64_t base)
{
	struct fetch *f = ctx;
	struct ktab *k = f->k;
	while (f->next < k->npend) {
		uint32_t i = k->pend[f->next];
		uint64_t off = k->ref[i] & REF_OFF;
		if (off >= base + len)
			return;
		if (off >= base)
			set_name(k, f->pool, i, block + (off - base),
				 kallsyms_name_len(block + (off - base), block + len));
		f->next++;
	}
}

static int cmp_pend(const void *pa, const void *pb, void *arg)
{
	const struct ktab *k = arg;
	uint32_t a = k->ref[*(const uint32_t *)pa] & REF_OFF;
	uint32_t b = k->ref[*(const uint32_t *)pb] & REF_OFF;
	return a < b ? -1 : a > b;
}

/* Copy the names of every pending symbol out of the text. */
static void fetch_pending(struct ktab *k, struct sym_pool *pool)
{
	if (!k->npend)
		return;
	if (k->src.plain) {
		const char *end = k->src.plain + k->src.raw;
		for (size_t j = 0; j < k->npend; j++) {
			uint32_t i = k->pend[j];
			const char *p = k->src.plain + (k->ref[i] & REF_OFF);
			set_name(k, pool, i, p, kallsyms_name_len(p, end));
		}
	} else {
		/* qsort_r: tables of different domains may resolve on
		 * different threads, so no global comparator context */
		qsort_r(k->pend, k->npend, sizeof(*k->pend), cmp_pend, k);
		struct fetch f = { k, pool, 0 };
		ktext_stream(&k->src, fetch_block, &f);
		k->passes++;
	}
	/* a name the stream no longer yields (cannot happen with the bytes
	 * the table was built from) */
	for (size_t j = 0; j < k->npend; j++)
		if (!(k->ref[k->pend[j]] & REF_NAMED))
			set_name(k, pool, k->pend[j], "[unknown]", 9);
	k->npend = 0;
}

const char *ktab_name(struct ktab *k, size_t idx, struct sym_pool *pool)
{
	if (k->x)
		return kix_name(k, idx, pool);
	if (!k->finished || idx >= k->n)
		return NULL;
	if (!(k->ref[idx] & REF_NAMED)) {
		ktab_want(k, idx);
		if (!k->src.plain && k->passes >= MAX_PASSES)
			for (size_t i = 0; i < k->n; i++)
				queue(k, i);
		fetch_pending(k, pool);
	}
	size_t end = idx + 1;
	uint64_t s0 = kstart(k, idx);
	while (end < k->n && kstart(k, end) == s0)
		end++;
	if (end - idx > 1) {
		/* an alias group: all named now; the alphabetically first wins
		 * and names the whole group from here on */
		uint32_t best = k->ref[idx];
		for (size_t i = idx + 1; i < end; i++) {
			if (!(k->ref[i] & REF_NAMED))
				continue;
			if (strcmp(k->names[k->ref[i] & ~REF_NAMED], k->names[best & ~REF_NAMED]) < 0)
				best = k->ref[i];
		}
		for (size_t i = idx; i < end; i++)
			k->ref[i] = best;
	}
	return k->names[k->ref[idx] & ~REF_NAMED];
}

/* ---- a table over a kernel symbol index (DP_SYMTAB_KSYMIDX) ----
 *
 * Nothing is parsed up front: the block index (validated by
 * dp_ksymidx_open) says which blocks hold core text symbols and their
 * lowest and highest address, so a lookup finds its block by a binary
 * search, decodes that one block (once) and searches it. The table's
 * entries are the index's core text symbols (t T w W, address non-zero,
 * no module): the same ones ksyms_parse gives the text table, with the
 * same alias rules, so names and ranges are those of the text table.
 * The writer never splits an address between blocks, so an alias group
 * is whole in its block. An entry index (idx) is the entry's number in
 * the index (dp_ksymidx_block's first_entry + its place).
 */

struct kixblk {
	const struct dp_ksymblk *d;  /* owned by the index */
	uint32_t *kpos;              /* places of its core text symbols */
	uint32_t nk;
	const char **nm;             /* per kpos: the alias group's name, once asked */
	bool bad;
};

struct kix {
	struct dp_ksymidx *ix;
	uint64_t bias;
	uint32_t *tb;                /* blocks holding core text symbols */
	size_t ntb;
	uint64_t last_end;           /* unbiased end of the last text symbol */
	struct kixblk **blk;
	struct sym_session *s;
	const char *dom;
	bool warned;
	struct dp_ksymnf *nf;        /* the index's name filter, or NULL */
};

struct dp_ksymidx *ktab_index(const struct ktab *k)
{
	return k && k->x ? k->x->ix : NULL;
}

static void kix_free(struct kix *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < dp_ksymidx_nblocks(x->ix); i++)
		if (x->blk[i]) {
			free(x->blk[i]->kpos);
			free(x->blk[i]->nm);
			free(x->blk[i]);
		}
	free(x->blk);
	free(x->tb);
	dp_ksymnf_free(x->nf);
	dp_ksymidx_free(x->ix);
	free(x);
}

struct ktab *ktab_new_index(struct dp_ksymidx *ix, uint64_t bias, uint64_t last_size,
			    struct sym_session *s, const char *dom)
{
	struct ktab *k = xcalloc(1, sizeof(*k));
	struct kix *x = xcalloc(1, sizeof(*x));
	size_t nb = dp_ksymidx_nblocks(ix);
	k->x = x;
	k->finished = true;
	k->n = dp_ksymidx_nsyms(ix);
	x->ix = ix;
	x->bias = bias;
	x->s = s;
	x->dom = dom;
	x->blk = xcalloc(nb + 1, sizeof(*x->blk));
	x->tb = xmalloc((nb + 1) * sizeof(*x->tb));
	for (size_t i = 0; i < nb; i++)
		if (dp_ksymidx_index(ix, i)->text_first)
			x->tb[x->ntb++] = (uint32_t)i;
	if (x->ntb) {
		uint64_t last = dp_ksymidx_index(ix, x->tb[x->ntb - 1])->text_last;
		x->last_end = last + last_size < last ? UINT64_MAX : last + last_size;
	}
	return k;
}

/* Block b decoded, with the places of its text symbols; NULL when damaged
 * (said once per table). */
static struct kixblk *kix_block(struct kix *x, size_t b)
{
	if (x->blk[b])
		return x->blk[b]->bad ? NULL : x->blk[b];
	struct kixblk *kb = x->blk[b] = xcalloc(1, sizeof(*kb));
	char why[160];
	const struct dp_ksymblk *d = dp_ksymidx_block(x->ix, b, why, sizeof(why));
	if (!d) {
		kb->bad = true;
		if (!x->warned && x->s)
			sym_warn(x->s, "domain %s: embedded kernel symbol index damaged (%s): "
				 "some kernel samples are [unknown]", x->dom, why);
		x->warned = true;
		return NULL;
	}
	kb->d = d;
	kb->kpos = xmalloc((d->n ? d->n : 1) * sizeof(*kb->kpos));
	for (uint32_t i = 0; i < d->n; i++)
		if (dp_ksym_core_text(d->type[i], d->mod[i], d->addr[i]))
			kb->kpos[kb->nk++] = i;
	kb->nm = xcalloc(kb->nk ? kb->nk : 1, sizeof(*kb->nm));
	return kb;
}

static bool kix_first(const struct kix *x, uint64_t *start)
{
	if (!x->ntb)
		return false;
	*start = dp_ksymidx_index(x->ix, x->tb[0])->text_first + x->bias;
	return true;
}

static bool kix_find(struct ktab *k, uint64_t addr, size_t *idx, uint64_t *start, uint64_t *end)
{
	struct kix *x = k->x;
	uint64_t key = addr - x->bias;
	size_t lo = 0, hi = x->ntb;    /* first text block starting above key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dp_ksymidx_index(x->ix, x->tb[mid])->text_first <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	size_t j = lo - 1, b = x->tb[j];
	struct kixblk *kb = kix_block(x, b);
	if (!kb)
		return false;
	const uint64_t *a = kb->d->addr;
	lo = 0;
	hi = kb->nk;                   /* first text symbol above key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[kb->kpos[mid]] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;          /* not for a block that matches its index */
	size_t q = lo - 1, p = q;
	uint64_t s0 = a[kb->kpos[q]];
	while (p > 0 && a[kb->kpos[p - 1]] == s0)
		p--;                   /* first of an alias group */
	uint64_t e = q + 1 < kb->nk ? a[kb->kpos[q + 1]]
		     : j + 1 < x->ntb ? dp_ksymidx_index(x->ix, x->tb[j + 1])->text_first
		     : x->last_end;
	if (key >= e)
		return false;
	*idx = dp_ksymidx_index(x->ix, b)->first_entry + kb->kpos[p];
	*start = s0 + x->bias;
	*end = e + x->bias;
	return true;
}

/* The rank of ktab_add: priority, leading underscores, length. */
static uint32_t kix_rank(char type, const char *name, size_t nlen)
{
	unsigned prio = type == 'T' ? 3 : type == 'W' || type == 'w' ? 2 : 1;
	unsigned us = 0;
	while (us < nlen && name[us] == '_')
		us++;
	return (uint32_t)(15 - (prio & 15)) << 28 | (uint32_t)(us > 15 ? 15 : us) << 24 |
	       (uint32_t)(nlen > 0xffffff ? 0xffffff : nlen);
}

static const char *kix_name(struct ktab *k, size_t idx, struct sym_pool *pool)
{
	struct kix *x = k->x;
	size_t b = dp_ksymidx_block_of(x->ix, idx);
	struct kixblk *kb = b == SIZE_MAX ? NULL : kix_block(x, b);
	if (!kb)
		return SYM_UNKNOWN;
	uint32_t pos = (uint32_t)(idx - dp_ksymidx_index(x->ix, b)->first_entry);
	size_t lo = 0, hi = kb->nk;    /* its place among the text symbols */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (kb->kpos[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == kb->nk || kb->kpos[lo] != pos)
		return SYM_UNKNOWN;
	if (kb->nm[lo])
		return kb->nm[lo];
	const struct dp_ksymblk *d = kb->d;
	size_t q = lo;
	while (q + 1 < kb->nk && d->addr[kb->kpos[q + 1]] == d->addr[pos])
		q++;
	/* the best-ranked aliases, then the alphabetically first (demangled) */
	uint32_t best = UINT32_MAX;
	for (size_t i = lo; i <= q; i++) {
		uint32_t e = kb->kpos[i];
		uint32_t r = kix_rank(d->type[e], d->names + d->name[e], d->namelen[e]);
		if (r < best)
			best = r;
	}
	const char *win = NULL;
	for (size_t i = lo; i <= q; i++) {
		uint32_t e = kb->kpos[i];
		const char *nm = d->names + d->name[e];
		if (kix_rank(d->type[e], nm, d->namelen[e]) != best)
			continue;
		char *dm = sym_demangle(nm);
		const char *s = dm ? dm : nm;
		if (!win || strcmp(s, win) < 0)
			win = pool_strdup(pool, s);
		free(dm);
	}
	kb->nm[lo] = win;
	return win;
}

void ktab_set_filter(struct ktab *k, struct dp_ksymnf *nf)
{
	if (!k || !k->x) {
		dp_ksymnf_free(nf);
		return;
	}
	dp_ksymnf_free(k->x->nf);
	k->x->nf = nf;
}

long ktab_name_ranges(struct ktab *k, const char *name, struct sym_pool *pool,
		      struct sym_range **v, size_t *n, size_t *cap)
{
	struct kix *x = k ? k->x : NULL;
	if (!x || !x->nf)
		return -1;
	size_t len = strlen(name), found = 0;
	for (size_t j = 0; j < x->ntb; j++) {
		size_t b = x->tb[j];
		if (!dp_ksymnf_maybe(x->nf, b, name, len))
			continue;
		/* a damaged block names none of its addresses (kix_find) */
		struct kixblk *kb = kix_block(x, b);
		if (!kb)
			continue;
		const struct dp_ksymblk *d = kb->d;
		const uint64_t *a = d->addr;
		uint32_t first = dp_ksymidx_index(x->ix, b)->first_entry;
		for (size_t p = 0, q; p < kb->nk; p = q) {
			/* the alias group [p, q): its name is kix_name's choice
			 * among them, so look only where one of them is name */
			bool any = false;
			for (q = p; q < kb->nk && a[kb->kpos[q]] == a[kb->kpos[p]]; q++) {
				uint32_t e = kb->kpos[q];
				const char *nm = d->names + d->name[e];
				any |= d->namelen[e] == len ? !memcmp(nm, name, len)
							    : nm[0] == '_' && (nm[1] == 'Z' || nm[1] == 'R');
			}
			if (!any || strcmp(kix_name(k, first + kb->kpos[p], pool), name))
				continue;
			uint64_t e = q < kb->nk ? a[kb->kpos[q]]
				     : j + 1 < x->ntb ? dp_ksymidx_index(x->ix, x->tb[j + 1])->text_first
				     : x->last_end;
			xgrow((void **)v, cap, *n + 1, sizeof(**v));
			(*v)[(*n)++] = (struct sym_range){ a[kb->kpos[p]] + x->bias, e + x->bias };
			found++;
		}
	}
	return (long)found;
}
