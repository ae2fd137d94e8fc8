// SPDX-License-Identifier: MIT
/*
 * Flame graphs: the merged call tree of a profile's unique stacks
 * (all -> domain -> process -> frames), written as a self-contained
 * interactive HTML page or a standalone SVG.
 *
 * The page's script and style live in flamegraph.js / flamegraph.css and
 * are compiled in as C strings (mk/flamegraph.mk generates
 * build/gen/flamegraph_assets.h), so the page needs no network. The data
 * goes inline as one JSON document: a name table and a flat pre-order
 * node list (depth, name, kind, domain, samples) from which the script
 * rebuilds the tree. Nodes below a fraction of all samples are merged
 * into their parent before writing, and the script draws only frames at
 * least half a pixel wide, so a profile of millions of samples stays a
 * page of a few thousand boxes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/escape.h"
#include "output/flamegraph.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include "../../build/gen/flamegraph_assets.h"

/* ---- labels and strings ---------------------------------------------- */

const char *fg_symbol_label(const struct profile *p, uint32_t sym, char *buf, size_t len)
{
	const struct profile_symbol *y = &p->syms[sym];
	if ((y->known || y->fde) && y->symbol && *y->symbol)
		return y->symbol;
	snprintf(buf, len, "[unknown] %s", y->image ? y->image : "?");
	return buf;
}

static const char *root_label(const char *comm, uint32_t pid, uint32_t tid, enum fg_root root,
			      char *buf, size_t len)
{
	const char *c = comm && *comm ? comm : "[unknown]";
	switch (root) {
	case FG_ROOT_PID: snprintf(buf, len, "%s-%" PRIu32, c, pid); break;
	case FG_ROOT_TID: snprintf(buf, len, "%s-%" PRIu32 "/%" PRIu32, c, pid, tid); break;
	case FG_ROOT_NONE: snprintf(buf, len, "%s", ""); break;
	default: snprintf(buf, len, "%s", c); break;
	}
	return buf;
}

const char *fg_process_label(const char *comm, uint32_t pid, char *buf, size_t len)
{
	return root_label(comm, pid, 0, FG_ROOT_PID, buf, len);
}

const char *fg_root_label(const struct profile_stack *st, enum fg_root root, char *buf, size_t len)
{
	return root_label(st->comm, st->pid, st->tid, root, buf, len);
}

const char *fg_root_name(enum fg_root root)
{
	static const char *const names[] = { "comm", "pid", "tid", "none" };
	return (unsigned)root < 4 ? names[root] : "comm";
}

int fg_root_option(enum fg_root *root, int *given, const char *opt, char *err, size_t errlen)
{
	enum fg_root r = !strcmp(opt, "by-pid") ? FG_ROOT_PID
			 : !strcmp(opt, "by-tid") ? FG_ROOT_TID
			 : !strcmp(opt, "by-comm") ? FG_ROOT_COMM : FG_ROOT_NONE;
	if (*given && *root != r) {
		snprintf(err, errlen, "--by-comm, --by-pid, --by-tid and --no-comm exclude each other");
		return -EINVAL;
	}
	*root = r;
	++*given;
	return 0;
}

const char *fg_node_label(const struct fg_tree *t, uint32_t i, char *buf, size_t len)
{
	const struct fg_node *n = &t->nodes[i];
	const struct profile *p = t->p;
	switch (n->kind) {
	case FG_ROOT:
		snprintf(buf, len, "all");
		return buf;
	case FG_DOMAIN:
		snprintf(buf, len, "%s", p->ndomains ? p->domains[n->dom].name : "host");
		return buf;
	case FG_PROCESS:
		return root_label(n->comm, n->pid, n->tid, t->root, buf, len);
	default:
		return fg_symbol_label(p, n->id, buf, len);
	}
}

void fg_json_str(FILE *f, const char *str)
{
	json_write_str(f, str, JSON_ESC_HTML);
}

