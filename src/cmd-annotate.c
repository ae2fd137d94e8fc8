// SPDX-License-Identifier: MIT
/*
 * `domprof annotate [SYMBOL]`: where inside a function the samples fell.
 * Loads the recording with per-address self samples (analysis/hits.c),
 * finds the symbol's rows (every domain and image that has a function of
 * that name with samples, or the hottest N), and prints each one
 * disassembled with its samples (output/annotate.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/options.h"
#include "analysis/profile.h"
#include "commands.h"
#include "output/escape.h"
#include "output/annotate.h"
#include "output/disasm.h"
#include "symbols/debuginfod.h"

const char usage_annotate[] =
	"usage: domprof annotate [-i FILE] [--domain NAME] [-n N] [--format text|json]\n"
	"                        [filters] [SYMBOL]\n"
	"\n"
	"Show the instructions of a function with the share of its samples on each\n"
	"(the hottest marked ==>, those with >= 5% marked *, jump targets inside\n"
	"the function marked >, branches named as symbol+offset), and where the\n"
	"image has DWARF line tables each source line with its share, above its\n"
	"instructions, its text from the source file when found. SYMBOL is the\n"
	"name as report -l prints it; every domain and image with a function of\n"
	"that name is shown. Without SYMBOL: the N hottest functions (default 1).\n"
	"Code bytes come from the file the recording refers to (its embedded copy,\n"
	"or the file on this machine when its build-id matches); where there is\n"
	"none (kernel tables, a passive guest's user space) the hot addresses are\n"
	"listed instead, and the header says why.\n"
	"\n"
	"  -i, --input FILE       recording to read (default: domprof.data), or a\n"
	"                         perf.data (docs/perfdata.md)\n"
	"  -n, --top N            without SYMBOL: the N hottest functions (1..1000)\n"
	"      --domain NAME      only samples of this domain (host, or a VM's name)\n"
	"      --pid PID          only samples of this process\n"
	"      --comm NAME        only samples taken while their process had this\n"
	"                         command name (an exec renames it, as in perf)\n"
	"      --mode user|kernel only user-mode or only kernel-mode samples\n"
	FILTER_WINDOW_HELP
	"      --source-prefix DIR  look for source files under DIR\n"
	"      --strip-prefix P   drop P from the start of the line table's paths\n"
	"                         (sources moved since the build)\n"
	"      --no-source        no source lines between the instructions\n"
	"      --vmlinux [DOMAIN=]FILE  source lines of DOMAIN's kernel (default: host)\n"
	"                         from FILE, the kernel's debug file (linux-image-*-dbg)\n"
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"  -j, --jobs N           decode the recording on N threads (default: the CPUs\n"
	"                         this process may use; the output is the same)\n"
	"      --format FMT       text (default) or json (an array, one object per\n"
	"                         function; see docs/annotate.md)\n"
	"\n"
	"Exit status: 0, 1 when the file cannot be read or no function of that name\n"
	"has samples (the nearest names are suggested), 2 on a usage error.\n";

enum { OPT_DOMAIN = 256, OPT_PID, OPT_COMM, OPT_MODE, OPT_TIME, OPT_CPU, OPT_FORMAT, OPT_NO_DEBUGINFOD,
       OPT_SRC_PREFIX, OPT_STRIP_PREFIX, OPT_NO_SOURCE, OPT_VMLINUX };

/* edit distance of a and b (each cut at 64 bytes), for suggestions */
static size_t distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 64), lb = strnlen(b, 64);
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* "no function 'X' has samples; nearest: a, b, c" (names with samples) */
static void suggest(const struct profile *p, const char *name)
{
	const char *best[3] = { NULL, NULL, NULL };
	size_t bd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
	for (size_t i = 0; i < p->nsyms; i++) {
		const char *s = p->syms[i].symbol;
		if (!p->syms[i].self || (best[0] && !strcmp(best[0], s)) ||
		    (best[1] && !strcmp(best[1], s)) || (best[2] && !strcmp(best[2], s)))
			continue;
		size_t d = strstr(s, name) ? 0 : distance(name, s);
		for (int k = 0; k < 3; k++)
			if (d < bd[k]) {
				for (int m = 2; m > k; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[k] = d;
				best[k] = s;
				break;
			}
	}
	struct text_tmp t = { 0 };   /* the names the recording holds, safe for a terminal */
	fprintf(stderr, "domprof annotate: no function '%s' has samples", text_tmp_safe(&t, name));
	if (best[0])
		fprintf(stderr, "; nearest: %s%s%s%s%s", text_tmp_safe(&t, best[0]), best[1] ? ", " : "",
			best[1] ? text_tmp_safe(&t, best[1]) : "", best[2] ? ", " : "",
			best[2] ? text_tmp_safe(&t, best[2]) : "");
	fputc('\n', stderr);
	text_tmp_free(&t);
}

/* capstone loaded on another thread while the recording is read: its
 * dlopen (relocating ~1.8 MB of tables, ~2 ms) was 7% of annotating the
 * hottest function of a 64k-sample -g recording */
static void *load_disasm(void *unused)
{
	(void)unused;
	(void)disasm_api(NULL);
	return NULL;
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, 'n' },
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "source-prefix", required_argument, NULL, OPT_SRC_PREFIX },
		{ "strip-prefix", required_argument, NULL, OPT_STRIP_PREFIX },
		{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
		{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
		{ "jobs", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "domprof.data";
	struct profile_vmlinux vml[PROFILE_MAX_VMLINUX];
	size_t nvml = 0;
	struct filter_args fa = { 0 };
	long top = 1;
	unsigned jobs = 0;   /* -j */
	struct annotate_opts ao = { 0 };
	int json = 0;
	char emsg[256];

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":i:n:j:", longopts, &li)) != -1) {
		switch (c) {
		case 'i': path = optarg; break;
		case 'n': {
			char *end;
			top = strtol(optarg, &end, 10);
			if (end == optarg || *end || top < 1 || top > 1000)
				return usage_error("annotate", "-n '%s' is not a count (1..1000)", optarg);
			break;
		}
		case 'j':
			if (parse_jobs(optarg, &jobs))
				return usage_error("annotate", JOBS_ERROR, optarg);
			break;
		case OPT_DOMAIN: case OPT_PID: case OPT_COMM: case OPT_MODE: case OPT_TIME: case OPT_CPU:
			if (filter_args_set(&fa, longopts[li].name, optarg, emsg, sizeof(emsg)))
				return usage_error("annotate", "%s", emsg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("annotate", "unknown format '%s' (text or json)", optarg);
			json = !strcmp(optarg, "json");
			break;
		case OPT_NO_DEBUGINFOD:
			dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
			break;
		case OPT_SRC_PREFIX: ao.source_prefix = optarg; break;
		case OPT_STRIP_PREFIX: ao.strip_prefix = optarg; break;
		case OPT_NO_SOURCE: ao.no_source = true; break;
		case OPT_VMLINUX:
			if (parse_vmlinux(optarg, vml, &nvml, emsg, sizeof(emsg)) < 0)
				return usage_error("annotate", "%s", emsg);
			break;
		case ':':
			return usage_error("annotate", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("annotate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	const char *name = optind < argc ? argv[optind++] : NULL;
	if (optind < argc)
		return usage_error("annotate", "unexpected argument '%s'", argv[optind]);

	/* with a name, only the samples where it may be are resolved (and
	 * annotate uses no call chains: neither callgraph nor stacks) */
	/* Without -j, the CPUs whatever the file's size (report's default
	 * is one thread below 4 MiB): annotate counts little per sample
	 * (only where NAME may be), so decompressing on workers pays on a
	 * small file already. Measured (perf stat -r 30, 2 CPUs), -j 1 -> 2:
	 * a 2 MB -g recording 25.4 -> 23.5 ms (NAME), 70.5 -> 60.6 ms
	 * (-n 3); 0.9 MB 9.4 -> 8.6 ms; report -l there 9.4 -> 10.5 ms. */
	if (!jobs)
		jobs = jobs_for_size(UINT64_MAX);
	struct profile_opts o = { .jobs = jobs, .hits = true, .hits_symbol = name, .hits_only = name != NULL,
				  .vmlinux = vml, .nvmlinux = nvml };
	int err = 0;
	char msg[256] = "", why[PATH_MAX + 256];
	pthread_t loader;
	bool loading = pthread_create(&loader, NULL, load_disasm, NULL) == 0;
	struct profile *p = profile_load(path, &fa.flt, &o, &err, msg, sizeof(msg));
	if (loading)
		pthread_join(loader, NULL);   /* disasm_api's answer is this thread's now */
	if (!p) {
		text_line(stderr, "domprof annotate: ", profile_load_reason(why, sizeof(why), path, err, msg));
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		text_line(stderr, "domprof annotate: warning: ", p->warnings[i]);
	/* the rows to show: by name, or the hottest; in report's order */
	size_t n;
	uint32_t *ix = profile_rows(p, NULL, 0, 0.0, &n);
	size_t shown = 0;
	int rc = 0;
	if (json)
		fputs("[", stdout);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (name ? strcmp(p->syms[ix[i]].symbol, name) : shown >= (size_t)top)
			continue;
		if (json && shown)
			fputs(",\n", stdout);
		else if (!json && shown)
			fputc('\n', stdout);
		rc = annotate_symbol(stdout, p, ix[i], json, &ao);
		shown++;
	}
	if (json)
		fputs("]\n", stdout);
	free(ix);
	if (rc)
		fprintf(stderr, "domprof annotate: writing failed: %s\n", strerror(-rc));
	else if (!shown && name) {
		/* the names with samples: the profile above has only those
		 * where the name may be, so every sample is resolved again
		 * (the failing case alone pays) */
		struct profile_opts all = o;
		all.hits_only = false;
		struct profile *q = profile_load(path, &fa.flt, &all, &err, msg, sizeof(msg));
		suggest(q ? q : p, name);
		profile_free(q);
		rc = 1;
	} else if (!shown)
		fprintf(stderr, "domprof annotate: no samples%s\n",
			p->total_samples ? " match the filter" : " in this recording");
	profile_free(p);
	return rc ? 1 : 0;
}
