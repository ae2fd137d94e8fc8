// SPDX-License-Identifier: MIT
/*
 * The text report, laid out like OProfile's opreport: a header (event,
 * rate, totals, lost samples, domains, how a domain's call chains were
 * unwound when its counters say, warnings), then either the image
 * summary (applications with their dependent images indented below), the
 * symbol table of `-l`, or the call graph of `-g` (opreport -c: callers
 * above each entry, the entry, its [self] line and callees below).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/escape.h"
#include "output/report.h"
#include "util/fmt.h"
#include "util/xalloc.h"

double report_lost_pct(const struct profile *p)
{
	/* in doubles: a crafted lost count near 2^64 must not wrap the sum */
	double all = (double)p->total_samples + (double)p->lost;
	return all > 0 ? 100.0 * (double)p->lost / all : 0.0;
}

static const char *const lost_names[DP_LOST_SOURCES] = {
	"kernel ring overflow", "kernel throttling", "VM sampler missed ticks",
	"agent", "writer",
};

/* ---- the unwind summary of a domain's counters ---- */

#define STOP_PREFIX "unwind.stop."

/* Stop reasons that mean the whole chain was read: the walk reached the
 * stack's end, crossed into user space, or hit the frame-pointer chain's
 * terminating zero. Every other reason cut the chain short. */
static bool stop_complete(const char *reason)
{
	return !strcmp(reason, "end") || !strcmp(reason, "user") || !strcmp(reason, "fp-end");
}

static int cmp_counter_desc(const void *a, const void *b)
{
	const struct profile_counter *x = *(const struct profile_counter *const *)a;
	const struct profile_counter *y = *(const struct profile_counter *const *)b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* " name P%" for each of v[0..n), largest first, separated by sep. */
static void stop_list(FILE *f, const struct profile_counter **v, size_t n, double chains)
{
	qsort(v, n, sizeof(*v), cmp_counter_desc);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		text_put(f, v[i]->name + strlen(STOP_PREFIX));
		fprintf(f, " %.1f%%", 100.0 * (double)v[i]->value / chains);
	}
}

/* "# vm1: N call chains unwound from outside, P% complete (end P%, ...);
 * cut: undefined P%, ..." when the domain's counters say it unwound any
 * (unwind.chains > 0): the shares of unwind.stop.REASON in the chains,
 * largest first, reasons at 0 left out. Any other counter is not shown
 * here (`domprof info` lists them all). */
static void unwind_line(FILE *f, const struct profile *p, const struct profile_domain *d)
{
	uint64_t chains = profile_counter(p, d->id, "unwind.chains");
	if (!chains)
		return;
	const struct profile_counter *c;
	size_t n = profile_counters(p, d->id, &c);
	const struct profile_counter **done = malloc((n + 1) * sizeof(*done));
	const struct profile_counter **cut = malloc((n + 1) * sizeof(*cut));
	if (!done || !cut) {
		free(done);
		free(cut);
		return;
	}
	size_t nd = 0, nc = 0;
	double complete = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(c[i].name, STOP_PREFIX, strlen(STOP_PREFIX)) || !c[i].value ||
		    !c[i].name[strlen(STOP_PREFIX)])
			continue;
		if (stop_complete(c[i].name + strlen(STOP_PREFIX))) {
			done[nd++] = &c[i];
			complete += (double)c[i].value; /* doubles: crafted sums cannot wrap */
		} else {
			cut[nc++] = &c[i];
		}
	}
	fputs("# ", f);
	text_put(f, d->name);
	fprintf(f, ": %" PRIu64 " call chains unwound from outside, %.1f%% complete",
		chains, 100.0 * complete / (double)chains);
	if (nd) {
		fputs(" (", f);
		stop_list(f, done, nd, (double)chains);
		fputc(')', f);
	}
	if (nc) {
		fputs("; cut: ", f);
		stop_list(f, cut, nc, (double)chains);
	}
	fputc('\n', f);
	free(done);
	free(cut);
}

