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
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/inputs.h"
#include "analysis/options.h"
#include "analysis/profile.h"
#include "cli/blocks.h"
#include "commands.h"
#include "output/escape.h"
#include "output/diff_render.h"
#include "output/flamegraph.h"

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
		cli_error_text("diff", NULL, msg);
		return NULL;
	}
	struct profile *p = profile_load_files((const char *const *)in.paths, in.n, &flt, po, &err,
					       msg, sizeof(msg));
	inputs_free(&in);
	if (!p) {
		/* two files are read: name the one that failed */
		if (*msg && !strstr(msg, path)) {
			cli_error_text("diff", path, msg);
		} else {
			cli_error_text("diff", NULL, profile_load_reason(why, sizeof(why), path, err, msg));
		}
		return NULL;
	}
	for (size_t i = 0; i < p->nwarnings; i++) {
		cli_warn_text("diff", path, p->warnings[i]);
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
		cli_say("diff", "cannot create '%s': %s", out, strerror(errno));
		return 1;
	}
	int rc = ends_with(out, ".svg") ? flamegraph_diff_svg(f, a, b, fo) : flamegraph_diff_html(f, a, b, fo);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		cli_say("diff", "writing '%s' failed: %s", out, strerror(-rc));
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
			cli_say("diff", "similarity with interrupt-enable points: %.4f",
				v->r->similarity_all);
		cli_say("diff", "similarity: %.4f", v->r->similarity);
	}
	return rc;
}

struct diff_args {
	/* --time and --cpu for both sides; --time-a/--time-b for one */
	struct filter_args fa_a, fa_b;
	struct perf_guest_args guests;
	struct fg_root_args root;
	struct fg_picture_args pic;
	const char *format, *flame;
	struct diff_view v;
	struct diff_opts o;
	unsigned jobs;   /* -j; 0: chosen per file (jobs_for_size) */
	bool absolute;
};

static int set_domain(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct diff_args *da = ctx;
	da->v.domain_a = da->v.domain_b = value;
	return 0;
}

static int set_mode(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	/* one meaning in every command: user, kernel, or all */
	struct diff_args *da = ctx;
	da->v.user_only = !strcmp(value, "user");
	da->o.kernel_only = !strcmp(value, "kernel");
	if (!da->v.user_only && !da->o.kernel_only && strcmp(value, "all")) {
		snprintf(err, n, "--mode takes user, kernel or all, not '%s'", value);
		return -1;
	}
	return 0;
}

/* --time, --cpu: both sides; --time-a, --time-b: one */
static int set_window(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct diff_args *da = ctx;
	const char *what = !strcmp(name, "cpu") ? "cpu" : "time";
	if ((strcmp(name, "time-b") && filter_args_set(&da->fa_a, what, value, err, n)) ||
	    (strcmp(name, "time-a") && filter_args_set(&da->fa_b, what, value, err, n)))
		return -1;
	return 0;
}

static int set_sort(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct diff_opts *o = ctx;
	if (!strcmp(value, "diff"))
		o->sort = DIFF_SORT_DIFF;
	else if (!strcmp(value, "share"))
		o->sort = DIFF_SORT_SHARE;
	else {
		snprintf(err, n, "--sort takes diff or share, not '%s'", value);
		return -1;
	}
	return 0;
}

static int set_format(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	if (strcmp(value, "text") && strcmp(value, "csv") && strcmp(value, "json")) {
		snprintf(err, n, "unknown format '%s' (text, csv or json)", value);
		return -1;
	}
	*(const char **)ctx = value;
	return 0;
}

