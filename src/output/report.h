/* SPDX-License-Identifier: MIT */
/*
 * Renderers of `domprof report`: opreport-style text, CSV and JSON. Each
 * reads only the aggregated profile (analysis/profile.h) and writes to a
 * caller-owned FILE. The CSV and JSON layouts are stable interfaces,
 * documented in docs/report.md: change them only by adding fields.
 */
#ifndef DOMPROF_OUTPUT_REPORT_H
#define DOMPROF_OUTPUT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/profile.h"

struct report_view {
	const struct profile *p;
	const char *path;                /* input file, for the header */
	const enum profile_sort_key *keys;
	int nkeys;
	double threshold;                /* percent of matched samples */
	bool symbols;                    /* -l: symbol rows, else image summary */
	bool callgraph;                  /* -g: callers/callees per symbol */
	bool by_process;                 /* rows carry pid and comm */
	bool srcline;                    /* rows carry their source line */
	bool timeline;                   /* --timeline: samples per time bucket
					  * per domain instead of the tables */
	const char *filter_desc;         /* "comm=foo pid=3", or NULL */
};

/* Each returns 0, or -EIO when writing failed. */
int report_text(FILE *f, const struct report_view *v);
int report_csv(FILE *f, const struct report_view *v);
int report_json(FILE *f, const struct report_view *v);

/* The DWARF unwinding line (record --call-graph dwarf files): how many
 * user stacks were unwound, kept their frame-pointer chain, and where the
 * unwinder's walks ended. prefix starts the line ("# " in the report
 * header, "" for info); nothing is written when the profile unwound no
 * stacks. */
void report_dwarf_line(FILE *f, const struct profile *p, const char *prefix);

/* Lost share in percent of (samples + lost); the text header warns above
 * REPORT_LOST_WARN_PCT. */
#define REPORT_LOST_WARN_PCT 0.01
double report_lost_pct(const struct profile *p);

#endif