void report_dwarf_line(FILE *f, const struct profile *p, const char *prefix)
{
	if (!p->dwarf.samples)
		return;
	const struct sym_unwind_stats *w = &p->dwarf.walks;
	fprintf(f, "%sdwarf unwinding: %" PRIu64 " of %" PRIu64 " user stacks unwound "
		"(%" PRIu64 " to the outermost frame), %" PRIu64 " kept the frame-pointer chain\n",
		prefix, p->dwarf.unwound, p->dwarf.samples, p->dwarf.complete, p->dwarf.kept_fp);
	fprintf(f, "%s  walks ended: %" PRIu64 " outermost, %" PRIu64 " no FDE for a pc, %" PRIu64
		" stopped (stack or CFI), %" PRIu64 " depth bound, %" PRIu64 " ip in no readable"
		" image; %" PRIu64 " by the quick step, %" PRIu64 " from the cache\n",
		prefix, w->complete, w->no_fde, w->stopped, w->depth_cut, w->failed, w->quick,
		w->cached);
}

/* Every string from the recording (or a file name) goes out in its
 * terminal-safe form (escape.h). */
static void header(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	struct text_tmp t = { 0 };
	if (v->path)
		fprintf(f, "# file: %s\n", text_tmp_safe(&t, v->path));
	if (p->header.source)  /* a perf.data read in place of a recording */
		fprintf(f, "# format: %s\n", text_tmp_safe(&t, p->header.source));
	if (p->header.hostname && *p->header.hostname)
		fprintf(f, "# host: %s, Linux %s, %u CPUs, %s\n", text_tmp_safe(&t, p->header.hostname),
			p->header.release ? text_tmp_safe(&t, p->header.release) : "?", p->header.ncpus,
			p->header.cpu_desc ? text_tmp_safe(&t, p->header.cpu_desc) : "?");
	if (p->header.cmdline && *p->header.cmdline)
		fprintf(f, "# command: %s\n", text_tmp_safe(&t, p->header.cmdline));
	for (size_t i = 0; i < p->nevents; i++) {
		const struct profile_event *e = &p->events[i];
		if (e->freq)
			fprintf(f, "# event: %s, sampled at %" PRIu64 " Hz", text_tmp_safe(&t, e->name), e->period);
		else
			fprintf(f, "# event: %s, sample period %" PRIu64, text_tmp_safe(&t, e->name), e->period);
		/* a perf.data: its samples per event, as perf's "# Samples: N of event" */
		if (p->header.source)
			fprintf(f, ", %" PRIu64 " samples", e->samples);
		fprintf(f, "\n");
	}
	if (!p->nevents)
		fprintf(f, "# event: (none recorded)\n");
	fprintf(f, "# samples: %" PRIu64 " total", p->total_samples);
	if (p->matched != p->total_samples || v->filter_desc)
		fprintf(f, ", %" PRIu64 " shown (filter: %s)", p->matched,
			v->filter_desc ? text_tmp_safe(&t, v->filter_desc) : "-");
	if (p->lost == UINT64_MAX) /* no share of a count that is not plausible (see warnings) */
		fprintf(f, "\n# lost samples: %" PRIu64 " or more (not plausible)\n", p->lost);
	else
		fprintf(f, "\n# lost samples: %" PRIu64 " (%.4f%%)\n", p->lost, report_lost_pct(p));
	if (p->lost != UINT64_MAX && report_lost_pct(p) > REPORT_LOST_WARN_PCT) {
		fprintf(f, "# WARNING: %" PRIu64 " samples were lost (%.2f%%):", p->lost,
			report_lost_pct(p));
		const char *sep = " ";
		for (unsigned i = 0; i < DP_LOST_SOURCES; i++)
			if (p->lost_by_source[i]) {
				fprintf(f, "%s%" PRIu64 " %s", sep, p->lost_by_source[i], lost_names[i]);
				sep = ", ";
			}
		fprintf(f, "; shares below are of the samples that were kept\n");
	}
	fprintf(f, "# domains:\n");
	for (size_t i = 0; i < p->ndomains; i++) {
		const struct profile_domain *d = &p->domains[i];
		fprintf(f, "#   %-10s id %-3u %-8s address %s, symbols %s", text_tmp_safe(&t, d->name),
			d->id, dp_domain_kind_name(d->kind), *d->address ? text_tmp_safe(&t, d->address) : "-",
			*d->symsrc ? text_tmp_safe(&t, d->symsrc) : "-");
		if (d->kaslr_offset)
			fprintf(f, ", kaslr 0x%" PRIx64, d->kaslr_offset);
		fprintf(f, ", %" PRIu64 " samples\n", d->samples);
	}
	for (size_t i = 0; i < p->ndomains; i++)
		unwind_line(f, p, &p->domains[i]);
	report_dwarf_line(f, p, "# ");
	for (size_t i = 0; i < p->nwarnings; i++)
		fprintf(f, "# WARNING: %s\n", text_tmp_safe(&t, p->warnings[i]));
	if (!p->matched)
		fprintf(f, "# no samples%s\n", p->total_samples ? " match the filter" : " in this recording");
	text_tmp_free(&t);
}

