/* SPDX-License-Identifier: MIT */
/*
 * Opening and reading files whose names come from outside: a recording,
 * a path inside one (an MMAP record's binary, a debug file it leads to),
 * or a symbol file the user names. Such a name can be a FIFO, a terminal
 * or a device: open(2) on a FIFO blocks until a writer appears, read(2)
 * of /dev/zero never ends. Every such open goes through here: the name is
 * stat'ed first (a device is never opened at all), opened with
 * O_RDONLY|O_NONBLOCK|O_CLOEXEC (a FIFO swapped in meanwhile cannot block
 * the open), fstat'ed again and refused unless it is a regular file; then
 * O_NONBLOCK is cleared, so reads behave as usual. Whole-file reads are
 * bounded by the caller's maximum and read to EOF rather than trusting
 * st_size, because /proc files are regular but report size 0.
 *
 * Also the two small writes the format writer and the caches share
 * (whole writes, mkdir -p).
 *
 * Errors are negative errno values, plus FILE_ERR_NOT_REGULAR; describe
 * them with file_strerror(). Nothing here prints.
 */
#ifndef DOMPROF_UTIL_FILE_H
#define DOMPROF_UTIL_FILE_H

#include <stddef.h>
#include <stdint.h>

#define FILE_ERR_NOT_REGULAR (-4001)   /* a FIFO, device, socket or directory */

/* Open a regular file for reading (see above). Returns the fd (the
 * caller closes it) and *size its st_size (NULL: not wanted), or a
 * negative error. */
int file_open_regular(const char *path, uint64_t *size);

/* Read all of a regular file, at most max bytes. On success *data is a
 * malloc'd buffer of *len bytes plus a NUL (the caller frees it). Returns
 * 0, -EFBIG when the file holds more than max bytes, or another negative
 * error. */
int file_read_all(const char *path, size_t max, char **data, size_t *len);

/* file_read_all's read, of an fd the caller opened (and closes): size
 * is its st_size (a hint, 0 when unknown), max the bound. */
int file_read_fd(int fd, uint64_t size, size_t max, char **data, size_t *len);

/* Write all len bytes (retrying short writes and EINTR). 0, or a
 * negative errno (-EIO for a write that wrote nothing). */
int file_write_all(int fd, const void *data, size_t len);

/* mkdir -p of dir, mode 0700 for the parts it creates (caches hold a
 * user's data). 0 or a negative errno (-ENAMETOOLONG past 4095 bytes). */
int file_make_dirs(const char *dir);

/* One-line text for an error of this module ("not a regular file", or
 * strerror of the errno). */
const char *file_strerror(int err);

#endif
