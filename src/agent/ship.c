// SPDX-License-Identifier: MIT
/*
 * The agent's ship set (see ship.h): the files of the recording's
 * executable mappings, kept in the symbols module's process map model
 * (symbols/maps.c), the files samples hit, and the identity-checked read
 * of a hit file. Everything here runs as root on
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
#include "symbols/symbols.h"
#include "util/addrspace.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#define MAX_MAP_FILES_TRIES 32u /* live mappings tried per file */
/* Mapping entries kept over all processes (the symbols module's bound,
 * sym_set_map_model). The agent runs as root in a guest whose users
 * control what is mapped and forked: 1 M entries (a pointer and a
 * 56-byte map each, about 64 MiB) is far above a real system's (a few
 * hundred processes with a few hundred mappings each) and bounds what
 * a fork-and-map loop can cost. A fork alone shares its parent's list. */
#define MAX_MAP_ENTRIES (1u << 20)
/* Mappings visited per read through /proc/PID/map_files: forks share
 * lists, so the walk is bounded here, not by the entry bound. */
#define MAX_MAP_VISITS (1u << 20)
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

struct ship {
	/* The one model of process memory maps (symbols/maps.c), which
	 * also keeps per-process mapping lists with fork sharing, in the
	 * configuration the agent needs (see "the model" below). */
	struct sym_session *sym;
	struct ship_file *files;
	const struct sym_image **imgs; /* the model's image of each file */
	size_t nfiles, fcap, icap;
	struct hmap file_idx;    /* sym_image pointer -> file + 1 */
};

struct ship *ship_new(void)
{
	struct ship *s = xcalloc(1, sizeof(struct ship));
	s->sym = sym_session_new();
	sym_set_map_model(s->sym, MAX_MAP_ENTRIES, true);
	return s;
}

void ship_free(struct ship *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++)
		free((char *)s->files[i].path);
	free(s->files);
	free(s->imgs);
	hmap_release(&s->file_idx);
	sym_session_free(s->sym);
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
 * The symbols module's process model (sym_add_mmap, sym_add_task), set
 * up for the agent:
 *  - A ship_file is one mapped file *identity* (path, build-id, and the
 *    1.1 dev/inode/size/mtime): the same path mapped before and after a
 *    replacement is two files here. sym_set_map_model(key_identity)
 *    keys the model's images by that identity too, so one image is one
 *    ship_file, and the identity check of ship_read is made from the
 *    MMAP record that made it.
 *  - Lookups go through sym_find_proc_map and sym_each_proc_map, which
 *    consult only the mapping lists: never a JIT perf map (for the
 *    host domain, which the agent's own recording is, sym_find_map
 *    stats /tmp/perf-PID.map, a path other users of the guest control),
 *    a kernel table or a file. The agent opens nothing but the hit
 *    files, and those only through ship_read.
 *  - The agent only asks "which file was hit", never "which symbol":
 *    no image is ever loaded or resolved.
 * Only the answer "file i was hit" leaves it.
 */

bool ship_over_budget(const struct ship *s)
{
	return sym_map_budget_spent(s->sym);
}

void ship_mmap(struct ship *s, const struct dp_mmap *m)
{
	if (m->pid == (uint32_t)-1 || !m->path)
		return;
	if (m->start + m->len <= m->start)
		return;
	/* every user mapping enters the model (a later one replaces what
	 * it overlaps), but only files can be hit */
	const struct sym_map *map = sym_add_mmap(s->sym, DP_HOST_DOMAIN, m);
	if (!map)
		return; /* dropped for the entry bound */
	/* files by absolute path; not "//anon" and the like, nor "[heap]" */
	if ((m->path[0] != '/' || m->path[1] == '/') && strcmp(m->path, "[vdso]"))
		return;
	const struct sym_image *img = sym_map_image(map);
	if (u64map_get(&s->file_idx, (uint64_t)(uintptr_t)img))
		return;
	size_t cap0 = s->fcap;
	xgrow((void **)&s->files, &s->fcap, s->nfiles + 1, sizeof(*s->files));
	if (s->fcap != cap0)
		s->imgs = xrealloc(s->imgs, s->fcap * sizeof(*s->imgs));
	struct ship_file *nf = &s->files[s->nfiles];
	memset(nf, 0, sizeof(*nf));
	nf->path = xstrdup(m->path);
	nf->bidlen = m->buildid_len > 20 ? 20 : m->buildid_len;
	memcpy(nf->bid, m->buildid, nf->bidlen);
	nf->has_ident = m->has_ident;
	nf->dev = m->dev;
	nf->ino = m->ino;
	nf->size = m->size;
	nf->mtime_ns = m->mtime_ns;
	s->imgs[s->nfiles++] = img;
	u64map_put(&s->file_idx, (uint64_t)(uintptr_t)img, (void *)(uintptr_t)s->nfiles);
}

