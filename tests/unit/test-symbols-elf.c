// SPDX-License-Identifier: MIT
/*
 * Unit tests for ELF symbol lookup (src/symbols/) against the fixtures
 * mk/symbols.mk builds in build/fixtures/: each fixture is run to print
 * the real runtime addresses of its functions and its own mappings, so
 * the expected answers come from the loader, not from our own code.
 * Covers non-PIE, PIE, a shared library placed at an arbitrary address,
 * C++ demangling, stripped binaries with .gnu_debuglink debug files,
 * build-id checks, embedded ELF blobs of an active guest, perf JIT maps,
 * the vDSO and garbage ELF input. Run from the repo root.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/buildid.h"
#include "symbols/symbols.h"
#include "symbols/vmlinux.h"
#include "unit.h"

#define FIX "build/fixtures/"
#define PID 4242u

struct fsym { char name[128]; uint64_t addr; };
struct fmap { uint64_t start, end, pgoff; };
struct run { struct fsym syms[8]; int nsyms; struct fmap maps[8]; int nmaps; char path[PATH_MAX]; };

/* Run a fixture with "addrs" and collect its symbols and exec maps. */
static int run_fixture(const char *rel, struct run *r)
{
	memset(r, 0, sizeof(*r));
	if (!realpath(rel, r->path)) {
		fprintf(stderr, "missing fixture %s: run `make fixtures` from the repo root\n", rel);
		return -1;
	}
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "%s addrs", r->path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[2048];
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "sym ", 4) && r->nsyms < 8) {
			char *sp = strrchr(line, ' ');
			struct fsym *f = &r->syms[r->nsyms++];
			snprintf(f->name, sizeof(f->name), "%.*s", (int)(sp - line - 4), line + 4);
			f->addr = strtoull(sp + 1, NULL, 16);
		} else if (!strncmp(line, "map ", 4) && r->nmaps < 8) {
			unsigned long long a, b, off;
			char perms[8], path[PATH_MAX];
			if (sscanf(line + 4, "%llx-%llx %7s %llx %*s %*s %4095s", &a, &b, perms, &off, path) == 5 &&
			    strchr(perms, 'x') && !strcmp(path, r->path)) {
				struct fmap *m = &r->maps[r->nmaps++];
				m->start = a;
				m->end = b;
				m->pgoff = off;
			}
		}
	}
	pclose(p);
	return r->nsyms && r->nmaps ? 0 : -1;
}

static void feed_maps(struct sym_session *s, uint32_t dom, const struct run *r, uint64_t shift,
		      const uint8_t *bid, uint8_t bidlen, const char *path)
{
	for (int i = 0; i < r->nmaps; i++) {
		struct dp_mmap m = { .pid = PID, .start = r->maps[i].start + shift,
				     .len = r->maps[i].end - r->maps[i].start,
				     .pgoff = r->maps[i].pgoff, .path = path ? path : r->path,
				     .buildid_len = bidlen };
		if (bidlen)
			memcpy(m.buildid, bid, bidlen);
		sym_add_mmap(s, dom, &m);
	}
}

static void check_resolves(struct sym_session *s, uint32_t dom, const struct run *r, uint64_t shift,
			   const char *image, const char *only)
{
	for (int i = 0; i < r->nsyms; i++) {
		if (only && strcmp(only, r->syms[i].name))
			continue;
		uint64_t ip = r->syms[i].addr + shift;
		const struct sym_map *m = sym_find_map(s, dom, PID, DP_MODE_USER, false, 0, ip);
		CHECK(m != NULL);
		struct sym_result res;
		sym_resolve(s, m, ip, &res);
		CHECK_STR(res.symbol, r->syms[i].name);
		CHECK(res.known);
		CHECK_EQ_U64(res.offset, 0);
		CHECK_STR(res.image, image);
		CHECK_EQ_U64(sym_map_to_image(m, ip), res.sym_start);
		CHECK_STR(sym_image_name(sym_map_image(m)), image);
		sym_resolve(s, m, ip + 1, &res);
		CHECK_STR(res.symbol, r->syms[i].name);
		CHECK_EQ_U64(res.offset, 1);
	}
}