void fg_xml_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		unsigned char c = *s;
		switch (c) {
		case '&': fputs("&amp;", f); s++; continue;
		case '<': fputs("&lt;", f); s++; continue;
		case '>': fputs("&gt;", f); s++; continue;
		case '"': fputs("&quot;", f); s++; continue;
		case '\'': fputs("&#39;", f); s++; continue;
		default: break;
		}
		if (c < 0x20) {
			fputc(c == '\t' ? ' ' : '?', f);
			s++;
		} else if (c < 0x80) {
			fputc(c, f);
			s++;
		} else {
			s += utf8_put(f, s, "&#xfffd;");
		}
	}
}

uint64_t fg_sample_ns(const struct profile *p)
{
	if (!p->nevents)
		return 0;
	const struct profile_event *e = &p->events[0];
	if (e->freq)
		return e->period ? 1000000000ull / e->period : 0;
	return e->period;
}

/* ---- the tree ---------------------------------------------------------- */

struct builder {
	struct fg_tree *t;
	size_t cap;
	struct hmap children;    /* parent << 32 | id -> node + 1 */
	struct hmap levels;      /* process-level key -> its index + 1 */
	uint32_t nlevels;
};

/* The index of a stack's process-level key: its command name, (pid), or
 * (pid, tid), interned over the whole tree (the domain is the parent). */
static uint32_t level_id(struct builder *b, const struct profile_stack *st, enum fg_root root)
{
	uintptr_t v;
	if (root == FG_ROOT_COMM) {
		const char *c = st->comm && *st->comm ? st->comm : "[unknown]";
		v = (uintptr_t)strmap_get(&b->levels, c);
		if (!v) {
			v = ++b->nlevels;
			strmap_put(&b->levels, c, (void *)v);
		}
		return (uint32_t)(v - 1);
	}
	uint64_t key = root == FG_ROOT_TID ? (uint64_t)st->pid << 32 | st->tid : st->pid;
	v = (uintptr_t)u64map_get(&b->levels, key);
	if (!v) {
		v = ++b->nlevels;
		u64map_put(&b->levels, key, (void *)v);
	}
	return (uint32_t)(v - 1);
}

/* The child of parent with (kind, id), created when missing. (parent, id)
 * is an exact key: a parent's children are all of one kind (the root's
 * are domains, a domain's processes), or their kind follows from the
 * symbol the id names (kernel or user frame). */
static uint32_t child_get(struct builder *b, uint32_t parent, uint8_t kind, uint32_t id, uint32_t dom)
{
	struct fg_tree *t = b->t;
	uint64_t key = (uint64_t)parent << 32 | id;
	uintptr_t found = (uintptr_t)u64map_get(&b->children, key);
	if (found)
		return (uint32_t)(found - 1);
	xgrow((void **)&t->nodes, &b->cap, t->n + 1, sizeof(*t->nodes));
	uint32_t c = (uint32_t)t->n++;
	u64map_put(&b->children, key, (void *)(uintptr_t)(c + 1));
	struct fg_node *pn = &t->nodes[parent];
	t->nodes[c] = (struct fg_node){
		.parent = parent, .first_child = 0, .next_sibling = pn->first_child,
		.id = id, .kind = kind, .dom = dom, .depth = pn->depth + 1,
	};
	pn->first_child = c;
	if (t->nodes[c].depth > t->max_depth)
		t->max_depth = t->nodes[c].depth;
	return c;
}

static const struct fg_tree *sort_tree;

