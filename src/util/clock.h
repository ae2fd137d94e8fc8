/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock, in the two units domprof uses: nanoseconds (the
 * perf clock of sample times, chunk ages) and milliseconds (timeouts of
 * the gdb stub and agent protocols). CLOCK_MONOTONIC is the clock
 * perf_event samples are taken with (use_clockid), so these times line
 * up with sample times.
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

static inline int64_t mono_ms(void)
{
	return (int64_t)(mono_ns() / 1000000u);
}

#endif
