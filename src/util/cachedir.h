/* SPDX-License-Identifier: MIT */
/*
 * domprof's cache directory for this user, the one rule every cache kept
 * between runs follows (the kernel symbol cache, symbols/kcache.h; the
 * source line cache, symbols/lcache.h; the guest kernel cache,
 * guest/cache.h).
 *
 * Where: $DOMPROF_CACHE (an absolute path), else $XDG_CACHE_HOME/domprof
 * (an absolute one), else $HOME/.cache/domprof (an absolute HOME); never
 * a shared place such as /tmp, so without any of them there is no cache.
 *
 * Whom it trusts: only this user (the effective uid). A cache file is
 * read or written only through a directory chain opened component by
 * component from "/" with O_DIRECTORY|O_NOFOLLOW and openat, each
 * component fstat'ed on the descriptor that was opened (no window for a
 * swap between check and use):
 *   - every directory on the way is owned by this user or root and not
 *     writable by group or others, except a sticky one (/tmp: others
 *     cannot rename or delete what is ours in it);
 *   - the directory holding the files is owned by this user and not
 *     writable by group or others (created 0700 when missing);
 *   - a symbolic link on the way is followed only when the directory
 *     holding it is not writable by others at all (sticky or not) and
 *     the link is this user's or root's (a symlinked /home); its target
 *     is walked by the same rules (at most 8 links);
 *   - a file is opened with openat(O_NOFOLLOW) from the checked
 *     directory and taken only when it is a regular file owned by this
 *     user and not writable by group or others;
 *   - writes go to a temporary file made with O_EXCL|O_NOFOLLOW (0600)
 *     in that directory, renamed over the entry with renameat, so a
 *     reader never sees half an entry and nothing is written through a
 *     link.
 * A directory that fails a rule turns that cache off (the caller says so
 * in at most one line); it is never repaired or taken over.
 *
 * Reads the environment: not thread-safe against setenv.
 */
#ifndef DOMPROF_UTIL_CACHEDIR_H
#define DOMPROF_UTIL_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* The directory of the cache named sub ("host-kernel", "lines",
 * "guest-kernels") into buf; false when there is none (no absolute
 * DOMPROF_CACHE, XDG_CACHE_HOME or HOME) or the name does not fit. */
bool cache_dir(const char *sub, char *buf, size_t len);

/* A cache's mode from the environment variable var: 0 off ("0", "off",
 * "no"), 1 on (unset, empty, anything else), 2 on and say in one line
 * what it did ("verbose", "v"). */
int cache_mode(const char *var);

/* Opens the directory dir (absolute) by the rules above, making missing
 * components (0700) when create. Returns the descriptor (the caller
 * closes it) or a negative errno with *why a one-line cause naming the
 * component: -ENOENT (missing, create false), -EPERM (owner or mode),
 * -ELOOP (a link not followed, or too many), -EINVAL (not absolute). */
int cache_open_dir(const char *dir, bool create, char *why, size_t whylen);

/* Reads the cache file path (at most max bytes; *data malloc'd with a
 * NUL after *len bytes). Returns 0, -ENOENT (no such file or directory),
 * -EPERM (directory or file refused by the rules), -EFBIG, or another
 * negative errno; *why one line. */
int cache_read(const char *path, size_t max, char **data, size_t *len, char *why, size_t whylen);

/* Writes the cache file path from the niov pieces (temporary file and
 * renameat; directories made as needed). 0 or a negative errno, *why one
 * line. */
int cache_write(const char *path, const struct iovec *iov, int niov, char *why, size_t whylen);

#endif
