/* SPDX-License-Identifier: MIT */
/*
 * What a host recording targets, read from this machine: the online
 * CPUs, a CPU list given by the user, the kernel's perf sysctls, and the
 * command to profile, started stopped before exec so that its first
 * instruction is sampled. Nothing here prints; errors are negative
 * errnos.
 */
#ifndef DOMPROF_COLLECT_TARGET_H
#define DOMPROF_COLLECT_TARGET_H

#include <sys/types.h>

/* A number read from a sysctl file (e.g. /proc/sys/kernel/perf_event_paranoid),
 * dflt when it cannot be read. */
long target_read_sysctl(const char *path, long dflt);

/* "0,2-3" -> CPU numbers in out[0..max); returns the count, or -1 on a
 * syntax error or more than max CPUs. */
int target_parse_cpulist(const char *s, int *out, int max);

/* The online CPUs (from /sys, else sysconf); returns their count. */
int target_online_cpus(int *out, int max);

/*
 * Fork argv[0] (looked up in PATH), stopped before exec: the child
 * waits until one byte is written to *go_fd (closing it without a byte
 * makes the child exit 127). When exec fails, the child writes its errno
 * to *err_fd (read it after the go byte; EOF means exec succeeded).
 * Returns 0 with *pid, *go_fd and *err_fd set (the caller owns the
 * descriptors), or a negative errno with nothing to clean up.
 */
int target_spawn(char *const argv[], pid_t *pid, int *go_fd, int *err_fd);

#endif
