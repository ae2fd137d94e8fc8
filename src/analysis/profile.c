// SPDX-License-Identifier: MIT
/*
 * Building the aggregated profile (see profile.h for the contract).
 *
 * Three passes, each over less data than the one before:
 *  1. read: every record once; metadata goes to the symbol session in file
 *     order, each sample is counted under its unique key (domain, pid,
 *     mode, asid, leaf map, leaf ip, raw call chain) in an open-addressing
 *     table. Chains live in one growing arena; nothing is allocated per
 *     sample.
 *  2. resolve: each unique (map, address) of the keys is resolved once
 *     with sym_resolve and mapped to a symbol index (unique domain, image,
 *     symbol[, pid]).
 *  3. build: per unique key, the frames become symbol indexes; self,
 *     total, edges, image summary and unique stacks are summed from there.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "format/scan.h"
#include "symbols/symbols.h"
#include "util/addrspace.h"
#include "util/hmap.h"
#include "util/sat.h"
#include "util/xalloc.h"

/* perf's call-chain context markers (linux/perf_event.h). */
#define CTX_HV           ((uint64_t)-32)
#define CTX_KERNEL       ((uint64_t)-128)
#define CTX_USER         ((uint64_t)-512)
#define CTX_GUEST        ((uint64_t)-2048)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER   ((uint64_t)-2560)
#define CTX_MAX          ((uint64_t)-4095)

static inline uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0x9E3779B97F4A7C15ull;
	h ^= h >> 29;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	uint64_t f = 0xcbf29ce484222325ull;
	if (s)
		for (; *s; s++) {
			f ^= (unsigned char)*s;
			f *= 0x100000001b3ull;
		}
	return mix(h, f);
}

static inline bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- open-addressing index: slots hold entry index + 1, 0 = empty ---- */

struct oa {
	uint32_t *slot;
	uint64_t *hash;   /* hash of the entry in each slot, to skip compares */
	size_t cap;       /* power of two */
	size_t n;
};

static void oa_init(struct oa *t, size_t cap)
{
	t->cap = cap;
	t->n = 0;
	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->hash = xmalloc(cap * sizeof(*t->hash));
}

static void oa_release(struct oa *t)
{
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

static void oa_insert_slot(struct oa *t, uint64_t h, uint32_t idx)
{
	size_t m = t->cap - 1, i = h & m;
	while (t->slot[i])
		i = (i + 1) & m;
	t->slot[i] = idx + 1;
	t->hash[i] = h;
	t->n++;
}

static void oa_grow_if_needed(struct oa *t)
{
	if ((t->n + 1) * 10 < t->cap * 7)
		return;
	struct oa old = *t;
	oa_init(t, old.cap * 2);
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i])
			oa_insert_slot(t, old.hash[i], old.slot[i] - 1);
	oa_release(&old);
}

/* ---- private state ---- */

/* One unique sample key (64 bytes; the table holds its hash). */
struct key {
	uint64_t ip;
	uint64_t asid;
	uint64_t count;
	uint64_t period;             /* sum of the samples' periods */
	const struct sym_map *map;
	uint32_t domain, pid;
	uint32_t chain_off, nchain;  /* raw call chain in keys' arena */
	uint32_t leaf_sym;           /* filled by resolve */
	uint16_t event;
	uint8_t mode;
	bool keep;
};

struct addr {
	const struct sym_map *map;
	uint64_t ip;
	uint32_t sym;
};

struct stack_ent {
	uint64_t hash;
	uint32_t off, n;
	uint32_t domain, pid;
	uint8_t mode;
	uint16_t event;
	uint64_t count, period;
};

struct priv {
	struct sym_session *sym;
	char **strings;              /* copies of header/event/domain strings */
	size_t nstrings, capstrings;
	uint32_t *frames;            /* stack frames, root-first */
	const struct profile_edge **in_ptrs, **out_ptrs;
	uint32_t *in_off, *out_off;
	/* id -> index+1 in p->domains / p->events: a file may hold tens of
	 * thousands of domains, each looked up per unique key */
	struct hmap domidx, evidx;
};

struct loader {
	struct profile *p;
	struct priv *pv;
	const struct profile_filter *f;
	struct profile_opts o;

	/* domain filter: resolved when the DOMAIN record appears */
	bool dom_filter;
	bool dom_found;
	uint32_t dom_id;

