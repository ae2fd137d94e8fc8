/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs and standard exports (`domprof flamegraph`, `domprof
 * export`). Every function here reads only the aggregated profile
 * (analysis/profile.h, loaded with opts.stacks = true) and writes to a
 * caller-owned FILE; none prints diagnostics or exits.
 *
 * One stack of the profile becomes the path
 *     all ; DOMAIN ; PROCESS ; outermost caller ; ... ; leaf
 * (a sample without a call chain is a path ending in its single leaf
 * frame). The process level is chosen by enum fg_root: by default the
 * command name, so every run of one program is one tower (FlameGraph's
 * stackcollapse scripts do the same); "COMM-PID" or "COMM-PID/TID" to
 * split per process or thread (their --pid / --tid); or no level at
 * all. The same frame labels are used by every format: a known symbol
 * is its (demangled) name, a function named only by its unwind-table
 * FDE is that name ("IMAGE+0xSTART", docs/symbols.md), an unknown one
 * is "[unknown] IMAGE" so that unknown code of different images stays
 * apart.
 *
 * Owner: the flame graph / export engineer (src/output/flamegraph.c,
 * folded.c, pprof.c, speedscope.c, export_json.c). Layouts of the JSON
 * and folded outputs are documented in docs/export.md and docs/flamegraph.md.
 */
#ifndef DOMPROF_OUTPUT_FLAMEGRAPH_H
#define DOMPROF_OUTPUT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/profile.h"

/* ---- The merged call tree ------------------------------------------ */

/* The level under each domain (flamegraph/export --by-pid, --by-tid,
 * --no-comm; docs/flamegraph.md). Zero is the default. */
enum fg_root {
	FG_ROOT_COMM = 0,       /* "COMM": merged across pids */
	FG_ROOT_PID = 1,        /* "COMM-PID" */
	FG_ROOT_TID = 2,        /* "COMM-PID/TID" (the profile loaded with opts.by_tid) */
	FG_ROOT_NONE = 3,       /* no process level: frames right on the domain */
};

/* The process-level label of a stack under root ("" for FG_ROOT_NONE),
 * written into buf (always NUL-terminated). */
const char *fg_root_label(const struct profile_stack *st, enum fg_root root, char *buf, size_t len);
/* "comm", "pid", "tid" or "none" (JSON exports say which was used). */
const char *fg_root_name(enum fg_root root);

/* The option OPT ("by-comm", "by-pid", "by-tid" or "no-comm", without
 * dashes) into *root; *given counts the options seen. Returns 0, or
 * -EINVAL with a one-line reason in err when another of them was given
 * before (they exclude each other). */
int fg_root_option(enum fg_root *root, int *given, const char *opt, char *err, size_t errlen);

enum fg_kind {
	FG_ROOT = 0,            /* "all" */
	FG_DOMAIN = 1,          /* a domain: host, vm1, ... */
	FG_PROCESS = 2,         /* the process level inside a domain (enum fg_root) */
	FG_USER = 3,            /* a frame of user (or guest user) code */
	FG_KERNEL = 4,          /* a frame of kernel / guest kernel code */
};

struct fg_node {
	uint32_t parent;        /* index; the root is its own parent (0) */
	uint32_t first_child;   /* 0 = none (the root is never a child) */
	uint32_t next_sibling;  /* 0 = none */
	uint32_t id;            /* FG_DOMAIN: domain id; FG_PROCESS: an index of the
				 * distinct process-level keys; frames: symbol index */
	uint8_t kind;           /* enum fg_kind */
	uint32_t dom;           /* index into profile.domains of the enclosing domain (root: 0) */
	uint32_t depth;         /* root 0, domain 1, process 2, first frame 3 (2 with
				 * FG_ROOT_NONE) */
	uint64_t total;         /* samples at or below this node */
	uint64_t self;          /* samples ending exactly here */
	const char *comm;       /* FG_PROCESS: command name (borrowed from the profile) */
	uint32_t pid, tid;      /* FG_PROCESS: with FG_ROOT_PID / FG_ROOT_TID (else 0) */
};

/* The call tree of a profile: nodes[0] is the root; children are sorted
 * by total descending (then label), so the widest frame is leftmost. */
struct fg_tree {
	const struct profile *p;  /* borrowed; must outlive the tree */
	struct fg_node *nodes;
	size_t n;
	uint32_t max_depth;
	bool inverted;
	enum fg_root root;
};

/*
 * Build the tree of p->stacks. inverted: frames leaf-first below the
 * process (an icicle/callee view: the hottest functions at the top
 * level). fg_tree_build uses the default process level (FG_ROOT_COMM).
 * Returns a heap tree (xmalloc: never NULL); free with fg_tree_free.
 */
