/* SPDX-License-Identifier: MIT */
/*
 * The one parser of kallsyms-style text (/proc/kallsyms, System.map):
 * lines "ADDR TYPE NAME" with an optional "\t[MODULE]". Used by the
 * symbol tables (src/symbols/kallsyms.c) and by KASLR detection
 * (src/collect/kaslr.c). The text is untrusted (an embedded blob, a
 * user-named file): it is bounded by its end pointer (no NUL needed, NUL
 * bytes are ordinary characters), every call consumes at least one line,
 * and nothing is copied or allocated.
 *
 * A line is: optional blanks (space, tab); with KALLSYMS_DELTA an
 * optional '-'; 1-16 hex digits (an optional 0x first); blanks; one type
 * character; blanks; the name, up to a blank, '\r' or the line's end;
 * then optionally blanks and "[MODULE]" (non-empty, up to the first ']').
 * Anything after that is ignored. Lines of blanks only are skipped.
 */
#ifndef DOMPROF_SYMBOLS_KALLSYMS_H
#define DOMPROF_SYMBOLS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Flags of kallsyms_next. */
#define KALLSYMS_DELTA 1u   /* DP_SYMTAB_KALLSYMS_DELTA text: a '-' may precede the address */

enum {
	KALLSYMS_END = 0,    /* no line left */
	KALLSYMS_LINE = 1,   /* *out holds a well-formed line */
	KALLSYMS_BAD = -1,   /* a malformed line, skipped (see addr_end) */
};

struct kallsyms_line {
	const char *line;        /* the line, without its '\n' */
	size_t linelen;
	/* Set when the address parsed (also on KALLSYMS_BAD, when the line
	 * is malformed only after it; else addr_end is NULL): */
	uint64_t addr;           /* as written (with KALLSYMS_DELTA: the magnitude) */
	bool neg;                /* a '-' preceded it (KALLSYMS_DELTA only) */
	const char *addr_end;    /* just past its last digit */
	/* KALLSYMS_LINE only: */
	char type;               /* 'T', 't', 'W', 'D', ... as written */
	const char *name;        /* [name, name + namelen), namelen >= 1, not NUL-terminated */
	size_t namelen;
	const char *mod;         /* [mod, mod + modlen) inside "[...]", or NULL */
	size_t modlen;
};

/*
 * Parse the next non-blank line of [*p, end) into *out and advance *p
 * past it (and its '\n'). Returns KALLSYMS_LINE, KALLSYMS_BAD, or
 * KALLSYMS_END when only blanks are left (then *p == end).
 */
int kallsyms_next(const char **p, const char *end, unsigned flags, struct kallsyms_line *out);

/* The address of the first core-kernel (not module) line of [text,
 * text + len) named name, 0 when there is none. A linear scan: for the
 * handful of lookups a passive domain makes once per recording. */
uint64_t kallsyms_lookup(const char *text, size_t len, const char *name);

/* Is the line's name exactly the C string s? */
static inline bool kallsyms_name_is(const struct kallsyms_line *l, const char *s)
{
	size_t n = strlen(s);
	return l->namelen == n && !memcmp(l->name, s, n);
}

#endif
