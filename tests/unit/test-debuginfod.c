// SPDX-License-Identifier: MIT
/*
 * The debuginfod client (src/symbols/debuginfod.c) without a debuginfod
 * server: the check of a downloaded file (this test binary with its own
 * build-id, the same id with one byte changed or cut short, a text file,
 * an empty file, an ELF header without a build-id note, a FIFO, a
 * directory, a missing file), the bound from DEBUGINFOD_MAXTIME, the
 * environment's DEBUGINFOD_URLS switch (unset: nothing asked, the
 * library not even loaded; --no-debuginfod's dbgfd_turn_off; the
 * unwinder's hide/restore), and two servers made here from sockets: a
 * port that refuses (DOWN, then SKIPPED for every other build-id, the
 * same answer again for the same one, one note; files already in the
 * cache still used, and checked) and a socket that
 * accepts and never answers (TIMEOUT within DEBUGINFOD_MAXTIME=1, then
 * no further query). tests/e2e/debuginfod.sh runs a real server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/buildid.h"
#include "symbols/debuginfod.h"
#include "unit.h"
#include "util/clock.h"

static char dir[] = "/tmp/test-debuginfod-XXXXXX";

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, data, len) == (ssize_t)len);
		close(fd);
	}
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(in >= 0 && out >= 0);
	char buf[65536];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static bool lib_loaded(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "libdebuginfod") != NULL;
	if (f)
		fclose(f);
	return found;
}

static void test_check_file(void)
{
	uint8_t id[20], len = 0;
	CHECK(sym_read_build_id("/proc/self/exe", id, &len) == 0 && len == 20);
	CHECK(dbgfd_check_file("/proc/self/exe", id, len) == DBGFD_OK);
	id[len - 1] ^= 1;
	CHECK(dbgfd_check_file("/proc/self/exe", id, len) == DBGFD_WRONG_ID);
	id[len - 1] ^= 1;
	CHECK(dbgfd_check_file("/proc/self/exe", id, len - 1) == DBGFD_WRONG_ID);

	char p[256];
	snprintf(p, sizeof(p), "%s/text", dir);
	write_file(p, "not an ELF file at all\n", 23);
	CHECK(dbgfd_check_file(p, id, len) == DBGFD_NOT_ELF);
	snprintf(p, sizeof(p), "%s/empty", dir);
	write_file(p, "", 0);
	CHECK(dbgfd_check_file(p, id, len) == DBGFD_NOT_ELF);
	/* a valid ELF64 header and nothing else: no note, so not the file */
	uint8_t eh[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	eh[16] = 1;      /* ET_REL */
	eh[18] = 62;     /* EM_X86_64 */
	eh[20] = 1;      /* EV_CURRENT */
	eh[52] = 64;     /* e_ehsize */
	snprintf(p, sizeof(p), "%s/bare.o", dir);
	write_file(p, eh, sizeof(eh));
	CHECK(dbgfd_check_file(p, id, len) == DBGFD_WRONG_ID);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(dbgfd_check_file(p, id, len) == DBGFD_NOT_ELF);   /* and does not block */
	CHECK(dbgfd_check_file(dir, id, len) == DBGFD_NOT_ELF);
	snprintf(p, sizeof(p), "%s/missing", dir);
	CHECK(dbgfd_check_file(p, id, len) == DBGFD_NOT_ELF);
}

static void test_bound(void)
{
	static const struct { const char *v; unsigned ms; } t[] = {
		{ NULL, DBGFD_DEFAULT_BOUND_S * 1000 }, { "", DBGFD_DEFAULT_BOUND_S * 1000 },
		{ "2", 2000 }, { "86400", 86400000u }, { "86401", DBGFD_DEFAULT_BOUND_S * 1000 },
		{ "0", DBGFD_DEFAULT_BOUND_S * 1000 }, { "-3", DBGFD_DEFAULT_BOUND_S * 1000 },
		{ "7x", DBGFD_DEFAULT_BOUND_S * 1000 }, { "abc", DBGFD_DEFAULT_BOUND_S * 1000 },
		{ "99999999999999999999999", DBGFD_DEFAULT_BOUND_S * 1000 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].v)
			setenv("DEBUGINFOD_MAXTIME", t[i].v, 1);
		else
			unsetenv("DEBUGINFOD_MAXTIME");
		CHECK_EQ_U64(dbgfd_bound_ms(), t[i].ms);
	}
	unsetenv("DEBUGINFOD_MAXTIME");
}

static void test_env(void)
{
	const uint8_t bid[20] = { 1, 2, 3 };
	const char *path = (const char *)1;
	char buf[512];
	unsetenv("DEBUGINFOD_URLS");
	struct dbgfd *d = dbgfd_new();
	CHECK(dbgfd_new() == d);            /* one per process */
	dbgfd_free(d);
	CHECK(dbgfd_find(d, bid, 20, &path) == DBGFD_OFF && path == NULL);
	CHECK(!dbgfd_note(d, DBGFD_OFF, buf, sizeof(buf)));
	CHECK(!lib_loaded());               /* off: not even loaded */
	dbgfd_free(d);

	setenv("DEBUGINFOD_URLS", "  ", 1); /* blank is unset */
	d = dbgfd_new();
	CHECK(dbgfd_find(d, bid, 20, &path) == DBGFD_OFF);
	dbgfd_free(d);

	setenv("DEBUGINFOD_URLS", "http://example.invalid", 1);
	char *saved = dbgfd_env_hide();
	CHECK(!getenv("DEBUGINFOD_URLS"));
	dbgfd_env_restore(saved);
	CHECK_STR(getenv("DEBUGINFOD_URLS"), "http://example.invalid");
	dbgfd_turn_off();
	CHECK(!getenv("DEBUGINFOD_URLS"));
	saved = dbgfd_env_hide();
	CHECK(saved == NULL);
	dbgfd_env_restore(saved);
	CHECK(!getenv("DEBUGINFOD_URLS"));
}

