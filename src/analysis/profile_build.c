// SPDX-License-Identifier: MIT
/*
 * Passes 2 and 3 of building a profile (see profile.c):
 *  2. resolve: each unique (map, address) of the keys is resolved once
 *     with sym_resolve and mapped to a symbol index (unique domain, image,
 *     symbol[, pid]).
 *  3. build: per unique key, the frames become symbol indexes; self,
 *     total, edges, image summary and unique stacks are summed from there,
 *     then sorted into the arrays profile.h describes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"
#include "util/fmt.h"

/* ---- resolution ---- */

/* k's process name: the one in force at its samples, else the last */
static const char *key_comm(struct sym_session *sym, const struct key *k)
{
	return k->comm ? k->comm : sym_comm(sym, k->domain, k->pid);
}

struct sym_want {
	const struct profile_symbol *syms;
	uint32_t domain, pid;
	const char *comm, *image, *symbol, *srcline;
};

static bool sym_eq(const void *ctx, uint32_t e)
{
	const struct sym_want *w = ctx;
	const struct profile_symbol *y = &w->syms[e];
	return y->domain == w->domain && y->pid == w->pid && streq(y->comm, w->comm) &&
	       streq(y->image, w->image) &&
	       streq(y->symbol, w->symbol) &&
	       (y->srcline == w->srcline || (y->srcline && w->srcline && streq(y->srcline, w->srcline)));
}

/* srcline: NULL, or the row's source line (opts.srcline); inl: the
 * function an inlined symbol was inlined into; pid and comm (key_comm)
 * only split rows by_process */
static uint32_t sym_intern(struct loader *L, uint32_t domain, const struct sym_result *r,
			   bool kernel, uint32_t pid, const char *comm, const char *srcline,
			   const char *inl)
{
	struct profile *p = L->p;
	bool bp = L->o.by_process;
	if (!bp) {
		pid = 0;
		comm = NULL;
	}
	uint64_t h = hash_str(hash_fold64(hash_fold64(77, domain), pid), comm);
	h = hash_str(hash_str(h, r->image), r->symbol);
	if (srcline)
		h = hash_str(h, srcline);
	struct hidx *t = &L->symtab;
	struct sym_want want = { p->syms, domain, pid, comm, r->image, r->symbol, srcline };
	size_t i;
	uint32_t found = hidx_find(t, h, sym_eq, &want, &i);
	if (found != HIDX_NONE)
		return found;
	xgrow((void **)&p->syms, &L->capsyms, p->nsyms + 1, sizeof(*p->syms));
	uint32_t idx = (uint32_t)p->nsyms++;
	struct profile_symbol *y = &p->syms[idx];
	memset(y, 0, sizeof(*y));
	y->domain = domain;
	y->domain_name = profile_domain_get(L, domain)->name;
	y->image = r->image ? r->image : "[unknown]";
	y->image_path = r->image_path ? r->image_path : y->image;
	y->symbol = r->symbol ? r->symbol : "[unknown]";
	y->known = r->known;
	y->fde = r->fde;
	y->kernel = kernel;
	y->pid = pid;
	y->comm = comm;
	y->srcline = srcline;
	y->inlined_into = inl;
	hidx_fill(t, i, h, idx);
	return idx;
}

/*
 * opts.srcline: the row's source line for (map, ip), and with inlining
 * on, r->symbol becomes the inlined function (*inl the one it was
 * inlined into); with --no-inline the line is the inlined call's, in
 * the function the code was compiled into. An image without line tables
 * is said once (a warning), its rows "[no line info]".
 */
/* "file:line" kept in the profile's strings (no snprintf: once per
 * distinct address) */
static const char *keep_line(struct priv *pv, const char *file, unsigned line)
{
	char buf[600];
	size_t n = strnlen(file, 560);
	memcpy(buf, file, n);
	buf[n++] = ':';
	n += fmt_u64(buf + n, line);
	buf[n] = 0;
	return profile_keep_str(pv, buf);
}

