// SPDX-License-Identifier: MIT
/*
 * dp_scan tests, on synthetic files written with the format writer: the
 * meta counts (records per type, samples per domain, lost by source with
 * an "other" slot, saturation, STATS), domains and events indexed by id
 * (host first, 10,000 domains), the visitor's dispatch and its stop on a
 * nonzero return, progress, and damage / incomplete passed through from
 * the reader; COUNTERS totals per (domain, name), adding up over records,
 * saturating, bounded in distinct names, and their own callback.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/scan.h"
#include "fixture.h"
#include "unit.h"
#include "util/file.h"
#include "util/xalloc.h"

static char tmpdir[] = "/tmp/domprof-scan-XXXXXX";
static char path[256];

static struct dp_writer *open_writer(size_t chunk)
{
	snprintf(path, sizeof(path), "%s/t.data", tmpdir);
	char *argv[] = { "domprof", "test" };
	struct dp_writer_opts o = { .chunk_bytes = chunk };
	int err = 0;
	struct dp_writer *w = fixture_writer(path, 2, argv, &o, &err);
	CHECK(w != NULL);
	return w;
}

static struct dp_reader *open_reader(void)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	CHECK(r != NULL);
	return r;
}

static void sample(struct dp_writer *w, uint32_t dom, uint16_t ev)
{
	struct dp_sample s = { .time = 1, .ip = 0x1000, .period = 1, .event = ev, .mode = DP_MODE_USER };
	CHECK(dp_write_sample(w, dom, &s) == 0);
}

struct counter {
	uint64_t records, samples, mmaps, tasks, domains, events, losts, stats, others;
	uint64_t progress;
	uint64_t stop_at;       /* stop (return 7) at this sample, 0 never */
};

static int c_record(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->records++; return 0; }
static int c_sample(void *ctx, const struct dp_record *rec)
{
	struct counter *c = ctx;
	return ++c->samples == c->stop_at ? 7 : 0;
}
static int c_mmap(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->mmaps++; return 0; }
static int c_task(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->tasks++; return 0; }
static int c_domain(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->domains++; return 0; }
static int c_event(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->events++; return 0; }
static int c_lost(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->losts++; return 0; }
static int c_stats(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->stats++; return 0; }
static int c_other(void *ctx, const struct dp_record *rec) { ((struct counter *)ctx)->others++; return 0; }
static void c_progress(void *ctx, uint64_t pos, uint64_t size)
{
	CHECK(pos <= size);
	((struct counter *)ctx)->progress++;
}

static const struct dp_visitor counting = {
	.record = c_record, .sample = c_sample, .mmap = c_mmap, .task = c_task,
	.domain = c_domain, .event = c_event, .lost = c_lost, .stats = c_stats,
	.other = c_other, .progress = c_progress,
};