struct widths {
	int dom, img, pid, comm, line;
};

static int imax(int a, int b)
{
	return a > b ? a : b;
}

static void sym_widths(const struct profile *p, const uint32_t *ix, size_t n, struct widths *w)
{
	w->dom = 6;
	w->img = 10;
	w->pid = 5;
	w->comm = 7;
	w->line = 12;
	for (size_t i = 0; i < n; i++) {
		const struct profile_symbol *y = &p->syms[ix[i]];
		w->dom = imax(w->dom, (int)text_safe_len(y->domain_name));
		w->img = imax(w->img, (int)text_safe_len(y->image));
		if (y->comm)
			w->comm = imax(w->comm, (int)text_safe_len(y->comm));
		char num[FMT_NUM_MAX];
		w->pid = imax(w->pid, (int)fmt_u64(num, y->pid));
		if (y->srcline)
			w->line = imax(w->line, (int)text_safe_len(y->srcline));
	}
	if (w->line > 40)
		w->line = 40;
	if (w->img > 40)
		w->img = 40;
	if (w->comm > 20)
		w->comm = 20;
}

/* The hot lines (one per symbol, caller and callee: a million in a
 * large call graph) are built in a buffer with util/fmt.h and written
 * whole: fprintf's parsing and conversions were half the time of a
 * `report -g`. The bytes are those of the printf formats named beside
 * each call. */
struct line {
	FILE *f;
	char *b;
	size_t n, cap;
};

