// SPDX-License-Identifier: MIT
/*
 * `domprof annotate [SYMBOL]`: where inside a function the samples fell.
 * Loads the recording with per-address self samples (analysis/hits.c),
 * finds the symbol's rows (every domain and image that has a function of
 * that name with samples, or the hottest N), and prints each one
 * disassembled with its samples (output/annotate.c).
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/options.h"
#include "analysis/profile.h"
#include "cli/blocks.h"
#include "commands.h"
#include "output/escape.h"
#include "output/annotate.h"
#include "output/disasm.h"



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

struct annotate_args {
	const char *path, *format;
	struct vmlinux_args vml;
	struct filter_args fa;
	struct perf_guest_args guests;
	long top;
	unsigned jobs;   /* -j */
	struct annotate_opts ao;
};

static int set_top(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	char *end;
	long top = strtol(value, &end, 10);
	if (end == value || *end || top < 1 || top > 1000) {
		snprintf(err, n, "-n '%s' is not a count (1..1000)", value);
		return -1;
	}
	*(long *)ctx = top;
	return 0;
}

static int set_format(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	if (strcmp(value, "text") && strcmp(value, "json")) {
		snprintf(err, n, "unknown format '%s' (text or json)", value);
		return -1;
	}
	*(const char **)ctx = value;
	return 0;
}

static const struct opt annotate_opts[] = {
	OPT_STR('i', "input", "FILE", struct annotate_args, path,
		"recording to read (default: domprof.data), or a perf.data (docs/perfdata.md)"),
	OPT_FN_AT('n', "top", "N", struct annotate_args, top, set_top,
		  "without SYMBOL: the N hottest functions (1..1000)"),
	OPT_INCLUDE(opts_filter, struct annotate_args, fa),
	OPT_STR(0, "source-prefix", "DIR", struct annotate_args, ao.source_prefix, "look for source files under DIR"),
	OPT_STR(0, "strip-prefix", "P", struct annotate_args, ao.strip_prefix,
		"drop P from the start of the line table's paths (sources moved since the build)"),
	OPT_BOOL(0, "no-source", struct annotate_args, ao.no_source, "no source lines between the instructions"),
	OPT_INCLUDE(opts_vmlinux, struct annotate_args, vml),
	OPT_INCLUDE(opts_perf_guest, struct annotate_args, guests),
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_FN_AT('j', "jobs", "N", struct annotate_args, jobs, opt_jobs,
		  "decode the recording on N threads (default: the CPUs this process may use; the output is "
		  "the same)"),
	{ .kind = OPT_CALL, .name = "format", .arg = "FMT", .off = offsetof(struct annotate_args, format),
	  .fn = set_format, .values = "text json",
	  .help = "text (default) or json (an array, one object per function; see docs/annotate.md)" },
	OPT_TABLE_END,
};

const struct cmd_spec spec_annotate = {
	.name = "annotate",
	.summary = "a function's instructions with their samples",
	.synopsis = "[-i FILE] [--domain NAME] [-n N] [--format text|json]\n"
		    " [filters] [SYMBOL]",
	.description =
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
		"listed instead, and the header says why.\n",
	.epilog =
		"Exit status: 0, 1 when the file cannot be read or no function of that name\n"
		"has samples (the nearest names are suggested), 2 on a usage error.\n",
	.opts = annotate_opts,
};

int cmd_annotate(int argc, char **argv)
{
	struct annotate_args aa = { .path = "domprof.data", .format = "text", .top = 1 };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_annotate, argc, argv, &aa, ops, &nops);
	if (prc != OPT_CONTINUE) {
		perf_guest_args_release(&aa.guests);
		return prc;
	}
	const char *path = aa.path;
	struct filter_args fa = aa.fa;
	long top = aa.top;
	unsigned jobs = aa.jobs;
	struct annotate_opts ao = aa.ao;
	int json = !strcmp(aa.format, "json");
	const char *name = nops > 0 ? ops[0] : NULL;
	if (nops > 1) {
		perf_guest_args_release(&aa.guests);
		return usage_error("annotate", "unexpected argument '%s'", ops[1]);
	}

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
				  .vmlinux = aa.vml.v, .nvmlinux = aa.vml.n, .perf_guests = &aa.guests };
	int err = 0;
	char msg[256] = "", why[PATH_MAX + 256];
	pthread_t loader;
	bool loading = pthread_create(&loader, NULL, load_disasm, NULL) == 0;
	struct profile *p = profile_load(path, &fa.flt, &o, &err, msg, sizeof(msg));
	if (loading)
		pthread_join(loader, NULL);   /* disasm_api's answer is this thread's now */
	if (!p) {
		cli_error_text("annotate", NULL, profile_load_reason(why, sizeof(why), path, err, msg));
		perf_guest_args_release(&aa.guests);
		return 1;
	}
	for (size_t i = 0; i < p->nwarnings; i++)
		cli_warn_text("annotate", NULL, p->warnings[i]);
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
		cli_say("annotate", "writing failed: %s", strerror(-rc));
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
		cli_say("annotate", "no samples%s",
			p->total_samples ? " match the filter" : " in this recording");
	profile_free(p);
	perf_guest_args_release(&aa.guests);
	return rc ? 1 : 0;
}
