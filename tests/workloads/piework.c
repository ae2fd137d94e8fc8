// SPDX-License-Identifier: MIT
/*
 * A position-independent executable, built with -fPIE -pie explicitly
 * (Debian's gcc defaults to PIE too, but this one must stay PIE whatever
 * the compiler's default): its code is loaded at a random base, so
 * naming pie_hot() proves the MMAP start and file offset are applied.
 * pie_hot() takes about 90% of the time, pie_cold() 10%.
 *
 * usage: piework [ROUNDS]   (default 200)
 */
// LDFLAGS: -fPIE -pie
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

#define BODY                                          \
	unsigned long x = seed;                       \
	for (unsigned i = 0; i < 1000000u; i++)       \
		x = x * 6364136223846793005ul + i;    \
	sink += x;

__attribute__((noinline)) void pie_hot(unsigned long seed) { BODY }
__attribute__((noinline)) void pie_cold(unsigned long seed) { BODY }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < 9; k++)
			pie_hot((unsigned long)(r + k));
		pie_cold((unsigned long)r);
	}
	printf("piework: pid %d done\n", (int)getpid());
	return 0;
}
