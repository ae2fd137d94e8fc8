// SPDX-License-Identifier: MIT
/*
 * `domprof flamegraph`: aggregate a recording with its unique stacks
 * (analysis/profile.c) and write an interactive flame graph, as a
 * self-contained HTML page or a standalone SVG (output/flamegraph.c).
 * This file only parses options and reports errors.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "commands.h"
#include "output/escape.h"
#include "output/flamegraph.h"
#include "symbols/debuginfod.h"

const char usage_flamegraph[] =
	"usage: domprof flamegraph [-i FILE] [-o OUT.html|OUT.svg] [--inverted] [--title T]\n"
	"                          [--by-pid|--by-tid|--no-comm]\n"
	"                          [--domain NAME] [--pid PID] [--comm NAME] [--mode user|kernel]\n"
	"                          [-j N]\n"
	"\n"
	"Write an interactive flame graph of a recording: one self-contained HTML\n"
	"page (no network needed to view it) with click-to-zoom, reset, search with\n"
	"the matched share, and tooltips; or, for a name ending in .svg, a\n"
	"standalone SVG. Frames stack as all -> domain -> command name (COMM, every\n"
	"run of a program in one frame) -> the call chain (record with -g; samples\n"
	"without one are single frames). Each domain has its own colour family;\n"
	"kernel frames are pale and italic; the legend names the colours.\n"
	"Differential flame graph of two recordings: `domprof diff --flamegraph`.\n"
	"\n"
	"  -i, --input FILE       recording to read (default: domprof.data), or a\n"
	"                         perf.data (docs/perfdata.md)\n"
	"  -o, --output OUT       output file (default: flamegraph.html); .svg = SVG\n"
	"      --inverted         icicle view: callees (leaf functions) first, root at top\n"
	"      --title T          page title (default: \"Flame graph: FILE\")\n"
	"      --min-width PCT    merge frames narrower than PCT percent of all samples\n"
	"                         into their parent (default 0.01 for HTML, 0.1 for SVG)\n"
	FG_ROOT_HELP
	"      --domain NAME      only samples of this domain (host, or a VM's name)\n"
	"      --pid PID          only samples of this process\n"
	"      --comm NAME        only samples taken while their process had this\n"
	"                         command name (an exec renames it, as in perf)\n"
	"      --mode user|kernel only user-mode or only kernel-mode samples\n"
	FILTER_WINDOW_HELP
	JOBS_HELP
	PERF_GUEST_HELP
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"\n"
	"See docs/flamegraph.md. The environment is report's (domprof report --help),\n"
	"e.g. DOMPROF_KSYM_CACHE=0: no kernel symbol cache for a perf.data recorded\n"
	"here (docs/perfdata.md).\n";

enum { OPT_DOMAIN = 256, OPT_PID, OPT_COMM, OPT_MODE, OPT_INV, OPT_TITLE, OPT_MINW, OPT_TIME, OPT_CPU,
       OPT_NO_DEBUGINFOD, OPT_ROOT, OPT_GUEST };

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

int cmd_flamegraph(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "inverted", no_argument, NULL, OPT_INV },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "min-width", required_argument, NULL, OPT_MINW },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "jobs", required_argument, NULL, 'j' },
		{ "by-comm", no_argument, NULL, OPT_ROOT },
		{ "by-pid", no_argument, NULL, OPT_ROOT },
		{ "by-tid", no_argument, NULL, OPT_ROOT },
		{ "no-comm", no_argument, NULL, OPT_ROOT },
		{ "guest-name", required_argument, NULL, OPT_GUEST },
		{ "guest-kallsyms", required_argument, NULL, OPT_GUEST },
		{ "guest-sysmap", required_argument, NULL, OPT_GUEST },
		{ NULL, 0, NULL, 0 },
	};
	const char *iargs[argc > 0 ? argc : 1];   /* -i values, expanded after the options */
	size_t ni = 0;
	const char *path = NULL, *out = "flamegraph.html", *title = NULL;
	struct filter_args fa = { 0 };
	struct fg_opts fo = { 0 };
	unsigned jobs = 0;   /* -j; 0: chosen per file (jobs_for_size) */
	char emsg[256];
	int nroot = 0;
	struct perf_guest_args guests = { 0 };

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":i:o:j:", longopts, &li)) != -1) {
		switch (c) {
		case 'i': iargs[ni++] = optarg; break;
		case 'o': out = optarg; break;
		case 'j':
			if (parse_jobs(optarg, &jobs))
				return usage_error("flamegraph", JOBS_ERROR, optarg);
			break;
		case OPT_INV: fo.inverted = true; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_MINW: {
			double pct;
			if (parse_percent(optarg, &pct) || pct <= 0)
				return usage_error("flamegraph", "--min-width '%s' is not a percentage (0..100]", optarg);
			fo.min_fraction = pct / 100.0;
			break;
		}
		case OPT_GUEST:
			if (perf_guest_args_set(&guests, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("flamegraph", "%s", emsg);
			break;
		case OPT_DOMAIN: case OPT_PID: case OPT_COMM: case OPT_MODE: case OPT_TIME: case OPT_CPU:
			if (filter_args_set(&fa, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("flamegraph", "%s", emsg);
			break;
		case OPT_NO_DEBUGINFOD:
			dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
			break;
		case OPT_ROOT:
			if (fg_root_option(&fo.root, &nroot, longopts[li].name, emsg, sizeof(emsg)))
				return usage_error("flamegraph", "%s", emsg);
			break;
		case ':':
			return usage_error("flamegraph", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("flamegraph", "unknown option '%s'", argv[optind - 1]);
		}
	}
	bool svg = ends_with(out, ".svg");

	struct profile_opts o = { .stacks = true, .jobs = jobs, .by_tid = fo.root == FG_ROOT_TID };
	char why[PATH_MAX + 256], desc[PATH_MAX + 64];
	struct profile *p = profile_load_inputs(iargs, ni, argv + optind, (size_t)(argc - optind), &fa.flt, &o,
						&guests, desc, sizeof(desc), why, sizeof(why));
	path = desc;
	if (!p) {
		text_line(stderr, "domprof flamegraph: ", why);
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		text_line(stderr, "domprof flamegraph: warning: ", p->warnings[i]);
	if (!p->matched)
		fprintf(stderr, "domprof flamegraph: warning: profile is empty (0 samples match)\n");
	else if (!p->has_callchains)
		fprintf(stderr, "domprof flamegraph: note: no call chains in '%s' (record with -g): "
				"each sample is a single frame\n", path);

	char tbuf[512], sub[640];
	if (!title) {
		snprintf(tbuf, sizeof(tbuf), "Flame graph: %.480s", path);   /* a long path is cut */
		title = tbuf;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", p->header.hostname ? p->header.hostname : "",
		 fa.len ? ", filter: " : "", fa.desc);
	fo.title = title;
	fo.subtitle = sub;

	FILE *f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "domprof flamegraph: cannot create '%s': %s\n", out, strerror(errno));
		profile_free(p);
		return 1;
	}
	int rc = svg ? flamegraph_svg(f, p, &fo) : flamegraph_html(f, p, &fo);
	if (fclose(f) && !rc)
		rc = -EIO;
	profile_free(p);
	if (rc) {
		fprintf(stderr, "domprof flamegraph: writing '%s' failed: %s\n", out, strerror(-rc));
		return 1;
	}
	return 0;
}
