/* SPDX-License-Identifier: MIT */
/*
 * One function per command (src/cli/cmd-NAME.c), registered in src/cli/main.c.
 * Each gets argv with argv[0] = the command name, prints its own errors
 * ("domprof NAME: ...") and returns the exit status: 0 success,
 * 1 runtime failure, 2 usage error. `--help` prints usage and returns 0
 * (opt_parse does it).
 */
#ifndef DOMPROF_COMMANDS_H
#define DOMPROF_COMMANDS_H

#include <stdio.h>

#include "cli/opt.h"

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

/* Each command's synopsis, texts and option table (src/cli/opt.h),
 * defined beside it: --help, the man pages, the completion and the
 * option lists of docs/options.md are made from these. */
extern const struct cmd_spec spec_record, spec_report, spec_info, spec_dump, spec_diff,
	spec_merge, spec_agent, spec_flamegraph, spec_export, spec_annotate, spec_import;

#endif
