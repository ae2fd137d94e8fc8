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
 * Lines are merged stacks: stacks that differ only in what the chosen
 * level leaves out (the pid, the thread, the sample's mode or event) are
 * one line, as in the flame graph. They are merged with a hash of
 * (domain, level key, frames) over the profile's stacks, not through the
 * flame graph's tree, which would cost a node per frame (on a 1M-sample
 * profile of 385k stacks: 4.0 s CPU and 261 MB through the tree against
 * about the old 2.5 s and 182 MB). Order: count descending, then the
 * first stack's order in the profile (itself count descending).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* Append s made safe for the line format to the buffer. */
static void put_safe(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	xgrow((void **)buf, cap, *len + n + 1, 1);
	char *o = *buf + *len;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		o[i] = (char)(c == ';' ? ':' : c < 0x20 ? ' ' : c);
	}
	*len += n;
}

static void put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	xgrow((void **)buf, cap, *len + n + 1, 1);
	memcpy(*buf + *len, s, n);
	*len += n;
}

/* Each symbol's frame text (";" label, "_[k]" for kernel code), made
 * once per symbol the output names: lines repeat their frames many
 * times over, and writing them character by character (with a printf
 * for each [unknown] frame) was most of the output's time. */
struct labels {
	size_t *off;              /* per symbol: offset in text + 1, 0 not made yet */
	size_t *len;
	char *text;
	size_t n, cap;
};

static const char *label(struct labels *L, const struct profile *p, uint32_t sym, size_t *n)
{
	if (!L->off[sym]) {
		char buf[512];
		size_t at = L->n;
		put(&L->text, &L->n, &L->cap, ";", 1);
		put_safe(&L->text, &L->n, &L->cap, fg_symbol_label(p, sym, buf, sizeof(buf)));
		if (p->syms[sym].kernel)
			put(&L->text, &L->n, &L->cap, "_[k]", 4);
		L->off[sym] = at + 1;
		L->len[sym] = L->n - at;
	}
	*n = L->len[sym];
	return L->text + L->off[sym] - 1;
}

struct line { uint32_t first, level; uint64_t count; };

struct merge {
	const struct profile *p;
	struct line *v;
	size_t n, cap;
	struct hidx t;
	struct hmap levels;       /* level key -> id + 1 */
	uint32_t nlevels;
};

/* The id of stack st's process-level key (0 for FG_ROOT_NONE). */
static uint32_t level_of(struct merge *m, const struct profile_stack *st, enum fg_root root)
{
	uintptr_t v;
	if (root == FG_ROOT_NONE)
		return 0;
	if (root == FG_ROOT_COMM) {
		const char *c = st->comm && *st->comm ? st->comm : "[unknown]";
		if (!(v = (uintptr_t)strmap_get(&m->levels, c))) {
			v = ++m->nlevels;
			strmap_put(&m->levels, c, (void *)v);
		}
	} else {
		uint64_t key = root == FG_ROOT_TID ? (uint64_t)st->pid << 32 | st->tid : st->pid;
		if (!(v = (uintptr_t)u64map_get(&m->levels, key))) {
			v = ++m->nlevels;
			u64map_put(&m->levels, key, (void *)v);
		}
	}
	return (uint32_t)v;
}

struct want { const struct merge *m; const struct profile_stack *st; uint32_t level; };

static bool same_line(const void *ctx, uint32_t e)
{
	const struct want *w = ctx;
	const struct line *l = &w->m->v[e];
	const struct profile_stack *x = &w->m->p->stacks[l->first], *y = w->st;
	return l->level == w->level && x->domain == y->domain && x->nframes == y->nframes &&
	       !memcmp(x->frames, y->frames, y->nframes * sizeof(*y->frames));
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

int export_folded(FILE *f, const struct profile *p, enum fg_root root)
{
	struct merge m = { .p = p };
	hidx_init(&m.t, 1024);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		struct want w = { &m, st, level_of(&m, st, root) };
		uint64_t h = hash_fold64(hash_fold64(hash_fold64(7, st->domain), w.level), st->nframes);
		for (uint32_t j = 0; j < st->nframes; j++)
			h = hash_fold64(h, st->frames[j]);
		size_t slot;
		uint32_t e = hidx_find(&m.t, h, same_line, &w, &slot);
		if (e != HIDX_NONE) {
			m.v[e].count += st->count;
			continue;
		}
		xgrow((void **)&m.v, &m.cap, m.n + 1, sizeof(*m.v));
		m.v[m.n] = (struct line){ (uint32_t)i, w.level, st->count };
		hidx_fill(&m.t, slot, h, (uint32_t)m.n);
		m.n++;
	}
	if (m.n)
		qsort(m.v, m.n, sizeof(*m.v), cmp_line);
	struct labels L = { xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*L.off)),
			    xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*L.len)), NULL, 0, 0 };
	char buf[512], *line = NULL;
	size_t cap = 0;
	for (size_t k = 0; k < m.n && !ferror(f); k++) {
		const struct profile_stack *st = &p->stacks[m.v[k].first];
		size_t len = 0;
		put_safe(&line, &len, &cap, st->domain_name ? st->domain_name : "host");
		if (root != FG_ROOT_NONE) {
			put(&line, &len, &cap, ";", 1);
			put_safe(&line, &len, &cap, fg_root_label(st, root, buf, sizeof(buf)));
		}
		for (uint32_t j = 0; j < st->nframes; j++) {
			size_t n;
			const char *t = label(&L, p, st->frames[j], &n);
			put(&line, &len, &cap, t, n);
		}
		int w = snprintf(buf, sizeof(buf), " %" PRIu64 "\n", m.v[k].count);
		put(&line, &len, &cap, buf, (size_t)w);
		fwrite(line, 1, len, f);
	}
	free(line);
	free(L.off);
	free(L.len);
	free(L.text);
	free(m.v);
	hidx_release(&m.t);
	hmap_release(&m.levels);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