static void counts_and_dispatch(void)
{
	struct dp_writer *w = open_writer(0);
	struct dp_event e1 = { .id = 3, .name = "cpu-clock", .period = 1000 };
	struct dp_event e1b = { .id = 3, .name = "shadowed", .period = 5 };
	struct dp_event e2 = { .id = 9, .name = "cycles" };
	CHECK(dp_write_event(w, &e1) == 0);
	CHECK(dp_write_event(w, &e2) == 0);
	CHECK(dp_write_event(w, &e1b) == 0);  /* same id: the first one is kept */
	struct dp_domain d5 = { .id = 5, .kind = DP_DOMAIN_ACTIVE, .vcpus = 2, .name = "vm1",
				.address = "agent:x", .symsrc = "embedded" };
	CHECK(dp_write_domain(w, &d5) == 0);
	struct dp_mmap m = { .pid = 1, .start = 0x1000, .len = 0x1000, .path = "/bin/x" };
	CHECK(dp_write_mmap(w, 7, &m) == 0);  /* domain 7: maps only, never listed */
	struct dp_task t = { .pid = 1, .tid = 1, .comm = "x" };
	CHECK(dp_write_task(w, 5, &t) == 0);
	for (int i = 0; i < 3; i++)
		sample(w, DP_HOST_DOMAIN, 3);
	for (int i = 0; i < 4; i++)
		sample(w, 5, 9);
	struct dp_lost l1 = { .count = 10, .source = DP_LOST_RING };
	struct dp_lost l2 = { .count = 4, .source = DP_LOST_AGENT, .where = 5 };
	struct dp_lost l3 = { .count = 2, .source = 77 };
	struct dp_lost l4 = { .count = UINT64_MAX, .source = DP_LOST_AGENT };
	CHECK(dp_write_lost(w, &l1) == 0);
	CHECK(dp_write_lost(w, &l2) == 0);
	CHECK(dp_write_lost(w, &l3) == 0);
	struct dp_stats st = { .samples = 7, .exit_status = 3, .flags = DP_STATS_ERROR };
	CHECK(dp_write_stats(w, &st) == 0);
	CHECK(dp_writer_finish(w) == 0);

	struct dp_reader *r = open_reader();
	struct dp_meta meta = { 0 };
	struct counter c = { 0 };
	CHECK(dp_scan(r, &counting, &c, &meta) == 0);
	CHECK_EQ_U64(meta.counts[DP_REC_EVENT], 3);
	CHECK_EQ_U64(meta.counts[DP_REC_SAMPLE], 7);
	CHECK_EQ_U64(meta.counts[DP_REC_LOST], 3);
	CHECK_EQ_U64(meta.counts[DP_REC_STATS], 1);
	CHECK(meta.counts[DP_REC_DOMAIN_SWITCH] > 0);
	CHECK_EQ_U64(meta.unknown, 0);
	CHECK_EQ_U64(meta.samples, 7);
	CHECK_EQ_U64(c.samples, 7);
	CHECK_EQ_U64(c.mmaps, 1);
	CHECK_EQ_U64(c.tasks, 1);
	CHECK_EQ_U64(c.domains, 1);
	CHECK_EQ_U64(c.events, 3);
	CHECK_EQ_U64(c.losts, 3);
	CHECK_EQ_U64(c.stats, 1);
	CHECK_EQ_U64(c.others, meta.counts[DP_REC_DOMAIN_SWITCH]);
	uint64_t all = meta.unknown;
	for (int i = 0; i <= DP_REC_MAX_KNOWN; i++)
		all += meta.counts[i];
	CHECK_EQ_U64(c.records, all);
	CHECK_EQ_U64(c.progress, 0);

	CHECK_EQ_U64(meta.ndomains, 3);
	CHECK_EQ_U64(meta.domains[0].id, DP_HOST_DOMAIN);
	CHECK(!meta.domains[0].has_record);
	CHECK_EQ_U64(meta.domains[0].samples, 3);
	CHECK_EQ_U64(meta.domains[0].listed, 1);
	const struct dp_meta_domain *d = dp_meta_domain(&meta, 5);
	CHECK(d && d->has_record && d->samples == 4 && d->d.vcpus == 2 && d->listed == 2);
	CHECK_STR(d ? d->d.name : NULL, "vm1");
	CHECK_STR(d ? d->d.address : NULL, "agent:x");
	d = dp_meta_domain(&meta, 7);
	CHECK(d && !d->has_record && !d->samples && !d->listed);
	CHECK_STR(d ? d->d.name : NULL, "");
	CHECK(dp_meta_domain(&meta, 6) == NULL);

	CHECK_EQ_U64(meta.nevents, 2);
	const struct dp_meta_event *e = dp_meta_event(&meta, 3);
	CHECK_STR(e ? e->e.name : NULL, "cpu-clock");
	CHECK(e && e->e.period == 1000);
	CHECK_STR(dp_meta_event(&meta, 9) ? dp_meta_event(&meta, 9)->e.name : NULL, "cycles");
	CHECK(dp_meta_event(&meta, 4) == NULL);
	CHECK_EQ_U64(dp_meta_event_index(&meta, 9), 1);

	CHECK_EQ_U64(meta.lost, 16);
	CHECK_EQ_U64(meta.lost_by_source[DP_LOST_RING], 10);
	CHECK_EQ_U64(meta.lost_by_source[DP_LOST_AGENT], 4);
	CHECK_EQ_U64(meta.lost_other, 2);
	CHECK_EQ_U64(dp_meta_lost_of(&meta, 1000), 2);
	CHECK(meta.has_stats && meta.stats.exit_status == 3 && (meta.stats.flags & DP_STATS_ERROR));
	CHECK_EQ_U64(meta.ndamage, 0);
	CHECK(meta.incomplete == NULL);

	/* a second scan of the same reader resets meta and reads the same */
	CHECK(dp_scan(r, NULL, NULL, &meta) == 0);
	CHECK_EQ_U64(meta.samples, 7);
	CHECK_EQ_U64(meta.ndomains, 3);

	/* nonzero stops at once and is returned */
	struct counter s = { .stop_at = 2 };
	CHECK(dp_scan(r, &counting, &s, &meta) == 7);
	CHECK_EQ_U64(s.samples, 2);
	CHECK_EQ_U64(meta.samples, 2);
	dp_meta_release(&meta);
	CHECK(meta.domains == NULL && meta.ndomains == 0);
	dp_reader_free(r);
	CHECK(dp_scan(NULL, NULL, NULL, NULL) < 0);

	/* lost sums saturate */
	w = open_writer(0);
	CHECK(dp_write_lost(w, &l4) == 0);
	CHECK(dp_write_lost(w, &l2) == 0);
	CHECK(dp_writer_finish(w) == 0);
	r = open_reader();
	CHECK(dp_scan(r, NULL, NULL, &meta) == 0);
	CHECK_EQ_U64(meta.lost, UINT64_MAX);
	CHECK_EQ_U64(meta.lost_by_source[DP_LOST_AGENT], UINT64_MAX);
	CHECK(!meta.has_stats);
	CHECK(meta.incomplete != NULL);  /* no STATS record */
	dp_meta_release(&meta);
	dp_reader_free(r);
}

