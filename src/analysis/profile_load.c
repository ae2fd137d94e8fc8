// SPDX-License-Identifier: MIT
/*
 * Pass 1 of building a profile, reading (see profile.c): the dp_scan
 * visitor callbacks (ld_*) send metadata to the symbol session in file
 * order and count each sample under its unique key (domain, pid, mode,
 * asid, leaf map, leaf ip, raw call chain) in an open-addressing table
 * (hidx, util/hmap.h).
 * Chains live in one growing arena; nothing is allocated per sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile_internal.h"
#include "util/addrspace.h"
#include "util/sat.h"

/* perf's call-chain context markers (linux/perf_event.h). */
#define CTX_HV           ((uint64_t)-32)
#define CTX_KERNEL       ((uint64_t)-128)
#define CTX_USER         ((uint64_t)-512)
#define CTX_GUEST        ((uint64_t)-2048)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER   ((uint64_t)-2560)
#define CTX_MAX          ((uint64_t)-4095)
const char *profile_keep_str(struct priv *pv, const char *s)
{
	char *c = xstrdup(s ? s : "");
	xgrow((void **)&pv->strings, &pv->capstrings, pv->nstrings + 1, sizeof(char *));
	pv->strings[pv->nstrings++] = c;
	return c;
}

void profile_add_warning(struct profile *p, const char *s)
{
	p->warnings = xrealloc(p->warnings, (p->nwarnings + 1) * sizeof(char *));
	p->warnings[p->nwarnings++] = xstrdup(s);
}

struct profile_domain *profile_domain_get(struct loader *L, uint32_t id)
{
	struct profile *p = L->p;
	/* asked once per key and symbol: most files have one domain */
	if (L->dom_last && p->domains[L->dom_last - 1].id == id)
		return &p->domains[L->dom_last - 1];
	uintptr_t at = (uintptr_t)u64map_get(&L->pv->domidx, id);
	if (at) {
		L->dom_last = at;
		return &p->domains[at - 1];
	}
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
	d->name = profile_keep_str(L->pv, name);
	d->address = "";
	d->symsrc = "";
	return d;
}

