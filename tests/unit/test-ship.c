// SPDX-License-Identifier: MIT
/*
 * agent/ship.c on real files and real processes: which files samples
 * hit, and ship_read's identity checks. A copy of this test binary (it
 * has a GNU build-id) is the "binary"; a root-only copy with a marker
 * appended (same build-id) is the "secret" an attacker points a
 * symbolic link at. Checked: an intact path ships; a symbolic link at
 * the end or in the middle of the path, another build-id, no recorded
 * build-id, a file not readable by all, a fifo and a directory are
 * refused (without blocking); a live process's mapping ships the mapped
 * file even after its path became a symbolic link to the secret, and
 * once the process is gone the same path is refused. map_files needs
 * root (CAP_SYS_ADMIN): the test skips without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/ship.h"
#include "symbols/buildid.h"
#include "unit.h"

static char dir[64];
static uint8_t *exe;
static size_t exelen;
static uint8_t bid[20], bidlen;

static void put(const char *name, const void *b, size_t n, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, mode);
	CHECK(fd >= 0 && write(fd, b, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
	chmod(p, mode);
}

static void slurp_exe(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct stat st;
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	exelen = (size_t)st.st_size;
	exe = malloc(exelen);
	CHECK(read(fd, exe, exelen) == (ssize_t)exelen);
	close(fd);
}

/* A pid that no longer exists (an exited, reaped child). */
static uint32_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return (uint32_t)p;
}

/* A set with one hit file mapped by pid at [start, start+len), with the
 * identity of `st` recorded when st is not NULL. */
static struct ship *one_id(uint32_t pid, uint64_t start, uint64_t len, const char *name, bool with_bid,
			   const struct stat *st)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	struct dp_mmap m = { .pid = pid, .start = start, .len = len, .path = p };
	if (st) {
		m.has_ident = true;
		m.dev = st->st_dev;
		m.ino = st->st_ino;
		m.size = (uint64_t)st->st_size;
		m.mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
	}
	if (with_bid) {
		m.buildid_len = bidlen;
		memcpy(m.buildid, bid, bidlen);
	}
	struct ship *s = ship_new();
	ship_mmap(s, &m);
	ship_ip(s, pid, start + 16);
	CHECK(ship_nfiles(s) == 1 && ship_file_at(s, 0)->hit);
	return s;
}

static struct ship *one(uint32_t pid, uint64_t start, uint64_t len, const char *name, bool with_bid)
{
	return one_id(pid, start, len, name, with_bid, NULL);
}

static int read_one(struct ship *s, enum ship_via *via, size_t *len, uint8_t **data)
{
	int r = ship_read(s, 0, data, len, via);
	CHECK(r == 0 || !*data);
	return r;
}

static void test_hits(void)
{
	struct dp_mmap m = { .pid = 10, .start = 0x1000, .len = 0x1000, .path = "/bin/a", .buildid_len = 1 };
	struct dp_mmap k = { .pid = (uint32_t)-1, .start = 0, .len = 0x1000, .path = "[kernel.kallsyms]" };
	struct dp_mmap anon = { .pid = 10, .start = 0x5000, .len = 0x1000, .path = "//anon" };
	struct ship *s = ship_new();
	ship_mmap(s, &m);
	ship_mmap(s, &k);
	ship_mmap(s, &anon);
	m.path = "/bin/b";
	m.start = 0x3000;
	ship_mmap(s, &m);
	CHECK(ship_nfiles(s) == 2);
	struct dp_task fk = { .kind = DP_TASK_FORK, .pid = 11, .ppid = 10 };
	ship_fork(s, &fk);
	ship_ip(s, 10, 0x2000); /* between the two: nothing */
	ship_ip(s, 12, 0x1100); /* unknown pid */
	CHECK(!ship_file_at(s, 0)->hit && !ship_file_at(s, 1)->hit);
	ship_ip(s, 11, 0x3fff); /* the forked child inherited /bin/b */
	CHECK(!ship_file_at(s, 0)->hit && ship_file_at(s, 1)->hit);
	CHECK_STR(ship_file_at(s, 0)->path, "/bin/a");
	CHECK(ship_file_at(s, 0)->bidlen == 1);
	ship_free(s);
	ship_free(NULL);
}

/* ship_stack: a word of a stored user stack that points into a file the
 * process mapped marks it hit (hit_stack unless an ip hit it too);
 * anything else on the stack marks nothing; the length is bounded. */
