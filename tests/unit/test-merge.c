// SPDX-License-Identifier: MIT
/*
 * analysis/merge tests on synthetic recordings written with the format
 * writer: a host and two guests merge with the guests' domains renumbered
 * after the host's and named NAME; equal events share an id and a
 * different event with a taken id is renumbered in its SAMPLEs; a merged
 * file merged again as a guest gives NAME.SUB; a duplicate name is
 * refused; a damaged (cut) input merges its readable prefix; an input
 * without STATS makes the output incomplete.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/merge.h"
#include "fixture.h"
#include "unit.h"
#include "util/xalloc.h"

static char tmpdir[] = "/tmp/domprof-merge-XXXXXX";

static char *tpath(const char *name)
{
	static char buf[64][256];  /* callers keep a few at once */
	static int n;
	char *p = buf[n++ % 64];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static struct dp_writer *open_writer(const char *path, size_t chunk)
{
	char *argv[] = { "domprof", "test" };
	struct dp_writer_opts o = { .chunk_bytes = chunk };
	int err = 0;
	struct dp_writer *w = fixture_writer(path, 2, argv, &o, &err);
	CHECK(w != NULL);
	return w;
}

/* A recording: one event (id ev, name evname), n samples in domain 0
 * and m in domain 4 (with a DOMAIN record "sub") when m > 0. */
static void make_input(const char *path, uint32_t ev, const char *evname, int n, int m, bool stats)
{
	struct dp_writer *w = open_writer(path, 512);
	struct dp_event e = { .id = ev, .name = evname, .period = 1000 };
	CHECK(dp_write_event(w, &e) == 0);
	if (m) {
		struct dp_domain d = { .id = 4, .kind = DP_DOMAIN_PASSIVE, .name = "sub", .address = "", .symsrc = "" };
		CHECK(dp_write_domain(w, &d) == 0);
	}
	for (int i = 0; i < n + m; i++) {
		struct dp_sample s = { .time = (uint64_t)i, .ip = 0x1000 + (uint64_t)i, .period = 1,
				       .event = (uint16_t)ev, .mode = DP_MODE_USER };
		CHECK(dp_write_sample(w, i < n ? 0 : 4, &s) == 0);
	}
	struct dp_lost l = { .count = 5, .source = DP_LOST_RING };
	CHECK(dp_write_lost(w, &l) == 0);
	if (stats) {
		struct dp_stats st = { .samples = (uint64_t)(n + m) };
		CHECK(dp_write_stats(w, &st) == 0);
	}
	CHECK(dp_writer_finish(w) == 0);
}

static struct dp_reader *rd(const char *path)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	CHECK(r != NULL);
	return r;
}

/* Merge paths[0] (host) and NAME=paths[i] into out; returns merge_plan's code. */
static int do_merge(const char *out, const char *const *paths, const char *const *names, size_t nin)
{
	struct merge_input *in = xcalloc(nin, sizeof(*in));
	for (size_t i = 0; i < nin; i++) {
		in[i].path = paths[i];
		in[i].name = names[i];
		in[i].r = rd(paths[i]);
		dp_reader_set_flags(in[i].r, DP_READ_SYMTAB_STORED);
	}
	struct merge mg = { 0 };
	char msg[320] = "";
	int rc = merge_plan(&mg, in, nin, msg, sizeof(msg));
	if (!rc) {
		struct dp_writer *w = open_writer(out, 0);
		CHECK(merge_write(&mg, w) == 0);
		CHECK(dp_writer_finish(w) == 0);
	} else {
		CHECK(msg[0] != 0);
	}
	merge_release(&mg);
	for (size_t i = 0; i < nin; i++)
		merge_input_release(&in[i]);
	free(in);
	return rc;
}

struct ev_count { uint64_t by_event[8]; };

static int count_sample(void *ctx, const struct dp_record *rec)
{
	struct ev_count *c = ctx;
	if (rec->u.sample.event < 8)
		c->by_event[rec->u.sample.event]++;
	return 0;
}

