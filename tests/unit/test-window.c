// SPDX-License-Identifier: MIT
/*
 * Unit tests of analysis/window.c: the --time and --cpu syntax (good
 * values, every refusal), the bounds of a window on a span, and the
 * per-domain spans of a recording written in memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/window.h"
#include "format/format.h"
#include "unit.h"

static void time_syntax(void)
{
	double a, b;
	bool pct;
	char err[200];
	CHECK(!window_parse_time("1.5,3", &a, &b, &pct, err, sizeof(err)));
	CHECK(a == 1.5 && b == 3 && !pct);
	CHECK(!window_parse_time(",3", &a, &b, &pct, err, sizeof(err)));
	CHECK(a == 0 && b == 3);
	CHECK(!window_parse_time("2,", &a, &b, &pct, err, sizeof(err)));
	CHECK(a == 2 && b < 0);
	CHECK(!window_parse_time("10%-20%", &a, &b, &pct, err, sizeof(err)));
	CHECK(a == 10 && b == 20 && pct);
	CHECK(!window_parse_time("10%,100%", &a, &b, &pct, err, sizeof(err)));
	CHECK(a == 10 && b < 0 && pct);      /* 100%: to the end, inclusive */
	const char *bad[] = { "", "1", "2,1", "1,1", "x,2", "1,2,3", "-1,2", "1,inf", "nan,2",
			      "10%-200%", "10%", "10%-20", "10-20%", "10%x20%", "%-%", "1e999,2",
			      "10%-20%%", "50%-10%", "0x10,20" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int r = window_parse_time(bad[i], &a, &b, &pct, err, sizeof(err));
		CHECK(r < 0 && strstr(err, "--time"));
		if (r == 0)
			fprintf(stderr, "accepted --time '%s'\n", bad[i]);
	}
}

static void cpu_syntax(void)
{
	uint64_t bits[WINDOW_CPU_WORDS];
	char err[200];
	CHECK(!window_parse_cpus("0,2-3,4095", bits, err, sizeof(err)));
	CHECK(window_cpu_in(bits, 0) && !window_cpu_in(bits, 1) && window_cpu_in(bits, 2) &&
	      window_cpu_in(bits, 3) && !window_cpu_in(bits, 4) && window_cpu_in(bits, 4095));
	CHECK(!window_cpu_in(bits, 4096) && !window_cpu_in(bits, UINT32_MAX));
	CHECK(!window_parse_cpus("0-4095", bits, err, sizeof(err)));
	CHECK(window_cpu_in(bits, 1234));
	const char *bad[] = { "", "x", "1-0", "4096", "0,,1", "-1", "1,", "1-", "+1", "0-+3", "1 2",
			      "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int r = window_parse_cpus(bad[i], bits, err, sizeof(err));
		CHECK(r < 0 && strstr(err, "--cpu"));
		if (r == 0)
			fprintf(stderr, "accepted --cpu '%s'\n", bad[i]);
	}
}

static void bounds(void)
{
	struct window_span sp = { .domain = 0, .first = 1000000000ull, .last = 5000000000ull };
	uint64_t lo, hi;
	CHECK(window_bounds(&sp, 1, 2, false, &lo, &hi));
	CHECK_EQ_U64(lo, 2000000000ull);
	CHECK_EQ_U64(hi, 3000000000ull);
	CHECK(window_bounds(&sp, 25, 50, true, &lo, &hi));
	CHECK_EQ_U64(lo, 2000000000ull);
	CHECK_EQ_U64(hi, 3000000000ull);
	CHECK(window_bounds(&sp, 0, -1, true, &lo, &hi));
	CHECK_EQ_U64(lo, sp.first);
	CHECK_EQ_U64(hi, UINT64_MAX);
	/* saturating: a window far past a span near the clock's end */
	struct window_span end = { .first = UINT64_MAX - 10, .last = UINT64_MAX };
	CHECK(window_bounds(&end, 1e9, 2e9, false, &lo, &hi));
	CHECK_EQ_U64(lo, UINT64_MAX);
	CHECK(!window_bounds(NULL, 0, 1, false, &lo, &hi));
}

/* a recording in a temporary file: samples of two domains at known
 * times, each domain's written latest first */
static void spans(void)
{
	char path[] = "/tmp/test-window.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	struct dp_header h;
	dp_header_fill_local(&h, 0, NULL);
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, NULL, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	const uint64_t t0[2] = { 7000, 90000 };
	for (int i = 0; i < 10; i++)
		for (uint32_t d = 0; d < 2; d++) {
			struct dp_sample s = { .time = t0[d] + (uint64_t)(9 - i) * 100, .ip = 0x1000,
					       .pid = 1, .tid = 1, .mode = DP_MODE_USER };
			CHECK(dp_write_sample(w, d, &s) == 0);
		}
	CHECK(dp_writer_finish(w) == 0);
	char msg[200];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	unlink(path);
	CHECK(r != NULL);
	if (r) {
		struct window_spans ws = { 0 };
		CHECK(window_spans_scan(r, &ws) == 0);
		CHECK_EQ_U64(ws.n, 2);
		const struct window_span *a = window_span_of(&ws, 0), *b = window_span_of(&ws, 1);
		CHECK(a && a->first == 7000 && a->last == 7900);
		CHECK(b && b->first == 90000 && b->last == 90900);
		CHECK(window_span_of(&ws, 2) == NULL);
		CHECK(window_span_of(&ws, 0) == a);   /* the one-entry cache */
		window_spans_release(&ws);
		dp_reader_free(r);
	}
}

int main(void)
{
	time_syntax();
	cpu_syntax();
	bounds();
	spans();
	return unit_done();
}