static void many_domains(void)
{
	struct dp_writer *w = open_writer(4096);
	for (uint32_t i = 1; i <= 10000; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "d%u", i);
		struct dp_domain d = { .id = i * 3, .kind = DP_DOMAIN_PASSIVE, .name = nm, .address = "", .symsrc = "" };
		CHECK(dp_write_domain(w, &d) == 0);
	}
	for (uint32_t i = 10000; i >= 1; i--)
		sample(w, i * 3, 0);
	/* 70,000 more to see progress */
	for (int i = 0; i < 70000; i++)
		sample(w, DP_HOST_DOMAIN, 0);
	struct dp_stats st = { 0 };
	CHECK(dp_write_stats(w, &st) == 0);
	CHECK(dp_writer_finish(w) == 0);
	struct dp_reader *r = open_reader();
	struct dp_meta meta = { 0 };
	struct counter c = { 0 };
	CHECK(dp_scan(r, &counting, &c, &meta) == 0);
	CHECK_EQ_U64(meta.ndomains, 10001);
	CHECK_EQ_U64(c.progress, c.records / DP_SCAN_PROGRESS_EVERY);
	CHECK(c.progress >= 1);
	int bad = 0;
	for (uint32_t i = 1; i <= 10000; i++) {
		const struct dp_meta_domain *d = dp_meta_domain(&meta, i * 3);
		char nm[32];
		snprintf(nm, sizeof(nm), "d%u", i);
		if (!d || d->samples != 1 || strcmp(d->d.name, nm) || d->listed != i + 1)
			bad++;
		if (dp_meta_domain(&meta, i * 3 + 1))
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(meta.domains[0].samples, 70000);
	dp_meta_release(&meta);
	dp_reader_free(r);
}

static void damage_passed_through(void)
{
	struct dp_writer *w = open_writer(256);
	for (int i = 0; i < 200; i++)
		sample(w, DP_HOST_DOMAIN, 0);
	struct dp_stats st = { 0 };
	CHECK(dp_write_stats(w, &st) == 0);
	CHECK(dp_writer_finish(w) == 0);
	/* cut the file in the middle of a chunk */
	struct stat sb;
	CHECK(stat(path, &sb) == 0);
	CHECK(truncate(path, (sb.st_size / 2 & ~7) + 13) == 0);  /* never a chunk boundary */
	struct dp_reader *r = open_reader();
	struct dp_meta meta = { 0 };
	CHECK(dp_scan(r, NULL, NULL, &meta) == 0);
	CHECK(meta.ndamage >= 1);
	const struct dp_damage *d;
	CHECK_EQ_U64(dp_reader_damage(r, &d), meta.ndamage);
	CHECK(meta.damage == d);
	CHECK(meta.samples > 0 && meta.samples < 200);
	CHECK(!meta.has_stats);
	CHECK(meta.incomplete != NULL && meta.incomplete == dp_reader_incomplete(r));
	dp_meta_release(&meta);
	dp_reader_free(r);
}

static int c_counters(void *ctx, const struct dp_record *rec)
{
	((struct counter *)ctx)->others += 1000;  /* told apart from `other` */
	return 0;
}

