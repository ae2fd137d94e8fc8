// SPDX-License-Identifier: MIT
/*
 * A workload with a known profile: each round calls func_a 5 times,
 * func_b 3 times and func_c 2 times, and every call runs the same fixed
 * inner loop, so the CPU time splits 50% / 30% / 20% between them
 * (main and the loop overhead are negligible). The functions are
 * noinline and built with frame pointers, so -g shows main as caller.
 *
 * usage: threefuncs [ROUNDS [A B C]]   (default 250: about 2-3 s on the test
 * machine; A B C: the calls of func_a, func_b, func_c per round, default
 * 5 3 2, so other known shares can be recorded: 2 6 0 gives 25% / 75% /
 * none, for the differential flame graph test)
 * Prints "threefuncs: pid N done" at the end so tests can match pids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define INNER 1000000u

static volatile unsigned long sink;

/* Called at the end of each function so none of them is a leaf: gcc
 * sets up no frame in leaf functions even with -fno-omit-frame-pointer,
 * and then frame-pointer unwinding would skip their caller. */
__attribute__((noinline)) void consume(unsigned long x) { sink += x; }

/* The same body in each: only the call counts differ. */
#define BODY                                          \
	unsigned long x = seed;                       \
	for (unsigned i = 0; i < INNER; i++)          \
		x = x * 6364136223846793005ul + i;    \
	consume(x);

__attribute__((noinline)) void func_a(unsigned long seed) { BODY }
__attribute__((noinline)) void func_b(unsigned long seed) { BODY }
__attribute__((noinline)) void func_c(unsigned long seed) { BODY }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 250;
	int na = argc > 4 ? atoi(argv[2]) : 5, nb = argc > 4 ? atoi(argv[3]) : 3,
	    nc = argc > 4 ? atoi(argv[4]) : 2;
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < na; k++)
			func_a((unsigned long)r + (unsigned long)k);
		for (int k = 0; k < nb; k++)
			func_b((unsigned long)r + (unsigned long)k);
		for (int k = 0; k < nc; k++)
			func_c((unsigned long)r + (unsigned long)k);
	}
	printf("threefuncs: pid %d done\n", (int)getpid());
	return 0;
}
