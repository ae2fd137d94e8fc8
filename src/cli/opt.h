/* SPDX-License-Identifier: MIT */
/*
 * One option table per command (docs/options.md, "How the option lists
 * are made"). Each entry holds the short and long spelling, the
 * argument's name, the help line and what the option does (set a flag,
 * keep a string, or call a handler); shared blocks (the filters, -j, the
 * perf.data guest options, the flame-graph options) are tables of their
 * own that a command's table includes. The parser, --help, the option
 * lists of docs/options.md, the man pages and the bash completion are all
 * made from these tables (`domprof help-options`), so they cannot drift.
 *
 * Parsing rules, the same in every command: options may follow operands
 * (they are permuted, as GNU getopt does); `--` ends the options; a
 * command with CMD_OPERAND_STOPS (record, whose COMMAND's arguments are
 * the command's) stops at its first operand. -h/--help print the help.
 * Long options take `--name VALUE` or `--name=VALUE` (an optional value
 * only the latter), and may be abbreviated to a unique prefix; short
 * options cluster (-lg) and take their value attached or next (-j4, -j 4).
 */
#ifndef DOMPROF_CLI_OPT_H
#define DOMPROF_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_kind {
	OPT_END = 0,
	OPT_FLAG,       /* sets the bool at off to val */
	OPT_STRING,     /* sets the const char * at off to the value */
	OPT_CALL,       /* calls fn(ctx + off, long name, value, err) */
	OPT_BLOCK,      /* the entries of block, their offsets relative to off */
	OPT_SECTION,    /* a heading in --help and the man page (help: its title) */
};

/* flags */
#define OPT_VALUE_OPTIONAL 1u   /* --name or --name=VALUE (arg names the value) */
#define OPT_ALIAS 2u            /* an older spelling: accepted, not in --help;
				 * listed in docs/options.md and the man page */

/*
 * A handler: apply the option (name: its long name, or its letter as a
 * string when it has none; value: NULL for an option without one).
 * Returns 0, or nonzero with a one-line reason in err (without the
 * "domprof CMD: " prefix): a usage error.
 */
typedef int (*opt_fn)(void *ctx, const char *name, const char *value, char *err, size_t errlen);

struct opt {
	enum opt_kind kind;
	char letter;            /* 0: no short spelling */
	const char *name;       /* long spelling without "--"; NULL: none */
	const char *arg;        /* the value's name in help ("FILE"); NULL: no value */
	const char *help;       /* one paragraph; "\n" forces a line break */
	size_t off;             /* where in the command's context it acts */
	opt_fn fn;              /* OPT_CALL */
	const struct opt *block;/* OPT_BLOCK */
	unsigned flags;
	int val;                /* OPT_FLAG: the value stored */
	const char *values;     /* completion: the values, space-separated */
	const char *alias_of;   /* OPT_ALIAS: the spelling it stands for */
};

/* Table entries. CTX is the command's context struct type. */
#define OPT_FLAG_(l, n, CTX, field, v, h) \
	{ .kind = OPT_FLAG, .letter = l, .name = n, .help = h, .off = offsetof(CTX, field), .val = v }
#define OPT_BOOL(l, n, CTX, field, h) OPT_FLAG_(l, n, CTX, field, 1, h)
#define OPT_STR(l, n, a, CTX, field, h) \
	{ .kind = OPT_STRING, .letter = l, .name = n, .arg = a, .help = h, .off = offsetof(CTX, field) }
#define OPT_FN(l, n, a, f, h) { .kind = OPT_CALL, .letter = l, .name = n, .arg = a, .help = h, .fn = f }
/* a handler that gets a member of the context instead of all of it */
#define OPT_FN_AT(l, n, a, CTX, field, f, h) \
	{ .kind = OPT_CALL, .letter = l, .name = n, .arg = a, .help = h, .fn = f, .off = offsetof(CTX, field) }
#define OPT_INCLUDE(b, CTX, field) { .kind = OPT_BLOCK, .block = b, .off = offsetof(CTX, field) }
#define OPT_INCLUDE_ALL(b) { .kind = OPT_BLOCK, .block = b }
#define OPT_HEADING(t) { .kind = OPT_SECTION, .help = t }
#define OPT_TABLE_END { .kind = OPT_END }

/* A command: its synopsis, texts and option table. */
#define CMD_OPERAND_STOPS 1u    /* the first operand ends the options (record) */
struct cmd_spec {
	const char *name;
	const char *summary;    /* one line, for `domprof --help` and man NAME */
	const char *synopsis;   /* "[options] FILE..." lines after "domprof NAME " */
	const char *description;/* paragraphs before the options */
	const char *epilog;     /* paragraphs after the options (may be NULL) */
	const struct opt *opts;
	unsigned flags;
};

/* What opt_parse returns when the command goes on. */
#define OPT_CONTINUE (-1)

/*
 * Parse argv (argv[0] is the command name) against spec's table, acting
 * on ctx. On OPT_CONTINUE the operands, in their order, are
 * ops[0..*nops-1] (ops has room for argc pointers; ops[*nops] is NULL;
 * argv is left as it was, for the recording's header). Otherwise the
 * exit status: 0 after printing --help, 2 after a usage error on stderr.
 */
int opt_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, char **ops, int *nops);

/* The --help text of a command. */
void opt_print_help(FILE *f, const struct cmd_spec *spec);

/*
 * Each entry of a table, blocks expanded, headings included, in order:
 * fn(arg, entry) for each (for the generators and the checks).
 */
void opt_each(const struct opt *table, void (*fn)(void *, const struct opt *), void *arg);

/* An entry's spelling as --help shows it: "-i, --input FILE". */
void opt_spelling(const struct opt *o, char *buf, size_t n);

/*
 * The generated documents (`domprof help-options`): the option lists of
 * docs/options.md (markdown), one man page (cmd NULL: domprof.1 with the
 * command list), the bash completion. specs: every command, n of them.
 */
void opt_write_markdown(FILE *f, const struct cmd_spec *const *specs, size_t n);
void opt_write_man(FILE *f, const struct cmd_spec *const *specs, size_t n, const struct cmd_spec *cmd);
void opt_write_completion(FILE *f, const struct cmd_spec *const *specs, size_t n);

/*
 * One way to say a command's error: "domprof CMD: " + the message (git's
 * error()). cli_error returns 1 (a runtime failure); usage_error adds
 * " (see 'domprof CMD --help')" and returns 2; cli_warn says
 * "domprof CMD: warning: ". A missing option value is always
 * "option '--name' needs a value".
 */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "domprof CMD: " + the message, for what is not an error (summaries). */
void cli_say(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The same for a text from outside (a file's damage, a guest's names, a
 * module's message quoting them): "domprof CMD: [LABEL: ]TEXT" with TEXT
 * in its terminal-safe form (output/escape.h). cli_error_text returns 1.
 */
int cli_error_text(const char *cmd, const char *label, const char *text);
void cli_warn_text(const char *cmd, const char *label, const char *text);
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
