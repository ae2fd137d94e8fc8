// SPDX-License-Identifier: MIT
/*
 * `domprof flamegraph`: aggregate a recording with its unique stacks
 * (analysis/profile.c) and write an interactive flame graph, as a
 * self-contained HTML page or a standalone SVG (output/flamegraph.c).
 * This file only parses options and reports errors.
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "cli/blocks.h"
#include "commands.h"
#include "output/escape.h"
#include "output/flamegraph.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

struct flamegraph_args {
	struct input_args in;
	struct filter_args fa;
	struct perf_guest_args guests;
	struct fg_root_args root;
	struct fg_picture_args pic;
	unsigned jobs;   /* -j; 0: chosen per file (jobs_for_size) */
	const char *out;
	bool inverted;
};

static const struct opt flamegraph_opts[] = {
	OPT_INCLUDE(opts_inputs, struct flamegraph_args, in),
	OPT_STR('o', "output", "OUT", struct flamegraph_args, out,
		"output file (default: flamegraph.html); .svg = SVG"),
	OPT_BOOL(0, "inverted", struct flamegraph_args, inverted,
		 "icicle view: callees (leaf functions) first, root at top"),
	OPT_INCLUDE(opts_fg_picture, struct flamegraph_args, pic),
	OPT_INCLUDE(opts_fg_root, struct flamegraph_args, root),
	OPT_INCLUDE(opts_filter, struct flamegraph_args, fa),
	OPT_INCLUDE(opts_jobs, struct flamegraph_args, jobs),
	OPT_INCLUDE(opts_perf_guest, struct flamegraph_args, guests),
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_TABLE_END,
};

const struct cmd_spec spec_flamegraph = {
	.name = "flamegraph",
	.summary = "write an interactive flame graph (HTML or SVG)",
	.synopsis = "[-i FILE] [-o OUT.html|OUT.svg] [--inverted] [--title T]\n"
		    " [--by-pid|--by-tid|--no-comm]\n"
		    " [--domain NAME] [--pid PID] [--comm NAME] [--mode user|kernel]\n"
		    " [-j N] [FILE...]",
	.description =
		"Write an interactive flame graph of a recording: one self-contained HTML\n"
		"page (no network needed to view it) with click-to-zoom, reset, search with\n"
		"the matched share, and tooltips; or, for a name ending in .svg, a\n"
		"standalone SVG. Frames stack as all -> domain -> command name (COMM, every\n"
		"run of a program in one frame) -> the call chain (record with -g; samples\n"
		"without one are single frames). Each domain has its own colour family;\n"
		"kernel frames are pale and italic; the legend names the colours.\n"
		"Differential flame graph of two recordings: `domprof diff --flamegraph`.\n",
	.epilog =
		"See docs/flamegraph.md. The environment is report's (domprof report --help),\n"
		"e.g. DOMPROF_KSYM_CACHE=0: no kernel symbol cache for a perf.data recorded\n"
		"here (docs/perfdata.md).\n",
	.opts = flamegraph_opts,
};

int cmd_flamegraph(int argc, char **argv)
{
	const char *iargs[argc > 0 ? argc : 1];   /* -i values, expanded after the options */
	struct flamegraph_args fa_ = { .in = { iargs, 0 }, .out = "flamegraph.html" };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_flamegraph, argc, argv, &fa_, ops, &nops);
	if (prc != OPT_CONTINUE) {
		perf_guest_args_release(&fa_.guests);
		return prc;
	}
	const char *path = NULL, *out = fa_.out, *title = fa_.pic.title;
	struct filter_args *fa = &fa_.fa;
	struct fg_opts fo = { .inverted = fa_.inverted, .root = fa_.root.root,
			      .min_fraction = fa_.pic.min_pct / 100.0 };
	unsigned jobs = fa_.jobs;
	struct perf_guest_args guests = fa_.guests;
	bool svg = ends_with(out, ".svg");

	struct profile_opts o = { .stacks = true, .jobs = jobs, .by_tid = fo.root == FG_ROOT_TID };
	char why[PATH_MAX + 256], desc[PATH_MAX + 64];
	struct profile *p = profile_load_inputs(fa_.in.v, fa_.in.n, ops, (size_t)nops, &fa->flt, &o,
						&guests, desc, sizeof(desc), why, sizeof(why));
	path = desc;
	if (!p) {
		cli_error_text("flamegraph", NULL, why);
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		cli_warn_text("flamegraph", NULL, p->warnings[i]);
	if (!p->matched)
		cli_warn("flamegraph", "profile is empty (0 samples match)");
	else if (!p->has_callchains)
		cli_say("flamegraph", "note: no call chains in '%s' (record with -g): "
				"each sample is a single frame", path);

	char tbuf[512], sub[640];
	if (!title) {
		snprintf(tbuf, sizeof(tbuf), "Flame graph: %.480s", path);   /* a long path is cut */
		title = tbuf;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", p->header.hostname ? p->header.hostname : "",
		 fa->len ? ", filter: " : "", fa->desc);
	fo.title = title;
	fo.subtitle = sub;

	FILE *f = fopen(out, "w");
	if (!f) {
		cli_say("flamegraph", "cannot create '%s': %s", out, strerror(errno));
		profile_free(p);
		return 1;
	}
	int rc = svg ? flamegraph_svg(f, p, &fo) : flamegraph_html(f, p, &fo);
	if (fclose(f) && !rc)
		rc = -EIO;
	profile_free(p);
	if (rc) {
		cli_say("flamegraph", "writing '%s' failed: %s", out, strerror(-rc));
		return 1;
	}
	return 0;
}