static void on_domain(struct loader *L, const struct dp_domain *dd)
{
	struct profile_domain *d = profile_domain_get(L, dd->id);
	d->kind = dd->kind;
	d->vcpus = dd->vcpus;
	d->kaslr_offset = dd->kaslr_offset;
	d->name = profile_keep_str(L->pv, dd->name && *dd->name ? dd->name : d->name);
	d->address = profile_keep_str(L->pv, dd->address);
	d->symsrc = profile_keep_str(L->pv, dd->symsrc);
	sym_set_domain(L->pv->sym, dd->id, dd->kind, d->name, dd->kaslr_offset);
	if (dd->symsrc && !strcmp(dd->symsrc, DP_SYMSRC_PERF_FOREIGN))
		sym_set_kernel_local(L->pv->sym, dd->id, false);
	if (dd->symsrc && (!strcmp(dd->symsrc, DP_SYMSRC_PERF_FOREIGN) ||
			   !strcmp(dd->symsrc, DP_SYMSRC_PERF_LOCAL)))
		sym_set_perf_origin(L->pv->sym, dd->id);
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
	pe->name = profile_keep_str(L->pv, e->name);
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

struct key_want {
	const struct loader *L;
	const struct dp_sample *s;
	const struct sym_map *map;
	uint64_t ip;
	uint32_t domain;
	uint64_t asid;
	uint32_t nc;
	const char *comm;
};

static bool key_eq(const void *ctx, uint32_t e)
{
	const struct key_want *w = ctx;
	const struct key *k = &w->L->keys[e];
	const struct dp_sample *s = w->s;
	uint32_t nc = w->nc;
	return k->ip == w->ip && k->map == w->map && k->comm == w->comm && k->domain == w->domain &&
	       k->pid == s->pid && k->mode == s->mode && k->asid == w->asid &&
	       (!w->L->key_tid || w->L->key_tid[e] == s->tid) &&
	       k->event == s->event && k->nchain == nc &&
	       (!nc || !memcmp(w->L->chain + k->chain_off, s->callchain, nc * sizeof(uint64_t)));
}

/*
 * A sample recorded with --call-graph dwarf: the user part of its chain
 * (after the leading kernel frames, which stay as recorded) unwound from
 * its stored stack. The recorded frame-pointer user frames are kept when
 * the unwinder found fewer of them and did not reach the outermost frame
 * (no CFI, JIT code): a longer chain of the two is the better guess.
 * Returns the sample to count: s itself, or *tmp with the new chain in
 * L->uw_chain. DOMPROF_DWARF_UNWIND=0 turns this off, =libdwfl turns the
 * quick step off (tests compare).
 */
static const struct dp_sample *dwarf_chain(struct loader *L, uint32_t domain,
					   const struct dp_sample *s, struct dp_sample *tmp)
{
	if (L->uw_state == 0) {
		const char *e = getenv("DOMPROF_DWARF_UNWIND");
		L->uw_state = e && !strcmp(e, "0") ? -1 : e && !strcmp(e, "libdwfl") ? 2 : 1;
	}
	if (L->uw_state < 0)
		return s;
	struct profile *p = L->p;
	p->dwarf.samples++;
	if (!L->uw) {
		L->uw = sym_unwinder_new(L->pv->sym);
		sym_unwinder_set_quick(L->uw, L->uw_state != 2);
	}
	uint32_t nk = 0;
	while (nk < s->nr_callchain && s->callchain[nk] >= KERNEL_ADDR_START)
		nk++;
	uint32_t nfp = s->nr_callchain - nk;
	bool complete;
	uint32_t n = sym_unwind_user(L->uw, domain, s->pid, s, L->uw_chain + nk,
				     DP_MAX_CALLCHAIN - nk, &complete);
	if (!n || (n < nfp && !complete)) {
		p->dwarf.kept_fp++;
		return s;
	}
	p->dwarf.unwound++;
	if (complete)
		p->dwarf.complete++;
	if (nk)  /* a user-mode sample may have no recorded chain at all */
		memcpy(L->uw_chain, s->callchain, nk * sizeof(uint64_t));
	*tmp = *s;
	tmp->callchain = L->uw_chain;
	tmp->nr_callchain = nk + n;
	return tmp;
}

/* --time: the sample's time inside its domain's window (the bounds
 * are worked out once per change of domain) */
static bool in_time_window(struct loader *L, uint32_t domain, uint64_t t)
{
	if (!L->win_known || L->win_dom != domain) {
		const struct profile_filter *f = L->f;
		L->win_dom = domain;
		L->win_known = true;
		L->win_valid = window_bounds(window_span_of(&L->spans, domain), f->time_from,
					     f->time_to, f->time_pct, &L->win_lo, &L->win_hi);
	}
	return L->win_valid && t >= L->win_lo && t < L->win_hi;
}

void time_window_note(struct loader *L)
{
	struct profile *p = L->p;
	if (p->matched || !L->time_out)
		return;
	/* nothing in the window: say what the recording spans */
	char line[512];
	int n = snprintf(line, sizeof(line), "the time window holds no samples; the recording spans");
	for (size_t i = 0; i < L->spans.n && i < 8 && n < (int)sizeof(line); i++) {
		const struct window_span *sp = &L->spans.v[i];
		const struct profile_domain *d = profile_domain_by_id(p, sp->domain);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s %s %.3f s", i ? "," : "",
			      d ? d->name : "?", (double)(sp->last - sp->first) / 1e9);
	}
	profile_add_warning(p, line);
}

/* L->outk: a direct-mapped table of the keys without a map (samples
 * hits_early_in dropped), made as pend_count meets them */
enum { OUTK = 64 };

static struct out_key *out_slot(struct loader *L, uint32_t domain, uint32_t pid, uint8_t mode)
{
	if (!L->outk)
		L->outk = xcalloc(OUTK, sizeof(*L->outk));
	return &L->outk[(pid * 0x9e3779b1u ^ domain * 0x85ebca6bu ^ mode) % OUTK];
}

/* Sample s (weight samples: a group) outside hits_symbol, counted under
 * its key when that was made already: a sum, in any order. False when
 * it must be queued. */
static bool out_counted(struct loader *L, uint32_t domain, const struct dp_sample *s, uint64_t asid,
			const char *comm, uint32_t weight)
{
	const struct out_key *o = out_slot(L, domain, s->pid, s->mode);
	if (!o->used || o->domain != domain || o->pid != s->pid || o->mode != s->mode ||
	    o->asid != asid || o->comm != comm || o->event != s->event ||
	    (L->o.by_tid && o->tid != s->tid))
		return false;
	L->keys[o->key].count += weight;
	L->keys[o->key].period += s->period;
	return true;
}

static void out_note(struct loader *L, uint32_t domain, const struct dp_sample *s, uint64_t asid,
		     const char *comm, uint32_t key)
{
	*out_slot(L, domain, s->pid, s->mode) =
		(struct out_key){ domain, s->pid, s->tid, key, asid, comm, s->event, s->mode, true };
}

