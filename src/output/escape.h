/* SPDX-License-Identifier: MIT */
/*
 * String escaping shared by the output formats (report JSON/CSV, diff
 * JSON/CSV, flame graph, exports), so that a symbol name is quoted the
 * same way in every file domprof writes. Each function writes to a
 * caller-owned FILE and never fails on its own (check ferror(f)).
 */
#ifndef DOMPROF_OUTPUT_ESCAPE_H
#define DOMPROF_OUTPUT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Write the UTF-8 sequence that starts at s (a byte >= 0x80) unchanged,
 * or the text `bad` when s does not start a valid sequence (a lone
 * continuation byte, an overlong lead, a truncated sequence). Returns how
 * many bytes of s were consumed (1..4). s must be NUL-terminated. */
size_t utf8_put(FILE *f, const unsigned char *s, const char *bad);

/* json_write_str() flags. */
#define JSON_ESC_HTML 1u  /* also \u-escape '<', '>' and '&' (safe inside an HTML <script>) */

/*
 * Write s as a JSON string literal, quotes included (NULL is ""). The
 * result is valid UTF-8: '"' and '\' are backslash-escaped, control
 * characters become \u00XX, bytes that are not UTF-8 become \ufffd.
 */
void json_write_str(FILE *f, const char *s, unsigned flags);

/* Write s as one CSV field (RFC 4180): quoted, with quotes doubled, only
 * when it holds a comma, quote or line break (C++ names hold commas).
 * NULL is the empty field. */
void csv_write_field(FILE *f, const char *s);

/*
 * Names in text meant for a terminal (report, dump, info, annotate, diff
 * and every message quoting a name). A name comes from a recording, a
 * guest's memory or another user's file, so it may hold escape sequences
 * that set the window title, write the clipboard (OSC 52) or rewrite what
 * is on screen. In its safe form every control byte (below 0x20, 0x7f,
 * a C1 control as a byte that is not part of valid UTF-8 or as the UTF-8
 * of U+0080..U+009F) is written as the four characters \xHH (lowercase
 * hex); everything else, valid UTF-8 included, is unchanged. Backslashes
 * are not doubled: the form is for reading, not for parsing back.
 * CSV, JSON, folded and HTML outputs have their own writers above.
 */
/* True when s (NULL: "") has nothing to escape. */
bool text_is_safe(const char *s);
/* strlen of s's safe form: for column widths. */
size_t text_safe_len(const char *s);
/* s's safe form, malloc'd (the caller frees it). NULL is "". */
char *text_escape(const char *s);
/* s itself when it is safe (*owned = NULL), else its safe form, which is
 * also stored in *owned for the caller to free (free(*owned) is always
 * right). NULL stays NULL. */
const char *text_safe(const char *s, char **owned);
/* fputs of s's safe form (NULL: nothing). */
void text_put(FILE *f, const char *s);

/* One message line: prefix as it is, then msg (a warning or an error
 * that may quote a name) in its safe form, then a newline. */
void text_line(FILE *f, const char *prefix, const char *msg);

/* Safe forms for one printf of several names: each text_tmp_safe()
 * result stays valid until text_tmp_free(t). Start from struct text_tmp
 * t = { 0 }. */
struct text_tmp {
	char **v;
	size_t n, cap;
};
const char *text_tmp_safe(struct text_tmp *t, const char *s);
void text_tmp_free(struct text_tmp *t);

#endif
