// SPDX-License-Identifier: MIT
/*
 * domprof entry point: the command table and dispatch (git-style
 * `domprof <command> [options]`). Commands live in src/cmd-*.c.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *usage;
	const char *summary;
	/* Its own parser finds --help: what follows its operands (record's
	 * COMMAND and its arguments) is not its to read. */
	bool own_help;
};

static const struct command commands[] = {
	{ "record", cmd_record, usage_record, "record samples from the host and from VMs into a file", true },
	{ "report", cmd_report, usage_report, "show where the time went (images, symbols, call graphs)", false },
	{ "info", cmd_info, usage_info, "describe a recording: header, domains, events, counts, damage", false },
	{ "dump", cmd_dump, usage_dump, "print every record of a recording, one per line", false },
	{ "diff", cmd_diff, usage_diff, "compare two profiles symbol by symbol", false },
	{ "merge", cmd_merge, usage_merge, "join recordings made separately into one multi-domain file", false },
	{ "import", cmd_import, usage_import, "write a perf.data as a domprof recording (for merge)", false },
	{ "agent", cmd_agent, usage_agent, "run inside a guest and record on request of a host", false },
	{ "flamegraph", cmd_flamegraph, usage_flamegraph, "write an interactive flame graph (HTML or SVG)", false },
	{ "annotate", cmd_annotate, usage_annotate, "a function's instructions with their samples", false },
	{ "export", cmd_export, usage_export, "export a profile: folded, pprof, speedscope, json", false },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void main_usage(FILE *f)
{
	fprintf(f, "usage: domprof <command> [options]\n"
		   "       domprof help <command> | domprof <command> --help | domprof --version\n\n"
		   "A system-wide sampling profiler for a Linux host and its virtual machines.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "domprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'domprof %s --help')\n", cmd);
	return 2;
}

int main(int argc, char **argv)
{
	/* Grow the heap 4 MiB at a time: a small report makes many small
	 * allocations (symbol tables, FDE tables, chains), and the default
	 * 128 KiB top pad takes a brk and fresh page faults for each step. */
	mallopt(M_TOP_PAD, 4 << 20);
	if (argc < 2) {
		main_usage(stderr);
		return 2;
	}
	const char *c = argv[1];
	if (!strcmp(c, "--help") || !strcmp(c, "-h")) {
		main_usage(stdout);
		return 0;
	}
	if (!strcmp(c, "--version") || !strcmp(c, "version")) {
		printf("domprof %s\n", DOMPROF_VERSION);
		return 0;
	}
	if (!strcmp(c, "help")) {
		if (argc < 3) {
			main_usage(stdout);
			return 0;
		}
		const struct command *h = find(argv[2]);
		if (!h) {
			fprintf(stderr, "domprof: unknown command '%s' (see 'domprof --help')\n", argv[2]);
			return 2;
		}
		fputs(h->usage, stdout);
		return 0;
	}
	const struct command *cmd = find(c);
	if (!cmd) {
		fprintf(stderr, "domprof: unknown command '%s' (see 'domprof --help')\n", c);
		return 2;
	}
	for (int i = 2; !cmd->own_help && i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(cmd->usage, stdout);
			return 0;
		}
	return cmd->fn(argc - 1, argv + 1);
}