static void test_stack(void)
{
	struct dp_mmap m = { .pid = 20, .start = 0x10000, .len = 0x1000, .path = "/bin/prog", .buildid_len = 1 };
	struct ship *s = ship_new();
	ship_mmap(s, &m);
	m.path = "/lib/libc.so.6";
	m.start = 0x20000;
	ship_mmap(s, &m);
	m.path = "/lib/other.so";
	m.start = 0x30000;
	ship_mmap(s, &m);
	m.pid = 21;                         /* another process's library */
	m.path = "/lib/theirs.so";
	m.start = 0x40000;
	ship_mmap(s, &m);
	struct dp_mmap anon = { .pid = 20, .start = 0x50000, .len = 0x1000, .path = "//anon" };
	ship_mmap(s, &anon);
	CHECK(ship_nfiles(s) == 4);
	uint64_t words[] = {
		0, 1, 0xfff, 0x7ffc12345678ull,      /* small values, a stack address */
		0xffffffff81000000ull,               /* a kernel address */
		0x40010,                             /* in pid 21's mapping only */
		0x50010,                             /* anonymous memory: no file */
		0x20ff8, 0x20010,                    /* libc, twice */
		0x11000,                             /* just past prog's mapping */
	};
	ship_ip(s, 20, 0x10010);                 /* prog: hit by its ip */
	ship_stack(s, 20, (const uint8_t *)words, sizeof(words));
	const struct ship_file *prog = ship_file_at(s, 0), *libc = ship_file_at(s, 1),
			       *other = ship_file_at(s, 2), *theirs = ship_file_at(s, 3);
	CHECK(prog->hit && !prog->hit_stack);
	CHECK(libc->hit && libc->hit_stack);
	CHECK(!other->hit && !theirs->hit);
	/* a word cut by the length, and a word after a partial one: none */
	uint64_t cut[2] = { 0x30010, 0x30010 };
	ship_stack(s, 20, (const uint8_t *)cut, 7);
	ship_stack(s, 21, (const uint8_t *)cut, 16);   /* pid 21 has no other.so */
	CHECK(!other->hit);
	ship_stack(s, 20, (const uint8_t *)cut + 8, 8);
	CHECK(other->hit && other->hit_stack);
	/* an ip hit later: no longer "only by stack words" */
	ship_ip(s, 20, 0x20020);
	CHECK(libc->hit && !libc->hit_stack);
	/* a length past DP_MAX_USTACK reads at most that many bytes */
	size_t big = DP_MAX_USTACK + 64;
	uint64_t *w = calloc(big / 8, 8);
	w[DP_MAX_USTACK / 8 + 2] = 0x40010;        /* past the bound */
	ship_stack(s, 21, (const uint8_t *)w, (uint32_t)big);
	CHECK(!theirs->hit);
	w[DP_MAX_USTACK / 8 - 1] = 0x40010;        /* the last word inside */
	ship_stack(s, 21, (const uint8_t *)w, (uint32_t)big);
	CHECK(theirs->hit && theirs->hit_stack);
	free(w);
	ship_stack(s, 99, (const uint8_t *)words, sizeof(words)); /* unknown pid */
	ship_stack(s, 20, NULL, 0);
	ship_free(s);
}

