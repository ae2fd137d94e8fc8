// SPDX-License-Identifier: MIT
/*
 * Unit test of the one kallsyms-style line parser (kallsyms_next,
 * src/symbols/kallsyms.c): well-formed lines of /proc/kallsyms and
 * System.map, and hostile ones — no newline at the end, addresses too
 * long for 64 bits, missing fields, a 10 kB name, NUL bytes, CRLF, blank
 * lines, a delta sign without the flag. Every call must consume a line
 * and stay inside the buffer (the texts are exact-size heap copies, so
 * ASan sees any read past them).
 *
 * The fast paths (16-digit addresses converted eight digits at a time,
 * names scanned eight bytes at a time) against a plain reference: random
 * digit strings of every length 1..18 in both cases, with a non-digit
 * at each place, and names of every length 0..40 ended by each stop
 * character or the buffer's end. Control: the reference itself is
 * checked on known values (0xffffffff81000000, a 17-digit refusal).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "symbols/kallsyms.h"
#include "unit.h"
#include "util/xalloc.h"

/* Parse exactly the n bytes of text (a heap copy without a NUL). */
struct run {
	char *buf;
	const char *p, *end;
};

static void run_start(struct run *r, const char *text, size_t n)
{
	r->buf = xmalloc(n ? n : 1);
	memcpy(r->buf, text, n);
	r->p = r->buf;
	r->end = r->buf + n;
}

static void test_good(void)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffffc0001000 t mod_fn\t[ext4]\n"
		"  0x10\tW  spaced   \n"
		"ffffffffffffffff D max\r\n"
		"\n   \n\t\n"
		"ffffffff81000010 t last";      /* no newline at the end */
	struct run r;
	struct kallsyms_line l;
	run_start(&r, text, sizeof(text) - 1);
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_LINE);
	CHECK_EQ_U64(l.addr, 0xffffffff81000000ull);
	CHECK(l.type == 'T' && kallsyms_name_is(&l, "_text") && !l.mod);
	CHECK(!kallsyms_name_is(&l, "_tex") && !kallsyms_name_is(&l, "_text_"));
	CHECK_EQ_U64(l.linelen, 24);
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_LINE);
	CHECK(l.type == 't' && kallsyms_name_is(&l, "mod_fn"));
	CHECK(l.mod && l.modlen == 4 && !memcmp(l.mod, "ext4", 4));
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_LINE);
	CHECK_EQ_U64(l.addr, 0x10);
	CHECK(l.type == 'W' && kallsyms_name_is(&l, "spaced") && !l.mod);
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_LINE);
	CHECK_EQ_U64(l.addr, UINT64_MAX);
	CHECK(kallsyms_name_is(&l, "max"));      /* '\r' ends the name */
	/* the blank lines are skipped */
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_LINE);
	CHECK(kallsyms_name_is(&l, "last"));
	CHECK(r.p == r.end);
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_END);
	CHECK_EQ_U64(kallsyms_next(&r.p, r.end, 0, &l), KALLSYMS_END);
	free(r.buf);
}

/* One line alone (no newline): the result, and *out, whose pointers
 * stay valid until the next call (the copy is freed then). 99 when the
 * call did not consume the whole text. */
static char *one_buf;

static int one(const char *text, size_t n, unsigned flags, struct kallsyms_line *l)
{
	struct run r;
	free(one_buf);
	run_start(&r, text, n);
	one_buf = r.buf;
	int ret = kallsyms_next(&r.p, r.end, flags, l);
	bool consumed = r.p == r.end;
	struct kallsyms_line dummy;
	bool ended = kallsyms_next(&r.p, r.end, flags, &dummy) == KALLSYMS_END;
	return consumed && ended ? ret : 99;
}
#define ONE(s, f, l) one(s, sizeof(s) - 1, f, l)

