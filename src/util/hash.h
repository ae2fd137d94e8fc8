/* SPDX-License-Identifier: MIT */
/*
 * Small hash functions shared by the open-addressing tables: the general
 * map (util/hmap.c), the flame-graph builder (output/flamegraph.c), the
 * pprof string table (output/pprof.c) and the profile's composite keys
 * (analysis/profile*.c, through hidx in util/hmap.h). Not for anything stored in
 * a file: they are fast, not stable across versions.
 */
#ifndef DOMPROF_UTIL_HASH_H
#define DOMPROF_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* MurmurHash3's 64-bit finaliser: every input bit moves every output bit,
 * so keys that differ only in high bits (pid<<32 | ...) still spread. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Folds x into the running hash h (one multiply, one xor-shift): cheap
 * enough for the profile's per-sample keys, which fold several fields and
 * a whole call chain; the table's index bits come from the low bits, which
 * the multiply fills from every bit of x. */
static inline uint64_t hash_fold64(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0x9E3779B97F4A7C15ull;
	h ^= h >> 29;
	return h;
}

/* FNV-1a over a NUL-terminated string (with a shortened offset basis,
 * kept as it was: any odd start value spreads as well). */
static inline uint64_t hash_str64(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* n bytes at p, eight at a time (a string's name hashed byte by byte was
 * a tenth of interning a large profile's symbols): the words and then the
 * length folded with hash_fold64. */
static inline uint64_t hash_bytes64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x51afd7ed558ccd1bull, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = hash_fold64(h, w);
	}
	if (i < n) {
		w = 0;
		memcpy(&w, b + i, n - i);
		h = hash_fold64(h, w);
	}
	return hash_fold64(h, n);
}

#endif