struct fg_tree *fg_tree_build(const struct profile *p, bool inverted);
struct fg_tree *fg_tree_build_root(const struct profile *p, bool inverted, enum fg_root root);
void fg_tree_free(struct fg_tree *t);

/* The label of node i, written into buf (always NUL-terminated). */
const char *fg_node_label(const struct fg_tree *t, uint32_t i, char *buf, size_t len);

/* Frame label of a symbol, see above. Borrowed from the profile, or
 * written into buf for unknown symbols. */
const char *fg_symbol_label(const struct profile *p, uint32_t sym, char *buf, size_t len);

/* Process label "COMM-PID" ("[unknown]" when the comm was never seen). */
const char *fg_process_label(const char *comm, uint32_t pid, char *buf, size_t len);

/* Pre-order walk of the nodes at least min samples wide (children widest
 * first; the first narrow child ends its list): fn(arg, node) for each.
 * Returns the number of nodes visited. */
size_t fg_walk(const struct fg_tree *t, uint64_t min, void (*fn)(void *, uint32_t), void *arg);

/* A JSON string literal of s (valid UTF-8: bad bytes become U+FFFD; '<',
 * '>' and '&' are \u-escaped so the text is safe inside an HTML <script>). */
void fg_json_str(FILE *f, const char *s);

/* ---- Flame graph ---------------------------------------------------- */

struct fg_opts {
	const char *title;      /* NULL = "Flame graph: FILE" */
	const char *subtitle;   /* a line under the title (filters, counts), may be NULL */
	bool inverted;          /* icicle: root at the top, callees first */
	enum fg_root root;      /* the process level (the profile needs opts.by_tid
				 * for FG_ROOT_TID) */
	/* Nodes narrower than this fraction of all samples are merged into
	 * their parent's self area before writing (0 = the default: 1e-4 for
	 * HTML, 1e-3 for SVG). The HTML page also skips frames narrower than
	 * half a pixel when drawing. */
	double min_fraction;
};

/* Self-contained HTML page (inline script, style and data; no network).
 * Returns 0 or -EIO. It is fg_page_head + flamegraph_data + fg_page_tail. */
int flamegraph_html(FILE *f, const struct profile *p, const struct fg_opts *o);

/*
 * The parts of the page, for pages that embed a flame graph (the HTML
 * report): flamegraph_data writes the JSON document the page script
 * reads from <script type="application/json" id="fgdata"> (layout in
 * docs/flamegraph.md: a name table and a flat pre-order node list);
 * fg_page_head writes the document up to and including that element's
 * opening tag (style, title, controls, legend, #fg, #tip), fg_page_tail
 * closes it and adds the script. fg_page_script / fg_page_style are the
 * compiled-in script and style (static strings) for a page that lays out
 * those elements itself; the script draws into #fg and reads #search,
 * #reset, #clear, #matched, #legend, #tip, #details, #title, #subtitle.
 */
int flamegraph_data(FILE *f, const struct profile *p, const struct fg_opts *o);
void fg_page_head(FILE *f, const char *title);
void fg_page_tail(FILE *f);
const char *fg_page_script(void);
const char *fg_page_style(void);
/* XML/HTML text and attribute escaping (bad UTF-8 becomes U+FFFD). */
void fg_xml_str(FILE *f, const char *s);
/* Standalone SVG (rectangles with <title> tooltips, a small zoom script).
 * Returns 0 or -EIO. */
int flamegraph_svg(FILE *f, const struct profile *p, const struct fg_opts *o);
/* The SVG's frame (for the differential SVG): the document, style,
 * title, subtitle and "Reset zoom" of a drawing h pixels high, and its
 * zoom script and end; fg_svg_label writes a frame's label cut to a box
 * w pixels wide. Frames are <g class="f" data-x data-w> with a <title>,
 * a <rect> and a <text>, x and w in samples (any unit the widths share). */
void fg_svg_head(FILE *f, int h, bool inverted, const char *title, const char *subtitle);
void fg_svg_tail(FILE *f);
void fg_svg_label(FILE *f, const char *label, double w);
/* A row of n colour swatches named by texts, under the subtitle. */
void fg_svg_legend(FILE *f, const char *const *fills, const char *const *texts, size_t n);
/* The hue of the domain at index dom of the profile's domains (host warm,
 * each guest its own cool hue), as the page script's domHue. */
int fg_domain_hue(uint32_t dom);
#define FG_SVG_W 1200
#define FG_SVG_FRAME_H 16
#define FG_SVG_PAD 10
#define FG_SVG_LEGEND_Y 60
#define FG_SVG_TOP 72

/* ---- Differential flame graph (`domprof diff --flamegraph`) ---------- */

