// SPDX-License-Identifier: MIT
/*
 * `domprof report`: read a recording, aggregate it (analysis/profile.c)
 * and print it as opreport-style text, CSV or JSON (output/). This file
 * only parses options, reports errors and draws the progress line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "cli/blocks.h"
#include "commands.h"
#include "output/escape.h"
#include "output/html_report.h"
#include "output/report.h"
#include "symbols/debuginfod.h"

struct progress {
	bool on;
	int last;
};

static void progress_cb(void *arg, uint64_t pos, uint64_t size)
{
	struct progress *pr = arg;
	if (!pr->on || !size)
		return;
	int pct = (int)(pos * 100 / size);
	if (pct == pr->last)
		return;
	pr->last = pct;
	fprintf(stderr, "\rdomprof report: reading %3d%%", pct);
	if (pct >= 100)
		fputs("\r                              \r", stderr);
	fflush(stderr);
}

struct report_args {
	struct input_args in;
	struct filter_args fa;
	struct vmlinux_args vml;
	struct perf_guest_args guests;
	unsigned jobs;   /* -j; 0: chosen per file (jobs_for_size) */
	struct report_view v;
	enum profile_sort_key keys[PROFILE_MAX_SORT];
	const char *format, *out;
	bool quiet, no_inline, verify;
	uint64_t timeline_ns;
};

static int set_sort(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct report_args *ra = ctx;
	const char *bad = NULL;
	int k = profile_parse_sort(value, ra->keys, &bad);
	if (k < 0) {
		snprintf(err, n, "unknown or too many sort keys at '%s' (keys: sample, symbol, image, domain, "
			 "pid, comm, srcline)", bad);
		return -1;
	}
	ra->v.keys = ra->keys;
	ra->v.nkeys = k;
	for (int i = 0; i < k; i++) {
		if (ra->keys[i] == PROFILE_SORT_PID || ra->keys[i] == PROFILE_SORT_COMM)
			ra->v.by_process = true;
		if (ra->keys[i] == PROFILE_SORT_SRCLINE)
			ra->v.srcline = true;
	}
	return 0;
}

static int set_format(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	if (strcmp(value, "text") && strcmp(value, "csv") && strcmp(value, "json") && strcmp(value, "html")) {
		snprintf(err, n, "unknown format '%s' (text, csv, json or html)", value);
		return -1;
	}
	((struct report_args *)ctx)->format = value;
	return 0;
}

static int set_timeline(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct report_args *ra = ctx;
	ra->v.timeline = true;
	if (value) {
		char *end;
		double sec = strtod(value, &end);
		if (end == value || *end || !(sec >= 0.001 && sec <= 86400)) {
			snprintf(err, n, "--timeline bucket '%s' is not a number of seconds (0.001..86400)", value);
			return -1;
		}
		ra->timeline_ns = (uint64_t)(sec * 1e9 + 0.5);
	}
	return 0;
}

static const struct opt report_opts[] = {
	OPT_INCLUDE(opts_inputs, struct report_args, in),
	OPT_BOOL('l', "symbols", struct report_args, v.symbols,
		 "symbol table: samples, %, domain, image, symbol"),
	OPT_BOOL('g', "call-graph", struct report_args, v.callgraph,
		 "callers and callees of each symbol, with a [self] line (needs a recording made with -g "
		 "or --call-graph dwarf)"),
	{ .kind = OPT_FLAG, .name = "callgraph", .off = offsetof(struct report_args, v.callgraph), .val = 1,
	  .flags = OPT_ALIAS, .alias_of = "--call-graph", .help = "" },
	OPT_FN('s', "sort", "KEYS", set_sort,
	       "comma-separated keys: sample, symbol, image, domain, pid, comm, srcline (default: sample); "
	       "pid or comm split rows per process, srcline per source line (DWARF line tables, as perf's "
	       "-s srcline)"),
	OPT_FLAG_(0, "inline", struct report_args, no_inline, 0,
		  "with srcline: code inlined into a function is the inlined function's, at its own line "
		  "(the default)"),
	OPT_FLAG_(0, "no-inline", struct report_args, no_inline, 1,
		  "with srcline: code inlined into a function is the function's, at the line of the call"),
	OPT_INCLUDE(opts_vmlinux, struct report_args, vml),
	OPT_FN_AT('t', "threshold", "PCT", struct report_args, v.threshold, opt_percent,
		  "hide rows below PCT percent of the shown samples"),
	OPT_INCLUDE(opts_filter, struct report_args, fa),
	OPT_INCLUDE(opts_perf_guest, struct report_args, guests),
	OPT_BOOL(0, "by-pid", struct report_args, v.by_process,
		 "split rows per process (adds pid and command columns)"),
	{ .kind = OPT_FLAG, .name = "by-process", .off = offsetof(struct report_args, v.by_process), .val = 1,
	  .flags = OPT_ALIAS, .alias_of = "--by-pid", .help = "" },
	{ .kind = OPT_CALL, .name = "timeline", .arg = "S", .flags = OPT_VALUE_OPTIONAL, .fn = set_timeline,
	  .help = "samples per time bucket (S seconds; default about 40 buckets over the run) per domain, "
		  "counted from each domain's first sample, instead of the tables" },
	{ .kind = OPT_CALL, .name = "format", .arg = "FMT", .fn = set_format, .values = "text csv json html",
	  .help = "text (default), csv, json or html (see docs/report.md)" },
	OPT_STR('o', "output", "OUT", struct report_args, out,
		"write the report to OUT instead of standard output"),
	OPT_BOOL('q', "quiet", struct report_args, quiet, "no progress line on stderr"),
	OPT_BOOL(0, "verify", struct report_args, verify,
		 "check each chunk's counts part (format 1.6) against the chunk's records, as info does: a "
		 "disagreement is damage (a warning on stderr) and the samples are counted from the records "
		 "(slower: both are decoded)"),
	OPT_INCLUDE(opts_jobs, struct report_args, jobs),
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_TABLE_END,
};

