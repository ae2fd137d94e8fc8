/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli), the checksum of every chunk payload in a domprof
 * file. Uses the SSE4.2 crc32 instruction when the CPU has it (several
 * times the table version's speed), else a slice-by-8 table. Both give identical
 * results; tests/unit/test-crc32c.c checks the standard test vector.
 */
#ifndef DOMPROF_UTIL_CRC32C_H
#define DOMPROF_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of buf[0..len), continuing from crc (pass 0 to start). */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
/* The portable implementation, exposed for tests. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
