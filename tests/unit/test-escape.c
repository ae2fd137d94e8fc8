// SPDX-License-Identifier: MIT
/*
 * Unit tests for the shared helpers that replaced per-file copies:
 * output/escape.c (JSON strings, CSV fields, UTF-8 checks) and
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
	test_filter_args();
	test_percent();
	test_load_reason();
	free(mem);
	return unit_done();
}
