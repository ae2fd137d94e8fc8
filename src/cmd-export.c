// SPDX-License-Identifier: MIT
/*
 * `domprof export`: aggregate a recording with its unique stacks and
 * write it in a format other tools read: folded stacks (flamegraph.pl,
 * speedscope, inferno), pprof (go tool pprof), speedscope JSON, or
 * domprof's own JSON with call trees (src/output/, docs/export.md). This
 * file only parses options and reports errors.
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

const char usage_export[] =
	"usage: domprof export --format folded|pprof|speedscope|json [-i FILE] [-o OUT]\n"
	"                      [--domain NAME] [--pid PID] [--comm NAME] [--image NAME]\n"
	"                      [--mode user|kernel] [--by-pid|--by-tid|--no-comm] [-j N]\n"
	"\n"
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
	"              (the tree's process level as chosen below)\n"
	"\n"
	"      --format FMT       one of the above (required)\n"
	"  -i, --input FILE       recording to read (default: domprof.data), or a\n"
	"                         perf.data (docs/perfdata.md)\n"
	"  -o, --output OUT       output file (default: standard output)\n"
	"      --domain NAME      only samples of this domain (host, or a VM's name)\n"
	"      --pid PID          only samples of this process\n"
	"      --comm NAME        only samples taken while their process had this\n"
	"                         command name (an exec renames it, as in perf)\n"
	"      --image NAME       only samples whose leaf is in this image\n"
	"      --mode user|kernel only user-mode or only kernel-mode samples\n"
	FILTER_WINDOW_HELP
	"      --labels K=V,...   pprof: these labels on every sample too (host=web1,\n"
	"                         cluster=eu; repeatable; docs/fleet.md)\n"
	FG_ROOT_HELP
	JOBS_HELP
	PERF_GUEST_HELP
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"\n"
	"An empty or filtered-to-nothing profile still gives a valid file, with a\n"
	"warning on stderr. See docs/export.md. The environment is report's (see\n"
	"domprof report --help), e.g. DOMPROF_KSYM_CACHE=0: no kernel symbol cache\n"
	"for a perf.data recorded here (docs/perfdata.md).\n";

enum { OPT_DOMAIN = 256, OPT_PID, OPT_COMM, OPT_IMAGE, OPT_MODE, OPT_TIME, OPT_CPU, OPT_NO_DEBUGINFOD,
       OPT_LABELS, OPT_ROOT, OPT_GUEST };
enum fmt { FMT_NONE, FMT_FOLDED, FMT_PPROF, FMT_SPEEDSCOPE, FMT_JSON };

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "labels", required_argument, NULL, OPT_LABELS },
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
	const char *path = NULL, *out = NULL;
	enum fmt fmt = FMT_NONE;
	struct filter_args fa = { 0 };
	char emsg[512];
	struct perf_guest_args guests = { 0 };
	const char *label_args[PPROF_LABELS_MAX];   /* --labels, parsed once options are read */
	size_t nlabel_args = 0;
	unsigned jobs = 0;   /* -j; 0: chosen per file (jobs_for_size) */
	enum fg_root root = FG_ROOT_COMM;
	int nroot = 0;

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":f:i:o:j:", longopts, &li)) != -1) {
		switch (c) {
		case 'f':  /* -f is --force elsewhere; here the first spelling of --format, kept for scripts */
			if (!strcmp(optarg, "folded"))
				fmt = FMT_FOLDED;
			else if (!strcmp(optarg, "pprof"))
				fmt = FMT_PPROF;
			else if (!strcmp(optarg, "speedscope"))
				fmt = FMT_SPEEDSCOPE;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else
				return usage_error("export", "unknown format '%s' (folded, pprof, speedscope or json)", optarg);
			break;
		case 'i': iargs[ni++] = optarg; break;
		case 'o': out = optarg; break;
		case 'j':
			if (parse_jobs(optarg, &jobs))
				return usage_error("export", JOBS_ERROR, optarg);
			break;
		case OPT_GUEST:
			if (perf_guest_args_set(&guests, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("export", "%s", emsg);
			break;
		case OPT_DOMAIN: case OPT_PID: case OPT_COMM: case OPT_IMAGE: case OPT_MODE: case OPT_TIME: case OPT_CPU:
			if (filter_args_set(&fa, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("export", "%s", emsg);
			break;
		case OPT_NO_DEBUGINFOD:
			dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
			break;
		case OPT_LABELS:
			if (nlabel_args >= PPROF_LABELS_MAX)
				return usage_error("export", "--labels: at most %u labels", PPROF_LABELS_MAX);
			label_args[nlabel_args++] = optarg;
			break;
		case OPT_ROOT:
			if (fg_root_option(&root, &nroot, longopts[li].name, emsg, sizeof(emsg)))
				return usage_error("export", "%s", emsg);
			break;
		case ':':
			return usage_error("export", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("export", "unknown option '%s'", argv[optind - 1]);
		}
	}
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
	struct profile *p = profile_load_inputs(iargs, ni, argv + optind, (size_t)(argc - optind), &fa.flt, &o,
						&guests, desc, sizeof(desc), why, sizeof(why));
	path = desc;
	if (!p) {
		text_line(stderr, "domprof export: ", why);
		pprof_labels_free(&labels);
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		text_line(stderr, "domprof export: warning: ", p->warnings[i]);
	if (!p->matched)
		fprintf(stderr, "domprof export: warning: profile is empty (0 samples match)\n");

	FILE *f = stdout;
	if (out && strcmp(out, "-")) {
		f = fopen(out, "wb");
		if (!f) {
			fprintf(stderr, "domprof export: cannot create '%s': %s\n", out, strerror(errno));
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
		fprintf(stderr, "domprof export: writing %s failed: %s\n", out ? out : "standard output",
			strerror(-rc));
		return 1;
	}
	return 0;
}
