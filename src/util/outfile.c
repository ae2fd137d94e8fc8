// SPDX-License-Identifier: MIT
/*
 * The output-file rule shared by `record` and `merge` (see outfile.h):
 * a temporary file renamed into place, symlinks followed but never
 * removed, FILE.old, non-regular files left alone, and a POSIX lock that
 * keeps a second writer from moving a live recording aside.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"

#define MAX_LINKS 40 /* as the kernel's own limit on a path walk */

/* Follow `in` through its symlinks, dangling or not, into out. A link
 * owned by another user than us or root is not followed (-EPERM, its
 * owner in *owner), as fs.protected_symlinks does in sticky directories:
 * a link planted in /tmp must not make root overwrite its target. */
static int resolve(const char *in, char *out, size_t len, uid_t *owner)
{
	if (strlen(in) >= len)
		return -ENAMETOOLONG;
	snprintf(out, len, "%s", in);
	for (int i = 0; i < MAX_LINKS; i++) {
		struct stat st;
		if (lstat(out, &st) < 0 || !S_ISLNK(st.st_mode))
			return 0;
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
			*owner = st.st_uid;
			return -EPERM;
		}
		char target[PATH_MAX];
		ssize_t n = readlink(out, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (target[0] == '/') {
			snprintf(out, len, "%s", target);
			continue;
		}
		char *slash = strrchr(out, '/');
		size_t dirlen = slash ? (size_t)(slash - out) + 1 : 0;
		if (dirlen + (size_t)n >= len)
			return -ENAMETOOLONG;
		memmove(out + dirlen, target, (size_t)n + 1);
	}
	return -ELOOP;
}

/* The pid holding a lock that conflicts with a write lock on fd, -1 if
 * none, 0 if one is held but the holder is unknown. */
static pid_t lock_holder(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return 0;
	return fl.l_type == F_UNLCK ? -1 : fl.l_pid > 0 ? fl.l_pid : 0;
}

/*
 * Lock the regular file now at `path` and return its descriptor in *fd
 * (-1 when there is no file or it is not regular: nothing to lock). A
 * file we cannot open for writing is only tested, not locked. Checks
 * that `path` still names the locked file after locking (it may have
 * been renamed meanwhile) and retries a bounded number of times.
 */