/*
 * The flame graph of B with each frame coloured by its change against A
 * (docs/flamegraph.md "Differential flame graphs"). The two call trees
 * meet on paths of frame labels: a frame is (kind, image as diff.h
 * normalises it, label) under its parent; domain frames meet by name, or
 * all as domain_label when cross_domain (the two sides chose different
 * domains, as in the text diff). Each frame has its A and B samples
 * (at or below it, and self); the change is B's share minus A's (shares
 * of each side's total) or, with absolute, B - A in samples. Widths are
 * B's samples; a frame only in A is drawn too (as Brendan Gregg's
 * difffolded), with A's samples scaled to B's total (raw with absolute),
 * marked "only in A", and widens its ancestors by as much.
 */
struct fg_diff_opts {
	const char *title;        /* NULL = "Differential flame graph" */
	const char *subtitle;
	const char *name_a, *name_b; /* how the tooltip and legend name A and B */
	bool absolute;            /* change in samples, not in shares */
	bool cross_domain;        /* domain frames all meet as domain_label */
	const char *domain_label; /* "vm1|vm1-active" */
	enum fg_root root;
	double min_fraction;      /* as fg_opts (of the drawn width) */
	bool kernel_frames;       /* only kernel frames (diff -k): the user frames under
				   * a kernel-mode sample's kernel part are left out, so
				   * an active view's stacks (user, then kernel) meet a
				   * passive view's (kernel only) at the entry points */
};
int flamegraph_diff_data(FILE *f, const struct profile *a, const struct profile *b,
			 const struct fg_diff_opts *o);
/* HTML page (fg_page_head + flamegraph_diff_data + fg_page_tail) or SVG.
 * Return 0 or -EIO. */
int flamegraph_diff_html(FILE *f, const struct profile *a, const struct profile *b,
			 const struct fg_diff_opts *o);
int flamegraph_diff_svg(FILE *f, const struct profile *a, const struct profile *b,
			const struct fg_diff_opts *o);

/* ---- Exports (docs/export.md) ---------------------------------------- */

/* Folded stacks: "DOMAIN;COMM;root;...;leaf COUNT\n" (the process
 * level as root says) per unique path, count descending, then in the
 * tree's order. Kernel frames carry the "_[k]" suffix of
 * stackcollapse-perf; ';' and newlines in labels become ':' and ' '. */
int export_folded(FILE *f, const struct profile *p, enum fg_root root);
/*
 * Labels put on every pprof sample (`export --labels k=v,...`), after
 * its domain, comm and pid labels: what a fleet's profile store files
 * the profile under (host, cluster, ...; docs/fleet.md). Keys are
 * 1..PPROF_LABEL_KEY_MAX bytes of [A-Za-z0-9_] not starting with a
 * digit (Prometheus' label names, which Pyroscope and Parca take), not
 * "domain", "comm", "pid" or "tid", each once; values 1..PPROF_LABEL_VAL_MAX
 * bytes, no ',' (the separator) and no control character. At most
 * PPROF_LABELS_MAX. Zero-initialise; strings owned (pprof_labels_free).
 */
#define PPROF_LABELS_MAX 32u
#define PPROF_LABEL_KEY_MAX 128u
#define PPROF_LABEL_VAL_MAX 1024u
struct pprof_labels {
	struct { char *key, *val; } v[PPROF_LABELS_MAX];
	size_t n;
};
/* Add "k=v[,k=v...]" to l. 0, or -EINVAL with a one-line reason in err
 * (l keeps the labels added before the bad one). */
int pprof_labels_parse(struct pprof_labels *l, const char *arg, char *err, size_t errlen);
void pprof_labels_free(struct pprof_labels *l);

/* gzip-compressed pprof profile.proto; labels (may be NULL) on every
 * sample. Returns 0, -EIO, or -ENOMEM when zlib fails. Samples keep pid
 * and comm as labels whatever root says; FG_ROOT_TID adds a tid label. */
int export_pprof(FILE *f, const struct profile *p, const struct pprof_labels *labels,
		 enum fg_root root);
/* speedscope JSON file format, one sampled profile per domain; the
 * process-level frame as root says (none with FG_ROOT_NONE). */
int export_speedscope(FILE *f, const struct profile *p, const char *name, enum fg_root root);
/* The aggregated profile with its call tree ("format": "domprof-profile");
 * the tree's process level as root says. */
int export_json(FILE *f, const struct profile *p, const char *path, enum fg_root root);

/* Nanoseconds one sample stands for: 1e9/frequency for frequency-based
 * events, the period for period-based ones (cpu-clock's period is in ns);
 * the first event of the recording; 0 when it has none. */
uint64_t fg_sample_ns(const struct profile *p);

#endif
