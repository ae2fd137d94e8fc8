/* SPDX-License-Identifier: MIT */
/*
 * The output-file rule of the commands that write a domprof file
 * (`record -o`, `merge -o`), in one place:
 *
 *  - The data goes to a new temporary file .FILE.tmp-PID (hidden: outside
 *    the FILE.* glob of a series' readers) in FILE's own
 *    directory (O_CREAT|O_EXCL|O_NOFOLLOW, so nothing planted there is
 *    followed or overwritten). outfile_commit() renames it onto FILE once
 *    the command knows it will produce a file; a failure before that
 *    (outfile_discard) leaves the directory as it was.
 *  - FILE given as a symbolic link (even a dangling one) is followed: the
 *    file written is the link's target; the link itself is never removed
 *    or replaced. A link owned by another user than the caller or root is
 *    not followed (-EPERM at OUTFILE_ST_RESOLVE), as fs.protected_symlinks
 *    does in sticky directories.
 *  - An existing regular FILE is renamed to FILE.old at the commit, unless
 *    `force`; then it is replaced.
 *  - An existing FILE that is not a regular file (a device or fifo, as in
 *    `-o /dev/null`) is never moved, replaced or removed: with
 *    OUTFILE_IN_PLACE it is opened and written directly, else it is
 *    refused with -EEXIST. A directory is refused with -EISDIR.
 *  - The file being written is locked (a POSIX write lock, fcntl F_SETLK)
 *    while the handle holds it. Opening or committing onto a FILE that
 *    another process holds locked fails with -EBUSY and names the holder:
 *    a second recorder never moves a live recording aside. The commit
 *    takes the lock of the old FILE before renaming it, so two commits
 *    onto one FILE are ordered and the later one sees the other's lock.
 *    On a file system without locks the file is written unlocked.
 *    (POSIX locks are per process: any close() of a descriptor of the
 *    file in this process releases it, so the writer's copy of the
 *    descriptor is closed only when the file is finished.)
 *
 * Nothing here prints. Errors are negative errnos, with `stage` saying
 * which step failed so the command can word its one-line message.
 */
#ifndef DOMPROF_UTIL_OUTFILE_H
#define DOMPROF_UTIL_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum outfile_flags {
	OUTFILE_FORCE = 1,      /* replace FILE instead of keeping FILE.old */
	OUTFILE_IN_PLACE = 2,   /* write a non-regular FILE (device, fifo) directly */
};

enum outfile_stage {
	OUTFILE_ST_NONE,
	OUTFILE_ST_RESOLVE,     /* following the symlink chain of FILE */
	OUTFILE_ST_BUSY,        /* FILE is locked by another process (holder) */
	OUTFILE_ST_KIND,        /* FILE is a directory, or not regular without IN_PLACE */
	OUTFILE_ST_CREATE,      /* creating the temporary file (or opening in place) */
	OUTFILE_ST_MOVE_OLD,    /* renaming FILE to FILE.old */
	OUTFILE_ST_RENAME,      /* renaming the temporary file onto FILE */
};

struct outfile {
	char path[PATH_MAX];    /* the file written: FILE with symlinks followed */
	char tmp[PATH_MAX];     /* .FILE.tmp-PID until committed ("" in place) */
	char old[PATH_MAX];     /* FILE.old, when the commit moved one there */
	int fd;                 /* the open file (owned; -1 when none) */
	unsigned flags;
	bool in_place;          /* writing a device/fifo directly */
	bool committed;
	bool moved_old;
	dev_t dev;              /* identity of the file written */
	ino_t ino;
	/* Set on failure: */
	enum outfile_stage stage;
	pid_t holder;           /* OUTFILE_ST_BUSY: the locking pid, 0 if unknown */
	uid_t link_owner;       /* OUTFILE_ST_RESOLVE, -EPERM: the link's owner */
};

/*
 * Resolve `path`, check it is not busy and of a usable kind, create the
 * temporary file (or open a non-regular FILE in place) and lock it.
 * Returns 0, or a negative errno with of->stage set; on failure nothing
 * was created and of->fd is -1. of->fd stays owned by `of`: give a
 * writer a dup() of it.
 */
int outfile_open(struct outfile *of, const char *path, unsigned flags);

/*
 * Put the file in place: lock the existing FILE (refusing with -EBUSY if
 * another process holds it), move it to FILE.old unless OUTFILE_FORCE,
 * rename the temporary file onto FILE. A no-op in place. On failure the
 * old FILE is back where it was and the temporary file still exists
 * (outfile_discard removes it).
 */
int outfile_commit(struct outfile *of);

/*
 * Undo: before the commit remove the temporary file; after it remove
 * FILE (if it is still ours) and put FILE.old back. Never touches a
 * non-regular FILE. Closes of->fd.
 */
void outfile_discard(struct outfile *of);

/* Close of->fd (releasing the lock); keeps whatever was committed. */
void outfile_release(struct outfile *of);

/*
 * One line (no newline, no command prefix) for the failure err of
 * outfile_open/outfile_commit, naming the user's path `given`:
 * "cannot create output 'x.data': No space left on device",
 * "'x.data' is being written by process 1234 (another recorder?); ...".
 */
const char *outfile_strerror(const struct outfile *of, const char *given, int err,
			     char *buf, size_t len);

/* Size of the file written, through the descriptor (so a rename of FILE
 * by someone else does not change the answer). 0 if unknown. */
uint64_t outfile_size(const struct outfile *of);

/* True when path's last component is a writer's temporary file, the
 * .FILE.tmp-PID of outfile_open or the FILE.tmp-PID of older recorders:
 * a file being written or left by a killed writer, never a recording to
 * read (analysis/inputs.h skips or refuses it). */
bool outfile_is_temp(const char *path);

#endif
