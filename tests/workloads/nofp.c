// SPDX-License-Identifier: MIT
/*
 * A workload that frame pointers cannot unwind, for DWARF unwinding
 * (docs/dwarf-notes.md): main calls walk, walk calls spin, and nearly all
 * time is in spin's loop. Built without frame pointers (mk/dwarf.mk), and
 * spin puts a junk value (0x1234, not a user address) in rbp before its
 * loop, so the kernel's frame-pointer walk (-g) stops at the sampled ip on
 * any machine, while the stack (--call-graph dwarf) still holds the
 * return addresses into walk and main, which the functions' CFI finds.
 *
 * usage: nofp [ROUNDS]   (default 700: about 1 s on the test machine)
 * Prints "nofp: pid N done" at the end so tests can match pids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin(unsigned long seed)
{
	/* rbp is callee-saved: gcc saves it, and restores it on return */
	__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");
	unsigned long x = seed;
	for (unsigned i = 0; i < 1000000u; i++)
		x = x * 6364136223846793005ul + i;
	return x;
}

__attribute__((noinline)) void walk(unsigned long n)
{
	sink += spin(n) + 1;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 700;
	for (unsigned long r = 0; r < rounds; r++)
		walk(r);
	printf("nofp: pid %d done\n", (int)getpid());
	return 0;
}
