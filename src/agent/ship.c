// SPDX-License-Identifier: MIT
/*
 * The agent's ship set (see ship.h): a per-process list of executable
 * mappings built from the recording, the files samples hit, and the
 * identity-checked read of a hit file. Everything here runs as root on
 * paths other users control, so a file is opened only through the
 * mapping itself or through a path without symbolic links, never with a
 * blocking open, and its bytes are checked against the recorded build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "agent/ship.h"
#include "symbols/buildid.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#define MAX_MAP_FILES_TRIES 32u /* live mappings tried per file */
/* Mapping entries kept over all processes. The agent runs as root in a
 * guest whose users control what is mapped and forked: 1 M entries
 * (24 MiB) is far above a real system's (a few hundred processes with a
 * few hundred mappings each) and bounds what a fork loop can cost. */
#define MAX_MAP_ENTRIES (1u << 20)
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

struct amap {
	uint64_t start, end;
	size_t file;
};

struct aproc {
	uint32_t pid;
	struct amap *maps;
	size_t n, cap;
};

struct ship {
	struct ship_file *files;
	size_t nfiles, fcap;
	struct hmap file_idx;    /* file_key -> file + 1 */
	struct aproc *procs;
	size_t nprocs, pcap;
	struct hmap proc_idx;    /* pid -> proc + 1 */
	size_t nentries;         /* mapping entries over all procs */
	bool over_budget;        /* MAX_MAP_ENTRIES reached: later mappings not kept */
};

struct ship *ship_new(void)
{
	return xcalloc(1, sizeof(struct ship));
}

void ship_free(struct ship *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++)
		free((char *)s->files[i].path);
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].maps);
	free(s->files);
	free(s->procs);
	hmap_release(&s->file_idx);
	hmap_release(&s->proc_idx);
	free(s);
}

size_t ship_nfiles(const struct ship *s)
{
	return s->nfiles;
}

const struct ship_file *ship_file_at(const struct ship *s, size_t i)
{
	return &s->files[i];
}

/* ---- the model: who mapped what where, and what was hit ---- */

/*
 * Why not the symbols module's process model (symbols/maps.c,
 * sym_add_mmap/sym_add_task/sym_find_map), which also keeps per-process
 * mapping lists with fork sharing: the agent needs a subset of it with a
 * different key, and must not have the rest run as root in the guest.
 *  - A ship_file is one mapped file *identity* (path, build-id, and the
 *    1.1 dev/inode/size/mtime): the same path mapped before and after a
 *    replacement is two files here; a sym_image is keyed by path and
 *    build-id and carries no identity, so the identity check of
 *    ship_read could not be made from it.
 *  - sym_find_map consults JIT perf maps: for the host domain (which the
 *    agent's own recording is) it stats /tmp/perf-PID.map, a path other
 *    users of the guest control; the agent opens nothing but the hit
 *    files, and those only through ship_read.
 *  - The agent only asks "which file was hit", never "which symbol":
 *    no overlap trimming, image loading or resolution is wanted.
 * So this stays a flat per-pid list (newest mapping wins on lookup);
 * only the answer "file i was hit" leaves it.
 */

static struct aproc *proc_get(struct ship *s, uint32_t pid, bool create)
{
	uintptr_t i = (uintptr_t)u64map_get(&s->proc_idx, pid);
	if (i)
		return &s->procs[i - 1];
	if (!create)
		return NULL;
	xgrow((void **)&s->procs, &s->pcap, s->nprocs + 1, sizeof(*s->procs));
	struct aproc *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	u64map_put(&s->proc_idx, pid, (void *)(uintptr_t)s->nprocs);
	return p;
}

static void proc_add(struct ship *s, struct aproc *p, uint64_t start, uint64_t end, size_t file)
{
	if (s->nentries >= MAX_MAP_ENTRIES) {
		s->over_budget = true;
		return;
	}
	xgrow((void **)&p->maps, &p->cap, p->n + 1, sizeof(*p->maps));
	p->maps[p->n++] = (struct amap){ start, end, file };
	s->nentries++;
}

bool ship_over_budget(const struct ship *s)
{
	return s->over_budget;
}

/* A file's identity as one hash: path, build-id and the recorded
 * dev/inode/size/mtime. Equal files have equal keys; a lookup still
 * compares the whole identity (same_file). */
