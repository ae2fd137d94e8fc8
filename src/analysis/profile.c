// SPDX-License-Identifier: MIT
/*
 * Building the aggregated profile (see profile.h for the contract): the
 * public lifecycle, profile_load* and profile_free. The passes live in
 * profile_load.c (1), profile_build.c (2, 3) and profile_query.c answers
 * questions on the result; their shared state is profile_internal.h.
 *
 * Three passes, each over less data than the one before:
 *  1. read: every record once; metadata goes to the symbol session in file
 *     order, each sample is counted under its unique key (domain, pid,
 *     mode, asid, leaf map, leaf ip, raw call chain) in an open-addressing
 *     table (hidx, util/hmap.h). Chains live in one growing arena;
 *     nothing is allocated per sample.
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

#include "analysis/profile_internal.h"
#include "analysis/options.h"
#include "util/sat.h"

/* p->counters from the sums read: sorted, names borrowed from the sums
 * (priv keeps them for the profile's lifetime). */
static void keep_counters(struct profile *p, struct priv *pv)
{
	struct dp_counter_sums *s = &pv->counters;
	dp_counter_sums_sort(s);
	p->counters = xcalloc(s->n + 1, sizeof(*p->counters));
	for (size_t i = 0; i < s->n; i++)
		p->counters[i] = (struct profile_counter){ s->v[i].domain, s->v[i].name, s->v[i].value };
	p->ncounters = s->n;
	p->counters_dropped = s->dropped;
}

static void loader_release(struct loader *L)
{
	hits_narrow_free(L->narrow);
	L->narrow = NULL;
	free(L->outk);
	L->outk = NULL;
	window_spans_release(&L->spans);
	free(L->pend);
	free(L->pend_chain);
	L->pend = NULL;
	L->pend_chain = NULL;
	timeline_release(L);
	hmap_release(&L->nolines);
	free(L->hit_raw);
	free(L->keys);
	free(L->key_tid);
	free(L->chain);
	free(L->chain_map);
	free(L->chain_mode);
	free(L->addrs);
	hidx_release(&L->keytab);
	hidx_release(&L->addrtab);
	hidx_release(&L->symtab);
}

/* A new profile and its loader state (no file read yet); NULL when the
 * symbol session cannot be made (err, msg set). */
static struct profile *loader_begin(struct loader *L, const struct profile_filter *filter,
				    const struct profile_opts *opts, int *err, char *msg, size_t msglen)
{
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

	for (size_t i = 0; opts && i < opts->nvmlinux; i++)
		sym_set_kernel_debug(pv->sym, opts->vmlinux[i].domain, opts->vmlinux[i].path);
	if (opts && opts->collect_lines)
		sym_lines_collect(pv->sym);

	memset(L, 0, sizeof(*L));
	L->p = p;
	L->pv = pv;
	L->f = filter;
	if (opts)
		L->o = *opts;
	L->chains = profile_opts_chains(opts);
	L->dom_filter = filter && filter->domain;
	if (L->dom_filter && !strcmp(filter->domain, "host")) {
		/* host may have no DOMAIN record in a host-only file */
		L->dom_found = true;
		L->dom_id = DP_HOST_DOMAIN;
	}
	hidx_init(&L->keytab, 4096);
	profile_domain_get(L, DP_HOST_DOMAIN);
	return p;
}

bool profile_opts_chains(const struct profile_opts *opts)
{
	return opts && (opts->callgraph || opts->stacks);
}

/* The profile's header: the (first) file's. */
static void keep_header(struct loader *L, const struct dp_reader *r)
{
	const struct dp_header *h = dp_reader_header(r);
	struct profile *p = L->p;
	if (!h)
		return;
	p->header = *h;
	p->header.hostname = profile_keep_str(L->pv, h->hostname);
	p->header.release = profile_keep_str(L->pv, h->release);
	p->header.cpu_desc = profile_keep_str(L->pv, h->cpu_desc);
	p->header.cmdline = profile_keep_str(L->pv, h->cmdline);
	if (h->source)
		p->header.source = profile_keep_str(L->pv, h->source);
}

