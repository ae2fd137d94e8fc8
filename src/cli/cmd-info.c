// SPDX-License-Identifier: MIT
/*
 * `domprof info FILE`: what a recording holds — header, domains, events,
 * record counts per type and per domain, lost samples, and any damage the
 * reader found. Reads the whole file once.
 */
#include <stddef.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "analysis/inputs.h"
#include "analysis/profile.h"
#include "cli/blocks.h"
#include "commands.h"
#include "format/format.h"
#include "format/scan.h"
#include "analysis/rates.h"
#include "output/escape.h"
#include "output/report.h"
#include "util/xalloc.h"

/* The unwinding of the file's user stacks, as report -g does it (the
 * profile loader with call chains, symbols from this machine and the
 * file). A file that does not load says why on the same line. */
static void print_unwinding(const char *path)
{
	const struct profile_opts o = { .callgraph = true };
	int err;
	char msg[256];
	struct profile *p = profile_load(path, NULL, &o, &err, msg, sizeof(msg));
	if (!p) {
		text_line(stdout, "dwarf unwinding: not done: ", msg);
		return;
	}
	report_dwarf_line(stdout, p, "");
	profile_free(p);
}

/* Events as the file lists them, every EVENT record (repeats included). */
static int on_event(void *ctx, const struct dp_record *rec)
{
	char *name = text_escape(rec->u.event.name);   /* names from the file: escape.h */
	fprintf(ctx, "  id %u: %s, %s %" PRIu64 "\n", rec->u.event.id, name,
		rec->u.event.freq ? "frequency" : "period", rec->u.event.period);
	free(name);
	return 0;
}

static int cmp_listed(const void *a, const void *b)
{
	uint64_t x = (*(const struct dp_meta_domain *const *)a)->listed;
	uint64_t y = (*(const struct dp_meta_domain *const *)b)->listed;
	return x < y ? -1 : x > y;
}

static void print_domains(const struct dp_meta *m)
{
	/* the domains that hold samples or are described, in the order the
	 * file first did so (a domain with only maps or tasks is not listed) */
	const struct dp_meta_domain **v = xcalloc(m->ndomains + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < m->ndomains; i++)
		if (m->domains[i].listed)
			v[n++] = &m->domains[i];
	qsort(v, n, sizeof(*v), cmp_listed);
	printf("domains:\n");
	for (size_t i = 0; i < n; i++) {
		const struct dp_meta_domain *d = v[i];
		const char *name = d->has_record ? d->d.name
				   : d->id == DP_HOST_DOMAIN ? "host" : "(no DOMAIN record)";
		const char *kind = d->has_record ? dp_domain_kind_name(d->d.kind)
				   : d->id == DP_HOST_DOMAIN ? "host" : "?";
		struct text_tmp t = { 0 };
		printf("  %-3u %-12s %-8s %10" PRIu64 " samples", d->id, text_tmp_safe(&t, name), kind,
		       d->samples);
		if (d->d.address[0])
			printf("  via %s", text_tmp_safe(&t, d->d.address));
		if (d->d.symsrc[0])
			printf("  symbols %s", text_tmp_safe(&t, d->d.symsrc));
		text_tmp_free(&t);
		if (d->d.vcpus)
			printf("  vcpus %u", d->d.vcpus);
		if (d->d.kaslr_offset)
			printf("  kaslr 0x%" PRIx64, d->d.kaslr_offset);
		printf("\n");
	}
	free(v);
}

/* The name `info` gives domain `id` in its counters section. */
static const char *dom_label(const struct dp_meta *m, uint32_t id)
{
	const struct dp_meta_domain *d = dp_meta_domain(m, id);
	if (d && d->has_record && d->d.name[0])
		return d->d.name;
	return id == DP_HOST_DOMAIN ? "host" : "(no DOMAIN record)";
}

/* Every domain's counter totals, one line each, domains by id and names
 * in byte order, but the rate counters (the rates section shows them);
 * nothing at all for a file without other COUNTERS records. */
static void print_counters(struct dp_meta *m)
{
	struct dp_counter_sums *s = &m->counters;
	size_t shown = 0;
	for (size_t i = 0; i < s->n; i++)
		shown += !rate_counter(s->v[i].name);
	if (!shown && !s->dropped)
		return;
	dp_counter_sums_sort(s);
	printf("counters:    (totals over the recording, per domain)\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct dp_counter_sum *c = &s->v[i];
		if (rate_counter(c->name))
			continue;  /* in the rates section */
		char *dl = text_escape(dom_label(m, c->domain));
		printf("  %-3u %-12s %-32s %20" PRIu64 "\n", c->domain, dl, c->name, c->value);
		free(dl);
	}
	if (s->dropped)
		printf("  %" PRIu64 " more counter values not kept (over %u distinct names)\n", s->dropped,
		       DP_COUNTER_SUMS_MAX);
}

/* One line per domain whose recorder wrote rate COUNTERS: requested
 * against achieved rate, lost, the recorder's CPU for it. */
