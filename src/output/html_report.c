// SPDX-License-Identifier: MIT
/*
 * The HTML report (html_report.h): writes the page frame, its style and
 * script (report.css / report.js, compiled in by mk/htmlreport.mk) and
 * one JSON document the script reads.
 *
 * Data, compact so a system-wide recording of ~400k samples stays a page
 * of a few hundred KB (docs/report.md has the layout):
 *  - every string (symbol label, image, command name) once, in "strs";
 *  - every symbol once, as four integers in "syms" (domain index, image
 *    string, label string, flags);
 *  - the unique stacks merged into one prefix tree, domain -> command
 *    name -> outermost caller -> ... -> leaf, written in pre-order as
 *    LEB128 varints (depth step, value, self and total samples) in
 *    base64: a frame
 *    shared by many stacks is written once, and most numbers take a byte.
 * Every count the page shows (self, total, callers, callees, images,
 * user/kernel split, the flame graph) is computed from that tree under
 * the page's filter, so the views always agree with each other.
 *
 * The flame graph is not drawn here: the page embeds the page
 * flamegraph_html() writes for an empty profile (its script, style and
 * markup, unchanged) and runs it in an iframe with the filtered tree in
 * the flame graph's own data layout (docs/flamegraph.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/escape.h"
#include "output/flamegraph.h"
#include "output/html_report.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include "../../build/gen/report_assets.h"

/* ---- strings ------------------------------------------------------------ */

struct strtab {
	struct hmap map;        /* string -> index + 1 */
	const char **v;         /* borrowed, or owned when in `owned` */
	size_t n, cap;
	char **owned;           /* copies of labels written into buffers */
	size_t nowned, capowned;
};

static uint32_t str_id(struct strtab *s, const char *str, bool copy)
{
	if (!str)
		str = "";
	uintptr_t found = (uintptr_t)strmap_get(&s->map, str);
	if (found)
		return (uint32_t)(found - 1);
	if (copy) {
		char *c = xstrdup(str);
		xgrow((void **)&s->owned, &s->capowned, s->nowned + 1, sizeof(*s->owned));
		s->owned[s->nowned++] = c;
		str = c;
	}
	xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n] = str;
	strmap_put(&s->map, str, (void *)(uintptr_t)(s->n + 1));
	return (uint32_t)s->n++;
}

static void str_release(struct strtab *s)
{
	hmap_release(&s->map);
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->v);
}

/* ---- the prefix tree of the stacks ---------------------------------------- */

struct tnode {
	uint32_t parent;             /* index; created before its children */
	uint32_t first, last, next;  /* children in insertion order; 0 = none */
	uint32_t value;              /* depth 1: domain index; 2: command string; deeper: symbol */
	uint32_t depth;              /* virtual root 0, domain 1, command 2, frames 3.. */
	uint64_t self;
	uint64_t total;              /* self of the node and everything below it */
};

struct tree {
	struct tnode *v;
	size_t n, cap;
	struct hmap kids;            /* parent << 32 | value -> node + 1 */
	uint64_t dropped;            /* samples of stacks past HTML_REPORT_MAX_NODES */
	uint64_t cut;                /* stacks deeper than HTML_REPORT_MAX_DEPTH */
};

/* The child of parent with value, created when missing; 0 when the node
 * bound is reached. A parent's children are all of one level, so (parent,
 * value) is an exact key. */
static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t value)
{
	uint64_t key = (uint64_t)parent << 32 | value;
	uintptr_t found = (uintptr_t)u64map_get(&t->kids, key);
	if (found)
		return (uint32_t)(found - 1);
	if (t->n >= HTML_REPORT_MAX_NODES)
		return 0;
	xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	uint32_t c = (uint32_t)t->n++;
	t->v[c] = (struct tnode){ .parent = parent, .value = value, .depth = t->v[parent].depth + 1 };
	if (t->v[parent].last)
		t->v[t->v[parent].last].next = c;
	else
		t->v[parent].first = c;
	t->v[parent].last = c;
	u64map_put(&t->kids, key, (void *)(uintptr_t)(c + 1));
	return c;
}

/* A passive domain has no process names: its samples are one
 * application, "[guest]", as in the image summary (profile_build.c). */
static const char *stack_app(const struct profile *p, const struct profile_stack *st, uint32_t dom)
{
	if (p->ndomains && p->domains[dom].kind == DP_DOMAIN_PASSIVE)
		return "[guest]";
	return st->comm && *st->comm ? st->comm : "[unknown]";
}

