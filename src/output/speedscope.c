// SPDX-License-Identifier: MIT
/*
 * speedscope export (`domprof export --format speedscope`): speedscope's
 * own JSON file format (https://www.speedscope.app/file-format-schema.json),
 * which speedscope opens directly with all its views.
 *
 * shared.frames holds one frame per profile symbol that occurs in a stack
 * (name = frame label, file = image) and one per process-level key
 * (enum fg_root: COMM by default, COMM-PID, COMM-PID/TID; none with
 * FG_ROOT_NONE; file = the domain). Each domain with samples becomes one "sampled" profile named after the
 * domain; a sample is a unique stack (process-level frame first, then the call
 * chain root-first, as the format wants) weighted by its sample count
 * (unit "none": counts, like `domprof report`). An empty profile still
 * yields a valid file with one empty profile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* The frame index of a stack's process-level frame (enum fg_root) in
 * table m, *fresh when it is new (then *nframes grew by one). Keys:
 * (domain id, comm) by command name, (pid[, tid], domain name) per
 * process or thread. */
static uint32_t level_frame(struct hmap *m, const struct profile_stack *s, enum fg_root root,
			    uint32_t *nframes, bool *fresh)
{
	uint64_t key;
	const char *str;
	if (root == FG_ROOT_COMM) {
		key = s->domain;
		str = s->comm && *s->comm ? s->comm : "[unknown]";
	} else {
		key = root == FG_ROOT_TID ? (uint64_t)s->pid << 32 | s->tid : s->pid;
		str = s->domain_name ? s->domain_name : "";
	}
	uintptr_t v = (uintptr_t)hmap_get(m, key, str);
	*fresh = !v;
	if (!v) {
		v = ++*nframes;
		hmap_put(m, key, str, (void *)v);
	}
	return (uint32_t)(v - 1);
}

int export_speedscope(FILE *f, const struct profile *p, const char *name, enum fg_root root)
{
	char buf[512];
	uint32_t *sym_frame = xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*sym_frame));
	uint32_t *stack_proc = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof(*stack_proc));
	struct hmap levels = { 0 };
	uint32_t nframes = 0;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		bool fresh = false;
		stack_proc[i] = root == FG_ROOT_NONE ? UINT32_MAX
						    : level_frame(&levels, s, root, &nframes, &fresh);
		if (fresh) {
			fputs(nframes > 1 ? ",\n{\"name\":" : "\n{\"name\":", f);
			fg_json_str(f, fg_root_label(s, root, buf, sizeof(buf)));
			fputs(",\"file\":", f);
			fg_json_str(f, s->domain_name);
			fputc('}', f);
		}
		for (uint32_t j = 0; j < s->nframes; j++) {
			uint32_t y = s->frames[j];
			if (sym_frame[y])
				continue;
			sym_frame[y] = ++nframes;
			fputs(nframes > 1 ? ",\n{\"name\":" : "\n{\"name\":", f);
			fg_json_str(f, fg_symbol_label(p, y, buf, sizeof(buf)));
			fputs(",\"file\":", f);
			fg_json_str(f, p->syms[y].image_path && *p->syms[y].image_path ? p->syms[y].image_path
										: p->syms[y].image);
			fputc('}', f);
		}
	}
	fputs("]},\n\"profiles\":[", f);
	/* stacks grouped by domain (a counting sort, order kept), so each
	 * domain's profile reads its own stacks, not all of them */
	size_t *dstart = xcalloc(p->ndomains + 1, sizeof(*dstart));
	uint32_t *by_dom = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof(*by_dom));
	uint32_t *sdom = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof(*sdom));
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_domain *pd = profile_domain_by_id(p, p->stacks[i].domain);
		sdom[i] = pd ? (uint32_t)(pd - p->domains) : (uint32_t)p->ndomains;
		if (pd)
			dstart[sdom[i] + 1]++;
	}
	for (size_t d = 0; d < p->ndomains; d++)
		dstart[d + 1] += dstart[d];
	size_t *fill = xmalloc((p->ndomains + 1) * sizeof(*fill));
	memcpy(fill, dstart, (p->ndomains + 1) * sizeof(*fill));
	for (size_t i = 0; i < p->nstacks; i++)
		if (sdom[i] < p->ndomains)
			by_dom[fill[sdom[i]]++] = (uint32_t)i;
	free(fill);
	free(sdom);
	int nprof = 0;
	for (size_t d = 0; d < p->ndomains; d++) {
		const struct profile_domain *pd = &p->domains[d];
		if (!pd->samples)
			continue;
		fputs(nprof++ ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", f);
		fg_json_str(f, pd->name);
		fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[", pd->samples);
		bool first = true;
		for (size_t k = dstart[d]; k < dstart[d + 1]; k++) {
			size_t i = by_dom[k];
			const struct profile_stack *s = &p->stacks[i];
			fputs(first ? "\n[" : ",\n[", f);
			if (stack_proc[i] != UINT32_MAX)
				fprintf(f, "%" PRIu32 ",", stack_proc[i]);
			for (uint32_t j = 0; j < s->nframes; j++)
				fprintf(f, j ? ",%" PRIu32 : "%" PRIu32, sym_frame[s->frames[j]] - 1);
			fputc(']', f);
			first = false;
		}
		fputs("],\n\"weights\":[", f);
		first = true;
		for (size_t k = dstart[d]; k < dstart[d + 1]; k++) {
			fprintf(f, first ? "%" PRIu64 : ",%" PRIu64, p->stacks[by_dom[k]].count);
			first = false;
		}
		fputs("]}", f);
	}
	if (!nprof)
		fputs("\n{\"type\":\"sampled\",\"name\":\"empty (0 samples match)\",\"unit\":\"none\","
		      "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}", f);
	fputs("],\n\"name\":", f);
	fg_json_str(f, name ? name : "domprof");
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"domprof " DOMPROF_VERSION "\"}\n", f);
	free(sym_frame);
	free(stack_proc);
	free(dstart);
	free(by_dom);
	hmap_release(&levels);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