static void print_rates(struct dp_meta *m)
{
	struct dp_counter_sums *s = &m->counters;
	bool any = false;
	dp_counter_sums_sort(s);
	for (size_t i = 0; i < s->n; i++) {
		uint32_t id = s->v[i].domain;
		if (i && s->v[i - 1].domain == id)
			continue;  /* sorted by domain: each once */
		struct rate_sums rs;
		if (!rate_from_counters(m, id, &rs))
			continue;
		const struct dp_meta_domain *d = dp_meta_domain(m, id);
		bool passive = d && d->has_record && d->d.kind == DP_DOMAIN_PASSIVE;
		char line[400];
		rate_format(&rs, passive ? "vCPU" : "CPU", line, sizeof(line));
		if (!any)
			printf("rates:       (per domain: the recorder's own counts)\n");
		any = true;
		/* "NAME:" first: scripts that pick a domain's line out of
		 * the domains section by its second word stay unaffected */
		char *dl = text_escape(dom_label(m, id));
		printf("  %s: %s\n", dl, line);
		free(dl);
	}
}

/* Several files: what they hold together. */
struct info_sum {
	uint64_t bytes, samples, lost, start, end;
	size_t files, complete;
};

static int info_one(const char *path, struct info_sum *sum)
{
	char msg[256];
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	if (!r) {
		cli_error_text("info", path, msg);
		return 1;
	}
	/* symbol tables are counted, never decompressed (a file may claim
	 * 1 GiB for each); a chunk's counts part is checked against its
	 * records, a disagreement is damage (docs/file-format.md) */
	dp_reader_set_flags(r, DP_READ_SYMTAB_STORED | DP_READ_VERIFY_COUNTS);
	const struct dp_header *h = dp_reader_header(r);
	time_t t = (time_t)(h->created_ns / 1000000000ull);
	char tbuf[64];
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	if (h->source)
		printf("file:        %s (%" PRIu64 " bytes, %s)\n", path, dp_reader_size(r), h->source);
	else
		printf("file:        %s (%" PRIu64 " bytes, format %u.%u)\n", path, dp_reader_size(r), h->major, h->minor);
	printf("created:     %s\n", tbuf);
	struct text_tmp ht = { 0 };   /* the recorded machine's strings: escape.h */
	printf("host:        %s, kernel %s\n", text_tmp_safe(&ht, h->hostname), text_tmp_safe(&ht, h->release));
	printf("cpus:        %u x %s\n", h->ncpus, h->cpu_desc[0] ? text_tmp_safe(&ht, h->cpu_desc) : "(unknown)");
	printf("command:     %s\n", text_tmp_safe(&ht, h->cmdline));
	text_tmp_free(&ht);

	char *events = NULL;
	size_t evlen = 0;
	FILE *ev = open_memstream(&events, &evlen);
	struct dp_meta m = { 0 };
	const struct dp_visitor vis = { .event = on_event };
	dp_scan(r, &vis, ev, &m);
	fclose(ev);
	printf("events:\n%s", events[0] ? events : "  (none)\n");
	print_domains(&m);
	uint64_t total = m.samples, lost = m.lost;
	if (h->source)  /* a perf.data: its records as they were translated */
		printf("records:     translated from perf's\n");
	else if (dp_reader_chunks_counts(r))  /* format 1.6 */
		printf("records:     %" PRIu64 " chunks, %" PRIu64 " with a counts part\n", dp_reader_chunks(r),
		       dp_reader_chunks_counts(r));
	else
		printf("records:     %" PRIu64 " chunks\n", dp_reader_chunks(r));
	/* tags up to STATS always; later ones (COUNTERS, 1.3) only when the
	 * file holds them, so the listing of an older file stays as it was */
	for (int i = 1; i <= DP_REC_MAX_KNOWN; i++)
		if (i <= DP_REC_STATS || m.counts[i])
			printf("  %-14s %" PRIu64 "\n", dp_rec_type_name((uint16_t)i), m.counts[i]);
	if (m.unknown)
		printf("  %-14s %" PRIu64 " (skipped)\n", "unknown tags", m.unknown);
	printf("samples:     %" PRIu64 "\n", total);
	/* only for files that hold them (format 1.4), so older listings stay */
	if (m.ustack_samples)
		printf("user stacks: %" PRIu64 " samples, %" PRIu64 " bytes (%.0f a sample), %" PRIu64
		       " filled the size asked for\n", m.ustack_samples, m.ustack_bytes,
		       (double)m.ustack_bytes / (double)m.ustack_samples, m.ustack_full);
	if (m.ustack_ref_bytes)
		printf("             %" PRIu64 " of these bytes stored as references to the thread's "
		       "previous stack (delta form)\n", m.ustack_ref_bytes);
	if (m.ustack_samples)
		print_unwinding(path);
	printf("lost:        %" PRIu64 " (%.4f%%)", lost,
	       total || lost ? 100.0 * (double)lost / ((double)total + (double)lost) : 0.0);
	for (uint32_t i = 0; i <= DP_LOST_SOURCES; i++)  /* the last: every other source */
		if (dp_meta_lost_of(&m, i))
			printf("  %s %" PRIu64, dp_lost_source_name(i), dp_meta_lost_of(&m, i));
	printf("\n");
	if (lost == UINT64_MAX) /* saturated: the share above means nothing */
		printf("             the LOST counts add up past 2^64: not plausible\n");
	print_rates(&m);
	print_counters(&m);
	if (m.has_stats) {
		const struct dp_stats stats = m.stats;
		printf("stats:       %" PRIu64 " samples, %" PRIu64 " lost, %.3f s, exit status %u%s",
		       stats.samples, stats.lost, (double)stats.wall_ns / 1e9, stats.exit_status,
		       stats.flags & DP_STATS_ERROR ? ", ended by an error" : "");
		if (stats.has_totals)
			printf(", %" PRIu64 " records written", stats.records);
		printf("\n");
	} else
		printf("stats:       none (recording did not finish)\n");
	const struct dp_damage *d = m.damage;
	size_t nd = m.ndamage;
	if (!nd)
		printf("damage:      none\n");
	else {
		printf("damage:      %zu place(s)\n", nd);
		for (size_t i = 0; i < nd; i++)
			printf("  offset %" PRIu64 ": %s\n", d[i].offset, d[i].what);
	}
	if (dp_reader_note(r))
		printf("skipped:     %s\n", dp_reader_note(r));
	const char *inc = m.incomplete;
	printf("complete:    %s%s\n", inc ? "no: " : "yes", inc ? inc : "");
	sum->files++;
	sum->complete += !inc;
	sum->bytes += dp_reader_size(r);
	sum->samples += total;
	sum->lost += lost;
	if (m.has_stats && (!sum->start || m.stats.start_time < sum->start))
		sum->start = m.stats.start_time;
	if (m.has_stats && m.stats.end_time > sum->end)
		sum->end = m.stats.end_time;
	dp_meta_release(&m);
	free(events);
	dp_reader_free(r);
	return 0;
}

