/* SPDX-License-Identifier: MIT */
/*
 * domprof's cache directory for this user, the one rule every cache kept
 * between runs follows (the kernel symbol cache, symbols/kcache.h; the
 * source line cache, symbols/lcache.h): $DOMPROF_CACHE, else
 * $XDG_CACHE_HOME/domprof (an absolute one), else $HOME/.cache/domprof
 * (an absolute HOME); never a shared place such as /tmp, so without
 * any of them there is no cache. Reads the environment: not
 * thread-safe against setenv.
 */
#ifndef DOMPROF_UTIL_CACHEDIR_H
#define DOMPROF_UTIL_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>

/* The directory of the cache named sub ("host-kernel", "lines") into
 * buf; false when there is none or the name does not fit in len. */
bool cache_dir(const char *sub, char *buf, size_t len);

/* A cache's mode from the environment variable var: 0 off ("0", "off",
 * "no"), 1 on (unset, empty, anything else), 2 on and say in one line
 * what it did ("verbose", "v"). */
int cache_mode(const char *var);

#endif