static void test_exec(const char *fix, const char *image, bool is_nopie)
{
	struct run r;
	CHECK(run_fixture(fix, &r) == 0);
	if (!r.nsyms)
		return;
	struct sym_session *s = sym_session_new();
	feed_maps(s, 0, &r, 0, NULL, 0, NULL);
	check_resolves(s, 0, &r, 0, image, NULL);
	const struct sym_map *m = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, r.syms[0].addr);
	struct sym_result res;
	sym_resolve(s, m, r.syms[0].addr, &res);
	CHECK_STR(res.image_path, r.path);
	if (is_nopie)   /* link addresses: image address == ip */
		CHECK_EQ_U64(sym_map_to_image(m, r.syms[0].addr), r.syms[0].addr);
	sym_session_free(s);
}

/* A PIE placed elsewhere than it ran (another random base). */
static void test_pie_moved(void)
{
	struct run r;
	CHECK(run_fixture(FIX "pie", &r) == 0);
	if (!r.nsyms)
		return;
	uint64_t shift = 0x7f3a5c200000ull - (r.maps[0].start & ~0xfffffull);
	struct sym_session *s = sym_session_new();
	feed_maps(s, 0, &r, shift, NULL, 0, NULL);
	check_resolves(s, 0, &r, shift, "pie", NULL);
	sym_session_free(s);
}

static void test_shared_lib(void)
{
	char path[PATH_MAX];
	CHECK(realpath(FIX "libfix.so", path) != NULL);
	void *h = dlopen(path, RTLD_NOW);
	CHECK(h != NULL);
	if (!h)
		return;
	void *fn = dlsym(h, "fixture_lib_func");
	void *other = dlsym(h, "fixture_lib_other");
	CHECK(fn && other);
	/* where the loader put the library's code */
	uint64_t rs = 0, re = 0, off = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[2048];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b, o;
		char perms[8], p[PATH_MAX];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &a, &b, perms, &o, p) == 5 &&
		    strchr(perms, 'x') && !strcmp(p, path) && (uint64_t)(uintptr_t)fn >= a &&
		    (uint64_t)(uintptr_t)fn < b) {
			rs = a; re = b; off = o;
		}
	}
	if (f)
		fclose(f);
	CHECK(rs != 0);
	uint64_t fake = 0x7f91c4a37000ull;   /* a random-looking base, page aligned */
	struct sym_session *s = sym_session_new();
	struct dp_mmap m = { .pid = PID, .start = fake, .len = re - rs, .pgoff = off, .path = path };
	sym_add_mmap(s, 0, &m);
	uint64_t ip = fake + ((uint64_t)(uintptr_t)fn - rs);
	const struct sym_map *mp = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, ip + 3);
	struct sym_result res;
	sym_resolve(s, mp, ip + 3, &res);
	CHECK_STR(res.symbol, "fixture_lib_func");
	CHECK_STR(res.image, "libfix.so");
	CHECK_STR(res.image_path, path);
	CHECK_EQ_U64(res.offset, 3);
	ip = fake + ((uint64_t)(uintptr_t)other - rs);
	sym_resolve(s, sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, ip), ip, &res);
	CHECK_STR(res.symbol, "fixture_lib_other");
	/* just past the mapping: not the library any more */
	mp = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, fake + (re - rs));
	sym_resolve(s, mp, fake + (re - rs), &res);
	CHECK_STR(res.image, "[unknown]");
	CHECK_STR(res.symbol, "[unknown]");
	CHECK(!res.known);
	sym_session_free(s);
	dlclose(h);
}

static void test_debuglink(void)
{
	/* stripped: PIE, debug file beside it; stripped2: non-PIE, in .debug/ */
	test_exec(FIX "stripped", "stripped", false);
	test_exec(FIX "stripped2", "stripped2", true);
}

