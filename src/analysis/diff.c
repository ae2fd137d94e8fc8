// SPDX-License-Identifier: MIT
/*
 * Symbol-by-symbol comparison of two profiles (see diff.h for the rules).
 * Both sides' symbol rows are turned into (key, side, count) entries,
 * sorted by key and swept once, so rows that normalise to one key (two
 * kernel images of a domain, several domains under cross_domain) add up.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "util/xalloc.h"

/*
 * Functions where an in-guest cpu-clock timer lands when it could not fire
 * while interrupts were off: the points that re-enable interrupts (unlock
 * irqrestore, the end of a context switch, softirq/irq exit) and the idle
 * loop (it enables interrupts and halts). Measured on Debian 12 guests
 * (see docs/merge-diff.md); the names are those of current x86-64 kernels.
 */
const char *const diff_irq_enable_points[] = {
	"finish_task_switch",
	"_raw_spin_unlock_irqrestore",
	"_raw_spin_unlock_irq",
	"__raw_spin_unlock_irq",
	"_raw_spin_unlock_bh",
	"_raw_read_unlock_irqrestore",
	"_raw_write_unlock_irqrestore",
	"arch_local_irq_restore",
	"arch_local_irq_enable",
	"native_irq_enable",
	"__local_bh_enable_ip",
	"__do_softirq",
	"handle_softirqs",
	"irq_exit_rcu",
	"default_idle",
	"default_idle_call",
	"pv_native_safe_halt",
	"native_safe_halt",
	NULL,
};

bool diff_is_irq_enable(const char *symbol)
{
	if (!symbol)
		return false;
	/* compiler clones and splits: name.isra.0, name.constprop.3, name.cold */
	size_t n = strcspn(symbol, ".");
	for (const char *const *p = diff_irq_enable_points; *p; p++)
		if (strlen(*p) == n && !strncmp(symbol, *p, n))
			return true;
	return false;
}

static bool is_kernel_image_name(const char *image)
{
	return !strcmp(image, "[kernel.kallsyms]") || !strcmp(image, "[guest.kernel]") ||
	       !strncmp(image, "vmlinux", 7);
}

const char *diff_norm_image(const char *image, bool kernel)
{
	if (!image)
		return "[unknown]";
	if (kernel || is_kernel_image_name(image))
		return DIFF_KERNEL_IMAGE;
	return image;
}

struct entry {
	const char *domain, *image, *symbol;
	uint64_t count;
	int side;               /* 0 = A, 1 = B */
};

/* Entries and rows both order by (domain, image, symbol). */
static int cmp_dis(const char *xd, const char *xi, const char *xs,
		   const char *yd, const char *yi, const char *ys)
{
	int c = strcmp(xd, yd);
	if (!c)
		c = strcmp(xi, yi);
	if (!c)
		c = strcmp(xs, ys);
	return c;
}

static int cmp_key(const struct entry *x, const struct entry *y)
{
	return cmp_dis(x->domain, x->image, x->symbol, y->domain, y->image, y->symbol);
}

static int cmp_entry(const void *pa, const void *pb)
{
	return cmp_key(pa, pb);
}

static void collect(const struct profile *p, int side, const struct diff_opts *o,
		    struct entry **v, size_t *n, size_t *cap)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct profile_symbol *y = &p->syms[i];
		if (!y->self)
			continue;
		const char *img = diff_norm_image(y->image, y->kernel);
		bool kern = !strcmp(img, DIFF_KERNEL_IMAGE);
		if (o->kernel_only && !kern)
			continue;
		xgrow((void **)v, cap, *n + 1, sizeof(**v));
		struct entry *e = &(*v)[(*n)++];
		e->domain = o->cross_domain ? "" : (y->domain_name ? y->domain_name : "");
		e->image = img;
		e->symbol = y->symbol ? y->symbol : "[unknown]";
		e->count = y->self;
		e->side = side;
	}
}

static double maxd(double a, double b) { return a > b ? a : b; }
static double mind(double a, double b) { return a < b ? a : b; }

static int cmp_by_diff(const struct diff_row *x, const struct diff_row *y)
{
	double dx = fabs(x->diff), dy = fabs(y->diff);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	double mx = maxd(x->share_a, x->share_b), my = maxd(y->share_a, y->share_b);
	if (mx != my)
		return mx > my ? -1 : 1;
	return 0;
}

