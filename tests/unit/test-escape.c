// SPDX-License-Identifier: MIT
/*
 * Unit tests for the shared helpers that replaced per-file copies:
 * output/escape.c (JSON strings, CSV fields, UTF-8 checks, the
 * terminal-safe form of names in text) and
 * analysis/options.c (filter options and their description, percentages,
 * the wording of a failed profile_load). Known answers, byte for byte,
 * because every JSON/CSV/HTML output of domprof goes through them.
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/options.h"
#include "output/escape.h"
#include "output/flamegraph.h"
#include "unit.h"

static char *mem;
static size_t memlen;

static FILE *open_mem(void)
{
	free(mem);
	mem = NULL;
	return open_memstream(&mem, &memlen);
}

static const char *json(const char *s, unsigned flags)
{
	FILE *f = open_mem();
	json_write_str(f, s, flags);
	fclose(f);
	return mem;
}

static const char *csv(const char *s)
{
	FILE *f = open_mem();
	csv_write_field(f, s);
	fclose(f);
	return mem;
}

static void test_json(void)
{
	CHECK_STR(json("main", 0), "\"main\"");
	CHECK_STR(json(NULL, 0), "\"\"");
	CHECK_STR(json("a\"b\\c", 0), "\"a\\\"b\\\\c\"");
	CHECK_STR(json("t\tn\n\x01", 0), "\"t\\u0009n\\u000a\\u0001\"");
	/* <, >, & pass through plain JSON, are escaped for HTML pages */
	CHECK_STR(json("operator<<&>", 0), "\"operator<<&>\"");
	CHECK_STR(json("operator<<&>", JSON_ESC_HTML), "\"operator\\u003c\\u003c\\u0026\\u003e\"");
	/* valid UTF-8 kept (2, 3, 4 bytes), bad bytes become U+FFFD one by one */
	CHECK_STR(json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5", 0), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\"");
	CHECK_STR(json("a\xff" "b", 0), "\"a\\ufffdb\"");
	CHECK_STR(json("\xc3", 0), "\"\\ufffd\"");            /* truncated */
	CHECK_STR(json("\xc0\xaf", 0), "\"\\ufffd\\ufffd\"");  /* overlong lead */
	CHECK_STR(json("\x80x", 0), "\"\\ufffdx\"");           /* lone continuation */
	/* the flame graph's public wrapper is the HTML-safe flavour */
	FILE *f = open_mem();
	fg_json_str(f, "<a>");
	fclose(f);
	CHECK_STR(mem, "\"\\u003ca\\u003e\"");
}

static void test_utf8_put(void)
{
	FILE *f = open_mem();
	size_t a = utf8_put(f, (const unsigned char *)"\xe2\x82\xac!", "?");
	size_t b = utf8_put(f, (const unsigned char *)"\xe2\x82", "?");
	fclose(f);
	CHECK_EQ_U64(a, 3);
	CHECK_EQ_U64(b, 1);
	CHECK_STR(mem, "\xe2\x82\xac?");
}

