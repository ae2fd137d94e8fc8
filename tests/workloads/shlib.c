// SPDX-License-Identifier: MIT
/*
 * A program whose time goes mostly into a shared library: each round
 * calls lib_work_burn() (in libwork.so, built from tests/workloads/lib/)
 * 3 times and its own main_work_burn() once, with the same loop body, so
 * about 75% of the samples belong to libwork.so and 25% to shlib.
 * Linked by the rule in mk/report.mk (rpath $ORIGIN).
 *
 * usage: shlib [ROUNDS]   (default 450)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void lib_work_burn(unsigned long seed);

static volatile unsigned long sink;

__attribute__((noinline)) void main_work_burn(unsigned long seed)
{
	unsigned long x = seed;
	for (unsigned i = 0; i < 1000000u; i++)
		x = x * 6364136223846793005ul + i;
	sink += x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 450;
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < 3; k++)
			lib_work_burn((unsigned long)(r + k));
		main_work_burn((unsigned long)r);
	}
	printf("shlib: pid %d done\n", (int)getpid());
	return 0;
}