/* stripped3 has no debuglink: only the build-id names its debug file */
static void test_buildid_dir(void)
{
	struct run r;
	CHECK(run_fixture(FIX "stripped3", &r) == 0);
	if (!r.nsyms)
		return;
	struct sym_session *s = sym_session_new();
	sym_set_debug_dir(s, FIX "debugroot/");
	feed_maps(s, 0, &r, 0, NULL, 0, NULL);
	check_resolves(s, 0, &r, 0, "stripped3", NULL);
	sym_session_free(s);

	/* without the debug root: no symbol names its functions, only the
	 * unwind table's FDE that starts at the function (docs/symbols.md) */
	s = sym_session_new();
	feed_maps(s, 0, &r, 0, NULL, 0, NULL);
	struct sym_result res;
	sym_resolve(s, sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, r.syms[0].addr),
		    r.syms[0].addr, &res);
	char want[64];
	snprintf(want, sizeof(want), "stripped3+0x%" PRIx64, res.sym_start);
	CHECK_STR(res.symbol, want);
	CHECK(res.fde && !res.known && res.offset == 0 && res.sym_start != 0);
	sym_session_free(s);

	/* the path now holds another binary: the recorded build-id still
	 * finds the right debug file, placed by its own program headers */
	uint8_t bid[20], len = 0;
	CHECK(sym_read_build_id(r.path, bid, &len) == 0 && len > 0);
	char other[PATH_MAX];
	CHECK(realpath(FIX "pie", other) != NULL);
	s = sym_session_new();
	sym_set_debug_dir(s, FIX "debugroot");
	feed_maps(s, 0, &r, 0, bid, len, other);
	check_resolves(s, 0, &r, 0, "pie", NULL);
	sym_session_free(s);
}

static void test_cxx(void)
{
	test_exec(FIX "cxx", "cxx", false);
	char *d = sym_demangle("_ZN2ns5Klass6methodEi");
	CHECK_STR(d, "ns::Klass::method(int)");
	free(d);
	d = sym_demangle("_ZN3std2rt10lang_start17h1234567890abcdefE");   /* Rust legacy */
	CHECK_STR(d, "std::rt::lang_start");
	free(d);
	d = sym_demangle("_RNvCs15kBYyAo9fc_7mycrate7example");           /* Rust v0 */
	CHECK_STR(d, "mycrate::example");
	free(d);
	CHECK(sym_demangle("main") == NULL);
	CHECK(sym_demangle("") == NULL);
	CHECK(sym_demangle("_Z") == NULL);
	CHECK(sym_demangle(NULL) == NULL);
}

