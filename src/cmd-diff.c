// SPDX-License-Identifier: MIT
/*
 * `domprof diff A B`: compare two recordings (or one domain of each)
 * symbol by symbol. Loads both through analysis/profile.c, compares with
 * analysis/diff.c and prints with output/diff_render.c; with --flamegraph
 * it also writes the differential flame graph (output/flamegraph_diff.c)
 * of the same two sides. This file only parses options and reports
 * errors.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "commands.h"
#include "output/escape.h"
#include "output/diff_render.h"
#include "output/flamegraph.h"
#include "symbols/debuginfod.h"

const char usage_diff[] =
	"usage: domprof diff [options] A B\n"
	"\n"
	"A and B are each a recording, or a set of files read as one (a window of a\n"
	"record --switch-output series): a quoted glob ('h.data.2026-12-01T10:*')\n"
	"or paths joined by ','.\n"
	"\n"
	"Compare two recordings symbol by symbol, like opreport's differential\n"
	"profiles: per (domain, image, symbol) the samples and share in A and in B,\n"
	"the difference (B - A, in percentage points), +++ for symbols only in B\n"
	"and --- for symbols only in A. The last line is `similarity: S`, the sum\n"
	"over symbols of the smaller of the two shares (1 = same distribution,\n"
	"0 = nothing in common). Kernel images ([kernel.kallsyms], [guest.kernel],\n"
	"modules) of a domain compare as one image, [kernel]. A or B may be a\n"
	"perf.data (docs/perfdata.md).\n"
	"\n"
	"      --domain NAME      compare only domain NAME, on both sides\n"
	"      --domain-a NAME    only domain NAME of A\n"
	"      --domain-b NAME    only domain NAME of B; when the two sides select\n"
	"                         different domains, symbols match on (image, symbol)\n"
	"                         across them (the passive view of vm1 against an\n"
	"                         active view of the same guest)\n"
	"  -k, --kernel-only      compare only kernel-mode symbols, shares taken\n"
	"                         within them (also: --mode kernel)\n"
	"      --mode user|kernel|all  compare only user-mode or only kernel-mode\n"
	"                         samples (default all), as in the other commands\n"
	"      --fold-irq-enable  set aside the samples at known interrupt-enable\n"
	"                         points (finish_task_switch, _raw_spin_unlock_irq*,\n"
	"                         __do_softirq, default_idle, ...; see\n"
	"                         docs/merge-diff.md) on both sides, re-normalise and\n"
	"                         print the similarity with and without them\n"
	"  -s, --sort diff|share  order rows by |diff| (default) or by the larger share\n"
	"  -t, --threshold PCT    hide rows below PCT percent on both sides (the\n"
	"                         similarity always counts every row)\n"
	"      --format FMT       text (default), csv or json (see docs/merge-diff.md)\n"
	FILTER_WINDOW_HELP
	"                         (both sides)\n"
	"      --time-a W, --time-b W  the time window of one side: A and B may be\n"
	"                         one recording (diff --time-a 0,10 --time-b 10,20 F F)\n"
	JOBS_HELP
	"      --no-debuginfod    no debug files from debuginfod servers (DEBUGINFOD_URLS)\n"
	"\n"
	"Differential flame graph (the diff is printed as well):\n"
	"      --flamegraph OUT   write the flame graph of B with each frame coloured by\n"
	"                         its change against A (red hotter, blue colder, hatched\n"
	"                         only in A and drawn from A), A and B values and the\n"
	"                         change in each tooltip; OUT.html is the interactive\n"
	"                         page (search, zoom), OUT.svg a standalone SVG. The\n"
	"                         domain options above choose each side's frames; the\n"
	"                         picture shows all samples (no --fold-irq-enable);\n"
	"                         with -k, kernel-mode samples and kernel frames only\n"
	"      --absolute         the change in samples (B - A), not in shares of each\n"
	"                         side's total\n"
	"      --title T          its title (default \"Differential flame graph: A -> B\")\n"
	"      --min-width PCT    as in flamegraph\n"
	FG_ROOT_HELP
	"                         (default --by-comm; --no-comm when the two sides\n"
	"                         chose different domains, as the rows do)\n"
	"\n"
	"See docs/merge-diff.md and docs/flamegraph.md.\n";

enum { OPT_DOMAIN = 256, OPT_DOMAIN_A, OPT_DOMAIN_B, OPT_FOLD, OPT_FORMAT, OPT_MODE,
       OPT_TIME, OPT_TIME_A, OPT_TIME_B, OPT_CPU, OPT_NO_DEBUGINFOD, OPT_FLAME, OPT_ABS,
       OPT_TITLE, OPT_MINW, OPT_ROOT };

/* side: the side's --time and --cpu (a copy of the filter, domain and
 * mode set here) */
