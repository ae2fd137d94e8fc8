/* SPDX-License-Identifier: MIT */
/*
 * Allocation that never returns NULL: on out-of-memory the process prints
 * one line and exits 1 (as Redis' zmalloc does), so callers carry no OOM
 * branches. Use these for in-process data; never for sizes read from a
 * file without checking them first (see format/reader.c).
 */
#ifndef DOMPROF_UTIL_XALLOC_H
#define DOMPROF_UTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow *p (holding *cap elements of elsize) to hold at least need. */
void xgrow(void **p, size_t *cap, size_t need, size_t elsize);

#endif
