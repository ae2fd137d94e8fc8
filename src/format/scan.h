/* SPDX-License-Identifier: MIT */
/*
 * The one walk over a recording. Every command and module that reads a
 * file's records (info, dump, merge, the profile loader, the agent relay)
 * goes through dp_scan: it visits each record once, in file order, calls
 * the visitor's callback for its type, and keeps a struct dp_meta of what
 * the file holds (domains, events, record counts, lost counts by source,
 * the STATS record, damage), so no caller rebuilds its own domain table
 * or lost-count array with its own bounds.
 *
 * Ownership: dp_meta owns its arrays and strings (free with
 * dp_meta_release); its damage list and incomplete reason are borrowed
 * from the reader and valid while the reader lives and is not read
 * again. Records passed to callbacks are the reader's (see dp_record):
 * valid during the callback only.
 */
#ifndef DOMPROF_FORMAT_SCAN_H
#define DOMPROF_FORMAT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "util/hmap.h"

/*
 * Callbacks, each optional (NULL = not interested). A nonzero return
 * stops the scan, and dp_scan returns that value. `record` is called
 * first for every record (for relays that copy everything); if it returns
 * 0 the per-type callback follows. `other` gets DOMAIN_SWITCH records and
 * unknown tags. `progress` is called every DP_SCAN_PROGRESS_EVERY records
 * with the reader's position and the file size.
 */
struct dp_visitor {
	int (*record)(void *ctx, const struct dp_record *rec);
	int (*sample)(void *ctx, const struct dp_record *rec);
	int (*mmap)(void *ctx, const struct dp_record *rec);
	int (*task)(void *ctx, const struct dp_record *rec);
	int (*symtab)(void *ctx, const struct dp_record *rec);
	int (*domain)(void *ctx, const struct dp_record *rec);
	int (*event)(void *ctx, const struct dp_record *rec);
	int (*lost)(void *ctx, const struct dp_record *rec);
	int (*stats)(void *ctx, const struct dp_record *rec);
	int (*counters)(void *ctx, const struct dp_record *rec);
	int (*other)(void *ctx, const struct dp_record *rec);
	void (*progress)(void *ctx, uint64_t pos, uint64_t size);
};

#define DP_SCAN_PROGRESS_EVERY 0x10000u

/*
 * Totals of COUNTERS records (format 1.3) per (domain, name): what a
 * domain's counters say over the whole recording. Sums saturate (values
 * are crafted input). At most DP_COUNTER_SUMS_MAX distinct (domain, name)
 * pairs are kept per table, whatever the file holds; values of further
 * names are counted in `dropped` (entries, not their values). A zeroed
 * struct is an empty table; entries own their names.
 */
#define DP_COUNTER_SUMS_MAX 65536u

struct dp_counter_sum {
	uint32_t domain;
	uint64_t value;
	char name[DP_MAX_COUNTER_NAME + 1];
};

struct dp_counter_sums {
	struct dp_counter_sum *v;  /* first-seen order; sorted by dp_counter_sums_sort */
	size_t n, cap;
	uint64_t dropped;          /* entries of names past DP_COUNTER_SUMS_MAX */
	struct hidx idx;           /* private */
};

/* Add one record's counters to domain's totals. */
void dp_counter_sums_add(struct dp_counter_sums *s, uint32_t domain, const struct dp_counters *c);
/* Sort v by domain id, then name (adding afterwards is still fine). */
void dp_counter_sums_sort(struct dp_counter_sums *s);
/* After a sort: the entries of one domain, contiguous in v (*out; NULL and
 * 0 when it has none). */
size_t dp_counter_sums_of(const struct dp_counter_sums *s, uint32_t domain,
			  const struct dp_counter_sum **out);
/* The total of one (domain, name), 0 when absent (any time). */
uint64_t dp_counter_sums_get(const struct dp_counter_sums *s, uint32_t domain, const char *name);
void dp_counter_sums_release(struct dp_counter_sums *s);

/* A domain of the file: one per id seen in a DOMAIN record or as the
 * current domain of a domain-scoped record (SAMPLE, TASK, MMAP, SYMTAB,
 * COUNTERS, unknown tags). The host (id 0) is always domains[0]. */