/* The oldest queued sample counted under its key, made when new. */
static void pend_count(struct loader *L)
{
	struct pend *q = &L->pend[L->pend_head];
	L->pend_head = (L->pend_head + 1) % PEND;
	L->npend--;
	const struct dp_sample *s = &q->s;
	uint32_t domain = q->domain, nc = q->nc;
	uint64_t h = q->h, asid = q->asid;
	const struct sym_map *map = q->map;

	struct hidx *t = &L->keytab;
	struct key_want want = { L, s, map, q->kip, domain, asid, nc, q->comm };
	size_t i;
	uint32_t found = hidx_find(t, h, key_eq, &want, &i);
	if (found != HIDX_NONE) {
		L->keys[found].count += q->weight;
		L->keys[found].period += s->period;
		if (!map)
			out_note(L, domain, s, asid, q->comm, found);
		if (L->o.timeline)
			timeline_add(L, found, domain, s->time);
		return;
	}
	/* new key */
	xgrow((void **)&L->keys, &L->capkeys, L->nkeys + 1, sizeof(*L->keys));
	struct key *k = &L->keys[L->nkeys];
	memset(k, 0, sizeof(*k));
	k->ip = q->kip;
	k->asid = asid;
	k->count = q->weight;
	k->period = s->period;
	k->event = s->event;
	k->map = map;
	k->comm = q->comm;
	k->domain = domain;
	k->pid = s->pid;
	k->mode = s->mode;
	if (L->o.by_tid) {
		xgrow((void **)&L->key_tid, &L->capkey_tid, L->nkeys + 1, sizeof(*L->key_tid));
		L->key_tid[L->nkeys] = s->tid;
	}
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
	hidx_fill(t, i, h, (uint32_t)L->nkeys);
	if (!map)
		out_note(L, domain, s, asid, q->comm, (uint32_t)L->nkeys);
	L->nkeys++;
	if (L->o.timeline)
		timeline_add(L, (uint32_t)(L->nkeys - 1), domain, s->time);
}


/* s stands for weight samples (a group, DP_READ_GROUPS: alike in every
 * field used here but time, its period their sum; reader_options asks
 * for none when times count) */
static void on_sample(struct loader *L, uint32_t domain, const struct dp_sample *s, uint32_t weight)
{
	struct profile *p = L->p;
	p->total_samples += weight;
	if (s->event < 256)
		L->ev_samples[s->event] += weight;
	if (L->dom_filter && (!L->dom_found || domain != L->dom_id))
		return;
	if (L->f && L->f->has_pid && s->pid != L->f->pid)
		return;
	if (L->f && !mode_matches(L->f->mode, s->mode))
		return;
	if (L->f && L->f->cpus && !window_cpu_in(L->f->cpus, s->cpu))
		return;
	if (L->f && L->f->has_time && !in_time_window(L, domain, s->time)) {
		L->time_out++;
		return;
	}

	struct dp_sample dw;
	if (s->has_uregs && s->ustack_len && L->chains)
		s = dwarf_chain(L, domain, s, &dw);
	const struct sym_map *map = sym_find_map(L->pv->sym, domain, s->pid, s->mode,
						 s->has_asid, s->asid, s->ip);
	uint32_t nc = L->chains ? s->nr_callchain : 0;
	if (nc)
		p->has_callchains = true;
	else if (s->nr_callchain || s->chain_omitted)  /* the reader skipped it: DP_READ_NO_CHAINS */
		p->has_callchains = true;
	uint64_t asid = s->has_asid ? s->asid : 0;
	/* The leaf's address, as far as the profile can tell addresses apart:
	 * in an image without symbols ([anon] JIT code: a sixth of a busy
	 * machine's samples, nearly every one at its own address) all
	 * resolve alike, so they share one key per process. Not with a
	 * chain (its frames are matched against the leaf's address) nor for
	 * annotate (it counts addresses). */
	uint64_t kip = s->ip;
	if (!nc && !L->o.hits && sym_map_symbolless(map))
		kip = 0;
	/* annotate NAME: a leaf that cannot be NAME is counted per process
	 * only (most of a large recording's keys otherwise) */
	const char *comm = sym_comm_now(L->pv->sym, domain, s->pid);
	if (L->early && !hits_early_in(L, map, s->ip)) {
		if (out_counted(L, domain, s, asid, comm, weight))
			return;
		map = NULL;
		kip = 0;
	}

	uint64_t h = 0x1234567ull;
	h = hash_fold64(h, domain);
	h = hash_fold64(h, s->pid);
	if (L->o.by_tid)
		h = hash_fold64(h, s->tid);
	h = hash_fold64(h, s->mode);
	h = hash_fold64(h, asid);
	h = hash_fold64(h, kip);
	h = hash_fold64(h, s->event);
	h = hash_fold64(h, (uint64_t)(uintptr_t)map);
	h = hash_fold64(h, (uint64_t)(uintptr_t)comm);
	for (uint32_t i = 0; i < nc; i++)
		h = hash_fold64(h, s->callchain[i]);
	h = hash_fold64(h, nc);

	/* Into the queue, its slot fetched ahead (see struct pend) */
	if (!L->pend) {
		L->pend = xcalloc(PEND, sizeof(*L->pend));
		L->pend_chain = xmalloc((size_t)PEND * DP_MAX_CALLCHAIN * sizeof(*L->pend_chain));
	}
	if (L->npend == PEND)
		pend_count(L);
	unsigned slot = (L->pend_head + L->npend++) % PEND;
	struct pend *q = &L->pend[slot];
	q->s = *s;
	q->weight = weight;
	q->domain = domain;
	q->nc = nc;
	q->map = map;
	q->comm = comm;
	q->kip = kip;
	q->asid = asid;
	q->h = h;
	if (nc) {
		uint64_t *c = L->pend_chain + (size_t)slot * DP_MAX_CALLCHAIN;
		memcpy(c, s->callchain, nc * sizeof(*c));
		q->s.callchain = c;
	}
	__builtin_prefetch(&L->keytab.slot[hidx_start(&L->keytab, h)]);
	/* the entry half the queue back: its slot is in cache by now, so
	 * its key can be fetched too */
	if (L->npend > PEND / 2) {
		const struct pend *m = &L->pend[(L->pend_head + L->npend - 1 - PEND / 2) % PEND];
		uint64_t sl = L->keytab.slot[hidx_start(&L->keytab, m->h)];
		if (sl)
			__builtin_prefetch(&L->keys[(uint32_t)sl - 1]);
	}
}