	struct key *keys;
	size_t nkeys, capkeys;
	struct oa keytab;
	uint64_t *chain;             /* raw chains */
	size_t nchain, capchain;
	const struct sym_map **chain_map; /* per chain slot: map of that frame (NULL: marker / skipped) */
	uint8_t *chain_mode;
	size_t capchain_map, capchain_mode;

	struct addr *addrs;
	size_t naddrs, capaddrs;
	struct oa addrtab;

	size_t capsyms;
	struct oa symtab;
	size_t capdomains, capevents;
};

static const char *keep_str(struct priv *pv, const char *s)
{
	char *c = xstrdup(s ? s : "");
	xgrow((void **)&pv->strings, &pv->capstrings, pv->nstrings + 1, sizeof(char *));
	pv->strings[pv->nstrings++] = c;
	return c;
}

static void add_warning(struct profile *p, const char *s)
{
	p->warnings = xrealloc(p->warnings, (p->nwarnings + 1) * sizeof(char *));
	p->warnings[p->nwarnings++] = xstrdup(s);
}

static struct profile_domain *domain_get(struct loader *L, uint32_t id)
{
	struct profile *p = L->p;
	uintptr_t at = (uintptr_t)u64map_get(&L->pv->domidx, id);
	if (at)
		return &p->domains[at - 1];
	xgrow((void **)&p->domains, &L->capdomains, p->ndomains + 1, sizeof(*p->domains));
	struct profile_domain *d = &p->domains[p->ndomains++];
	u64map_put(&L->pv->domidx, id, (void *)(uintptr_t)p->ndomains);
	memset(d, 0, sizeof(*d));
	d->id = id;
	d->kind = id == DP_HOST_DOMAIN ? DP_DOMAIN_HOST : DP_DOMAIN_PASSIVE;
	char name[32];
	if (id == DP_HOST_DOMAIN)
		snprintf(name, sizeof(name), "host");
	else
		snprintf(name, sizeof(name), "dom%u", id);
	d->name = keep_str(L->pv, name);
	d->address = "";
	d->symsrc = "";
	return d;
}

static void on_domain(struct loader *L, const struct dp_domain *dd)
{
	struct profile_domain *d = domain_get(L, dd->id);
	d->kind = dd->kind;
	d->vcpus = dd->vcpus;
	d->kaslr_offset = dd->kaslr_offset;
	d->name = keep_str(L->pv, dd->name && *dd->name ? dd->name : d->name);
	d->address = keep_str(L->pv, dd->address);
	d->symsrc = keep_str(L->pv, dd->symsrc);
	sym_set_domain(L->pv->sym, dd->id, dd->kind, d->name, dd->kaslr_offset);
	if (L->dom_filter && !L->dom_found && streq(d->name, L->f->domain)) {
		L->dom_found = true;
		L->dom_id = dd->id;
	}
}

static void on_event(struct loader *L, const struct dp_event *e)
{
	struct profile *p = L->p;
	if (u64map_get(&L->pv->evidx, e->id))
		return;
	xgrow((void **)&p->events, &L->capevents, p->nevents + 1, sizeof(*p->events));
	struct profile_event *pe = &p->events[p->nevents++];
	u64map_put(&L->pv->evidx, e->id, (void *)(uintptr_t)p->nevents);
	pe->id = e->id;
	pe->type = e->type;
	pe->config = e->config;
	pe->period = e->period;
	pe->freq = e->freq;
	pe->name = keep_str(L->pv, e->name);
}

static inline bool mode_is_kernel(uint8_t m)
{
	return m == DP_MODE_KERNEL || m == DP_MODE_GUEST_KERNEL || m == DP_MODE_HYPERVISOR;
}

static bool mode_matches(int want, uint8_t m)
{
	if (!want)
		return true;
	if (want == PROFILE_MODE_KERNEL)
		return mode_is_kernel(m);
	return m == DP_MODE_USER || m == DP_MODE_GUEST_USER;
}

/* Mode of the frames after a context marker. */
static uint8_t ctx_mode(uint64_t v, uint8_t cur)
{
	switch (v) {
	case CTX_HV: return DP_MODE_HYPERVISOR;
	case CTX_KERNEL: return DP_MODE_KERNEL;
	case CTX_USER: return DP_MODE_USER;
	case CTX_GUEST_KERNEL: return DP_MODE_GUEST_KERNEL;
	case CTX_GUEST_USER: return DP_MODE_GUEST_USER;
	case CTX_GUEST: return DP_MODE_GUEST_KERNEL;
	default: return cur;
	}
}

static bool chain_has_markers(const uint64_t *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (c[i] >= CTX_MAX)
			return true;
	return false;
}

