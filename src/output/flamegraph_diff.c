// SPDX-License-Identifier: MIT
/*
 * Differential flame graphs (`domprof diff A B --flamegraph OUT`): the
 * call trees of two profiles (flamegraph.c's fg_tree, same process level
 * on both sides) merged on paths of frame labels, written as the flame
 * graph page (the same script, style and controls, flamegraph.js's diff
 * mode) or as an SVG. flamegraph.h states what a frame's numbers and
 * width are.
 *
 * Frames meet on (parent, kind, image, label) with the image normalised
 * as the text diff does (analysis/diff.h: every kernel image of a domain
 * is "[kernel]"), so a passive and an active view of one guest kernel
 * meet; domain frames meet by name, or all under the one domain label
 * when the two sides chose different domains. The merged nodes are made
 * in the trees' index order, where a parent always precedes its
 * children, so one forward pass per side builds the merged tree and one
 * backward pass sums the widths.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "output/flamegraph.h"
#include "util/hmap.h"
#include "util/xalloc.h"

struct dnode {
	uint32_t parent, first_child, next_sibling, depth;
	uint8_t kind;             /* enum fg_kind */
	uint32_t dom;             /* index of its domain frame among the domain frames */
	uint64_t ta, tb, sa, sb;  /* A and B: samples at or below, ending here */
	double w;                 /* drawn width, in B's samples */
	char *key;                /* "KIND LEN:IMAGE LABEL": the merge key (owned) */
	const char *label;        /* into key */
	const char *image;        /* borrowed from a profile; "" for levels */
};

struct dtree {
	struct dnode *v;
	size_t n, cap;
	struct hmap kids;         /* (parent, key) -> node + 1 */
	uint32_t ndoms;
	const char **dom_names;   /* domain frame labels, by dom index */
	size_t capdoms;
	uint32_t max_depth;
};

/* The merged child of parent keyed as node i of t is, made when new. */
static uint32_t merge_child(struct dtree *d, uint32_t parent, const struct fg_tree *t, uint32_t i,
			    const struct fg_diff_opts *o)
{
	const struct fg_node *n = &t->nodes[i];
	char buf[512];
	const char *label, *image = "";
	if (n->kind == FG_DOMAIN && o->cross_domain)
		label = o->domain_label ? o->domain_label : "*";
	else
		label = fg_node_label(t, i, buf, sizeof(buf));
	if (n->kind >= FG_USER) {
		const struct profile_symbol *y = &t->p->syms[n->id];
		image = y->image ? y->image : "";
		/* unknown code is labelled by its image: normalised too */
		if (!((y->known || y->fde) && y->symbol && *y->symbol)) {
			snprintf(buf, sizeof(buf), "[unknown] %s", diff_norm_image(y->image, y->kernel));
			label = buf;
		}
	}
	const char *nimg = n->kind >= FG_USER ? diff_norm_image(image, n->kind == FG_KERNEL) : "";
	/* KIND, the image's length, ':', the image, the label: no label or
	 * image (bytes from the file) can make two keys alike */
	char *key = NULL;
	int pre = snprintf(NULL, 0, "%c%zu:%s", '0' + n->kind, strlen(nimg), nimg);
	if (pre < 0 || asprintf(&key, "%c%zu:%s%s", '0' + n->kind, strlen(nimg), nimg, label) < 0)
		abort();
	uintptr_t found = (uintptr_t)hmap_get(&d->kids, parent, key);
	if (found) {
		free(key);
		return (uint32_t)(found - 1);
	}
	xgrow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v));
	uint32_t c = (uint32_t)d->n++;
	struct dnode *pn = &d->v[parent];
	d->v[c] = (struct dnode){
		.parent = parent, .next_sibling = pn->first_child, .depth = pn->depth + 1,
		.kind = n->kind, .dom = pn->dom, .key = key,
		.label = key + pre, .image = image,
	};
	pn->first_child = c;
	if (n->kind == FG_DOMAIN) {
		xgrow((void **)&d->dom_names, &d->capdoms, d->ndoms + 1, sizeof(*d->dom_names));
		d->dom_names[d->ndoms] = d->v[c].label;
		d->v[c].dom = d->ndoms++;
	}
	if (d->v[c].depth > d->max_depth)
		d->max_depth = d->v[c].depth;
	hmap_put(&d->kids, parent, key, (void *)(uintptr_t)(c + 1));
	return c;
}

