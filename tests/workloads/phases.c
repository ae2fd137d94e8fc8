// SPDX-License-Identifier: MIT
/*
 * A workload whose profile changes in time: phase_a spins for the first
 * MS milliseconds of wall-clock time, then phase_b for the next MS. A
 * window over the first half of the run is phase_a's, over the second
 * phase_b's (the --time tests); the whole run is about half each.
 * Wall-clock phases, so a loaded machine shortens neither.
 *
 * usage: phases [MS]   (default 1000)
 * Prints "phases: pid N done" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The same body in each: spin until the phase's end. */
#define BODY                                                    \
	unsigned long x = 1;                                    \
	while (now() < until)                                   \
		for (unsigned i = 0; i < 20000; i++)            \
			x = x * 6364136223846793005ul + i;      \
	sink += x;

__attribute__((noinline)) void phase_a(double until) { BODY }
__attribute__((noinline)) void phase_b(double until) { BODY }

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	if (ms <= 0 || ms > 3600000)
		ms = 1000;
	double t0 = now();
	phase_a(t0 + (double)ms / 1e3);
	phase_b(t0 + 2 * (double)ms / 1e3);
	printf("phases: pid %d done\n", (int)getpid());
	return 0;
}
