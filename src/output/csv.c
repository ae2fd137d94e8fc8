// SPDX-License-Identifier: MIT
/*
 * CSV report: the stable, machine-readable symbol table (docs/report.md).
 * Header `samples,percent,domain,image,symbol`, one row per symbol in the
 * report's sort order; with per-process rows (--sort pid/comm or
 * --by-process) two columns `pid,comm` are appended. Fields are quoted
 * per RFC 4180 when they hold a comma, quote or line break (C++ names
 * hold commas). percent has four decimals and is of the shown samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/escape.h"
#include "output/report.h"

/* --timeline: time_s,domain,samples, every bucket of every domain row */
static int timeline_csv(FILE *f, const struct profile *p)
{
	fputs("time_s,domain,samples\n", f);
	for (size_t k = 0; k < p->timeline.nbuckets; k++)
		for (size_t i = 0; i < p->timeline.nrows; i++) {
			fprintf(f, "%.3f,", (double)k * (double)p->timeline.bucket_ns / 1e9);
			csv_write_field(f, p->timeline.rows[i].name);
			fprintf(f, ",%" PRIu64 "\n", p->timeline.rows[i].counts[k]);
		}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

int report_csv(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	if (v->timeline)
		return timeline_csv(f, p);
	fputs(v->by_process ? "samples,percent,domain,image,symbol,pid,comm"
			    : "samples,percent,domain,image,symbol", f);
	/* only with srcline: older scripts' CSV unchanged */
	fputs(v->srcline ? ",srcline,inlined_into\n" : "\n", f);
	size_t n;
	uint32_t *ix = profile_rows(p, v->keys, v->nkeys, v->threshold, &n);
	for (size_t i = 0; i < n; i++) {
		const struct profile_symbol *y = &p->syms[ix[i]];
		fprintf(f, "%" PRIu64 ",%.4f,", y->self, profile_pct(p, y->self));
		csv_write_field(f, y->domain_name);
		fputc(',', f);
		csv_write_field(f, y->image);
		fputc(',', f);
		csv_write_field(f, y->symbol);
		if (v->by_process) {
			fprintf(f, ",%" PRIu32 ",", y->pid);
			csv_write_field(f, y->comm);
		}
		if (v->srcline) {
			fputc(',', f);
			csv_write_field(f, y->srcline ? y->srcline : "");
			fputc(',', f);
			csv_write_field(f, y->inlined_into ? y->inlined_into : "");
		}
		fputc('\n', f);
	}
	free(ix);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
