// SPDX-License-Identifier: MIT
/*
 * `domprof merge -o OUT HOST NAME=GUEST...`: join recordings made
 * separately (a host recording and `domprof record` runs inside guests,
 * copied out by hand) into one multi-domain file, as if the guests had
 * been active domains of the host's recording.
 *
 * Two passes over each input through the format reader: the first learns
 * its domains, events, lost counts and stats; the second copies every
 * domain-scoped record (samples, tasks, mmaps, symbol tables) with
 * dp_write_raw under its new domain id, so the bytes of a record are
 * never re-encoded except a SAMPLE whose event id had to change. The
 * writer inserts the DOMAIN_SWITCH records. Rules (docs/merge-diff.md):
 *  - HOST's domains keep their ids and DOMAIN records;
 *  - each domain of a guest file gets the next free id: its domain 0 is
 *    named NAME (kind active), any other domain NAME.SUBNAME (its kind);
 *  - an event with the same definition (type, config, period, freq, name)
 *    as one already in the output shares its id; a different event keeps
 *    its id if free, else gets the next free one, and the SAMPLEs that
 *    use it are rewritten with the new id;
 *  - LOST records are copied (where = a domain id is remapped), one STATS
 *    sums samples and lost of all inputs.
 * The output follows the rule of util/outfile.h (as `record -o` does):
 * written to OUT.tmp-PID and renamed into place at the end, so an input
 * may be the output and a failure leaves OUT untouched; a symlink OUT is
 * followed, OUT.old kept unless -f, a non-regular OUT refused, and an OUT
 * a recorder is still writing is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "format/format.h"
#include "format/scan.h"
#include "util/hmap.h"
#include "util/outfile.h"
#include "util/sat.h"
#include "util/xalloc.h"

const char usage_merge[] =
	"usage: domprof merge -o OUT [-f] HOST.data NAME=GUEST.data...\n"
	"\n"
	"Join recordings made separately into one multi-domain file: HOST.data\n"
	"keeps its domains (the host is domain 0); each NAME=GUEST.data (a\n"
	"recording made with `domprof record` inside a guest and copied out)\n"
	"becomes a new active domain NAME with the next free id, carrying its\n"
	"samples, processes, mappings and embedded symbol tables (its kallsyms).\n"
	"A guest file with several domains gives NAME, NAME.SUB, ... \n"
	"Damaged inputs are merged as far as they can be read, with a warning; an\n"
	"incomplete input (its recorder was killed) is merged with a warning and\n"
	"makes the output incomplete too.\n"
	"\n"
	"  -o, --output OUT   file to write; an existing OUT is renamed OUT.old\n"
	"  -f, --force        overwrite OUT instead of keeping OUT.old\n"
	"  -q, --quiet        no summary line\n";

struct input {
	const char *path;
	const char *name;         /* NULL for the host file */
	struct dp_reader *r;
	struct dp_meta m;         /* pass 1: domains, events, samples, lost, stats */
	/* parallel to m.domains: the output's id and (guests) name */
	uint32_t *dom_new_id;
	char **dom_new_name;
	size_t *order;            /* indices of m.domains in the order they are written */
	uint32_t *ev_new_id;      /* parallel to m.events */
};

/* Pass 1: what the input holds (every lookup by id goes through the
 * meta's index: inputs may hold tens of thousands of domains). */
static void scan(struct input *in)
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

static void input_release(struct input *in)
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

static uint32_t map_domain(const struct input *in, uint32_t id)
{
	long at = dp_meta_domain_index(&in->m, id);
	return at >= 0 ? in->dom_new_id[at]
		       : id; /* every scoped domain was seen in pass 1; keep the rest */
}

static uint32_t map_event(const struct input *in, uint32_t id)
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
 * Returns 0, or the usage error's status for a name used twice. */