static void three_inputs(void)
{
	make_input(tpath("host.data"), 0, "cpu-clock", 10, 0, true);
	make_input(tpath("g1.data"), 0, "cpu-clock", 6, 0, true);   /* same event: shares id 0 */
	make_input(tpath("g2.data"), 0, "cycles", 3, 2, true);      /* id 0 taken: renumbered */
	const char *paths[] = { tpath("host.data"), tpath("g1.data"), tpath("g2.data") };
	const char *names[] = { NULL, "vm1", "vm2" };
	CHECK(do_merge(tpath("m.data"), paths, names, 3) == 0);

	struct dp_reader *r = rd(tpath("m.data"));
	struct dp_meta m = { 0 };
	struct ev_count c = { 0 };
	const struct dp_visitor v = { .sample = count_sample };
	CHECK(dp_scan(r, &v, &c, &m) == 0);
	CHECK_EQ_U64(m.samples, 21);
	CHECK_EQ_U64(m.ndamage, 0);
	CHECK(m.incomplete == NULL);
	CHECK(m.has_stats && m.stats.samples == 21 && m.stats.lost == 15);
	CHECK_EQ_U64(m.lost, 15);
	/* domains: host 0, vm1 1, vm2 2, vm2.sub 3 */
	CHECK_EQ_U64(m.ndomains, 4);
	const char *want[] = { "host", "vm1", "vm2", "vm2.sub" };
	for (uint32_t i = 0; i < 4; i++) {
		const struct dp_meta_domain *d = dp_meta_domain(&m, i);
		CHECK(d && d->has_record);
		CHECK_STR(d ? d->d.name : NULL, want[i]);
	}
	CHECK_EQ_U64(dp_meta_domain(&m, 0)->samples, 10);
	CHECK_EQ_U64(dp_meta_domain(&m, 1)->samples, 6);
	CHECK_EQ_U64(dp_meta_domain(&m, 2)->samples, 3);
	CHECK_EQ_U64(dp_meta_domain(&m, 3)->samples, 2);
	CHECK_EQ_U64(dp_meta_domain(&m, 3)->d.kind, DP_DOMAIN_PASSIVE);
	CHECK_EQ_U64(dp_meta_domain(&m, 1)->d.kind, DP_DOMAIN_ACTIVE);
	/* events: cpu-clock 0 shared, cycles renumbered to 1 */
	CHECK_EQ_U64(m.nevents, 2);
	CHECK_STR(dp_meta_event(&m, 0) ? dp_meta_event(&m, 0)->e.name : NULL, "cpu-clock");
	CHECK_STR(dp_meta_event(&m, 1) ? dp_meta_event(&m, 1)->e.name : NULL, "cycles");
	CHECK_EQ_U64(c.by_event[0], 16);
	CHECK_EQ_U64(c.by_event[1], 5);
	dp_meta_release(&m);
	dp_reader_free(r);

	/* the merged file merged again as a guest: NAME.SUB for its domains */
	const char *p2[] = { tpath("host.data"), tpath("m.data") };
	const char *n2[] = { NULL, "again" };
	CHECK(do_merge(tpath("m2.data"), p2, n2, 2) == 0);
	r = rd(tpath("m2.data"));
	CHECK(dp_scan(r, NULL, NULL, &m) == 0);
	CHECK_EQ_U64(m.ndomains, 5);
	const char *want2[] = { "host", "again", "again.vm1", "again.vm2", "again.vm2.sub" };
	for (uint32_t i = 0; i < 5; i++) {
		const struct dp_meta_domain *d = dp_meta_domain(&m, i);
		CHECK_STR(d ? d->d.name : NULL, want2[i]);
	}
	CHECK_EQ_U64(m.samples, 31);
	dp_meta_release(&m);
	dp_reader_free(r);

	/* a name used twice is refused before anything is written */
	const char *n3[] = { NULL, "vm1", "vm1" };
	CHECK(do_merge(tpath("m3.data"), paths, n3, 3) == MERGE_ERR_NAME);
	CHECK(access(tpath("m3.data"), F_OK) != 0);
}

static void damaged_and_incomplete(void)
{
	make_input(tpath("host.data"), 0, "cpu-clock", 10, 0, true);
	make_input(tpath("cut.data"), 0, "cpu-clock", 400, 0, true);
	struct stat sb;
	CHECK(stat(tpath("cut.data"), &sb) == 0);
	CHECK(truncate(tpath("cut.data"), (sb.st_size / 2 & ~7) + 13) == 0);
	const char *paths[] = { tpath("host.data"), tpath("cut.data") };
	const char *names[] = { NULL, "vm" };
	CHECK(do_merge(tpath("md.data"), paths, names, 2) == 0);

	/* what the cut input still reads */
	struct dp_reader *r = rd(tpath("cut.data"));
	struct dp_meta m = { 0 };
	CHECK(dp_scan(r, NULL, NULL, &m) == 0);
	uint64_t prefix = m.samples;
	CHECK(m.ndamage >= 1 && prefix > 0 && prefix < 400);
	dp_meta_release(&m);
	dp_reader_free(r);

	r = rd(tpath("md.data"));
	CHECK(dp_scan(r, NULL, NULL, &m) == 0);
	CHECK_EQ_U64(m.ndamage, 0);
	CHECK_EQ_U64(m.samples, 10 + prefix);
	CHECK_EQ_U64(dp_meta_domain(&m, 1) ? dp_meta_domain(&m, 1)->samples : 0, prefix);
	/* the cut input had no STATS: the merge says it is incomplete */
	CHECK(m.has_stats && (m.stats.flags & DP_STATS_INCOMPLETE));
	CHECK(m.incomplete != NULL);
	dp_meta_release(&m);
	dp_reader_free(r);

	/* control: two complete inputs give a complete merge */
	const char *p2[] = { tpath("host.data"), tpath("host.data") };
	CHECK(do_merge(tpath("mc.data"), p2, names, 2) == 0);
	r = rd(tpath("mc.data"));
	CHECK(dp_scan(r, NULL, NULL, &m) == 0);
	CHECK(m.incomplete == NULL && !(m.stats.flags & DP_STATS_INCOMPLETE));
	dp_meta_release(&m);
	dp_reader_free(r);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	three_inputs();
	damaged_and_incomplete();
	const char *files[] = { "host.data", "g1.data", "g2.data", "m.data", "m2.data", "cut.data",
				"md.data", "mc.data" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(tpath(files[i]));
	rmdir(tmpdir);
	return unit_done();
}