static int cmp_child(const void *a, const void *b)
{
	const struct fg_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const struct fg_node *y = &sort_tree->nodes[*(const uint32_t *)b];
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct fg_tree *fg_tree_build(const struct profile *p, bool inverted)
{
	return fg_tree_build_root(p, inverted, FG_ROOT_COMM);
}

struct fg_tree *fg_tree_build_root(const struct profile *p, bool inverted, enum fg_root root)
{
	struct fg_tree *t = xcalloc(1, sizeof(*t));
	struct builder b = { .t = t };
	t->p = p;
	t->inverted = inverted;
	t->root = root;
	xgrow((void **)&t->nodes, &b.cap, 1, sizeof(*t->nodes));
	t->nodes[0] = (struct fg_node){ 0 };
	t->n = 1;

	for (size_t s = 0; s < p->nstacks; s++) {
		const struct profile_stack *st = &p->stacks[s];
		const struct profile_domain *pd = profile_domain_by_id(p, st->domain);
		uint32_t dom = pd ? (uint32_t)(pd - p->domains) : 0;
		uint64_t c = st->count;
		t->nodes[0].total += c;
		uint32_t n = child_get(&b, 0, FG_DOMAIN, st->domain, dom);
		t->nodes[n].total += c;
		if (root != FG_ROOT_NONE) {
			n = child_get(&b, n, FG_PROCESS, level_id(&b, st, root), dom);
			t->nodes[n].total += c;
			if (!t->nodes[n].comm) {
				t->nodes[n].comm = st->comm;
				t->nodes[n].pid = root == FG_ROOT_COMM ? 0 : st->pid;
				t->nodes[n].tid = root == FG_ROOT_TID ? st->tid : 0;
			}
		}
		for (uint32_t j = 0; j < st->nframes; j++) {
			uint32_t sym = st->frames[inverted ? st->nframes - 1 - j : j];
			uint8_t kind = p->syms[sym].kernel ? FG_KERNEL : FG_USER;
			n = child_get(&b, n, kind, sym, dom);
			t->nodes[n].total += c;
		}
		t->nodes[n].self += c;
	}
	hmap_release(&b.children);
	hmap_release(&b.levels);

	/* sort each child list: widest first */
	uint32_t *tmp = NULL;
	size_t captmp = 0;
	sort_tree = t;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = 0;
		for (uint32_t c = t->nodes[i].first_child; c; c = t->nodes[c].next_sibling) {
			xgrow((void **)&tmp, &captmp, k + 1, sizeof(*tmp));
			tmp[k++] = c;
		}
		if (k < 2)
			continue;
		qsort(tmp, k, sizeof(*tmp), cmp_child);
		t->nodes[i].first_child = tmp[0];
		for (size_t j = 0; j < k; j++)
			t->nodes[tmp[j]].next_sibling = j + 1 < k ? tmp[j + 1] : 0;
	}
	sort_tree = NULL;
	free(tmp);
	return t;
}

void fg_tree_free(struct fg_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t);
}

/* fg_walk (flamegraph.h): children are sorted widest first, so the
 * first narrow child ends its list. */
size_t fg_walk(const struct fg_tree *t, uint64_t min, void (*fn)(void *, uint32_t), void *arg)
{
	size_t cap = 64, sp = 0, visited = 0;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		fn(arg, i);
		visited++;
		/* push children in reverse so the widest is visited first */
		size_t base = sp;
		for (uint32_t c = t->nodes[i].first_child; c; c = t->nodes[c].next_sibling) {
			if (t->nodes[c].total < min)
				break;
			xgrow((void **)&stack, &cap, sp + 1, sizeof(*stack));
			stack[sp++] = c;
		}
		for (size_t a = base, z = sp; a + 1 < z; a++, z--) {
			uint32_t x = stack[a];
			stack[a] = stack[z - 1];
			stack[z - 1] = x;
		}
	}
	free(stack);
	return visited;
}

static uint64_t min_count(const struct fg_tree *t, double frac)
{
	double m = (double)t->nodes[0].total * frac;
	uint64_t mc = (uint64_t)m;
	if ((double)mc < m)
		mc++;
	return mc ? mc : 1;
}

/* ---- HTML -------------------------------------------------------------- */

struct html_ctx {
	FILE *f;
	const struct fg_tree *t;
	uint32_t *sym_name;      /* symbol -> name index + 1 */
	uint32_t nnames;
	const char **imgs;       /* image strings by index */
	size_t nimgs, capimgs;
	size_t nout;
	/* name table written as we go into a separate buffer */
	char *names;
	size_t names_len;
	FILE *nf;
};

static uint32_t image_index(struct html_ctx *h, const char *img)
{
	/* a handful of images in practice; a linear scan by pointer then string */
	for (size_t i = 0; i < h->nimgs; i++)
		if (h->imgs[i] == img || !strcmp(h->imgs[i], img))
			return (uint32_t)i;
	xgrow((void **)&h->imgs, &h->capimgs, h->nimgs + 1, sizeof(*h->imgs));
	h->imgs[h->nimgs] = img;
	return (uint32_t)h->nimgs++;
}

