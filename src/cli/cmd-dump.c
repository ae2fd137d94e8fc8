// SPDX-License-Identifier: MIT
/*
 * `domprof dump FILE`: every record on one line, like `perf script -D`,
 * with the decoder's current domain on each domain-scoped record. The
 * line form is for people and tests; it is documented in docs/info-dump.md.
 */
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "format/format.h"
#include "format/scan.h"
#include "output/escape.h"

static void hex(char *out, const uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

void dump_record(FILE *f, const struct dp_record *rec);

static bool g_ustack;  /* --ustack */

/* Every user register, and the stack bytes, of s (has_uregs). */
static void dump_ustack(FILE *f, const struct dp_sample *s)
{
	fprintf(f, " uregs_v=");
	for (uint32_t i = 0; i < dp_uregs_count(s->uregs_mask); i++)
		fprintf(f, "%s0x%" PRIx64, i ? "," : "", s->uregs[i]);
	fprintf(f, " ustack_hex=");
	for (uint32_t i = 0; i < s->ustack_len; i++)
		fprintf(f, "%02x", s->ustack[i]);
}

/* Every string of a record (names from the recorded machine, its guests,
 * or a crafted file) is printed in its terminal-safe form (escape.h). */
void dump_record(FILE *f, const struct dp_record *rec)
{
	struct text_tmp tt = { 0 };
	fprintf(f, "%8" PRIu64 " dom=%-3u %-13s", rec->chunk_offset, rec->domain,
		dp_rec_type_name(rec->type));
	switch (rec->type) {
	case DP_REC_SAMPLE: {
		const struct dp_sample *s = &rec->u.sample;
		fprintf(f, " time=%" PRIu64 " cpu=%u pid=%u tid=%u ip=0x%" PRIx64 " mode=%s event=%u period=%" PRIu64,
			s->time, s->cpu, s->pid, s->tid, s->ip, dp_mode_name(s->mode), s->event, s->period);
		if (s->has_asid)
			fprintf(f, " asid=0x%" PRIx64, s->asid);
		if (s->nr_callchain) {
			fprintf(f, " chain=%u:", s->nr_callchain);
			for (uint32_t i = 0; i < s->nr_callchain; i++)
				fprintf(f, "%s0x%" PRIx64, i ? "," : "", s->callchain[i]);
		}
		if (s->has_uregs) {
			uint64_t ip = 0, sp = 0;
			dp_sample_ureg(s, DP_X86_REG_IP, &ip);
			dp_sample_ureg(s, DP_X86_REG_SP, &sp);
			fprintf(f, " uregs=0x%" PRIx64 " abi=%u uip=0x%" PRIx64 " usp=0x%" PRIx64
				" ustack=%u/%uB", s->uregs_mask, s->uregs_abi, ip, sp, s->ustack_len,
				s->ustack_size);
			/* 1.5 delta form: bytes taken from the thread's previous stack */
			if (s->ustack_ref)
				fprintf(f, " ustack_ref=%u", s->ustack_ref);
			if (g_ustack)
				dump_ustack(f, s);
		}
		break;
	}
	case DP_REC_DOMAIN_SWITCH:
		fprintf(f, " to=%u", rec->u.switch_to);
		break;
	case DP_REC_EVENT: {
		const struct dp_event *e = &rec->u.event;
		fprintf(f, " id=%u name=%s type=%u config=%" PRIu64 " %s=%" PRIu64, e->id,
			text_tmp_safe(&tt, e->name), e->type, e->config, e->freq ? "freq" : "period", e->period);
		break;
	}
	case DP_REC_DOMAIN: {
		const struct dp_domain *d = &rec->u.domain;
		fprintf(f, " id=%u name=%s kind=%s vcpus=%u kaslr=0x%" PRIx64 " address=%s symsrc=%s",
			d->id, text_tmp_safe(&tt, d->name), dp_domain_kind_name(d->kind), d->vcpus,
			d->kaslr_offset, text_tmp_safe(&tt, d->address), text_tmp_safe(&tt, d->symsrc));
		break;
	}
	case DP_REC_TASK: {
		const struct dp_task *t = &rec->u.task;
		static const char *const k[] = { "comm", "fork", "exit" };
		fprintf(f, " %s pid=%u tid=%u ppid=%u ptid=%u time=%" PRIu64 " comm=%s",
			t->kind < 3 ? k[t->kind] : "?", t->pid, t->tid, t->ppid, t->ptid, t->time,
			text_tmp_safe(&tt, t->comm));
		if (t->has_asid)
			fprintf(f, " asid=0x%" PRIx64, t->asid);
		break;
	}
	case DP_REC_MMAP: {
		const struct dp_mmap *m = &rec->u.mmap;
		char b[41];
		hex(b, m->buildid, m->buildid_len);
		fprintf(f, " pid=%d start=0x%" PRIx64 " len=0x%" PRIx64 " pgoff=0x%" PRIx64 " buildid=%s path=%s",
			(int)m->pid, m->start, m->len, m->pgoff, m->buildid_len ? b : "-",
			text_tmp_safe(&tt, m->path));
		break;
	}
	case DP_REC_LOST:
		fprintf(f, " count=%" PRIu64 " source=%s where=%u", rec->u.lost.count,
			dp_lost_source_name(rec->u.lost.source), rec->u.lost.where);
		break;
	case DP_REC_SYMTAB:
		fprintf(f, " kind=%u name=%s size=%zu", rec->u.symtab.kind,
			text_tmp_safe(&tt, rec->u.symtab.name), rec->u.symtab.size);
		break;
	case DP_REC_STATS: {
		const struct dp_stats *s = &rec->u.stats;
		fprintf(f, " samples=%" PRIu64 " lost=%" PRIu64 " wall_ns=%" PRIu64 " exit_status=%u flags=0x%x",
			s->samples, s->lost, s->wall_ns, s->exit_status, s->flags);
		if (s->has_totals)
			fprintf(f, " records=%" PRIu64 " sample_records=%" PRIu64, s->records,
				s->sample_records);
		break;
	}
	case DP_REC_COUNTERS: {
		/* names are [a-z0-9._-] (the reader checked): printed as they are */
		const struct dp_counters *c = &rec->u.counters;
		fprintf(f, " n=%u", c->n);
		for (uint32_t i = 0; i < c->n; i++)
			fprintf(f, " %s=%" PRIu64, c->c[i].name, c->c[i].value);
		break;
	}
	default:
		fprintf(f, " tag=%u len=%u (skipped)", rec->type, rec->raw_len);
	}
	fputc('\n', f);
	text_tmp_free(&tt);
}

/* ctx: the --type name, or NULL for every record */
static int on_record(void *ctx, const struct dp_record *rec)
{
	const char *type = ctx;
	if (!type || !strcasecmp(type, dp_rec_type_name(rec->type)))
		dump_record(stdout, rec);
	return 0;
}

struct dump_args {
	const char *path, *type;
	bool ustack;
};

static const struct opt dump_opts[] = {
	OPT_STR('i', "input", "FILE", struct dump_args, path,
		"recording to read (default domprof.data), or a perf.data (docs/perfdata.md)"),
	OPT_STR(0, "type", "TYPE", struct dump_args, type, "only records of this type (SAMPLE, MMAP, TASK, ...)"),
	{ .kind = OPT_STRING, .letter = 't', .arg = "TYPE", .off = offsetof(struct dump_args, type),
	  .flags = OPT_ALIAS, .alias_of = "--type", .help = "" },
	OPT_BOOL(0, "ustack", struct dump_args, ustack,
		 "with a sample's user registers (record --call-graph dwarf), print all of them (uregs_v=) "
		 "and its stack bytes in hex (ustack_hex=, from sp upwards)"),
	OPT_TABLE_END,
};

const struct cmd_spec spec_dump = {
	.name = "dump",
	.summary = "print every record of a recording, one per line",
	.synopsis = "[-i FILE] [FILE] [--type TYPE] [--ustack]",
	.description =
		"Print every record of a recording, one per line, in file order. Each line\n"
		"starts with the chunk offset and the current domain (dom=ID), then the\n"
		"record type and its fields. Damage found is printed to stderr.\n",
	.opts = dump_opts,
};

int cmd_dump(int argc, char **argv)
{
	struct dump_args da = { .path = "domprof.data" };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_dump, argc, argv, &da, ops, &nops);
	if (prc != OPT_CONTINUE)
		return prc;
	const char *path = da.path, *type = da.type;
	g_ustack = da.ustack;
	if (nops > 0)
		path = ops[0];
	if (nops > 1)
		return usage_error("dump", "unexpected argument '%s'", ops[1]);
	char msg[256];
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	if (!r) {
		cli_error_text("dump", path, msg);
		return 1;
	}
	/* only sizes are printed: a table is never decompressed (a file may
	 * claim 1 GiB for each). The records are printed: a counts part
	 * that disagrees with them is damage, as in info. */
	dp_reader_set_flags(r, DP_READ_SYMTAB_STORED | DP_READ_VERIFY_COUNTS);
	const struct dp_visitor vis = { .record = on_record };
	dp_scan(r, &vis, (void *)type, NULL);
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	for (size_t i = 0; i < nd; i++) {
		char at[4096];
		snprintf(at, sizeof(at), "%s: offset %" PRIu64, path, d[i].offset);
		cli_warn_text("dump", at, d[i].what);
	}
	if (dp_reader_incomplete(r)) {
		cli_warn_text("dump", path, dp_reader_incomplete(r));
	}
	dp_reader_free(r);
	return fflush(stdout) == 0 ? 0 : 1;
}