static void merge_side(struct dtree *d, const struct fg_tree *t, int side, const struct fg_diff_opts *o)
{
	uint32_t *map = xmalloc((t->n ? t->n : 1) * sizeof(*map));
	map[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct fg_node *n = &t->nodes[i];
		if (i && o->kernel_frames && n->kind == FG_USER) {
			/* left out: its kernel frames hang on its parent, which
			 * already counts their samples */
			map[i] = map[n->parent];
			continue;
		}
		uint32_t m = i ? merge_child(d, map[n->parent], t, (uint32_t)i, o) : 0;
		map[i] = m;
		if (side) {
			d->v[m].tb += t->nodes[i].total;
			d->v[m].sb += t->nodes[i].self;
		} else {
			d->v[m].ta += t->nodes[i].total;
			d->v[m].sa += t->nodes[i].self;
		}
	}
	free(map);
}

static const struct dtree *sort_d;

static int cmp_dchild(const void *x, const void *y)
{
	const struct dnode *a = &sort_d->v[*(const uint32_t *)x], *b = &sort_d->v[*(const uint32_t *)y];
	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Widths (B's samples, plus A's scaled for what only A has), and each
 * child list sorted widest first. */
static void finish(struct dtree *d, double scale)
{
	for (size_t i = d->n; i-- > 0;) {
		struct dnode *n = &d->v[i];
		if (!n->tb)
			n->w = (double)n->ta * scale;
		else
			n->w += (double)n->tb;  /* n->w held the children's extra width */
		if (i) {
			struct dnode *p = &d->v[n->parent];
			double extra = n->w - (double)n->tb;
			if (p->tb && extra > 0)
				p->w += extra;
		}
	}
	uint32_t *tmp = NULL;
	size_t cap = 0;
	sort_d = d;
	for (size_t i = 0; i < d->n; i++) {
		size_t k = 0;
		for (uint32_t c = d->v[i].first_child; c; c = d->v[c].next_sibling) {
			xgrow((void **)&tmp, &cap, k + 1, sizeof(*tmp));
			tmp[k++] = c;
		}
		if (k < 2)
			continue;
		qsort(tmp, k, sizeof(*tmp), cmp_dchild);
		d->v[i].first_child = tmp[0];
		for (size_t j = 0; j < k; j++)
			d->v[tmp[j]].next_sibling = j + 1 < k ? tmp[j + 1] : 0;
	}
	sort_d = NULL;
	free(tmp);
}

/* The merged tree of a and b (never NULL). */
static struct dtree *dtree_build(const struct profile *a, const struct profile *b,
				 const struct fg_diff_opts *o)
{
	struct dtree *d = xcalloc(1, sizeof(*d));
	xgrow((void **)&d->v, &d->cap, 1, sizeof(*d->v));
	d->v[0] = (struct dnode){ .key = NULL, .label = "all", .image = "" };
	d->n = 1;
	struct fg_tree *tb = fg_tree_build_root(b, false, o->root);
	struct fg_tree *ta = fg_tree_build_root(a, false, o->root);
	merge_side(d, tb, 1, o);   /* B first: its frames come first in the name table */
	merge_side(d, ta, 0, o);
	double scale = 1.0;
	if (!o->absolute && d->v[0].ta && d->v[0].tb)
		scale = (double)d->v[0].tb / (double)d->v[0].ta;
	finish(d, scale);
	fg_tree_free(ta);
	fg_tree_free(tb);
	hmap_release(&d->kids);
	return d;
}

static void dtree_free(struct dtree *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].key);
	free(d->v);
	free(d->dom_names);
	free(d);
}

/* Pre-order walk of the nodes at least min wide (children widest first). */
static size_t dwalk(const struct dtree *d, double min, void (*fn)(void *, uint32_t), void *arg)
{
	size_t cap = 64, sp = 0, visited = 0;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		fn(arg, i);
		visited++;
		size_t base = sp;
		for (uint32_t c = d->v[i].first_child; c; c = d->v[c].next_sibling) {
			if (d->v[c].w < min)
				break;
			xgrow((void **)&stack, &cap, sp + 1, sizeof(*stack));
			stack[sp++] = c;
		}
		for (size_t x = base, z = sp; x + 1 < z; x++, z--) {
			uint32_t t = stack[x];
			stack[x] = stack[z - 1];
			stack[z - 1] = t;
		}
	}
	free(stack);
	return visited;
}

static double min_width(const struct dtree *d, const struct fg_diff_opts *o, double def)
{
	double frac = o->min_fraction > 0 ? o->min_fraction : def;
	double m = d->v[0].w * frac;
	return m > 0 ? m : 1e-9;
}

/* ---- HTML -------------------------------------------------------------- */

struct dhtml {
	FILE *f, *nf;
	const struct dtree *d;
	struct hmap names;        /* label + image -> name index + 1 */
	struct hmap imgs;         /* image -> index + 1 */
	const char **img_list;
	size_t nimgs, capimgs;
	uint32_t nnames;
	size_t nout;
	char *nbuf;
	size_t nlen;
};