static void test_buildid(void)
{
	struct run r;
	CHECK(run_fixture(FIX "pie", &r) == 0);
	if (!r.nsyms)
		return;
	uint8_t bid[20], len = 0;
	CHECK(sym_read_build_id(r.path, bid, &len) == 0 && len > 0);

	/* matching build-id: used */
	struct sym_session *s = sym_session_new();
	feed_maps(s, 0, &r, 0, bid, len, NULL);
	check_resolves(s, 0, &r, 0, "pie", NULL);
	sym_session_free(s);

	/* different build-id: the file was replaced, never trust its names */
	uint8_t other[20];
	memset(other, 0x5a, sizeof(other));
	s = sym_session_new();
	feed_maps(s, 0, &r, 0, other, 20, NULL);
	const struct sym_map *m = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, r.syms[0].addr);
	struct sym_result res;
	sym_resolve(s, m, r.syms[0].addr, &res);
	CHECK_STR(res.image, "pie");
	CHECK_STR(res.symbol, "[unknown]");
	const char *const *w;
	size_t nw = sym_warnings(s, &w);
	bool seen = false;
	for (size_t i = 0; i < nw; i++)
		seen |= strstr(w[i], "build-id") != NULL;
	CHECK(seen);
	sym_session_free(s);

	/* active guest: binary embedded by build-id, path absent here */
	FILE *f = fopen(r.path, "rb");
	static uint8_t buf[1 << 20];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	CHECK(n > 1000);
	char hex[41];
	for (unsigned i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	s = sym_session_new();
	sym_set_domain(s, 3, DP_DOMAIN_ACTIVE, "vm3", 0);
	struct dp_symtab st = { DP_SYMTAB_ELF, hex, buf, n };
	sym_add_symtab(s, 3, &st);
	feed_maps(s, 3, &r, 0, bid, len, "/nonexistent/in/guest/pie");
	check_resolves(s, 3, &r, 0, "pie", NULL);
	/* the host domain with the same pid sees nothing there */
	m = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, r.syms[0].addr);
	sym_resolve(s, m, r.syms[0].addr, &res);
	CHECK_STR(res.symbol, "[unknown]");
	sym_session_free(s);

	/* truncated and corrupted copies of the same blob must not crash */
	static const size_t cuts[] = { 0, 1, 4, 16, 52, 63, 64, 65, 200, 1000, 4096, 8192, 12000 };
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		for (int corrupt = 0; corrupt < 3; corrupt++) {
			static uint8_t tmp[1 << 20];
			size_t cl = cuts[c] < n ? cuts[c] : n;
			memcpy(tmp, buf, cl);
			if (corrupt == 1)
				for (size_t i = 64; i < cl; i += 7)
					tmp[i] ^= 0xa5;
			if (corrupt == 2 && cl > 0x40)   /* huge section/program header counts */
				memset(tmp + 0x20, 0xff, 0x20);
			s = sym_session_new();
			sym_set_domain(s, 3, DP_DOMAIN_ACTIVE, "vm3", 0);
			struct dp_symtab t2 = { DP_SYMTAB_ELF, hex, tmp, cl };
			sym_add_symtab(s, 3, &t2);
			feed_maps(s, 3, &r, 0, bid, len, "/nonexistent/in/guest/pie");
			for (int i = 0; i < r.nsyms; i++) {
				m = sym_find_map(s, 3, PID, DP_MODE_USER, false, 0, r.syms[i].addr);
				sym_resolve(s, m, r.syms[i].addr, &res);
				CHECK_STR(res.image, "pie");
				CHECK(res.symbol != NULL);
			}
			sym_session_free(s);
		}
	}
}

static void test_garbage_file(void)
{
	char path[] = "/tmp/domprof-test-garbage-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, "\177ELF\002\001\001garbage-garbage-garbage", 30) == 30);
	close(fd);
	struct sym_session *s = sym_session_new();
	struct dp_mmap m = { .pid = PID, .start = 0x400000, .len = 0x1000, .pgoff = 0, .path = path };
	sym_add_mmap(s, 0, &m);
	struct sym_result res;
	sym_resolve(s, sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, 0x400010), 0x400010, &res);
	CHECK_STR(res.symbol, "[unknown]");
	CHECK_STR(res.image, path + 5);
	/* a path that does not exist */
	struct dp_mmap m2 = { .pid = PID, .start = 0x500000, .len = 0x1000, .path = "/no/such/lib.so" };
	sym_add_mmap(s, 0, &m2);
	sym_resolve(s, sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, 0x500000), 0x500000, &res);
	CHECK_STR(res.symbol, "[unknown]");
	CHECK_STR(res.image, "lib.so");
	CHECK_STR(res.image_path, "/no/such/lib.so");
	sym_session_free(s);
	unlink(path);
}