const struct cmd_spec spec_report = {
	.name = "report",
	.summary = "show where the time went (images, symbols, call graphs)",
	.synopsis = "[-i FILE]... [FILE...] [-l] [-g] [--sort KEYS] [-t PCT]\n"
		    " [--domain NAME] [--pid PID] [--comm NAME] [--image NAME]\n"
		    " [--mode user|kernel] [--time START,END] [--cpu LIST]\n"
		    " [--timeline[=SECONDS]] [--format text|csv|json|html]\n"
		    " [-o OUT] [-j N] [--verify]",
	.description =
		"Show where the samples of a recording went. Without -l: an image summary\n"
		"like opreport (each application, with the images its samples fell in\n"
		"indented below it). With -l: one row per symbol with its domain and image.\n",
	.epilog =
		"--format html writes one self-contained page (no network needed to view it):\n"
		"the header (domains, events, lost samples, damage), a per-domain breakdown\n"
		"(samples, user/kernel), the symbol table (click a column to sort; filter by\n"
		"domain, process, image and a regular expression), the image summary, the\n"
		"callers and callees of the selected symbol and the flame graph of the\n"
		"current filter. It holds every view, so -l, -g, -s, -t and --by-pid do\n"
		"not change it; the filters above do (they choose what the page holds).\n"
		"\n"
		"Percentages are of the samples that pass the filters. A domain whose\n"
		"counters say it unwound call chains (a passive VM) gets a header line with\n"
		"how many were complete and why the others were cut. A recording made with\n"
		"record --call-graph dwarf has its user stacks unwound with the programs'\n"
		"DWARF call-frame information (libdwfl; the kernel part of each chain stays\n"
		"as recorded), and a header line counts them.\n"
		"\n"
		"Environment: DOMPROF_MAX_SYMTAB=PER_DOMAIN[:PER_FILE] (bytes, K/M/G) bounds what\n"
		"embedded symbol tables may decompress to (default 256M:512M; also for\n"
		"flamegraph, export and diff). Tables over it are refused and counted.\n"
		"DOMPROF_DWARF_UNWIND=0 keeps the recorded frame-pointer chains of a\n"
		"--call-graph dwarf recording (for comparing; also flamegraph and export).\n"
		"DEBUGINFOD_URLS (servers, space-separated): the debug file of a binary without\n"
		"symbols and without a local debug file is fetched by build-id with\n"
		"libdebuginfod into its cache (DEBUGINFOD_CACHE_PATH), at most 5 s per build-id\n"
		"(DEBUGINFOD_MAXTIME=SECONDS); a server that is down or times out is not asked\n"
		"again (one warning); also flamegraph, export and diff (docs/symbols.md).\n"
		"DOMPROF_KSYM_CACHE=0 reads this machine's /proc/kallsyms for a perf.data\n"
		"recorded here every time instead of the kernel symbol index cached for this\n"
		"boot in $DOMPROF_CACHE, else $XDG_CACHE_HOME/domprof, else ~/.cache/domprof\n"
		"(host-kernel/BUILDID.idx); =verbose says in the warnings what the cache did;\n"
		"also every other command that reads a recording (docs/perfdata.md).\n"
		"DOMPROF_LINE_CACHE=0 opens every image's DWARF for -s srcline instead of\n"
		"answering the addresses looked up before from the source line cache in the\n"
		"same directory (lines/BUILDID-HASH.lines); =verbose says in the warnings what\n"
		"it did; also annotate's source lines (docs/report.md).\n",
	.opts = report_opts,
};

