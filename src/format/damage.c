// SPDX-License-Identifier: MIT
/*
 * Private to src/format/: the damage list both readers keep (reader.c
 * for domprof files, perfdata.c for perf.data) and the one-line reason
 * of a refused open, so the two report damage the same way and with the
 * same bound (wire.h).
 */
#include "format/wire.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>

void dp_damage_vadd(struct dp_damage **v, size_t *n, size_t *cap, uint64_t until, uint64_t off,
		    uint64_t lost, const char *fmt, va_list ap)
{
	/* On a second pass (rewind) the same damage is found again: keep one. */
	if (off < until || *n >= DP_MAX_DAMAGE)
		return;
	xgrow((void **)v, cap, *n + 1, sizeof(**v));
	struct dp_damage *d = &(*v)[(*n)++];
	d->offset = off;
	d->bytes_lost = lost;
	vsnprintf(d->what, sizeof(d->what), fmt, ap);
}

int dp_open_fail(int *err, char *msg, size_t msglen, int code, const char *fmt, ...)
{
	if (err)
		*err = code;
	if (msg && msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}