static void test_paths(void)
{
	uint32_t gone = dead_pid();
	enum ship_via via = 0;
	uint8_t *data;
	size_t len;
	char a[256], b[256];

	put("prog", exe, exelen, 0755);
	struct ship *s = one(gone, 0x400000, 0x1000, "prog", true);
	CHECK(read_one(s, &via, &len, &data) == 0 && via == SHIP_VIA_PATH && len == exelen &&
	      !memcmp(data, exe, exelen));
	free(data);
	ship_free(s);

	/* the secret: root-only, same build-id, a marker at its end */
	size_t slen = exelen + 32;
	uint8_t *sec = malloc(slen);
	memcpy(sec, exe, exelen);
	memcpy(sec + exelen, "DOMPROF-TEST-SECRET-0123456789ab", 32);
	put("secret", sec, slen, 0600);
	free(sec);

	snprintf(a, sizeof(a), "%s/secret", dir);
	snprintf(b, sizeof(b), "%s/swapped", dir);
	unlink(b);
	CHECK(symlink(a, b) == 0);
	s = one(gone, 0x400000, 0x1000, "swapped", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_SYMLINK);
	ship_free(s);

	/* a link in the middle of the path */
	snprintf(a, sizeof(a), "%s/real", dir);
	snprintf(b, sizeof(b), "%s/linkdir", dir);
	CHECK(mkdir(a, 0755) == 0 && symlink(a, b) == 0);
	put("real/prog", exe, exelen, 0755);
	s = one(gone, 0x400000, 0x1000, "linkdir/prog", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_SYMLINK);
	ship_free(s);
	s = one(gone, 0x400000, 0x1000, "real/prog", true);
	CHECK(read_one(s, &via, &len, &data) == 0);
	free(data);
	ship_free(s);

	/* the secret reached without a link (a hard link, say): not o+r */
	s = one(gone, 0x400000, 0x1000, "secret", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_NOT_PUBLIC);
	ship_free(s);

	/* the identity recorded at mmap time (format 1.1): a root-only file
	 * by path is then shipped when it is that very file, and a copy of
	 * the same bytes (another inode) or a touched file is refused */
	struct stat st;
	put("private", exe, exelen, 0700);
	snprintf(a, sizeof(a), "%s/private", dir);
	CHECK(stat(a, &st) == 0);
	s = one_id(gone, 0x400000, 0x1000, "private", true, &st);
	CHECK(read_one(s, &via, &len, &data) == 0 && via == SHIP_VIA_PATH && len == exelen);
	free(data);
	put("private", exe, exelen, 0700); /* replaced: same bytes, new inode */
	CHECK(read_one(s, &via, &len, &data) == SHIP_IDENT_DIFF);
	ship_free(s);
	CHECK(stat(a, &st) == 0);
	s = one_id(gone, 0x400000, 0x1000, "private", true, &st);
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
	CHECK(utimensat(AT_FDCWD, a, ts, 0) == 0);
	CHECK(read_one(s, &via, &len, &data) == SHIP_IDENT_DIFF);
	ship_free(s);
	s = one_id(gone, 0x400000, 0x1000, "secret", true, &st); /* a hard link's view */
	CHECK(read_one(s, &via, &len, &data) == SHIP_IDENT_DIFF);
	ship_free(s);
	unlink(a);

	/* no build-id recorded; another build-id recorded; not an ELF */
	s = one(gone, 0x400000, 0x1000, "prog", false);
	CHECK(read_one(s, &via, &len, &data) == SHIP_NO_BUILDID);
	ship_free(s);
	bid[0] ^= 1;
	s = one(gone, 0x400000, 0x1000, "prog", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_BUILDID_DIFF);
	ship_free(s);
	bid[0] ^= 1;
	put("text", "just text\n", 10, 0644);
	s = one(gone, 0x400000, 0x1000, "text", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_BUILDID_DIFF);
	ship_free(s);

	/* a fifo (no writer: a blocking open would hang) and a directory */
	snprintf(a, sizeof(a), "%s/fifo", dir);
	CHECK(mkfifo(a, 0644) == 0);
	s = one(gone, 0x400000, 0x1000, "fifo", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_NOT_REGULAR);
	ship_free(s);
	s = one(gone, 0x400000, 0x1000, "real", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_NOT_REGULAR);
	ship_free(s);
	s = one(gone, 0x400000, 0x1000, "missing", true);
	CHECK(read_one(s, &via, &len, &data) == -ENOENT);
	ship_free(s);
	/* both ways of opening a path: openat2 and the O_NOFOLLOW walk */
	for (int walk = 0; walk < 2; walk++) {
		snprintf(a, sizeof(a), "%s/real/prog", dir);
		int fd = ship_open_path(a, walk);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		snprintf(a, sizeof(a), "%s/linkdir/prog", dir);
		CHECK(ship_open_path(a, walk) == SHIP_SYMLINK);
		snprintf(a, sizeof(a), "%s/swapped", dir);
		CHECK(ship_open_path(a, walk) == SHIP_SYMLINK);
		snprintf(a, sizeof(a), "%s/missing", dir);
		CHECK(ship_open_path(a, walk) == -ENOENT);
		snprintf(a, sizeof(a), "%s/fifo", dir);
		fd = ship_open_path(a, walk); /* must not block */
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		if (walk)
			CHECK(ship_open_path("relative/path", walk) == -EINVAL);
	}
	CHECK(strstr(ship_strerror(SHIP_SYMLINK), "symbolic link") != NULL);
	CHECK(!strcmp(ship_strerror(-ENOENT), strerror(ENOENT)));
}

/* A child maps NAME executable and waits; returns its pid and where. */
static pid_t mapper(const char *name, uint64_t *start, uint64_t *len)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int pp[2];
	CHECK(pipe(pp) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(p, O_RDONLY);
		void *m = fd >= 0 ? mmap(NULL, exelen, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;
		uint64_t at = m == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)m;
		(void)!write(pp[1], &at, sizeof(at));
		pause();
		_exit(0);
	}
	close(pp[1]);
	CHECK(read(pp[0], start, sizeof(*start)) == sizeof(*start) && *start);
	close(pp[0]);
	long pg = sysconf(_SC_PAGESIZE);
	*len = (exelen + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	return pid;
}