/* First time a key is seen: look up the map of each caller frame now,
 * while the symbol session holds the mappings of this moment. */
static void key_chain_maps(struct loader *L, struct key *k, const struct dp_sample *s)
{
	const uint64_t *c = L->chain + k->chain_off;
	const struct sym_map **m = L->chain_map + k->chain_off;
	uint8_t *md = L->chain_mode + k->chain_off;
	bool markers = chain_has_markers(c, k->nchain);
	uint8_t cur = k->mode;
	bool leaf_skipped = false;
	for (uint32_t i = 0; i < k->nchain; i++) {
		uint64_t ip = c[i];
		m[i] = NULL;
		if (markers && ip >= CTX_MAX) {
			cur = ctx_mode(ip, cur);
			continue;
		}
		if (!leaf_skipped) {
			leaf_skipped = true;
			if (ip == k->ip)
				continue;
		}
		uint8_t fm = cur;
		if (!markers) {
			/* Without markers, the half of the address space tells
			 * kernel frames from user frames of the same chain. */
			if (cur == DP_MODE_KERNEL || cur == DP_MODE_USER)
				fm = ip >= KERNEL_ADDR_START ? DP_MODE_KERNEL : DP_MODE_USER;
			else if (cur == DP_MODE_GUEST_KERNEL || cur == DP_MODE_GUEST_USER)
				fm = ip >= KERNEL_ADDR_START ? DP_MODE_GUEST_KERNEL : DP_MODE_GUEST_USER;
		}
		md[i] = fm;
		/* A return address: the call is just before it. */
		uint64_t look = ip ? ip - 1 : ip;
		m[i] = sym_find_map(L->pv->sym, k->domain, k->pid, fm, s->has_asid, s->asid, look);
	}
}

static void on_sample(struct loader *L, uint32_t domain, const struct dp_sample *s)
{
	struct profile *p = L->p;
	p->total_samples++;
	if (L->dom_filter && (!L->dom_found || domain != L->dom_id))
		return;
	if (L->f && L->f->has_pid && s->pid != L->f->pid)
		return;
	if (L->f && !mode_matches(L->f->mode, s->mode))
		return;

	const struct sym_map *map = sym_find_map(L->pv->sym, domain, s->pid, s->mode,
						 s->has_asid, s->asid, s->ip);
	uint32_t nc = L->o.callgraph || L->o.stacks ? s->nr_callchain : 0;
	if (nc)
		p->has_callchains = true;
	else if (s->nr_callchain)
		p->has_callchains = true;
	uint64_t asid = s->has_asid ? s->asid : 0;

	uint64_t h = mix(mix(mix(mix(mix(mix(0x1234567ull, domain), s->pid), s->mode), asid), s->ip),
			 s->event);
	h = mix(h, (uint64_t)(uintptr_t)map);
	for (uint32_t i = 0; i < nc; i++)
		h = mix(h, s->callchain[i]);
	h = mix(h, nc);

	struct oa *t = &L->keytab;
	size_t msk = t->cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = t->slot[i];
		if (!sl)
			break;
		if (t->hash[i] == h) {
			struct key *k = &L->keys[sl - 1];
			if (k->ip == s->ip && k->map == map && k->domain == domain &&
			    k->pid == s->pid && k->mode == s->mode && k->asid == asid &&
			    k->event == s->event && k->nchain == nc &&
			    (!nc || !memcmp(L->chain + k->chain_off, s->callchain, nc * sizeof(uint64_t)))) {
				k->count++;
				k->period += s->period;
				return;
			}
		}
		i = (i + 1) & msk;
	}
	/* new key */
	xgrow((void **)&L->keys, &L->capkeys, L->nkeys + 1, sizeof(*L->keys));
	struct key *k = &L->keys[L->nkeys];
	memset(k, 0, sizeof(*k));
	k->ip = s->ip;
	k->asid = asid;
	k->count = 1;
	k->period = s->period;
	k->event = s->event;
	k->map = map;
	k->domain = domain;
	k->pid = s->pid;
	k->mode = s->mode;
	k->nchain = nc;
	k->chain_off = (uint32_t)L->nchain;
	if (nc) {
		size_t need = L->nchain + nc;
		xgrow((void **)&L->chain, &L->capchain, need, sizeof(*L->chain));
		xgrow((void **)&L->chain_map, &L->capchain_map, need, sizeof(*L->chain_map));
		xgrow((void **)&L->chain_mode, &L->capchain_mode, need, sizeof(*L->chain_mode));
		memcpy(L->chain + L->nchain, s->callchain, nc * sizeof(uint64_t));
		L->nchain = need;
		key_chain_maps(L, k, s);
	}
	t->slot[i] = (uint32_t)L->nkeys + 1;
	t->hash[i] = h;
	t->n++;
	L->nkeys++;
	oa_grow_if_needed(t);
}

