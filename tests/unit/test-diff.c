// SPDX-License-Identifier: MIT
/*
 * Unit tests of analysis/diff.c with synthetic profiles (struct profile
 * built by hand, no file): shares, +++/---, similarity of identical (1)
 * and disjoint (0) profiles, known partial overlaps, kernel image
 * normalisation across domains, kernel-only re-normalisation, the
 * interrupt-enable fold and the sort orders.
 */
#include <math.h>
#include <stdlib.h>

#include "analysis/diff.h"
#include "unit.h"

#define NEAR(x, y) (fabs((x) - (y)) < 1e-9)

struct spec {
	const char *domain, *image, *symbol;
	bool kernel;
	uint64_t self;
};

/* A profile holding only symbol rows: all that diff reads. */
static struct profile *mk(const struct spec *s, size_t n)
{
	struct profile *p = calloc(1, sizeof(*p));
	p->syms = calloc(n ? n : 1, sizeof(*p->syms));
	p->nsyms = n;
	for (size_t i = 0; i < n; i++) {
		p->syms[i].domain_name = s[i].domain;
		p->syms[i].image = s[i].image;
		p->syms[i].image_path = s[i].image;
		p->syms[i].symbol = s[i].symbol;
		p->syms[i].known = true;
		p->syms[i].kernel = s[i].kernel;
		p->syms[i].self = s[i].self;
		p->syms[i].total = s[i].self;
		p->matched += s[i].self;
		p->total_samples += s[i].self;
	}
	return p;
}

static void unmk(struct profile *p)
{
	free(p->syms);
	free(p);
}

static const struct diff_row *find(const struct diff_result *r, const char *image, const char *sym)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].image, image) && !strcmp(r->rows[i].symbol, sym))
			return &r->rows[i];
	return NULL;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_identical_and_disjoint(void)
{
	struct spec s[] = {
		{ "host", "tf", "func_a", false, 500 },
		{ "host", "tf", "func_b", false, 300 },
		{ "host", "[kernel.kallsyms]", "clear_user", true, 200 },
	};
	struct profile *a = mk(s, N(s)), *b = mk(s, N(s));
	struct diff_result *r = diff_compute(a, b, NULL);
	CHECK(r->nrows == 3);
	CHECK(NEAR(r->similarity, 1.0));
	CHECK(NEAR(r->similarity_all, 1.0));
	for (size_t i = 0; i < r->nrows; i++) {
		CHECK(r->rows[i].status == DIFF_BOTH);
		CHECK(NEAR(r->rows[i].diff, 0.0));
	}
	const struct diff_row *x = find(r, "tf", "func_a");
	CHECK(x && NEAR(x->share_a, 0.5) && NEAR(x->share_b, 0.5));
	x = find(r, DIFF_KERNEL_IMAGE, "clear_user");
	CHECK(x && x->count_a == 200 && NEAR(x->share_b, 0.2));
	diff_result_free(r);

	/* same shares with different totals: still identical */
	struct spec s2[] = {
		{ "host", "tf", "func_a", false, 50 },
		{ "host", "tf", "func_b", false, 30 },
		{ "host", "[kernel.kallsyms]", "clear_user", true, 20 },
	};
	struct profile *c = mk(s2, N(s2));
	r = diff_compute(a, c, NULL);
	CHECK(NEAR(r->similarity, 1.0));
	diff_result_free(r);

	struct spec d[] = {
		{ "host", "other", "x", false, 10 },
		{ "host", "other", "y", false, 30 },
	};
	struct profile *e = mk(d, N(d));
	r = diff_compute(a, e, NULL);
	CHECK(r->nrows == 5);
	CHECK(NEAR(r->similarity, 0.0));
	x = find(r, "other", "y");
	CHECK(x && x->status == DIFF_NEW && NEAR(x->share_a, 0) && NEAR(x->share_b, 0.75) && NEAR(x->diff, 0.75));
	x = find(r, "tf", "func_a");
	CHECK(x && x->status == DIFF_GONE && NEAR(x->share_b, 0) && NEAR(x->diff, -0.5));
	/* default order: |diff| desc */
	CHECK(!strcmp(r->rows[0].symbol, "y"));
	CHECK(!strcmp(r->rows[1].symbol, "func_a"));
	diff_result_free(r);

	/* an empty side */
	struct profile *z = mk(NULL, 0);
	r = diff_compute(a, z, NULL);
	CHECK(NEAR(r->similarity, 0.0) && r->total_b == 0 && r->total_a == 1000);
	diff_result_free(r);
	r = diff_compute(z, z, NULL);
	CHECK(r->nrows == 0 && NEAR(r->similarity, 0.0));
	diff_result_free(r);
	unmk(a); unmk(b); unmk(c); unmk(e); unmk(z);
}