int cmd_report(int argc, char **argv)
{
	const char *iargs[argc > 0 ? argc : 1];   /* -i values, expanded after the options */
	struct report_args ra = { .in = { iargs, 0 }, .format = "text" };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_report, argc, argv, &ra, ops, &nops);
	if (prc != OPT_CONTINUE) {
		perf_guest_args_release(&ra.guests);
		return prc;
	}
	const char *format = ra.format, *out = ra.out;
	struct filter_args fa = ra.fa;
	struct report_view v = ra.v;
	bool quiet = ra.quiet, no_inline = ra.no_inline, verify = ra.verify;
	uint64_t timeline_ns = ra.timeline_ns;
	unsigned jobs = ra.jobs;
	struct perf_guest_args guests = ra.guests;
	char emsg[256];
	bool html = !strcmp(format, "html");
	if (html && v.timeline)
		return usage_error("report", "--timeline is a text, csv or json view (not --format html)");
	struct inputs in = { 0 };
	if (inputs_collect(&in, ra.in.v, ra.in.n, ops, (size_t)nops, emsg, sizeof(emsg))) {
		perf_guest_args_release(&guests);
		cli_error_text("report", NULL, emsg);
		return 1;
	}
	const char *path = in.paths[0];
	char desc[PATH_MAX + 64];

	struct progress pr = { false, -1 };
	struct stat st;
	if (!quiet && isatty(STDERR_FILENO) && (in.n > 1 || (!stat(path, &st) && st.st_size > (32 << 20))))
		pr.on = true;
	struct profile_opts o = {
		.callgraph = v.callgraph && !v.timeline && !html,
		.stacks = html,   /* the page computes every view from the unique stacks */
		.timeline = v.timeline,
		.timeline_ns = timeline_ns,
		.by_process = v.by_process && !html,
		.srcline = v.srcline && !html,
		.no_inline = no_inline,
		.vmlinux = ra.vml.v,
		.nvmlinux = ra.vml.n,
		.progress = progress_cb,
		.progress_arg = &pr,
		.jobs = jobs,
		.verify_counts = verify,
	};
	int err = 0;
	char msg[256] = "", why[PATH_MAX + 256];
	o.perf_guests = &guests;
	struct profile *p = profile_load_files((const char *const *)in.paths, in.n, &fa.flt, &o, &err,
					       msg, sizeof(msg));
	perf_guest_args_release(&guests);  /* the reader copied them */
	if (!p) {
		cli_error_text("report", NULL, profile_load_reason(why, sizeof(why), inputs_desc(&in, desc, sizeof(desc)), err, msg));
		inputs_free(&in);
		return 1;
	}
	v.p = p;
	v.path = inputs_desc(&in, desc, sizeof(desc));
	/* for bench/scale: what the profile's memory grows with */
	if (getenv("DOMPROF_PROFILE_STATS"))
		cli_say("report", "profile: %" PRIu64 " samples, %zu unique keys, %zu unique "
			"addresses, %zu symbols, %zu edges, %zu stacks", p->total_samples, p->unique_keys,
			p->unique_addrs, p->nsyms, p->nedges, p->nstacks);
	v.filter_desc = filter_args_desc(&fa);
	FILE *f = stdout;
	if (out && !(f = fopen(out, "w"))) {
		cli_say("report", "cannot create '%s': %s", out, strerror(errno));
		profile_free(p);
		inputs_free(&in);
		return 1;
	}
	int rc;
	if (!strcmp(format, "csv"))
		rc = report_csv(f, &v);
	else if (!strcmp(format, "json"))
		rc = report_json(f, &v);
	else if (html)
		rc = report_html(f, &v);
	else
		rc = report_text(f, &v);
	if (f != stdout && fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		cli_say("report", "writing %s%s%s failed: %s", out ? "'" : "the report",
			out ? out : "", out ? "'" : "", strerror(-rc));
		profile_free(p);
		inputs_free(&in);
		return 1;
	}
	if (!strcmp(format, "text")) {
		/* the header says it all; a file that is damaged or incomplete
		 * is said on stderr as well, where a piped report is still seen */
		for (size_t i = 0; i < p->nwarnings; i++)
			if (i < p->nfile_warnings ||   /* and debuginfod's failure: once, not only in the header */
			    !strncmp(p->warnings[i], DBGFD_NOTE_PREFIX, strlen(DBGFD_NOTE_PREFIX)))
				cli_warn_text("report", NULL, p->warnings[i]);
	} else {
		/* machine formats keep stdout clean; say on stderr what text says in its header */
		for (size_t i = 0; i < p->nwarnings; i++)
			cli_warn_text("report", NULL, p->warnings[i]);
		if (!p->matched)
			cli_say("report", "no samples%s",
				p->total_samples ? " match the filter" : " in this recording");
	}
	profile_free(p);
	inputs_free(&in);
	return 0;
}
