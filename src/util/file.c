// SPDX-License-Identifier: MIT
/*
 * Safe opening and bounded reading of files named by crafted input or by
 * the user (see file.h for why each step is there).
 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

int file_open_regular(const char *path, uint64_t *size)
{
	struct stat st;
	/* Refuse a device or FIFO before opening it: opening some devices
	 * has effects of its own (a tape rewinds, a watchdog arms). */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return FILE_ERR_NOT_REGULAR;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* the name may have been replaced between stat and open */
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return FILE_ERR_NOT_REGULAR;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (size)
		*size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return fd;
}

int file_read_all(const char *path, size_t max, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	uint64_t size;
	int fd = file_open_regular(path, &size);
	if (fd < 0)
		return fd;
	int ret = file_read_fd(fd, size, max, data, len);
	close(fd);
	return ret;
}

int file_read_fd(int fd, uint64_t size, size_t max, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	if (size > max)
		return -EFBIG;
	/* st_size is a hint only (0 for /proc files, or the file grows):
	 * read to EOF, and one byte past max at most, to tell "exactly max"
	 * from "more" */
	size_t lim = max < SIZE_MAX - 2 ? max + 2 : max;
	size_t cap = size ? (size_t)size + 2 : 65536, n = 0;
	if (cap > lim)
		cap = lim;
	char *buf = xmalloc(cap);
	int ret = 0;
	for (;;) {
		if (n + 1 >= cap) {
			cap = cap > lim / 2 ? lim : cap * 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			ret = -EFBIG;
			break;
		}
	}
	if (ret < 0) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

const char *file_strerror(int err)
{
	if (err == FILE_ERR_NOT_REGULAR)
		return "not a regular file";
	if (err == -EFBIG)
		return "file too large";
	return strerror(err < 0 ? -err : err);
}

int file_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file_make_dirs(const char *dir)
{
	char p[4096];
	if (strlen(dir) >= sizeof(p))
		return -ENAMETOOLONG;
	strcpy(p, dir);
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return -errno;
			*s = c;
			if (!c)
				break;
		}
	}
	return 0;
}
