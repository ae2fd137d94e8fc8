/* SPDX-License-Identifier: MIT */
/*
 * Which guest binaries the agent ships, and the one way it reads them.
 *
 * The agent runs as root; the paths in its recording are names that
 * other users of the guest may have changed since the mapping (a binary
 * replaced by a symbolic link to /etc/shadow). A ship set is the agent's
 * model of the recording: which file each process mapped executable
 * where, and which of those files samples hit. ship_read() then opens a
 * hit file only in ways that reach the file that was mapped:
 *
 *   1. /proc/PID/map_files/START-END of a process that still has the
 *      mapping: the mapped file itself, whatever its path is now;
 *   2. else its path, resolved without following any symbolic link
 *      (openat2 RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, or O_NOFOLLOW
 *      on every component where openat2 is missing). Mapping paths come
 *      from the kernel's d_path and never contain one. The file must
 *      also be readable by every user (mode o+r): a file placed under a
 *      mapped path by someone else is then one they could read anyway.
 *
 * Either way it must be a regular file of at most SHIP_MAX_BYTES, and the
 * build-id of the very bytes read must equal the one recorded when it
 * was mapped; a file whose mapping has no build-id is never shipped.
 * When the recorder also recorded the mapped file's identity (device,
 * inode, size, mtime: MMAP records of format 1.1), the opened file must
 * have that identity too, and then a path may reach a file that is not
 * readable by all (it is the very file that was mapped).
 * Only files mapped executable (MMAP records) can be hit, so nothing
 * else (no data file, no file no sampled process mapped) is ever read.
 */
#ifndef DOMPROF_AGENT_SHIP_H
#define DOMPROF_AGENT_SHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

#define SHIP_MAX_BYTES (256u << 20)

/* Why a file is not shipped: negative codes beside -errno values. */
#define SHIP_NO_BUILDID    (-3001) /* no build-id recorded when mapped */
#define SHIP_SYMLINK       (-3002) /* its path goes through a symbolic link now */
#define SHIP_NOT_REGULAR   (-3003)
#define SHIP_TOO_BIG       (-3004)
#define SHIP_BUILDID_DIFF  (-3005) /* the bytes read have another (or no) build-id */
#define SHIP_NOT_PUBLIC    (-3006) /* reached by path, and not readable by all */
#define SHIP_DELETED       (-3007) /* "(deleted)" path and no live mapping */
#define SHIP_IDENT_DIFF    (-3008) /* device, inode, size or mtime differ from the recorded */

/* One file as mapped: path and build-id from its MMAP record. */
struct ship_file {
	const char *path;       /* owned by the set */
	uint8_t bid[20];
	uint8_t bidlen;         /* 0: none was recorded */
	bool hit;               /* a sample's ip or call chain fell in it */
	bool hit_stack;         /* hit only by a word of a stored user stack */
	bool has_ident;         /* identity recorded at mmap time (format 1.1) */
	uint64_t dev, ino, size, mtime_ns;
};

/* How ship_read reached the file. */
enum ship_via { SHIP_VIA_MAP_FILES = 1, SHIP_VIA_PATH = 2 };

struct ship;

struct ship *ship_new(void);
void ship_free(struct ship *s);  /* NULL is a no-op */

/* Feed the recording in file order: MMAP records of the guest (kernel
 * mappings are ignored; an anonymous one replaces what it overlaps but
 * is no file; "[vdso]" is kept by name), FORK tasks (a child inherits
 * its parent's mappings; other task records are ignored) and sample
 * addresses. The model is the symbols module's (symbols/maps.c). */
void ship_mmap(struct ship *s, const struct dp_mmap *m);
void ship_fork(struct ship *s, const struct dp_task *t);
/* True when the model reached its bound on mapping entries (a fork or
 * mmap loop in the guest): mappings after that were not kept, so files
 * they hit are not shipped. */
bool ship_over_budget(const struct ship *s);
void ship_ip(struct ship *s, uint32_t pid, uint64_t ip);
/*
 * A sample's stored user stack (--call-graph dwarf): every 8-byte word
 * of it that is an address inside a file pid has mapped marks that file
 * hit (hit_stack when nothing else did), so the host gets every binary
 * its unwinder may reach: return addresses are stack words. A superset
 * (a function pointer on the stack ships its file too), bounded by the
 * stack's length (at most DP_MAX_USTACK bytes: 8191 words a sample).
 */
void ship_stack(struct ship *s, uint32_t pid, const uint8_t *stack, uint32_t len);

size_t ship_nfiles(const struct ship *s);
/* Borrowed; valid until ship_free. i < ship_nfiles(). */
const struct ship_file *ship_file_at(const struct ship *s, size_t i);

/*
 * Read file i for shipping, with the checks above. On success returns 0,
 * *data (malloc'd, the caller frees) and *len hold the whole file and
 * *via says how it was reached. Otherwise returns a SHIP_* code or a
 * negative errno and leaves *data NULL. Never follows a symbolic link
 * of the path, never blocks on a fifo or device.
 */
int ship_read(const struct ship *s, size_t i, uint8_t **data, size_t *len, enum ship_via *via);

/* The path step alone (exposed for the unit test): an fd opened
 * read-only, non-blocking, without following any symbolic link, or
 * SHIP_SYMLINK / -errno. walk_only skips openat2 and uses the O_NOFOLLOW
 * walk that serves kernels (or seccomp filters) without it. */
int ship_open_path(const char *path, bool walk_only);

/* One phrase for a ship_read code ("reached through a symbolic link
 * (the mapping had none)", or strerror). Static storage. */
const char *ship_strerror(int code);

#endif