static struct profile *load(const char *path, const char *domain, int mode,
			    const struct profile_filter *side, const struct profile_opts *po)
{
	struct profile_filter flt = *side;
	flt.domain = domain;
	flt.mode = mode;
	int err = 0;
	char msg[512] = "", why[PATH_MAX + 512];
	struct inputs in = { 0 };
	if (inputs_add(&in, path, msg, sizeof(msg))) {
		text_line(stderr, "domprof diff: ", msg);
		return NULL;
	}
	struct profile *p = profile_load_files((const char *const *)in.paths, in.n, &flt, po, &err,
					       msg, sizeof(msg));
	inputs_free(&in);
	if (!p) {
		/* two files are read: name the one that failed */
		if (*msg && !strstr(msg, path)) {
			fprintf(stderr, "domprof diff: %s: ", path);
			text_line(stderr, "", msg);
		} else {
			text_line(stderr, "domprof diff: ", profile_load_reason(why, sizeof(why), path, err, msg));
		}
		return NULL;
	}
	for (size_t i = 0; i < p->nwarnings; i++) {
		fprintf(stderr, "domprof diff: warning: %s: ", path);
		text_line(stderr, "", p->warnings[i]);
	}
	return p;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

/* The differential flame graph into out (.svg: SVG, else HTML). Returns
 * 0, or 1 after saying why. */
static int write_flame(const char *out, const struct profile *a, const struct profile *b,
		       const struct diff_view *v, const struct diff_opts *o, struct fg_diff_opts *fo)
{
	char na[PATH_MAX + 64], nb[PATH_MAX + 64], title[2 * PATH_MAX + 160];
	snprintf(na, sizeof(na), "%s%s%s", v->path_a, v->domain_a ? " domain " : "",
		 v->domain_a ? v->domain_a : "");
	snprintf(nb, sizeof(nb), "%s%s%s", v->path_b, v->domain_b ? " domain " : "",
		 v->domain_b ? v->domain_b : "");
	if (!fo->title) {
		snprintf(title, sizeof(title), "Differential flame graph: %s -> %s", na, nb);
		fo->title = title;
	}
	fo->name_a = na;
	fo->name_b = nb;
	fo->cross_domain = o->cross_domain;
	fo->domain_label = o->domain_label;
	FILE *f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "domprof diff: cannot create '%s': %s\n", out, strerror(errno));
		return 1;
	}
	int rc = ends_with(out, ".svg") ? flamegraph_diff_svg(f, a, b, fo) : flamegraph_diff_html(f, a, b, fo);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "domprof diff: writing '%s' failed: %s\n", out, strerror(-rc));
		return 1;
	}
	return 0;
}

/* The diff on stdout in format. Returns 0 or a negative errno. */
static int print_diff(const char *format, const struct diff_view *v)
{
	int rc;
	if (!strcmp(format, "csv"))
		rc = diff_render_csv(stdout, v);
	else if (!strcmp(format, "json"))
		rc = diff_render_json(stdout, v);
	else
		rc = diff_render_text(stdout, v);
	if (!rc && !strcmp(format, "csv")) {
		/* CSV holds rows only: say the score where a human sees it */
		if (v->fold_irq)
			fprintf(stderr, "domprof diff: similarity with interrupt-enable points: %.4f\n",
				v->r->similarity_all);
		fprintf(stderr, "domprof diff: similarity: %.4f\n", v->r->similarity);
	}
	return rc;
}

