/* SPDX-License-Identifier: MIT */
/*
 * Option parsing shared by the commands that read a profile (report,
 * export, flamegraph, diff), so that the same option means and checks the
 * same thing in each of them, with the same error text. Nothing here
 * prints: a bad value gives -EINVAL and a one-line message (without the
 * "domprof CMD: " prefix) that the command hands to usage_error().
 */
#ifndef DOMPROF_ANALYSIS_OPTIONS_H
#define DOMPROF_ANALYSIS_OPTIONS_H

#include <stddef.h>

#include "analysis/profile.h"
#include "analysis/window.h"
#include "format/format.h"

/*
 * The sample filter built from --domain, --pid, --comm, --image, --mode,
 * --time and --cpu (analysis/window.h), and its description for report headers ("comm=foo pid=3", the
 * options in the order given). Zero-initialise; the filter's strings point
 * into argv (the caller keeps argv alive while the filter is used).
 */
struct filter_args {
	struct profile_filter flt;
	char desc[512];         /* "" when no filter option was given */
	size_t len;             /* strlen(desc) */
	uint64_t cpu_bits[WINDOW_CPU_WORDS]; /* --cpu's set (flt.cpus points here) */
};

/*
 * Apply the filter option NAME ("domain", "pid", "comm", "image", "mode",
 * "time" or "cpu", the long option's name without dashes) with value ARG. Returns
 * 0, or -EINVAL with a message in err ("pid 'x' is not a number").
 */
int filter_args_set(struct filter_args *fa, const char *name, const char *arg,
		    char *err, size_t errlen);

/* fa->desc, or NULL when no filter option was given. */
const char *filter_args_desc(const struct filter_args *fa);

/*
 * Parse a percentage in 0..100 (-t/--threshold, --min-width) into *pct.
 * Returns 0, or -EINVAL when s is not a number or out of range.
 */
int parse_percent(const char *s, double *pct);

/* --vmlinux [DOMAIN=]FILE (docs/options.md): appends to v (at most
 * PROFILE_MAX_VMLINUX; no DOMAIN: the host). The strings point into arg.
 * -EINVAL with a message in err when arg is empty or too many are given. */
#define PROFILE_MAX_VMLINUX 16
int parse_vmlinux(char *arg, struct profile_vmlinux *v, size_t *n, char *err, size_t errlen);

/*
 * -j/--jobs N: threads that decode the recording (profile_opts.jobs),
 * 1..DP_READ_THREADS_MAX. Returns 0, or -EINVAL when s is not such a
 * number. Without -j, profile_opts.jobs is 0 and profile_load takes
 * jobs_for_size() of each file. jobs_for_size(): one thread for a
 * file below JOBS_AUTO_BYTES, else the CPUs this process may run on (its
 * affinity mask). Why the bound: on a file of a few chunks the workers
 * have nothing to take and cost their start (measured at stop 31, 2
 * CPUs, -j 1 -> 2, medians of 15-20: a 1 MB -a -g recording 6.9 -> 7.2
 * ms, DWARF ones of 0.7 and 1.4 MB 6.7 -> 7.3 and 10.0 -> 10.8 ms; a
 * 4.6 MB one 29.0 -> 27.5 ms, a 5.3 MB one 1.00-1.29x). It was 64 MiB
 * while the reader waited for its worker (docs/report.md, "-j").
 */
#define JOBS_AUTO_BYTES (4ull << 20)
int parse_jobs(const char *s, unsigned *jobs);
unsigned jobs_for_size(uint64_t bytes);
#define JOBS_ERROR "jobs '%s' is not a number of threads (1..64)"

/*
 * The one-line reason a profile_load() failed, from its err and msg
 * results: msg when it says something, else "cannot read 'PATH': ...".
 * Returns buf.
 */
const char *profile_load_reason(char *buf, size_t n, const char *path, int err,
				const char *msg);

/*
 * perf kvm guests of a perf.data (docs/perfdata.md): --guest-name PID=NAME
 * and --guest-kallsyms [PID=]FILE / --guest-sysmap [PID=]FILE (PID
 * omitted: every guest machine the file names gets it, as perf kvm's
 * --guestkallsyms). The table files are read here, at most 256 MiB each.
 * Zero-initialise; release with perf_guest_args_release.
 */
#define PERF_GUEST_MAX 64u
#define PERF_GUEST_ANY UINT32_MAX   /* a table for every guest */
struct perf_guest_args {
	struct dp_perf_guest g[PERF_GUEST_MAX];
	char *bufs[PERF_GUEST_MAX];  /* owned: table texts */
	size_t n;
};
/* name: "guest-name", "guest-kallsyms" or "guest-sysmap". 0, or -EINVAL
 * with a message (a bad PID, an unreadable file). */
int perf_guest_args_set(struct perf_guest_args *ga, const char *name, const char *arg,
			char *err, size_t errlen);
/* Give them to a perf.data reader (nothing for a domprof file). */
void perf_guest_args_apply(const struct perf_guest_args *ga, struct dp_reader *r);
void perf_guest_args_release(struct perf_guest_args *ga);

/*
 * The profile of a command's inputs, as export and flamegraph load it:
 * the -i files (iargs) and operands (inputs_collect: globs, several
 * files), read with the perf.data guest options, which it releases (the
 * reader copied them). desc receives the inputs' description (one path,
 * or "PATH (and N more)") for titles and messages. NULL with a one-line
 * reason in why, without the "domprof CMD: " prefix.
 */
struct profile *profile_load_inputs(const char *const *iargs, size_t ni, char *const *operands,
				    size_t nops, const struct profile_filter *flt,
				    struct profile_opts *o, struct perf_guest_args *guests,
				    char *desc, size_t desclen, char *why, size_t whylen);

#endif