/* ---- resolution ---- */

static uint32_t sym_intern(struct loader *L, uint32_t domain, const struct sym_result *r,
			   bool kernel, uint32_t pid)
{
	struct profile *p = L->p;
	bool bp = L->o.by_process;
	if (!bp)
		pid = 0;
	uint64_t h = hash_str(hash_str(mix(mix(77, domain), pid), r->image), r->symbol);
	struct oa *t = &L->symtab;
	size_t msk = t->cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = t->slot[i];
		if (!sl)
			break;
		if (t->hash[i] == h) {
			struct profile_symbol *y = &p->syms[sl - 1];
			if (y->domain == domain && y->pid == pid && streq(y->image, r->image) &&
			    streq(y->symbol, r->symbol))
				return sl - 1;
		}
		i = (i + 1) & msk;
	}
	xgrow((void **)&p->syms, &L->capsyms, p->nsyms + 1, sizeof(*p->syms));
	uint32_t idx = (uint32_t)p->nsyms++;
	struct profile_symbol *y = &p->syms[idx];
	memset(y, 0, sizeof(*y));
	y->domain = domain;
	y->domain_name = domain_get(L, domain)->name;
	y->image = r->image ? r->image : "[unknown]";
	y->image_path = r->image_path ? r->image_path : y->image;
	y->symbol = r->symbol ? r->symbol : "[unknown]";
	y->known = r->known;
	y->kernel = kernel;
	y->pid = pid;
	y->comm = bp ? sym_comm(L->pv->sym, domain, pid) : NULL;
	t->slot[i] = idx + 1;
	t->hash[i] = h;
	t->n++;
	oa_grow_if_needed(t);
	return idx;
}

/* Symbol index of (map, ip) for a frame of key k. */
static uint32_t resolve_addr(struct loader *L, const struct key *k, const struct sym_map *map,
			     uint64_t ip, uint8_t mode)
{
	uint64_t h = mix(mix(mix(99, (uint64_t)(uintptr_t)map), ip), L->o.by_process ? k->pid : 0);
	struct oa *t = &L->addrtab;
	size_t msk = t->cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = t->slot[i];
		if (!sl)
			break;
		if (t->hash[i] == h) {
			struct addr *a = &L->addrs[sl - 1];
			if (a->map == map && a->ip == ip &&
			    (!L->o.by_process || L->p->syms[a->sym].pid == k->pid) &&
			    L->p->syms[a->sym].domain == k->domain)
				return a->sym;
		}
		i = (i + 1) & msk;
	}
	struct sym_result r;
	memset(&r, 0, sizeof(r));
	sym_resolve(L->pv->sym, map, ip, &r);
	uint32_t sym = sym_intern(L, k->domain, &r, mode_is_kernel(mode), k->pid);
	xgrow((void **)&L->addrs, &L->capaddrs, L->naddrs + 1, sizeof(*L->addrs));
	struct addr *a = &L->addrs[L->naddrs];
	a->map = map;
	a->ip = ip;
	a->sym = sym;
	t->slot[i] = (uint32_t)L->naddrs + 1;
	t->hash[i] = h;
	t->n++;
	L->naddrs++;
	oa_grow_if_needed(t);
	return sym;
}

/* ---- build ---- */

struct edge_tab {
	struct oa t;
	struct profile_edge *e;
	uint64_t *stamp;
	size_t n, cap;
};

static void edge_add(struct profile *p, struct edge_tab *E, uint32_t caller, uint32_t callee,
		     uint64_t c, uint64_t stamp)
{
	uint64_t h = mix(mix(55, caller), callee);
	size_t msk = E->t.cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = E->t.slot[i];
		if (!sl)
			break;
		if (E->t.hash[i] == h) {
			struct profile_edge *e = &E->e[sl - 1];
			if (e->caller == caller && e->callee == callee) {
				if (E->stamp[sl - 1] != stamp) {
					E->stamp[sl - 1] = stamp;
					e->count += c;
				}
				return;
			}
		}
		i = (i + 1) & msk;
	}
	size_t cap0 = E->cap;
	xgrow((void **)&E->e, &E->cap, E->n + 1, sizeof(*E->e));
	if (E->cap != cap0)
		E->stamp = xrealloc(E->stamp, E->cap * sizeof(*E->stamp));
	E->e[E->n] = (struct profile_edge){ caller, callee, c };
	E->stamp[E->n] = stamp;
	E->t.slot[i] = (uint32_t)E->n + 1;
	E->t.hash[i] = h;
	E->t.n++;
	E->n++;
	oa_grow_if_needed(&E->t);
	(void)p;
}