static int assign_domains(struct input *in, size_t nin)
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
				rc = usage_error("merge", "domain name '%s' is used twice (choose another NAME)", name);
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
 * returns 0, or -1 after printing why (ids beyond the sample's u16).
 */
static int merge_events(struct input *in, size_t nin, struct dp_event **out, size_t *nout)
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
				fprintf(stderr, "domprof merge: too many distinct events to merge (ids above %u)\n",
					UINT16_MAX);
				ret = -1;
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
	if (ret < 0) {
		free(evs);
		evs = NULL;
		nevs = 0;
	}
	*out = evs;
	*nout = nevs;
	return ret;
}

static void warn_damage(const struct input *in)
{
	const struct dp_damage *dmg = in->m.damage;
	size_t nd = in->m.ndamage;
	uint64_t bytes = 0;
	for (size_t i = 0; i < nd; i++) {
		fprintf(stderr, "domprof merge: warning: %s: damaged at offset %" PRIu64 ": %s\n",
			in->path, dmg[i].offset, dmg[i].what);
		bytes += dmg[i].bytes_lost;
	}
	if (nd)
		fprintf(stderr, "domprof merge: warning: %s is damaged: merged its %" PRIu64
				" readable samples, %" PRIu64 " bytes lost\n", in->path, in->m.samples, bytes);
	const char *inc = in->m.incomplete;
	if (inc)
		fprintf(stderr, "domprof merge: warning: %s: %s; the merged file says so too\n",
			in->path, inc);
}

/* Pass 2: copy the input's records into w under their new ids. */
struct copy {
	struct input *in;
	struct dp_writer *w;
	uint64_t *nsamples;
};

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
	if (ev == rec->u.sample.event)
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
	return dp_write_raw(c->w, map_domain(c->in, rec->domain), rec->raw, rec->raw_len);
}

/* EVENT, DOMAIN and STATS are written once, up front or at the end. */
static const struct dp_visitor copy_visitor = {
	.sample = copy_sample, .lost = copy_lost,
	.mmap = copy_raw, .task = copy_raw, .symtab = copy_raw, .other = copy_raw,
};