void ship_fork(struct ship *s, const struct dp_task *t)
{
	if (t->kind == DP_TASK_FORK)
		sym_add_task(s->sym, DP_HOST_DOMAIN, t); /* a new thread (pid == ppid) shares its maps */
}

void ship_ip(struct ship *s, uint32_t pid, uint64_t ip)
{
	const struct sym_map *m = sym_find_proc_map(s->sym, DP_HOST_DOMAIN, pid, ip);
	uintptr_t f = m ? (uintptr_t)u64map_get(&s->file_idx, (uint64_t)(uintptr_t)sym_map_image(m)) : 0;
	if (f) {
		s->files[f - 1].hit = true;
		s->files[f - 1].hit_stack = false;
	}
}

void ship_stack(struct ship *s, uint32_t pid, const uint8_t *stack, uint32_t len)
{
	if (len > DP_MAX_USTACK)
		len = DP_MAX_USTACK;
	/* most words that are addresses at all fall in the same few files:
	 * the last mapping found answers them without a lookup */
	uint64_t lo = 1, hi = 0;
	for (uint32_t off = 0; off + 8 <= len; off += 8) {
		uint64_t v;
		memcpy(&v, stack + off, 8);
		if (v < 4096 || v >= USER_ADDR_END || (v >= lo && v < hi))
			continue;
		const struct sym_map *m = sym_find_proc_map(s->sym, DP_HOST_DOMAIN, pid, v);
		if (!m)
			continue;
		sym_map_range(m, &lo, &hi);
		uintptr_t f = (uintptr_t)u64map_get(&s->file_idx, (uint64_t)(uintptr_t)sym_map_image(m));
		if (f && !s->files[f - 1].hit) {
			s->files[f - 1].hit = true;
			s->files[f - 1].hit_stack = true;
		}
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

struct map_files_walk {
	const struct ship_file *f;
	const struct sym_image *img;
	unsigned tries;
	bool skip;               /* a read through this pid's mapping failed */
	uint32_t skip_pid;
	int ret;
	uint8_t **data;
	size_t *len;
};

static bool try_map_file(void *ctx, uint32_t pid, const struct sym_map *m)
{
	struct map_files_walk *w = ctx;
	if (sym_map_image(m) != w->img || (w->skip && pid == w->skip_pid))
		return true;
	uint64_t start, end;
	sym_map_range(m, &start, &end);
	char mf[96];
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	w->tries++;
	int fd = open(mf, OPEN_FLAGS);
	if (fd < 0) {
		w->ret = -errno;
		return w->tries < MAX_MAP_FILES_TRIES;
	}
	/* A reused pid may map something else there: the build-id check
	 * rejects it and we try on. */
	w->ret = read_fd(fd, w->f, false, w->data, w->len);
	if (!w->ret)
		return false;
	w->skip = true; /* this process's other mappings are the same file */
	w->skip_pid = pid;
	return w->tries < MAX_MAP_FILES_TRIES;
}

/* Through a live process's mapping of file i: 0, or the last error. */
static int read_map_files(const struct ship *s, size_t i, uint8_t **data, size_t *len)
{
	struct map_files_walk w = { .f = &s->files[i], .img = s->imgs[i], .ret = -ESRCH,
				    .data = data, .len = len };
	sym_each_proc_map(s->sym, DP_HOST_DOMAIN, MAX_MAP_VISITS, try_map_file, &w);
	return w.ret;
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