/* Damage and the incomplete note of one file as warnings; `name` (when
 * several files are read) starts each line. */
static void file_warnings(struct profile *p, const struct dp_reader *r, const char *name)
{
	char pre[320] = "";
	if (name)
		snprintf(pre, sizeof(pre), "%.300s: ", name);
	const struct dp_damage *dmg;
	size_t nd = dp_reader_damage(r, &dmg);
	for (size_t i = 0; i < nd; i++) {
		char line[600];
		/* most reader messages name their offset (and what was skipped) already */
		if (strstr(dmg[i].what, "offset"))
			snprintf(line, sizeof(line), "%sdamaged file: %s", pre, dmg[i].what);
		else
			snprintf(line, sizeof(line), "%sdamaged file: %s at offset %llu (%llu bytes skipped)",
				 pre, dmg[i].what, (unsigned long long)dmg[i].offset,
				 (unsigned long long)dmg[i].bytes_lost);
		profile_add_warning(p, line);
		p->damaged_bytes = sat_add64(p->damaged_bytes, dmg[i].bytes_lost);
	}
	/* the one place a recording without its end becomes a warning for
	 * report, flamegraph, export and diff */
	const char *inc = dp_reader_incomplete(r);
	if (inc) {
		char line[600];
		snprintf(line, sizeof(line), "%s%s", pre, inc);
		profile_add_warning(p, line);
	}
	const char *note = dp_reader_note(r);  /* a perf.data's parts not understood */
	if (note) {
		char line[700];
		snprintf(line, sizeof(line), "%sperf.data: %s", pre, note);
		profile_add_warning(p, line);
	}
}

/* Several files: their STATS records summed into one (samples, lost and
 * wall time add up, the span is the union, the exit status and flags the
 * last file's, flags ORed); has_stats only when every file had one. */
static void sum_stats(struct profile *p, const struct dp_stats *acc, size_t with, size_t n)
{
	if (!with)
		return;
	p->has_stats = with == n;
	p->stats = *acc;
	if (with < n)
		p->stats.flags |= DP_STATS_INCOMPLETE;
}

static void add_stats(struct dp_stats *acc, const struct profile *p, size_t with)
{
	const struct dp_stats *s = &p->stats;
	if (!with) {
		*acc = *s;
		return;
	}
	acc->samples = sat_add64(acc->samples, s->samples);
	acc->lost = sat_add64(acc->lost, s->lost);
	acc->wall_ns = sat_add64(acc->wall_ns, s->wall_ns);
	acc->records = sat_add64(acc->records, s->records);
	acc->sample_records = sat_add64(acc->sample_records, s->sample_records);
	if (s->start_time < acc->start_time)
		acc->start_time = s->start_time;
	if (s->end_time > acc->end_time)
		acc->end_time = s->end_time;
	acc->exit_status = s->exit_status;
	acc->flags |= s->flags;
}

/* After the last file: the domain check, passes 2 and 3. NULL when the
 * --domain named none (err, msg set; p freed). */
static struct profile *loader_end(struct loader *L, int *err, char *msg, size_t msglen)
{
	struct profile *p = L->p;
	const struct profile_filter *filter = L->f;
	if (L->uw)
		sym_unwinder_stats(L->uw, &p->dwarf.walks);
	sym_unwinder_free(L->uw);   /* its libdwfl handles are not needed past reading */
	L->uw = NULL;
	keep_counters(p, L->pv);
	for (size_t i = 0; i < p->nevents; i++)
		p->events[i].samples = p->events[i].id < 256 ? L->ev_samples[p->events[i].id] : 0;
	if (p->lost == UINT64_MAX)
		profile_add_warning(p, "lost-sample counts in the file add up past 2^64: the lost total "
			       "is at least 18446744073709551615 (a LOST record is not plausible)");
	p->nfile_warnings = p->nwarnings;
	if (L->dom_filter && !L->dom_found) {
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
		loader_release(L);
		profile_free(p);
		return NULL;
	}
	profile_build(L);
	if (L->o.timeline)
		timeline_finish(L);
	if (filter && filter->has_time)
		time_window_note(L);
	loader_release(L);
	return p;
}

