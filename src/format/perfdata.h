/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: the perf.data reader behind dp_reader. A file
 * that starts with perf's magic "PERFILE2" (written by `perf record`, to
 * a file or to a pipe) is read through these functions, and dp_reader
 * hands out what they translate: perf's records become domprof records
 * (EVENT, DOMAIN, TASK, MMAP, SAMPLE, LOST, SYMTAB, STATS) in perf's
 * time order, so every command that reads a recording reads perf.data
 * unchanged. The format as perf 6.1 writes it is described, with what is
 * translated to what and what is skipped, in docs/perfdata.md.
 *
 * The file is crafted input: every size, offset and count is checked
 * against the bytes that hold it before use; every loop is bounded by
 * the bytes it walks; the time-order queue and the decompression buffer
 * have fixed ceilings (docs/perfdata.md). Damage is recorded (pd_damage)
 * and reading goes on where it can.
 *
 * Ownership: the reader borrows map (it must outlive the reader); strings
 * it puts in dp_header and dp_record are its own, valid until pd_free
 * (header) or the next pd_next (records). Translated records have no raw
 * bytes (raw NULL, raw_len 0): to copy them, write them through the
 * writer (what `domprof import` does).
 */
#ifndef DOMPROF_FORMAT_PERFDATA_H
#define DOMPROF_FORMAT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct pd_reader;

/* n >= 8 bytes at p start with perf.data's magic (either byte order). */
bool pd_is_perf(const uint8_t *p, size_t n);

/* Parse the header (file or pipe form), its attributes and features. On
 * failure NULL, *err (DP_ERR_*) and a one-line msg. mtime_ns: the file's
 * modification time (perf writes no creation time), 0 when unknown. */
struct pd_reader *pd_open(const uint8_t *map, size_t size, uint64_t mtime_ns, int *err,
			  char *msg, size_t msglen);
void pd_free(struct pd_reader *p);
/* map is a read-only mapping of the file (not memory of the caller's):
 * the reader may drop its pages once read (madvise MADV_DONTNEED; they
 * fault back in from the file if read again), so the resident memory of
 * a pass does not grow with the file. Never for a buffer in memory,
 * whose bytes MADV_DONTNEED would zero. */
void pd_set_mapped(struct pd_reader *p);
const struct dp_header *pd_header(const struct pd_reader *p);

/* As dp_reader_next / dp_reader_rewind. */
int pd_next(struct pd_reader *p, struct dp_record *rec);
void pd_rewind(struct pd_reader *p);

size_t pd_damage(const struct pd_reader *p, const struct dp_damage **out);
uint64_t pd_pos(const struct pd_reader *p);
const char *pd_incomplete(const struct pd_reader *p);
const char *pd_note(const struct pd_reader *p);
int pd_set_guest(struct pd_reader *p, const struct dp_perf_guest *g);

#endif
