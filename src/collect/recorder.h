/* SPDX-License-Identifier: MIT */
/*
 * A recording's start-up and end, out of `domprof record` (cmd-record.c):
 * the output file by the rule of util/outfile.h, the command spawned
 * stopped before exec, the host's perf events, the file's header and
 * metadata (host domain, events, kernel, guests), the file put in place,
 * the command released or the attached processes described, the
 * collector loop (collect/collector.c) and the file's end. The command
 * parses options, validates them against the system, installs the
 * signal handlers and prints; this module holds the order of the steps
 * and what each undoes when a later one fails.
 *
 * It never prints: every line the recorder reports (an error, a guest's
 * info line, a notice while running) goes through cfg.notice, without
 * the "domprof record: " prefix and without a newline. A perf_event_open
 * failure is handed back instead (recorder_open_host), since its message
 * needs the command's knowledge of the options.
 *
 * Ownership: the recorder owns the output, the writer, the perf source,
 * the sideband and the domain sources; it borrows everything in cfg,
 * which must outlive it.
 */
#ifndef DOMPROF_COLLECT_RECORDER_H
#define DOMPROF_COLLECT_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"
#include "collect/domain_source.h"
#include "collect/events.h"
#include "collect/perf_source.h"
#include "collect/sideband.h"
#include "format/format.h"
#include "util/outfile.h"

struct recorder_config {
	const char *output;            /* -o: the name given (messages use it) */
	bool force;                    /* -f: overwrite instead of FILE.old */
	bool all;                      /* -a */
	bool callchain;                /* -g, --call-graph fp|dwarf */
	uint32_t ustack_size;          /* --call-graph dwarf,SIZE: user stack bytes; 0: fp */
	bool no_buildid_mmap;          /* --no-buildid-mmap (perf_source_opts.no_buildid) */
	bool allow_remote;             /* --allow-remote-stub */
	const struct ev_spec *ev;      /* nev >= 1 when the host is sampled */
	size_t nev;
	uint64_t hz, period;           /* one of them non-zero */
	size_t ring_pages;
	const int *cpus;               /* the host's CPUs to sample */
	size_t ncpus;
	const pid_t *pids;             /* -p */
	size_t npids;
	const char *const *domains;    /* --domain NAME=SPEC, ids 1.. in order */
	size_t ndomains;
	char *const *cmd;              /* NULL-terminated; cmd[0] NULL: no command */
	double duration;               /* -d seconds; 0: none */
	volatile sig_atomic_t *stop_flag; /* set by the command's signal handlers */
	/* --switch-output: a new file every switch_ns, at switch_bytes, or
	 * when *switch_flag is set (SIGUSR2); `switching` says any of them
	 * is on. Files are named OUTPUT.YYYY-MM-DDTHH:MM:SS.mmmZ (UTC, the
	 * time the file began; unique: a later file's name is always later);
	 * with max_files > 0 only the newest max_files are kept. */
	bool switching;
	uint64_t switch_ns, switch_bytes;
	volatile sig_atomic_t *switch_flag;
	unsigned max_files;
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	/* At the recording's end, before the last file's STATS (collector.h:
	 * end_file): w flushed, and file[0..len) the file's bytes so far (a
	 * read-only mapping, valid for the call), every record written;
	 * more records may be written to w. Returns 0 or a negative errno
	 * of w. Only for a regular file. NULL: nothing. */
	int (*end_file)(void *ctx, struct dp_writer *w, const void *file, size_t len);
	void *end_ctx;
};

struct recorder {
	const struct recorder_config *cfg;
	struct outfile of;      /* the output (util/outfile.h): temp file until committed */
	struct perf_source *ps; /* NULL: the host is not sampled */
	struct sideband *sb;
	struct dp_writer *w;
	struct domain_source **ds; /* cfg->ndomains entries once started */
	pid_t child;            /* > 0: the command */
	int child_status;
	bool child_done;
	int go_fd, err_fd;      /* the spawned command's pipes (target_spawn), -1 when closed */
	/* --switch-output: the file being written, the header's argv, the
	 * last name's time (ms since the epoch) and the files kept (oldest
	 * first) for max_files */
	char *name;
	int argc;
	char **argv;
	uint64_t last_ms;
	uint64_t bytes_done;    /* of the files already finished */
	char **kept;
	size_t nkept;
};

/* Set up r for cfg (borrowed); nothing is opened yet. */
void recorder_init(struct recorder *r, const struct recorder_config *cfg);

/* Create the output (temporary until recorder_start_file puts it in
 * place). 0, or -1 (reported). */
int recorder_open_output(struct recorder *r);

/* Spawn cfg->cmd stopped before exec (collect/target.h). 0, or -1
 * (reported). */
int recorder_spawn(struct recorder *r);

/* Open the host's events (for the command, the -p pids or all). 0; or
 * -1 with *pe filled for the caller's message, and the command (not
 * started) told to exit and reaped. */
int recorder_open_host(struct recorder *r, struct perf_source_error *pe);

/* The file: header (naming argv, the command line after "domprof"),
 * metadata, guests started and their metadata; flushed and put in
 * place. 0, or -1 (reported; undo with recorder_abort). */
int recorder_start_file(struct recorder *r, int argc, char **argv);

/* Start sampling: let the command exec, or enable the events and
 * describe the -p / -a processes already running. *t_start is the
 * mono_ns() of the start. 0; 127 when the command could not run; 1 on
 * another failure (reported; undo with recorder_abort). */
int recorder_start(struct recorder *r, uint64_t *t_start);

/* Sampling runs: the collector loop, then the file's end. 0 with *res
 * and *bytes (the file's size; with --switch-output, of every file) for
 * the summary line, or 1 (reported: the file is kept readable up to its
 * last complete chunk). */
int recorder_run(struct recorder *r, uint64_t t_start, struct collector_result *res, uint64_t *bytes);

/* After a failed start: close the command's pipes, reap it, stop the
 * guests, undo the output (nothing left behind, FILE.old put back). */
void recorder_abort(struct recorder *r);

/* The name of the file being written: cfg->output, or with
 * --switch-output the current OUTPUT.TIME. */
const char *recorder_file_name(const struct recorder *r);

/* Free the sources and the sideband (the output is released or undone
 * by then). */
void recorder_free(struct recorder *r);

/*
 * DOMPROF_READY_FD=N (set by `domprof agent` for its own recorder): one
 * byte is written on N once sampling runs. recorder_take_ready_fd takes
 * it out of the environment and returns the fd (a pipe, close-on-exec)
 * or -1; recorder_signal_ready writes the byte and closes it (-1: no-op).
 */
int recorder_take_ready_fd(void);
void recorder_signal_ready(int fd);

#endif
