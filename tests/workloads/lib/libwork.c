// SPDX-License-Identifier: MIT
/*
 * The shared library of the `shlib` workload (built by mk/report.mk as
 * build/workloads/libwork.so; it lives in a subfolder so the Makefile's
 * tests/workloads/*.c rule does not try to link it as a program).
 * lib_work_burn() spins a fixed loop per call, so a profile of `shlib`
 * must name it with libwork.so as its image.
 */
volatile unsigned long lib_work_sink;

__attribute__((noinline)) void lib_work_burn(unsigned long seed)
{
	unsigned long x = seed;
	for (unsigned i = 0; i < 1000000u; i++)
		x = x * 6364136223846793005ul + i;
	lib_work_sink += x;
}