static const char *line_of(struct loader *L, const struct sym_map *map, uint64_t ip,
			   struct sym_result *r, const char **inl)
{
	struct priv *pv = L->pv;
	struct sym_srcline sl;
	char buf[600];
	if (!sym_srcline(pv->sym, map, ip, &sl)) {
		if (sl.has_table)
			return "??";
		const char *img = sym_image_name(sym_map_image(map));
		if (!strmap_get(&L->nolines, img)) {
			strmap_put(&L->nolines, img, (void *)1);
			snprintf(buf, sizeof(buf), "no line information for %s (no DWARF line tables in it "
				 "or a debug file): its rows are [no line info]", img);
			profile_add_warning(L->p, buf);
		}
		return "[no line info]";
	}
	if (sl.inlined && !L->o.no_inline) {
		*inl = r->symbol;   /* the function the code was compiled into */
		r->symbol = sl.inlined;
	} else if (sl.inlined && sl.call_file && sl.call_line) {
		return keep_line(pv, sl.call_file, sl.call_line);
	}
	return keep_line(pv, sl.file, sl.line);
}

struct addr_want {
	const struct loader *L;
	const struct key *k;
	const char *comm;            /* by_process: key_comm, else NULL */
	const struct sym_image *img;
	uint64_t addr;
};

static bool addr_eq(const void *ctx, uint32_t e)
{
	const struct addr_want *w = ctx;
	const struct loader *L = w->L;
	const struct addr *a = &L->addrs[e];
	return a->img == w->img && a->addr == w->addr && a->domain == w->k->domain &&
	       (!L->o.by_process ||
		(L->p->syms[a->sym].pid == w->k->pid && streq(L->p->syms[a->sym].comm, w->comm)));
}

/*
 * Symbol index of (map, ip) for a frame of key k. What sym_resolve and
 * sym_srcline answer depends only on the map's image and the image
 * address (ip + the map's delta), so that is the memo's key: a
 * system-wide recording has thousands of short processes of one
 * compiler, each with its own maps of the same files, and keyed by map
 * each of them resolved every address again. An image without symbols
 * ([anon] JIT code, [heap]) answers the same for every address.
 */
static uint32_t resolve_addr(struct loader *L, const struct key *k, const struct sym_map *map,
			     uint64_t ip, uint8_t mode)
{
	const struct sym_image *img = sym_map_image(map);
	uint64_t ia = sym_map_symbolless(map) ? 0 : sym_map_to_image(map, ip);
	uint64_t h = hash_fold64(hash_fold64(99, (uint64_t)(uintptr_t)img), ia);
	const char *comm = L->o.by_process ? key_comm(L->pv->sym, k) : NULL;
	h = hash_str(hash_fold64(h, L->o.by_process ? k->pid : 0), comm);
	struct hidx *t = &L->addrtab;
	struct addr_want want = { L, k, comm, img, ia };
	size_t i;
	uint32_t found = hidx_find(t, h, addr_eq, &want, &i);
	if (found != HIDX_NONE)
		return L->addrs[found].sym;
	struct sym_result r;
	memset(&r, 0, sizeof(r));
	sym_resolve(L->pv->sym, map, ip, &r);
	const char *srcline = NULL, *inl = NULL;
	if (L->o.srcline)
		srcline = line_of(L, map, ip, &r, &inl);
	uint32_t sym = sym_intern(L, k->domain, &r, mode_is_kernel(mode), k->pid, comm, srcline, inl);
	xgrow((void **)&L->addrs, &L->capaddrs, L->naddrs + 1, sizeof(*L->addrs));
	struct addr *a = &L->addrs[L->naddrs];
	a->img = img;
	a->addr = ia;
	a->sym = sym;
	a->domain = k->domain;
	hidx_fill(t, i, h, (uint32_t)L->naddrs);
	L->naddrs++;
	return sym;
}

/* ---- build ---- */

struct edge_tab {
	struct hidx t;
	struct profile_edge *e;
	uint64_t *stamp;
	size_t n, cap;
};

struct edge_want {
	const struct profile_edge *e;
	uint32_t caller, callee;
};

