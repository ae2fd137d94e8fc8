/* SPDX-License-Identifier: MIT */
/*
 * Little-endian field access for the byte layouts domprof writes (the
 * file format, the agent protocol). The hosts we run on are
 * little-endian (x86_64, arm64), so fields are copied as they are; memcpy
 * keeps unaligned access defined.
 */
#ifndef DOMPROF_UTIL_LE_H
#define DOMPROF_UTIL_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t get16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t get32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void put16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(void *p, uint64_t v) { memcpy(p, &v, 8); }

#endif
