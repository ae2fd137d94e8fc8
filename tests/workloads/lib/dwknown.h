// SPDX-License-Identifier: MIT
/*
 * Shared by the dwknown workload and its library libdwknown.so
 * (tests/workloads/dwknown.c, tests/workloads/lib/libdwknown.c;
 * tests/e2e/dwarf-known.sh): the unit of work and the library's API.
 *
 * DWK_BURN(UNITS) spins UNITS x DWK_UNIT iterations of the same
 * dependent multiply-add chain (latency-bound, so every function that
 * runs it spends the same time per unit wherever its code lies). Before
 * the loop it puts a junk value (0x1234, no user address) in rbp, as
 * nofp.c does: the binaries are built without frame pointers, and the
 * junk makes sure the kernel's frame-pointer walk (-g) stops at the
 * sampled ip on any machine, whatever rbp libc left behind, while the
 * stack (--call-graph dwarf) still holds the return addresses that the
 * functions' CFI finds. rbp is callee-saved: gcc saves and restores it.
 */
#ifndef DWKNOWN_H
#define DWKNOWN_H

#define DWK_UNIT 100000ul

#define DWK_BURN(units, sinkvar)                                              \
	do {                                                                  \
		__asm__ volatile("mov $0x1234, %%rbp" ::: "rbp");             \
		unsigned long x_ = (units);                                   \
		for (unsigned long i_ = 0; i_ < (units) * DWK_UNIT; i_++)     \
			x_ = x_ * 6364136223846793005ul + i_;                 \
		(sinkvar) += x_;                                              \
	} while (0)

/* the leaf: UNITS units of work in the library */
unsigned long lib_leaf(unsigned long units);
/* the library's own caller of lib_leaf */
unsigned long lib_mid(unsigned long units);
/* calls back into the program: cb(units) */
unsigned long lib_drive(unsigned long (*cb)(unsigned long), unsigned long units);

#endif
