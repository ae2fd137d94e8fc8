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

#include "analysis/options.h"
#include "analysis/profile.h"
#include "commands.h"
#include "output/flamegraph.h"
#include "symbols/debuginfod.h"

const char usage_export[] =
	"usage: domprof export --format folded|pprof|speedscope|json [-i FILE] [-o OUT]\n"
	"                      [--domain NAME] [--pid PID] [--comm NAME] [--image NAME]\n"
	"                      [--mode user|kernel]\n"
	"\n"
	"Write a recording's aggregated profile for other tools:\n"
	"  folded      one line per stack: DOMAIN;COMM-PID;caller;...;leaf COUNT\n"
	"              (FlameGraph's flamegraph.pl, speedscope, inferno)\n"
	"  pprof       gzip-compressed profile.proto (go tool pprof), sample types\n"
	"              samples/count and cpu/nanoseconds, labels domain, pid, comm\n"
	"  speedscope  speedscope's JSON file format, one profile per domain\n"
	"  json        the aggregated profile with symbols, stacks and call tree\n"
	"\n"
	"      --format FMT       one of the above (required)\n"
	"  -i, --input FILE       recording to read (default: domprof.data), or a\n"
	"                         perf.data (docs/perfdata.md)\n"
	"  -o, --output OUT       output file (default: standard output)\n"
	"      --domain NAME      only samples of this domain (host, or a VM's name)\n"
	"      --pid PID          only samples of this process\n"
	"      --comm NAME        only samples of processes with this command name\n"
	"      --image NAME       only samples whose leaf is in this image\n"
	"      --mode user|kernel only user-mode or only kernel-mode samples\n"
	FILTER_WINDOW_HELP
	PERF_GUEST_HELP
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"\n"
	"An empty or filtered-to-nothing profile still gives a valid file, with a\n"
	"warning on stderr. See docs/export.md.\n";

enum { OPT_DOMAIN = 256, OPT_PID, OPT_COMM, OPT_IMAGE, OPT_MODE, OPT_TIME, OPT_CPU, OPT_NO_DEBUGINFOD, OPT_GUEST };
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
		{ "guest-name", required_argument, NULL, OPT_GUEST },
		{ "guest-kallsyms", required_argument, NULL, OPT_GUEST },
		{ "guest-sysmap", required_argument, NULL, OPT_GUEST },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "domprof.data", *out = NULL;
	enum fmt fmt = FMT_NONE;
	struct filter_args fa = { 0 };
	char emsg[256];
	struct perf_guest_args guests = { 0 };

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":f:i:o:", longopts, &li)) != -1) {
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
		case 'i': path = optarg; break;
		case 'o': out = optarg; break;
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
		case ':':
			return usage_error("export", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("export", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("export", "unexpected argument '%s'", argv[optind]);
	if (fmt == FMT_NONE)
		return usage_error("export", "--format is required (folded, pprof, speedscope or json)");

	struct profile_opts o = { .stacks = true };
	int err = 0;
	char msg[256] = "", why[PATH_MAX + 256];
	o.perf_guests = &guests;
	struct profile *p = profile_load(path, &fa.flt, &o, &err, msg, sizeof(msg));
	perf_guest_args_release(&guests);  /* the reader copied them */
	if (!p) {
		fprintf(stderr, "domprof export: %s\n",
			profile_load_reason(why, sizeof(why), path, err, msg));
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		fprintf(stderr, "domprof export: warning: %s\n", p->warnings[i]);
	if (!p->matched)
		fprintf(stderr, "domprof export: warning: profile is empty (0 samples match)\n");

	FILE *f = stdout;
	if (out && strcmp(out, "-")) {
		f = fopen(out, "wb");
		if (!f) {
			fprintf(stderr, "domprof export: cannot create '%s': %s\n", out, strerror(errno));
			profile_free(p);
			return 1;
		}
	}
	int rc;
	switch (fmt) {
	case FMT_FOLDED: rc = export_folded(f, p); break;
	case FMT_PPROF: rc = export_pprof(f, p); break;
	case FMT_SPEEDSCOPE: rc = export_speedscope(f, p, path); break;
	default: rc = export_json(f, p, path); break;
	}
	if (f != stdout) {
		if (fclose(f) && !rc)
			rc = -EIO;
	} else if (fflush(f) && !rc) {
		rc = -EIO;
	}
	profile_free(p);
	if (rc) {
		fprintf(stderr, "domprof export: writing %s failed: %s\n", out ? out : "standard output",
			strerror(-rc));
		return 1;
	}
	return 0;
}
