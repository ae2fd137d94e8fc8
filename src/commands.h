/* SPDX-License-Identifier: MIT */
/*
 * One function per command (src/cmd-NAME.c), registered in src/main.c.
 * Each gets argv with argv[0] = the command name, prints its own errors
 * ("domprof NAME: ...") and returns the exit status: 0 success,
 * 1 runtime failure, 2 usage error. `--help` prints usage and returns 0.
 */
#ifndef DOMPROF_COMMANDS_H
#define DOMPROF_COMMANDS_H

#include <stdio.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_import(int argc, char **argv);

/* Usage texts, one per command (defined beside each command). */
extern const char usage_record[], usage_report[], usage_info[], usage_dump[],
	usage_diff[], usage_merge[], usage_agent[], usage_flamegraph[],
	usage_export[], usage_annotate[], usage_import[];

/* Print "domprof CMD: unknown option '-x'" + hint; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