/* Read and build; when own, the reader is freed (and *rp cleared) as
 * soon as reading is done, so its buffers and mapped file are not
 * resident while symbols are loaded. */
static struct profile *load(struct dp_reader **rp, bool own, const struct profile_filter *filter,
			    const struct profile_opts *opts, int *err, char *msg, size_t msglen)
{
	struct dp_reader *r = *rp;
	struct loader L;
	/* annotate NAME narrows while reading (hits_early_in) when no
	 * filter needs the end (the comm filter: a process's last name; the
	 * image filter turns narrowing off) and the file can be read again */
	bool early = own && opts && opts->hits && opts->hits_only && opts->hits_symbol &&
		     !profile_opts_chains(opts) && !opts->timeline &&
		     !(filter && (filter->comm || filter->image));
	struct profile *p;
	for (;;) {
		p = loader_begin(&L, filter, opts, err, msg, msglen);
		if (!p)
			return NULL;
		L.early = early;
		keep_header(&L, r);
		if ((filter && filter->has_time) || L.o.timeline)
			window_spans_scan(r, &L.spans);
		if (L.o.timeline)
			timeline_setup(&L);
		dp_scan(r, &profile_load_visitor, &L, NULL);
		profile_load_drain(&L);
		if (!L.early || !sym_final_stale(L.pv->sym))
			break;
		/* a record after the samples changed an image they were
		 * narrowed by (an embedded ELF, a DOMAIN record): once more,
		 * narrowed at the end */
		loader_release(&L);
		profile_free(p);
		dp_reader_rewind(r);
		early = false;
	}
	uint64_t size = dp_reader_size(r);
	if (L.o.progress)
		L.o.progress(L.o.progress_arg, size, size);
	file_warnings(p, r, NULL);
	if (own) {
		dp_reader_free(r);
		*rp = NULL;
	}
	return loader_end(&L, err, msg, msglen);
}

/* The reader's options for a load with filter and opts: embedded symbol
 * tables stay compressed until the symbols need them. What the load
 * reads of each sample follows from them alone (profile_opts_chains: no
 * call chains for annotate or a flat report), so reader options that
 * skip the chains or count alike samples as one are set here, for both
 * ways of opening. Groups (DP_READ_GROUPS: a run of samples counted by
 * their fields in the reader, on its workers when it has them, before
 * the loader sees them) are asked for unless times count (--time,
 * --timeline), and keep the threads apart for by_tid, the CPUs for
 * --cpu. verify_counts reads the records and checks the counts parts
 * against them. */
static void reader_options(struct dp_reader *r, const struct profile_filter *filter,
			   const struct profile_opts *opts)
{
	unsigned fl = DP_READ_SYMTAB_STORED | (profile_opts_chains(opts) ? 0 : DP_READ_NO_CHAINS);
	if (!(filter && filter->has_time) && !(opts && opts->timeline))
		fl |= DP_READ_GROUPS | (opts && opts->by_tid ? DP_READ_GROUP_TID : 0) |
		      (filter && filter->cpus ? DP_READ_GROUP_CPU : 0);
	if (opts && opts->verify_counts)
		fl |= DP_READ_VERIFY_COUNTS;
	dp_reader_set_flags(r, fl);
}

