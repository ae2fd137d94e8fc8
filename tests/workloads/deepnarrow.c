// SPDX-License-Identifier: MIT
/*
 * A workload with one deep-and-narrow and two wide-and-shallow stacks:
 * each round calls flat_a 11 times and flat_b 8 times from main, and
 * deep_rec once, which recurses DEPTH (200) levels and then runs the
 * same fixed inner loop at the bottom. Every call runs that loop once,
 * so the CPU time splits about 55% / 40% / 5% (flat_a / flat_b / the
 * deep tower), whatever the machine's speed. With -g the deep tower is
 * as tall as the call chain's bound (perf_event_max_stack, 127 by
 * default) and holds a twentieth of the samples: the shape of a system-wide
 * recording where a few deep stacks set a flame graph's height while the
 * wide frames sit at its base (tests/e2e/report-html-firstscreen.sh).
 *
 * usage: deepnarrow [ROUNDS]   (default 50: about 2-3 s on the test machine)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define INNER 1000000u
#define DEPTH 200

static volatile unsigned long sink;

/* Not a leaf (see threefuncs.c): keeps each function's frame for -g. */
__attribute__((noinline)) void consume(unsigned long x) { sink += x; }

#define BODY                                          \
	unsigned long x = seed;                       \
	for (unsigned i = 0; i < INNER; i++)          \
		x = x * 6364136223846793005ul + i;    \
	consume(x);

__attribute__((noinline)) void flat_a(unsigned long seed) { BODY }
__attribute__((noinline)) void flat_b(unsigned long seed) { BODY }
__attribute__((noinline)) void deep_leaf(unsigned long seed) { BODY }

/* The work after the call keeps it from becoming a loop (no tail call). */
__attribute__((noinline)) unsigned long deep_rec(int n, unsigned long seed)
{
	if (n <= 0) {
		deep_leaf(seed);
		return seed;
	}
	unsigned long r = deep_rec(n - 1, seed + 1);
	sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 50;
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < 11; k++)
			flat_a((unsigned long)r + (unsigned long)k);
		for (int k = 0; k < 8; k++)
			flat_b((unsigned long)r + (unsigned long)k);
		deep_rec(DEPTH, (unsigned long)r);
	}
	printf("deepnarrow: pid %d done\n", (int)getpid());
	return 0;
}