/* A TCP socket on 127.0.0.1 (port chosen by the kernel), listening or not. */
static int local_socket(bool listening, int *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || getsockname(s, (struct sockaddr *)&a, &al) ||
	    (listening && listen(s, 8))) {
		if (s >= 0)
			close(s);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return s;
}

static void set_server(int port)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
}

static void test_down(void)
{
	const uint8_t a[20] = { 0xaa, 1 }, b[20] = { 0xbb, 2 };
	const char *path;
	char buf[512];
	int port;
	int s = local_socket(false, &port);   /* bound, not listening: refused */
	CHECK(s >= 0);
	set_server(port);
	struct dbgfd *d = dbgfd_new();
	enum dbgfd_status st = dbgfd_find(d, a, 20, &path);
	if (st == DBGFD_NO_LIBRARY) {
		printf("libdebuginfod.so.1 not installed: server cases not run\n");
		CHECK(dbgfd_note(d, st, buf, sizeof(buf)) != NULL);
		dbgfd_free(d);
		close(s);
		return;
	}
	CHECK(st == DBGFD_DOWN && path == NULL);
	const char *n = dbgfd_note(d, st, buf, sizeof(buf));
	CHECK(n && !strncmp(n, DBGFD_NOTE_PREFIX, strlen(DBGFD_NOTE_PREFIX)) && strstr(n, "cannot reach") &&
	      strstr(n, getenv("DEBUGINFOD_URLS")));
	CHECK(!dbgfd_note(d, st, buf, sizeof(buf)));         /* told once */
	CHECK(dbgfd_find(d, b, 20, &path) == DBGFD_SKIPPED);  /* no more queries */
	CHECK(dbgfd_find(d, a, 20, &path) == DBGFD_DOWN);     /* its answer, kept */
	/* but what libdebuginfod's cache holds is still used, checked:
	 * this binary under its build-id, junk under another */
	uint8_t own[20], olen = 0;
	CHECK(sym_read_build_id("/proc/self/exe", own, &olen) == 0 && olen == 20);
	char p[512], hex[41];
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", own[i]);
	snprintf(p, sizeof(p), "%s/%s", getenv("DEBUGINFOD_CACHE_PATH"), hex);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/%s/debuginfo", getenv("DEBUGINFOD_CACHE_PATH"), hex);
	copy_file("/proc/self/exe", p);
	CHECK(dbgfd_find(d, own, 20, &path) == DBGFD_OK && path && !strcmp(path, p));
	const uint8_t c[20] = { 0xc0, 5 };
	snprintf(p, sizeof(p), "%s/c005000000000000000000000000000000000000", getenv("DEBUGINFOD_CACHE_PATH"));
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/c005000000000000000000000000000000000000/debuginfo",
		 getenv("DEBUGINFOD_CACHE_PATH"));
	write_file(p, "junk", 4);
	CHECK(dbgfd_find(d, c, 20, &path) == DBGFD_NOT_ELF && !path);
	CHECK(dbgfd_find(d, a, 0, &path) == DBGFD_NOT_FOUND);
	CHECK(dbgfd_find(d, a, 65, &path) == DBGFD_NOT_FOUND);
	dbgfd_free(d);
	close(s);
}

static void test_slow(void)
{
	const uint8_t a[20] = { 0xcc, 3 }, b[20] = { 0xdd, 4 };
	const char *path;
	char buf[512];
	int port;
	/* the kernel accepts the connection into the backlog; nobody answers */
	int s = local_socket(true, &port);
	CHECK(s >= 0);
	set_server(port);
	setenv("DEBUGINFOD_MAXTIME", "1", 1);
	struct dbgfd *d = dbgfd_new();
	int64_t t0 = mono_ms();
	enum dbgfd_status st = dbgfd_find(d, a, 20, &path);
	int64_t ms = mono_ms() - t0;
	if (st != DBGFD_NO_LIBRARY) {
		CHECK(st == DBGFD_TIMEOUT && path == NULL);
		CHECK(ms < 10000);    /* a hang check: the bound is 1 s (+1 s poll) */
		const char *n = dbgfd_note(d, st, buf, sizeof(buf));
		CHECK(n && strstr(n, "within 1 s"));
		t0 = mono_ms();
		CHECK(dbgfd_find(d, b, 20, &path) == DBGFD_SKIPPED);
		CHECK(mono_ms() - t0 < 500);
		printf("slow server: timed out after %lld ms\n", (long long)ms);
	}
	dbgfd_free(d);
	unsetenv("DEBUGINFOD_MAXTIME");
	close(s);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	char cache[300];
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);   /* not the user's */
	unsetenv("DEBUGINFOD_VERBOSE");
	unsetenv("DEBUGINFOD_PROGRESS");
	test_check_file();
	test_bound();
	test_env();
	test_down();
	test_slow();
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return unit_done();
}