static uint64_t file_key(const struct dp_mmap *m, uint8_t bl)
{
	uint64_t h = hash_str64(m->path);
	for (unsigned i = 0; i < bl; i++)
		h = hash_mix64(h ^ m->buildid[i]);
	if (m->has_ident)
		h = hash_mix64(h ^ m->dev) ^ hash_mix64(m->ino ^ m->size) ^ hash_mix64(m->mtime_ns);
	return h;
}

static bool same_file(const struct ship_file *o, const struct dp_mmap *m, uint8_t bl)
{
	return !strcmp(o->path, m->path) && o->bidlen == bl && !memcmp(o->bid, m->buildid, bl) &&
	       o->has_ident == m->has_ident &&
	       (!m->has_ident || (o->dev == m->dev && o->ino == m->ino && o->size == m->size &&
				  o->mtime_ns == m->mtime_ns));
}

void ship_mmap(struct ship *s, const struct dp_mmap *m)
{
	if (m->pid == (uint32_t)-1 || !m->path)
		return;
	/* files by absolute path; not "//anon" and the like, nor "[heap]" */
	if ((m->path[0] != '/' || m->path[1] == '/') && strcmp(m->path, "[vdso]"))
		return;
	if (m->start + m->len <= m->start)
		return;
	uint8_t bl = m->buildid_len > 20 ? 20 : m->buildid_len;
	uint64_t key = file_key(m, bl);
	uintptr_t hit = (uintptr_t)u64map_get(&s->file_idx, key);
	size_t f = s->nfiles;
	if (hit && same_file(&s->files[hit - 1], m, bl))
		f = hit - 1;
	else if (hit) /* a 64-bit collision of two identities: look the slow way */
		for (f = 0; f < s->nfiles && !same_file(&s->files[f], m, bl); f++)
			;
	if (f == s->nfiles) {
		if (!hit)
			u64map_put(&s->file_idx, key, (void *)(uintptr_t)(s->nfiles + 1));
		xgrow((void **)&s->files, &s->fcap, s->nfiles + 1, sizeof(*s->files));
		struct ship_file *nf = &s->files[s->nfiles++];
		memset(nf, 0, sizeof(*nf));
		nf->path = xstrdup(m->path);
		nf->bidlen = bl;
		memcpy(nf->bid, m->buildid, bl);
		nf->has_ident = m->has_ident;
		nf->dev = m->dev;
		nf->ino = m->ino;
		nf->size = m->size;
		nf->mtime_ns = m->mtime_ns;
	}
	proc_add(s, proc_get(s, m->pid, true), m->start, m->start + m->len, f);
}

void ship_fork(struct ship *s, const struct dp_task *t)
{
	if (t->pid == t->ppid)
		return; /* a new thread shares its process's maps */
	struct aproc *parent = proc_get(s, t->ppid, false);
	if (!parent || proc_get(s, t->pid, false))
		return;
	size_t pi = (size_t)(parent - s->procs);
	struct aproc *child = proc_get(s, t->pid, true);
	parent = &s->procs[pi]; /* the array may have moved */
	for (size_t i = 0; i < parent->n && !s->over_budget; i++)
		proc_add(s, child, parent->maps[i].start, parent->maps[i].end, parent->maps[i].file);
}

void ship_ip(struct ship *s, uint32_t pid, uint64_t ip)
{
	struct aproc *p = proc_get(s, pid, false);
	if (!p)
		return;
	for (size_t i = p->n; i-- > 0;) /* the newest mapping wins */
		if (ip >= p->maps[i].start && ip < p->maps[i].end) {
			s->files[p->maps[i].file].hit = true;
			return;
		}
}

/* ---- opening without following links ---- */

/* O_NOFOLLOW on every component, for kernels without openat2 (< 5.6)
 * or where a seccomp filter refuses it. */
static int open_walk(const char *path)
{
	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return -EINVAL;
	char buf[PATH_MAX];
	strcpy(buf, path);
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	char *save = NULL, *comp = strtok_r(buf, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		struct stat st;
		if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			close(dfd);
			return SHIP_SYMLINK;
		}
		int fd = next ? openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			      : openat(dfd, comp, OPEN_FLAGS | O_NOFOLLOW);
		int e = errno;
		close(dfd);
		if (fd < 0)
			return e == ELOOP ? SHIP_SYMLINK : -e;
		dfd = fd;
		comp = next;
	}
	return dfd; /* "/" itself is no file to ship, but read_fd says so */
}

int ship_open_path(const char *path, bool walk_only)
{
#ifdef SYS_openat2
	static bool no_openat2; /* ENOSYS once: do not ask again */
	if (!walk_only && !no_openat2) {
		struct open_how how = {
			.flags = OPEN_FLAGS,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno == ELOOP)
			return SHIP_SYMLINK;
		if (errno != ENOSYS && errno != EPERM && errno != E2BIG)
			return -errno;
		no_openat2 = true;
	}
#endif
	return open_walk(path);
}

