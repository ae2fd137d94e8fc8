/* SPDX-License-Identifier: MIT */
/*
 * `domprof report --format html`: one self-contained page (inline script,
 * style and data; no network) holding the recording's header, a
 * per-domain breakdown, the symbol table, the image summary, the callers
 * and callees of a selected symbol and the flame graph of the current
 * filter. The page computes every view from one compact copy of the
 * profile's unique stacks (a prefix tree, see html_report.c), so a filter
 * changes the table, the image summary and the flame graph together. The
 * flame graph is output/flamegraph.c's own page, run unchanged in an
 * iframe with the filtered data. Layout of the page and its data:
 * docs/report.md.
 *
 * Owner: the report engineer. Reads only the aggregated profile, loaded
 * with opts.stacks = true; writes to a caller-owned FILE, never prints.
 */
#ifndef DOMPROF_OUTPUT_HTML_REPORT_H
#define DOMPROF_OUTPUT_HTML_REPORT_H

#include <stdio.h>

#include "output/report.h"

/* Bounds of what the page embeds, so that a crafted or huge recording
 * still gives a page a browser opens. Stacks deeper than
 * HTML_REPORT_MAX_DEPTH frames keep their innermost frames (the leaf and
 * its nearest callers, which the table counts); a stack that would add
 * a node past HTML_REPORT_MAX_NODES is left out and its samples counted
 * (the page's header says how many: "page limits"). A node takes about
 * six bytes of the page. */
#define HTML_REPORT_MAX_DEPTH 512u
#define HTML_REPORT_MAX_NODES 1000000u

/* Write the page for v->p (v->path names the file in the header,
 * v->filter_desc the command-line filter). Only v->p, v->path and
 * v->filter_desc are used. Returns 0, or -EIO when writing failed. */
int report_html(FILE *f, const struct report_view *v);

#endif