static void test_partial(void)
{
	/* A: f 60, g 40; B: f 30, g 20, h 50 -> min(.6,.3)+min(.4,.2) = 0.5 */
	struct spec sa[] = { { "host", "p", "f", false, 60 }, { "host", "p", "g", false, 40 } };
	struct spec sb[] = { { "host", "p", "f", false, 30 }, { "host", "p", "g", false, 20 },
			     { "host", "p", "h", false, 50 } };
	struct profile *a = mk(sa, N(sa)), *b = mk(sb, N(sb));
	struct diff_result *r = diff_compute(a, b, NULL);
	CHECK(NEAR(r->similarity, 0.5));
	CHECK(r->total_a == 100 && r->total_b == 100);
	const struct diff_row *x = find(r, "p", "f");
	CHECK(x && NEAR(x->diff, -0.3) && x->status == DIFF_BOTH);
	CHECK(find(r, "p", "h")->status == DIFF_NEW);
	/* order by diff: h (+.5), f (-.3), g (-.2) */
	CHECK(!strcmp(r->rows[0].symbol, "h") && !strcmp(r->rows[1].symbol, "f") &&
	      !strcmp(r->rows[2].symbol, "g"));
	diff_result_free(r);
	struct diff_opts o = { .sort = DIFF_SORT_SHARE };
	r = diff_compute(a, b, &o);
	/* order by max share: f (.6), h (.5), g (.4) */
	CHECK(!strcmp(r->rows[0].symbol, "f") && !strcmp(r->rows[1].symbol, "h") &&
	      !strcmp(r->rows[2].symbol, "g"));
	diff_result_free(r);
	unmk(a); unmk(b);
}

static void test_domains(void)
{
	/* The same symbol in two domains is two rows unless cross_domain. */
	struct spec sa[] = { { "vm1", "[guest.kernel]", "copy_user_generic_string", true, 70 },
			     { "vm1", "[guest.kernel]", "__schedule", true, 30 } };
	struct spec sb[] = { { "vm1-active", "[kernel.kallsyms]", "copy_user_generic_string", true, 35 },
			     { "vm1-active", "[kernel.kallsyms]", "__schedule", true, 15 } };
	struct profile *a = mk(sa, N(sa)), *b = mk(sb, N(sb));
	struct diff_result *r = diff_compute(a, b, NULL);
	CHECK(r->nrows == 4);
	CHECK(NEAR(r->similarity, 0.0));
	diff_result_free(r);

	struct diff_opts o = { .cross_domain = true, .domain_label = "vm1|vm1-active" };
	r = diff_compute(a, b, &o);
	CHECK(r->nrows == 2);
	CHECK(NEAR(r->similarity, 1.0));
	const struct diff_row *x = find(r, DIFF_KERNEL_IMAGE, "copy_user_generic_string");
	CHECK(x && x->count_a == 70 && x->count_b == 35 && NEAR(x->share_a, 0.7) && NEAR(x->share_b, 0.7));
	CHECK(x && !strcmp(x->domain, "vm1|vm1-active"));
	diff_result_free(r);

	/* a module image is part of "the kernel" too; user images are not */
	CHECK(!strcmp(diff_norm_image("[e1000]", true), DIFF_KERNEL_IMAGE));
	CHECK(!strcmp(diff_norm_image("[guest.kernel]", false), DIFF_KERNEL_IMAGE));
	CHECK(!strcmp(diff_norm_image("libc.so.6", false), "libc.so.6"));

	/* two kernel images of one domain add up into one row */
	struct spec sc[] = { { "h", "[kernel.kallsyms]", "k", true, 10 }, { "h", "[ext4]", "k", true, 10 },
			     { "h", "prog", "u", false, 20 } };
	struct profile *c = mk(sc, N(sc));
	r = diff_compute(c, c, NULL);
	CHECK(r->nrows == 2);
	x = find(r, DIFF_KERNEL_IMAGE, "k");
	CHECK(x && x->count_a == 20 && NEAR(x->share_a, 0.5));
	diff_result_free(r);
	unmk(a); unmk(b); unmk(c);
}