static uint32_t new_name(struct html_ctx *h, const char *label, int img)
{
	fputs(h->nnames ? ",[" : "[", h->nf);
	fg_json_str(h->nf, label);
	fprintf(h->nf, ",%d]", img);
	return h->nnames++;
}

static void html_node(void *arg, uint32_t i)
{
	struct html_ctx *h = arg;
	const struct fg_node *n = &h->t->nodes[i];
	char buf[512];
	uint32_t name;
	if (n->kind == FG_USER || n->kind == FG_KERNEL) {
		if (!h->sym_name[n->id]) {
			const struct profile_symbol *y = &h->t->p->syms[n->id];
			int img = (int)image_index(h, y->image ? y->image : "");
			h->sym_name[n->id] = new_name(h, fg_symbol_label(h->t->p, n->id, buf, sizeof(buf)), img) + 1;
		}
		name = h->sym_name[n->id] - 1;
	} else {
		name = new_name(h, fg_node_label(h->t, i, buf, sizeof(buf)), -1);
	}
	fprintf(h->f, "%s%" PRIu32 ",%" PRIu32 ",%u,%" PRIu32 ",%" PRIu64, h->nout ? "," : "",
		n->depth, name, n->kind, n->dom, n->total);
	h->nout++;
}

static void write_meta(FILE *f, const struct profile *p, const struct fg_opts *o)
{
	fputs("\"title\":", f);
	fg_json_str(f, o && o->title ? o->title : "Flame graph");
	fputs(",\"subtitle\":", f);
	fg_json_str(f, o && o->subtitle ? o->subtitle : "");
	fprintf(f, ",\"total\":%" PRIu64 ",\"inverted\":%s,\"event\":", p->matched,
		o && o->inverted ? "true" : "false");
	fg_json_str(f, p->nevents ? p->events[0].name : "");
	fputs(",\"domains\":[", f);
	for (size_t d = 0; d < p->ndomains; d++) {
		fputs(d ? ",{\"name\":" : "{\"name\":", f);
		fg_json_str(f, p->domains[d].name);
		fprintf(f, ",\"id\":%" PRIu32 ",\"kind\":", p->domains[d].id);
		fg_json_str(f, dp_domain_kind_name(p->domains[d].kind));
		fprintf(f, ",\"samples\":%" PRIu64 "}", p->domains[d].samples);
	}
	fputc(']', f);
}

const char *fg_page_script(void) { return fg_js; }
const char *fg_page_style(void) { return fg_css; }

void fg_page_head(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"domprof " DOMPROF_VERSION "\">\n<title>", f);
	fg_xml_str(f, title);
	fputs("</title>\n<style>\n", f);
	fputs(fg_css, f);
	fputs("</style>\n</head>\n<body>\n"
	      "<header>\n<h1 id=\"title\"></h1>\n<div id=\"subtitle\"></div>\n"
	      "<div id=\"controls\"><button id=\"reset\" type=\"button\">Reset zoom</button>"
	      "<button id=\"levels\" type=\"button\" hidden>All levels</button>"
	      "<input id=\"search\" type=\"search\" placeholder=\"Search (regular expression)\" "
	      "autocomplete=\"off\" spellcheck=\"false\">"
	      "<button id=\"clear\" type=\"button\">Clear</button>"
	      "<span id=\"matched\"></span></div>\n<div id=\"legend\"></div>\n</header>\n"
	      "<main><div id=\"fg\"></div></main>\n<div id=\"details\">&nbsp;</div>\n"
	      "<div id=\"tip\" hidden></div>\n"
	      "<script type=\"application/json\" id=\"fgdata\">", f);
}

