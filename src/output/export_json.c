// SPDX-License-Identifier: MIT
/*
 * JSON export (`domprof export --format json`): the aggregated profile
 * as one document ("format": "domprof-profile", "version": 1): header
 * metadata, events, domains, the symbol table with self and total counts,
 * the unique stacks (symbol indexes, root-first) and the merged call tree
 * all -> domain -> process level (enum fg_root: by command name unless
 * asked otherwise) -> frames. docs/export.md describes every
 * field; change the layout only by adding fields.
 */
#include <errno.h>
#include <inttypes.h>

#include "output/flamegraph.h"

static const char *const kind_name[] = { "root", "domain", "process", "user", "kernel" };

static void tree_node(FILE *f, const struct fg_tree *t, uint32_t i, int indent)
{
	const struct fg_node *n = &t->nodes[i];
	char buf[512];
	fprintf(f, "%*s{\"name\":", indent, "");
	fg_json_str(f, fg_node_label(t, i, buf, sizeof(buf)));
	fprintf(f, ",\"kind\":\"%s\"", kind_name[n->kind]);
	if (n->kind == FG_DOMAIN)
		fprintf(f, ",\"domain\":%" PRIu32, n->id);
	else if (n->kind == FG_PROCESS) {
		fputs(",\"comm\":", f);
		fg_json_str(f, n->comm && *n->comm ? n->comm : "[unknown]");
		if (t->root == FG_ROOT_PID || t->root == FG_ROOT_TID)
			fprintf(f, ",\"pid\":%" PRIu32, n->pid);
		if (t->root == FG_ROOT_TID)
			fprintf(f, ",\"tid\":%" PRIu32, n->tid);
	}
	else if (n->kind >= FG_USER)
		fprintf(f, ",\"symbol\":%" PRIu32, n->id);
	fprintf(f, ",\"total\":%" PRIu64 ",\"self\":%" PRIu64, n->total, n->self);
	if (!n->first_child) {
		fputc('}', f);
		return;
	}
	fputs(",\"children\":[\n", f);
	for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling) {
		tree_node(f, t, c, indent < 40 ? indent + 1 : indent);
		fputs(t->nodes[c].next_sibling ? ",\n" : "\n", f);
	}
	fprintf(f, "%*s]}", indent, "");
}

int export_json(FILE *f, const struct profile *p, const char *path, enum fg_root root)
{
	const struct dp_header *h = &p->header;
	fputs("{\"format\":\"domprof-profile\",\"version\":1,\"file\":", f);
	fg_json_str(f, path);
	fputs(",\n\"header\":{\"hostname\":", f);
	fg_json_str(f, h->hostname);
	fputs(",\"release\":", f);
	fg_json_str(f, h->release);
	fputs(",\"cpu\":", f);
	fg_json_str(f, h->cpu_desc);
	fprintf(f, ",\"ncpus\":%" PRIu32 ",\"created_ns\":%" PRIu64 ",\"cmdline\":", h->ncpus, h->created_ns);
	fg_json_str(f, h->cmdline);
	fprintf(f, "},\n\"total_samples\":%" PRIu64 ",\"matched\":%" PRIu64 ",\"lost\":%" PRIu64
		   ",\"has_callchains\":%s,\"sample_ns\":%" PRIu64 ",\n\"events\":[",
		p->total_samples, p->matched, p->lost, p->has_callchains ? "true" : "false", fg_sample_ns(p));
	for (size_t i = 0; i < p->nevents; i++) {
		const struct profile_event *e = &p->events[i];
		fprintf(f, "%s{\"id\":%" PRIu32 ",\"name\":", i ? "," : "", e->id);
		fg_json_str(f, e->name);
		fprintf(f, ",\"type\":%" PRIu32 ",\"config\":%" PRIu64 ",\"period\":%" PRIu64 ",\"freq\":%s}",
			e->type, e->config, e->period, e->freq ? "true" : "false");
	}
	fputs("],\n\"domains\":[", f);
	for (size_t i = 0; i < p->ndomains; i++) {
		const struct profile_domain *d = &p->domains[i];
		fprintf(f, "%s\n{\"id\":%" PRIu32 ",\"name\":", i ? "," : "", d->id);
		fg_json_str(f, d->name);
		fprintf(f, ",\"kind\":\"%s\",\"vcpus\":%" PRIu32 ",\"address\":", dp_domain_kind_name(d->kind), d->vcpus);
		fg_json_str(f, d->address);
		fputs(",\"symbols\":", f);
		fg_json_str(f, d->symsrc);
		fprintf(f, ",\"samples\":%" PRIu64 "}", d->samples);
	}
	fputs("],\n\"warnings\":[", f);
	for (size_t i = 0; i < p->nwarnings; i++) {
		if (i)
			fputc(',', f);
		fg_json_str(f, p->warnings[i]);
	}
	fputs("],\n\"symbols\":[", f);
	char buf[512];
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct profile_symbol *y = &p->syms[i];
		fputs(i ? ",\n{\"domain\":" : "\n{\"domain\":", f);
		fg_json_str(f, y->domain_name);
		fputs(",\"image\":", f);
		fg_json_str(f, y->image);
		fputs(",\"image_path\":", f);
		fg_json_str(f, y->image_path);
		fputs(",\"symbol\":", f);
		fg_json_str(f, y->symbol);
		fputs(",\"label\":", f);
		fg_json_str(f, fg_symbol_label(p, (uint32_t)i, buf, sizeof(buf)));
		fprintf(f, ",\"known\":%s,\"kernel\":%s,\"self\":%" PRIu64 ",\"total\":%" PRIu64 "}",
			y->known ? "true" : "false", y->kernel ? "true" : "false", y->self, y->total);
	}
	fputs("],\n\"stacks\":[", f);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		fputs(i ? ",\n{\"domain\":" : "\n{\"domain\":", f);
		fg_json_str(f, s->domain_name);
		fprintf(f, ",\"pid\":%" PRIu32, s->pid);
		if (root == FG_ROOT_TID)
			fprintf(f, ",\"tid\":%" PRIu32, s->tid);
		fputs(",\"comm\":", f);
		fg_json_str(f, s->comm ? s->comm : "[unknown]");
		fprintf(f, ",\"mode\":\"%s\",\"count\":%" PRIu64 ",\"frames\":[", dp_mode_name(s->mode), s->count);
		for (uint32_t j = 0; j < s->nframes; j++)
			fprintf(f, j ? ",%" PRIu32 : "%" PRIu32, s->frames[j]);
		fputs("]}", f);
	}
	fprintf(f, "],\n\"tree_root\":\"%s\",\n\"tree\":\n", fg_root_name(root));
	struct fg_tree *t = fg_tree_build_root(p, false, root);
	tree_node(f, t, 0, 0);
	fg_tree_free(t);
	fputs("\n}\n", f);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