struct img_tab {
	struct oa t;
	struct profile_image *v;
	size_t n, cap;
};

static void image_add(struct img_tab *I, uint32_t domain, const char *dname, const char *app,
		      const char *image, uint64_t c)
{
	uint64_t h = hash_str(hash_str(mix(33, domain), app), image);
	size_t msk = I->t.cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = I->t.slot[i];
		if (!sl)
			break;
		if (I->t.hash[i] == h) {
			struct profile_image *e = &I->v[sl - 1];
			if (e->domain == domain && streq(e->app, app) && streq(e->image, image)) {
				e->samples += c;
				return;
			}
		}
		i = (i + 1) & msk;
	}
	xgrow((void **)&I->v, &I->cap, I->n + 1, sizeof(*I->v));
	I->v[I->n] = (struct profile_image){ domain, dname, app, image, c };
	I->t.slot[i] = (uint32_t)I->n + 1;
	I->t.hash[i] = h;
	I->t.n++;
	I->n++;
	oa_grow_if_needed(&I->t);
}

struct stack_tab {
	struct oa t;
	struct stack_ent *v;
	size_t n, cap;
	uint32_t *fr;
	size_t nfr, capfr;
};

static void stack_add(struct stack_tab *S, const struct key *k, const uint32_t *leaf_first,
		      uint32_t n)
{
	uint64_t h = mix(mix(mix(mix(11, k->domain), k->pid), k->mode), k->event);
	for (uint32_t j = 0; j < n; j++)
		h = mix(h, leaf_first[j]);
	size_t msk = S->t.cap - 1, i = h & msk;
	for (;;) {
		uint32_t sl = S->t.slot[i];
		if (!sl)
			break;
		if (S->t.hash[i] == h) {
			struct stack_ent *e = &S->v[sl - 1];
			if (e->n == n && e->domain == k->domain && e->pid == k->pid &&
			    e->mode == k->mode && e->event == k->event) {
				/* stored root-first */
				bool same = true;
				for (uint32_t j = 0; j < n && same; j++)
					same = S->fr[e->off + j] == leaf_first[n - 1 - j];
				if (same) {
					e->count += k->count;
					e->period += k->period;
					return;
				}
			}
		}
		i = (i + 1) & msk;
	}
	xgrow((void **)&S->v, &S->cap, S->n + 1, sizeof(*S->v));
	xgrow((void **)&S->fr, &S->capfr, S->nfr + n, sizeof(*S->fr));
	struct stack_ent *e = &S->v[S->n];
	*e = (struct stack_ent){ h, (uint32_t)S->nfr, n, k->domain, k->pid, k->mode, k->event,
				 k->count, k->period };
	for (uint32_t j = 0; j < n; j++)
		S->fr[S->nfr + j] = leaf_first[n - 1 - j];
	S->nfr += n;
	S->t.slot[i] = (uint32_t)S->n + 1;
	S->t.hash[i] = h;
	S->t.n++;
	S->n++;
	oa_grow_if_needed(&S->t);
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

static int cmp_edge_caller(const void *a, const void *b)
{
	const struct profile_edge *x = *(const struct profile_edge *const *)a;
	const struct profile_edge *y = *(const struct profile_edge *const *)b;
	return edge_order(x->caller, y->caller, x->count, y->count, x->callee, y->callee);
}

static int cmp_edge_callee(const void *a, const void *b)
{
	const struct profile_edge *x = *(const struct profile_edge *const *)a;
	const struct profile_edge *y = *(const struct profile_edge *const *)b;
	return edge_order(x->callee, y->callee, x->count, y->count, x->caller, y->caller);
}

static int cmp_edge(const void *a, const void *b)
{
	const struct profile_edge *x = a, *y = b;
	return edge_order(x->caller, y->caller, x->count, y->count, x->callee, y->callee);
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

/* The call graph's edges: a sorted array plus per-symbol in/out views
 * (pv->in_ptrs/out_ptrs, indexed by in_off/out_off). Takes E's edges. */
static void finish_edges(struct profile *p, struct priv *pv, struct edge_tab *E)
{
	p->edges = E->e;
	p->nedges = E->n;
	E->e = NULL;
	if (p->nedges)
		qsort(p->edges, p->nedges, sizeof(*p->edges), cmp_edge);
	size_t ns = p->nsyms, ne = p->nedges;
	pv->in_ptrs = xmalloc((ne ? ne : 1) * sizeof(*pv->in_ptrs));
	pv->out_ptrs = xmalloc((ne ? ne : 1) * sizeof(*pv->out_ptrs));
	pv->in_off = xcalloc(ns + 1, sizeof(*pv->in_off));
	pv->out_off = xcalloc(ns + 1, sizeof(*pv->out_off));
	for (size_t j = 0; j < ne; j++) {
		pv->in_ptrs[j] = &p->edges[j];
		pv->out_ptrs[j] = &p->edges[j];
		pv->in_off[p->edges[j].callee + 1]++;
		pv->out_off[p->edges[j].caller + 1]++;
	}
	for (size_t j = 0; j < ns; j++) {
		pv->in_off[j + 1] += pv->in_off[j];
		pv->out_off[j + 1] += pv->out_off[j];
	}
	if (ne) {
		qsort(pv->in_ptrs, ne, sizeof(*pv->in_ptrs), cmp_edge_callee);
		qsort(pv->out_ptrs, ne, sizeof(*pv->out_ptrs), cmp_edge_caller);
	}
	oa_release(&E->t);
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
			.domain_name = domain_get(L, e->domain)->name,
			.pid = e->pid,
			.comm = sym_comm(pv->sym, e->domain, e->pid),
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
	oa_release(&S->t);
}

static void build(struct loader *L)
{
	struct profile *p = L->p;
	struct priv *pv = L->pv;
	const struct profile_filter *f = L->f;

	oa_init(&L->addrtab, 1024);
	oa_init(&L->symtab, 1024);

	/* The comm filter, and every address that will be resolved announced
	 * first, so the kernel table fetches its names in one pass. */
	for (size_t i = 0; i < L->nkeys; i++) {
		struct key *k = &L->keys[i];
		k->keep = !(f && f->comm && strcmp(sym_comm(pv->sym, k->domain, k->pid), f->comm));
		if (!k->keep)
			continue;
		sym_want(pv->sym, k->map, k->ip);
		const uint64_t *ch = L->chain + k->chain_off;
		for (uint32_t j = 0; j < k->nchain; j++) {
			const struct sym_map *m = L->chain_map[k->chain_off + j];
			if (m)
				sym_want(pv->sym, m, ch[j] ? ch[j] - 1 : 0);
		}
	}

	/* Leaf resolution and the post-read image filter. */
	for (size_t i = 0; i < L->nkeys; i++) {
		struct key *k = &L->keys[i];
		if (!k->keep)
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
	oa_init(&I.t, 256);
	if (L->o.callgraph)
		oa_init(&E.t, 1024);
	if (L->o.stacks)
		oa_init(&S.t, 1024);

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
		domain_get(L, k->domain)->samples += c;

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
		const char *app = domain_get(L, k->domain)->kind == DP_DOMAIN_PASSIVE
					  ? "[guest]" : sym_comm(pv->sym, k->domain, k->pid);
		image_add(&I, k->domain, leaf->domain_name, app, leaf->image, c);
		if (L->o.stacks)
			stack_add(&S, k, fr, n);
	}
	free(fr);
	free(stamp);

	p->unique_keys = L->nkeys;
	p->unique_addrs = L->naddrs;

	if (L->o.callgraph)
		finish_edges(p, pv, &E);

	p->images = I.v;
	p->nimages = I.n;
	oa_release(&I.t);
	sort_images(p);

	if (L->o.stacks)
		finish_stacks(L, &S);

	const char *const *w;
	size_t nw = sym_warnings(pv->sym, &w);
	for (size_t j = 0; j < nw; j++)
		add_warning(p, w[j]);
}

static void loader_release(struct loader *L)
{
	free(L->keys);
	free(L->chain);
	free(L->chain_map);
	free(L->chain_mode);
	free(L->addrs);
	oa_release(&L->keytab);
	oa_release(&L->addrtab);
	oa_release(&L->symtab);
}

/* The load pass: dp_scan calls these with the loader as ctx. */
static int ld_sample(void *ctx, const struct dp_record *rec)
{
	on_sample(ctx, rec->domain, &rec->u.sample);
	return 0;
}

static int ld_mmap(void *ctx, const struct dp_record *rec)
{
	sym_add_mmap(((struct loader *)ctx)->pv->sym, rec->domain, &rec->u.mmap);
	return 0;
}

static int ld_task(void *ctx, const struct dp_record *rec)
{
	sym_add_task(((struct loader *)ctx)->pv->sym, rec->domain, &rec->u.task);
	return 0;
}

static int ld_symtab(void *ctx, const struct dp_record *rec)
{
	sym_add_symtab_rec(((struct loader *)ctx)->pv->sym, rec);
	return 0;
}

static int ld_domain(void *ctx, const struct dp_record *rec)
{
	on_domain(ctx, &rec->u.domain);
	return 0;
}

static int ld_event(void *ctx, const struct dp_record *rec)
{
	on_event(ctx, &rec->u.event);
	return 0;
}

static int ld_lost(void *ctx, const struct dp_record *rec)
{
	struct loader *L = ctx;
	struct profile *p = L->p;
	/* a guest's LOST (where = its domain id) counts only for
	 * its domain; sums saturate, counts are crafted input */
	if (L->dom_filter && (rec->u.lost.source == DP_LOST_DOMAIN ||
			      rec->u.lost.source == DP_LOST_AGENT) &&
	    (!L->dom_found || rec->u.lost.where != L->dom_id))
		return 0;
	p->lost = sat_add64(p->lost, rec->u.lost.count);
	if (rec->u.lost.source < DP_LOST_SOURCES)
		p->lost_by_source[rec->u.lost.source] =
			sat_add64(p->lost_by_source[rec->u.lost.source], rec->u.lost.count);
	return 0;
}

static int ld_stats(void *ctx, const struct dp_record *rec)
{
	struct profile *p = ((struct loader *)ctx)->p;
	p->has_stats = true;
	p->stats = rec->u.stats;
	return 0;
}

static void ld_progress(void *ctx, uint64_t pos, uint64_t size)
{
	struct loader *L = ctx;
	if (L->o.progress)
		L->o.progress(L->o.progress_arg, pos, size);
}

static const struct dp_visitor load_visitor = {
	.sample = ld_sample, .mmap = ld_mmap, .task = ld_task, .symtab = ld_symtab,
	.domain = ld_domain, .event = ld_event, .lost = ld_lost, .stats = ld_stats,
	.progress = ld_progress,
};

/* Read and build; when own, the reader is freed (and *rp cleared) as
 * soon as reading is done, so its buffers and mapped file are not
 * resident while symbols are loaded. */
static struct profile *load(struct dp_reader **rp, bool own, const struct profile_filter *filter,
			    const struct profile_opts *opts, int *err, char *msg, size_t msglen)
{
	struct dp_reader *r = *rp;
	struct profile *p = xcalloc(1, sizeof(*p));
	struct priv *pv = xcalloc(1, sizeof(*pv));
	p->priv = pv;
	pv->sym = sym_session_new();
	if (!pv->sym) {
		free(pv);
		free(p);
		if (err)
			*err = -ENOMEM;
		if (msg && msglen)
			snprintf(msg, msglen, "cannot create a symbol session");
		return NULL;
	}

	struct loader L;
	memset(&L, 0, sizeof(L));
	L.p = p;
	L.pv = pv;
	L.f = filter;
	if (opts)
		L.o = *opts;
	L.dom_filter = filter && filter->domain;
	if (L.dom_filter && !strcmp(filter->domain, "host")) {
		/* host may have no DOMAIN record in a host-only file */
		L.dom_found = true;
		L.dom_id = DP_HOST_DOMAIN;
	}
	oa_init(&L.keytab, 4096);

	const struct dp_header *h = dp_reader_header(r);
	if (h) {
		p->header = *h;
		p->header.hostname = keep_str(pv, h->hostname);
		p->header.release = keep_str(pv, h->release);
		p->header.cpu_desc = keep_str(pv, h->cpu_desc);
		p->header.cmdline = keep_str(pv, h->cmdline);
	}
	domain_get(&L, DP_HOST_DOMAIN);

	uint64_t size = dp_reader_size(r);
	dp_scan(r, &load_visitor, &L, NULL);
	if (L.o.progress)
		L.o.progress(L.o.progress_arg, size, size);

	const struct dp_damage *dmg;
	size_t nd = dp_reader_damage(r, &dmg);
	for (size_t i = 0; i < nd; i++) {
		char line[200];
		/* most reader messages name their offset (and what was skipped) already */
		if (strstr(dmg[i].what, "offset"))
			snprintf(line, sizeof(line), "damaged file: %s", dmg[i].what);
		else
			snprintf(line, sizeof(line), "damaged file: %s at offset %llu (%llu bytes skipped)",
				 dmg[i].what, (unsigned long long)dmg[i].offset,
				 (unsigned long long)dmg[i].bytes_lost);
		add_warning(p, line);
		p->damaged_bytes = sat_add64(p->damaged_bytes, dmg[i].bytes_lost);
	}
	/* the one place a recording without its end becomes a warning for
	 * report, flamegraph, export and diff */
	const char *inc = dp_reader_incomplete(r);
	if (inc)
		add_warning(p, inc);
	if (p->lost == UINT64_MAX)
		add_warning(p, "lost-sample counts in the file add up past 2^64: the lost total "
			       "is at least 18446744073709551615 (a LOST record is not plausible)");
	p->nfile_warnings = p->nwarnings;
	if (own) {
		dp_reader_free(r);
		*rp = NULL;
	}

	if (L.dom_filter && !L.dom_found) {
		if (err)
			*err = -ENOENT;
		if (msg && msglen) {
			size_t o = (size_t)snprintf(msg, msglen, "no domain named '%s' in the recording (domains:",
						    filter->domain);
			for (size_t i = 0; i < p->ndomains && o < msglen; i++)
				o += (size_t)snprintf(msg + o, msglen - o, " %s", p->domains[i].name);
			if (o < msglen)
				snprintf(msg + o, msglen - o, ")");
		}
		loader_release(&L);
		profile_free(p);
		return NULL;
	}

	build(&L);
	loader_release(&L);
	return p;
}

struct profile *profile_load(const char *path, const struct profile_filter *filter,
			     const struct profile_opts *opts, int *err,
			     char *msg, size_t msglen)
{
	int e = 0;
	/* Loading grows a few large arrays (keys, symbol tables) and frees
	 * big temporaries (decompression windows). With glibc's default
	 * dynamic threshold, the first big free moves later big blocks into
	 * the heap, where each doubling leaves the old copy resident; a fixed
	 * threshold keeps them mmapped: realloc is mremap, free unmaps. This
	 * takes a report's peak RSS from ~15 to ~12 MiB on a kernel-heavy
	 * recording. Process-wide, and harmless for the rest of a command. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	struct dp_reader *r = dp_reader_open(path, &e, msg, msglen);
	if (!r) {
		if (err)
			*err = e ? e : -EINVAL;
		return NULL;
	}
	/* embedded symbol tables stay compressed until the symbols need them */
	dp_reader_set_flags(r, DP_READ_SYMTAB_STORED);
	struct profile *p = load(&r, true, filter, opts, err, msg, msglen);
	dp_reader_free(r);
	return p;
}

struct profile *profile_load_reader(struct dp_reader *r, const struct profile_filter *filter,
				    const struct profile_opts *opts, int *err,
				    char *msg, size_t msglen)
{
	return load(&r, false, filter, opts, err, msg, msglen);
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	struct priv *pv = p->priv;
	if (pv) {
		for (size_t i = 0; i < pv->nstrings; i++)
			free(pv->strings[i]);
		free(pv->strings);
		free(pv->frames);
		free(pv->in_ptrs);
		free(pv->out_ptrs);
		free(pv->in_off);
		free(pv->out_off);
		hmap_release(&pv->domidx);
		hmap_release(&pv->evidx);
		sym_session_free(pv->sym);
		free(pv);
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->events);
	free(p->domains);
	free(p->syms);
	free(p->edges);
	free(p->images);
	free(p->stacks);
	free(p);
}

/* ---- queries ---- */

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

int profile_parse_sort(const char *keys, enum profile_sort_key *out, const char **bad)
{
	static const struct { const char *name; enum profile_sort_key k; } names[] = {
		{ "sample", PROFILE_SORT_SAMPLE }, { "samples", PROFILE_SORT_SAMPLE },
		{ "symbol", PROFILE_SORT_SYMBOL }, { "sym", PROFILE_SORT_SYMBOL },
		{ "image", PROFILE_SORT_IMAGE }, { "dso", PROFILE_SORT_IMAGE },
		{ "domain", PROFILE_SORT_DOMAIN }, { "pid", PROFILE_SORT_PID },
		{ "comm", PROFILE_SORT_COMM },
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