static int copy_records(struct input *in, struct dp_writer *w, uint64_t *nsamples)
{
	struct copy c = { in, w, nsamples };
	return dp_scan(in->r, &copy_visitor, &c, NULL);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	bool force = false, quiet = false;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":o:fq", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'q': quiet = true; break;
		case ':': return usage_error("merge", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("merge", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!out)
		return usage_error("merge", "needs an output file (-o OUT)");
	if (argc - optind < 2)
		return usage_error("merge", "needs a host recording and at least one NAME=GUEST.data");

	/* The command line for the header, before NAME=FILE are split below. */
	struct dp_header local;
	char **hargv = xcalloc((size_t)argc + 1, sizeof(char *));
	hargv[0] = "domprof";
	memcpy(hargv + 1, argv, (size_t)argc * sizeof(char *));
	dp_header_fill_local(&local, argc + 1, hargv);
	free(hargv);

	size_t nin = (size_t)(argc - optind);
	struct input *in = xcalloc(nin, sizeof(*in));
	int rc = 1;
	in[0].path = argv[optind];
	for (size_t i = 1; i < nin; i++) {
		char *arg = argv[optind + (int)i];
		char *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1]) {
			rc = usage_error("merge", "'%s' is not NAME=FILE", arg);
			goto done;
		}
		*eq = '\0';
		in[i].name = arg;
		in[i].path = eq + 1;
		if (strchr(in[i].name, '|') || strchr(in[i].name, ',') || strchr(in[i].name, ' ')) {
			rc = usage_error("merge", "domain name '%s' may not hold '|', ',' or spaces", in[i].name);
			goto done;
		}
	}

	/* Open everything first: an unreadable input stops before OUT is touched. */
	for (size_t i = 0; i < nin; i++) {
		char msg[256] = "";
		int err = 0;
		in[i].r = dp_reader_open(in[i].path, &err, msg, sizeof(msg));
		if (!in[i].r) {
			if (*msg && strstr(msg, in[i].path))
				fprintf(stderr, "domprof merge: %s\n", msg);
			else
				fprintf(stderr, "domprof merge: %s: %s\n", in[i].path,
					*msg ? msg : err > -1000 ? strerror(-err) : "not a domprof file");
			goto done;
		}
		/* tables are copied as stored, never decompressed */
		dp_reader_set_flags(in[i].r, DP_READ_SYMTAB_STORED);
		scan(&in[i]);
	}

	if ((rc = assign_domains(in, nin)) != 0)
		goto done;
	rc = 1;

	struct dp_event *evs = NULL;
	size_t nevs = 0;
	if (merge_events(in, nin, &evs, &nevs) < 0)
		goto done;

	/* Header: the host's machine, this command line. */
	struct dp_header hdr = *dp_reader_header(in[0].r);
	hdr.cmdline = local.cmdline;

	struct outfile of;
	char msg[PATH_MAX * 2 + 256];
	int oerr = outfile_open(&of, out, force ? OUTFILE_FORCE : 0);
	if (oerr < 0) {
		fprintf(stderr, "domprof merge: %s\n", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		free(evs);
		goto done;
	}
	int werr = 0, wfd = fcntl(of.fd, F_DUPFD_CLOEXEC, 3);
	struct dp_writer_opts wo = { .zstd_level = 3 };
	struct dp_writer *w = wfd < 0 ? NULL : dp_writer_new(wfd, &hdr, &wo, &werr);
	if (!w) {
		fprintf(stderr, "domprof merge: cannot write '%s': %s\n", of.tmp,
			strerror(wfd < 0 ? errno : -werr));
		outfile_discard(&of);
		free(evs);
		goto done;
	}
	int ret = 0;
	for (size_t j = 0; j < nevs && !ret; j++)
		ret = dp_write_event(w, &evs[j]);
	free(evs);

	/* DOMAIN records before any scoped record, so readers know names first. */
	for (size_t i = 0; i < in[0].m.ndomains && !ret; i++) {
		const struct dp_meta_domain *d = &in[0].m.domains[i];
		if (d->has_record) {
			ret = dp_write_domain(w, &d->d);
		} else {
			char nm[32];
			struct dp_domain dd = { .id = d->id, .kind = d->id ? DP_DOMAIN_PASSIVE : DP_DOMAIN_HOST,
						.vcpus = d->id ? 0 : hdr.ncpus, .address = "", .symsrc = "" };
			dd.name = host_dom_name(d, nm, sizeof(nm));
			ret = dp_write_domain(w, &dd);
		}
	}
	for (size_t k = 1; k < nin && !ret; k++) {
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

	uint64_t nsamples = 0, lost = 0;
	struct dp_stats st = { 0 };
	for (size_t k = 0; k < nin && !ret; k++) {
		ret = copy_records(&in[k], w, &nsamples);
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
			if (s->wall_ns > st.wall_ns)
				st.wall_ns = s->wall_ns;
			st.flags |= s->flags;
			if (k == 0)
				st.exit_status = s->exit_status;
		}
	}
	st.samples = nsamples;
	st.lost = lost;
	if (!ret)
		ret = dp_write_stats(w, &st);
	int fret = dp_writer_finish(w);
	if (!ret)
		ret = fret;
	if (ret) {
		fprintf(stderr, "domprof merge: writing '%s' failed: %s\n", of.tmp, strerror(-ret));
		outfile_discard(&of);
		goto done;
	}
	if ((oerr = outfile_commit(&of)) < 0) {
		fprintf(stderr, "domprof merge: %s\n", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		outfile_discard(&of);
		goto done;
	}
	outfile_release(&of);
	for (size_t k = 0; k < nin; k++)
		warn_damage(&in[k]);
	if (!quiet) {
		size_t ndom = 0;
		for (size_t k = 0; k < nin; k++)
			ndom += in[k].m.ndomains;
		fprintf(stderr, "domprof merge: wrote %s: %zu domains, %" PRIu64 " samples, %" PRIu64
				" lost, from %zu files\n", out, ndom, nsamples, lost, nin);
	}
	rc = 0;
done:
	for (size_t k = 0; k < nin; k++)
		input_release(&in[k]);
	free(in);
	return rc;
}
