// SPDX-License-Identifier: MIT
/*
 * Unit test of collect/collector.c, the recorder's loop, driven with fake
 * domain sources (domain_source_custom) and no host perf source, writing
 * a real file through the format writer and reading it back: records of
 * each source land under their domain, the loop stops on the flag, the
 * deadline, the command's exit and the -p pids gone, the STATS totals are
 * written, and a writer that fails (its descriptor turned into /dev/full)
 * ends the run with an errno and the file readable up to the last chunk;
 * a source's rate goes into the file as its rate COUNTERS.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/rates.h"
#include "collect/collector.h"
#include "format/format.h"
#include "util/clock.h"
#include "unit.h"

static volatile sig_atomic_t g_flag;

struct fake {
	char name[16];
	uint32_t dom;
	unsigned per_drain;     /* samples written per drain */
	uint64_t max;           /* then it ends by itself (0: never) */
	unsigned flag_at;       /* set g_flag at this drain (0: never) */
	uint64_t samples;
	unsigned drains;
	bool stopped;
};

static int f_drain(void *impl, struct dp_writer *w)
{
	struct fake *f = impl;
	f->drains++;
	if (f->flag_at && f->drains == f->flag_at)
		g_flag = SIGINT;
	for (unsigned i = 0; i < f->per_drain && (!f->max || f->samples < f->max); i++) {
		struct dp_sample s = { .time = mono_ns(), .ip = 0x1000 + f->dom, .pid = 1, .tid = 1,
				       .period = 1, .mode = DP_MODE_KERNEL };
		int ret = dp_write_sample(w, f->dom, &s);
		if (ret < 0)
			return ret;
		f->samples++;
	}
	return 0;
}
static bool f_ended(const void *impl) { const struct fake *f = impl; return f->max && f->samples >= f->max; }
static const char *f_message(const void *impl) { return ((const struct fake *)impl)->name; }
static const char *f_name(const void *impl) { return ((const struct fake *)impl)->name; }
static uint64_t f_samples(const void *impl) { return ((const struct fake *)impl)->samples; }
static uint64_t f_lost(const void *impl) { return 0; }
static void f_stop(void *impl) { ((struct fake *)impl)->stopped = true; }
static void f_free(void *impl) { (void)impl; /* on the test's stack */ }

static const struct domain_source_ops fake_ops = {
	.drain = f_drain, .ended = f_ended, .message = f_message, .name = f_name, .samples = f_samples,
	.lost = f_lost, .stop = f_stop, .free = f_free,
};

struct notes { int n; char last[128]; };
static void on_notice(void *ctx, const char *msg)
{
	struct notes *n = ctx;
	n->n++;
	snprintf(n->last, sizeof(n->last), "%s", msg);
}

/* A writer on a fresh temp file, with a DOMAIN record per fake. */
static struct dp_writer *new_writer(char *path, struct fake *f, size_t nf, int *wfd)
{
	strcpy(path, "/tmp/test-collector-XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	struct dp_header h;
	char *argv[] = { "test", NULL };
	dp_header_fill_local(&h, 1, argv);
	struct dp_writer_opts o = { .chunk_bytes = 0, .chunk_ns = 1000000ull, .zstd_level = 1 };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < nf; i++) {
		struct dp_domain d = { .id = f[i].dom, .kind = DP_DOMAIN_ACTIVE, .name = f[i].name,
				       .address = "", .symsrc = "" };
		CHECK(dp_write_domain(w, &d) == 0);
	}
	*wfd = fd;
	return w;
}

struct readback { uint64_t per_dom[4], other_dom, stats_samples, stats_lost, nstats, damage; uint32_t exit_status; };

static void read_back(const char *path, struct readback *rb)
{
	memset(rb, 0, sizeof(*rb));
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	struct dp_record rec;
	while (dp_reader_next(r, &rec) > 0) {
		if (rec.type == DP_REC_SAMPLE) {
			/* the fakes put their domain in the ip: it must match */
			if (rec.domain < 4 && rec.u.sample.ip == 0x1000 + rec.domain)
				rb->per_dom[rec.domain]++;
			else
				rb->other_dom++;
		} else if (rec.type == DP_REC_STATS) {
			rb->nstats++;
			rb->stats_samples = rec.u.stats.samples;
			rb->stats_lost = rec.u.stats.lost;
			rb->exit_status = rec.u.stats.exit_status;
		}
	}
	const struct dp_damage *d;
	rb->damage = dp_reader_damage(r, &d);
	dp_reader_free(r);
}