static int dimage(struct dhtml *h, const char *img)
{
	if (!*img)
		return -1;
	uintptr_t v = (uintptr_t)strmap_get(&h->imgs, img);
	if (!v) {
		xgrow((void **)&h->img_list, &h->capimgs, h->nimgs + 1, sizeof(*h->img_list));
		h->img_list[h->nimgs++] = img;
		v = h->nimgs;
		strmap_put(&h->imgs, img, (void *)v);
	}
	return (int)v - 1;
}

static void dhtml_node(void *arg, uint32_t i)
{
	struct dhtml *h = arg;
	const struct dnode *n = &h->d->v[i];
	int img = dimage(h, n->image);
	/* one name per (label, image): key the table by the node's own key
	 * string's label and the image index */
	uintptr_t v = (uintptr_t)hmap_get(&h->names, (uint64_t)(img + 1), n->label);
	if (!v) {
		fputs(h->nnames ? ",[" : "[", h->nf);
		fg_json_str(h->nf, n->label);
		fprintf(h->nf, ",%d]", img);
		v = ++h->nnames;
		hmap_put(&h->names, (uint64_t)(img + 1), n->label, (void *)v);
	}
	fprintf(h->f, "%s%" PRIu32 ",%" PRIu32 ",%u,%" PRIu32 ",%.6g,%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64, h->nout ? "," : "", n->depth, (uint32_t)(v - 1), n->kind, n->dom, n->w,
		n->ta, n->tb, n->sa, n->sb);
	h->nout++;
}

int flamegraph_diff_data(FILE *f, const struct profile *a, const struct profile *b,
			 const struct fg_diff_opts *o)
{
	static const struct fg_diff_opts none = { 0 };
	if (!o)
		o = &none;
	struct dtree *d = dtree_build(a, b, o);
	double min = min_width(d, o, 1e-4);
	fputs("{\"title\":", f);
	fg_json_str(f, o->title ? o->title : "Differential flame graph");
	fputs(",\"subtitle\":", f);
	fg_json_str(f, o->subtitle ? o->subtitle : "");
	fprintf(f, ",\"total\":%" PRIu64 ",\"inverted\":false,\"event\":", b->matched);
	fg_json_str(f, b->nevents ? b->events[0].name : "");
	fputs(",\"domains\":[", f);
	for (uint32_t k = 0; k < d->ndoms; k++) {
		fputs(k ? ",{\"name\":" : "{\"name\":", f);
		fg_json_str(f, d->dom_names[k]);
		fputs(",\"samples\":1}", f);
	}
	fputs("],\"diff\":{\"a\":", f);
	fg_json_str(f, o->name_a ? o->name_a : "A");
	fputs(",\"b\":", f);
	fg_json_str(f, o->name_b ? o->name_b : "B");
	fprintf(f, ",\"totalA\":%" PRIu64 ",\"totalB\":%" PRIu64 ",\"absolute\":%s}", d->v[0].ta, d->v[0].tb,
		o->absolute ? "true" : "false");
	fprintf(f, ",\"root\":\"%s\",\"minSamples\":%.6g,\"nodes\":[", fg_root_name(o->root), min);

	struct dhtml h = { .f = f, .d = d };
	h.nf = open_memstream(&h.nbuf, &h.nlen);
	if (!h.nf)
		abort();
	size_t kept = dwalk(d, min, dhtml_node, &h);
	fclose(h.nf);
	fprintf(f, "],\"kept\":%zu,\"treeNodes\":%zu,\"names\":[", kept, d->n);
	fwrite(h.nbuf, 1, h.nlen, f);
	fputs("],\"images\":[", f);
	for (size_t i = 0; i < h.nimgs; i++) {
		if (i)
			fputc(',', f);
		fg_json_str(f, h.img_list[i]);
	}
	fputs("]}", f);
	free(h.nbuf);
	free(h.img_list);
	hmap_release(&h.names);
	hmap_release(&h.imgs);
	dtree_free(d);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

int flamegraph_diff_html(FILE *f, const struct profile *a, const struct profile *b,
			 const struct fg_diff_opts *o)
{
	fg_page_head(f, o && o->title ? o->title : "Differential flame graph");
	int rc = flamegraph_diff_data(f, a, b, o);
	fg_page_tail(f);
	fflush(f);
	return rc ? rc : ferror(f) ? -EIO : 0;
}

/* ---- SVG --------------------------------------------------------------- */

struct dsvg {
	FILE *f;
	const struct dtree *d;
	double *x, *next;
	uint32_t depth;
	double scale, maxchg;
	const struct fg_diff_opts *o;
};

/* The change of node n: B's share minus A's in percentage points, or
 * B - A in samples with absolute. */
static double change(const struct dtree *d, const struct dnode *n, bool absolute)
{
	if (absolute)
		return (double)n->tb - (double)n->ta;
	double fa = d->v[0].ta ? (double)n->ta / (double)d->v[0].ta : 0;
	double fb = d->v[0].tb ? (double)n->tb / (double)d->v[0].tb : 0;
	return 100.0 * (fb - fa);
}

static void dsvg_max(void *arg, uint32_t i)
{
	struct dsvg *s = arg;
	const struct dnode *n = &s->d->v[i];
	if (n->depth > s->depth)
		s->depth = n->depth;
	double c = fabs(change(s->d, n, s->o->absolute));
	if (i && c > s->maxchg)
		s->maxchg = c;
}

static void dsvg_node(void *arg, uint32_t i)
{
	struct dsvg *s = arg;
	const struct dtree *d = s->d;
	const struct dnode *n = &d->v[i];
	FILE *f = s->f;
	if (i) {
		s->x[i] = s->next[n->parent];
		s->next[n->parent] += n->w;
	}
	s->next[i] = s->x[i];
	double c = change(d, n, s->o->absolute);
	double t = s->maxchg > 0 ? c / s->maxchg : 0;
	if (t > 1) t = 1;
	if (t < -1) t = -1;
	char col[64];
	/* the page's colours (flamegraph.js diffColour) */
	if (fabs(t) < 0.005)
		snprintf(col, sizeof(col), "hsl(0,0%%,88%%)");
	else
		snprintf(col, sizeof(col), "hsl(%d,80%%,%.0f%%)", t > 0 ? 0 : 220, 90 - 42 * fabs(t));
	double x = FG_SVG_PAD + s->x[i] * s->scale, w = n->w * s->scale;
	double y = FG_SVG_TOP + (double)(s->depth - n->depth) * FG_SVG_FRAME_H;
	const char *unit = s->o->absolute ? "samples" : "points";
	fprintf(f, "<g class=\"f\" data-x=\"%.6g\" data-w=\"%.6g\" data-k=\"%u\"><title>", s->x[i], n->w, n->kind);
	fg_xml_str(f, n->label);
	double pa = d->v[0].ta ? 100.0 * (double)n->ta / (double)d->v[0].ta : 0;
	double pb = d->v[0].tb ? 100.0 * (double)n->tb / (double)d->v[0].tb : 0;
	fprintf(f, " (A %" PRIu64 " samples %.2f%%, B %" PRIu64 " samples %.2f%%, change %+.2f %s%s)</title>",
		n->ta, pa, n->tb, pb, c, unit, !n->tb ? ", only in A" : !n->ta ? ", only in B" : "");
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"%s/>"
		   "<text x=\"%.2f\" y=\"%.1f\">", x, y, w, FG_SVG_FRAME_H - 1, col,
		n->tb ? "" : " stroke=\"#2050c0\" stroke-dasharray=\"3,2\" fill-opacity=\"0.45\"", x + 3, y + 11.5);
	fg_svg_label(f, n->label, w);
	fprintf(f, "</text><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"2\" fill=\"hsl(%d,70%%,42%%)\"/></g>\n",
		x, y + FG_SVG_FRAME_H - 3, w, fg_domain_hue(n->dom));
}

