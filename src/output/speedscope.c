// SPDX-License-Identifier: MIT
/*
 * speedscope export (`domprof export --format speedscope`): speedscope's
 * own JSON file format (https://www.speedscope.app/file-format-schema.json),
 * which speedscope opens directly with all its views.
 *
 * shared.frames holds one frame per profile symbol that occurs in a stack
 * (name = frame label, file = image) and one per process (COMM-PID). Each
 * domain with samples becomes one "sampled" profile named after the
 * domain; a sample is a unique stack (process frame first, then the call
 * chain root-first, as the format wants) weighted by its sample count
 * (unit "none": counts, like `domprof report`). An empty profile still
 * yields a valid file with one empty profile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "util/xalloc.h"

struct proc_tab {
	uint64_t *key;
	uint32_t *val;           /* frame index + 1 */
	size_t cap, n;
};

static uint32_t *proc_slot(struct proc_tab *t, uint64_t key)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		uint64_t *k = xcalloc(cap, sizeof(*k));
		uint32_t *v = xcalloc(cap, sizeof(*v));
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->val[i])
				continue;
			size_t j = (t->key[i] * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			while (v[j])
				j = (j + 1) & (cap - 1);
			k[j] = t->key[i];
			v[j] = t->val[i];
		}
		free(t->key);
		free(t->val);
		t->key = k;
		t->val = v;
		t->cap = cap;
	}
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & (t->cap - 1);
	while (t->val[j] && t->key[j] != key)
		j = (j + 1) & (t->cap - 1);
	if (!t->val[j]) {
		t->key[j] = key;
		t->n++;
	}
	return &t->val[j];
}

int export_speedscope(FILE *f, const struct profile *p, const char *name)
{
	char buf[512];
	uint32_t *sym_frame = xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*sym_frame));
	uint32_t *stack_proc = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof(*stack_proc));
	struct proc_tab pt = { 0 };
	uint32_t nframes = 0;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint32_t *slot = proc_slot(&pt, (uint64_t)s->domain << 32 | s->pid);
		if (!*slot) {
			*slot = ++nframes;
			fputs(nframes > 1 ? ",\n{\"name\":" : "\n{\"name\":", f);
			fg_json_str(f, fg_process_label(s->comm, s->pid, buf, sizeof(buf)));
			fputs(",\"file\":", f);
			fg_json_str(f, s->domain_name);
			fputc('}', f);
		}
		stack_proc[i] = *slot - 1;
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
			fprintf(f, "%s[%" PRIu32, first ? "\n" : ",\n", stack_proc[i]);
			for (uint32_t j = 0; j < s->nframes; j++)
				fprintf(f, ",%" PRIu32, sym_frame[s->frames[j]] - 1);
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
	free(pt.key);
	free(pt.val);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