static void tree_build(struct tree *t, const struct profile *p, struct strtab *strs)
{
	xgrow((void **)&t->v, &t->cap, 1, sizeof(*t->v));
	t->v[0] = (struct tnode){ 0 };
	t->n = 1;
	for (size_t s = 0; s < p->nstacks; s++) {
		const struct profile_stack *st = &p->stacks[s];
		const struct profile_domain *pd = profile_domain_by_id(p, st->domain);
		uint32_t dom = pd ? (uint32_t)(pd - p->domains) : 0;
		uint32_t n = tree_child(t, 0, dom);
		if (n)
			n = tree_child(t, n, str_id(strs, stack_app(p, st, dom), false));
		uint32_t j = 0;
		if (st->nframes > HTML_REPORT_MAX_DEPTH) {
			j = st->nframes - HTML_REPORT_MAX_DEPTH;  /* keep the innermost frames */
			t->cut++;
		}
		for (; n && j < st->nframes; j++)
			n = tree_child(t, n, st->frames[j]);
		if (n)
			t->v[n].self += st->count;
		else
			t->dropped += st->count;
	}
	hmap_release(&t->kids);
	/* children come after their parent: one backward pass sums them */
	for (size_t i = t->n; i-- > 1;) {
		t->v[i].total += t->v[i].self;
		t->v[t->v[i].parent].total += t->v[i].total;
	}
}

/* ---- varints in base64 ------------------------------------------------------ */

struct bytes {
	unsigned char *v;
	size_t n, cap;
};

static void put_varint(struct bytes *b, uint64_t x)
{
	xgrow((void **)&b->v, &b->cap, b->n + 10, 1);
	do {
		unsigned char c = x & 0x7f;
		x >>= 7;
		b->v[b->n++] = c | (x ? 0x80 : 0);
	} while (x);
}

static void put_base64(FILE *f, const unsigned char *s, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		fputc(a[v >> 18], f);
		fputc(a[v >> 12 & 63], f);
		fputc(a[v >> 6 & 63], f);
		fputc(a[v & 63], f);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		fprintf(f, "%c%c==", a[v >> 18], a[v >> 12 & 63]);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		fprintf(f, "%c%c%c=", a[v >> 18], a[v >> 12 & 63], a[v >> 6 & 63]);
	}
}

/* Pre-order (depth step, value, self, total) of every node below the
 * virtual root; the step is previous depth + 1 - depth (0 for a first
 * child). The totals let the page show the unfiltered view from one pass
 * over the nodes as it reads them.
 * Returns the number of nodes written. */
static size_t tree_encode(const struct tree *t, struct bytes *b)
{
	size_t cap = 64, sp = 0, written = 0;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	uint32_t prev = 0;   /* depth of the previous node (the root's: 0) */
	for (uint32_t c = t->v[0].first; c; c = t->v[c].next) {
		stack[sp++] = c;
		while (sp) {
			uint32_t i = stack[--sp];
			const struct tnode *n = &t->v[i];
			put_varint(b, prev + 1 - n->depth);
			put_varint(b, n->value);
			put_varint(b, n->self);
			put_varint(b, n->total);
			prev = n->depth;
			written++;
			/* push children last first so the first is written first */
			size_t base = sp;
			for (uint32_t k = n->first; k; k = t->v[k].next) {
				xgrow((void **)&stack, &cap, sp + 1, sizeof(*stack));
				stack[sp++] = k;
			}
			for (size_t a = base, z = sp; a + 1 < z; a++, z--) {
				uint32_t x = stack[a];
				stack[a] = stack[z - 1];
				stack[z - 1] = x;
			}
		}
	}
	free(stack);
	return written;
}

/* ---- the JSON document ---------------------------------------------------- */

static void jstr(FILE *f, const char *s)
{
	fg_json_str(f, s);
}

static void jkv(FILE *f, const char *k, const char *v, bool comma)
{
	if (comma)
		fputc(',', f);
	jstr(f, k);
	fputc(':', f);
	jstr(f, v);
}

static const char *const lost_names[DP_LOST_SOURCES] = {
	"kernel ring overflow", "kernel throttling", "VM sampler missed ticks",
	"agent", "writer",
};

