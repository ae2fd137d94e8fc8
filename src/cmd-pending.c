// SPDX-License-Identifier: MIT
/*
 * Commands whose implementation has not landed yet say so plainly. The
 * definitions are weak: a real src/cmd-NAME.c replaces them at link time
 * (the binary links object files, not the archive, for this reason).
 */
#include <stdio.h>

#include "commands.h"

#define PENDING(name)                                                              \
	__attribute__((weak)) const char usage_##name[] = "usage: domprof " #name "\n\nNot available in this build yet.\n"; \
	__attribute__((weak)) int cmd_##name(int argc, char **argv)                                    \
	{                                                                          \
		(void)argc; (void)argv;                                            \
		fprintf(stderr, "domprof " #name ": not available in this build yet\n"); \
		return 1;                                                          \
	}

PENDING(record)
PENDING(report)
PENDING(diff)
PENDING(merge)
PENDING(agent)
PENDING(flamegraph)
PENDING(export)
