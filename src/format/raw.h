/* SPDX-License-Identifier: MIT */
/*
 * What code outside src/format/ may know of the bytes on disk, for code
 * that handles records it did not decode: the agent and the host's agent
 * source relay raw records (docs/file-format.md), and the agent watches
 * the recorder's file grow. Everything else goes through format.h.
 */
#ifndef DOMPROF_FORMAT_RAW_H
#define DOMPROF_FORMAT_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A recording's fixed file header: a file shorter than this has no
 * header yet (the recorder has not written it) and holds no records. */
#define DP_FILE_HEADER_MIN 48u

/*
 * Step through raw records packed in buf[0..len) (each: u16 tag, u16,
 * u32 total length, body). At *off: returns 1 with the record's tag in
 * *type and its total length in *rlen (>= 8, within buf), and advances
 * *off past it; 0 when *off == len; -EPROTO when what remains is shorter
 * than a record header or the length is below 8 or runs past len (*off is
 * then unchanged). Checks only the framing: dp_record_check (format.h)
 * checks a record's body.
 */
int dp_raw_next(const uint8_t *buf, size_t len, size_t *off, uint16_t *type, uint32_t *rlen);

/* The time field of the SAMPLE record at rec[0..len) (header included):
 * true with *time set, false when the record is not a SAMPLE long enough
 * to hold one. */
bool dp_raw_sample_time(const uint8_t *rec, size_t len, uint64_t *time);

#endif
