// SPDX-License-Identifier: MIT
/*
 * The merge algorithm (see merge.h), moved out of cmd-merge.c. Two passes
 * over each input through dp_scan: the first learns its domains, events,
 * lost counts and stats (its dp_meta); the second copies every
 * domain-scoped record (samples, tasks, mmaps, symbol tables, counters,
 * tags this build does not know) with
 * dp_write_raw under its new domain id, so the bytes of a record are
 * never re-encoded except a SAMPLE whose event id had to change and the
 * source line tables, united per image at the end (merge_lines.h). The
 * writer inserts the DOMAIN_SWITCH records.
 */
#include "analysis/merge.h"
#include "analysis/merge_lines.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/sat.h"
#include "util/xalloc.h"

/* Pass 1: what the input holds (every lookup by id goes through the
 * meta's index: inputs may hold tens of thousands of domains). */
static void scan(struct merge_input *in)
{
	dp_scan(in->r, NULL, NULL, &in->m);
	size_t nd = in->m.ndomains, ne = in->m.nevents;
	in->dom_new_id = xcalloc(nd + 1, sizeof(*in->dom_new_id));
	in->dom_new_name = xcalloc(nd + 1, sizeof(*in->dom_new_name));
	in->order = xcalloc(nd + 1, sizeof(*in->order));
	in->ev_new_id = xcalloc(ne + 1, sizeof(*in->ev_new_id));
	for (size_t i = 0; i < nd; i++) {
		in->dom_new_id[i] = in->m.domains[i].id;
		in->order[i] = i;
	}
	for (size_t i = 0; i < ne; i++)
		in->ev_new_id[i] = in->m.events[i].e.id;
}

void merge_input_release(struct merge_input *in)
{
	for (size_t i = 0; in->dom_new_name && i < in->m.ndomains; i++)
		free(in->dom_new_name[i]);
	free(in->dom_new_name);
	free(in->dom_new_id);
	free(in->order);
	free(in->ev_new_id);
	dp_meta_release(&in->m);
	dp_reader_free(in->r);
}

/* Sorting an index of one input's domains by id, with its context. */
static int cmp_dom(const void *a, const void *b, void *ctx)
{
	const struct dp_meta *m = ctx;
	uint32_t x = m->domains[*(const size_t *)a].id, y = m->domains[*(const size_t *)b].id;
	return x < y ? -1 : x > y;
}

static uint32_t map_domain(const struct merge_input *in, uint32_t id)
{
	long at = dp_meta_domain_index(&in->m, id);
	return at >= 0 ? in->dom_new_id[at]
		       : id; /* every scoped domain was seen in pass 1; keep the rest */
}

static uint32_t map_event(const struct merge_input *in, uint32_t id)
{
	long at = dp_meta_event_index(&in->m, id);
	return at >= 0 ? in->ev_new_id[at] : id;
}

static bool same_event(const struct dp_event *a, const struct dp_event *b)
{
	return a->type == b->type && a->config == b->config && a->period == b->period &&
	       a->freq == b->freq && !strcmp(a->name, b->name);
}

/* The name HOST's domain d has in the output. */
static const char *host_dom_name(const struct dp_meta_domain *d, char *buf, size_t len)
{
	if (d->has_record && *d->d.name)
		return d->d.name;
	if (d->id == DP_HOST_DOMAIN)
		return "host";
	snprintf(buf, len, "domain%" PRIu32, d->id);
	return buf;
}

/* The output's domain names so far (owned copies), to refuse a second use. */
struct names {
	struct hmap taken;
	char **own;
	size_t n, cap;
};

/* Adds name; false when it was taken already. */
static bool name_add(struct names *nm, const char *name)
{
	if (strmap_get(&nm->taken, name))
		return false;
	xgrow((void **)&nm->own, &nm->cap, nm->n + 1, sizeof(*nm->own));
	char *c = nm->own[nm->n++] = xstrdup(name);
	strmap_put(&nm->taken, c, c);
	return true;
}

static void names_release(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->own[i]);
	free(nm->own);
	hmap_release(&nm->taken);
}

/* Domain ids and names of the output: HOST's keep theirs; each guest
 * file's domains (in id order) take the next free ids and NAME[.SUB].
 * Returns 0, or MERGE_ERR_NAME (and why in msg) for a name used twice. */
