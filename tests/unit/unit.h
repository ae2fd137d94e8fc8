/* SPDX-License-Identifier: MIT */
/*
 * A tiny unit-test harness: CHECK(cond) records a failure with file:line
 * and goes on; main() is written by each test file and ends with
 * `return unit_done();`, which prints "name: N checks, M failed" and
 * returns the exit status tests/run.sh reads (0 pass, 1 fail).
 */
#ifndef DOMPROF_UNIT_H
#define DOMPROF_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_checks, unit_failed;

#define CHECK(cond) do { unit_checks++; if (!(cond)) { unit_failed++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ_U64(a, b) do { uint64_t _a = (a), _b = (b); unit_checks++; if (_a != _b) { unit_failed++; \
	fprintf(stderr, "%s:%d: %s == %s failed: 0x%" PRIx64 " != 0x%" PRIx64 "\n", __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); unit_checks++; \
	if (!_a || !_b || strcmp(_a, _b)) { unit_failed++; \
	fprintf(stderr, "%s:%d: %s == %s failed: '%s' != '%s'\n", __FILE__, __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)"); } } while (0)

static inline int unit_done_named(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failed);
	return unit_failed ? 1 : 0;
}
#define unit_done() unit_done_named(__FILE__)

#endif