static const struct opt diff_opts_table[] = {
	OPT_FN(0, "domain", "NAME", set_domain, "compare only domain NAME, on both sides"),
	OPT_STR(0, "domain-a", "NAME", struct diff_args, v.domain_a, "only domain NAME of A"),
	OPT_STR(0, "domain-b", "NAME", struct diff_args, v.domain_b,
		"only domain NAME of B; when the two sides select different domains, symbols match on "
		"(image, symbol) across them (the passive view of vm1 against an active view of the same guest)"),
	{ .kind = OPT_CALL, .name = "mode", .arg = "user|kernel|all", .fn = set_mode, .values = "user kernel all",
	  .help = "compare only user-mode or only kernel-mode samples (default all), shares taken within "
		  "them, as in the other commands" },
	{ .kind = OPT_FLAG, .letter = 'k', .name = "kernel-only", .off = offsetof(struct diff_args, o.kernel_only),
	  .val = 1, .flags = OPT_ALIAS, .alias_of = "--mode kernel", .help = "" },
	OPT_BOOL(0, "fold-irq-enable", struct diff_args, o.fold_irq,
		 "set aside the samples at known interrupt-enable points (finish_task_switch, "
		 "_raw_spin_unlock_irq*, __do_softirq, default_idle, ...; see docs/merge-diff.md) on both "
		 "sides, re-normalise and print the similarity with and without them"),
	OPT_FN_AT('s', "sort", "diff|share", struct diff_args, o, set_sort,
		  "order rows by |diff| (default) or by the larger share"),
	OPT_FN_AT('t', "threshold", "PCT", struct diff_args, v.threshold, opt_percent,
		  "hide rows below PCT percent on both sides (the similarity always counts every row)"),
	{ .kind = OPT_CALL, .name = "format", .arg = "FMT", .off = offsetof(struct diff_args, format),
	  .fn = set_format, .values = "text csv json",
	  .help = "text (default), csv or json (see docs/merge-diff.md)" },
	OPT_FN(0, "time", "START,END", set_window, HELP_TIME " (both sides)"),
	OPT_FN(0, "cpu", "LIST", set_window, HELP_CPU " (both sides)"),
	OPT_FN(0, "time-a", "W", set_window,
	       "the time window of A alone: A and B may be one recording (diff --time-a 0,10 --time-b 10,20 F F)"),
	OPT_FN(0, "time-b", "W", set_window, "the time window of B alone"),
	OPT_INCLUDE(opts_jobs, struct diff_args, jobs),
	OPT_INCLUDE(opts_perf_guest, struct diff_args, guests),
	OPT_INCLUDE_ALL(opts_debuginfod),
	OPT_HEADING("Differential flame graph (the diff is printed as well):"),
	OPT_STR(0, "flamegraph", "OUT", struct diff_args, flame,
		"write the flame graph of B with each frame coloured by its change against A (red hotter, "
		"blue colder, hatched only in A and drawn from A), A and B values and the change in each "
		"tooltip; OUT.html is the interactive page (search, zoom), OUT.svg a standalone SVG. The "
		"domain options above choose each side's frames; the picture shows all samples (no "
		"--fold-irq-enable); with --mode kernel, kernel-mode samples and kernel frames only"),
	OPT_BOOL(0, "absolute", struct diff_args, absolute,
		 "the change in samples (B - A), not in shares of each side's total"),
	OPT_INCLUDE(opts_fg_picture, struct diff_args, pic),
	OPT_INCLUDE(opts_fg_root, struct diff_args, root),
	OPT_TABLE_END,
};

const struct cmd_spec spec_diff = {
	.name = "diff",
	.summary = "compare two profiles symbol by symbol",
	.synopsis = "[options] A B",
	.description =
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
		"perf.data (docs/perfdata.md).\n",
	.epilog =
		"The flame graph's process level is --by-comm unless given, and --no-comm when\n"
		"the two sides chose different domains, as the rows do. Its title defaults to\n"
		"\"Differential flame graph: A -> B\".\n"
		"\n"
		"See docs/merge-diff.md and docs/flamegraph.md.\n",
	.opts = diff_opts_table,
};

int cmd_diff(int argc, char **argv)
{
	struct diff_args da = { .format = "text" };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_diff, argc, argv, &da, ops, &nops);
	if (prc != OPT_CONTINUE) {
		perf_guest_args_release(&da.guests);
		return prc;
	}
	const char *format = da.format, *flame = da.flame;
	struct diff_view v = da.v;
	struct diff_opts o = da.o;
	unsigned jobs = da.jobs;
	struct fg_diff_opts fo = { .absolute = da.absolute, .title = da.pic.title,
				   .min_fraction = da.pic.min_pct / 100.0, .root = da.root.root };
	int nroot = da.root.given;
	bool fg_only_opt = da.absolute || da.pic.title || da.pic.min_pct > 0 || nroot;
	if (nops < 2) {
		perf_guest_args_release(&da.guests);
		return usage_error("diff", "needs two recordings, A and B");
	}
	if (nops > 2) {
		perf_guest_args_release(&da.guests);
		return usage_error("diff", "unexpected argument '%s'", ops[2]);
	}
	v.path_a = ops[0];
	v.path_b = ops[1];
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

	if ((v.user_only && o.kernel_only) || (fg_only_opt && !flame))
		perf_guest_args_release(&da.guests);
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
				   .jobs = jobs, .perf_guests = &da.guests };
	int mode = v.user_only ? PROFILE_MODE_USER : flame && o.kernel_only ? PROFILE_MODE_KERNEL : 0;
	struct profile *a = load(v.path_a, v.domain_a, mode, &da.fa_a.flt, &po);
	struct profile *b = a ? load(v.path_b, v.domain_b, mode, &da.fa_b.flt, &po) : NULL;
	perf_guest_args_release(&da.guests);  /* the readers copied them */
	if (!a)
		return 1;
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
		cli_warn("diff", "no samples to compare in %s",
			!r->total_a ? v.path_a : v.path_b);
	if (!rc && flame && write_flame(flame, a, b, &v, &o, &fo))
		rc = 1;
	diff_result_free(r);
	profile_free(a);
	profile_free(b);
	if (rc == 1)
		return 1;
	if (rc) {
		cli_say("diff", "writing the output failed: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