static struct collector_config config(struct dp_writer *w, struct domain_source **ds, size_t n,
				      struct notes *nt)
{
	struct collector_config c = {
		.w = w, .ds = ds, .nds = n, .stop_flag = &g_flag, .t_start = mono_ns(),
		.notice = on_notice, .notice_ctx = nt,
	};
	return c;
}

/* Two sources, a deadline: each one's samples under its own domain,
 * STATS totals, the one that ended reported once, both stopped. */
static void test_domains_and_deadline(void)
{
	struct fake f[2] = {
		{ .name = "vm1", .dom = 1, .per_drain = 3 },
		{ .name = "vm2", .dom = 2, .per_drain = 5, .max = 10 }, /* ends by the final drain at the latest */
	};
	char path[64];
	int fd;
	struct dp_writer *w = new_writer(path, f, 2, &fd);
	struct domain_source *ds[2] = { domain_source_custom(&fake_ops, &f[0]),
					domain_source_custom(&fake_ops, &f[1]) };
	struct notes nt = { 0 };
	struct collector_config c = config(w, ds, 2, &nt);
	c.duration_ns = 100000000ull;
	struct collector_result res;
	g_flag = 0;
	CHECK(collector_run(&c, &res) == 0);
	CHECK(res.t_end >= c.t_start + c.duration_ns);  /* the deadline, not before */
	CHECK(res.stop_sig == 0);
	CHECK(!res.child_done);
	CHECK(f[0].stopped && f[1].stopped);
	CHECK_EQ_U64(f[1].samples, 10);
	CHECK(f[0].samples > 0);
	CHECK_EQ_U64(res.samples, f[0].samples + f[1].samples);
	CHECK_EQ_U64(res.host_samples, 0);
	CHECK_EQ_U64(res.lost, 0);
	CHECK_EQ_U64(nt.n, 1);
	CHECK_STR(nt.last, "vm2");
	CHECK(dp_writer_finish(w) == 0);
	struct readback rb;
	read_back(path, &rb);
	CHECK_EQ_U64(rb.per_dom[1], f[0].samples);
	CHECK_EQ_U64(rb.per_dom[2], f[1].samples);
	CHECK_EQ_U64(rb.other_dom, 0);
	CHECK_EQ_U64(rb.nstats, 1);
	CHECK_EQ_U64(rb.stats_samples, res.samples);
	CHECK_EQ_U64(rb.damage, 0);
	for (int i = 0; i < 2; i++)
		domain_source_free(ds[i]);
	close(fd);
	unlink(path);
}

/* The flag set during the third drain stops the loop there (no
 * deadline: without the flag it would not return); the final drain
 * follows, and the flag is left set for the caller's summary. */
static void test_stop_flag(void)
{
	struct fake f = { .name = "vm1", .dom = 1, .per_drain = 1, .flag_at = 3 };
	char path[64];
	int fd;
	struct dp_writer *w = new_writer(path, &f, 1, &fd);
	struct domain_source *ds = domain_source_custom(&fake_ops, &f);
	struct notes nt = { 0 };
	struct collector_config c = config(w, &ds, 1, &nt);
	struct collector_result res;
	g_flag = 0;
	CHECK(collector_run(&c, &res) == 0);
	CHECK(res.stop_sig == SIGINT);
	CHECK(g_flag == SIGINT);
	CHECK_EQ_U64(f.drains, 4);
	CHECK_EQ_U64(res.samples, 4);
	CHECK(dp_writer_finish(w) == 0);
	struct readback rb;
	read_back(path, &rb);
	CHECK_EQ_U64(rb.per_dom[1], 4);
	CHECK_EQ_U64(rb.stats_samples, 4);
	domain_source_free(ds);
	close(fd);
	unlink(path);
	g_flag = 0;
}

/* The command's exit stops the loop; its status reaches STATS. Then a
 * -p pid that is gone (a zombie) stops it and is reported. */
