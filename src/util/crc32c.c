// SPDX-License-Identifier: MIT
/* CRC32C: hardware instruction when present (three interleaved streams
 * on long buffers), slice-by-8 table otherwise. */
#include "util/crc32c.h"

#include <pthread.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <string.h>

#define POLY 0x82f63b78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		v ^= crc;
		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^
		      table[5][(v >> 16) & 0xff] ^ table[4][(v >> 24) & 0xff] ^
		      table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
		      table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
/*
 * The crc32 instruction has a latency of 3 cycles and a throughput of 1
 * a cycle: one dependent stream runs at a third of what the unit can do.
 * Long buffers (a chunk payload is ~1 MiB) are therefore cut into three
 * blocks whose CRCs run interleaved, then joined: a raw CRC (no
 * pre/post inversion) is linear, so crc(A||B) = shift_|B|(crc(A)) ^
 * crc(0, B), where shift_n appends n zero bytes. shift_n is a 32x32
 * GF(2) matrix, kept as four 256-entry tables per block size (the
 * method of Mark Adler's crc32c.c): the three streams keep the crc32
 * unit busy where one waits on each instruction's latency.
 */
#define CRC_LONG 8192u
#define CRC_SHORT 256u

static uint32_t shift_long[4][256], shift_short[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;
	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		sq[n] = gf2_times(mat, mat[n]);
}

/* The tables of shift_len, len a power of two >= 1 byte. */
static void shift_tables(uint32_t t[4][256], size_t len)
{
	uint32_t odd[32], even[32], *op = even;
	odd[0] = POLY;  /* one zero bit */
	for (int n = 1; n < 32; n++)
		odd[n] = 1u << (n - 1);
	gf2_square(even, odd);  /* two bits */
	gf2_square(odd, even);  /* four bits */
	for (;;) {
		gf2_square(even, odd);  /* 8, 32, ... bits */
		op = even;
		if (!(len >>= 1))
			break;
		gf2_square(odd, even);  /* 16, 64, ... bits */
		op = odd;
		if (!(len >>= 1))
			break;
	}
	/* shift_n is linear: the entry of n is the XOR of the entries of
	 * its bits, so 8 products a table instead of 256 (the tables took
	 * 1.5% of a small report's time, made anew by every process) */
	for (int k = 0; k < 4; k++) {
		t[k][0] = 0;
		for (uint32_t n = 1; n < 256; n++) {
			uint32_t low = n & -n;
			t[k][n] = n == low ? gf2_times(op, n << (8 * k)) : t[k][low] ^ t[k][n ^ low];
		}
	}
}

static void shift_init(void)
{
	shift_tables(shift_long, CRC_LONG);
	shift_tables(shift_short, CRC_SHORT);
}

static inline uint32_t crc_shift(uint32_t t[4][256], uint32_t crc)
{
	return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^
	       t[3][crc >> 24];
}

/* Three interleaved streams over 3 * block bytes at p, joined into c. */
__attribute__((target("sse4.2")))
static inline uint64_t crc_three(uint64_t c, const unsigned char *p, size_t block,
				 uint32_t t[4][256])
{
	uint64_t c1 = 0, c2 = 0;
	for (size_t i = 0; i < block; i += 8) {
		uint64_t a, b, d;
		memcpy(&a, p + i, 8);
		memcpy(&b, p + block + i, 8);
		memcpy(&d, p + 2 * block + i, 8);
		c = __builtin_ia32_crc32di(c, a);
		c1 = __builtin_ia32_crc32di(c1, b);
		c2 = __builtin_ia32_crc32di(c2, d);
	}
	c = crc_shift(t, (uint32_t)c) ^ (uint32_t)c1;
	return crc_shift(t, (uint32_t)c) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;
	if (len >= 3 * CRC_SHORT)
		pthread_once(&shift_once, shift_init);
	while (len >= 3 * CRC_LONG) {
		c = crc_three(c, p, CRC_LONG, shift_long);
		p += 3 * CRC_LONG;
		len -= 3 * CRC_LONG;
	}
	while (len >= 3 * CRC_SHORT) {
		c = crc_three(c, p, CRC_SHORT, shift_short);
		p += 3 * CRC_SHORT;
		len -= 3 * CRC_SHORT;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return ~c32;
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	/* the reader's workers call this too: an atomic, not a plain int */
	static int have_hw = -1;
	int hw = __atomic_load_n(&have_hw, __ATOMIC_RELAXED);
	if (hw < 0) {
		/* one cpuid leaf: __builtin_cpu_supports links libgcc's
		 * __cpu_indicator_init, a constructor asking ~20 leaves at
		 * every start, each a VM exit under a hypervisor (0.6% of a
		 * small report) */
		unsigned a, b, c, d;
		hw = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
		__atomic_store_n(&have_hw, hw, __ATOMIC_RELAXED);
	}
	if (hw)
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_sw(crc, buf, len);
}
