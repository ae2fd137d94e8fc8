// SPDX-License-Identifier: MIT
/*
 * Text, CSV and JSON output of `domprof diff` (layouts in
 * docs/merge-diff.md). Shares are printed in percent with four decimals;
 * the similarity is a fraction with four decimals. The text form ends
 * with the line `similarity: 0.xxxx` so scripts can take the last line.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "output/diff_render.h"
#include "output/escape.h"

const char *diff_status_word(enum diff_status s)
{
	return s == DIFF_NEW ? "new" : s == DIFF_GONE ? "gone" : "both";
}

const char *diff_status_mark(enum diff_status s)
{
	return s == DIFF_NEW ? "+++" : s == DIFF_GONE ? "---" : "";
}

static bool shown(const struct diff_view *v, const struct diff_row *row)
{
	if (v->threshold <= 0)
		return true;
	return row->share_a * 100.0 >= v->threshold || row->share_b * 100.0 >= v->threshold;
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static void side_line(FILE *f, const char *tag, const char *path, const char *domain,
		      uint64_t counted, uint64_t folded)
{
	struct text_tmp t = { 0 };
	fprintf(f, "# %s: %s (domain %s, %" PRIu64 " samples compared", tag, text_tmp_safe(&t, path),
		domain ? text_tmp_safe(&t, domain) : "all", counted);
	text_tmp_free(&t);
	if (folded)
		fprintf(f, ", %" PRIu64 " set aside", folded);
	fputs(")\n", f);
}

static void text_rows(FILE *f, const struct diff_view *v, size_t from, size_t to, size_t *hidden,
		      int wdom, int wimg)
{
	const struct diff_result *r = v->r;
	for (size_t i = from; i < to; i++) {
		const struct diff_row *row = &r->rows[i];
		if (!shown(v, row)) {
			(*hidden)++;
			continue;
		}
		struct text_tmp t = { 0 };   /* names in their terminal-safe form */
		fprintf(f, "%-9" PRIu64 "  %-8.4f  %-9" PRIu64 "  %-8.4f  %+-9.4f  %-3s  %-*s  %-*s  %s\n",
			row->count_a, row->share_a * 100.0, row->count_b, row->share_b * 100.0,
			row->diff * 100.0, diff_status_mark(row->status), wdom,
			text_tmp_safe(&t, row->domain), wimg, text_tmp_safe(&t, row->image),
			text_tmp_safe(&t, row->symbol));
		text_tmp_free(&t);
	}
}