static bool edge_eq(const void *ctx, uint32_t i)
{
	const struct edge_want *w = ctx;
	return w->e[i].caller == w->caller && w->e[i].callee == w->callee;
}

static void edge_add(struct profile *p, struct edge_tab *E, uint32_t caller, uint32_t callee,
		     uint64_t c, uint64_t stamp)
{
	uint64_t h = hash_fold64(hash_fold64(55, caller), callee);
	struct edge_want want = { E->e, caller, callee };
	size_t i;
	uint32_t found = hidx_find(&E->t, h, edge_eq, &want, &i);
	if (found != HIDX_NONE) {
		if (E->stamp[found] != stamp) {
			E->stamp[found] = stamp;
			E->e[found].count += c;
		}
		return;
	}
	size_t cap0 = E->cap;
	xgrow((void **)&E->e, &E->cap, E->n + 1, sizeof(*E->e));
	if (E->cap != cap0)
		E->stamp = xrealloc(E->stamp, E->cap * sizeof(*E->stamp));
	E->e[E->n] = (struct profile_edge){ caller, callee, c };
	E->stamp[E->n] = stamp;
	hidx_fill(&E->t, i, h, (uint32_t)E->n);
	E->n++;
	(void)p;
}

struct img_tab {
	struct hidx t;
	struct profile_image *v;
	size_t n, cap;
};

struct img_want {
	const struct profile_image *v;
	uint32_t domain;
	const char *app, *image;
};

static bool img_eq(const void *ctx, uint32_t i)
{
	const struct img_want *w = ctx;
	const struct profile_image *e = &w->v[i];
	return e->domain == w->domain && streq(e->app, w->app) && streq(e->image, w->image);
}

static void image_add(struct img_tab *I, uint32_t domain, const char *dname, const char *app,
		      const char *image, uint64_t c)
{
	uint64_t h = hash_str(hash_str(hash_fold64(33, domain), app), image);
	struct img_want want = { I->v, domain, app, image };
	size_t i;
	uint32_t found = hidx_find(&I->t, h, img_eq, &want, &i);
	if (found != HIDX_NONE) {
		I->v[found].samples += c;
		return;
	}
	xgrow((void **)&I->v, &I->cap, I->n + 1, sizeof(*I->v));
	I->v[I->n] = (struct profile_image){ domain, dname, app, image, c };
	hidx_fill(&I->t, i, h, (uint32_t)I->n);
	I->n++;
}

struct stack_tab {
	struct hidx t;
	struct stack_ent *v;
	size_t n, cap;
	uint32_t *fr;
	size_t nfr, capfr;
};

struct stack_want {
	const struct stack_tab *S;
	const struct key *k;
	const char *comm;
	const uint32_t *leaf_first;
	uint32_t n;
	uint32_t tid;
};

static bool stack_eq(const void *ctx, uint32_t i)
{
	const struct stack_want *w = ctx;
	const struct stack_ent *e = &w->S->v[i];
	const struct key *k = w->k;
	uint32_t n = w->n;
	if (e->n != n || e->domain != k->domain || e->pid != k->pid || e->tid != w->tid ||
	    e->mode != k->mode || e->event != k->event || strcmp(e->comm, w->comm))
		return false;
	/* stored root-first */
	for (uint32_t j = 0; j < n; j++)
		if (w->S->fr[e->off + j] != w->leaf_first[n - 1 - j])
			return false;
	return true;
}

