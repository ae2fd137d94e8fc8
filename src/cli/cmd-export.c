// SPDX-License-Identifier: MIT
/*
 * `domprof export`: aggregate a recording with its unique stacks and
 * write it in a format other tools read: folded stacks (flamegraph.pl,
 * speedscope, inferno), pprof (go tool pprof), speedscope JSON, or
 * domprof's own JSON with call trees (src/output/, docs/export.md). This
 * file only parses options and reports errors.
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

enum fmt { FMT_NONE, FMT_FOLDED, FMT_PPROF, FMT_SPEEDSCOPE, FMT_JSON };

struct export_args {
	struct input_args in;
	struct filter_args fa;
	struct perf_guest_args guests;
	struct fg_root_args root;
	unsigned jobs;   /* -j; 0: chosen per file (jobs_for_size) */
	const char *out;
	enum fmt fmt;
	const char *label_args[PPROF_LABELS_MAX];   /* --labels, parsed once options are read */
	size_t nlabel_args;
};

static int set_format(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	static const char *const names[] = { "folded", "pprof", "speedscope", "json" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(value, names[i])) {
			((struct export_args *)ctx)->fmt = (enum fmt)(FMT_FOLDED + i);
			return 0;
		}
	snprintf(err, n, "unknown format '%s' (folded, pprof, speedscope or json)", value);
	return -1;
}

static int add_labels(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct export_args *ea = ctx;
	if (ea->nlabel_args >= PPROF_LABELS_MAX) {
		snprintf(err, n, "--labels: at most %u labels", PPROF_LABELS_MAX);
		return -1;
	}
	ea->label_args[ea->nlabel_args++] = value;
	return 0;
}

static const struct opt export_opts[] = {
	{ .kind = OPT_CALL, .name = "format", .arg = "FMT", .fn = set_format,
	  .values = "folded pprof speedscope json", .help = "one of the above (required)" },
	{ .kind = OPT_CALL, .letter = 'f', .arg = "FMT", .fn = set_format, .flags = OPT_ALIAS,
	  .alias_of = "--format", .help = "" },
	OPT_INCLUDE(opts_inputs, struct export_args, in),
	OPT_STR('o', "output", "OUT", struct export_args, out, "output file (default: standard output)"),
	OPT_INCLUDE(opts_filter, struct export_args, fa),
	OPT_FN(0, "labels", "K=V,...", add_labels,
	       "pprof: these labels on every sample too (host=web1,cluster=eu; repeatable; docs/fleet.md)"),
	OPT_INCLUDE(opts_fg_root, struct export_args, root),
	OPT_INCLUDE(opts_jobs, struct export_args, jobs),
	OPT_INCLUDE(opts_perf_guest, struct export_args, guests),
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_TABLE_END,
};

const struct cmd_spec spec_export = {
	.name = "export",
	.summary = "export a profile: folded, pprof, speedscope, json",
	.synopsis = "--format folded|pprof|speedscope|json [-i FILE] [-o OUT]\n"
		    " [--domain NAME] [--pid PID] [--comm NAME] [--image NAME]\n"
		    " [--mode user|kernel] [--by-pid|--by-tid|--no-comm] [-j N]\n"
		    " [FILE...]",
	.description =
		"Write a recording's aggregated profile for other tools:\n"
		"  folded      one line per stack: DOMAIN;COMM;caller;...;leaf COUNT, the runs\n"
		"              of one program merged (FlameGraph's flamegraph.pl, speedscope,\n"
		"              inferno)\n"
		"  pprof       gzip-compressed profile.proto (go tool pprof), sample types\n"
		"              samples/count and cpu/nanoseconds, labels domain, pid, comm\n"
		"              (and tid with --by-tid); no process frame\n"
		"  speedscope  speedscope's JSON file format, one profile per domain, the\n"
		"              process level as the first frame of each stack\n"
		"  json        the aggregated profile with symbols, stacks and call tree\n"
		"              (the tree's process level as chosen below)\n",
	.epilog =
		"An empty or filtered-to-nothing profile still gives a valid file, with a\n"
		"warning on stderr. See docs/export.md. The environment is report's (see\n"
		"domprof report --help), e.g. DOMPROF_KSYM_CACHE=0: no kernel symbol cache\n"
		"for a perf.data recorded here (docs/perfdata.md).\n",
	.opts = export_opts,
};

int cmd_export(int argc, char **argv)
{
	const char *iargs[argc > 0 ? argc : 1];   /* -i values, expanded after the options */
	struct export_args ea = { .in = { iargs, 0 }, .fmt = FMT_NONE };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_export, argc, argv, &ea, ops, &nops);
	if (prc != OPT_CONTINUE) {
		perf_guest_args_release(&ea.guests);
		return prc;
	}
	const char *path = NULL, *out = ea.out;
	enum fmt fmt = ea.fmt;
	char emsg[512];
	struct perf_guest_args guests = ea.guests;
	const char **label_args = ea.label_args;
	size_t nlabel_args = ea.nlabel_args;
	unsigned jobs = ea.jobs;
	enum fg_root root = ea.root.root;
	if (fmt == FMT_NONE)
		return usage_error("export", "--format is required (folded, pprof, speedscope or json)");
	if (nlabel_args && fmt != FMT_PPROF)
		return usage_error("export", "--labels is for --format pprof");
	struct pprof_labels labels = { 0 };
	for (size_t i = 0; i < nlabel_args; i++)
		if (pprof_labels_parse(&labels, label_args[i], emsg, sizeof(emsg))) {
			pprof_labels_free(&labels);
			return usage_error("export", "%s", emsg);
		}

	struct profile_opts o = { .stacks = true, .jobs = jobs, .by_tid = root == FG_ROOT_TID };
	char why[PATH_MAX + 256], desc[PATH_MAX + 64];
	struct profile *p = profile_load_inputs(ea.in.v, ea.in.n, ops, (size_t)nops, &ea.fa.flt, &o,
						&guests, desc, sizeof(desc), why, sizeof(why));
	path = desc;
	if (!p) {
		cli_error_text("export", NULL, why);
		pprof_labels_free(&labels);
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		cli_warn_text("export", NULL, p->warnings[i]);
	if (!p->matched)
		cli_warn("export", "profile is empty (0 samples match)");

	FILE *f = stdout;
	if (out && strcmp(out, "-")) {
		f = fopen(out, "wb");
		if (!f) {
			cli_say("export", "cannot create '%s': %s", out, strerror(errno));
			profile_free(p);
			pprof_labels_free(&labels);
			return 1;
		}
	}
	int rc;
	switch (fmt) {
	case FMT_FOLDED: rc = export_folded(f, p, root); break;
	case FMT_PPROF: rc = export_pprof(f, p, &labels, root); break;
	case FMT_SPEEDSCOPE: rc = export_speedscope(f, p, path, root); break;
	default: rc = export_json(f, p, path, root); break;
	}
	if (f != stdout) {
		if (fclose(f) && !rc)
			rc = -EIO;
	} else if (fflush(f) && !rc) {
		rc = -EIO;
	}
	profile_free(p);
	pprof_labels_free(&labels);
	if (rc) {
		cli_say("export", "writing %s failed: %s", out ? out : "standard output",
			strerror(-rc));
		return 1;
	}
	return 0;
}
