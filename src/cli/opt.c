// SPDX-License-Identifier: MIT
/*
 * The option tables' parser, --help printer and error helpers
 * (src/cli/opt.h). The generated documents are in opt_doc.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/opt.h"
#include "output/escape.h"

#define FLAT_MAX 256

/* An entry with where it acts: its block offsets added up. */
struct flat {
	const struct opt *o;
	size_t off;
};

static void flatten_into(const struct opt *t, size_t base, struct flat *v, size_t *n)
{
	for (; t->kind != OPT_END; t++) {
		if (t->kind == OPT_BLOCK)
			flatten_into(t->block, base + t->off, v, n);
		else if (t->kind != OPT_SECTION && *n < FLAT_MAX)
			v[(*n)++] = (struct flat){ t, base + t->off };
	}
}

static void each_in(const struct opt *t, void (*fn)(void *, const struct opt *), void *arg)
{
	for (; t->kind != OPT_END; t++) {
		if (t->kind == OPT_BLOCK)
			each_in(t->block, fn, arg);
		else
			fn(arg, t);
	}
}

void opt_each(const struct opt *table, void (*fn)(void *, const struct opt *), void *arg)
{
	each_in(table, fn, arg);
}

static void verror(const char *cmd, const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "domprof %s: %s", cmd, prefix);
	vfprintf(stderr, fmt, ap);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(cmd, "", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(cmd, "warning: ", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_say(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(cmd, "", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void say_text(const char *cmd, const char *kind, const char *label, const char *text)
{
	char prefix[4096];
	snprintf(prefix, sizeof(prefix), "domprof %s: %s%s%s", cmd, kind, label ? label : "", label ? ": " : "");
	text_line(stderr, prefix, text);
}

int cli_error_text(const char *cmd, const char *label, const char *text)
{
	say_text(cmd, "", label, text);
	return 1;
}

void cli_warn_text(const char *cmd, const char *label, const char *text)
{
	say_text(cmd, "warning: ", label, text);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(cmd, "", fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'domprof %s --help')\n", cmd);
	return 2;
}

/* Apply one option; 0, or 2 after saying why on stderr. */
static int apply(const struct cmd_spec *spec, const struct flat *f, void *ctx, const char *value)
{
	const struct opt *o = f->o;
	char *at = (char *)ctx + f->off;
	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)at = o->val != 0;
		return 0;
	case OPT_STRING:
		*(const char **)at = value;
		return 0;
	case OPT_CALL: {
		char err[512] = "";
		char letter[2] = { o->letter, 0 };
		if (!o->fn(at, o->name ? o->name : letter, value, err, sizeof(err)))
			return 0;
		return usage_error(spec->name, "%s", err[0] ? err : "bad option");
	}
	default:
		return 0;
	}
}

static const struct flat *find_long(const struct flat *v, size_t n, const char *name, size_t len,
				    bool *ambiguous)
{
	const struct flat *hit = NULL;
	*ambiguous = false;
	for (size_t i = 0; i < n; i++)
		if (v[i].o->name && strlen(v[i].o->name) == len && !strncmp(v[i].o->name, name, len))
			return &v[i];
	/* a unique prefix, as getopt_long takes it (several entries of one
	 * handler with one name do not occur: names are unique per table) */
	for (size_t i = 0; i < n; i++)
		if (v[i].o->name && !strncmp(v[i].o->name, name, len)) {
			if (hit) {
				*ambiguous = true;
				return NULL;
			}
			hit = &v[i];
		}
	return hit;
}

static const struct flat *find_short(const struct flat *v, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].o->letter == c)
			return &v[i];
	return NULL;
}