void fg_page_tail(FILE *f)
{
	fputs("</script>\n<script>\n", f);
	fputs(fg_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
}

int flamegraph_data(FILE *f, const struct profile *p, const struct fg_opts *o)
{
	struct fg_tree *t = fg_tree_build_root(p, o && o->inverted, o ? o->root : FG_ROOT_COMM);
	double frac = o && o->min_fraction > 0 ? o->min_fraction : 1e-4;
	uint64_t min = min_count(t, frac);

	fputc('{', f);
	write_meta(f, p, o);
	fprintf(f, ",\"root\":\"%s\",\"minSamples\":%" PRIu64 ",\"nodes\":[",
		fg_root_name(o ? o->root : FG_ROOT_COMM), min);

	struct html_ctx h = { .f = f, .t = t };
	h.sym_name = xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*h.sym_name));
	h.nf = open_memstream(&h.names, &h.names_len);
	if (!h.nf)
		abort();
	size_t kept = fg_walk(t, min, html_node, &h);
	fclose(h.nf);
	fprintf(f, "],\"kept\":%zu,\"treeNodes\":%zu,\"names\":[", kept, t->n);
	fwrite(h.names, 1, h.names_len, f);
	fputs("],\"images\":[", f);
	for (size_t i = 0; i < h.nimgs; i++) {
		if (i)
			fputc(',', f);
		fg_json_str(f, h.imgs[i]);
	}
	fputs("]}", f);
	free(h.names);
	free(h.imgs);
	free(h.sym_name);
	fg_tree_free(t);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

int flamegraph_html(FILE *f, const struct profile *p, const struct fg_opts *o)
{
	fg_page_head(f, o && o->title ? o->title : "Flame graph");
	int rc = flamegraph_data(f, p, o);
	fg_page_tail(f);
	fflush(f);
	return rc ? rc : ferror(f) ? -EIO : 0;
}

/* ---- SVG --------------------------------------------------------------- */

#define SVG_W FG_SVG_W
#define SVG_FRAME_H FG_SVG_FRAME_H
#define SVG_PAD FG_SVG_PAD
#define SVG_TOP FG_SVG_TOP

struct svg_ctx {
	FILE *f;
	const struct fg_tree *t;
	uint64_t *x;             /* left edge of each node, in samples */
	uint64_t *next;          /* next free x among a node's children */
	uint32_t depth;          /* drawn depth (for y) */
	double scale;
};

