/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs and standard exports (`domprof flamegraph`, `domprof
 * export`). Every function here reads only the aggregated profile
 * (analysis/profile.h, loaded with opts.stacks = true) and writes to a
 * caller-owned FILE; none prints diagnostics or exits.
 *
 * One stack of the profile becomes the path
 *     all ; DOMAIN ; COMM-PID ; outermost caller ; ... ; leaf
 * (a sample without a call chain is a path ending in its single leaf
 * frame). The same frame labels are used by every format: a known symbol
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

enum fg_kind {
	FG_ROOT = 0,            /* "all" */
	FG_DOMAIN = 1,          /* a domain: host, vm1, ... */
	FG_PROCESS = 2,         /* COMM-PID inside a domain */
	FG_USER = 3,            /* a frame of user (or guest user) code */
	FG_KERNEL = 4,          /* a frame of kernel / guest kernel code */
};

struct fg_node {
	uint32_t parent;        /* index; the root is its own parent (0) */
	uint32_t first_child;   /* 0 = none (the root is never a child) */
	uint32_t next_sibling;  /* 0 = none */
	uint32_t id;            /* FG_DOMAIN: domain id; FG_PROCESS: pid; frames: symbol index */
	uint8_t kind;           /* enum fg_kind */
	uint32_t dom;           /* index into profile.domains of the enclosing domain (root: 0) */
	uint32_t depth;         /* root 0, domain 1, process 2, first frame 3 */
	uint64_t total;         /* samples at or below this node */
	uint64_t self;          /* samples ending exactly here */
	const char *comm;       /* FG_PROCESS: command name (borrowed from the profile) */
};

/* The call tree of a profile: nodes[0] is the root; children are sorted
 * by total descending (then label), so the widest frame is leftmost. */
struct fg_tree {
	const struct profile *p;  /* borrowed; must outlive the tree */
	struct fg_node *nodes;
	size_t n;
	uint32_t max_depth;
	bool inverted;
};

/*
 * Build the tree of p->stacks. inverted: frames leaf-first below the
 * process (an icicle/callee view: the hottest functions at the top
 * level). Returns a heap tree (xmalloc: never NULL); free with
 * fg_tree_free.
 */
struct fg_tree *fg_tree_build(const struct profile *p, bool inverted);
void fg_tree_free(struct fg_tree *t);

/* The label of node i, written into buf (always NUL-terminated). */
const char *fg_node_label(const struct fg_tree *t, uint32_t i, char *buf, size_t len);

/* Frame label of a symbol, see above. Borrowed from the profile, or
 * written into buf for unknown symbols. */
const char *fg_symbol_label(const struct profile *p, uint32_t sym, char *buf, size_t len);

/* Process label "COMM-PID" ("[unknown]" when the comm was never seen). */
const char *fg_process_label(const char *comm, uint32_t pid, char *buf, size_t len);

/* A JSON string literal of s (valid UTF-8: bad bytes become U+FFFD; '<',
 * '>' and '&' are \u-escaped so the text is safe inside an HTML <script>). */
void fg_json_str(FILE *f, const char *s);

/* ---- Flame graph ---------------------------------------------------- */

struct fg_opts {
	const char *title;      /* NULL = "Flame graph: FILE" */
	const char *subtitle;   /* a line under the title (filters, counts), may be NULL */
	bool inverted;          /* icicle: root at the top, callees first */
	/* Nodes narrower than this fraction of all samples are merged into
	 * their parent's self area before writing (0 = the default: 1e-4 for
	 * HTML, 1e-3 for SVG). The HTML page also skips frames narrower than
	 * half a pixel when drawing. */
	double min_fraction;
};

/* Self-contained HTML page (inline script, style and data; no network).
 * Returns 0 or -EIO. */
int flamegraph_html(FILE *f, const struct profile *p, const struct fg_opts *o);
/* Standalone SVG (rectangles with <title> tooltips, a small zoom script).
 * Returns 0 or -EIO. */
int flamegraph_svg(FILE *f, const struct profile *p, const struct fg_opts *o);

/* ---- Exports (docs/export.md) ---------------------------------------- */

/* Folded stacks: "DOMAIN;COMM-PID;root;...;leaf COUNT\n" per unique
 * stack, count descending. Kernel frames carry the "_[k]" suffix of
 * stackcollapse-perf; ';' and newlines in labels become ':' and ' '. */
int export_folded(FILE *f, const struct profile *p);
/*
 * Labels put on every pprof sample (`export --labels k=v,...`), after
 * its domain, comm and pid labels: what a fleet's profile store files
 * the profile under (host, cluster, ...; docs/fleet.md). Keys are
 * 1..PPROF_LABEL_KEY_MAX bytes of [A-Za-z0-9_] not starting with a
 * digit (Prometheus' label names, which Pyroscope and Parca take), not
 * "domain", "comm" or "pid", each once; values 1..PPROF_LABEL_VAL_MAX
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
 * sample. Returns 0, -EIO, or -ENOMEM when zlib fails. */
int export_pprof(FILE *f, const struct profile *p, const struct pprof_labels *labels);
/* speedscope JSON file format, one sampled profile per domain. */
int export_speedscope(FILE *f, const struct profile *p, const char *name);
/* The aggregated profile with its call tree ("format": "domprof-profile"). */
int export_json(FILE *f, const struct profile *p, const char *path);

/* Nanoseconds one sample stands for: 1e9/frequency for frequency-based
 * events, the period for period-based ones (cpu-clock's period is in ns);
 * the first event of the recording; 0 when it has none. */
uint64_t fg_sample_ns(const struct profile *p);

#endif