static int lock_existing(struct outfile *of, int *fd)
{
	*fd = -1;
	for (int tries = 0; tries < 8; tries++) {
		struct stat pre;
		/* Never open a device or fifo here: opening has effects. */
		if (stat(of->path, &pre) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (!S_ISREG(pre.st_mode))
			return 0;
		bool rw = true;
		int f = open(of->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (f < 0 && (errno == EACCES || errno == EROFS)) {
			rw = false;
			f = open(of->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		}
		if (f < 0)
			return errno == ENOENT ? 0 : -errno;
		struct stat a, b;
		if (fstat(f, &a) < 0 || !S_ISREG(a.st_mode)) {
			close(f);
			return 0;
		}
		pid_t h = -1; /* -1: free (and locked by us when rw) */
		if (rw) {
			struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
			if (fcntl(f, F_SETLK, &fl) < 0 && (errno == EACCES || errno == EAGAIN)) {
				h = lock_holder(f);
				if (h < 0) { /* released meanwhile: look again */
					close(f);
					continue;
				}
			}
			/* Other errors (no locks on this file system): unlocked. */
		} else {
			h = lock_holder(f);
		}
		if (h >= 0) {
			close(f);
			of->holder = h;
			return -EBUSY;
		}
		if (stat(of->path, &b) == 0 && b.st_dev == a.st_dev && b.st_ino == a.st_ino) {
			*fd = f;
			return 0;
		}
		close(f); /* renamed meanwhile: look again */
	}
	return -EAGAIN;
}

static int fail(struct outfile *of, enum outfile_stage st, int err)
{
	of->stage = st;
	return err;
}

int outfile_open(struct outfile *of, const char *path, unsigned flags)
{
	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->flags = flags;
	int r = resolve(path, of->path, sizeof(of->path), &of->link_owner);
	if (r < 0)
		return fail(of, OUTFILE_ST_RESOLVE, r);

	struct stat st;
	if (stat(of->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return fail(of, OUTFILE_ST_KIND, -EISDIR);
		if (!(flags & OUTFILE_IN_PLACE))
			return fail(of, OUTFILE_ST_KIND, -EEXIST);
		of->fd = open(of->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (of->fd < 0)
			return fail(of, OUTFILE_ST_CREATE, -errno);
		of->in_place = true;
		of->committed = true;
		return 0;
	}
	int held;
	if ((r = lock_existing(of, &held)) < 0)
		return fail(of, OUTFILE_ST_BUSY, r);
	if (held >= 0)
		close(held); /* only a test here; the commit locks it again */

	/* .NAME.tmp-PID beside NAME: hidden, so no glob of the finished
	 * files (NAME.*, the --switch-output series) takes a temporary,
	 * nor one a killed recorder left */
	const char *slash = strrchr(of->path, '/');
	int dirlen = slash ? (int)(slash - of->path + 1) : 0;
	if ((size_t)snprintf(of->tmp, sizeof(of->tmp), "%.*s.%s.tmp-%d", dirlen, of->path, of->path + dirlen,
			     (int)getpid()) >= sizeof(of->tmp))
		return fail(of, OUTFILE_ST_CREATE, -ENAMETOOLONG);
	of->fd = open(of->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (of->fd < 0) {
		of->tmp[0] = '\0';
		return fail(of, OUTFILE_ST_CREATE, -errno);
	}
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (fcntl(of->fd, F_SETLK, &fl) < 0) {
		/* A file system without locks (some network ones): write
		 * unlocked rather than not at all. */
	}
	if (fstat(of->fd, &st) < 0) {
		r = -errno;
		outfile_discard(of);
		return fail(of, OUTFILE_ST_CREATE, r);
	}
	of->dev = st.st_dev;
	of->ino = st.st_ino;
	return 0;
}

int outfile_commit(struct outfile *of)
{
	if (of->committed)
		return 0;
	int held, r;
	if ((r = lock_existing(of, &held)) < 0)
		return fail(of, OUTFILE_ST_BUSY, r);
	struct stat st;
	if (held < 0 && lstat(of->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* Became a device, fifo or directory since the open. */
		return fail(of, OUTFILE_ST_KIND, S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST);
	}
	if (held >= 0 && !(of->flags & OUTFILE_FORCE)) {
		if ((size_t)snprintf(of->old, sizeof(of->old), "%s.old", of->path) >= sizeof(of->old)) {
			close(held);
			return fail(of, OUTFILE_ST_MOVE_OLD, -ENAMETOOLONG);
		}
		if (rename(of->path, of->old) < 0) {
			r = -errno;
			close(held);
			return fail(of, OUTFILE_ST_MOVE_OLD, r);
		}
		of->moved_old = true;
	}
	if (rename(of->tmp, of->path) < 0) {
		r = -errno;
		if (of->moved_old && rename(of->old, of->path) == 0)
			of->moved_old = false;
		if (held >= 0)
			close(held);
		return fail(of, OUTFILE_ST_RENAME, r);
	}
	if (held >= 0)
		close(held); /* the old file's lock: ours is on of->fd */
	of->tmp[0] = '\0';
	of->committed = true;
	return 0;
}

void outfile_discard(struct outfile *of)
{
	if (!of->in_place) {
		if (!of->committed && of->tmp[0]) {
			unlink(of->tmp);
		} else if (of->committed) {
			struct stat st;
			/* Only the file this run put there, never a newer one. */
			if (lstat(of->path, &st) == 0 && st.st_dev == of->dev && st.st_ino == of->ino)
				unlink(of->path);
			if (of->moved_old)
				rename(of->old, of->path);
		}
	}
	of->tmp[0] = '\0';
	of->moved_old = false;
	outfile_release(of);
}

void outfile_release(struct outfile *of)
{
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
}

const char *outfile_strerror(const struct outfile *of, const char *given, int err,
			     char *buf, size_t len)
{
	char link[PATH_MAX + 32] = "";
	if (strcmp(given, of->path) && of->path[0])
		snprintf(link, sizeof(link), " (a link to '%s')", of->path);
	switch (of->stage) {
	case OUTFILE_ST_RESOLVE:
		if (err == -EPERM)
			snprintf(buf, len, "'%s' is or passes through a symbolic link owned by uid %u; "
				 "not followed (remove it or choose another output)", given,
				 (unsigned)of->link_owner);
		else
			snprintf(buf, len, "cannot follow the link '%s': %s", given, strerror(-err));
		break;
	case OUTFILE_ST_BUSY:
		if (err != -EBUSY)
			snprintf(buf, len, "cannot open the existing '%s'%s: %s", given, link, strerror(-err));
		else if (of->holder > 0)
			snprintf(buf, len, "'%s'%s is being written by process %d (another recorder?); "
				 "choose another output", given, link, (int)of->holder);
		else
			snprintf(buf, len, "'%s'%s is being written by another process; choose another output",
				 given, link);
		break;
	case OUTFILE_ST_KIND:
		if (err == -EISDIR)
			snprintf(buf, len, "output '%s'%s is a directory", given, link);
		else
			snprintf(buf, len, "'%s'%s exists and is not a regular file", given, link);
		break;
	case OUTFILE_ST_MOVE_OLD:
		snprintf(buf, len, "cannot move '%s' to '%s': %s", of->path, of->old, strerror(-err));
		break;
	default:
		snprintf(buf, len, "cannot create output '%s'%s: %s", given, link, strerror(-err));
		break;
	}
	return buf;
}

uint64_t outfile_size(const struct outfile *of)
{
	struct stat st;
	if (of->fd < 0 || fstat(of->fd, &st) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

bool outfile_is_temp(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *t = strstr(base, ".tmp-");
	if (!t || t == base)
		return false;
	for (const char *n = strstr(t + 5, ".tmp-"); n; n = strstr(n + 5, ".tmp-"))
		t = n;   /* the last one */
	const char *d = t + 5;
	if (!*d)
		return false;
	for (; *d; d++)
		if (*d < '0' || *d > '9')
			return false;
	return true;
}
