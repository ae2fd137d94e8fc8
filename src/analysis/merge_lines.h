/* SPDX-License-Identifier: MIT */
/*
 * The source line tables of a merge (SYMTAB kind 10, one per image and
 * recording: docs/file-format.md). Two recordings of the same program
 * each carry a table of that program's lines, of the addresses each one
 * sampled; a merged file with both would answer from the first only (a
 * report looks up one table per image) and hold the shared entries
 * twice. merge_write holds every line table back instead and writes, at
 * the end, one table per (new domain id, build-id): the union of the
 * inputs' entries (an address in both keeps the first input's answer).
 * A table alone is written as it came (its bytes copied).
 *
 * The tables are the inputs' (hostile): one that does not decompress or
 * parse (symbols/lcache.h: lcache_parse) is not held but copied as it
 * is, so a report says what is wrong with it as it would of the input.
 * Memory: every table held, each under LCACHE_MAX bytes.
 */
#ifndef DOMPROF_ANALYSIS_MERGE_LINES_H
#define DOMPROF_ANALYSIS_MERGE_LINES_H

#include <stdbool.h>
#include <stdint.h>

#include "format/format.h"

struct merge_lines;

struct merge_lines *merge_lines_new(void);

/* rec (a SYMTAB record, its blob decompressed or stored) under the new
 * domain id dom: true when it is a line table now held (the caller
 * copies nothing), false when the caller copies it. */
bool merge_lines_hold(struct merge_lines *ml, uint32_t dom, const struct dp_record *rec);

/* One table per (domain, build-id) held, in the order first seen.
 * Returns 0 or the writer's negative errno. */
int merge_lines_write(struct merge_lines *ml, struct dp_writer *w);

/* NULL is accepted. */
void merge_lines_free(struct merge_lines *ml);

#endif