/* Read all of fd (a regular file) and check its build-id against f's.
 * Takes ownership of fd. */
static int read_fd(int fd, const struct ship_file *f, bool by_path, uint8_t **data, size_t *len)
{
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = SHIP_NOT_REGULAR;
	else if (st.st_size <= 0 || (uint64_t)st.st_size > SHIP_MAX_BYTES)
		ret = st.st_size <= 0 ? SHIP_BUILDID_DIFF : SHIP_TOO_BIG;
	else if (f->has_ident && ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino ||
				  (uint64_t)st.st_size != f->size ||
				  (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec != f->mtime_ns))
		ret = SHIP_IDENT_DIFF;
	else if (by_path && !f->has_ident && !(st.st_mode & S_IROTH))
		ret = SHIP_NOT_PUBLIC;
	if (ret) {
		close(fd);
		return ret;
	}
	size_t want = (size_t)st.st_size, n = 0;
	uint8_t *b = xmalloc(want);
	while (n < want) {
		ssize_t r = read(fd, b + n, want - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	uint8_t bid[20], bl = 0;
	if (sym_build_id_mem(b, n, bid, &bl) < 0 || bl != f->bidlen || memcmp(bid, f->bid, bl)) {
		free(b);
		return SHIP_BUILDID_DIFF;
	}
	*data = b;
	*len = n;
	return 0;
}

static bool deleted_path(const char *p)
{
	size_t n = strlen(p);
	return n > 10 && !strcmp(p + n - 10, " (deleted)");
}

/* Through a live process's mapping of file i: 0, or the last error. */
static int read_map_files(const struct ship *s, size_t i, uint8_t **data, size_t *len)
{
	const struct ship_file *f = &s->files[i];
	unsigned tries = 0;
	int ret = -ESRCH;
	for (size_t p = 0; p < s->nprocs && tries < MAX_MAP_FILES_TRIES; p++) {
		const struct aproc *pr = &s->procs[p];
		for (size_t k = 0; k < pr->n && tries < MAX_MAP_FILES_TRIES; k++) {
			if (pr->maps[k].file != i)
				continue;
			char mf[96];
			snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pr->pid,
				 (unsigned long long)pr->maps[k].start, (unsigned long long)pr->maps[k].end);
			tries++;
			int fd = open(mf, OPEN_FLAGS);
			if (fd < 0) {
				ret = -errno;
				continue;
			}
			/* A reused pid may map something else there: the
			 * build-id check rejects it and we try on. */
			ret = read_fd(fd, f, false, data, len);
			if (!ret)
				return 0;
			break; /* this process's other mappings are the same file */
		}
	}
	return ret;
}

int ship_read(const struct ship *s, size_t i, uint8_t **data, size_t *len, enum ship_via *via)
{
	const struct ship_file *f = &s->files[i];
	*data = NULL;
	*len = 0;
	if (f->path[0] != '/')
		return SHIP_NOT_REGULAR;
	if (!f->bidlen)
		return SHIP_NO_BUILDID;
	if (read_map_files(s, i, data, len) == 0) {
		*via = SHIP_VIA_MAP_FILES;
		return 0;
	}
	if (deleted_path(f->path))
		return SHIP_DELETED;
	int fd = ship_open_path(f->path, false);
	if (fd < 0)
		return fd;
	int r = read_fd(fd, f, true, data, len);
	if (!r)
		*via = SHIP_VIA_PATH;
	return r;
}

const char *ship_strerror(int code)
{
	switch (code) {
	case SHIP_NO_BUILDID: return "no build-id was recorded when it was mapped";
	case SHIP_SYMLINK: return "its path now goes through a symbolic link (the mapping had none)";
	case SHIP_NOT_REGULAR: return "not a regular file";
	case SHIP_TOO_BIG: return "larger than 256 MiB";
	case SHIP_BUILDID_DIFF: return "its build-id is not the one recorded when it was mapped";
	case SHIP_NOT_PUBLIC: return "the process that mapped it is gone, its identity was not recorded, "
				     "and the file is not readable by all users";
	case SHIP_DELETED: return "deleted, and no process maps it any more";
	case SHIP_IDENT_DIFF: return "not the file that was mapped (device, inode, size or mtime differ)";
	default: return strerror(code < 0 ? -code : code);
	}
}
