// SPDX-License-Identifier: MIT
/*
 * The agent's private working directory (see workdir.h). The check walks
 * the real path from / one component at a time with O_NOFOLLOW, so what
 * is checked is what the private directory is then created in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/workdir.h"

#define MAX_ENTRIES 1000u /* a private dir holds a handful of our files */

/* One directory on the way: owned by root or us, and nobody else may
 * rename its entries (not group/other-writable, or sticky). */
static int check_one(int fd, const char *dir, const char *upto, char *why, size_t whylen)
{
	char who[PATH_MAX + 64]; /* "--dir /x" or "--dir /x/y: /x" */
	if (!strcmp(dir, upto))
		snprintf(who, sizeof(who), "--dir %s", dir);
	else
		snprintf(who, sizeof(who), "--dir %s: %s", dir, upto);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		snprintf(why, whylen, "%s: %s", who, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a directory", who);
		return -ENOTDIR;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, whylen, "%s is owned by uid %u, neither root nor the agent's user", who,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, whylen, "%s is writable by other users and not sticky (mode %04o)", who,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* Check the real path `real` (absolute, no symbolic links); returns an
 * O_PATH fd of it in *out on success. */
static int walk(const char *dir, const char *real, int *out, char *why, size_t whylen)
{
	char buf[PATH_MAX], upto[PATH_MAX] = "/";
	snprintf(buf, sizeof(buf), "%s", real);
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = check_one(fd, dir, upto, why, whylen);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); !r && c; c = strtok_r(NULL, "/", &save)) {
		int nfd = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		fd = nfd;
		size_t ul = strlen(upto);
		snprintf(upto + ul, sizeof(upto) - ul, "%s%s", ul > 1 ? "/" : "", c);
		if (fd < 0) {
			snprintf(why, whylen, "--dir %s: %s: %s", dir, upto,
				 e == ELOOP ? "changed into a symbolic link while checked" : strerror(e));
			return -e;
		}
		r = check_one(fd, dir, upto, why, whylen);
	}
	if (r) {
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

int workdir_check(const char *dir, char *why, size_t whylen)
{
	char real[PATH_MAX];
	if (!realpath(dir, real)) {
		int e = errno;
		snprintf(why, whylen, "--dir %s: %s", dir, strerror(e));
		return -e;
	}
	int fd;
	int r = walk(dir, real, &fd, why, whylen);
	if (!r)
		close(fd);
	return r;
}

int workdir_create(struct workdir *w, const char *dir, char *why, size_t whylen)
{
	w->fd = -1;
	w->path[0] = '\0';
	char real[PATH_MAX];
	if (!realpath(dir, real)) {
		int e = errno;
		snprintf(why, whylen, "--dir %s: %s", dir, strerror(e));
		return -e;
	}
	int pfd;
	int r = walk(dir, real, &pfd, why, whylen);
	if (r)
		return r;
	close(pfd);
	char tmpl[sizeof(w->path)];
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/domprof-agent.XXXXXX", strcmp(real, "/") ? real : "") >=
	    sizeof(tmpl)) {
		snprintf(why, whylen, "--dir %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(tmpl)) { /* mode 0700 */
		int e = errno;
		snprintf(why, whylen, "cannot create a private directory in %s: %s", real, strerror(e));
		return -e;
	}
	int fd = open(tmpl, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		int e = fd < 0 ? errno : EPERM;
		snprintf(why, whylen, "private directory %s is not ours after mkdtemp", tmpl);
		if (fd >= 0)
			close(fd);
		rmdir(tmpl);
		return -e;
	}
	w->fd = fd;
	snprintf(w->path, sizeof(w->path), "%s", tmpl);
	return 0;
}

int workdir_create_file(const struct workdir *w, const char *name, int flags)
{
	if (w->fd < 0 || strchr(name, '/'))
		return -EINVAL;
	if (unlinkat(w->fd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	int fd = openat(w->fd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

void workdir_remove(struct workdir *w)
{
	if (w->fd < 0)
		return;
	int dfd = openat(w->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (d) {
		struct dirent *de;
		for (unsigned n = 0; n < MAX_ENTRIES && (de = readdir(d)); n++) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (unlinkat(w->fd, de->d_name, 0) < 0 && errno == EISDIR)
				unlinkat(w->fd, de->d_name, AT_REMOVEDIR);
		}
		closedir(d);
	} else if (dfd >= 0) {
		close(dfd);
	}
	close(w->fd);
	w->fd = -1;
	rmdir(w->path);
}
