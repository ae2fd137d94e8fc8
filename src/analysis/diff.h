/* SPDX-License-Identifier: MIT */
/*
 * Comparing two aggregated profiles symbol by symbol (`domprof diff`).
 * Pure functions over two struct profile (analysis/profile.h): they read
 * only profile.syms (domain_name, image, symbol, kernel, self) and never
 * load files, print or exit, so tests can feed synthetic profiles.
 *
 * The unit of comparison is a key (domain, image, symbol):
 *  - image: every kernel-mode image of a domain ([kernel.kallsyms] of a
 *    host or an active guest, [guest.kernel] of a passive guest, kernel
 *    modules such as [ext4]) compares as one image named "[kernel]", so
 *    the passive and the active view of one guest kernel meet;
 *  - domain: the domain name, unless opts.cross_domain, when the domain
 *    is left out of the key (comparing domain vm1 of A with domain
 *    vm1-active of B) and rows carry opts.domain_label instead.
 * Shares are fractions (0..1) of each side's counted samples: the
 * samples of the rows kept by the filters (kernel_only), so a filtered
 * comparison is re-normalised within the filtered set.
 *
 * similarity = sum over keys of min(share_a, share_b): 1 for identical
 * distributions, 0 for disjoint ones.
 *
 * fold_irq: samples at known interrupt-enable points (diff_is_irq_enable)
 * are set aside on both sides, the shares of the remaining rows are
 * re-normalised over what remains, and the similarity is reported both
 * ways (similarity over the remaining rows, similarity_all over all).
 * Why: in a guest without a PMU a cpu-clock timer cannot fire while
 * interrupts are off, so an in-guest (active) view piles those samples
 * up at the point where interrupts come back on; a passive view sees the
 * same work where it happened. Setting the points aside on both sides
 * (not only on the active one) keeps their true, small share in the
 * passive view from counting as a mismatch.
 *
 * Ownership: a diff_result owns its rows; row strings are borrowed from
 * the two profiles (or are static), so free the result before them.
 */
#ifndef DOMPROF_ANALYSIS_DIFF_H
#define DOMPROF_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/profile.h"

#define DIFF_KERNEL_IMAGE "[kernel]"

enum diff_status {
	DIFF_BOTH = 0,   /* in A and in B */
	DIFF_NEW = 1,    /* only in B: "+++" */
	DIFF_GONE = 2,   /* only in A: "---" */
};

enum diff_sort {
	DIFF_SORT_DIFF = 0,  /* |share_b - share_a| desc, then max share desc */
	DIFF_SORT_SHARE = 1, /* max(share_a, share_b) desc, then |diff| desc */
};

struct diff_opts {
	bool cross_domain;        /* key on (image, symbol) only */
	const char *domain_label; /* domain column with cross_domain ("vm1|vm1-active") */
	bool kernel_only;         /* only kernel-mode symbols */
	bool fold_irq;            /* set interrupt-enable points aside */
	enum diff_sort sort;
};

struct diff_row {
	const char *domain;       /* domain name, or opts.domain_label */
	const char *image;        /* normalised image name */
	const char *symbol;
	uint64_t count_a, count_b;
	double share_a, share_b;  /* fractions; of the counted samples, after fold */
	double diff;              /* share_b - share_a */
	enum diff_status status;
	bool folded;              /* set aside by fold_irq (shares then of all
				     counted samples, before folding) */
};

struct diff_result {
	struct diff_row *rows;    /* unfolded rows in sort order, then folded rows */
	size_t nrows;
	size_t nfolded;           /* the last nfolded rows are folded ones */
	uint64_t total_a, total_b;        /* counted samples (after filters and fold) */
	uint64_t folded_a, folded_b;      /* samples set aside by fold_irq */
	double similarity;                /* over the unfolded rows */
	double similarity_all;            /* with folded rows in (== similarity without fold_irq) */
};

/* Compare a with b. Never NULL (allocation aborts); an empty side gives
 * shares of 0 and similarity 0. */
struct diff_result *diff_compute(const struct profile *a, const struct profile *b,
				 const struct diff_opts *o);
void diff_result_free(struct diff_result *r);

/* The image name used in keys: DIFF_KERNEL_IMAGE for kernel images. */
const char *diff_norm_image(const char *image, bool kernel);

/* True when symbol is one of the known interrupt-enable points (list in
 * diff.c and docs/merge-diff.md), compared without compiler suffixes
 * (".isra.0", ".constprop.3", ".part.1", ".cold"). */
bool diff_is_irq_enable(const char *symbol);

/* The list itself, NULL-terminated, for documentation and --help. */
extern const char *const diff_irq_enable_points[];

#endif
