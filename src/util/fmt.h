/* SPDX-License-Identifier: MIT */
/*
 * Number formatting for reports with hundreds of thousands of lines,
 * where printf's parsing and its general floating-point conversion were
 * half of a `report -g` (bench/scale). Each function writes the same
 * bytes snprintf does for its format, no NUL, and returns the length;
 * buf must hold FMT_NUM_MAX bytes.
 */
#ifndef DOMPROF_UTIL_FMT_H
#define DOMPROF_UTIL_FMT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FMT_NUM_MAX 64

/* "%" PRIu64 */
static inline size_t fmt_u64(char *buf, uint64_t v)
{
	char t[24];
	size_t n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = t[n - 1 - i];
	return n;
}

/*
 * "%.Nf" for N = decimals (0..9). Exact: d is m * 2^e with m an integer
 * below 2^53 (from its bits), so d * 10^N is m * 10^N (under 2^83) shifted right by -e,
 * and the bits shifted out decide the rounding as glibc's printf does it
 * in the default rounding mode (to nearest, a tie to even). Values
 * outside [0, 2^52) and non-finite ones go to snprintf.
 */
static inline size_t fmt_fixed(char *buf, double d, int decimals)
{
	static const uint32_t p10[10] = { 1, 10, 100, 1000, 10000, 100000, 1000000,
					  10000000, 100000000, 1000000000 };
	if (decimals < 0 || decimals > 9 || !isfinite(d) || signbit(d) || d >= 4503599627370496.0) {
		int n = snprintf(buf, FMT_NUM_MAX, "%.*f", decimals, d);
		return n > 0 ? (size_t)n : 0;
	}
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	unsigned ex = (unsigned)(bits >> 52) & 0x7ff;
	uint64_t m = bits & ((1ull << 52) - 1);
	int sh = 1074;                  /* subnormal: d = m / 2^1074 */
	if (ex) {
		m |= 1ull << 52;
		sh = 1075 - (int)ex;    /* d = m / 2^sh, sh > 0 as d < 2^52 */
	}
	unsigned __int128 q = 0;
	if (sh < 100) {
		unsigned __int128 pm = (unsigned __int128)m * p10[decimals];
		q = pm >> sh;
		unsigned __int128 rem = pm - (q << sh);
		unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
	} /* else m * 10^N / 2^sh < 2^83 / 2^100: rounds to 0 */
	if (q >> 64) {
		int n = snprintf(buf, FMT_NUM_MAX, "%.*f", decimals, d);
		return n > 0 ? (size_t)n : 0;
	}
	uint64_t ip = (uint64_t)q / p10[decimals];
	uint32_t fp = (uint32_t)((uint64_t)q % p10[decimals]);
	size_t n = fmt_u64(buf, ip);
	if (decimals) {
		buf[n++] = '.';
		for (int i = decimals - 1; i >= 0; i--, fp /= 10)
			buf[n + (size_t)i] = (char)('0' + fp % 10);
		n += (size_t)decimals;
	}
	return n;
}

#endif
