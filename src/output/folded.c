// SPDX-License-Identifier: MIT
/*
 * Folded stacks (`domprof export --format folded`): the text format of
 * Brendan Gregg's stackcollapse scripts, read by flamegraph.pl,
 * speedscope, inferno and most flame graph tools. One line per unique
 * path: frames root-first joined by ';', one space, the sample count.
 * The first frame is the domain and the second the process level
 * (enum fg_root: the command name by default, COMM-PID with --by-pid,
 * COMM-PID/TID with --by-tid, none with --no-comm), so a multi-domain
 * profile folds into one file without mixing domains, and the runs of
 * one program fold into one line per path as stackcollapse does.
 * Kernel frames carry stackcollapse-perf's "_[k]" suffix, which
 * flamegraph.pl colours as kernel code. Labels are made safe for the
 * line format: ';' becomes ':', control characters become ' '.
 *
 * The lines are the nodes of the flame graph's tree (fg_tree_build_root)
 * with samples ending there, so stacks that differ only in what the
 * chosen level leaves out (pid, mode, event) are one line, and the
 * folded file draws exactly the flame graph `domprof flamegraph` draws.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output/flamegraph.h"
#include "util/xalloc.h"

static void frame(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c == ';' ? ':' : c < 0x20 ? ' ' : c, f);
	}
}

struct line { uint32_t node, order; uint64_t count; };

struct collect {
	const struct fg_tree *t;
	struct line *v;
	size_t n, cap;
};

static void collect_node(void *arg, uint32_t i)
{
	struct collect *c = arg;
	const struct fg_node *n = &c->t->nodes[i];
	if (!n->self || !i)
		return;
	xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
	c->v[c->n] = (struct line){ i, (uint32_t)c->n, n->self };
	c->n++;
}

/* count descending, then the tree's pre-order (widest paths first) */
static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The path of node i, root-first, without "all". */
static void write_path(FILE *f, const struct fg_tree *t, uint32_t i)
{
	uint32_t path[DP_MAX_CALLCHAIN + 8];
	size_t n = 0;
	for (uint32_t j = i; j && n < sizeof(path) / sizeof(*path); j = t->nodes[j].parent)
		path[n++] = j;
	char buf[512];
	for (size_t k = n; k-- > 0;) {
		const struct fg_node *nd = &t->nodes[path[k]];
		if (k + 1 < n)
			fputc(';', f);
		frame(f, fg_node_label(t, path[k], buf, sizeof(buf)));
		if (nd->kind == FG_KERNEL)
			fputs("_[k]", f);
	}
}

int export_folded(FILE *f, const struct profile *p, enum fg_root root)
{
	struct fg_tree *t = fg_tree_build_root(p, false, root);
	struct collect c = { .t = t };
	fg_walk(t, 1, collect_node, &c);
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cmp_line);
	for (size_t k = 0; k < c.n; k++) {
		write_path(f, t, c.v[k].node);
		fprintf(f, " %" PRIu64 "\n", c.v[k].count);
	}
	free(c.v);
	fg_tree_free(t);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