void profile_load_drain(struct loader *L)
{
	while (L->npend)
		pend_count(L);
}

/* The load pass: dp_scan calls these with the loader as ctx. Every
 * record but a sample drains the queue first: a new key looks up its
 * frames' maps in the symbol session as it stands at its sample. */
static int ld_sample(void *ctx, const struct dp_record *rec)
{
	on_sample(ctx, rec->domain, &rec->u.sample, rec->weight);
	return 0;
}

static int ld_mmap(void *ctx, const struct dp_record *rec)
{
	profile_load_drain(ctx);
	sym_add_mmap(((struct loader *)ctx)->pv->sym, rec->domain, &rec->u.mmap);
	return 0;
}

static int ld_task(void *ctx, const struct dp_record *rec)
{
	struct loader *L = ctx;
	profile_load_drain(L);
	const struct dp_task *t = &rec->u.task;
	/* a process's unwinding state (a Dwfl with its images) is not
	 * needed past its exit: short-lived processes would pile it up */
	if (L->uw && t->kind == DP_TASK_EXIT && t->pid == t->tid)
		sym_unwinder_forget(L->uw, rec->domain, t->pid);
	sym_add_task(((struct loader *)ctx)->pv->sym, rec->domain, &rec->u.task);
	return 0;
}

static int ld_symtab(void *ctx, const struct dp_record *rec)
{
	profile_load_drain(ctx);
	sym_add_symtab_rec(((struct loader *)ctx)->pv->sym, rec);
	return 0;
}

static int ld_domain(void *ctx, const struct dp_record *rec)
{
	profile_load_drain(ctx);
	on_domain(ctx, &rec->u.domain);
	return 0;
}

static int ld_event(void *ctx, const struct dp_record *rec)
{
	profile_load_drain(ctx);
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

static int ld_counters(void *ctx, const struct dp_record *rec)
{
	struct loader *L = ctx;
	dp_counter_sums_add(&L->pv->counters, rec->domain, &rec->u.counters);
	return 0;
}

static void ld_progress(void *ctx, uint64_t pos, uint64_t size)
{
	struct loader *L = ctx;
	if (L->o.progress)
		L->o.progress(L->o.progress_arg, pos, size);
}

const struct dp_visitor profile_load_visitor = {
	.sample = ld_sample, .mmap = ld_mmap, .task = ld_task, .symtab = ld_symtab,
	.domain = ld_domain, .event = ld_event, .lost = ld_lost, .stats = ld_stats,
	.counters = ld_counters, .progress = ld_progress,
};
