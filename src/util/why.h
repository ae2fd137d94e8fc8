/* SPDX-License-Identifier: MIT */
/*
 * The one-line cause a module returns beside an error code: written into
 * the caller's buffer why[len] (printf format), nothing when why is NULL
 * or len 0. Modules never print; commands print what they get.
 */
#ifndef DOMPROF_UTIL_WHY_H
#define DOMPROF_UTIL_WHY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void whyf(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void whyf(char *why, size_t len, const char *fmt, ...)
{
	if (!why || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

#endif
