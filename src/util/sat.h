/* SPDX-License-Identifier: MIT */
/*
 * Saturating counter arithmetic for counts that come from outside (a
 * file's LOST records, an agent's claims): a sum that would wrap stays at
 * UINT64_MAX instead, so a crafted count can exaggerate a total but never
 * turn it into a small or unrelated number.
 */
#ifndef DOMPROF_UTIL_SAT_H
#define DOMPROF_UTIL_SAT_H

#include <stdint.h>

static inline uint64_t sat_add64(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#endif
