// SPDX-License-Identifier: MIT
/*
 * A program whose time goes into the static functions of a stripped
 * shared library (libfde.so, tests/workloads/lib/libfde.c: 50% / 30% /
 * 20% in three functions no symbol names). Linked by the rule in
 * mk/symbols-fde.mk (rpath $ORIGIN); tests/e2e/report-fde-names.sh
 * checks that the report names them per function from .eh_frame.
 *
 * usage: fdework [ROUNDS]   (default 150)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void fde_work(long rounds);

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 150;
	fde_work(rounds);
	printf("fdework: pid %d done\n", (int)getpid());
	return 0;
}