static void ln_put(struct line *l, const char *s, size_t n)
{
	if (l->n + n + 2 * FMT_NUM_MAX > l->cap)
		xgrow((void **)&l->b, &l->cap, l->n + n + 2 * FMT_NUM_MAX, 1);
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void ln_str(struct line *l, const char *s)
{
	ln_put(l, s, strlen(s));
}

/* "%-*s" */
static void ln_pad(struct line *l, const char *s, int width)
{
	size_t n = strlen(s);
	ln_put(l, s, n);
	if ((long)width > (long)n) {
		size_t k = (size_t)width - n;
		if (l->n + k + 2 * FMT_NUM_MAX > l->cap)
			xgrow((void **)&l->b, &l->cap, l->n + k + 2 * FMT_NUM_MAX, 1);
		memset(l->b + l->n, ' ', k);
		l->n += k;
	}
}

/* A name from the recording in its terminal-safe form (escape.h),
 * padded as ln_pad; width counts the safe form's bytes. */
static void ln_name_pad(struct line *l, const char *s, int width)
{
	if (text_is_safe(s)) {
		ln_pad(l, s, width);
		return;
	}
	char *e = text_escape(s);
	ln_pad(l, e, width);
	free(e);
}

static void ln_name(struct line *l, const char *s)
{
	ln_name_pad(l, s, 0);
}

/* fmt_* output padded with spaces to width ("%-*..."); the buffer keeps
 * 2 * FMT_NUM_MAX bytes free after every put */
static void ln_num_pad(struct line *l, size_t k, int width)
{
	l->n += k;
	for (; (long)k < (long)width; k++)
		l->b[l->n++] = ' ';
	if (l->n + 2 * FMT_NUM_MAX > l->cap)
		xgrow((void **)&l->b, &l->cap, l->n + 2 * FMT_NUM_MAX, 1);
}

/* "%-8" PRIu64 " %-8.4f " */
static void ln_count_pct(struct line *l, uint64_t count, double pct)
{
	ln_num_pad(l, fmt_u64(l->b + l->n, count), 8);
	ln_put(l, " ", 1);
	ln_num_pad(l, fmt_fixed(l->b + l->n, pct, 4), 8);
	ln_put(l, " ", 1);
}

static void ln_end(struct line *l)
{
	fwrite_unlocked(l->b, 1, l->n, l->f);
	l->n = 0;
}

static void line_init(struct line *l, FILE *f)
{
	l->f = f;
	l->n = 0;
	l->cap = 256;
	l->b = xmalloc(l->cap);
}

/* The symbol's columns and suffix after what l holds, and the line out. */
static void sym_cols(struct line *l, const struct report_view *v, const struct widths *w,
		     const struct profile_symbol *y, const char *suffix)
{
	ln_name_pad(l, y->domain_name, w->dom);        /* "%-*s  " */
	ln_put(l, "  ", 2);
	if (v->by_process) {                           /* "%-*" PRIu32 "  %-*s  " */
		ln_num_pad(l, fmt_u64(l->b + l->n, y->pid), w->pid);
		ln_put(l, "  ", 2);
		ln_name_pad(l, y->comm ? y->comm : "-", w->comm);
		ln_put(l, "  ", 2);
	}
	if (v->srcline) {                              /* "%-*s  " */
		ln_name_pad(l, y->srcline ? y->srcline : "-", w->line);
		ln_put(l, "  ", 2);
	}
	ln_name_pad(l, y->image, w->img);              /* "%-*s  %s" */
	ln_put(l, "  ", 2);
	ln_name(l, y->symbol);
	if (y->inlined_into) {                         /* " (inlined into %s)" */
		ln_str(l, " (inlined into ");
		ln_name(l, y->inlined_into);
		ln_put(l, ")", 1);
	}
	ln_str(l, suffix);                             /* "%s\n" */
	ln_put(l, "\n", 1);
	ln_end(l);
}

static void sym_head(FILE *f, const struct report_view *v, const struct widths *w, int pad)
{
	fprintf(f, "samples  %%        %*s%-*s  ", pad, "", w->dom, "domain");
	if (v->by_process)
		fprintf(f, "%-*s  %-*s  ", w->pid, "pid", w->comm, "command");
	if (v->srcline)
		fprintf(f, "%-*s  ", w->line, "source line");
	fprintf(f, "%-*s  %s\n", w->img, "image name", "symbol name");
}

static void symbols(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	size_t n;
	uint32_t *ix = profile_rows(p, v->keys, v->nkeys, v->threshold, &n);
	struct widths w;
	sym_widths(p, ix, n, &w);
	sym_head(f, v, &w, 0);
	struct line l;
	line_init(&l, f);
	for (size_t i = 0; i < n; i++) {
		const struct profile_symbol *y = &p->syms[ix[i]];
		ln_count_pct(&l, y->self, profile_pct(p, y->self));
		sym_cols(&l, v, &w, y, "");
	}
	free(l.b);
	free(ix);
}

static const char *bar = "-------------------------------------------------------------------------------\n";

static void callgraph(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	size_t n;
	uint32_t *ix = profile_cg_entries(p, v->threshold, &n);
	struct widths w;
	/* widths over every symbol that may be printed (entries, callers, callees) */
	uint32_t *all = malloc((p->nsyms ? p->nsyms : 1) * sizeof(*all));
	if (all) {
		for (size_t i = 0; i < p->nsyms; i++)
			all[i] = (uint32_t)i;
		sym_widths(p, all, p->nsyms, &w);
		free(all);
	} else {
		sym_widths(p, ix, n, &w);
	}
	fprintf(f, "# call graph: callers above each entry, callees below; the entry line\n"
		   "# shows self samples (%% of all) and [total] with callees; caller, [self]\n"
		   "# and callee lines show samples and %% of the entry's total.\n");
	if (!p->has_callchains)
		fprintf(f, "# WARNING: the recording has no call chains (record with -g)\n");
	sym_head(f, v, &w, 2);
	struct line l;
	line_init(&l, f);
	for (size_t i = 0; i < n; i++) {
		uint32_t s = ix[i];
		const struct profile_symbol *y = &p->syms[s];
		double tot = y->total ? (double)y->total : 1.0;
		fputs(bar, f);
		const struct profile_edge *const *e;
		size_t ne = profile_callers(p, s, &e);
		for (size_t j = 0; j < ne; j++) {
			const struct profile_symbol *c = &p->syms[e[j]->caller];
			ln_put(&l, "  ", 2);
			ln_count_pct(&l, e[j]->count, 100.0 * (double)e[j]->count / tot);
			sym_cols(&l, v, &w, c, "");
		}
		/* "  [total %" PRIu64 ", %.2f%%]" */
		char suf[2 * FMT_NUM_MAX + 16] = "  [total ";
		size_t sn = strlen(suf);
		sn += fmt_u64(suf + sn, y->total);
		suf[sn++] = ',';
		suf[sn++] = ' ';
		sn += fmt_fixed(suf + sn, profile_pct(p, y->total), 2);
		memcpy(suf + sn, "%]", 3);
		ln_count_pct(&l, y->self, profile_pct(p, y->self));  /* then two more spaces */
		ln_put(&l, "  ", 2);
		sym_cols(&l, v, &w, y, suf);
		ln_put(&l, "  ", 2);
		ln_count_pct(&l, y->self, 100.0 * (double)y->self / tot);
		sym_cols(&l, v, &w, y, " [self]");
		ne = profile_callees(p, s, &e);
		for (size_t j = 0; j < ne; j++) {
			const struct profile_symbol *c = &p->syms[e[j]->callee];
			ln_put(&l, "  ", 2);
			ln_count_pct(&l, e[j]->count, 100.0 * (double)e[j]->count / tot);
			sym_cols(&l, v, &w, c, "");
		}
	}
	if (n)
		fputs(bar, f);
	free(l.b);
	free(ix);
}

/* opreport's default view: each application (process command) of each
 * domain with its total and share, and under it the images its samples
 * fell in (the executable, libraries, the kernel) with their share of the
 * application. images[] is already grouped by application. */
static void images(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	int dw = 6, iw = 10;
	for (size_t i = 0; i < p->nimages; i++) {
		dw = imax(dw, (int)text_safe_len(p->images[i].domain_name));
		iw = imax(iw, (int)text_safe_len(p->images[i].app));
		iw = imax(iw, (int)text_safe_len(p->images[i].image) + 2);
	}
	fprintf(f, "samples  %%        %-*s  %s\n", dw, "domain", "application / image name (dependent images: % of the application)");
	size_t i = 0;
	while (i < p->nimages) {
		size_t j = i;
		uint64_t app = 0;
		while (j < p->nimages && p->images[j].domain == p->images[i].domain &&
		       !strcmp(p->images[j].app, p->images[i].app)) {
			app += p->images[j].samples;
			j++;
		}
		if (profile_pct(p, app) >= v->threshold) {
			struct text_tmp t = { 0 };
			fprintf(f, "%-8" PRIu64 " %-8.4f %-*s  %s\n", app, profile_pct(p, app), dw,
				text_tmp_safe(&t, p->images[i].domain_name),
				text_tmp_safe(&t, p->images[i].app));
			for (size_t k = i; k < j; k++)
				fprintf(f, "  %-8" PRIu64 " %-8.4f %-*s  %s\n", p->images[k].samples,
					app ? 100.0 * (double)p->images[k].samples / (double)app : 0.0,
					dw, "", text_tmp_safe(&t, p->images[k].image));
			text_tmp_free(&t);
		}
		i = j;
	}
}

/* --timeline: one row per bucket, one column per domain, and a bar of
 * the bucket's share of the busiest bucket */
static void timeline(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	fprintf(f, "# timeline: %.3f s buckets from each domain's first sample%s\n",
		(double)p->timeline.bucket_ns / 1e9,
		p->timeline.bucket_widened ? " (widened: at most 10000 buckets)" : "");
	if (!p->timeline.nrows)
		return;
	uint64_t top = 1;
	for (size_t k = 0; k < p->timeline.nbuckets; k++) {
		uint64_t t = 0;
		for (size_t i = 0; i < p->timeline.nrows; i++)
			t += p->timeline.rows[i].counts[k];
		if (t > top)
			top = t;
	}
	fprintf(f, "%-10s", "time_s");
	for (size_t i = 0; i < p->timeline.nrows; i++) {
		char *e = text_escape(p->timeline.rows[i].name);
		fprintf(f, " %10.10s", e);
		free(e);
	}
	fputs("\n", f);
	for (size_t k = 0; k < p->timeline.nbuckets; k++) {
		uint64_t t = 0;
		fprintf(f, "%-10.3f", (double)k * (double)p->timeline.bucket_ns / 1e9);
		for (size_t i = 0; i < p->timeline.nrows; i++) {
			fprintf(f, " %10" PRIu64, p->timeline.rows[i].counts[k]);
			t += p->timeline.rows[i].counts[k];
		}
		int w = (int)(30 * t / top);
		fprintf(f, "  %.*s\n", w, "##############################");
	}
}

int report_text(FILE *f, const struct report_view *v)
{
	header(f, v);
	if (v->timeline)
		timeline(f, v);
	else if (v->callgraph)
		callgraph(f, v);
	else if (v->symbols)
		symbols(f, v);
	else
		images(f, v);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