static void test_hostile(void)
{
	struct kallsyms_line l;
	/* addresses: at most 16 hex digits, followed by a blank */
	CHECK_EQ_U64(ONE("1ffffffff81000000 T x", 0, &l), KALLSYMS_BAD);
	CHECK(!l.addr_end);
	CHECK_EQ_U64(ONE("0000000000000000ffffffff T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("ffffffffffffffffffffffffffffffffffffffff T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("ffffffff81000000T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("0x T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("zz T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("ffffffff81000000 T x", 0, &l), KALLSYMS_LINE);   /* control */
	/* missing fields: the address is still reported (delta texts need it) */
	CHECK_EQ_U64(ONE("ffffffff81000000", 0, &l), KALLSYMS_BAD);
	CHECK(!l.addr_end);
	CHECK_EQ_U64(ONE("ffffffff81000000 ", 0, &l), KALLSYMS_BAD);
	CHECK(l.addr_end && l.addr == 0xffffffff81000000ull);
	CHECK_EQ_U64(ONE("ffffffff81000000 T", 0, &l), KALLSYMS_BAD);
	CHECK(l.addr_end != NULL);
	CHECK_EQ_U64(ONE("ffffffff81000000 T  \t ", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("ffffffff81000000 TT name", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("ffffffff81000000 T \r", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("a name", 0, &l), KALLSYMS_BAD);
	/* a delta sign only with the flag */
	CHECK_EQ_U64(ONE("-10 T back", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("-10 T back", KALLSYMS_DELTA, &l), KALLSYMS_LINE);
	CHECK(l.neg && l.addr == 0x10 && kallsyms_name_is(&l, "back"));
	CHECK_EQ_U64(ONE("10 T fwd", KALLSYMS_DELTA, &l), KALLSYMS_LINE);
	CHECK(!l.neg && l.addr == 0x10);
	CHECK_EQ_U64(ONE("-- T x", KALLSYMS_DELTA, &l), KALLSYMS_BAD);
	/* modules: "[...]" non-empty and closed, else none */
	CHECK_EQ_U64(ONE("1 t f []", 0, &l), KALLSYMS_LINE);
	CHECK(!l.mod);
	CHECK_EQ_U64(ONE("1 t f [ext4", 0, &l), KALLSYMS_LINE);
	CHECK(!l.mod);
	CHECK_EQ_U64(ONE("1 t f junk [ext4]", 0, &l), KALLSYMS_LINE);
	CHECK(!l.mod && kallsyms_name_is(&l, "f"));
	/* NUL bytes are characters: inside a name and a module they stay,
	 * in an address they make the line malformed */
	CHECK_EQ_U64(ONE("ffffffff81000000 T na\0me\t[mo\0d]", 0, &l), KALLSYMS_LINE);
	CHECK(l.namelen == 5 && !memcmp(l.name, "na\0me", 5) && !kallsyms_name_is(&l, "na"));
	CHECK(l.mod && l.modlen == 4 && !memcmp(l.mod, "mo\0d", 4));
	CHECK_EQ_U64(ONE("ffff\0fff T x", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("\0\0\0\0", 0, &l), KALLSYMS_BAD);
	CHECK_EQ_U64(ONE("1 \0 x", 0, &l), KALLSYMS_LINE);
	CHECK(l.type == '\0' && kallsyms_name_is(&l, "x"));
	/* a 10 kB name is one name */
	size_t big = 10240;
	char *t = xmalloc(big + 32);
	int o = snprintf(t, 32, "ffffffff81000000 T ");
	memset(t + o, 'n', big);
	int r = one(t, o + big, 0, &l);
	CHECK_EQ_U64(r, KALLSYMS_LINE);
	CHECK_EQ_U64(l.namelen, big);
	CHECK(l.name && l.name[0] == 'n' && l.name[big - 1] == 'n');
	free(t);
	/* nothing, or blanks only: the end */
	CHECK_EQ_U64(one("", 0, 0, &l), KALLSYMS_END);
	CHECK_EQ_U64(ONE(" \t\n\n \n", 0, &l), KALLSYMS_END);
}

/* Many malformed lines: one result per line, and the loop ends. */
static void test_bounded(void)
{
	size_t n = 100000;
	char *t = xmalloc(2 * n);
	for (size_t i = 0; i < n; i++) {
		t[2 * i] = i % 3 ? 'x' : '\0';
		t[2 * i + 1] = '\n';
	}
	const char *p = t, *end = t + 2 * n;
	struct kallsyms_line l;
	size_t bad = 0, calls = 0;
	int r;
	while ((r = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END && calls++ <= n)
		bad += r == KALLSYMS_BAD;
	CHECK_EQ_U64(bad, n);
	CHECK_EQ_U64(calls, n);
	free(t);
}

/* The reference: text_parse_hex's grammar spelled out slowly. */
static bool ref_hex(const char *p, const char *end, uint64_t *v, size_t *used)
{
	const char *s = p;
	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	const char *d = p;
	uint64_t x = 0;
	while (p < end && strchr("0123456789abcdefABCDEF", *p) && *p) {
		if (p - d >= 16)
			return false;
		x = x * 16 + (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
		p++;
	}
	if (p == d)
		return false;
	*v = x;
	*used = (size_t)(p - s);
	return true;
}

static void test_fast_paths(void)
{
	uint64_t v;
	size_t used;
	CHECK(ref_hex("ffffffff81000000 T", "ffffffff81000000 T" + 18, &v, &used));
	CHECK_EQ_U64(v, 0xffffffff81000000ull);
	CHECK(!ref_hex("11111111111111111 ", "11111111111111111 " + 18, &v, &used));
	static const char dig[] = "0123456789abcdefABCDEF", other[] = " \tgx\n[G";
	unsigned seed = 12345, bad = 0;
	for (int round = 0; round < 4000; round++) {
		char buf[24];
		size_t n = 1 + (size_t)(round % 18), len = n + (size_t)(round / 18 % 3);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = dig[(seed >> 16) % 22];
		}
		if (len > n)
			buf[n] = other[(seed >> 8) % 8];
		if (round % 7 == 0 && n > 2) {
			buf[0] = '0';
			buf[1] = 'x';
		}
		char *t = xmalloc(len);
		memcpy(t, buf, len);
		const char *q = t;
		uint64_t a = 0, b = 0;
		bool ok = text_parse_hex(&q, t + len, &a), rok = ref_hex(t, t + len, &b, &used);
		if (ok != rok || (ok && (a != b || (size_t)(q - t) != used)))
			bad++;
		free(t);
	}
	CHECK_EQ_U64(bad, 0);
	static const char stops[] = " \t\r\n";
	for (size_t n = 0; n <= 40; n++)
		for (int k = 0; k <= 4; k++) {
			size_t len = n + (k < 4 ? 1 + n % 5 : 0);
			char *t = xmalloc(len ? len : 1);
			for (size_t i = 0; i < len; i++)
				t[i] = (char)('A' + (i * 7 + n) % 50);    /* no stop characters */
			if (k < 4)
				t[n] = stops[k];
			if (kallsyms_name_len(t, t + len) != n)
				bad++;
			free(t);
		}
	CHECK_EQ_U64(bad, 0);
}

int main(void)
{
	test_fast_paths();
	test_good();
	test_hostile();
	test_bounded();
	free(one_buf);
	return unit_done();
}
