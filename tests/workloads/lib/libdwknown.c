// SPDX-License-Identifier: MIT
/*
 * The shared library of the dwknown workload (tests/workloads/dwknown.c,
 * built -O2 -fomit-frame-pointer by mk/dwarf.mk as
 * build/workloads/libdwknown.so): the leaf that does the library's work,
 * the library's own caller of it, and a function that calls back into
 * the program. Known proportions: see dwknown.c.
 */
#include "dwknown.h"

static volatile unsigned long lib_sink;

__attribute__((noipa)) unsigned long lib_leaf(unsigned long units)
{
	DWK_BURN(units, lib_sink);
	return lib_sink & 1;
}

__attribute__((noipa)) unsigned long lib_mid(unsigned long units)
{
	/* not a tail call (the result is used), so lib_mid keeps its frame */
	unsigned long r = lib_leaf(units);
	lib_sink += r;
	return r + 1;
}

__attribute__((noipa)) unsigned long lib_drive(unsigned long (*cb)(unsigned long), unsigned long units)
{
	unsigned long r = cb(units);
	lib_sink += r;
	return r + 1;
}
