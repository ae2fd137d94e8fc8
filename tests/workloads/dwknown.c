// SPDX-License-Identifier: MIT
/*
 * Known call graph across a program and a shared library, both built
 * -O2 -fomit-frame-pointer (mk/dwarf.mk), for DWARF unwinding
 * (tests/e2e/dwarf-known.sh, docs/dwarf-notes.md "Proof"). Each round
 * does 20 units of work (lib/dwknown.h), always in this order:
 *
 *   main -> exe_self                      6 units  30%  (program)
 *   main -> exe_mid -> lib_leaf           7 units  35%  (library)
 *   main -> lib_mid -> lib_leaf           3 units  15%  (library)
 *   main -> lib_drive -> exe_cb           4 units  20%  (program)
 *
 * so lib_leaf (50% of the time) is reached from exe_mid and lib_mid
 * 70:30, main's callees are exe_self 30, exe_mid 35, lib_mid 15,
 * lib_drive 20, and the program and the library each do part of the
 * work (50:50). The callers do no work of their own beyond a call.
 *
 * usage: dwknown [ROUNDS]   (default 600: about 1.5 s on the test machine)
 * Prints "dwknown: pid N done" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/dwknown.h"

static volatile unsigned long sink;

__attribute__((noipa)) static unsigned long exe_self(unsigned long units)
{
	DWK_BURN(units, sink);
	return sink & 1;
}

__attribute__((noipa)) static unsigned long exe_cb(unsigned long units)
{
	DWK_BURN(units, sink);
	return sink & 1;
}

__attribute__((noipa)) static unsigned long exe_mid(unsigned long units)
{
	unsigned long r = lib_leaf(units); /* the result is used: no tail call */
	sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 600;
	for (unsigned long r = 0; r < rounds; r++) {
		sink += exe_self(6);
		sink += exe_mid(7);
		sink += lib_mid(3);
		sink += lib_drive(exe_cb, 4);
	}
	printf("dwknown: pid %d done\n", (int)getpid());
	return 0;
}
