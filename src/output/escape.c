// SPDX-License-Identifier: MIT
/*
 * String escaping for the output formats (see escape.h): one JSON string
 * writer, one CSV field writer and the UTF-8 check they and the flame
 * graph's XML writer share.
 */
#include <stdbool.h>
#include <string.h>

#include "output/escape.h"

static int utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t utf8_put(FILE *f, const unsigned char *s, const char *bad)
{
	int n = utf8_seq_len(s);
	if (!n) {
		fputs(bad, f);
		return 1;
	}
	fwrite(s, 1, (size_t)n, f);
	return (size_t)n;
}

void json_write_str(FILE *f, const char *str, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	bool html = flags & JSON_ESC_HTML;
	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c < 0x20 || (html && (c == '<' || c == '>' || c == '&'))) {
			fprintf(f, "\\u%04x", c);
			s++;
		} else if (c < 0x80) {
			fputc(c, f);
			s++;
		} else {
			s += utf8_put(f, s, "\\ufffd");
		}
	}
	fputc('"', f);
}

void csv_write_field(FILE *f, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