static void test_perfmap(void)
{
	uint32_t pid = (uint32_t)getpid();
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "7f0000001000 100 jit_func_one\n7f0000001100 80 LazyCompile:*two file.js:3\n");
	fclose(f);
	chmod(path, 0644);   /* believed whatever the umask (sym_perfmap_read) */
	struct sym_session *s = sym_session_new();
	struct dp_mmap m = { .pid = pid, .start = 0x7f0000000000ull, .len = 0x10000, .path = "//anon" };
	sym_add_mmap(s, 0, &m);
	struct sym_result res;
	sym_resolve(s, sym_find_map(s, 0, pid, DP_MODE_USER, false, 0, 0x7f0000001010ull),
		    0x7f0000001010ull, &res);
	CHECK_STR(res.symbol, "jit_func_one");
	CHECK_STR(res.image, path + 5);
	CHECK_EQ_U64(res.offset, 0x10);
	sym_resolve(s, sym_find_map(s, 0, pid, DP_MODE_USER, false, 0, 0x7f0000001170ull),
		    0x7f0000001170ull, &res);
	CHECK_STR(res.symbol, "LazyCompile:*two file.js:3");
	sym_resolve(s, sym_find_map(s, 0, pid, DP_MODE_USER, false, 0, 0x7f0000002000ull),
		    0x7f0000002000ull, &res);
	CHECK_STR(res.symbol, "[unknown]");
	CHECK_STR(res.image, path + 5);
	/* the map model alone (sym_find_proc_map, for the agent): the same
	 * anonymous memory is "[anon]", the perf map on disk is not consulted */
	const struct sym_map *am = sym_find_proc_map(s, 0, pid, 0x7f0000001010ull);
	CHECK(am != NULL && !strcmp(sym_image_name(sym_map_image(am)), "[anon]"));
	CHECK(sym_find_proc_map(s, 0, pid, 0x7f0000010000ull) == NULL); /* past the mapping */
	CHECK(sym_find_proc_map(s, 0, pid + 1, 0x7f0000001010ull) == NULL);
	sym_session_free(s);
	s = sym_session_new(); /* and never probed when only the model is used */
	sym_add_mmap(s, 0, &m);
	am = sym_find_proc_map(s, 0, pid, 0x7f0000001010ull);
	CHECK(am != NULL && !strcmp(sym_image_name(sym_map_image(am)), "[anon]"));
	unlink(path);
	sym_resolve(s, sym_find_map(s, 0, pid, DP_MODE_USER, false, 0, 0x7f0000001010ull),
		    0x7f0000001010ull, &res);
	CHECK_STR(res.image, "[anon]"); /* the file was gone before the first probe */
	sym_session_free(s);

	/* images keyed by identity (sym_set_map_model): the same path and
	 * build-id with another inode is another image; without, the same */
	for (int ident = 0; ident < 2; ident++) {
		s = sym_session_new();
		sym_set_map_model(s, 0, ident);
		struct dp_mmap a = { .pid = 5, .start = 0x1000, .len = 0x1000, .path = "/bin/x",
				     .buildid_len = 1, .has_ident = true, .dev = 1, .ino = 2, .size = 3, .mtime_ns = 4 };
		const struct sym_map *ma = sym_add_mmap(s, 0, &a);
		a.start = 0x3000;
		const struct sym_map *mb = sym_add_mmap(s, 0, &a); /* same identity */
		a.start = 0x5000;
		a.ino = 9;
		const struct sym_map *mc = sym_add_mmap(s, 0, &a); /* replaced file */
		CHECK(ma && mb && mc && sym_map_image(ma) == sym_map_image(mb));
		CHECK((sym_map_image(ma) != sym_map_image(mc)) == (ident == 1));
		CHECK(sym_find_proc_map(s, 0, 5, 0x5800) == mc);
		sym_session_free(s);
	}

	/* embedded perf map of another pid; anonymous memory without a map */
	s = sym_session_new();
	const char *txt = "1000 20 first\n1020 20 second\ngarbage line\n\n";
	struct dp_symtab st = { DP_SYMTAB_PERFMAP, "/tmp/perf-77.map", (const uint8_t *)txt, strlen(txt) };
	sym_add_symtab(s, 0, &st);
	struct dp_mmap m77 = { .pid = 77, .start = 0, .len = 0x100000, .path = "//anon" };
	sym_add_mmap(s, 0, &m77);
	m77.pid = 78;
	sym_add_mmap(s, 0, &m77);
	sym_resolve(s, sym_find_map(s, 0, 77, DP_MODE_USER, false, 0, 0x1025), 0x1025, &res);
	CHECK_STR(res.symbol, "second");
	CHECK_STR(res.image, "perf-77.map");
	sym_resolve(s, sym_find_map(s, 0, 78, DP_MODE_USER, false, 0, 0x1025), 0x1025, &res);
	CHECK_STR(res.symbol, "[unknown]");
	CHECK_STR(res.image, "[anon]");
	sym_session_free(s);
}