static void test_map_files(void)
{
	enum ship_via via = 0;
	uint8_t *data;
	size_t len;
	uint64_t start, mlen;
	char a[256], b[256];
	/* not readable by all: only the live mapping can ship it */
	put("private", exe, exelen, 0700);
	pid_t pid = mapper("private", &start, &mlen);
	struct ship *s = one((uint32_t)pid, start, mlen, "private", true);
	snprintf(a, sizeof(a), "%s/secret", dir);
	snprintf(b, sizeof(b), "%s/private", dir);
	CHECK(unlink(b) == 0 && symlink(a, b) == 0); /* the path now points at the secret */
	CHECK(read_one(s, &via, &len, &data) == 0 && via == SHIP_VIA_MAP_FILES && len == exelen &&
	      !memcmp(data, exe, exelen));
	free(data);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(read_one(s, &via, &len, &data) == SHIP_SYMLINK);
	ship_free(s);

	/* a live mapping whose recorded build-id is another: refused */
	put("prog2", exe, exelen, 0755);
	pid = mapper("prog2", &start, &mlen);
	bid[5] ^= 0x40;
	s = one((uint32_t)pid, start, mlen, "prog2", true);
	CHECK(read_one(s, &via, &len, &data) == SHIP_BUILDID_DIFF);
	bid[5] ^= 0x40;
	ship_free(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A hostile guest: 50,000 files, and a process with 1,000 mappings
 * forked 3,000 times, each child mapping again (a fork alone shares its
 * parent's list and costs nothing; mapping in the child copies it). The
 * model stops at its entry bound (says so) instead of growing with the
 * loop; lookups stay indexed (the run is short). */
static void test_bounds(void)
{
	struct ship *s = ship_new();
	char path[32];
	for (unsigned i = 0; i < 50000; i++) {
		snprintf(path, sizeof(path), "/lib/f%u", i);
		struct dp_mmap f = { .pid = 1, .start = 0x7f0000000000ull + i * 0x1000ull, .len = 0x1000,
				     .path = path, .buildid_len = 1 };
		ship_mmap(s, &f);
		ship_mmap(s, &f);                /* the same identity again: no new file */
	}
	CHECK(ship_nfiles(s) == 50000);
	CHECK(!ship_over_budget(s));
	ship_free(s);

	s = ship_new();
	struct dp_mmap m = { .pid = 1, .len = 0x1000, .path = "/bin/a", .buildid_len = 1 };
	for (unsigned i = 0; i < 1000; i++) {
		m.start = 0x100000 + (uint64_t)i * 0x1000;
		ship_mmap(s, &m);
	}
	CHECK(ship_nfiles(s) == 1);           /* one file, however often mapped */
	CHECK(!ship_over_budget(s));
	for (uint32_t pid = 2; pid < 3002; pid++) {
		struct dp_task fk = { .kind = DP_TASK_FORK, .pid = pid, .ppid = 1 };
		ship_fork(s, &fk);
	}
	CHECK(!ship_over_budget(s));           /* shared: no entry copied yet */
	struct dp_mmap b = { .len = 0x1000, .start = 0x900000, .path = "/bin/b", .buildid_len = 1 };
	for (uint32_t pid = 2; pid < 3002; pid++) {
		b.pid = pid;
		ship_mmap(s, &b);
	}
	CHECK(ship_over_budget(s));            /* 3 M entries asked, 1 M kept */
	ship_ip(s, 2, 0x100800);               /* an early child got the maps */
	CHECK(ship_file_at(s, 0)->hit);
	ship_ip(s, 3001, 0x900800);            /* a late child's mapping was dropped */
	CHECK(ship_nfiles(s) == 2 && !ship_file_at(s, 1)->hit);
	ship_ip(s, 2, 0x900800);
	CHECK(ship_file_at(s, 1)->hit);
	ship_free(s);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("test-ship: needs root (/proc/PID/map_files); skipped\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/test-ship-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	chmod(dir, 0755);
	slurp_exe();
	CHECK(sym_build_id_mem(exe, exelen, bid, &bidlen) == 0 && bidlen == 20);
	uint8_t b2[20], l2;
	CHECK(sym_read_build_id("/proc/self/exe", b2, &l2) == 0 && l2 == bidlen && !memcmp(b2, bid, l2));
	CHECK(sym_build_id_mem("not elf", 7, b2, &l2) == -ENOEXEC && l2 == 0);
	test_hits();
	test_stack();
	test_bounds();
	test_paths();
	test_map_files();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	free(exe);
	return unit_done();
}