static int cmp_by_share(const struct diff_row *x, const struct diff_row *y)
{
	double mx = maxd(x->share_a, x->share_b), my = maxd(y->share_a, y->share_b);
	if (mx != my)
		return mx > my ? -1 : 1;
	double dx = fabs(x->diff), dy = fabs(y->diff);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return 0;
}

static int cmp_names(const struct diff_row *x, const struct diff_row *y)
{
	return cmp_dis(x->domain, x->image, x->symbol, y->domain, y->image, y->symbol);
}

static int cmp_row_diff(const void *pa, const void *pb)
{
	int c = cmp_by_diff(pa, pb);
	return c ? c : cmp_names(pa, pb);
}

static int cmp_row_share(const void *pa, const void *pb)
{
	int c = cmp_by_share(pa, pb);
	return c ? c : cmp_names(pa, pb);
}

static double frac(uint64_t n, uint64_t total)
{
	return total ? (double)n / (double)total : 0.0;
}

struct diff_result *diff_compute(const struct profile *a, const struct profile *b,
				 const struct diff_opts *o)
{
	static const struct diff_opts none = { 0 };
	if (!o)
		o = &none;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	collect(a, 0, o, &v, &n, &cap);
	collect(b, 1, o, &v, &n, &cap);
	if (n)
		qsort(v, n, sizeof(*v), cmp_entry);

	struct diff_result *r = xcalloc(1, sizeof(*r));
	size_t rcap = 0;
	const char *label = o->cross_domain ? (o->domain_label ? o->domain_label : "*") : NULL;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t ca = 0, cb = 0;
		for (; j < n && !cmp_key(&v[i], &v[j]); j++) {
			if (v[j].side)
				cb += v[j].count;
			else
				ca += v[j].count;
		}
		xgrow((void **)&r->rows, &rcap, r->nrows + 1, sizeof(*r->rows));
		struct diff_row *row = &r->rows[r->nrows++];
		memset(row, 0, sizeof(*row));
		row->domain = label ? label : v[i].domain;
		row->image = v[i].image;
		row->symbol = v[i].symbol;
		row->count_a = ca;
		row->count_b = cb;
		row->status = ca && cb ? DIFF_BOTH : cb ? DIFF_NEW : DIFF_GONE;
		row->folded = o->fold_irq && !strcmp(row->image, DIFF_KERNEL_IMAGE) &&
			      diff_is_irq_enable(row->symbol);
		i = j;
	}
	free(v);

	/* Totals before and after setting the interrupt-enable points aside. */
	uint64_t all_a = 0, all_b = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		all_a += r->rows[i].count_a;
		all_b += r->rows[i].count_b;
		if (r->rows[i].folded) {
			r->folded_a += r->rows[i].count_a;
			r->folded_b += r->rows[i].count_b;
		}
	}
	r->total_a = all_a - r->folded_a;
	r->total_b = all_b - r->folded_b;

	double sim = 0, sim_all = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		struct diff_row *row = &r->rows[i];
		double fa = frac(row->count_a, all_a), fb = frac(row->count_b, all_b);
		sim_all += mind(fa, fb);
		if (row->folded) {
			row->share_a = fa;
			row->share_b = fb;
		} else {
			row->share_a = frac(row->count_a, r->total_a);
			row->share_b = frac(row->count_b, r->total_b);
			sim += mind(row->share_a, row->share_b);
		}
		row->diff = row->share_b - row->share_a;
	}
	/* rounding must not push an identical pair above 1 */
	r->similarity = mind(sim, 1.0);
	r->similarity_all = mind(sim_all, 1.0);

	/* Unfolded rows first, each group in the chosen order. */
	size_t k = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (!r->rows[i].folded) {
			struct diff_row t = r->rows[i];
			r->rows[i] = r->rows[k];
			r->rows[k++] = t;
		}
	r->nfolded = r->nrows - k;
	int (*cmp)(const void *, const void *) = o->sort == DIFF_SORT_SHARE ? cmp_row_share : cmp_row_diff;
	if (k)
		qsort(r->rows, k, sizeof(*r->rows), cmp);
	if (r->nfolded)
		qsort(r->rows + k, r->nfolded, sizeof(*r->rows), cmp);
	return r;
}

void diff_result_free(struct diff_result *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r);
}