int opt_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx, char **ops, int *nops)
{
	struct flat v[FLAT_MAX];
	size_t n = 0;
	flatten_into(spec->opts, 0, v, &n);
	int nop = 0;  /* operands so far */
	bool stop = false;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (stop || a[0] != '-' || !a[1]) {
			ops[nop++] = a;
			if (spec->flags & CMD_OPERAND_STOPS)
				stop = true;
			continue;
		}
		if (!strcmp(a, "--")) {
			stop = true;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			if (len == 4 && !strncmp(name, "help", 4) && !eq) {
				opt_print_help(stdout, spec);
				return 0;
			}
			bool amb;
			const struct flat *f = find_long(v, n, name, len, &amb);
			if (!f)
				return usage_error(spec->name, amb ? "ambiguous option '%.*s'" : "unknown option '%.*s'",
						   (int)(len + 2), a);
			const char *value = NULL;
			if (!f->o->arg) {
				if (eq)
					return usage_error(spec->name, "option '--%s' takes no value", f->o->name);
			} else if (eq) {
				value = eq + 1;
			} else if (!(f->o->flags & OPT_VALUE_OPTIONAL)) {
				if (i + 1 >= argc)
					return usage_error(spec->name, "option '--%s' needs a value", f->o->name);
				value = argv[++i];
			}
			int rc = apply(spec, f, ctx, value);
			if (rc)
				return rc;
			continue;
		}
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'h') {
				opt_print_help(stdout, spec);
				return 0;
			}
			const struct flat *f = find_short(v, n, *p);
			if (!f)
				return usage_error(spec->name, "unknown option '-%c'", *p);
			const char *value = NULL;
			if (f->o->arg && !(f->o->flags & OPT_VALUE_OPTIONAL)) {
				if (p[1])
					value = p + 1;
				else if (i + 1 < argc)
					value = argv[++i];
				else
					return usage_error(spec->name, "option '-%c' needs a value", *p);
			}
			int rc = apply(spec, f, ctx, value);
			if (rc)
				return rc;
			if (value)
				break;
		}
	}
	ops[nop] = NULL;
	*nops = nop;
	return OPT_CONTINUE;
}

void opt_spelling(const struct opt *o, char *buf, size_t n)
{
	const char *arg = o->arg ? o->arg : "";
	bool opt = o->flags & OPT_VALUE_OPTIONAL;
	if (o->letter && o->name)
		snprintf(buf, n, "-%c, --%s%s%s%s%s", o->letter, o->name, o->arg ? (opt ? "[=" : " ") : "", arg,
			 opt ? "]" : "", "");
	else if (o->letter)
		snprintf(buf, n, "-%c%s%s", o->letter, o->arg ? " " : "", arg);
	else
		snprintf(buf, n, "    --%s%s%s%s", o->name, o->arg ? (opt ? "[=" : " ") : "", arg, opt ? "]" : "");
}

/* Print text from column col (already there) wrapped at width, later
 * lines indented by indent; "\n" in text breaks a line, keeping the
 * spaces that follow it. */
static void wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;
	bool first_word = true;
	while (*p) {
		if (*p == '\n') {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			p++;
			first_word = true;
			while (*p == ' ') {
				fputc(' ', f);
				col++;
				p++;
			}
			continue;
		}
		int sp = (int)strspn(p, " ");   /* a run of spaces aligns columns: kept */
		p += sp;
		if (!*p || *p == '\n')
			continue;
		size_t w = strcspn(p, " \n");
		if (!first_word && col + (sp > 1 ? sp : 1) + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			first_word = true;
		}
		if (!first_word) {
			fprintf(f, "%*s", sp > 1 ? sp : 1, "");
			col += sp > 1 ? sp : 1;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		first_word = false;
	}
	fputc('\n', f);
}

#define HELP_COL 25
#define HELP_WIDTH 79

static void help_entry(void *arg, const struct opt *o)
{
	FILE *f = arg;
	if (o->kind == OPT_SECTION) {
		fprintf(f, "\n%s\n", o->help);
		return;
	}
	if (o->flags & OPT_ALIAS)
		return;
	char sp[128];
	opt_spelling(o, sp, sizeof(sp));
	int col = fprintf(f, "  %s", sp);
	if (col <= HELP_COL - 1) {
		fprintf(f, "%*s", HELP_COL - col, "");
		col = HELP_COL;
	} else {
		fputs("  ", f);
		col += 2;
	}
	wrap(f, o->help, col, HELP_COL, HELP_WIDTH);
}

void opt_print_help(FILE *f, const struct cmd_spec *spec)
{
	const char *s = spec->synopsis;
	bool first = true;
	/* a line that starts with a space continues the form above it */
	int indent = (int)strlen(spec->name) + 16;
	while (*s) {
		size_t l = strcspn(s, "\n");
		if (*s == ' ')
			fprintf(f, "%*s%.*s\n", indent, "", (int)l - 1, s + 1);
		else
			fprintf(f, "%s domprof %s %.*s\n", first ? "usage:" : "      ", spec->name, (int)l, s);
		s += l + (s[l] == '\n');
		first = false;
	}
	fprintf(f, "\n%s", spec->description);
	if (spec->opts[0].kind != OPT_SECTION)
		fprintf(f, "\noptions:\n");
	opt_each(spec->opts, help_entry, f);
	fprintf(f, "  -h, --help             this text\n");
	if (spec->epilog)
		fprintf(f, "\n%s", spec->epilog);
}