/* Whose /tmp/perf-PID.map is believed (sym_perfmap_read, issue 34): the
 * reader's or root's (or a named owner's), not writable by others, never
 * through a link. The pid is this process's, whose map nobody else makes. */
static void test_perfmap_trust(void)
{
	uint32_t pid = (uint32_t)getpid();
	char path[64], why[200], *data;
	size_t len;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	unlink(path);
	CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, &data, &len, why, sizeof(why)) == -ENOENT);
	CHECK_STR(why, "");
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("1000 10 jit\n", f);
	fclose(f);
	chmod(path, 0644);
	CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, &data, &len, why, sizeof(why)) == 0);
	CHECK(data && len == 12 && !strcmp(data, "1000 10 jit\n"));
	free(data);
	CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, NULL, NULL, why, sizeof(why)) == 0);
	chmod(path, 0664);   /* group-writable: anyone in the group could have written it */
	CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, &data, &len, why, sizeof(why)) == SYM_PERFMAP_UNTRUSTED);
	CHECK(data == NULL && strstr(why, "writable by group or others") && strstr(why, path));
	chmod(path, 0644);
	if (geteuid() == 0) {
		/* another user's file: refused, unless it is the named owner's */
		CHECK(chown(path, 65534, 65534) == 0);
		CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, &data, &len, why, sizeof(why)) ==
		      SYM_PERFMAP_UNTRUSTED);
		CHECK(strstr(why, "owned by uid 65534") != NULL);
		CHECK(sym_perfmap_read(pid, 65534, &data, &len, why, sizeof(why)) == 0);
		free(data);
		CHECK(sym_perfmap_read(pid, 1000, NULL, NULL, why, sizeof(why)) == SYM_PERFMAP_UNTRUSTED);
	}
	/* a symbolic link is never followed, even to a good file */
	char target[80];
	snprintf(target, sizeof(target), "/tmp/perf-%u.map.target", pid);
	unlink(path);
	f = fopen(target, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("1000 10 jit\n", f);
		fclose(f);
		CHECK(symlink(target, path) == 0);
		CHECK(sym_perfmap_read(pid, SYM_NO_OWNER, &data, &len, why, sizeof(why)) ==
		      SYM_PERFMAP_UNTRUSTED);
		CHECK(strstr(why, "symbolic link") != NULL);
	}
	unlink(path);
	unlink(target);
}

static void test_vdso(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return;
	struct sym_session *s = sym_session_new();
	struct dp_mmap m = { .pid = PID, .start = base, .len = 0x2000, .pgoff = 0, .path = "[vdso]" };
	sym_add_mmap(s, 0, &m);
	int known = 0;
	for (uint64_t ip = base; ip < base + 0x2000; ip += 16) {
		struct sym_result res;
		sym_resolve(s, sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, ip), ip, &res);
		CHECK_STR(res.image, "[vdso]");
		known += res.known;
	}
	CHECK(known > 0);
	sym_session_free(s);
}

/* A guest kernel given as an ELF blob ("vmlinux"), moved by KASLR. The
 * non-PIE fixture stands in for vmlinux: any ELF with function symbols. */
/* elf_symtab_text (a vmlinux given as a passive domain's symbol file):
 * every fixture symbol is a "%016llx t NAME" line at its link address;
 * a bound cuts the text at a whole line; not an ELF file is refused.
 * Control: a symbol the fixture does not have is absent. */
static void test_symtab_text(void)
{
	struct run r;
	CHECK(run_fixture(FIX "nopie", &r) == 0);
	if (!r.nsyms)
		return;
	char *t;
	size_t len;
	CHECK_EQ_U64(elf_symtab_text(r.path, 1u << 24, &t, &len), 0);
	for (int i = 0; t && i < r.nsyms; i++) {
		char line[300];
		snprintf(line, sizeof(line), "%016llx t %s\n", (unsigned long long)r.syms[i].addr, r.syms[i].name);
		CHECK(strstr(t, line) != NULL);
	}
	CHECK(t && !strstr(t, " t no_such_function_here\n"));
	CHECK(t && len == strlen(t));
	free(t);
	CHECK_EQ_U64(elf_symtab_text(r.path, 100, &t, &len), 0);
	CHECK(t && len <= 100 && len > 0 && t[len - 1] == '\n');
	free(t);
	CHECK(elf_symtab_text("/proc/self/status", 1u << 20, &t, &len) < 0);
}