static void write_header(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	const struct dp_header *h = &p->header;
	fputs("\"version\":1", f);
	jkv(f, "generator", "domprof " DOMPROF_VERSION, true);
	jkv(f, "file", v->path ? v->path : "", true);
	fputs(",\"host\":{", f);
	jkv(f, "hostname", h->hostname, false);
	jkv(f, "release", h->release, true);
	jkv(f, "cpu", h->cpu_desc, true);
	jkv(f, "cmdline", h->cmdline, true);
	fprintf(f, ",\"ncpus\":%" PRIu32 ",\"created_ns\":%" PRIu64 ",\"format\":\"%u.%u\"},\"events\":[",
		h->ncpus, h->created_ns, h->major, h->minor);
	for (size_t i = 0; i < p->nevents; i++) {
		const struct profile_event *e = &p->events[i];
		fputs(i ? ",{" : "{", f);
		jkv(f, "name", e->name, false);
		fprintf(f, ",\"freq\":%s,\"period\":%" PRIu64 "}", e->freq ? "true" : "false", e->period);
	}
	fprintf(f, "],\"total\":%" PRIu64 ",\"matched\":%" PRIu64 ",\"lost\":%" PRIu64
		   ",\"lostPct\":%.6f,\"lostBy\":[", p->total_samples, p->matched, p->lost,
		p->lost == UINT64_MAX ? -1.0 : report_lost_pct(p));
	bool first = true;
	for (unsigned i = 0; i < DP_LOST_SOURCES; i++) {
		if (!p->lost_by_source[i])
			continue;
		fputs(first ? "[" : ",[", f);
		jstr(f, lost_names[i]);
		fprintf(f, ",%" PRIu64 "]", p->lost_by_source[i]);
		first = false;
	}
	fprintf(f, "],\"damagedBytes\":%" PRIu64 ",\"fileWarnings\":%zu,\"warnings\":[",
		p->damaged_bytes, p->nfile_warnings);
	for (size_t i = 0; i < p->nwarnings; i++) {
		if (i)
			fputc(',', f);
		jstr(f, p->warnings[i]);
	}
	fputs("],\"filter\":", f);
	if (v->filter_desc)
		jstr(f, v->filter_desc);
	else
		fputs("null", f);
	fprintf(f, ",\"callchains\":%s,\"domains\":[", p->has_callchains ? "true" : "false");
	for (size_t i = 0; i < p->ndomains; i++) {
		const struct profile_domain *d = &p->domains[i];
		fputs(i ? ",{" : "{", f);
		jkv(f, "name", d->name, false);
		jkv(f, "kind", dp_domain_kind_name(d->kind), true);
		jkv(f, "address", d->address, true);
		jkv(f, "symsrc", d->symsrc, true);
		fprintf(f, ",\"id\":%" PRIu32 ",\"vcpus\":%" PRIu32 ",\"samples\":%" PRIu64 "}",
			d->id, d->vcpus, d->samples);
	}
	fputc(']', f);
}

/* "syms": four integers per symbol (domain index, image string, label
 * string, flags: 1 kernel, 2 named by a symbol table or FDE). */
static void write_syms(FILE *f, const struct profile *p, struct strtab *strs)
{
	char buf[512];
	fputs(",\"syms\":[", f);
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct profile_symbol *y = &p->syms[i];
		const struct profile_domain *pd = profile_domain_by_id(p, y->domain);
		uint32_t dom = pd ? (uint32_t)(pd - p->domains) : 0;
		const char *label = fg_symbol_label(p, (uint32_t)i, buf, sizeof(buf));
		uint32_t img = str_id(strs, y->image ? y->image : "", false);
		uint32_t name = str_id(strs, label, label == buf);
		unsigned flags = (y->kernel ? 1u : 0u) | (y->known || y->fde ? 2u : 0u);
		fprintf(f, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%u", i ? "," : "", dom, img, name, flags);
	}
	fputc(']', f);
}

/* The flame graph page of an empty profile: the renderer's markup, style
 * and script with (almost) no data, which the report's script fills with
 * the filtered tree. A shallow copy with no stacks: nothing is freed
 * through it. */
static char *fg_template(const struct profile *p, size_t *len)
{
	struct profile empty = *p;
	empty.stacks = NULL;
	empty.nstacks = 0;
	empty.matched = 0;
	struct fg_opts o = { .title = "Flame graph", .subtitle = "" };
	char *s = NULL;
	FILE *m = open_memstream(&s, len);
	if (!m)
		abort();   /* out of memory: as xmalloc */
	flamegraph_html(m, &empty, &o);
	if (fclose(m))
		abort();
	return s;
}

static void write_data(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	struct strtab strs = { 0 };
	struct tree t = { 0 };
	write_header(f, v);
	tree_build(&t, p, &strs);
	write_syms(f, p, &strs);
	struct bytes b = { 0 };
	size_t nodes = tree_encode(&t, &b);
	fprintf(f, ",\"nodes\":%zu,\"treeDropped\":%" PRIu64 ",\"treeCut\":%" PRIu64 ",\"tree\":\"",
		nodes, t.dropped, t.cut);
	put_base64(f, b.v, b.n);
	fputs("\",\"strs\":[", f);
	for (size_t i = 0; i < strs.n; i++) {
		if (i)
			fputc(',', f);
		jstr(f, strs.v[i]);
	}
	size_t tl = 0;
	char *tpl = fg_template(p, &tl);
	fputs("],\"fgpage\":", f);
	jstr(f, tpl);
	free(tpl);
	free(b.v);
	free(t.v);
	str_release(&strs);
}

int report_html(FILE *f, const struct report_view *v)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"domprof " DOMPROF_VERSION "\">\n<title>domprof report</title>\n"
	      "<style>\n", f);
	fputs(rp_css, f);
	fputs("</style>\n</head>\n<body>\n", f);
	fputs(rp_body, f);
	fputs("<script type=\"application/json\" id=\"rpdata\">{", f);
	write_data(f, v);
	fputs("}</script>\n<script>\n", f);
	fputs(rp_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