static void stack_add(struct stack_tab *S, const struct key *k, const char *comm, uint32_t tid,
		      const uint32_t *leaf_first, uint32_t n)
{
	uint64_t h = hash_str(hash_fold64(hash_fold64(11, k->domain), k->pid), comm);
	if (tid)
		h = hash_fold64(h, tid);
	h = hash_fold64(hash_fold64(h, k->mode), k->event);
	for (uint32_t j = 0; j < n; j++)
		h = hash_fold64(h, leaf_first[j]);
	struct stack_want want = { S, k, comm, leaf_first, n, tid };
	size_t i;
	uint32_t found = hidx_find(&S->t, h, stack_eq, &want, &i);
	if (found != HIDX_NONE) {
		S->v[found].count += k->count;
		S->v[found].period += k->period;
		return;
	}
	xgrow((void **)&S->v, &S->cap, S->n + 1, sizeof(*S->v));
	xgrow((void **)&S->fr, &S->capfr, S->nfr + n, sizeof(*S->fr));
	struct stack_ent *e = &S->v[S->n];
	*e = (struct stack_ent){ h, (uint32_t)S->nfr, n, k->domain, k->pid, tid, comm, k->mode,
				 k->event, k->count, k->period };
	for (uint32_t j = 0; j < n; j++)
		S->fr[S->nfr + j] = leaf_first[n - 1 - j];
	S->nfr += n;
	hidx_fill(&S->t, i, h, (uint32_t)S->n);
	S->n++;
}

/* Edges grouped by one end (key), heaviest first within a group, then by
 * the other end: the callers list orders by (caller, -count, callee), the
 * callees list by (callee, -count, caller). */
static int edge_order(uint32_t xkey, uint32_t ykey, uint64_t xcount, uint64_t ycount,
		      uint32_t xother, uint32_t yother)
{
	if (xkey != ykey)
		return xkey < ykey ? -1 : 1;
	if (xcount != ycount)
		return xcount > ycount ? -1 : 1;
	return xother < yother ? -1 : xother > yother;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct profile_stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->nframes < y->nframes ? -1 : x->nframes > y->nframes;
}

struct app_row {
	struct profile_image im;
	uint64_t app_total;
};

static int cmp_app_row(const void *a, const void *b)
{
	const struct app_row *x = a, *y = b;
	if (x->app_total != y->app_total)
		return x->app_total > y->app_total ? -1 : 1;
	if (x->im.domain != y->im.domain)
		return x->im.domain < y->im.domain ? -1 : 1;
	int c = strcmp(x->im.app, y->im.app);
	if (c)
		return c;
	if (x->im.samples != y->im.samples)
		return x->im.samples > y->im.samples ? -1 : 1;
	return strcmp(x->im.image, y->im.image);
}

static int cmp_app_group(const void *a, const void *b)
{
	const struct app_row *x = a, *y = b;
	if (x->im.domain != y->im.domain)
		return x->im.domain < y->im.domain ? -1 : 1;
	return strcmp(x->im.app, y->im.app);
}

static void sort_images(struct profile *p)
{
	size_t n = p->nimages;
	struct app_row *r = xmalloc((n ? n : 1) * sizeof(*r));
	for (size_t i = 0; i < n; i++)
		r[i] = (struct app_row){ p->images[i], 0 };
	/* per-application totals: group rows by (domain, app) with a sort,
	 * not by comparing every row with every other (a file with many
	 * domains has as many applications) */
	if (n)
		qsort(r, n, sizeof(*r), cmp_app_group);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t tot = 0;
		for (j = i; j < n && !cmp_app_group(&r[i], &r[j]); j++)
			tot += r[j].im.samples;
		for (size_t k = i; k < j; k++)
			r[k].app_total = tot;
	}
	if (n)
		qsort(r, n, sizeof(*r), cmp_app_row);
	for (size_t i = 0; i < n; i++)
		p->images[i] = r[i].im;
	free(r);
}

/* Within one group of edges (same caller, or same callee): heaviest
 * first, then by the other end. */
static int cmp_in_group(const void *a, const void *b)
{
	const struct profile_edge *x = *(const struct profile_edge *const *)a;
	const struct profile_edge *y = *(const struct profile_edge *const *)b;
	return edge_order(0, 0, x->count, y->count, x->caller, y->caller);
}

static int cmp_out_group(const void *a, const void *b)
{
	const struct profile_edge *x = *(const struct profile_edge *const *)a;
	const struct profile_edge *y = *(const struct profile_edge *const *)b;
	return edge_order(0, 0, x->count, y->count, x->callee, y->callee);
}

/* v[off[g]..off[g+1]) for every group g sorted with cmp: insertion sort
 * for the small groups most symbols have, qsort for the rest */
