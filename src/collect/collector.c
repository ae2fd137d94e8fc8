// SPDX-License-Identifier: MIT
/*
 * The recorder's collector loop (contract in collector.h). One thread,
 * the caller's: poll the per-CPU rings (wakeup watermark at a quarter of
 * a ring) with a short timeout, drain every ring in time order, drain
 * every domain source, then check the stop conditions. Lost samples are
 * never silent: they go to LOST records and the STATS record, and their
 * count back to the caller for the summary line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collector.h"
#include "util/clock.h"
#include "util/sat.h"
#include "util/xalloc.h"

struct coll {
	const struct collector_config *c;
	struct collector_result *res;
	struct dp_writer *w;        /* the current file's (rotate changes it) */
	bool *ds_ended;
	bool *pid_gone;
	int *pidfd;                 /* each -p target's pidfd, or -1: /proc is read */
	/* the current file (--switch-output): when it began, each ring's
	 * lost and throttled counts before it, and the lost samples and
	 * samples of the files before it */
	uint64_t file_t0, lost_prev, samples_prev;
	uint64_t *ring_lost0, *ring_thr0;
	/* the collector thread's CPU time: at the start, and spent in each
	 * domain's drains (clock read once between two drains) */
	uint64_t cpu0;
	uint64_t *drain_cpu;
	uint64_t host_end;          /* mono_ns() when the host's events were disabled */
};

static void notice(const struct coll *k, const char *msg)
{
	if (k->c->notice)
		k->c->notice(k->c->notice_ctx, msg);
}

