// SPDX-License-Identifier: MIT
/*
 * The one kallsyms-style line parser of the project (kallsyms_next, see
 * kallsyms.h for the grammar) and the bounded text helpers it shares
 * with the other text loaders (textsyms.c). Depends on nothing else, so
 * collect/ and the fuzz targets link it alone. The input is untrusted:
 * every read is bounded by the end pointer, no NUL is needed.
 */
#include "symbols/internal.h"
#include "symbols/kallsyms.h"

#include <string.h>

/* Text helpers (internal.h). */

const char *text_line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

/* Hex digit values plus one, 0 for anything else: one load a digit, not
 * three range tests (a kallsyms is ~190k addresses of 16 digits, parsed
 * on every report that names kernel code). */
static const uint8_t hexval1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The value of 8 hex digits at p (checked by the caller): each byte's
 * nibble ('0'-'9': its low 4 bits; letters, bit 6 set: low 4 bits + 9),
 * the first digit the highest, then the nibbles packed in pairs, fours,
 * eights. */
static inline uint64_t hex8(const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	x = __builtin_bswap64(x);
	x = (x & 0x0f0f0f0f0f0f0f0full) + ((x >> 6) & 0x0101010101010101ull) * 9;
	x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
	x = (x | x >> 8) & 0x0000ffff0000ffffull;
	x = (x | x >> 16) & 0x00000000ffffffffull;
	return x;
}
#endif

bool text_parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (end - p > 16 && !hexval1[(uint8_t)p[16]]) {
		/* kallsyms's own form, 16 digits and something else: checked
		 * by table and converted eight at a time (the loop below took
		 * ~240 instructions an address); anything else goes the
		 * general way */
		unsigned bad = 0;
#pragma GCC unroll 16
		for (int i = 0; i < 16; i++)
			bad |= !hexval1[(uint8_t)p[i]];
		if (!bad) {
			*pp = p + 16;
			*out = hex8(p) << 32 | hex8(p + 8);
			return true;
		}
	}
#endif
	if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t v = 0;
	const char *start = p;
	for (; p < end; p++) {
		unsigned d = hexval1[(uint8_t)*p];
		if (!d)
			break;
		if (p - start >= 16)
			return false;
		v = v << 4 | (d - 1);
	}
	if (p == start)
		return false;
	*pp = p;
	*out = v;
	return true;
}

const char *text_skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The characters that end a name: one load a character (the scan of
 * names was a third of a kallsyms parse with four compares). */
static const bool name_stop[256] = { [' '] = true, ['\t'] = true, ['\r'] = true, ['\n'] = true };

/* Bytes of x that are zero: the lowest set 0x80 bit marks the first
 * (higher ones may be false, after a borrow: only the first is used). */
#define ZERO_BYTES(x) (((x) - 0x0101010101010101ull) & ~(x) & 0x8080808080808080ull)

size_t kallsyms_name_len(const char *p, const char *end)
{
	const char *q = p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* eight bytes a step: names are ~25 bytes, a third of a parse */
	while (end - q >= 8) {
		uint64_t x;
		memcpy(&x, q, 8);
		uint64_t m = ZERO_BYTES(x ^ 0x2020202020202020ull) | ZERO_BYTES(x ^ 0x0909090909090909ull) |
			     ZERO_BYTES(x ^ 0x0d0d0d0d0d0d0d0dull) | ZERO_BYTES(x ^ 0x0a0a0a0a0a0a0a0aull);
		if (m)
			return (size_t)(q - p) + ((unsigned)__builtin_ctzll(m) >> 3);
		q += 8;
	}
#endif
	while (q < end && !name_stop[(uint8_t)*q])
		q++;
	return (size_t)(q - p);
}

/* The fields after a parsed address: "TYPE NAME [MODULE]". False when one
 * is missing. */
static bool parse_fields(const char *q, const char *le, struct kallsyms_line *out)
{
	q = text_skip_blank(q, le);
	if (q == le)
		return false;
	out->type = *q++;
	if (q == le || (*q != ' ' && *q != '\t'))
		return false;
	q = text_skip_blank(q, le);
	out->name = q;
	out->namelen = kallsyms_name_len(q, le);
	if (!out->namelen)
		return false;
	q = text_skip_blank(q + out->namelen, le);
	if (q < le && *q == '[') {
		const char *m = q + 1, *me = memchr(m, ']', (size_t)(le - m));
		if (me && me > m) {
			out->mod = m;
			out->modlen = (size_t)(me - m);
		}
	}
	return true;
}

int kallsyms_next(const char **pp, const char *end, unsigned flags, struct kallsyms_line *out)
{
	const char *p = *pp;
	while (p < end) {
		const char *le = text_line_end(p, end);
		const char *q = text_skip_blank(p, le);
		const char *next = le < end ? le + 1 : end;
		if (q == le) {
			p = next;
			continue;
		}
		*pp = next;
		memset(out, 0, sizeof(*out));
		out->line = p;
		out->linelen = (size_t)(le - p);
		out->neg = (flags & KALLSYMS_DELTA) && *q == '-';
		if (out->neg)
			q++;
		if (!text_parse_hex(&q, le, &out->addr) || q == le || (*q != ' ' && *q != '\t')) {
			out->neg = false;
			out->addr = 0;
			return KALLSYMS_BAD;
		}
		out->addr_end = q;
		return parse_fields(q, le, out) ? KALLSYMS_LINE : KALLSYMS_BAD;
	}
	*pp = end;
	return KALLSYMS_END;
}

uint64_t kallsyms_lookup(const char *text, size_t len, const char *name)
{
	const char *p = text, *end = text + len;
	struct kallsyms_line l;
	int r;
	while ((r = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END)
		if (r == KALLSYMS_LINE && !l.mod && kallsyms_name_is(&l, name))
			return l.addr;
	return 0;
}
