// SPDX-License-Identifier: MIT
/*
 * domprof's cache directory (cachedir.h).
 */
#include "util/cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

#define MAX_LINKS 8

bool cache_dir(const char *sub, char *buf, size_t len)
{
	const char *d = getenv("DOMPROF_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;
	if (d && *d == '/')
		n = snprintf(buf, len, "%s/%s", d, sub);
	else if (d && *d)
		return false;    /* a relative one: where it points depends on the cwd */
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

static int say(char *why, size_t whylen, int err, const char *what, const char *name)
{
	if (why && whylen)
		snprintf(why, whylen, "%s: %s", name, what);
	return err;
}

/* A directory on the way: this user's or root's, not writable by others
 * unless sticky. */
static const char *bad_way(const struct stat *st)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return "owned by another user";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return "writable by group or others";
	return NULL;
}

/* Walks path's components from the checked directory fd (consumed).
 * Returns the last directory's descriptor or a negative errno. */
static int walk(int fd, const char *path, bool create, int *links, char *why, size_t whylen)
{
	char part[256];
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (!n)
			break;
		if (n >= sizeof(part)) {
			close(fd);
			return say(why, whylen, -ENAMETOOLONG, "a component is too long", path);
		}
		memcpy(part, p, n);
		part[n] = 0;
		p += n;
		if (!strcmp(part, "."))
			continue;
		struct stat st, dst;
		if (fstat(fd, &dst) < 0) {
			int e = -errno;
			close(fd);
			return say(why, whylen, e, strerror(-e), path);
		}
		if (fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = -errno;
			if (e == -ENOENT && create && mkdirat(fd, part, 0700) == 0)
				e = fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
			if (e < 0) {
				close(fd);
				return say(why, whylen, e, strerror(-e), part);
			}
		}
		int nfd;
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t tl;
			if ((dst.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_uid != geteuid() && st.st_uid != 0) ||
			    ++*links > MAX_LINKS) {
				close(fd);
				return say(why, whylen, -ELOOP, *links > MAX_LINKS ? "too many symbolic links" :
					   "a symbolic link others could have made: not followed", part);
			}
			if ((tl = readlinkat(fd, part, target, sizeof(target) - 1)) <= 0) {
				close(fd);
				return say(why, whylen, -ELOOP, "unreadable symbolic link", part);
			}
			target[tl] = 0;
			if (target[0] == '/') {
				close(fd);
				if ((fd = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC)) < 0)
					return say(why, whylen, -errno, strerror(errno), "/");
			}
			/* the target's components by the same rules; fd is
			 * consumed, so walk from a copy */
			int cfd = dup(fd);
			close(fd);
			if (cfd < 0)
				return say(why, whylen, -errno, strerror(errno), part);
			nfd = walk(cfd, target, create, links, why, whylen);
			if (nfd < 0)
				return nfd;
		} else {
			nfd = openat(fd, part, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
			int e = nfd < 0 ? -errno : 0;
			close(fd);
			if (nfd < 0)
				return say(why, whylen, e, e == -ELOOP ? "a symbolic link appeared" : strerror(-e), part);
		}
		if (fstat(nfd, &st) < 0) {
			int e = -errno;
			close(nfd);
			return say(why, whylen, e, strerror(-e), part);
		}
		const char *bad = bad_way(&st);
		if (bad) {
			close(nfd);
			return say(why, whylen, -EPERM, bad, part);
		}
		fd = nfd;
	}
	return fd;
}

int cache_open_dir(const char *dir, bool create, char *why, size_t whylen)
{
	if (dir[0] != '/')
		return say(why, whylen, -EINVAL, "not an absolute path", dir);
	int fd = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return say(why, whylen, -errno, strerror(errno), "/");
	struct stat st;
	const char *bad = fstat(fd, &st) < 0 ? "cannot stat" : bad_way(&st);
	if (bad) {
		close(fd);
		return say(why, whylen, -EPERM, bad, "/");
	}
	int links = 0;
	if ((fd = walk(fd, dir, create, &links, why, whylen)) < 0)
		return fd;
	/* the cache's own directory: this user's only */
	bad = fstat(fd, &st) < 0 ? "cannot stat" : st.st_uid != geteuid() ? "owned by another user" :
	      (st.st_mode & (S_IWGRP | S_IWOTH)) ? "writable by group or others" : NULL;
	if (bad) {
		close(fd);
		return say(why, whylen, -EPERM, bad, dir);
	}
	return fd;
}

/* path's directory into dir and its last component; false if none. */
static bool split(const char *path, char *dir, size_t dirlen, const char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash || !slash[1] || (size_t)(slash - path) + 1 > dirlen)
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	if (!dir[0])
		strcpy(dir, "/");
	*name = slash + 1;
	return true;
}

int cache_read(const char *path, size_t max, char **data, size_t *len, char *why, size_t whylen)
{
	char dir[4200];
	const char *name;
	*data = NULL;
	*len = 0;
	if (!split(path, dir, sizeof(dir), &name))
		return say(why, whylen, -EINVAL, "not a file path", path);
	int dfd = cache_open_dir(dir, false, why, whylen);
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int e = fd < 0 ? -errno : 0;
	close(dfd);
	if (fd < 0)
		return say(why, whylen, e, e == -ELOOP ? "a symbolic link: not followed" : strerror(-e), path);
	struct stat st;
	const char *bad = fstat(fd, &st) < 0 ? "cannot stat" : !S_ISREG(st.st_mode) ? "not a regular file" :
			  st.st_uid != geteuid() ? "owned by another user" :
			  (st.st_mode & (S_IWGRP | S_IWOTH)) ? "writable by group or others" : NULL;
	if (bad) {
		close(fd);
		return say(why, whylen, -EPERM, bad, path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	int r = file_read_fd(fd, (uint64_t)st.st_size, max, data, len);
	close(fd);
	if (r < 0)
		return say(why, whylen, r, file_strerror(r), path);
	return 0;
}

int cache_write(const char *path, const struct iovec *iov, int niov, char *why, size_t whylen)
{
	char dir[4200], tmp[300];
	const char *name;
	if (!split(path, dir, sizeof(dir), &name) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%d", name, (int)getpid(), (int)gettid()) >= sizeof(tmp))
		return say(why, whylen, -EINVAL, "not a file path", path);
	int dfd = cache_open_dir(dir, true, why, whylen);
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {   /* left by a killed run of the same pid */
		(void)unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		int e = -errno;
		close(dfd);
		return say(why, whylen, e, strerror(-e), path);
	}
	int r = 0;
	for (int i = 0; i < niov && !r; i++)
		r = file_write_all(fd, iov[i].iov_base, iov[i].iov_len);
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		say(why, whylen, r, strerror(-r), path);
	}
	close(dfd);
	return r;
}
