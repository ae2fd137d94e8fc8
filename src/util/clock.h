/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock, in the two units domprof uses: nanoseconds (the
 * perf clock of sample times, chunk ages) and milliseconds (timeouts of
 * the gdb stub and agent protocols). CLOCK_MONOTONIC is the clock
 * perf_event samples are taken with (use_clockid), so these times line
 * up with sample times. thread_cpu_ns() is the calling thread's CPU
 * time (the recorder's cost per source).
 */
#ifndef DOMPROF_UTIL_CLOCK_H
#define DOMPROF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time (user + system) the calling thread has used, in ns: what the
 * recorder reports as its own cost per source. 0 if the clock fails. */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int64_t mono_ms(void)
{
	return (int64_t)(mono_ns() / 1000000u);
}

#endif
