/* SPDX-License-Identifier: MIT */
/*
 * Renderers of `domprof diff`: opreport-style text, CSV and JSON of a
 * diff_result (analysis/diff.h). They read only the result and the
 * description below and write to a caller-owned FILE. The CSV header
 * `domain,image,symbol,share_a,share_b,diff,status` and the JSON fields
 * are stable interfaces documented in docs/merge-diff.md: change them
 * only by adding fields.
 */
#ifndef DOMPROF_OUTPUT_DIFF_RENDER_H
#define DOMPROF_OUTPUT_DIFF_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/diff.h"

struct diff_view {
	const struct diff_result *r;
	const char *path_a, *path_b;
	const char *domain_a, *domain_b; /* NULL = all domains of that file */
	bool cross_domain, kernel_only, fold_irq;
	bool user_only;           /* --mode user: both sides filtered to user mode */
	enum diff_sort sort;
	double threshold;                /* percent: rows below it on both sides are hidden */
};

/* Each returns 0, or -EIO when writing failed. */
int diff_render_text(FILE *f, const struct diff_view *v);
int diff_render_csv(FILE *f, const struct diff_view *v);
int diff_render_json(FILE *f, const struct diff_view *v);

/* "both", "new" or "gone" (CSV and JSON); "", "+++" or "---" (text). */
const char *diff_status_word(enum diff_status s);
const char *diff_status_mark(enum diff_status s);

#endif