struct dp_meta_domain {
	uint32_t id;
	bool has_record;        /* a DOMAIN record was seen (the last one wins) */
	struct dp_domain d;     /* its fields, strings owned ("" when no record) */
	uint64_t samples;       /* SAMPLE records in this domain */
	/* 1-based rank of the first SAMPLE or DOMAIN record of this domain
	 * among all domains' (0: it has neither, only tasks, maps, tables):
	 * the order `info` lists domains in. The host's is 1. */
	uint64_t listed;
};

/* An event of the file: the first EVENT record of each id. */
struct dp_meta_event {
	struct dp_event e;      /* name owned */
};

struct dp_meta {
	struct dp_header header;         /* strings borrowed from the reader */
	struct dp_meta_domain *domains;  /* in order of first appearance */
	size_t ndomains, domcap;
	struct dp_meta_event *events;    /* in order of first appearance */
	size_t nevents, evcap;
	uint64_t counts[DP_REC_MAX_KNOWN + 1]; /* records per known type */
	uint64_t unknown;                /* records of tags this build does not know */
	uint64_t samples;                /* SAMPLE records, all domains */
	/* SAMPLEs with user registers and stack (1.4), their stack bytes, and
	 * how many of them filled the size asked for (the stack went on) */
	uint64_t ustack_samples, ustack_bytes, ustack_full;
	uint64_t ustack_ref_bytes;  /* of ustack_bytes, taken from earlier stacks (1.5 delta form) */
	/* LOST counts as the file states them; sums saturate (util/sat.h). */
	uint64_t lost;
	uint64_t lost_by_source[DP_LOST_SOURCES];
	uint64_t lost_other;             /* sources >= DP_LOST_SOURCES */
	bool has_stats;
	struct dp_stats stats;           /* the last STATS record */
	struct dp_counter_sums counters; /* COUNTERS totals (unsorted; sort to list them) */
	/* after the scan, borrowed from the reader */
	const struct dp_damage *damage;
	size_t ndamage;
	const char *incomplete;          /* dp_reader_incomplete */
	/* private: id -> index+1 */
	struct hmap domidx, evidx;
	uint64_t nlisted;
};

/*
 * Rewind r and visit every record once. v and meta may be NULL. meta is
 * reset (released first if it was filled by an earlier scan, so a zeroed
 * or released struct is fine) and updated for a record before its
 * callback runs. Returns 0 after the last record, the nonzero value a
 * callback returned (the scan stopped there; meta holds what was read so
 * far), or a negative errno.
 */
int dp_scan(struct dp_reader *r, const struct dp_visitor *v, void *ctx, struct dp_meta *meta);

/*
 * Write every record of r through w's typed writers (format/convert.c):
 * `domprof import`, for a perf.data (whose records have no raw bytes).
 * hooks->record, when set, sees each record first: > 0 means it wrote
 * (or dropped) the record itself, < 0 an error that stops the copy.
 * STATS is written last (when the input had one and is complete). meta
 * as for dp_scan. Returns 0, a negative errno of the writer, or the
 * hook's error.
 */
struct dp_convert_hooks {
	int (*record)(void *ctx, struct dp_writer *w, const struct dp_record *rec);
	void *ctx;
};
int dp_convert(struct dp_reader *r, struct dp_writer *w, const struct dp_convert_hooks *hooks,
	       struct dp_meta *meta);

/* Lookups by id: NULL when the file never named it. */
const struct dp_meta_domain *dp_meta_domain(const struct dp_meta *meta, uint32_t id);
const struct dp_meta_event *dp_meta_event(const struct dp_meta *meta, uint32_t id);
/* Index in meta->domains / meta->events, or -1. */
long dp_meta_domain_index(const struct dp_meta *meta, uint32_t id);
long dp_meta_event_index(const struct dp_meta *meta, uint32_t id);

/* Count of a lost source, `other` slot for src >= DP_LOST_SOURCES. */
uint64_t dp_meta_lost_of(const struct dp_meta *meta, uint32_t src);

/* Frees what meta owns and zeroes it. */
void dp_meta_release(struct dp_meta *meta);

#endif