static void test_csv(void)
{
	CHECK_STR(csv("main"), "main");
	CHECK_STR(csv(NULL), "");
	CHECK_STR(csv("std::map<int, int>::find"), "\"std::map<int, int>::find\"");
	CHECK_STR(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
	CHECK_STR(csv("a\nb"), "\"a\nb\"");
	CHECK_STR(csv("a\rb"), "\"a\rb\"");
}

/* text_escape and its relatives: what a terminal would obey is shown as
 * \xHH, everything else (valid UTF-8 included) is kept byte for byte. */
static void test_text(void)
{
	char *e;
	CHECK(text_is_safe("main") && text_is_safe(NULL) && text_is_safe(""));
	CHECK_EQ_U64(text_safe_len("main"), 4);
	/* the OSC of issue 34: window title, BEL */
	e = text_escape("\x1b]0;PWNED-TITLE");
	CHECK_STR(e, "\\x1b]0;PWNED-TITLE");
	free(e);
	e = text_escape("jit\x1b]0;TERMTITLE\x07");
	CHECK_STR(e, "jit\\x1b]0;TERMTITLE\\x07");
	CHECK_EQ_U64(text_safe_len("jit\x1b]0;TERMTITLE\x07"), strlen(e));
	free(e);
	/* every C0 control and DEL; tab and newline too (a name has none) */
	e = text_escape("\x01\t\n\r\x1f\x7f~");
	CHECK_STR(e, "\\x01\\x09\\x0a\\x0d\\x1f\\x7f~");
	free(e);
	/* valid UTF-8 of 2, 3 and 4 bytes stays; U+00A0 stays */
	const char *u = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 \xc2\xa0";
	CHECK(text_is_safe(u));
	e = text_escape(u);
	CHECK_STR(e, u);
	free(e);
	/* C1 controls: a lone byte 0x80..0x9f (an 8-bit CSI is 0x9b) and the
	 * UTF-8 of U+0080..U+009F are escaped; an invalid Latin-1 letter stays */
	e = text_escape("a\x9b" "2Jb\xc2\x9b" "c\xe9!");
	CHECK_STR(e, "a\\x9b2Jb\\xc2\\x9bc\xe9!");
	free(e);
	e = text_escape("\xc3");             /* truncated sequence: a lone lead byte */
	CHECK_STR(e, "\xc3");
	free(e);
	e = text_escape(NULL);
	CHECK_STR(e, "");
	free(e);
	/* text_safe: the string itself when safe, else an owned copy */
	char *own = (char *)1;
	CHECK(text_safe("plain", &own) != NULL && own == NULL);
	const char *r = text_safe("x\x1b", &own);
	CHECK(own != NULL && r == own);
	CHECK_STR(r, "x\\x1b");
	free(own);
	/* text_put, text_line and text_tmp: the same form, through a FILE */
	FILE *f = open_mem();
	text_put(f, "a\x1b[2Jb");
	text_line(f, "w: ", "p\x07");
	struct text_tmp t = { 0 };
	fprintf(f, "%s|%s|%s", text_tmp_safe(&t, "ok"), text_tmp_safe(&t, "\x1b"), text_tmp_safe(&t, "\x9b"));
	text_tmp_free(&t);
	fclose(f);
	CHECK_STR(mem, "a\\x1b[2Jbw: p\\x07\nok|\\x1b|\\x9b");
}

static void test_filter_args(void)
{
	struct filter_args fa = { 0 };
	char err[128] = "";
	CHECK(filter_args_desc(&fa) == NULL);
	CHECK(filter_args_set(&fa, "comm", "foo", err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fa, "pid", "007", err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fa, "mode", "kernel", err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fa, "domain", "vm1", err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fa, "image", "libc.so.6", err, sizeof(err)) == 0);
	CHECK_STR(filter_args_desc(&fa), "comm=foo pid=7 mode=kernel domain=vm1 image=libc.so.6");
	CHECK_STR(fa.flt.comm, "foo");
	CHECK_STR(fa.flt.domain, "vm1");
	CHECK_STR(fa.flt.image, "libc.so.6");
	CHECK(fa.flt.has_pid && fa.flt.pid == 7);
	CHECK(fa.flt.mode == PROFILE_MODE_KERNEL);
	CHECK(fa.len == strlen(fa.desc));

	/* bad values: -EINVAL, the message the commands print, nothing applied */
	struct filter_args fb = { 0 };
	CHECK(filter_args_set(&fb, "pid", "12x", err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "pid '12x' is not a number");
	CHECK(filter_args_set(&fb, "pid", "4294967296", err, sizeof(err)) == -EINVAL);
	CHECK(filter_args_set(&fb, "pid", "", err, sizeof(err)) == -EINVAL);
	CHECK(filter_args_set(&fb, "mode", "guest", err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "--mode takes user, kernel or all, not 'guest'");
	CHECK(filter_args_set(&fb, "mode", "all", err, sizeof(err)) == 0);  /* all = no filter */
	CHECK(filter_args_set(&fb, "colour", "red", err, sizeof(err)) == -EINVAL);
	CHECK(!fb.flt.has_pid && !fb.flt.mode && filter_args_desc(&fb) == NULL);

	/* a description longer than its buffer is cut, never overflowed */
	struct filter_args fc = { 0 };
	char longname[400];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	CHECK(filter_args_set(&fc, "comm", longname, err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fc, "image", longname, err, sizeof(err)) == 0);
	CHECK(filter_args_set(&fc, "mode", "user", err, sizeof(err)) == 0);
	CHECK(fc.len == sizeof(fc.desc) - 1 && strlen(fc.desc) == fc.len);
	CHECK(fc.flt.mode == PROFILE_MODE_USER);
}

static void test_percent(void)
{
	double v = -1;
	CHECK(parse_percent("0", &v) == 0 && v == 0);
	CHECK(parse_percent("12.5", &v) == 0 && v == 12.5);
	CHECK(parse_percent("100", &v) == 0 && v == 100);
	CHECK(parse_percent("100.5", &v) == -EINVAL && v == 100);
	CHECK(parse_percent("-1", &v) == -EINVAL);
	CHECK(parse_percent("5%", &v) == -EINVAL);
	CHECK(parse_percent("", &v) == -EINVAL);
}

static void test_load_reason(void)
{
	char buf[256];
	CHECK_STR(profile_load_reason(buf, sizeof(buf), "x.data", -ENOENT, ""),
		  "cannot read 'x.data': No such file or directory");
	CHECK_STR(profile_load_reason(buf, sizeof(buf), "x.data", -5000, NULL),
		  "cannot read 'x.data': not a domprof file");
	CHECK_STR(profile_load_reason(buf, sizeof(buf), "x.data", -EIO, "no domain named 'vm9'"),
		  "no domain named 'vm9'");
}

int main(void)
{
	test_json();
	test_utf8_put();
	test_csv();
	test_text();
	test_filter_args();
	test_percent();
	test_load_reason();
	free(mem);
	return unit_done();
}