static unsigned hash_str(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Colours shared in spirit with the page: a hue per domain (host warm,
 * guests cool), kernel frames paler and greyer than user frames. */
int fg_domain_hue(uint32_t dom)
{
	static const int guest_hue[] = { 210, 130, 275, 175, 320, 60 };
	return dom == 0 ? 18 : guest_hue[(dom - 1) % 6];
}

void fg_svg_legend(FILE *f, const char *const *fills, const char *const *texts, size_t n)
{
	double x = FG_SVG_PAD;
	for (size_t i = 0; i < n && x < FG_SVG_W - 60; i++) {
		fprintf(f, "<g class=\"lg\"><rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\" "
			   "stroke=\"#0003\"/><text x=\"%.0f\" y=\"%d\" style=\"font-size:11px\">",
			x, FG_SVG_LEGEND_Y - 9, fills[i], x + 14, FG_SVG_LEGEND_Y);
		fg_xml_str(f, texts[i]);
		fputs("</text></g>\n", f);
		x += 14 + 6.5 * (double)strlen(texts[i]) + 14;
	}
}

/* The normal graph's legend: each domain with samples, user and kernel. */
static void svg_legend(FILE *f, const struct profile *p)
{
	const char *fills[16], *texts[16];
	char fb[16][32], tb[16][96];
	size_t n = 0;
	for (size_t d = 0; d < (p->ndomains ? p->ndomains : 1) && n + 2 <= 14; d++) {
		if (p->ndomains && !p->domains[d].samples)
			continue;
		const char *name = p->ndomains ? p->domains[d].name : "host";
		int hue = fg_domain_hue((uint32_t)d);
		snprintf(fb[n], sizeof(fb[n]), "hsl(%d,85%%,60%%)", hue);
		snprintf(tb[n], sizeof(tb[n]), "%.80s user", name);
		fills[n] = fb[n], texts[n] = tb[n], n++;
		snprintf(fb[n], sizeof(fb[n]), "hsl(%d,30%%,78%%)", hue);
		snprintf(tb[n], sizeof(tb[n]), "%.80s kernel", name);
		fills[n] = fb[n], texts[n] = tb[n], n++;
	}
	fills[n] = "hsl(0,0%,80%)", texts[n++] = "all; domain and process frames pale";
	fg_svg_legend(f, fills, texts, n);
}

static void node_colour(const struct fg_node *n, const char *label, char *buf, size_t len)
{
	int hue = fg_domain_hue(n->dom);
	unsigned v = hash_str(label);
	int jit = (int)(v % 30) - 15;
	switch (n->kind) {
	case FG_ROOT: snprintf(buf, len, "hsl(0,0%%,80%%)"); break;
	case FG_DOMAIN: snprintf(buf, len, "hsl(%d,30%%,72%%)", hue); break;
	case FG_PROCESS: snprintf(buf, len, "hsl(%d,25%%,82%%)", hue); break;
	case FG_KERNEL: snprintf(buf, len, "hsl(%d,30%%,%d%%)", hue + jit / 2, 74 + (int)(v >> 8) % 10); break;
	default: snprintf(buf, len, "hsl(%d,85%%,%d%%)", hue + jit, 55 + (int)(v >> 8) % 12); break;
	}
}

static void svg_node(void *arg, uint32_t i)
{
	struct svg_ctx *s = arg;
	const struct fg_node *n = &s->t->nodes[i];
	FILE *f = s->f;
	if (i) {
		s->x[i] = s->next[n->parent];
		s->next[n->parent] += n->total;
	}
	s->next[i] = s->x[i];
	char buf[512], col[48];
	const char *label = fg_node_label(s->t, i, buf, sizeof(buf));
	node_colour(n, label, col, sizeof(col));
	double x = SVG_PAD + (double)s->x[i] * s->scale;
	double w = (double)n->total * s->scale;
	double y = s->t->inverted ? SVG_TOP + (double)n->depth * SVG_FRAME_H
				  : SVG_TOP + (double)(s->depth - n->depth) * SVG_FRAME_H;
	uint64_t all = s->t->nodes[0].total;
	fprintf(f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-k=\"%u\"><title>",
		s->x[i], n->total, n->kind);
	fg_xml_str(f, label);
	fprintf(f, " (%" PRIu64 " samples, %.2f%%", n->total, all ? 100.0 * (double)n->total / (double)all : 0.0);
	if (n->kind >= FG_USER) {
		fputs(", ", f);
		fg_xml_str(f, s->t->p->syms[n->id].image);
		if (n->kind == FG_KERNEL)
			fputs(", kernel", f);
	}
	if (n->kind >= FG_DOMAIN && s->t->p->ndomains) {
		fputs(", domain ", f);
		fg_xml_str(f, s->t->p->domains[n->dom].name);
	}
	fprintf(f, ")</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>"
		   "<text x=\"%.2f\" y=\"%.1f\">", x, y, w, SVG_FRAME_H - 1, col, x + 3, y + 11.5);
	fg_svg_label(f, label, w);
	fputs("</text></g>\n", f);
}

static void svg_maxdepth(void *arg, uint32_t i)
{
	struct svg_ctx *s = arg;
	if (s->t->nodes[i].depth > s->depth)
		s->depth = s->t->nodes[i].depth;
}

/* The script of a standalone SVG: zoom on click, and the window scrolled
 * to the base when the picture opens taller than the window (root at the
 * bottom: the wide frames would be below the first screen; a picture
 * cannot draw fewer levels, so it opens where they are). */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function(){\n"
	"'use strict';\n"
	"var W=" "1180" ",P=10,svg=document.documentElement,gs=[].slice.call(document.querySelectorAll('g.f'));\n"
	"function fit(g,w){var t=g.querySelector('text'),l=g.getAttribute('data-l');\n"
	" if(l===null){l=g.querySelector('title').textContent.replace(/ \\([^()]*\\)$/,'');g.setAttribute('data-l',l);}\n"
	" var n=Math.floor((w-6)/7);t.textContent=w<20?'':(n>=l.length?l:(n>3?l.slice(0,n-2)+'..':''));}\n"
	"function place(g,x,w){[].forEach.call(g.querySelectorAll('rect'),function(r){r.setAttribute('x',x);r.setAttribute('width',w);});}\n"
	"function zoom(z){var zx=+z.getAttribute('data-x'),zw=+z.getAttribute('data-w'),zy=+z.querySelector('rect').getAttribute('y');\n"
	" var inv=svg.getAttribute('data-inverted')==='1',s=W/zw;\n"
	" gs.forEach(function(g){var x=+g.getAttribute('data-x'),w=+g.getAttribute('data-w'),r=g.querySelector('rect'),t=g.querySelector('text'),y=+r.getAttribute('y');\n"
	"  var below=inv?y<zy:y>zy, inside=x>=zx&&x+w<=zx+zw;\n"
	"  if(below&&x<=zx&&x+w>=zx+zw){place(g,P,W);t.setAttribute('x',P+3);g.style.opacity=0.6;g.style.display='';fit(g,W);return;}\n"
	"  if(!inside||below){g.style.display='none';return;}\n"
	"  var nx=P+(x-zx)*s,nw=w*s;g.style.display='';g.style.opacity=1;place(g,nx,nw);t.setAttribute('x',nx+3);fit(g,nw);});\n"
	"}\n"
	"svg.addEventListener('click',function(e){var g=e.target.closest&&e.target.closest('g.f');if(g)zoom(g);else if(e.target.id==='reset')zoom(gs[0]);});\n"
	"function base(){if(svg.getAttribute('data-inverted')!=='1'&&window.scrollTo&&svg.getBoundingClientRect().height>window.innerHeight)window.scrollTo(0,1e9);}\n"
	"base();window.addEventListener('load',base);\n"
	"})();\n"
	"]]></script>\n";

void fg_svg_head(FILE *f, int h, bool inverted, const char *title, const char *subtitle)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" data-inverted=\"%d\">\n",
		SVG_W, h, SVG_W, h, inverted ? 1 : 0);
	fputs("<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000;pointer-events:none}"
	      "g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
	      "#title{font-size:17px;text-anchor:middle}#sub{font-size:12px;text-anchor:middle;fill:#555}"
	      "#reset{cursor:pointer;fill:#04c;pointer-events:all}</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fafafa\"/>\n", SVG_W, h);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">", SVG_W / 2);
	fg_xml_str(f, title);
	fprintf(f, "</text>\n<text id=\"sub\" x=\"%d\" y=\"42\">", SVG_W / 2);
	if (subtitle)
		fg_xml_str(f, subtitle);
	fprintf(f, "</text>\n<text id=\"reset\" x=\"%d\" y=\"24\">Reset zoom</text>\n", SVG_PAD);
}

