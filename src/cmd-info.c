// SPDX-License-Identifier: MIT
/*
 * `domprof info FILE`: what a recording holds — header, domains, events,
 * record counts per type and per domain, lost samples, and any damage the
 * reader found. Reads the whole file once.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "commands.h"
#include "format/format.h"
#include "util/hmap.h"
#include "util/sat.h"
#include "util/xalloc.h"

const char usage_info[] =
	"usage: domprof info [-i FILE] [FILE]\n"
	"\n"
	"Describe a recording: header (host, kernel, CPUs, command line), domains,\n"
	"events, records per type, samples per domain, lost samples by source, and\n"
	"any damage found (bad CRCs, truncation, chunks missing or repeated, STATS\n"
	"totals that differ) with file offsets, and whether the recording is\n"
	"complete (a recorder killed by SIGKILL never wrote its STATS record).\n"
	"\n"
	"  -i, --input FILE   recording to read (default domprof.data)\n";

struct dom_count {
	uint32_t id;
	uint64_t samples;
	char *name, *kind, *address, *symsrc;
	uint32_t vcpus;
	uint64_t kaslr;
};

/* Domains in order of appearance, found by id through idx (id ->
 * index+1): a file may switch among tens of thousands of them. */
static struct dom_count *dom_get(struct dom_count **v, size_t *n, size_t *cap, struct hmap *idx,
				 uint32_t id)
{
	uintptr_t at = (uintptr_t)u64map_get(idx, id);
	if (at)
		return &(*v)[at - 1];
	xgrow((void **)v, cap, *n + 1, sizeof(**v));
	struct dom_count *d = &(*v)[(*n)++];
	memset(d, 0, sizeof(*d));
	d->id = id;
	u64map_put(idx, id, (void *)(uintptr_t)*n);
	return d;
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = { { "input", required_argument, 0, 'i' }, { 0, 0, 0, 0 } };
	const char *path = "domprof.data";
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+i:", opts, NULL)) != -1) {
		if (c == 'i')
			path = optarg;
		else
			return usage_error("info", "unknown or incomplete option '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage_error("info", "unexpected argument '%s'", argv[optind]);

	char msg[256];
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "domprof info: %s: %s\n", path, msg);
		return 1;
	}
	/* symbol tables are counted, never decompressed (a file may claim
	 * 1 GiB for each) */
	dp_reader_set_flags(r, DP_READ_SYMTAB_STORED);
	const struct dp_header *h = dp_reader_header(r);
	time_t t = (time_t)(h->created_ns / 1000000000ull);
	char tbuf[64];
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	printf("file:        %s (%" PRIu64 " bytes, format %u.%u)\n", path, dp_reader_size(r), h->major, h->minor);
	printf("created:     %s\n", tbuf);
	printf("host:        %s, kernel %s\n", h->hostname, h->release);
	printf("cpus:        %u x %s\n", h->ncpus, h->cpu_desc[0] ? h->cpu_desc : "(unknown)");
	printf("command:     %s\n", h->cmdline);

	uint64_t counts[DP_REC_MAX_KNOWN + 1] = { 0 }, unknown = 0, lost_by[8] = { 0 }, lost = 0;
	struct dom_count *doms = NULL;
	size_t ndom = 0, domcap = 0;
	struct hmap domidx = { 0 };
	dom_get(&doms, &ndom, &domcap, &domidx, DP_HOST_DOMAIN);
	char *events = NULL;
	size_t evlen = 0;
	FILE *ev = open_memstream(&events, &evlen);
	struct dp_stats stats = { 0 };
	bool have_stats = false;
	struct dp_record rec;
	while (dp_reader_next(r, &rec) > 0) {
		if (rec.type <= DP_REC_MAX_KNOWN)
			counts[rec.type]++;
		else
			unknown++;
		switch (rec.type) {
		case DP_REC_SAMPLE:
			dom_get(&doms, &ndom, &domcap, &domidx, rec.domain)->samples++;
			break;
		case DP_REC_DOMAIN: {
			struct dom_count *d = dom_get(&doms, &ndom, &domcap, &domidx, rec.u.domain.id);
			free(d->name); free(d->kind); free(d->address); free(d->symsrc);
			d->name = xstrdup(rec.u.domain.name);
			d->kind = xstrdup(dp_domain_kind_name(rec.u.domain.kind));
			d->address = xstrdup(rec.u.domain.address);
			d->symsrc = xstrdup(rec.u.domain.symsrc);
			d->vcpus = rec.u.domain.vcpus;
			d->kaslr = rec.u.domain.kaslr_offset;
			break;
		}
		case DP_REC_EVENT:
			fprintf(ev, "  id %u: %s, %s %" PRIu64 "\n", rec.u.event.id, rec.u.event.name,
				rec.u.event.freq ? "frequency" : "period", rec.u.event.period);
			break;
		case DP_REC_LOST:
			/* crafted counts saturate instead of wrapping */
			lost = sat_add64(lost, rec.u.lost.count);
			lost_by[rec.u.lost.source < 7 ? rec.u.lost.source : 7] =
				sat_add64(lost_by[rec.u.lost.source < 7 ? rec.u.lost.source : 7], rec.u.lost.count);
			break;
		case DP_REC_STATS:
			stats = rec.u.stats;
			have_stats = true;
			break;
		}
	}
	fclose(ev);
	printf("events:\n%s", events[0] ? events : "  (none)\n");
	uint64_t total = 0;
	for (size_t i = 0; i < ndom; i++)
		total += doms[i].samples;
	printf("domains:\n");
	for (size_t i = 0; i < ndom; i++) {
		struct dom_count *d = &doms[i];
		if (!d->name && d->id == DP_HOST_DOMAIN)
			d->name = xstrdup("host"), d->kind = xstrdup("host");
		printf("  %-3u %-12s %-8s %10" PRIu64 " samples", d->id, d->name ? d->name : "(no DOMAIN record)",
		       d->kind ? d->kind : "?", d->samples);
		if (d->address && d->address[0])
			printf("  via %s", d->address);
		if (d->symsrc && d->symsrc[0])
			printf("  symbols %s", d->symsrc);
		if (d->vcpus)
			printf("  vcpus %u", d->vcpus);
		if (d->kaslr)
			printf("  kaslr 0x%" PRIx64, d->kaslr);
		printf("\n");
	}
	printf("records:     %" PRIu64 " chunks\n", dp_reader_chunks(r));
	for (int i = 1; i <= DP_REC_MAX_KNOWN; i++)
		printf("  %-14s %" PRIu64 "\n", dp_rec_type_name((uint16_t)i), counts[i]);
	if (unknown)
		printf("  %-14s %" PRIu64 " (skipped)\n", "unknown tags", unknown);
	printf("samples:     %" PRIu64 "\n", total);
	printf("lost:        %" PRIu64 " (%.4f%%)", lost,
	       total || lost ? 100.0 * (double)lost / ((double)total + (double)lost) : 0.0);
	for (int i = 0; i < 8; i++)
		if (lost_by[i])
			printf("  %s %" PRIu64, dp_lost_source_name((uint32_t)i), lost_by[i]);
	printf("\n");
	if (lost == UINT64_MAX) /* saturated: the share above means nothing */
		printf("             the LOST counts add up past 2^64: not plausible\n");
	if (have_stats) {
		printf("stats:       %" PRIu64 " samples, %" PRIu64 " lost, %.3f s, exit status %u%s",
		       stats.samples, stats.lost, (double)stats.wall_ns / 1e9, stats.exit_status,
		       stats.flags & DP_STATS_ERROR ? ", ended by an error" : "");
		if (stats.has_totals)
			printf(", %" PRIu64 " records written", stats.records);
		printf("\n");
	} else
		printf("stats:       none (recording did not finish)\n");
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	if (!nd)
		printf("damage:      none\n");
	else {
		printf("damage:      %zu place(s)\n", nd);
		for (size_t i = 0; i < nd; i++)
			printf("  offset %" PRIu64 ": %s\n", d[i].offset, d[i].what);
	}
	const char *inc = dp_reader_incomplete(r);
	printf("complete:    %s%s\n", inc ? "no: " : "yes", inc ? inc : "");
	for (size_t i = 0; i < ndom; i++) {
		free(doms[i].name); free(doms[i].kind); free(doms[i].address); free(doms[i].symsrc);
	}
	free(doms);
	hmap_release(&domidx);
	free(events);
	dp_reader_free(r);
	return 0;
}
