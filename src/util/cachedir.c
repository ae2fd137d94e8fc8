// SPDX-License-Identifier: MIT
/*
 * domprof's cache directory (cachedir.h).
 */
#include "util/cachedir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cache_dir(const char *sub, char *buf, size_t len)
{
	const char *d = getenv("DOMPROF_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;
	if (d && *d)
		n = snprintf(buf, len, "%s/%s", d, sub);
	else if (x && *x == '/')
		n = snprintf(buf, len, "%s/domprof/%s", x, sub);
	else if (h && *h == '/')
		n = snprintf(buf, len, "%s/.cache/domprof/%s", h, sub);
	else
		return false;    /* never a shared place such as /tmp */
	return n > 0 && (size_t)n < len;
}

int cache_mode(const char *var)
{
	const char *e = getenv(var);
	if (!e || !*e)
		return 1;
	if (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no"))
		return 0;
	if (!strcmp(e, "verbose") || !strcmp(e, "v"))
		return 2;
	return 1;
}