void fg_svg_tail(FILE *f)
{
	fputs(svg_script, f);
	fputs("</svg>\n", f);
}

void fg_svg_label(FILE *f, const char *label, double w)
{
	/* about 7 px per character at 12 px */
	size_t fit = w > 20 ? (size_t)((w - 6) / 7) : 0;
	size_t ll = strlen(label);
	if (fit >= ll) {
		fg_xml_str(f, label);
	} else if (fit > 3) {
		char cut[512];
		snprintf(cut, sizeof(cut), "%.*s..", (int)(fit - 2), label);
		fg_xml_str(f, cut);
	}
}

int flamegraph_svg(FILE *f, const struct profile *p, const struct fg_opts *o)
{
	struct fg_tree *t = fg_tree_build_root(p, o && o->inverted, o ? o->root : FG_ROOT_COMM);
	double frac = o && o->min_fraction > 0 ? o->min_fraction : 1e-3;
	uint64_t min = min_count(t, frac);
	struct svg_ctx s = { .f = f, .t = t };
	fg_walk(t, min, svg_maxdepth, &s);
	s.x = xcalloc(t->n, sizeof(*s.x));
	s.next = xcalloc(t->n, sizeof(*s.next));
	uint64_t all = t->nodes[0].total;
	s.scale = all ? (double)(SVG_W - 2 * SVG_PAD) / (double)all : 0;
	int h = SVG_TOP + (int)(s.depth + 1) * SVG_FRAME_H + 30;
	const char *title = o && o->title ? o->title : "Flame graph";

	fg_svg_head(f, h, o && o->inverted, title, o ? o->subtitle : NULL);
	svg_legend(f, p);
	if (!all)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No samples match.</text>\n", SVG_W / 2 - 60, SVG_TOP + 30);
	else
		fg_walk(t, min, svg_node, &s);
	fg_svg_tail(f);
	free(s.x);
	free(s.next);
	fg_tree_free(t);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
