// SPDX-License-Identifier: MIT
/*
 * String escaping for the output formats (see escape.h): one JSON string
 * writer, one CSV field writer, the UTF-8 check they and the flame
 * graph's XML writer share, and the terminal-safe form of a name in text.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

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

/* How many bytes at s go out unchanged in text (0: s[0] is escaped). A
 * valid UTF-8 sequence is kept whole, except one encoding a C1 control
 * (U+0080..U+009F: 0xc2 0x80..0x9f), which terminals may obey as one. */
static size_t text_keep(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	int n = utf8_seq_len(s);
	if (n == 2 && c == 0xc2 && s[1] < 0xa0)
		return 0;
	if (n)
		return (size_t)n;
	return c < 0xa0 ? 0 : 1;   /* a lone C1 byte; a Latin-1 letter stays */
}

size_t text_safe_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = 0;
	while (*s) {
		size_t k = text_keep(s);
		n += k ? k : 4;
		s += k ? k : 1;
	}
	return n;
}

bool text_is_safe(const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		size_t k = text_keep(s);
		if (!k)
			return false;
		s += k;
	}
	return true;
}

/* Writes s's safe form into out, which has room for text_safe_len(s)+1. */
static void text_escape_into(const unsigned char *s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	while (*s) {
		size_t k = text_keep(s);
		if (k) {
			memcpy(out, s, k);
			out += k;
			s += k;
		} else {
			*out++ = '\\';
			*out++ = 'x';
			*out++ = hex[*s >> 4];
			*out++ = hex[*s & 15];
			s++;
		}
	}
	*out = '\0';
}

char *text_escape(const char *str)
{
	const char *s = str ? str : "";
	char *out = xmalloc(text_safe_len(s) + 1);
	text_escape_into((const unsigned char *)s, out);
	return out;
}

const char *text_safe(const char *s, char **owned)
{
	*owned = NULL;
	if (!s || text_is_safe(s))
		return s;
	*owned = text_escape(s);
	return *owned;
}

void text_put(FILE *f, const char *s)
{
	char *owned;
	fputs(text_safe(s ? s : "", &owned), f);
	free(owned);
}

void text_line(FILE *f, const char *prefix, const char *msg)
{
	fputs(prefix, f);
	text_put(f, msg);
	fputc('\n', f);
}

const char *text_tmp_safe(struct text_tmp *t, const char *s)
{
	char *owned;
	const char *r = text_safe(s, &owned);
	if (owned) {
		if (t->n == t->cap)
			xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
		t->v[t->n++] = owned;
	}
	return r;
}

void text_tmp_free(struct text_tmp *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