struct info_args {
	struct input_args in;
};

static const struct opt info_opts[] = {
	{ .kind = OPT_CALL, .letter = 'i', .name = "input", .arg = "FILE", .off = offsetof(struct info_args, in),
	  .fn = opt_add_input,
	  .help = "recording to read (default domprof.data) or a perf.data (docs/perfdata.md); with several "
		  "(-i, FILE arguments, a quoted glob, A,B) each is described in turn, then a line of their totals" },
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_TABLE_END,
};

const struct cmd_spec spec_info = {
	.name = "info",
	.summary = "describe a recording: header, domains, events, counts, damage",
	.synopsis = "[-i FILE]... [FILE...]",
	.description =
		"Describe a recording: header (host, kernel, CPUs, command line), domains,\n"
		"events, records per type, samples per domain, lost samples by source, and\n"
		"any damage found (bad CRCs, truncation, chunks missing or repeated, STATS\n"
		"totals that differ, a chunk's counts part that disagrees with its records)\n"
		"with file offsets, and whether the recording is complete (a recorder\n"
		"killed by SIGKILL never wrote its STATS record).\n"
		"Domains with COUNTERS records (format 1.3) get one line per counter,\n"
		"summed over the recording. The recorder's rate counters give a rates\n"
		"line per domain instead (requested and achieved samples a second per CPU\n"
		"or vCPU, samples, lost, the recorder's CPU time for that source).\n"
		"Samples with user registers and stacks (record --call-graph dwarf) are\n"
		"counted with their stack bytes, and unwound as report -g unwinds them:\n"
		"the line says how many were unwound, how many kept the frame-pointer\n"
		"chain, and where the walks ended (no FDE for a pc, stopped, depth bound,\n"
		"ip in no readable image). DOMPROF_DWARF_UNWIND=0 skips the unwinding;\n"
		"--no-debuginfod: no debug files from servers for it.\n",
	.opts = info_opts,
};

int cmd_info(int argc, char **argv)
{
	const char *iargs[argc > 0 ? argc : 1];
	struct info_args ia = { .in = { iargs, 0 } };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_info, argc, argv, &ia, ops, &nops);
	if (prc != OPT_CONTINUE)
		return prc;
	struct inputs in = { 0 };
	char err[PATH_MAX + 64];
	if (inputs_collect(&in, ia.in.v, ia.in.n, ops, (size_t)nops, err, sizeof(err)))
		return cli_error("info", "%s", err);
	struct info_sum sum = { 0 };
	int ret = 0;
	for (size_t i = 0; i < in.n; i++) {
		if (i)
			printf("\n");
		if (info_one(in.paths[i], &sum))
			ret = 1;
	}
	if (in.n > 1)
		printf("\ntotal:       %zu files (%zu read, %zu complete), %" PRIu64 " bytes, %" PRIu64
		       " samples, %" PRIu64 " lost, %.3f s from the first start to the last end\n",
		       in.n, sum.files, sum.complete, sum.bytes, sum.samples, sum.lost,
		       sum.end > sum.start ? (double)(sum.end - sum.start) / 1e9 : 0.0);
	inputs_free(&in);
	return ret;
}