static int assign_domains(struct merge_input *in, size_t nin, char *msg, size_t msglen)
{
	struct names nm = { 0 };
	uint32_t next = 0;
	char buf[32];
	for (size_t i = 0; i < in[0].m.ndomains; i++) {
		if (in[0].m.domains[i].id >= next)
			next = in[0].m.domains[i].id + 1;
		name_add(&nm, host_dom_name(&in[0].m.domains[i], buf, sizeof(buf)));
	}
	int rc = 0;
	for (size_t k = 1; k < nin && !rc; k++) {
		if (!in[k].name) {
			/* HOST continued: its ids; a domain HOST lacks is named too */
			for (size_t i = 0; i < in[k].m.ndomains; i++) {
				const struct dp_meta_domain *d = &in[k].m.domains[i];
				if (d->id >= next)
					next = d->id + 1;
				if (!dp_meta_domain(&in[0].m, d->id))
					name_add(&nm, host_dom_name(d, buf, sizeof(buf)));
			}
			continue;
		}
		qsort_r(in[k].order, in[k].m.ndomains, sizeof(*in[k].order), cmp_dom, &in[k].m);
		for (size_t j = 0; j < in[k].m.ndomains; j++) {
			size_t i = in[k].order[j];
			const struct dp_meta_domain *d = &in[k].m.domains[i];
			char name[256];
			if (d->id == DP_HOST_DOMAIN)
				snprintf(name, sizeof(name), "%s", in[k].name);
			else if (d->has_record && *d->d.name)
				snprintf(name, sizeof(name), "%s.%s", in[k].name, d->d.name);
			else
				snprintf(name, sizeof(name), "%s.%" PRIu32, in[k].name, d->id);
			if (!name_add(&nm, name)) {
				snprintf(msg, msglen, "domain name '%s' is used twice (choose another NAME)", name);
				rc = MERGE_ERR_NAME;
				break;
			}
			in[k].dom_new_name[i] = xstrdup(name);
			in[k].dom_new_id[i] = next++;
		}
	}
	names_release(&nm);
	return rc;
}

/*
 * Event ids: equal definitions share an id, others keep theirs or get a
 * free one. Fills *out (malloc'd; names borrowed from the inputs) and
 * returns 0, or MERGE_ERR_EVENTS and why in msg (ids beyond the sample's u16).
 */
static int merge_events(struct merge_input *in, size_t nin, struct dp_event **out, size_t *nout,
			char *msg, size_t msglen)
{
	struct dp_event *evs = NULL;
	size_t nevs = 0, evcap = 0;
	struct hmap by_def = { 0 }, by_id = { 0 };  /* definition text / output id -> index+1 */
	struct names defs = { 0 };                  /* owns the definition texts */
	uint32_t next_ev = 0;
	int ret = 0;
	for (size_t k = 0; k < nin; k++)
		for (size_t i = 0; i < in[k].m.nevents; i++)
			if (in[k].m.events[i].e.id >= next_ev)
				next_ev = in[k].m.events[i].e.id + 1;
	for (size_t k = 0; k < nin && !ret; k++)
		for (size_t i = 0; i < in[k].m.nevents; i++) {
			const struct dp_meta_event *e = &in[k].m.events[i];
			uint32_t *new_id = &in[k].ev_new_id[i];
			char def[320];
			snprintf(def, sizeof(def), "%" PRIu32 ":%" PRIu64 ":%" PRIu64 ":%d:%s", e->e.type,
				 e->e.config, e->e.period, e->e.freq, e->e.name);
			uintptr_t at = (uintptr_t)strmap_get(&by_def, def);
			if (at && same_event(&evs[at - 1], &e->e)) {
				*new_id = evs[at - 1].id;
				continue;
			}
			*new_id = u64map_get(&by_id, e->e.id) ? next_ev++ : e->e.id;
			if (*new_id > UINT16_MAX) {
				snprintf(msg, msglen, "too many distinct events to merge (ids above %u)",
					 UINT16_MAX);
				ret = MERGE_ERR_EVENTS;
				break;
			}
			xgrow((void **)&evs, &evcap, nevs + 1, sizeof(*evs));
			evs[nevs] = e->e;
			evs[nevs++].id = *new_id;
			u64map_put(&by_id, *new_id, (void *)(uintptr_t)nevs);
			if (!at && name_add(&defs, def))
				strmap_put(&by_def, defs.own[defs.n - 1], (void *)(uintptr_t)nevs);
		}
	hmap_release(&by_def);
	hmap_release(&by_id);
	names_release(&defs);
	if (ret) {
		free(evs);
		evs = NULL;
		nevs = 0;
	}
	*out = evs;
	*nout = nevs;
	return ret;
}

/* Pass 2: copy the input's records into w under their new ids. */
struct copy {
	struct merge_input *in;
	struct dp_writer *w;
	uint64_t *nsamples;
	struct merge_seen *seen;   /* NULL: no SYMTAB is checked for a repeat */
	struct merge_lines *lines; /* the line tables, written at the end */
};

