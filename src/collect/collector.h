/* SPDX-License-Identifier: MIT */
/*
 * The recorder's collector loop, out of `domprof record` (cmd-record.c):
 * once the file's metadata is written and sampling runs, collector_run()
 * polls the host's perf rings (collect/perf_source) with a short timeout,
 * drains every ring in time order, drains every domain source
 * (collect/domain_source), ticks the writer (time-based chunks), then
 * checks the stop conditions: the stop flag (a signal), the deadline
 * (-d), the command's exit, every -p pid gone. At the end it drains what
 * is left, stops the domains, writes the LOST counts of each host ring
 * and the STATS record, and returns the counts for the summary line.
 * Each source's rate (requested, achieved, lost, the recorder's CPU time
 * for it: its own threads plus the collector's time draining it; the
 * host's is the rest of the collector's time) goes into the last file
 * as that domain's rate COUNTERS and into the result.
 *
 * It never prints: what the recorder reports while running (a domain
 * that ended, a -p pid that exited) goes through the notice callback,
 * in the order it happens. It does not finish or free the writer, and
 * owns none of the objects it is given.
 */
#ifndef DOMPROF_COLLECT_COLLECTOR_H
#define DOMPROF_COLLECT_COLLECTOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/domain_source.h"
#include "collect/perf_source.h"
#include "collect/sideband.h"
#include "format/format.h"

struct collector_config {
	struct dp_writer *w;           /* borrowed; not finished here */
	struct perf_source *ps;        /* borrowed, enabled; NULL: no host sampling */
	struct sideband *sb;           /* borrowed: build-ids and file identity of host MMAPs */
	struct domain_source **ds;     /* borrowed, started, metadata written */
	size_t nds;
	/* Set by a signal handler: stops the loop. Cleared and restored
	 * around stopping the domains (see collector_stop_domains). */
	volatile sig_atomic_t *stop_flag;
	uint64_t t_start;              /* mono_ns() when sampling started */
	uint64_t duration_ns;          /* -d; 0: no deadline */
	pid_t child;                   /* > 0: the command; stop when it exits,
	                                * SIGTERM and reap it at the end */
	const pid_t *pids;             /* -p targets: stop when all are gone */
	size_t npids;
	/* One line to report (no trailing newline), e.g. "pid 12 exited
	 * during recording" or a domain's end message. NULL: dropped. */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	/*
	 * --switch-output: after a drain, when switch_ns passed since the
	 * file began, the file holds switch_bytes, or *switch_flag is set
	 * (cleared here), the collector ends the file as it ends the last
	 * one (the LOST counts of each host ring since the file began, a
	 * STATS record of this file's samples and lost samples) and calls
	 * rotate, which finishes *w and puts the next file's writer there
	 * (header and metadata written) before the next drain: no sample
	 * waits outside a ring meanwhile. rotate returns 0 or a negative
	 * errno (it reported; *w may then be NULL: recording stops).
	 * rotate NULL: one file.
	 */
	int (*rotate)(void *ctx, struct dp_writer **w);
	void *rotate_ctx;
	/* At the end of the recording, sampling stopped and every domain
	 * drained, before the last file's STATS record: what else that file
	 * gets (the recorder's source lines, recorder.h). Returns 0 or a
	 * negative errno of w (the file is then ended as on any write
	 * error). NULL: nothing. Not called for the files --switch-output
	 * ends before it: a rotation must not hold the rings. */
	int (*end_file)(void *ctx, struct dp_writer *w);
	void *end_ctx;
	uint64_t switch_ns, switch_bytes;
	volatile sig_atomic_t *switch_flag;
	/* -a -F HZ: the host's requested rate, per CPU and event, and the
	 * number of such rings (CPUs x events); 0: the host's rate is not
	 * reported (a period, or a command or -p's threads only) */
	unsigned host_hz;
	uint32_t host_units;
};

/*
 * How one source sampled over the recording: requested against
 * achieved, lost, and what it cost the recorder. Written at the end as
 * the domain's rate.* and recorder.cpu_ns COUNTERS (docs/file-format.md)
 * and returned for the summary.
 */
struct collector_rate {
	const char *name;              /* "host" or the domain's (borrowed from the source) */
	uint32_t domain;               /* its domain id in the file */
	unsigned hz;                   /* requested, per unit */
	uint32_t units;                /* CPUs x events (host), vCPUs or guest CPUs */
	const char *unit;              /* "CPU" or "vCPU" (a passive domain's) */
	uint64_t span_ns;              /* how long it sampled */
	uint64_t samples, missed;      /* written; lost or missed (counted in LOST records) */
	uint64_t cpu_ns;               /* the recorder's CPU time for it */
	uint64_t ticks, held_ns, wakes, late_ns;  /* a passive sampler's (domain_source_rate) */
};

struct collector_result {
	uint64_t host_samples;         /* host samples written */
	uint64_t samples;              /* host and domains: the STATS total */
	uint64_t lost;                 /* every LOST record the writers saw */
	unsigned files;                /* files ended (1 without --switch-output) */
	struct dp_writer *w;           /* the writer in use at the end (rotate changes it) */
	uint64_t t_end;                /* mono_ns() at the end */
	int stop_sig;                  /* the stop flag's value that ended the loop, else 0 */
	bool child_done;               /* the command was reaped: child_status is valid */
	int child_status;              /* waitpid() status */
	/* host first (when host_hz), then each domain that knows its rate,
	 * in order; owned: collector_result_release frees it */
	struct collector_rate *rates;
	size_t nrates;
	uint64_t cpu_ns;               /* the collector thread's CPU time in the run */
};

/* Free what *res owns (the rates); safe on a zeroed result. */
void collector_result_release(struct collector_result *res);

/*
 * Run until a stop condition, then finish as described above. Returns 0
 * with *res filled and the STATS record written (the caller then
 * finishes the writer), or the writer's negative errno: recording
 * stopped where it failed, *res as far as known (child_done says whether
 * the command was reaped). The caller then reports, disables the host
 * events, reaps the command, stops the domains (in that order, so the
 * message comes before an agent's stop waits), and keeps the chunks
 * already flushed, which are complete (trim to dp_writer_bytes()).
 */
int collector_run(const struct collector_config *c, struct collector_result *res);

/*
 * Stop every domain source: passive samplers first (they return at
 * once), then agents (whose stop waits for the guest's recording), so
 * samplers do not keep sampling while an agent collection runs. Every
 * agent is asked to stop before the first one is waited for. An
 * agent's wait gives up while *stop_flag is set: a signal that already
 * stopped the recording must not cancel the collection, only one during
 * the wait does, so the flag is cleared for the stop and restored after.
 * ds[i] may be NULL. stop_flag may be NULL.
 */
void collector_stop_domains(struct domain_source **ds, size_t nds, volatile sig_atomic_t *stop_flag);

/* Wait for pid (SIGTERM first when kill_it), retrying on EINTR; the
 * status goes to *status. */
void collector_reap(pid_t pid, bool kill_it, int *status);

/* True while pid runs code: false when gone or a zombie. */
bool collector_pid_alive(pid_t pid);

#endif