/* Open one of several inputs the way profile_load opens its one. */
static struct dp_reader *open_input(const char *path, const struct profile_filter *filter,
				    const struct profile_opts *opts, int *err,
				    char *msg, size_t msglen)
{
	int e = 0;
	struct dp_reader *r = dp_reader_open(path, &e, msg, msglen);
	if (!r) {
		if (err)
			*err = e ? e : -EINVAL;
		return NULL;
	}
	reader_options(r, filter, opts);
	return r;
}

/* opts->jobs decoding threads, or as many as the file's size is worth */
static void set_jobs(struct dp_reader *r, const struct profile_opts *opts)
{
	unsigned j = !opts ? 1 : opts->jobs ? opts->jobs : jobs_for_size(dp_reader_size(r));
	if (j > 1)
		(void)dp_reader_set_threads(r, j);
}

struct profile *profile_load_files(const char *const *paths, size_t n, const struct profile_filter *filter,
				   const struct profile_opts *opts, int *err, char *msg, size_t msglen)
{
	if (n == 1)
		return profile_load(paths[0], filter, opts, err, msg, msglen);
	mallopt(M_MMAP_THRESHOLD, 128 << 10);   /* as profile_load (see there) */
	struct loader L;
	struct profile *p = n ? loader_begin(&L, filter, opts, err, msg, msglen) : NULL;
	if (!p) {
		if (!n && err)
			*err = -EINVAL;
		if (!n && msg && msglen)
			snprintf(msg, msglen, "no input file");
		return NULL;
	}
	/* Every file is opened once before reading: a bad one fails the
	 * command before any work, and --time's spans are the whole set's. */
	bool spans = (filter && filter->has_time) || L.o.timeline;
	for (size_t i = 0; i < n; i++) {
		struct dp_reader *r = open_input(paths[i], filter, opts, err, msg, msglen);
		if (!r) {
			loader_release(&L);
			profile_free(p);
			return NULL;
		}
		if (!i)
			keep_header(&L, r);
		if (spans)
			window_spans_scan(r, &L.spans);
		dp_reader_free(r);
	}
	if (L.o.timeline)
		timeline_setup(&L);
	uint64_t total = 0, done = 0;
	struct dp_stats acc = { 0 };
	size_t with_stats = 0;
	for (size_t i = 0; i < n; i++) {
		struct dp_reader *r = open_input(paths[i], filter, opts, err, msg, msglen);
		if (!r) {   /* it went away since: as damage, the others are read */
			char line[600];
			snprintf(line, sizeof(line), "%.300s: could not be read again: %s", paths[i], msg);
			profile_add_warning(p, line);
			continue;
		}
		total += dp_reader_size(r);
		if (opts)
			perf_guest_args_apply(opts->perf_guests, r);
		set_jobs(r, opts);
		p->has_stats = false;
		dp_scan(r, &profile_load_visitor, &L, NULL);
		profile_load_drain(&L);
		if (p->has_stats)
			add_stats(&acc, p, with_stats++);
		file_warnings(p, r, paths[i]);
		done += dp_reader_size(r);
		if (L.o.progress)
			L.o.progress(L.o.progress_arg, done, total);
		dp_reader_free(r);
	}
	sum_stats(p, &acc, with_stats, n);
	return loader_end(&L, err, msg, msglen);
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
	reader_options(r, filter, opts);
	if (opts)
		perf_guest_args_apply(opts->perf_guests, r);
	/* no worker started: the reader reads alone, the same profile */
	set_jobs(r, opts);
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

int profile_lines_export(const struct profile *p, sym_lines_fn fn, void *ctx, struct sym_lines_stats *st)
{
	return sym_lines_export(((const struct priv *)p->priv)->sym, fn, ctx, st);
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
		dp_counter_sums_release(&pv->counters);
		hits_free(pv);
		sym_session_free(pv->sym);
		free(pv);
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	timeline_free(p);
	free(p->events);
	free(p->domains);
	free(p->syms);
	free(p->edges);
	free(p->images);
	free(p->stacks);
	free(p->counters);
	free(p);
}
