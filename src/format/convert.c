// SPDX-License-Identifier: MIT
/*
 * dp_convert: write every record a reader returns through the typed
 * writers (see format.h), for a file whose records have no domprof
 * bytes of their own (a perf.data read through dp_reader: `domprof
 * import`). The writer owns the domain switches; STATS is written last
 * with the writer's own totals, so the output reads as complete.
 */
#include "format/format.h"
#include "format/scan.h"

#include <errno.h>

struct conv {
	struct dp_writer *w;
	const struct dp_convert_hooks *hooks;
	struct dp_stats stats;
	bool has_stats;
};

static int c_record(void *ctx, const struct dp_record *rec)
{
	struct conv *c = ctx;
	struct dp_writer *w = c->w;
	int r = 0;
	if (c->hooks && c->hooks->record) {
		int h = c->hooks->record(c->hooks->ctx, w, rec);
		if (h)
			return h < 0 ? h : 0;  /* > 0: the hook wrote it (or dropped it) */
	}
	switch (rec->type) {
	case DP_REC_EVENT: r = dp_write_event(w, &rec->u.event); break;
	case DP_REC_DOMAIN: r = dp_write_domain(w, &rec->u.domain); break;
	case DP_REC_TASK: r = dp_write_task(w, rec->domain, &rec->u.task); break;
	case DP_REC_MMAP: r = dp_write_mmap(w, rec->domain, &rec->u.mmap); break;
	case DP_REC_SAMPLE: r = dp_write_sample(w, rec->domain, &rec->u.sample); break;
	case DP_REC_LOST: r = dp_write_lost(w, &rec->u.lost); break;
	case DP_REC_SYMTAB:
		if (rec->u.symtab.data)
			r = dp_write_symtab(w, rec->domain, &rec->u.symtab);
		else
			r = dp_write_raw(w, rec->domain, rec->raw, rec->raw_len); /* kept stored */
		break;
	case DP_REC_COUNTERS: r = dp_write_counters(w, rec->domain, &rec->u.counters); break;
	case DP_REC_STATS:
		c->stats = rec->u.stats;
		c->has_stats = true;
		break;
	default:
		break;  /* switches are the writer's; unknown tags have no typed form */
	}
	/* a record the writer refuses as malformed is skipped, not fatal */
	return r == -EINVAL ? 0 : r;
}

int dp_convert(struct dp_reader *r, struct dp_writer *w, const struct dp_convert_hooks *hooks,
	       struct dp_meta *meta)
{
	struct conv c = { .w = w, .hooks = hooks };
	const struct dp_visitor v = { .record = c_record };
	int rc = dp_scan(r, &v, &c, meta);
	if (rc)
		return rc;
	if (c.has_stats && !dp_reader_incomplete(r))
		return dp_write_stats(w, &c.stats);
	return 0;
}
