/* SPDX-License-Identifier: MIT */
/*
 * String escaping shared by the output formats (report JSON/CSV, diff
 * JSON/CSV, flame graph, exports), so that a symbol name is quoted the
 * same way in every file domprof writes. Each function writes to a
 * caller-owned FILE and never fails on its own (check ferror(f)).
 */
#ifndef DOMPROF_OUTPUT_ESCAPE_H
#define DOMPROF_OUTPUT_ESCAPE_H

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

#endif