/* The SYMTAB records copied so far (a HOST series): hash -> copy. */
struct merge_seen {
	struct hmap by_hash;       /* hash -> index + 1 of the first with it */
	struct { uint32_t domain, len; uint8_t *raw; } *v;
	size_t n, cap;
};

static uint64_t fnv64(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* True when this record was copied already (same domain, same bytes);
 * else it is remembered. Colliding hashes keep the first only in the
 * index: a later one of another content is copied (never dropped). */
static bool seen_before(struct merge_seen *s, uint32_t dom, const void *raw, uint32_t len)
{
	uint64_t h = fnv64(raw, len) ^ dom;
	uintptr_t at = (uintptr_t)u64map_get(&s->by_hash, h);
	if (at) {
		const __typeof__(s->v[0]) *e = &s->v[at - 1];
		return e->domain == dom && e->len == len && !memcmp(e->raw, raw, len);
	}
	xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n].domain = dom;
	s->v[s->n].len = len;
	s->v[s->n].raw = xmalloc(len ? len : 1);
	memcpy(s->v[s->n].raw, raw, len);
	s->n++;
	u64map_put(&s->by_hash, h, (void *)(uintptr_t)s->n);
	return false;
}

static void seen_release(struct merge_seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].raw);
	free(s->v);
	hmap_release(&s->by_hash);
	memset(s, 0, sizeof(*s));
}

static int copy_lost(void *ctx, const struct dp_record *rec)
{
	struct copy *c = ctx;
	struct dp_lost l = rec->u.lost;
	if (l.source == DP_LOST_DOMAIN || l.source == DP_LOST_AGENT)
		l.where = map_domain(c->in, l.where);
	return dp_write_lost(c->w, &l);
}

static int copy_sample(void *ctx, const struct dp_record *rec)
{
	struct copy *c = ctx;
	uint32_t dom = map_domain(c->in, rec->domain);
	uint32_t ev = map_event(c->in, rec->u.sample.event);
	(*c->nsamples)++;
	/* a sample with a user stack is written again, in the encoding the
	 * writer was asked for (delta form or whole; a delta sample has no
	 * raw bytes to copy) */
	if (ev == rec->u.sample.event && !rec->u.sample.has_uregs)
		return dp_write_raw(c->w, dom, rec->raw, rec->raw_len);
	struct dp_sample s = rec->u.sample;
	s.event = (uint16_t)ev;
	return dp_write_sample(c->w, dom, &s);
}

static int copy_raw(void *ctx, const struct dp_record *rec)
{
	struct copy *c = ctx;
	if (rec->type == DP_REC_DOMAIN_SWITCH)
		return 0; /* the writer inserts its own */
	uint32_t dom = map_domain(c->in, rec->domain);
	if (rec->type == DP_REC_SYMTAB && merge_lines_hold(c->lines, dom, rec))
		return 0;
	if (c->seen && rec->type == DP_REC_SYMTAB && seen_before(c->seen, dom, rec->raw, rec->raw_len))
		return 0;
	return dp_write_raw(c->w, dom, rec->raw, rec->raw_len);
}

/* EVENT, DOMAIN and STATS are written once, up front or at the end.
 * COUNTERS are copied as they are under the domain's new id: values add
 * up per (domain, name) over all records, so copying every record keeps
 * each domain's totals (a COUNTERS callback is needed: a known tag never
 * reaches `other`). */
static const struct dp_visitor copy_visitor = {
	.sample = copy_sample, .lost = copy_lost,
	.mmap = copy_raw, .task = copy_raw, .symtab = copy_raw, .counters = copy_raw,
	.other = copy_raw,
};

static int copy_records(struct merge_input *in, struct dp_writer *w, uint64_t *nsamples,
			struct merge_seen *seen, struct merge_lines *lines)
{
	struct copy c = { in, w, nsamples, seen, lines };
	return dp_scan(in->r, &copy_visitor, &c, NULL);
}

int merge_plan(struct merge *mg, struct merge_input *in, size_t nin, char *msg, size_t msglen)
{
	mg->in = in;
	mg->nin = nin;
	for (size_t i = 0; i < nin; i++)
		scan(&in[i]);
	int rc = assign_domains(in, nin, msg, msglen);
	if (!rc)
		rc = merge_events(in, nin, &mg->evs, &mg->nevs, msg, msglen);
	return rc;
}

void merge_release(struct merge *mg)
{
	free(mg->evs);
	mg->evs = NULL;
	mg->nevs = 0;
}