static void test_child_and_pids(void)
{
	struct fake f = { .name = "vm1", .dom = 1, .per_drain = 1 };
	char path[64];
	int fd;
	struct dp_writer *w = new_writer(path, &f, 1, &fd);
	struct domain_source *ds = domain_source_custom(&fake_ops, &f);
	struct notes nt = { 0 };
	struct collector_config c = config(w, &ds, 1, &nt);
	pid_t child = fork();
	if (child == 0)
		_exit(3);
	c.child = child;
	struct collector_result res;
	g_flag = 0;
	CHECK(collector_run(&c, &res) == 0);
	CHECK(res.child_done);
	CHECK(WIFEXITED(res.child_status) && WEXITSTATUS(res.child_status) == 3);
	CHECK(dp_writer_finish(w) == 0);
	struct readback rb;
	read_back(path, &rb);
	CHECK_EQ_U64(rb.exit_status, 3);
	close(fd);
	unlink(path);

	w = new_writer(path, &f, 1, &fd);
	c = config(w, &ds, 1, &nt);
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	/* not reaped: a zombie runs no more code, so it counts as gone */
	while (collector_pid_alive(z))
		usleep(1000);
	c.pids = &z;
	c.npids = 1;
	CHECK(collector_run(&c, &res) == 0);
	CHECK(!res.child_done);
	char want[64];
	snprintf(want, sizeof(want), "pid %d exited during recording", (int)z);
	CHECK_STR(nt.last, want);
	CHECK(collector_pid_alive(getpid()));
	waitpid(z, NULL, 0);
	CHECK(!collector_pid_alive(z));
	CHECK(dp_writer_finish(w) == 0);
	domain_source_free(ds);
	close(fd);
	unlink(path);
}

/* The disk fills up while recording: the writer's descriptor becomes
 * /dev/full after the first chunk. The run returns -ENOSPC; the file,
 * trimmed to the bytes the writer completed (as the recorder does), reads
 * without damage and holds the samples of the complete chunk. */
static void test_disk_full(void)
{
	struct fake f = { .name = "vm1", .dom = 1, .per_drain = 50 };
	char path[64];
	int fd;
	struct dp_writer *w = new_writer(path, &f, 1, &fd);
	struct domain_source *ds = domain_source_custom(&fake_ops, &f);
	CHECK(f_drain(&f, w) == 0);
	CHECK(dp_writer_flush(w) == 0);
	uint64_t first = f.samples;
	int full = open("/dev/full", O_WRONLY);
	CHECK(full >= 0);
	/* the writer writes to its fd; the test keeps another on the file */
	int keep = open(path, O_RDWR);
	CHECK(dup2(full, fd) == fd);
	close(full);
	struct notes nt = { 0 };
	struct collector_config c = config(w, &ds, 1, &nt);
	struct collector_result res;
	g_flag = 0;
	int ret = collector_run(&c, &res);
	CHECK(ret == -ENOSPC);
	uint64_t good = dp_writer_bytes(w);
	dp_writer_free(w);
	CHECK(ftruncate(keep, (off_t)good) == 0);
	struct readback rb;
	read_back(path, &rb);
	CHECK_EQ_U64(rb.per_dom[1], first);
	CHECK_EQ_U64(rb.nstats, 0);
	CHECK_EQ_U64(rb.damage, 0);
	domain_source_free(ds);
	close(keep);
	close(fd);
	unlink(path);
}

/* A source that knows its rate: 2 units at 500 Hz over 3 s, 2400 of
 * the 3000 samples asked for, 600 missed. */
static void f_rate(const void *impl, struct domain_source_rate *r)
{
	const struct fake *f = impl;
	*r = (struct domain_source_rate){
		.domain = f->dom, .hz = 500, .units = 2, .begin_ns = 1000000000ull,
		.end_ns = 4000000000ull, .samples = 2400, .missed = 600, .cpu_ns = 30000000ull,
		.ticks = 1500, .held_ns = 450000000ull, .wakes = 1000, .late_ns = 50000000ull,
	};
}
static const struct domain_source_ops rate_ops = {
	.drain = f_drain, .ended = f_ended, .message = f_message, .name = f_name, .samples = f_samples,
	.lost = f_lost, .stop = f_stop, .free = f_free, .rate = f_rate,
};