static void sort_groups(const struct profile_edge **v, const uint32_t *off, size_t ngroups,
			int (*cmp)(const void *, const void *))
{
	for (size_t g = 0; g < ngroups; g++) {
		size_t lo = off[g], n = off[g + 1] - lo;
		if (n > 16) {
			qsort(v + lo, n, sizeof(*v), cmp);
			continue;
		}
		for (size_t i = lo + 1; i < lo + n; i++) {
			const struct profile_edge *x = v[i];
			size_t j = i;
			for (; j > lo && cmp(&v[j - 1], &x) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
}

/*
 * The call graph's edges: a sorted array plus per-symbol in/out views
 * (pv->in_ptrs/out_ptrs, indexed by in_off/out_off). Takes E's edges.
 * Each order is a total one (an edge is unique per caller and callee),
 * so the edges are placed by their group's symbol (a counting sort) and
 * only each group is sorted: three qsorts of every edge were a sixth of
 * a large `report -g`.
 */
static void finish_edges(struct profile *p, struct priv *pv, struct edge_tab *E)
{
	size_t ns = p->nsyms, ne = E->n;
	pv->in_ptrs = xmalloc((ne ? ne : 1) * sizeof(*pv->in_ptrs));
	pv->out_ptrs = xmalloc((ne ? ne : 1) * sizeof(*pv->out_ptrs));
	pv->in_off = xcalloc(ns + 1, sizeof(*pv->in_off));
	pv->out_off = xcalloc(ns + 1, sizeof(*pv->out_off));
	for (size_t j = 0; j < ne; j++) {
		pv->in_off[E->e[j].callee + 1]++;
		pv->out_off[E->e[j].caller + 1]++;
	}
	for (size_t j = 0; j < ns; j++) {
		pv->in_off[j + 1] += pv->in_off[j];
		pv->out_off[j + 1] += pv->out_off[j];
	}
	/* p->edges in (caller, -count, callee) order: the out view's */
	uint32_t *fill = xmalloc((ns ? ns : 1) * sizeof(*fill));
	memcpy(fill, pv->out_off, ns * sizeof(*fill));
	for (size_t j = 0; j < ne; j++)
		pv->out_ptrs[fill[E->e[j].caller]++] = &E->e[j];
	sort_groups(pv->out_ptrs, pv->out_off, ns, cmp_out_group);
	p->edges = xmalloc((ne ? ne : 1) * sizeof(*p->edges));
	p->nedges = ne;
	for (size_t j = 0; j < ne; j++)
		p->edges[j] = *pv->out_ptrs[j];
	free(E->e);
	E->e = NULL;
	for (size_t j = 0; j < ne; j++)
		pv->out_ptrs[j] = &p->edges[j];
	memcpy(fill, pv->in_off, ns * sizeof(*fill));
	for (size_t j = 0; j < ne; j++)
		pv->in_ptrs[fill[p->edges[j].callee]++] = &p->edges[j];
	sort_groups(pv->in_ptrs, pv->in_off, ns, cmp_in_group);
	free(fill);
	hidx_release(&E->t);
	free(E->stamp);
}

/* The stacks table, sorted, from S (its frames move to pv->frames). */
static void finish_stacks(struct loader *L, struct stack_tab *S)
{
	struct profile *p = L->p;
	struct priv *pv = L->pv;
	p->stacks = xmalloc((S->n ? S->n : 1) * sizeof(*p->stacks));
	p->nstacks = S->n;
	pv->frames = S->fr;
	for (size_t j = 0; j < S->n; j++) {
		struct stack_ent *e = &S->v[j];
		p->stacks[j] = (struct profile_stack){
			.domain = e->domain,
			.domain_name = profile_domain_get(L, e->domain)->name,
			.pid = e->pid,
			.tid = e->tid,
			.comm = e->comm,
			.mode = e->mode,
			.nframes = e->n,
			.frames = S->fr + e->off,
			.count = e->count,
			.event = e->event,
			.period = e->period,
		};
	}
	if (S->n)
		qsort(p->stacks, S->n, sizeof(*p->stacks), cmp_stack);
	free(S->v);
	hidx_release(&S->t);
}

void profile_build(struct loader *L)
{
	struct profile *p = L->p;
	struct priv *pv = L->pv;
	const struct profile_filter *f = L->f;

	/* The keys' index was for reading: gone before the symbols load. */
	hidx_release(&L->keytab);
	hidx_init(&L->addrtab, 1024);
	hidx_init(&L->symtab, 1024);

	/* The comm filter, and every address that will be resolved announced
	 * first, so the kernel table fetches its names in one pass. An
	 * address announced twice is announced once (sym_want is a set), and
	 * kernel frames repeat across a call graph's keys: a small
	 * direct-mapped memo skips most repeats, each a search of the kernel
	 * table (a sixth of a real `report -g` before it). */
	enum { WANT_MEMO = 4096 };
	struct want_memo { const struct sym_map *m; uint64_t ip; } *memo =
		xcalloc(WANT_MEMO, sizeof(*memo));
	/* annotate NAME: only the leaves that may be NAME are resolved (the
	 * others were three quarters of its instructions on a large -g
	 * recording, each resolved to be dropped) */
	struct hits_narrow *narrow = L->narrow;
	L->narrow = NULL;
	if (!narrow && L->o.hits && L->o.hits_only && L->o.hits_symbol && !(f && f->image))
		narrow = hits_narrow_new(L);
	for (size_t i = 0; i < L->nkeys; i++) {
		struct key *k = &L->keys[i];
		k->keep = !(f && f->comm && strcmp(key_comm(pv->sym, k), f->comm));
		if (!k->keep)
			continue;
		if (narrow && !hits_narrow_in(narrow, k)) {
			k->leaf_sym = HITS_OUT;
			continue;
		}
		sym_want(pv->sym, k->map, k->ip);
		const uint64_t *ch = L->chain + k->chain_off;
		for (uint32_t j = 0; j < k->nchain; j++) {
			const struct sym_map *m = L->chain_map[k->chain_off + j];
			if (!m)
				continue;
			uint64_t ip = ch[j] ? ch[j] - 1 : 0;
			struct want_memo *w =
				&memo[hash_fold64((uint64_t)(uintptr_t)m, ip) & (WANT_MEMO - 1)];
			if (w->m == m && w->ip == ip)
				continue;
			w->m = m;
			w->ip = ip;
			sym_want(pv->sym, m, ip);
		}
	}
	free(memo);
	hits_narrow_free(narrow);
	if (L->early)
		sym_warn_flush(pv->sym);   /* held while reading (hits_early_in) */

	/* Source lines: every leaf's looked up ahead, the images on as many
	 * threads as there are CPUs (each image's DWARF is one-time work:
	 * libc's debug file is 11 MB to inflate), before the loop below
	 * asks for them one by one in the same order. */
	if (L->o.srcline) {
		const struct sym_map **pm = xmalloc((L->nkeys ? L->nkeys : 1) * sizeof(*pm));
		uint64_t *pi = xmalloc((L->nkeys ? L->nkeys : 1) * sizeof(*pi));
		size_t np = 0;
		for (size_t i = 0; i < L->nkeys; i++)
			if (L->keys[i].keep && L->keys[i].leaf_sym != HITS_OUT && L->keys[i].map) {
				pm[np] = L->keys[i].map;
				pi[np++] = L->keys[i].ip;
			}
		sym_srcline_prefetch(pv->sym, pm, pi, np, 0);
		free(pm);
		free(pi);
	}

	/* Leaf resolution and the post-read image filter. */
	for (size_t i = 0; i < L->nkeys; i++) {
		struct key *k = &L->keys[i];
		if (!k->keep || k->leaf_sym == HITS_OUT)
			continue;
		k->leaf_sym = resolve_addr(L, k, k->map, k->ip, k->mode);
		if (f && f->image) {
			const struct profile_symbol *y = &p->syms[k->leaf_sym];
			if (strcmp(y->image, f->image) && strcmp(y->image_path, f->image))
				k->keep = false;
		}
	}

	struct edge_tab E = { 0 };
	struct img_tab I = { 0 };
	struct stack_tab S = { 0 };
	hidx_init(&I.t, 256);
	if (L->o.callgraph)
		hidx_init(&E.t, 1024);
	if (L->o.stacks)
		hidx_init(&S.t, 1024);

	uint32_t *fr = NULL;
	size_t capfr = 0;
	uint64_t *stamp = NULL;
	size_t capstamp = 0;

	for (size_t i = 0; i < L->nkeys; i++) {
		struct key *k = &L->keys[i];
		if (!k->keep)
			continue;
		uint64_t c = k->count;
		p->matched += c;
		/* by index: p->domains may move when a domain is added */
		size_t dom = (size_t)(profile_domain_get(L, k->domain) - p->domains);
		p->domains[dom].samples += c;
		if (k->leaf_sym == HITS_OUT)
			continue;
		if (L->o.hits && (!L->o.hits_symbol || !strcmp(p->syms[k->leaf_sym].symbol, L->o.hits_symbol)))
			hits_add(L, k);

		/* frames, leaf first */
		xgrow((void **)&fr, &capfr, k->nchain + 1, sizeof(*fr));
		uint32_t n = 0;
		fr[n++] = k->leaf_sym;
		const uint64_t *ch = L->chain + k->chain_off;
		for (uint32_t j = 0; j < k->nchain; j++) {
			const struct sym_map *m = L->chain_map[k->chain_off + j];
			if (!m)
				continue;
			fr[n++] = resolve_addr(L, k, m, ch[j] ? ch[j] - 1 : 0,
					       L->chain_mode[k->chain_off + j]);
		}

		if (capstamp < p->nsyms) {
			size_t old = capstamp;
			capstamp = p->nsyms * 2;
			stamp = xrealloc(stamp, capstamp * sizeof(*stamp));
			memset(stamp + old, 0, (capstamp - old) * sizeof(*stamp));
		}
		p->syms[fr[0]].self += c;
		for (uint32_t j = 0; j < n; j++)
			if (stamp[fr[j]] != i + 1) {
				stamp[fr[j]] = i + 1;
				p->syms[fr[j]].total += c;
			}
		if (L->o.callgraph)
			for (uint32_t j = 0; j + 1 < n; j++)
				edge_add(p, &E, fr[j + 1], fr[j], c, i + 1);

		const struct profile_symbol *leaf = &p->syms[fr[0]];
		/* A passive domain has no process names: its samples form one
		 * application, "[guest]", under the domain's name. */
		const char *comm = key_comm(pv->sym, k);
		const char *app = p->domains[dom].kind == DP_DOMAIN_PASSIVE ? "[guest]" : comm;
		image_add(&I, k->domain, leaf->domain_name, app, leaf->image, c);
		if (L->o.stacks)
			stack_add(&S, k, comm, L->key_tid ? L->key_tid[i] : 0, fr, n);
	}
	free(fr);
	free(stamp);
	/* Every address is resolved: the raw chains and the address and
	 * symbol indexes go before the results are sorted (what is left, the
	 * keys, the timeline reads) */
	free(L->chain);
	free(L->chain_map);
	free(L->chain_mode);
	L->chain = NULL;
	L->chain_map = NULL;
	L->chain_mode = NULL;
	L->capchain = L->capchain_map = L->capchain_mode = 0;
	free(L->addrs);
	L->addrs = NULL;
	L->capaddrs = 0;
	hidx_release(&L->addrtab);
	hidx_release(&L->symtab);

	p->unique_keys = L->nkeys;
	p->unique_addrs = L->naddrs;

	if (L->o.callgraph)
		finish_edges(p, pv, &E);

	p->images = I.v;
	p->nimages = I.n;
	hidx_release(&I.t);
	sort_images(p);

	if (L->o.stacks)
		finish_stacks(L, &S);
	if (L->o.hits)
		hits_finish(L);

	const char *const *w;
	size_t nw = sym_warnings(pv->sym, &w);
	for (size_t j = 0; j < nw; j++)
		profile_add_warning(p, w[j]);
}

