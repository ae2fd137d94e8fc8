// SPDX-License-Identifier: MIT
/*
 * JSON report: the same rows as the CSV plus the header metadata, the
 * image summary and (with -g) the call graph, as one JSON object whose
 * layout is documented in docs/report.md ("format": "domprof-report",
 * "version": 1). Strings are emitted as valid UTF-8: control characters
 * are escaped and bytes that are not UTF-8 become U+FFFD, so any symbol
 * name a binary holds still yields a parseable document.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/escape.h"
#include "output/report.h"

static void jstr(FILE *f, const char *str)
{
	json_write_str(f, str, 0);
}

static void jkey(FILE *f, const char *k)
{
	jstr(f, k);
	fputc(':', f);
}

/* "k":"v" */
static void jkv(FILE *f, const char *k, const char *v)
{
	jkey(f, k);
	jstr(f, v);
}

static void sym_fields(FILE *f, const struct report_view *v, const struct profile_symbol *y)
{
	jkv(f, "domain", y->domain_name);
	fputc(',', f);
	jkv(f, "image", y->image);
	fputc(',', f);
	jkv(f, "symbol", y->symbol);
	if (v->by_process) {
		fprintf(f, ",\"pid\":%" PRIu32 ",", y->pid);
		jkv(f, "comm", y->comm);
	}
	if (v->srcline) {
		fputc(',', f);
		jkv(f, "srcline", y->srcline ? y->srcline : "");
		if (y->inlined_into) {
			fputc(',', f);
			jkv(f, "inlined_into", y->inlined_into);
		}
	}
}

static void header(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	fputs("\"format\":\"domprof-report\",\"version\":1,", f);
	jkv(f, "file", v->path);
	fputs(",\"header\":{", f);
	fprintf(f, "\"format_version\":\"%u.%u\",\"created_ns\":%" PRIu64 ",\"ncpus\":%u,",
		p->header.major, p->header.minor, p->header.created_ns, p->header.ncpus);
	jkv(f, "hostname", p->header.hostname);
	fputc(',', f);
	jkv(f, "release", p->header.release);
	fputc(',', f);
	jkv(f, "cpu", p->header.cpu_desc);
	fputc(',', f);
	jkv(f, "cmdline", p->header.cmdline);
	fputs("},\"events\":[", f);
	for (size_t i = 0; i < p->nevents; i++) {
		const struct profile_event *e = &p->events[i];
		fprintf(f, "%s{\"id\":%u,", i ? "," : "", e->id);
		jkv(f, "name", e->name);
		fprintf(f, ",\"type\":%u,\"config\":%" PRIu64 ",\"%s\":%" PRIu64 "}", e->type,
			e->config, e->freq ? "frequency_hz" : "period", e->period);
	}
	fputs("],\"domains\":[", f);
	for (size_t i = 0; i < p->ndomains; i++) {
		const struct profile_domain *d = &p->domains[i];
		fprintf(f, "%s{\"id\":%u,", i ? "," : "", d->id);
		jkv(f, "name", d->name);
		fputc(',', f);
		jkv(f, "kind", dp_domain_kind_name(d->kind));
		fputc(',', f);
		jkv(f, "address", d->address);
		fputc(',', f);
		jkv(f, "symsrc", d->symsrc);
		fprintf(f, ",\"kaslr_offset\":%" PRIu64 ",\"vcpus\":%u,\"samples\":%" PRIu64,
			d->kaslr_offset, d->vcpus, d->samples);
		/* only for a domain that has counters (format 1.3): older
		 * files give the same document as before */
		const struct profile_counter *c;
		size_t nc = profile_counters(p, d->id, &c);
		for (size_t j = 0; j < nc; j++) {
			fputs(j ? "," : ",\"counters\":{", f);
			jkey(f, c[j].name);
			fprintf(f, "%" PRIu64, c[j].value);
		}
		fputs(nc ? "}}" : "}", f);
	}
	fprintf(f, "],\"total_samples\":%" PRIu64 ",\"matched_samples\":%" PRIu64
		   ",\"lost_samples\":%" PRIu64 ",\"lost_percent\":%.4f,",
		p->total_samples, p->matched, p->lost, report_lost_pct(p));
	jkey(f, "filter");
	if (v->filter_desc)
		jstr(f, v->filter_desc);
	else
		fputs("null", f);
	/* only for files with unwound user stacks: older documents unchanged */
	if (p->dwarf.samples) {
		const struct sym_unwind_stats *w = &p->dwarf.walks;
		fprintf(f, ",\"dwarf\":{\"samples\":%" PRIu64 ",\"unwound\":%" PRIu64
			   ",\"complete\":%" PRIu64 ",\"kept_fp\":%" PRIu64 ",\"walks\":{\"outermost\":%"
			   PRIu64 ",\"no_fde\":%" PRIu64 ",\"stopped\":%" PRIu64 ",\"depth_cut\":%" PRIu64
			   ",\"no_image\":%" PRIu64 ",\"quick\":%" PRIu64 ",\"cached\":%" PRIu64 "}}",
			p->dwarf.samples, p->dwarf.unwound, p->dwarf.complete, p->dwarf.kept_fp,
			w->complete, w->no_fde, w->stopped, w->depth_cut, w->failed, w->quick, w->cached);
	}
	fprintf(f, ",\"threshold_percent\":%.4f,\"has_callchains\":%s,\"warnings\":[",
		v->threshold, p->has_callchains ? "true" : "false");
	for (size_t i = 0; i < p->nwarnings; i++) {
		if (i)
			fputc(',', f);
		jstr(f, p->warnings[i]);
	}
	fputs("]", f);
}