bool collector_pid_alive(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	/* a zombie is gone for our purpose: it runs no more code */
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

void collector_reap(pid_t pid, bool kill_it, int *status)
{
	if (kill_it)
		kill(pid, SIGTERM);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

void collector_stop_domains(struct domain_source **ds, size_t nds, volatile sig_atomic_t *stop_flag)
{
	sig_atomic_t why = stop_flag ? *stop_flag : 0;
	if (stop_flag)
		*stop_flag = 0;
	for (int pass = 0; pass < 2; pass++) {
		/* every agent is asked before the first is waited for: each
		 * guest's recording ends now, not after the collections of
		 * the agents before it */
		for (size_t i = 0; pass == 1 && i < nds; i++)
			if (ds[i] && !domain_source_is_passive(ds[i]))
				domain_source_request_stop(ds[i]);
		/* the passive ones too: a stalled stub's grace runs with the
		 * others', not after them */
		for (size_t i = 0; pass == 0 && i < nds; i++)
			if (ds[i] && domain_source_is_passive(ds[i]))
				domain_source_request_stop(ds[i]);
		for (size_t i = 0; i < nds; i++)
			if (ds[i] && domain_source_is_passive(ds[i]) == (pass == 0))
				domain_source_stop(ds[i]);
	}
	if (why && stop_flag)
		*stop_flag = why;
}

static int on_item(void *ctx, const struct perf_item *it)
{
	struct coll *k = ctx;
	struct dp_writer *w = k->w;
	int ret = 0;
	switch (it->kind) {
	case PERF_ITEM_SAMPLE:
		ret = dp_write_sample(w, DP_HOST_DOMAIN, &it->u.sample);
		if (!ret)
			k->res->host_samples++;
		break;
	case PERF_ITEM_TASK:
		ret = dp_write_task(w, DP_HOST_DOMAIN, &it->u.task);
		break;
	case PERF_ITEM_MMAP: {
		struct dp_mmap m = it->u.mmap;
		sideband_fill_buildid(k->c->sb, &m);
		sideband_fill_ident(&m);
		ret = dp_write_mmap(w, DP_HOST_DOMAIN, &m);
		if (!ret)
			ret = sideband_note_mmap(k->c->sb, w, &m);
		break;
	}
	}
	return ret;
}

/* Drain every domain source once; report those that ended. */
static int drain_domains(struct coll *k)
{
	uint64_t t = k->c->nds ? thread_cpu_ns() : 0;
	for (size_t i = 0; i < k->c->nds; i++) {
		struct domain_source *s = k->c->ds[i];
		int ret = domain_source_drain(s, k->w);
		uint64_t t2 = thread_cpu_ns();
		k->drain_cpu[i] += t2 > t ? t2 - t : 0;
		t = t2;
		if (ret < 0)
			return ret;
		/* a passive domain's start-up that ended while sampling */
		const char *info = domain_source_take_info(s);
		if (info)
			notice(k, info);
		if (!k->ds_ended[i] && domain_source_ended(s)) {
			const char *m = domain_source_message(s);
			k->ds_ended[i] = true;
			notice(k, m ? m : domain_source_name(s));
		}
	}
	return 0;
}

/* A pidfd of pid (readable once its whole thread group has exited), or
 * -1 where the kernel has none (before 5.3): then /proc is read. */
static int pid_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Is target i alive? Through its pidfd (one poll: reading /proc/PID/stat
 * every 200 ms was 9% of the recorder's loop CPU in a 40 s recording of
 * the gcc workload), else collector_pid_alive. */
static bool target_alive(struct coll *k, size_t i)
{
	if (k->pidfd[i] < 0)
		return collector_pid_alive(k->c->pids[i]);
	struct pollfd p = { .fd = k->pidfd[i], .events = POLLIN };
	return poll(&p, 1, 0) == 0;
}

/* True when every -p target is gone (each is reported once). */
static bool pids_gone(struct coll *k)
{
	size_t gone = 0;
	for (size_t i = 0; i < k->c->npids; i++) {
		if (!k->pid_gone[i] && !target_alive(k, i)) {
			char msg[64];
			k->pid_gone[i] = true;
			snprintf(msg, sizeof(msg), "pid %d exited during recording", (int)k->c->pids[i]);
			notice(k, msg);
		}
		gone += k->pid_gone[i];
	}
	return gone == k->c->npids;
}

static void reap_child(struct coll *k)
{
	if (k->c->child <= 0 || k->res->child_done)
		return;
	collector_reap(k->c->child, true, &k->res->child_status);
	k->res->child_done = true;
}

/* The LOST records of each host ring since the file began (every LOST
 * record of a domain went through this file's writer as it came). */
static int write_ring_lost(struct coll *k)
{
	const struct collector_config *c = k->c;
	int werr;
	for (size_t i = 0; c->ps && i < perf_source_ncpus(c->ps); i++) {
		uint64_t lost = perf_source_lost(c->ps, (int)i), thr = perf_source_throttled(c->ps, (int)i);
		struct dp_lost l = { lost - k->ring_lost0[i], DP_LOST_RING, (uint32_t)perf_source_cpu(c->ps, i) };
		k->ring_lost0[i] = lost;
		if (l.count && (werr = dp_write_lost(k->w, &l)) < 0)
			return werr;
		l.count = thr - k->ring_thr0[i];
		l.source = DP_LOST_THROTTLE;
		k->ring_thr0[i] = thr;
		if (l.count && (werr = dp_write_lost(k->w, &l)) < 0)
			return werr;
	}
	return 0;
}

/* --switch-output: end this file (its LOST and STATS records, as
 * finish() ends the last) and let rotate open the next. */
static int switch_file(struct coll *k, uint64_t now)
{
	const struct collector_config *c = k->c;
	int werr = write_ring_lost(k);
	if (werr < 0)
		return werr;
	uint64_t samples = dp_writer_samples(k->w);
	struct dp_stats st = {
		.samples = samples, .lost = dp_writer_lost(k->w),
		.start_time = k->file_t0, .end_time = now, .wall_ns = now - k->file_t0,
	};
	if ((werr = dp_write_stats(k->w, &st)) < 0)
		return werr;
	k->lost_prev += st.lost;
	k->samples_prev += samples;
	k->res->files++;
	if ((werr = c->rotate(c->rotate_ctx, &k->w)) < 0)
		return werr;
	if (c->sb)
		sideband_perfmaps_new_file(c->sb);
	k->file_t0 = now;   /* the files tile the recording: the switch is in the next */
	return 0;
}

/* True when the current file is to end (--switch-output). */
static bool switch_due(struct coll *k, uint64_t now)
{
	const struct collector_config *c = k->c;
	if (!c->rotate)
		return false;
	if (c->switch_flag && *c->switch_flag) {
		*c->switch_flag = 0;
		return true;
	}
	return (c->switch_ns && now - k->file_t0 >= c->switch_ns) ||
	       (c->switch_bytes && dp_writer_bytes(k->w) >= c->switch_bytes);
}

/* Poll, drain, tick until a stop condition; 0 or the writer's errno. */
static int loop(struct coll *k)
{
	const struct collector_config *c = k->c;
	uint64_t deadline = c->duration_ns ? c->t_start + c->duration_ns : 0;
	uint64_t next_pid_check = 0, next_perfmaps = 0;
	int werr = 0;
	while (!werr) {
		int timeout = c->nds ? 10 : 100;
		if (deadline) {
			uint64_t t = mono_ns();
			uint64_t left = t < deadline ? (deadline - t + 999999) / 1000000 : 0;
			if (left < (uint64_t)timeout)
				timeout = (int)left;
		}
		if (*c->stop_flag)
			timeout = 0;
		if (c->ps)
			perf_source_poll(c->ps, timeout);
		else
			poll(NULL, 0, timeout);
		if (c->ps && (werr = perf_source_drain(c->ps, false, on_item, k)) < 0)
			break;
		if ((werr = drain_domains(k)) < 0)
			break;
		if ((werr = dp_writer_tick(k->w)) < 0)
			break;
		if (*c->stop_flag) {
			k->res->stop_sig = *c->stop_flag;
			break;
		}
		if (c->child > 0 && waitpid(c->child, &k->res->child_status, WNOHANG) == c->child) {
			k->res->child_done = true;
			break;
		}
		uint64_t t = mono_ns();
		if (deadline && t >= deadline)
			break;
		if (switch_due(k, t) && (werr = switch_file(k, t)) < 0)
			break;
		if (c->sb && t >= next_perfmaps) {
			next_perfmaps = t + 100000000ull;   /* a tenth of a second */
			if ((werr = sideband_poll_perfmaps(c->sb, k->w)) < 0)
				break;
		}
		if (c->npids && t >= next_pid_check) {
			next_pid_check = t + 200000000ull;
			if (pids_gone(k))
				break;
		}
	}
	return werr;
}

void collector_result_release(struct collector_result *res)
{
	free(res->rates);
	res->rates = NULL;
	res->nrates = 0;
}

/* One source's rate as its domain's COUNTERS (docs/file-format.md). */
static int write_rate(struct dp_writer *w, const struct collector_rate *r)
{
	uint64_t unit_ns;
	if (__builtin_mul_overflow(r->span_ns, (uint64_t)r->units, &unit_ns))
		unit_ns = UINT64_MAX;
	struct dp_counter v[] = {
		{ .name = "rate.requested", .value = (uint64_t)((double)r->hz * (double)unit_ns / 1e9 + 0.5) },
		{ .name = "rate.samples", .value = r->samples },
		{ .name = "rate.missed", .value = r->missed },
		{ .name = "rate.span_ns", .value = r->span_ns },
		{ .name = "rate.unit_ns", .value = unit_ns },
		{ .name = "recorder.cpu_ns", .value = r->cpu_ns },
	};
	struct dp_counters cs = { .n = sizeof(v) / sizeof(v[0]), .c = v };
	int werr = dp_write_counters(w, r->domain, &cs);
	if (werr < 0 || !r->ticks)
		return werr;
	struct dp_counter t[] = {
		{ .name = "sampler.ticks", .value = r->ticks },
		{ .name = "sampler.held_ns", .value = r->held_ns },
		{ .name = "sampler.wakes", .value = r->wakes },
		{ .name = "sampler.wake_late_ns", .value = r->late_ns },
	};
	cs = (struct dp_counters){ .n = sizeof(t) / sizeof(t[0]), .c = t };
	return dp_write_counters(w, r->domain, &cs);
}

/* Every source's rate into res->rates, each also written as COUNTERS.
 * After the domains stopped and drained for the last time. */
static int write_rates(struct coll *k)
{
	const struct collector_config *c = k->c;
	struct collector_result *res = k->res;
	uint64_t drains = 0, cpu = thread_cpu_ns();
	res->cpu_ns = cpu > k->cpu0 ? cpu - k->cpu0 : 0;
	struct domain_source_rate *dr = xcalloc(c->nds ? c->nds : 1, sizeof(*dr));
	size_t want = c->ps && c->host_hz;
	for (size_t i = 0; i < c->nds; i++) {
		drains += k->drain_cpu[i];
		domain_source_rate(c->ds[i], &dr[i]);
		want += dr[i].hz != 0;
	}
	res->nrates = 0;
	res->rates = want ? xcalloc(want, sizeof(*res->rates)) : NULL;
	if (c->ps && c->host_hz) {
		struct collector_rate *h = &res->rates[res->nrates++];
		*h = (struct collector_rate){
			.name = "host", .domain = DP_HOST_DOMAIN, .hz = c->host_hz, .units = c->host_units, .unit = "CPU",
			.span_ns = k->host_end - c->t_start, .samples = res->host_samples,
			.missed = sat_add64(perf_source_lost(c->ps, -1), perf_source_throttled(c->ps, -1)),
			.cpu_ns = res->cpu_ns > drains ? res->cpu_ns - drains : 0,
		};
	}
	for (size_t i = 0; i < c->nds; i++) {
		const struct domain_source_rate *r = &dr[i];
		if (!r->hz)
			continue;
		struct collector_rate *d = &res->rates[res->nrates++];
		*d = (struct collector_rate){
			.name = domain_source_name(c->ds[i]), .domain = r->domain,
			.hz = r->hz, .units = r->units,
			.unit = domain_source_is_passive(c->ds[i]) ? "vCPU" : "CPU",
			.span_ns = r->span_ns ? r->span_ns :
				   r->begin_ns && r->end_ns > r->begin_ns ? r->end_ns - r->begin_ns : 0,
			.samples = r->samples, .missed = r->missed,
			.cpu_ns = sat_add64(r->cpu_ns, k->drain_cpu[i]),
			.ticks = r->ticks, .held_ns = r->held_ns, .wakes = r->wakes, .late_ns = r->late_ns,
		};
	}
	free(dr);
	for (size_t i = 0; i < res->nrates; i++) {
		int werr = write_rate(k->w, &res->rates[i]);
		if (werr < 0)
			return werr;
	}
	return 0;
}

/* The JIT perf maps of the host's processes, as they are at the end (a
 * JIT appends to its map while it runs), embedded so that a report never
 * reads /tmp (sideband.h); a map refused by the owner checks is said. */
static int write_perfmaps(struct coll *k)
{
	if (!k->c->sb)
		return 0;
	unsigned embedded, refused;
	char why[256];
	int werr = sideband_write_perfmaps(k->c->sb, k->w, &embedded, &refused, why, sizeof(why));
	if (werr < 0)
		return werr;
	if (refused && k->c->notice) {
		char msg[400];
		if (refused > 1)
			snprintf(msg, sizeof(msg), "%s (and %u more perf maps not embedded)", why, refused - 1);
		else
			snprintf(msg, sizeof(msg), "%s", why);
		k->c->notice(k->c->notice_ctx, msg);
	}
	return 0;
}

/* Finish: the rest of the rings, the guests, the totals. */
static int finish(struct coll *k)
{
	const struct collector_config *c = k->c;
	struct collector_result *res = k->res;
	int werr;
	if (c->ps)
		perf_source_disable(c->ps);
	k->host_end = mono_ns();
	reap_child(k);
	if (c->ps && (werr = perf_source_drain(c->ps, true, on_item, k)) < 0)
		return werr;
	collector_stop_domains(c->ds, c->nds, c->stop_flag);
	if ((werr = drain_domains(k)) < 0)
		return werr;
	res->t_end = mono_ns();
	uint64_t dsamples = 0;
	if ((werr = write_ring_lost(k)) < 0)
		return werr;
	for (size_t i = 0; i < c->nds; i++)
		dsamples += domain_source_samples(c->ds[i]);
	if ((werr = write_rates(k)) < 0)
		return werr;
	if ((werr = write_perfmaps(k)) < 0)
		return werr;
	if (c->end_file && (werr = c->end_file(c->end_ctx, k->w)) < 0)
		return werr;
	/* Every LOST record went through the writers: the host's rings and
	 * throttling above, and each domain's missed ticks from its drain. */
	uint64_t file_lost = dp_writer_lost(k->w);
	res->lost = k->lost_prev + file_lost;
	res->samples = res->host_samples + dsamples;
	res->files++;
	uint32_t exit_status = 0;
	if (res->child_done)
		exit_status = WIFEXITED(res->child_status) ? (uint32_t)WEXITSTATUS(res->child_status)
			    : 128u + (uint32_t)WTERMSIG(res->child_status);
	/* This file's share: the totals less the files before it (one
	 * file: the totals). */
	uint64_t t0 = res->files > 1 ? k->file_t0 : c->t_start;
	struct dp_stats st = {
		.samples = res->samples - (res->samples >= k->samples_prev ? k->samples_prev : res->samples),
		.lost = file_lost,
		.start_time = t0, .end_time = res->t_end, .wall_ns = res->t_end - t0,
		.exit_status = exit_status, .flags = 0,
	};
	return dp_write_stats(k->w, &st);
}

int collector_run(const struct collector_config *c, struct collector_result *res)
{
	size_t nrings = c->ps ? perf_source_ncpus(c->ps) : 0;
	struct coll k = {
		.c = c, .res = res, .w = c->w, .file_t0 = c->t_start,
		.ds_ended = xcalloc(c->nds ? c->nds : 1, sizeof(bool)),
		.pid_gone = xcalloc(c->npids ? c->npids : 1, sizeof(bool)),
		.pidfd = xcalloc(c->npids ? c->npids : 1, sizeof(int)),
		.ring_lost0 = xcalloc(nrings ? nrings : 1, sizeof(uint64_t)),
		.ring_thr0 = xcalloc(nrings ? nrings : 1, sizeof(uint64_t)),
		.drain_cpu = xcalloc(c->nds ? c->nds : 1, sizeof(uint64_t)),
		.cpu0 = thread_cpu_ns(),
	};
	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < c->npids; i++)
		k.pidfd[i] = pid_open(c->pids[i]);
	/* Every domain samples from here on, together: a source that took
	 * long to start (an agent's guest) does not leave the others'
	 * samples piling up undrained, nor covering another time window. */
	for (size_t i = 0; i < c->nds; i++)
		if (c->ds[i])
			domain_source_begin(c->ds[i]);
	int werr = loop(&k);
	if (werr >= 0 && k.w)
		werr = finish(&k);
	res->w = k.w;
	free(k.ds_ended);
	free(k.pid_gone);
	for (size_t i = 0; i < c->npids; i++)
		if (k.pidfd[i] >= 0)
			close(k.pidfd[i]);
	free(k.pidfd);
	free(k.ring_lost0);
	free(k.ring_thr0);
	free(k.drain_cpu);
	return werr < 0 ? werr : 0;
}