static void counter_sums(void)
{
	struct dp_writer *w = open_writer(128);  /* records over several chunks */
	struct dp_counter a[] = { { "unwind.chains", 10 }, { "unwind.stop.end", 7 } };
	struct dp_counter b[] = { { "unwind.chains", 5 }, { "unwind.chains", 1 }, { "big", UINT64_MAX } };
	struct dp_counter c[] = { { "big", 3 }, { "unwind.chains", 100 } };
	CHECK(dp_write_counters(w, 4, &(struct dp_counters){ 2, a }) == 0);
	sample(w, 4, 0);
	CHECK(dp_write_counters(w, 4, &(struct dp_counters){ 3, b }) == 0);
	CHECK(dp_write_counters(w, 4, &(struct dp_counters){ 2, c }) == 0);
	CHECK(dp_write_counters(w, DP_HOST_DOMAIN, &(struct dp_counters){ 1, a }) == 0);
	CHECK(dp_write_counters(w, 9, &(struct dp_counters){ 1, c }) == 0);  /* counters only */
	CHECK(dp_writer_finish(w) == 0);

	struct dp_reader *r = open_reader();
	struct dp_meta meta = { 0 };
	struct counter cn = { 0 };
	const struct dp_visitor v = { .counters = c_counters, .other = c_other };
	CHECK(dp_scan(r, &v, &cn, &meta) == 0);
	CHECK_EQ_U64(meta.counts[DP_REC_COUNTERS], 5);
	CHECK_EQ_U64(meta.unknown, 0);
	CHECK_EQ_U64(cn.others, 5 * 1000 + meta.counts[DP_REC_DOMAIN_SWITCH]);
	struct dp_counter_sums *s = &meta.counters;
	CHECK_EQ_U64(dp_counter_sums_get(s, 4, "unwind.chains"), 116);
	CHECK_EQ_U64(dp_counter_sums_get(s, 4, "unwind.stop.end"), 7);
	CHECK_EQ_U64(dp_counter_sums_get(s, 4, "big"), UINT64_MAX);  /* saturated */
	CHECK_EQ_U64(dp_counter_sums_get(s, 0, "unwind.chains"), 10);
	CHECK_EQ_U64(dp_counter_sums_get(s, 9, "unwind.chains"), 0); /* not in that record */
	CHECK_EQ_U64(dp_counter_sums_get(s, 9, "big"), 3);
	CHECK_EQ_U64(dp_counter_sums_get(s, 5, "big"), 0);
	CHECK(dp_meta_domain(&meta, 9) != NULL);  /* a scoped record's domain */
	CHECK_EQ_U64(dp_meta_domain(&meta, 9)->listed, 0);
	dp_counter_sums_sort(s);
	const struct dp_counter_sum *e;
	CHECK_EQ_U64(dp_counter_sums_of(s, 4, &e), 3);
	CHECK(e && !strcmp(e[0].name, "big") && !strcmp(e[1].name, "unwind.chains") &&
	      !strcmp(e[2].name, "unwind.stop.end") && e[1].value == 116);
	CHECK_EQ_U64(dp_counter_sums_of(s, 0, &e), 1);
	CHECK_EQ_U64(dp_counter_sums_of(s, 9, &e), 1);
	CHECK_EQ_U64(dp_counter_sums_of(s, 7, &e), 0);
	CHECK(e == NULL);
	CHECK_EQ_U64(dp_counter_sums_get(s, 4, "unwind.chains"), 116);  /* after the sort */
	dp_meta_release(&meta);
	dp_reader_free(r);

	/* the bound on distinct names: the rest are counted, not kept */
	struct dp_counter_sums t = { 0 };
	char name[32];
	struct dp_counter one = { name, 1 };
	for (uint32_t i = 0; i < DP_COUNTER_SUMS_MAX + 10; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		dp_counter_sums_add(&t, i % 3, &(struct dp_counters){ 1, &one });
	}
	dp_counter_sums_add(&t, 0, &(struct dp_counters){ 1, &one });  /* the last name seen: dropped */
	snprintf(name, sizeof(name), "n0");
	dp_counter_sums_add(&t, 0, &(struct dp_counters){ 1, &one });  /* kept: adds */
	CHECK_EQ_U64(t.n, DP_COUNTER_SUMS_MAX);
	CHECK_EQ_U64(t.dropped, 11);
	CHECK_EQ_U64(dp_counter_sums_get(&t, 0, "n0"), 2);
	dp_counter_sums_release(&t);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	counter_sums();
	counts_and_dispatch();
	many_domains();
	damage_passed_through();
	unlink(path);
	rmdir(tmpdir);
	return unit_done();
}