static void edges(FILE *f, const struct report_view *v, const struct profile_edge *const *e,
		  size_t n, bool callers, double tot)
{
	const struct profile *p = v->p;
	for (size_t j = 0; j < n; j++) {
		const struct profile_symbol *c = &p->syms[callers ? e[j]->caller : e[j]->callee];
		fputs(j ? ",{" : "{", f);
		sym_fields(f, v, c);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f}", e[j]->count,
			100.0 * (double)e[j]->count / tot);
	}
}

int report_json(FILE *f, const struct report_view *v)
{
	const struct profile *p = v->p;
	fputc('{', f);
	header(f, v);

	if (v->timeline) {
		fprintf(f, ",\"timeline\":{\"bucket_s\":%.6f,\"widened\":%s,\"domains\":[",
			(double)p->timeline.bucket_ns / 1e9, p->timeline.bucket_widened ? "true" : "false");
		for (size_t i = 0; i < p->timeline.nrows; i++) {
			fputs(i ? ",\n{" : "\n{", f);
			jkv(f, "name", p->timeline.rows[i].name);
			fputs(",\"samples\":[", f);
			for (size_t k = 0; k < p->timeline.nbuckets; k++)
				fprintf(f, "%s%" PRIu64, k ? "," : "", p->timeline.rows[i].counts[k]);
			fputs("]}", f);
		}
		fputs("]}", f);
	}
	fputs(",\"rows\":[", f);
	size_t n;
	uint32_t *ix = profile_rows(p, v->keys, v->nkeys, v->threshold, &n);
	for (size_t i = 0; i < n; i++) {
		const struct profile_symbol *y = &p->syms[ix[i]];
		fprintf(f, "%s\n{\"samples\":%" PRIu64 ",\"percent\":%.4f,", i ? "," : "", y->self,
			profile_pct(p, y->self));
		sym_fields(f, v, y);
		fputc('}', f);
	}
	free(ix);

	fputs("],\"images\":[", f);
	for (size_t i = 0; i < p->nimages; i++) {
		const struct profile_image *im = &p->images[i];
		fputs(i ? ",\n{" : "\n{", f);
		jkv(f, "domain", im->domain_name);
		fputc(',', f);
		jkv(f, "application", im->app);
		fputc(',', f);
		jkv(f, "image", im->image);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f}", im->samples,
			profile_pct(p, im->samples));
	}
	fputc(']', f);

	if (v->callgraph) {
		fputs(",\"callgraph\":[", f);
		ix = profile_cg_entries(p, v->threshold, &n);
		for (size_t i = 0; i < n; i++) {
			const struct profile_symbol *y = &p->syms[ix[i]];
			double tot = y->total ? (double)y->total : 1.0;
			fputs(i ? ",\n{" : "\n{", f);
			sym_fields(f, v, y);
			fprintf(f, ",\"self\":%" PRIu64 ",\"self_percent\":%.4f,\"total\":%" PRIu64
				   ",\"total_percent\":%.4f,\"callers\":[",
				y->self, profile_pct(p, y->self), y->total, profile_pct(p, y->total));
			const struct profile_edge *const *e;
			size_t ne = profile_callers(p, ix[i], &e);
			edges(f, v, e, ne, true, tot);
			fputs("],\"callees\":[", f);
			ne = profile_callees(p, ix[i], &e);
			edges(f, v, e, ne, false, tot);
			fputs("]}", f);
		}
		free(ix);
		fputc(']', f);
	}
	fputs("}\n", f);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
