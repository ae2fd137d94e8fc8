// SPDX-License-Identifier: MIT
/*
 * `domprof report`: read a recording, aggregate it (analysis/profile.c)
 * and print it as opreport-style text, CSV or JSON (output/). This file
 * only parses options, reports errors and draws the progress line.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "commands.h"
#include "output/escape.h"
#include "output/html_report.h"
#include "output/report.h"
#include "symbols/debuginfod.h"

const char usage_report[] =
	"usage: domprof report [-i FILE]... [FILE...] [-l] [-g] [--sort KEYS] [-t PCT]\n"
	"                      [--domain NAME] [--pid PID] [--comm NAME] [--image NAME]\n"
	"                      [--mode user|kernel] [--time START,END] [--cpu LIST]\n"
	"                      [--timeline[=SECONDS]] [--format text|csv|json|html]\n"
	"                      [-o OUT] [-j N] [--verify]\n"
	"\n"
	"Show where the samples of a recording went. Without -l: an image summary\n"
	"like opreport (each application, with the images its samples fell in\n"
	"indented below it). With -l: one row per symbol with its domain and image.\n"
	"\n"
	"  -i, --input FILE       recording to read (default: domprof.data) or a\n"
	"                         perf.data (docs/perfdata.md); several -i, FILE\n"
	"                         arguments, a quoted glob or A,B: read as one\n"
	"  -l, --symbols          symbol table: samples, %, domain, image, symbol\n"
	"  -g, --call-graph       callers and callees of each symbol, with a [self]\n"
	"                         line (needs a recording made with -g or\n"
	"                         --call-graph dwarf)\n"
	"  -s, --sort KEYS        comma-separated keys: sample, symbol, image, domain,\n"
	"                         pid, comm, srcline (default: sample); pid or comm\n"
	"                         split rows per process, srcline per source line\n"
	"                         (DWARF line tables, as perf's -s srcline)\n"
	"      --inline, --no-inline  with srcline: code inlined into a function is\n"
	"                         the inlined function's, at its own line (default),\n"
	"                         or the function's, at the line of the call\n"
	"      --vmlinux [DOMAIN=]FILE  source lines of DOMAIN's kernel (default: host)\n"
	"                         from FILE, the kernel's debug file (linux-image-*-dbg)\n"
	"  -t, --threshold PCT    hide rows below PCT percent of the shown samples\n"
	"      --domain NAME      only samples of this domain (host, or a VM's name)\n"
	"      --pid PID          only samples of this process\n"
	"      --comm NAME        only samples taken while their process had this\n"
	"                         command name (an exec renames it, as in perf)\n"
	"      --image NAME       only samples in this image (short name or path)\n"
	"      --mode user|kernel only user-mode or only kernel-mode samples\n"
	FILTER_WINDOW_HELP
	PERF_GUEST_HELP
	"      --by-process       split rows per process (adds pid and command columns)\n"
	"      --timeline[=S]     samples per time bucket (S seconds; default about\n"
	"                         40 buckets over the run) per domain, counted from\n"
	"                         each domain's first sample, instead of the tables\n"
	"      --format FMT       text (default), csv, json or html (see docs/report.md)\n"
	"  -o, --output OUT       write the report to OUT instead of standard output\n"

	"  -q, --quiet            no progress line on stderr\n"
	"      --verify           check each chunk's counts part (format 1.6) against\n"
	"                         the chunk's records, as info does: a disagreement is\n"
	"                         damage (a warning on stderr) and the samples are\n"
	"                         counted from the records (slower: both are decoded)\n"
	JOBS_HELP
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"\n"
	"--format html writes one self-contained page (no network needed to view it):\n"
	"the header (domains, events, lost samples, damage), a per-domain breakdown\n"
	"(samples, user/kernel), the symbol table (click a column to sort; filter by\n"
	"domain, process, image and a regular expression), the image summary, the\n"
	"callers and callees of the selected symbol and the flame graph of the\n"
	"current filter. It holds every view, so -l, -g, -s, -t and --by-process do\n"
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
	"it did; also annotate's source lines (docs/report.md).\n";

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

enum { OPT_DOMAIN = 256, OPT_PID, OPT_COMM, OPT_IMAGE, OPT_MODE, OPT_FORMAT, OPT_BYPROC, OPT_TIME, OPT_CPU,
       OPT_TIMELINE, OPT_NO_DEBUGINFOD,
       OPT_INLINE, OPT_NO_INLINE, OPT_VMLINUX, OPT_GUEST, OPT_VERIFY };

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "symbols", no_argument, NULL, 'l' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "callgraph", no_argument, NULL, 'g' },  /* the first spelling, kept for scripts */
		{ "sort", required_argument, NULL, 's' },
		{ "threshold", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "by-process", no_argument, NULL, OPT_BYPROC },
		{ "timeline", optional_argument, NULL, OPT_TIMELINE },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
		{ "guest-name", required_argument, NULL, OPT_GUEST },
		{ "guest-kallsyms", required_argument, NULL, OPT_GUEST },
		{ "guest-sysmap", required_argument, NULL, OPT_GUEST },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "text", *out = NULL;
	const char *iargs[argc > 0 ? argc : 1];   /* -i values, expanded after the options */
	size_t ni = 0;
	struct filter_args fa = { 0 };
	struct profile_vmlinux vml[PROFILE_MAX_VMLINUX];
	size_t nvml = 0;
	struct report_view v = { 0 };
	enum profile_sort_key keys[PROFILE_MAX_SORT];
	bool quiet = false;
	uint64_t timeline_ns = 0;
	bool no_inline = false, verify = false;
	unsigned jobs = 0;   /* -j; 0: chosen per file (jobs_for_size) */
	char emsg[256];
	struct perf_guest_args guests = { 0 };

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":i:o:lgs:t:qj:", longopts, &li)) != -1) {
		switch (c) {
		case 'i': iargs[ni++] = optarg; break;
		case 'o': out = optarg; break;
		case 'l': v.symbols = true; break;
		case 'g': v.callgraph = true; break;
		case 'q': quiet = true; break;
		case 'j':
			if (parse_jobs(optarg, &jobs))
				return usage_error("report", JOBS_ERROR, optarg);
			break;
		case 's': {
			const char *bad = NULL;
			int n = profile_parse_sort(optarg, keys, &bad);
			if (n < 0)
				return usage_error("report", "unknown or too many sort keys at '%s' (keys: sample, symbol, image, domain, pid, comm, srcline)", bad);
			v.keys = keys;
			v.nkeys = n;
			for (int i = 0; i < n; i++) {
				if (keys[i] == PROFILE_SORT_PID || keys[i] == PROFILE_SORT_COMM)
					v.by_process = true;
				if (keys[i] == PROFILE_SORT_SRCLINE)
					v.srcline = true;
			}
			break;
		}
		case 't':
			if (parse_percent(optarg, &v.threshold))
				return usage_error("report", "threshold '%s' is not a percentage (0..100)", optarg);
			break;
		case OPT_GUEST:
			if (perf_guest_args_set(&guests, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("report", "%s", emsg);
			break;
		case OPT_DOMAIN: case OPT_PID: case OPT_COMM: case OPT_IMAGE: case OPT_MODE: case OPT_TIME: case OPT_CPU:
			if (filter_args_set(&fa, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("report", "%s", emsg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "csv") && strcmp(optarg, "json") &&
			    strcmp(optarg, "html"))
				return usage_error("report", "unknown format '%s' (text, csv, json or html)", optarg);
			format = optarg;
			break;
		case OPT_BYPROC:
			v.by_process = true;
			break;
		case OPT_TIMELINE:
			v.timeline = true;
			if (optarg) {
				char *end;
				double s = strtod(optarg, &end);
				if (end == optarg || *end || !(s >= 0.001 && s <= 86400))
					return usage_error("report", "--timeline bucket '%s' is not a number of seconds (0.001..86400)", optarg);
				timeline_ns = (uint64_t)(s * 1e9 + 0.5);
			}
			break;
		case OPT_NO_DEBUGINFOD:
			dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
			break;
		case OPT_VMLINUX: {
			char e[96];
			if (parse_vmlinux(optarg, vml, &nvml, e, sizeof(e)) < 0)
				return usage_error("report", "%s", e);
			break;
		}
		case OPT_VERIFY: verify = true; break;
		case OPT_INLINE: no_inline = false; break;
		case OPT_NO_INLINE: no_inline = true; break;
		case ':':
			return usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	bool html = !strcmp(format, "html");
	if (html && v.timeline)
		return usage_error("report", "--timeline is a text, csv or json view (not --format html)");
	struct inputs in = { 0 };
	if (inputs_collect(&in, iargs, ni, argv + optind, (size_t)(argc - optind), emsg, sizeof(emsg))) {
		text_line(stderr, "domprof report: ", emsg);
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
		.vmlinux = vml,
		.nvmlinux = nvml,
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
		text_line(stderr, "domprof report: ",
			  profile_load_reason(why, sizeof(why), inputs_desc(&in, desc, sizeof(desc)), err, msg));
		inputs_free(&in);
		return 1;
	}
	v.p = p;
	v.path = inputs_desc(&in, desc, sizeof(desc));
	/* for bench/scale: what the profile's memory grows with */
	if (getenv("DOMPROF_PROFILE_STATS"))
		fprintf(stderr, "domprof report: profile: %" PRIu64 " samples, %zu unique keys, %zu unique "
			"addresses, %zu symbols, %zu edges, %zu stacks\n", p->total_samples, p->unique_keys,
			p->unique_addrs, p->nsyms, p->nedges, p->nstacks);
	v.filter_desc = filter_args_desc(&fa);
	FILE *f = stdout;
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "domprof report: cannot create '%s': %s\n", out, strerror(errno));
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
		fprintf(stderr, "domprof report: writing %s%s%s failed: %s\n", out ? "'" : "the report",
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
				text_line(stderr, "domprof report: warning: ", p->warnings[i]);
	} else {
		/* machine formats keep stdout clean; say on stderr what text says in its header */
		for (size_t i = 0; i < p->nwarnings; i++)
			text_line(stderr, "domprof report: warning: ", p->warnings[i]);
		if (!p->matched)
			fprintf(stderr, "domprof report: no samples%s\n",
				p->total_samples ? " match the filter" : " in this recording");
	}
	profile_free(p);
	inputs_free(&in);
	return 0;
}
