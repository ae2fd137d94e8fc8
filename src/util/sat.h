/* SPDX-License-Identifier: MIT */
/*
 * Saturating arithmetic for counts read from files and peers. Every count
 * from outside is hostile (a LOST record may say 2^63 or ~0): summing
 * them must stop at UINT64_MAX instead of wrapping to a small number that
 * looks plausible. A saturated total means "at least this many"; callers
 * that print one check sat_is_max() to say so.
 */
#ifndef DOMPROF_UTIL_SAT_H
#define DOMPROF_UTIL_SAT_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t sat_add64(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static inline bool sat_is_max(uint64_t a)
{
	return a == UINT64_MAX;
}

#endif