/* The rate COUNTERS: written for the source that reports a rate (not
 * for the one that does not), read back through dp_scan into the same
 * line record and info print. Control: the source without a rate has
 * none. */
static void test_rates(void)
{
	struct fake f[2] = { { .name = "vm1", .dom = 1, .per_drain = 1 }, { .name = "vm2", .dom = 2, .per_drain = 1 } };
	char path[64];
	int fd;
	struct dp_writer *w = new_writer(path, f, 2, &fd);
	struct domain_source *ds[2] = { domain_source_custom(&rate_ops, &f[0]),
					domain_source_custom(&fake_ops, &f[1]) };
	struct notes nt = { 0 };
	struct collector_config c = config(w, ds, 2, &nt);
	c.duration_ns = 20000000ull;
	struct collector_result res;
	g_flag = 0;
	CHECK(collector_run(&c, &res) == 0);
	CHECK_EQ_U64(res.nrates, 1);
	CHECK(res.rates && !strcmp(res.rates[0].name, "vm1") && res.rates[0].span_ns == 3000000000ull);
	/* the collector adds its own time draining vm1 to the source's */
	CHECK(res.rates && res.rates[0].cpu_ns >= 30000000ull);
	uint64_t cpu = res.rates ? res.rates[0].cpu_ns : 0;
	collector_result_release(&res);
	CHECK(res.rates == NULL);
	CHECK(dp_writer_finish(w) == 0);
	close(fd);
	for (size_t i = 0; i < 2; i++)
		domain_source_free(ds[i]);

	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	struct dp_meta m = { 0 };
	CHECK(r && dp_scan(r, NULL, NULL, &m) == 0);
	struct rate_sums rs;
	CHECK(rate_from_counters(&m, 1, &rs));
	CHECK_EQ_U64(rs.requested, 3000);
	CHECK_EQ_U64(rs.samples, 2400);
	CHECK_EQ_U64(rs.missed, 600);
	CHECK_EQ_U64(rs.unit_ns, 6000000000ull);
	CHECK_EQ_U64(rs.cpu_ns, cpu);
	CHECK_EQ_U64(dp_counter_sums_get(&m.counters, 1, "sampler.ticks"), 1500);
	CHECK_EQ_U64(dp_counter_sums_get(&m.counters, 1, "sampler.wake_late_ns"), 50000000ull);
	char line[400];
	rs.cpu_ns = 30000000ull;  /* a known value for the line */
	rate_format(&rs, "vCPU", line, sizeof(line));
	CHECK_STR(line, "requested 500 Hz, achieved 400.0 Hz (80.0%) x 2 vCPUs over 3.00 s, 2400 samples, 600 lost, "
		  "recorder CPU 0.030 s (1.00% of a CPU); held 0.300 ms a tick, woke 0.050 ms late (1000 of 1500 ticks slept for)");
	rs.ticks = 0;  /* not a passive sampler: no such tail */
	rate_format(&rs, "CPU", line, sizeof(line));
	CHECK_STR(line, "requested 500 Hz, achieved 400.0 Hz (80.0%) x 2 CPUs over 3.00 s, 2400 samples, 600 lost, "
		  "recorder CPU 0.030 s (1.00% of a CPU)");
	/* A domain that ended at its start: no rate, no share of a CPU over
	 * its few ms (was "requested 774 Hz ... (147.82% of a CPU)"). */
	struct rate_sums z = { .requested = 3, .samples = 0, .span_ns = 4000000ull, .unit_ns = 4000000ull,
			       .cpu_ns = 2000000ull };
	rate_format(&z, "vCPU", line, sizeof(line));
	CHECK_STR(line, "ended at its start (sampled 0.004 s), 0 samples, 0 lost, recorder CPU 0.002 s");
	z.span_ns = z.unit_ns = RATE_MIN_SPAN_NS;   /* control: from there on, a rate */
	rate_format(&z, "vCPU", line, sizeof(line));
	CHECK(strstr(line, "% of a CPU") != NULL);
	CHECK(!rate_from_counters(&m, 2, &rs));   /* control: vm2 reports no rate */
	dp_meta_release(&m);
	dp_reader_free(r);
	unlink(path);
}

int main(void)
{
	test_rates();
	test_domains_and_deadline();
	test_stop_flag();
	test_child_and_pids();
	test_disk_full();
	return unit_done();
}
