// SPDX-License-Identifier: MIT
/*
 * domprof entry point: the command table and dispatch (git-style
 * `domprof <command> [options]`). Commands live in src/cli/cmd-*.c, each
 * with its option table (src/cli/opt.h), which parses its options and
 * prints its --help.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
	int (*fn)(int, char **);
	const struct cmd_spec *spec;
};

static const struct command commands[] = {
	{ cmd_record, &spec_record },
	{ cmd_report, &spec_report },
	{ cmd_info, &spec_info },
	{ cmd_dump, &spec_dump },
	{ cmd_diff, &spec_diff },
	{ cmd_merge, &spec_merge },
	{ cmd_import, &spec_import },
	{ cmd_agent, &spec_agent },
	{ cmd_flamegraph, &spec_flamegraph },
	{ cmd_annotate, &spec_annotate },
	{ cmd_export, &spec_export },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void main_usage(FILE *f)
{
	fprintf(f, "usage: domprof <command> [options]\n"
		   "       domprof help <command> | domprof <command> --help | domprof --version\n\n"
		   "A system-wide sampling profiler for a Linux host and its virtual machines.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-11s %s\n", commands[i].spec->name, commands[i].spec->summary);
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].spec->name, name))
			return &commands[i];
	return NULL;
}

/*
 * `domprof help-options markdown|bash|man [COMMAND]|names`: the documents
 * made from the option tables (scripts/gen-cli-docs writes them into the
 * tree; tests/e2e/cli-docs.sh checks they are current). names: one line
 * per option, "COMMAND LETTER LONG primary|alias" ('-' for none), for the
 * checks; check: the tables' entries are complete and unique per command.
 */
static void names_entry(void *arg, const struct opt *o)
{
	if (o->kind == OPT_SECTION)
		return;
	/* a letter without a long spelling is named by what it stands for
	 * (record's -g: --call-graph) */
	const char *name = o->name ? o->name : o->alias_of && !strncmp(o->alias_of, "--", 2) ? o->alias_of + 2 : "-";
	printf("%s %c %.*s %s\n", (const char *)arg, o->letter ? o->letter : '-', (int)strcspn(name, " "), name,
	       o->flags & OPT_ALIAS ? "alias" : "primary");
}

/* check: every entry can act (a handler, a block), spellings are unique
 * within a command; one line per fault, for tests/e2e/cli-docs.sh. */
struct check_ctx {
	const char *cmd;
	const struct opt *seen[256];
	size_t n;
	int faults;
};

static void check_entry(void *arg, const struct opt *o)
{
	struct check_ctx *c = arg;
	if (o->kind == OPT_SECTION)
		return;
	if ((o->kind == OPT_CALL && !o->fn) || (!o->letter && !o->name) || (o->kind == OPT_FLAG && o->arg) ||
	    (o->kind == OPT_STRING && !o->arg) || !o->help || ((o->flags & OPT_ALIAS) && !o->alias_of)) {
		printf("%s: entry %s%c%s%s is incomplete\n", c->cmd, o->letter ? "-" : "", o->letter ? o->letter : ' ',
		       o->name ? " --" : "", o->name ? o->name : "");
		c->faults++;
	}
	for (size_t i = 0; i < c->n; i++)
		if ((o->letter && c->seen[i]->letter == o->letter) ||
		    (o->name && c->seen[i]->name && !strcmp(c->seen[i]->name, o->name))) {
			printf("%s: %s%c given twice\n", c->cmd, o->name ? o->name : "-", o->name ? ' ' : o->letter);
			c->faults++;
		}
	if (c->n < 256)
		c->seen[c->n++] = o;
}

static int help_options(int argc, char **argv)
{
	const struct cmd_spec *specs[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		specs[i] = commands[i].spec;
	const char *what = argc > 2 ? argv[2] : "";
	if (!strcmp(what, "markdown"))
		opt_write_markdown(stdout, specs, NCOMMANDS);
	else if (!strcmp(what, "bash"))
		opt_write_completion(stdout, specs, NCOMMANDS);
	else if (!strcmp(what, "man")) {
		const struct command *c = argc > 3 ? find(argv[3]) : NULL;
		if (argc > 3 && !c) {
			fprintf(stderr, "domprof: unknown command '%s' (see 'domprof --help')\n", argv[3]);
			return 2;
		}
		opt_write_man(stdout, specs, NCOMMANDS, c ? c->spec : NULL);
	} else if (!strcmp(what, "names")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			opt_each(specs[i]->opts, names_entry, (void *)specs[i]->name);
	} else if (!strcmp(what, "check")) {
		int faults = 0;
		for (size_t i = 0; i < NCOMMANDS; i++) {
			struct check_ctx c = { .cmd = specs[i]->name };
			opt_each(specs[i]->opts, check_entry, &c);
			faults += c.faults;
		}
		if (faults)
			return 1;
	} else {
		fprintf(stderr, "usage: domprof help-options markdown|bash|man [COMMAND]|names|check\n");
		return 2;
	}
	return fflush(stdout) ? 1 : 0;
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
	if (!strcmp(c, "help-options"))
		return help_options(argc, argv);
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
		opt_print_help(stdout, h->spec);
		return 0;
	}
	const struct command *cmd = find(c);
	if (!cmd) {
		fprintf(stderr, "domprof: unknown command '%s' (see 'domprof --help')\n", c);
		return 2;
	}
	return cmd->fn(argc - 1, argv + 1);
}
