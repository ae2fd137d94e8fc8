/* SPDX-License-Identifier: MIT */
/*
 * The agent's private working directory. The agent runs as root in a
 * guest other users share; a file it creates at a fixed name in a shared
 * directory (/tmp/agent.data) can be a symbolic link another user
 * planted, and root would then truncate its target. So the agent checks
 * the directory it was given (--dir, default /tmp), creates a directory
 * of its own in it with mkdtemp (mode 0700), creates its files only in
 * there with O_CREAT|O_EXCL|O_NOFOLLOW, and removes it at exit.
 *
 * A --dir is accepted when it and every directory above it is owned by
 * root or by the agent's user, and is not writable by group or others
 * unless it has the sticky bit (as /tmp has): nobody else can then
 * rename or replace any part of the path to the private directory.
 */
#ifndef DOMPROF_AGENT_WORKDIR_H
#define DOMPROF_AGENT_WORKDIR_H

#include <stddef.h>

struct workdir {
	int fd;                 /* O_PATH|O_DIRECTORY of the private dir, or -1 */
	char path[4096];        /* its path, for the recorder's -o */
};

/*
 * Check `dir` as above; on success create PARENT/domprof-agent.XXXXXX
 * and fill *w. Returns 0, or a negative errno with a one-line reason in
 * why[0..whylen) (e.g. "--dir /x is writable by other users and not
 * sticky"). On failure w->fd is -1.
 */
int workdir_create(struct workdir *w, const char *dir, char *why, size_t whylen);

/*
 * The same check alone (exposed for the unit test). 0 or -EPERM,
 * -ENOTDIR, -ENOENT ... with a reason in why.
 */
int workdir_check(const char *dir, char *why, size_t whylen);

/* Create a new file NAME in the private dir: removes an old NAME (ours:
 * nobody else can write there), then openat with O_CREAT|O_EXCL|
 * O_NOFOLLOW|O_CLOEXEC, mode 0600, plus `flags` (O_WRONLY, O_RDWR).
 * Returns the fd or a negative errno. */
int workdir_create_file(const struct workdir *w, const char *name, int flags);

/* Remove every entry of the private dir and the dir itself; w->fd = -1.
 * A no-op when w->fd is -1. */
void workdir_remove(struct workdir *w);

#endif