/* An option of the flame graph alone (c, its long name, its value) into
 * fo. Returns 0, or -EINVAL with the reason in emsg. */
static int flame_option(int c, const char *name, const char *arg, struct fg_diff_opts *fo,
			int *nroot, char *emsg, size_t n)
{
	double pct;
	switch (c) {
	case OPT_ABS: fo->absolute = true; return 0;
	case OPT_TITLE: fo->title = arg; return 0;
	case OPT_MINW:
		if (parse_percent(arg, &pct) || pct <= 0) {
			snprintf(emsg, n, "--min-width '%s' is not a percentage (0..100]", arg);
			return -EINVAL;
		}
		fo->min_fraction = pct / 100.0;
		return 0;
	default:
		return fg_root_option(&fo->root, nroot, name, emsg, n);
	}
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "domain-a", required_argument, NULL, OPT_DOMAIN_A },
		{ "domain-b", required_argument, NULL, OPT_DOMAIN_B },
		{ "kernel-only", no_argument, NULL, 'k' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "fold-irq-enable", no_argument, NULL, OPT_FOLD },
		{ "sort", required_argument, NULL, 's' },
		{ "threshold", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "time-a", required_argument, NULL, OPT_TIME_A },
		{ "time-b", required_argument, NULL, OPT_TIME_B },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "jobs", required_argument, NULL, 'j' },
		{ "flamegraph", required_argument, NULL, OPT_FLAME },
		{ "absolute", no_argument, NULL, OPT_ABS },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "min-width", required_argument, NULL, OPT_MINW },
		{ "by-comm", no_argument, NULL, OPT_ROOT },
		{ "by-pid", no_argument, NULL, OPT_ROOT },
		{ "by-tid", no_argument, NULL, OPT_ROOT },
		{ "no-comm", no_argument, NULL, OPT_ROOT },
		{ NULL, 0, NULL, 0 },
	};
	/* --time and --cpu for both sides; --time-a/--time-b for one */
	struct filter_args fa_a = { 0 }, fa_b = { 0 };
	char emsg[256];
	const char *format = "text";
	struct diff_view v = { 0 };
	struct diff_opts o = { 0 };
	unsigned jobs = 0;   /* -j; 0: chosen per file (jobs_for_size) */
	struct fg_diff_opts fo = { 0 };
	const char *flame = NULL;
	int nroot = 0;
	bool fg_only_opt = false;

	opterr = 0;
	optind = 1;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":ks:t:j:", longopts, &li)) != -1) {
		switch (c) {
		case OPT_DOMAIN: v.domain_a = v.domain_b = optarg; break;
		case OPT_DOMAIN_A: v.domain_a = optarg; break;
		case OPT_DOMAIN_B: v.domain_b = optarg; break;
		case 'k': o.kernel_only = true; break;
		case 'j':
			if (parse_jobs(optarg, &jobs))
				return usage_error("diff", JOBS_ERROR, optarg);
			break;
		case OPT_MODE:
			/* one meaning in every command: user, kernel, or all */
			v.user_only = !strcmp(optarg, "user");
			o.kernel_only = !strcmp(optarg, "kernel");
			if (!v.user_only && !o.kernel_only && strcmp(optarg, "all"))
				return usage_error("diff", "--mode takes user, kernel or all, not '%s'", optarg);
			break;
		case OPT_FOLD: o.fold_irq = true; break;
		case OPT_TIME: case OPT_TIME_A: case OPT_TIME_B: case OPT_CPU: {
			const char *name = c == OPT_CPU ? "cpu" : "time";
			if ((c != OPT_TIME_B && filter_args_set(&fa_a, name, optarg, emsg, sizeof(emsg))) ||
			    (c != OPT_TIME_A && filter_args_set(&fa_b, name, optarg, emsg, sizeof(emsg))))
				return usage_error("diff", "%s", emsg);
			break;
		}
		case 's':
			if (!strcmp(optarg, "diff"))
				o.sort = DIFF_SORT_DIFF;
			else if (!strcmp(optarg, "share"))
				o.sort = DIFF_SORT_SHARE;
			else
				return usage_error("diff", "--sort takes diff or share, not '%s'", optarg);
			break;
		case 't':
			if (parse_percent(optarg, &v.threshold))
				return usage_error("diff", "threshold '%s' is not a percentage (0..100)", optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "csv") && strcmp(optarg, "json"))
				return usage_error("diff", "unknown format '%s' (text, csv or json)", optarg);
			format = optarg;
			break;
		case OPT_NO_DEBUGINFOD:
			dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
			break;
		case OPT_FLAME: flame = optarg; break;
		case OPT_ABS: case OPT_TITLE: case OPT_MINW: case OPT_ROOT:
			if (flame_option(c, longopts[li].name, optarg, &fo, &nroot, emsg, sizeof(emsg)))
				return usage_error("diff", "%s", emsg);
			fg_only_opt = true;
			break;
		case ':':
			return usage_error("diff", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("diff", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return usage_error("diff", "needs two recordings, A and B");
	if (argc - optind > 2)
		return usage_error("diff", "unexpected argument '%s'", argv[optind + 2]);
	v.path_a = argv[optind];
	v.path_b = argv[optind + 1];

	/* Different domains on the two sides cannot share a domain column:
	 * then symbols meet on (image, symbol) and rows are labelled A|B. */
	o.cross_domain = (!v.domain_a) != (!v.domain_b) ||
			 (v.domain_a && v.domain_b && strcmp(v.domain_a, v.domain_b));
	char label[256];
	if (o.cross_domain) {
		snprintf(label, sizeof(label), "%s|%s", v.domain_a ? v.domain_a : "*",
			 v.domain_b ? v.domain_b : "*");
		o.domain_label = label;
	}

	if (v.user_only && o.kernel_only)
		return usage_error("diff", "--mode user and --kernel-only exclude each other");
	if (fg_only_opt && !flame)
		return usage_error("diff", "--absolute, --title, --min-width, --by-comm, --by-pid, "
				   "--by-tid and --no-comm need --flamegraph OUT");
	/* the flame graph needs the stacks; with -k it shows kernel-mode
	 * samples (the rows are kernel symbols either way) */
	/* Two views of one guest (sides on different domains) name its
	 * processes differently (a passive view leaves a kernel sample's
	 * process unnamed): their frames meet without the process level, as
	 * the text diff's rows do, unless a level is asked for. */
	if (o.cross_domain && !nroot)
		fo.root = FG_ROOT_NONE;
	fo.kernel_frames = o.kernel_only;
	struct profile_opts po = { .stacks = flame != NULL, .by_tid = flame && fo.root == FG_ROOT_TID,
				   .jobs = jobs };
	int mode = v.user_only ? PROFILE_MODE_USER : flame && o.kernel_only ? PROFILE_MODE_KERNEL : 0;
	struct profile *a = load(v.path_a, v.domain_a, mode, &fa_a.flt, &po);
	if (!a)
		return 1;
	struct profile *b = load(v.path_b, v.domain_b, mode, &fa_b.flt, &po);
	if (!b) {
		profile_free(a);
		return 1;
	}
	struct diff_result *r = diff_compute(a, b, &o);
	v.r = r;
	v.cross_domain = o.cross_domain;
	v.kernel_only = o.kernel_only;
	v.fold_irq = o.fold_irq;
	v.sort = o.sort;
	int rc = print_diff(format, &v);
	if (!r->total_a || !r->total_b)
		fprintf(stderr, "domprof diff: warning: no samples to compare in %s\n",
			!r->total_a ? v.path_a : v.path_b);
	if (!rc && flame && write_flame(flame, a, b, &v, &o, &fo))
		rc = 1;
	diff_result_free(r);
	profile_free(a);
	profile_free(b);
	if (rc == 1)
		return 1;
	if (rc) {
		fprintf(stderr, "domprof diff: writing the output failed: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