static void test_vmlinux_blob(void)
{
	struct run r;
	CHECK(run_fixture(FIX "nopie", &r) == 0);
	if (!r.nsyms)
		return;
	FILE *f = fopen(r.path, "rb");
	static uint8_t buf[1 << 20];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	const uint64_t kaslr = 0x2e000000;
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", kaslr);
	struct dp_symtab st = { DP_SYMTAB_ELF, "vmlinux", buf, n };
	sym_add_symtab(s, 1, &st);
	for (int i = 0; i < r.nsyms; i++) {
		uint64_t ip = r.syms[i].addr + kaslr + 2;
		struct sym_result res;
		sym_resolve(s, sym_find_map(s, 1, 0, DP_MODE_GUEST_KERNEL, true, 0x1000, ip), ip, &res);
		CHECK_STR(res.symbol, r.syms[i].name);
		CHECK_STR(res.image, "[guest.kernel]");
		CHECK_EQ_U64(res.offset, 2);
		CHECK_EQ_U64(res.sym_start, r.syms[i].addr + kaslr);
	}
	sym_session_free(s);
}

/* sym_set_name_probe: an image whose string tables (and whose debug
 * file's) lack the name answers 0 without its table; one that has it
 * answers as without the probe. The fixtures' names are in .symtab
 * (pie; cxx, "method" inside a mangled name), in a debug file beside a
 * stripped binary (stripped, stripped2) or under the build-id directory
 * (stripped3). Control: a probe that ignored debug files (or the
 * symtab's string table) would answer 0 for their names. */
static void test_name_probe(void)
{
	static const char *const fix[] = { "pie", "stripped", "stripped2", "stripped3", "cxx" };
	for (size_t f = 0; f < sizeof(fix) / sizeof(fix[0]); f++) {
		char rel[64];
		snprintf(rel, sizeof(rel), FIX "%s", fix[f]);
		struct run r;
		CHECK(run_fixture(rel, &r) == 0);
		if (!r.nsyms)
			continue;
		const char *names[] = { "fixture_alpha", "fixture_local", "method", "no_such_function_x" };
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			long got[2];
			struct sym_range *rg[2] = { NULL, NULL };
			for (int probe = 0; probe < 2; probe++) {
				struct sym_session *s = sym_session_new();
				if (!strcmp(fix[f], "stripped3"))
					sym_set_debug_dir(s, FIX "debugroot");
				if (probe)
					sym_set_name_probe(s, names[n]);
				feed_maps(s, 0, &r, 0, NULL, 0, NULL);
				const struct sym_map *m = sym_find_map(s, 0, PID, DP_MODE_USER, false, 0, r.syms[0].addr);
				got[probe] = sym_name_ranges(s, m, names[n], &rg[probe]);
				sym_session_free(s);
			}
			/* cxx: "method" is in a mangled name, which demangles to more */
			bool has = strcmp(fix[f], "cxx") && n < 2;
			CHECK_EQ_U64((uint64_t)got[0], has ? 1 : 0);
			CHECK_EQ_U64((uint64_t)got[1], (uint64_t)got[0]);
			for (long i = 0; i < got[0] && i < got[1]; i++) {
				CHECK_EQ_U64(rg[1][i].start, rg[0][i].start);
				CHECK_EQ_U64(rg[1][i].end, rg[0][i].end);
			}
			free(rg[0]);
			free(rg[1]);
		}
	}
}

int main(void)
{
	test_vmlinux_blob();
	test_symtab_text();
	test_exec(FIX "nopie", "nopie", true);
	test_exec(FIX "pie", "pie", false);
	test_pie_moved();
	test_shared_lib();
	test_debuglink();
	test_buildid_dir();
	test_cxx();
	test_buildid();
	test_garbage_file();
	test_perfmap();
	test_perfmap_trust();
	test_vdso();
	test_name_probe();
	return unit_done();
}