int diff_render_text(FILE *f, const struct diff_view *v)
{
	const struct diff_result *r = v->r;
	side_line(f, "A", v->path_a, v->domain_a, r->total_a, r->folded_a);
	side_line(f, "B", v->path_b, v->domain_b, r->total_b, r->folded_b);
	if (v->cross_domain) {
		struct text_tmp t = { 0 };
		fprintf(f, "# compared: %s symbols, per (image, symbol) across domains %s|%s; kernel images as %s\n",
			v->kernel_only ? "kernel" : v->user_only ? "user" : "all",
			v->domain_a ? text_tmp_safe(&t, v->domain_a) : "*",
			v->domain_b ? text_tmp_safe(&t, v->domain_b) : "*", DIFF_KERNEL_IMAGE);
		text_tmp_free(&t);
	}
	else
		fprintf(f, "# compared: %s symbols, per (domain, image, symbol); kernel images as %s\n",
			v->kernel_only ? "kernel" : v->user_only ? "user" : "all", DIFF_KERNEL_IMAGE);
	fprintf(f, "# shares: percent of each side's compared samples; sorted by %s\n",
		v->sort == DIFF_SORT_SHARE ? "share" : "|diff|");
	fprintf(f, "# +++ only in B, --- only in A\n");
	/* column widths from the rows shown, as opreport does */
	int wdom = 6, wimg = 10;
	for (size_t i = 0; i < r->nrows; i++) {
		if (!shown(v, &r->rows[i]))
			continue;
		int d = (int)text_safe_len(r->rows[i].domain), m = (int)text_safe_len(r->rows[i].image);
		wdom = d > wdom ? (d > 40 ? 40 : d) : wdom;
		wimg = m > wimg ? (m > 60 ? 60 : m) : wimg;
	}
	fprintf(f, "samples A  %% A       samples B  %% B       diff       st   %-*s  %-*s  symbol name\n",
		wdom, "domain", wimg, "image name");
	size_t unfolded = r->nrows - r->nfolded, hidden = 0;
	text_rows(f, v, 0, unfolded, &hidden, wdom, wimg);
	if (v->fold_irq) {
		fprintf(f, "# set aside, interrupt-enable points (percent of all compared samples):"
			   " A %" PRIu64 " (%.2f%%), B %" PRIu64 " (%.2f%%)\n",
			r->folded_a, pct(r->folded_a, r->total_a + r->folded_a),
			r->folded_b, pct(r->folded_b, r->total_b + r->folded_b));
		text_rows(f, v, unfolded, r->nrows, &hidden, wdom, wimg);
	}
	if (hidden)
		fprintf(f, "# %zu rows below %.2f%% on both sides not shown\n", hidden, v->threshold);
	if (v->fold_irq)
		fprintf(f, "similarity with interrupt-enable points: %.4f\n", r->similarity_all);
	fprintf(f, "similarity: %.4f\n", r->similarity);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

int diff_render_csv(FILE *f, const struct diff_view *v)
{
	const struct diff_result *r = v->r;
	fputs("domain,image,symbol,share_a,share_b,diff,status\n", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct diff_row *row = &r->rows[i];
		if (!shown(v, row))
			continue;
		csv_write_field(f, row->domain);
		fputc(',', f);
		csv_write_field(f, row->image);
		fputc(',', f);
		csv_write_field(f, row->symbol);
		fprintf(f, ",%.4f,%.4f,%.4f,%s\n", row->share_a * 100.0, row->share_b * 100.0,
			row->diff * 100.0, row->folded ? "folded" : diff_status_word(row->status));
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

/* null for a side without a domain filter, else the JSON string */
static void json_str(FILE *f, const char *s)
{
	if (s)
		json_write_str(f, s, 0);
	else
		fputs("null", f);
}

static void json_side(FILE *f, const char *path, const char *domain, uint64_t counted, uint64_t folded)
{
	fputs("{\"path\": ", f);
	json_str(f, path);
	fputs(", \"domain\": ", f);
	json_str(f, domain);
	fprintf(f, ", \"samples\": %" PRIu64 ", \"set_aside\": %" PRIu64 "}", counted, folded);
}

int diff_render_json(FILE *f, const struct diff_view *v)
{
	const struct diff_result *r = v->r;
	fputs("{\n  \"format\": \"domprof-diff\",\n  \"version\": 1,\n  \"a\": ", f);
	json_side(f, v->path_a, v->domain_a, r->total_a, r->folded_a);
	fputs(",\n  \"b\": ", f);
	json_side(f, v->path_b, v->domain_b, r->total_b, r->folded_b);
	fprintf(f, ",\n  \"cross_domain\": %s,\n  \"kernel_only\": %s,\n  \"fold_irq_enable\": %s,\n"
		   "  \"sort\": \"%s\",\n  \"threshold\": %.4f,\n"
		   "  \"similarity\": %.6f,\n  \"similarity_all\": %.6f,\n  \"rows\": [",
		v->cross_domain ? "true" : "false", v->kernel_only ? "true" : "false",
		v->fold_irq ? "true" : "false", v->sort == DIFF_SORT_SHARE ? "share" : "diff",
		v->threshold, r->similarity, r->similarity_all);
	bool first = true;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct diff_row *row = &r->rows[i];
		if (!shown(v, row))
			continue;
		fputs(first ? "\n    {\"domain\": " : ",\n    {\"domain\": ", f);
		first = false;
		json_str(f, row->domain);
		fputs(", \"image\": ", f);
		json_str(f, row->image);
		fputs(", \"symbol\": ", f);
		json_str(f, row->symbol);
		fprintf(f, ", \"samples_a\": %" PRIu64 ", \"samples_b\": %" PRIu64
			   ", \"share_a\": %.4f, \"share_b\": %.4f, \"diff\": %.4f"
			   ", \"status\": \"%s\", \"folded\": %s}",
			row->count_a, row->count_b, row->share_a * 100.0, row->share_b * 100.0,
			row->diff * 100.0, diff_status_word(row->status), row->folded ? "true" : "false");
	}
	fputs(first ? "]\n}\n" : "\n  ]\n}\n", f);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
