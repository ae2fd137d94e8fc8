// SPDX-License-Identifier: MIT
/*
 * A workload with known per-line costs (the srcline and annotate tests):
 * in two_lines(), the statement on the LINE_A line does three times the
 * work of the one on the LINE_B line (24 and 8 multiplies a round, one
 * dependent chain through both lines, so neither overlaps the other;
 * inline asm, so the compiler neither moves nor merges them), so
 * --sort srcline gives those two lines 75:25. inl_helper() is
 * always inlined into with_inline(): its samples are the inlined
 * function's (at its own line) with the inline option, and
 * with_inline()'s (at the line of the call) without it.
 *
 * Built -O1 -g (mk/lines.mk). usage: lines [ROUNDS]   (default 300)
 * Prints "lines: pid N done" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

/* four dependent multiplies: one 3-cycle chain through x */
#define MUL4 "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"

/* x stays in one register (no compiler move between the two lines). A
 * sample's ip is the instruction after the one that was executing, so
 * each line's last multiply is counted on what follows it: line B gets
 * one of A's, the loop's decrement one of B's: 23:8, 74:26 (measured
 * 74.7% with 12:4 multiplies; the longer lines make that edge smaller). */
__attribute__((noinline)) unsigned long two_lines(unsigned long x0, unsigned long k)
{
	register unsigned long x __asm__("r12") = x0;
	k |= 3;
	for (unsigned i = 0; i < 100000; i++) {
		__asm__ volatile(MUL4 MUL4 MUL4 MUL4 MUL4 MUL4 : "+r"(x) : "r"(k)); /* LINE_A: 24 */
		__asm__ volatile(MUL4 MUL4 : "+r"(x) : "r"(k)); /* LINE_B: 8 */
	}
	return x;
}

static inline __attribute__((always_inline)) unsigned long inl_helper(unsigned long x)
{
	for (unsigned i = 0; i < 300000; i++) {
		__asm__ volatile("" : "+r"(x));
		x = x * 3202034522624059733ul + i; /* LINE_INL */
	}
	return x;
}

__attribute__((noinline)) unsigned long with_inline(unsigned long x)
{
	return inl_helper(x) + 1; /* LINE_CALL */
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 300;
	unsigned long s = 1;
	for (long r = 0; r < rounds; r++) {
		s += two_lines(s, r);
		s += with_inline(s);
	}
	sink = s;
	printf("lines: pid %d done\n", (int)getpid());
	return 0;
}