int flamegraph_diff_svg(FILE *f, const struct profile *a, const struct profile *b,
			const struct fg_diff_opts *o)
{
	static const struct fg_diff_opts none = { 0 };
	if (!o)
		o = &none;
	struct dtree *d = dtree_build(a, b, o);
	double min = min_width(d, o, 1e-3);
	struct dsvg s = { .f = f, .d = d, .o = o };
	dwalk(d, min, dsvg_max, &s);
	s.x = xcalloc(d->n, sizeof(*s.x));
	s.next = xcalloc(d->n, sizeof(*s.next));
	s.scale = d->v[0].w > 0 ? (double)(FG_SVG_W - 2 * FG_SVG_PAD) / d->v[0].w : 0;
	int h = FG_SVG_TOP + (int)(s.depth + 1) * FG_SVG_FRAME_H + 30;
	fg_svg_head(f, h, false, o->title ? o->title : "Differential flame graph", o->subtitle);
	static const char *const fills[] = { "hsl(0,80%,50%)", "hsl(220,80%,50%)", "hsl(0,0%,88%)", "#c9d6f2" };
	const char *texts[] = { "hotter in B than in A", "colder in B", "unchanged",
				"only in A (dashed, drawn from A)" };
	fg_svg_legend(f, fills, texts, 4);
	if (d->v[0].w <= 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No samples match.</text>\n", FG_SVG_W / 2 - 60, FG_SVG_TOP + 30);
	else
		dwalk(d, min, dsvg_node, &s);
	fg_svg_tail(f);
	free(s.x);
	free(s.next);
	dtree_free(d);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