static void test_kernel_only(void)
{
	/* kernel-only: shares re-normalised within kernel rows */
	struct spec sa[] = { { "g", "[guest.kernel]", "k1", true, 30 }, { "g", "[guest.kernel]", "k2", true, 10 },
			     { "g", "[guest user cr3=0x1000]", "[unknown]", false, 60 } };
	struct spec sb[] = { { "g", "[kernel.kallsyms]", "k1", true, 15 }, { "g", "[kernel.kallsyms]", "k2", true, 5 },
			     { "g", "netbench", "main", false, 80 } };
	struct profile *a = mk(sa, N(sa)), *b = mk(sb, N(sb));
	struct diff_opts o = { .kernel_only = true };
	struct diff_result *r = diff_compute(a, b, &o);
	CHECK(r->nrows == 2);
	CHECK(r->total_a == 40 && r->total_b == 20);
	const struct diff_row *x = find(r, DIFF_KERNEL_IMAGE, "k1");
	CHECK(x && NEAR(x->share_a, 0.75) && NEAR(x->share_b, 0.75));
	CHECK(NEAR(r->similarity, 1.0));
	diff_result_free(r);
	o.kernel_only = false;
	r = diff_compute(a, b, &o);
	CHECK(NEAR(r->similarity, 0.2));  /* min(.3,.15) + min(.1,.05) */
	diff_result_free(r);
	unmk(a); unmk(b);
}

static void test_fold(void)
{
	CHECK(diff_is_irq_enable("finish_task_switch"));
	CHECK(diff_is_irq_enable("finish_task_switch.isra.0"));
	CHECK(diff_is_irq_enable("_raw_spin_unlock_irqrestore"));
	CHECK(diff_is_irq_enable("_raw_spin_unlock_irq"));
	CHECK(diff_is_irq_enable("__do_softirq.constprop.0"));
	CHECK(diff_is_irq_enable("default_idle"));
	CHECK(!diff_is_irq_enable("finish_task_switch_x"));
	CHECK(!diff_is_irq_enable("_raw_spin_unlock"));
	CHECK(!diff_is_irq_enable("copy_user_generic_string"));
	CHECK(!diff_is_irq_enable(NULL));

	/* passive: copy 50, sched 30, switch_mm 10, finish_task_switch 10
	 * active:  copy 40, sched 24, finish_task_switch 36 (piled up) */
	struct spec sa[] = { { "vm1", "[guest.kernel]", "copy", true, 50 },
			     { "vm1", "[guest.kernel]", "sched", true, 30 },
			     { "vm1", "[guest.kernel]", "switch_mm", true, 10 },
			     { "vm1", "[guest.kernel]", "finish_task_switch", true, 10 } };
	struct spec sb[] = { { "vma", "[kernel.kallsyms]", "copy", true, 40 },
			     { "vma", "[kernel.kallsyms]", "sched", true, 24 },
			     { "vma", "[kernel.kallsyms]", "finish_task_switch.isra.0", true, 20 },
			     { "vma", "[kernel.kallsyms]", "_raw_spin_unlock_irqrestore", true, 16 },
			     { "vma", "prog", "finish_task_switch", false, 5 } };
	struct profile *a = mk(sa, N(sa)), *b = mk(sb, N(sb));
	struct diff_opts o = { .cross_domain = true, .domain_label = "x" };
	struct diff_result *r = diff_compute(a, b, &o);
	/* copy min(.5,.381)+sched min(.3,.2286)+fts 0 (names differ: .isra.0 is another symbol) */
	double s0 = r->similarity;
	CHECK(r->nfolded == 0 && r->folded_a == 0 && r->folded_b == 0);
	CHECK(NEAR(r->similarity, r->similarity_all));
	diff_result_free(r);

	o.fold_irq = true;
	r = diff_compute(a, b, &o);
	CHECK(NEAR(r->similarity_all, s0));
	CHECK(r->folded_a == 10 && r->folded_b == 36);
	CHECK(r->total_a == 90 && r->total_b == 69);
	CHECK(r->nfolded == 3);
	/* folded rows come last */
	for (size_t i = 0; i < r->nrows; i++)
		CHECK(r->rows[i].folded == (i >= r->nrows - r->nfolded));
	const struct diff_row *x = find(r, DIFF_KERNEL_IMAGE, "copy");
	CHECK(x && NEAR(x->share_a, 50.0 / 90) && NEAR(x->share_b, 40.0 / 69));
	x = find(r, "prog", "finish_task_switch");  /* a user symbol is never folded */
	CHECK(x && !x->folded);
	x = find(r, DIFF_KERNEL_IMAGE, "finish_task_switch.isra.0");
	CHECK(x && x->folded && NEAR(x->share_b, 20.0 / 105));
	CHECK(NEAR(r->similarity, fmin(50.0 / 90, 40.0 / 69) + fmin(30.0 / 90, 24.0 / 69)));
	CHECK(r->similarity > s0);
	diff_result_free(r);
	unmk(a); unmk(b);
}

int main(void)
{
	test_identical_and_disjoint();
	test_partial();
	test_domains();
	test_kernel_only();
	test_fold();
	return unit_done();
}