/* Pass 2 for every input, after the EVENT and DOMAIN records. */
int merge_write(struct merge *mg, struct dp_writer *w)
{
	struct merge_input *in = mg->in;
	size_t nin = mg->nin;
	int ret = 0;
	for (size_t j = 0; j < mg->nevs && !ret; j++)
		ret = dp_write_event(w, &mg->evs[j]);

	/* DOMAIN records before any scoped record, so readers know names first. */
	for (size_t i = 0; i < in[0].m.ndomains && !ret; i++) {
		const struct dp_meta_domain *d = &in[0].m.domains[i];
		u64map_put(&mg->host_ids, d->id, (void *)1);
		if (d->has_record) {
			ret = dp_write_domain(w, &d->d);
		} else {
			char nm[32];
			struct dp_domain dd = { .id = d->id, .kind = d->id ? DP_DOMAIN_PASSIVE : DP_DOMAIN_HOST,
						.vcpus = d->id ? 0 : dp_reader_header(in[0].r)->ncpus, .address = "", .symsrc = "" };
			dd.name = host_dom_name(d, nm, sizeof(nm));
			ret = dp_write_domain(w, &dd);
		}
	}
	for (size_t k = 1; k < nin && !ret; k++) {
		if (!in[k].name) {
			/* HOST continued: the DOMAIN records of ids no host file before had */
			for (size_t i = 0; i < in[k].m.ndomains && !ret; i++) {
				const struct dp_meta_domain *d = &in[k].m.domains[i];
				if (u64map_get(&mg->host_ids, d->id))
					continue;
				u64map_put(&mg->host_ids, d->id, (void *)1);
				if (d->has_record)
					ret = dp_write_domain(w, &d->d);
			}
			continue;
		}
		char addr[4200];
		snprintf(addr, sizeof(addr), "merge:%s", in[k].path);
		for (size_t j = 0; j < in[k].m.ndomains && !ret; j++) {
			size_t i = in[k].order[j];
			const struct dp_meta_domain *d = &in[k].m.domains[i];
			struct dp_domain dd = {
				.id = in[k].dom_new_id[i],
				.kind = d->id == DP_HOST_DOMAIN ? DP_DOMAIN_ACTIVE
					: d->has_record ? d->d.kind : DP_DOMAIN_ACTIVE,
				.vcpus = d->has_record && d->d.vcpus ? d->d.vcpus
					 : d->id == DP_HOST_DOMAIN ? dp_reader_header(in[k].r)->ncpus : 0,
				.kaslr_offset = d->has_record ? d->d.kaslr_offset : 0,
				.name = in[k].dom_new_name[i],
				.address = addr,
				.symsrc = "embedded",
			};
			ret = dp_write_domain(w, &dd);
		}
	}

	uint64_t nsamples = 0, lost = 0, host_wall = 0;
	struct dp_stats st = { 0 };
	bool series = nin > 1 && !in[1].name;
	struct merge_seen seen = { 0 };
	struct merge_lines *lines = merge_lines_new();
	for (size_t k = 0; k < nin && !ret; k++) {
		bool host = k == 0 || !in[k].name;
		ret = copy_records(&in[k], w, &nsamples, series && host ? &seen : NULL, lines);
		lost = sat_add64(lost, in[k].m.lost); /* the file's word */
		/* an input without its end makes the merge incomplete as well */
		if (dp_reader_incomplete(in[k].r))
			st.flags |= DP_STATS_INCOMPLETE;
		if (in[k].m.has_stats) {
			const struct dp_stats *s = &in[k].m.stats;
			if (s->start_time && (!st.start_time || s->start_time < st.start_time))
				st.start_time = s->start_time;
			if (s->end_time > st.end_time)
				st.end_time = s->end_time;
			if (host)
				host_wall = sat_add64(host_wall, s->wall_ns);
			else if (s->wall_ns > st.wall_ns)
				st.wall_ns = s->wall_ns;
			st.flags |= s->flags;
			if (host)
				st.exit_status = s->exit_status;
		}
	}
	seen_release(&seen);
	if (!ret)
		ret = merge_lines_write(lines, w);
	merge_lines_free(lines);
	if (host_wall > st.wall_ns)
		st.wall_ns = host_wall;
	st.samples = nsamples;
	st.lost = lost;
	if (!ret)
		ret = dp_write_stats(w, &st);
	mg->samples = nsamples;
	mg->lost = lost;
	mg->ndomains = mg->host_ids.n;
	for (size_t k = 1; k < nin; k++)
		if (in[k].name)
			mg->ndomains += in[k].m.ndomains;
	hmap_release(&mg->host_ids);
	return ret;
}
