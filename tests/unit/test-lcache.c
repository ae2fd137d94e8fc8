// SPDX-License-Identifier: MIT
/*
 * The source line cache file (src/symbols/lcache.h):
 *  - known answer: entries encoded and parsed back are the same (equal
 *    strings stored once, NULLs kept), found by address; merge keeps
 *    order and the old entry of an address in both;
 *  - hostile bytes: every cut length, a flipped bit anywhere, a wrong
 *    key, entries out of order, string offsets past the strings, an ok
 *    entry without a path, unknown flags: refused (checksums fixed up
 *    where the test changes the payload, so the later checks are the
 *    ones refusing);
 *  - the key: another salt, build-id, file, the debug-file form and a
 *    touched file give other keys; a missing file gives none;
 *  - store and load through $DOMPROF_CACHE: lines/BUILDID-HASH.lines
 *    (another name for the debug-file kind and for another file), mode
 *    0600, no temporary file left; a directory that cannot be made is an
 *    error, not a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/lcache.h"
#include "unit.h"
#include "util/crc32c.h"
#include "util/le.h"

static const uint8_t key0[LCACHE_KEY] = { 1, 2, 3 };

static struct lcache_ent ents[] = {
	{ 0x1000, "/src/a.c", NULL, NULL, 10, 0, true },
	{ 0x1004, "/src/a.c", "helper", "a.c", 3, 12, true },
	{ 0x1010, NULL, NULL, NULL, 0, 0, false },
	{ 0x2000, "b.c", "helper", NULL, 7, 0, true },
};
#define NENTS (sizeof(ents) / sizeof(ents[0]))

static uint8_t *encode(size_t *len)
{
	uint8_t *f;
	CHECK(lcache_encode(key0, ents, NENTS, &f, len) == 0);
	return f;
}

/* the checksums made right again after a change in the payload */
static void reseal(uint8_t *f, size_t len)
{
	put32(f + 20, crc32c(0, f + LCACHE_HEAD, len - LCACHE_HEAD));
	put32(f + 64, crc32c(0, f, 64));
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void test_roundtrip(void)
{
	size_t len;
	uint8_t *f = encode(&len);
	struct lcache c;
	char why[256];
	size_t which = 9;
	CHECK(lcache_parse(f, len, &key0, 1, &which, &c, why, sizeof(why)) == 0);
	CHECK(which == 0);
	CHECK(c.n == NENTS);
	for (size_t i = 0; i < NENTS && i < c.n; i++) {
		CHECK_EQ_U64(c.e[i].addr, ents[i].addr);
		CHECK(same_str(c.e[i].path, ents[i].path));
		CHECK(same_str(c.e[i].inlined, ents[i].inlined));
		CHECK(same_str(c.e[i].call_file, ents[i].call_file));
		CHECK(c.e[i].line == ents[i].line && c.e[i].call_line == ents[i].call_line);
		CHECK(c.e[i].ok == ents[i].ok);
	}
	/* "/src/a.c" once: the two entries share its offset */
	CHECK(c.n >= 2 && c.e[0].path == c.e[1].path);
	CHECK(lcache_find(&c, 0x1004) == &c.e[1]);
	CHECK(lcache_find(&c, 0x1005) == NULL);
	CHECK(lcache_find(&c, 0x2000) == &c.e[3]);
	CHECK(lcache_find(&c, 0) == NULL);

	/* merge: new addresses in order, an address in both keeps the old */
	struct lcache_ent add[] = {
		{ 0x3000, "c.c", NULL, NULL, 1, 0, true },
		{ 0x1004, "other.c", NULL, NULL, 99, 0, true },
		{ 0x0800, "d.c", NULL, NULL, 2, 0, true },
	};
	struct lcache_ent *m;
	size_t n;
	lcache_merge(&c, add, 3, &m, &n);
	CHECK(n == NENTS + 2);
	for (size_t i = 1; i < n; i++)
		CHECK(m[i].addr > m[i - 1].addr);
	CHECK(n == NENTS + 2 && m[0].addr == 0x800 && m[2].addr == 0x1004 && !strcmp(m[2].path, "/src/a.c"));
	uint8_t *g;
	size_t glen;
	CHECK(lcache_encode(key0, m, n, &g, &glen) == 0);
	free(g);
	/* out of order (merge sorted add in place): refused by the encoder */
	struct lcache_ent swapped[2] = { add[1], add[0] };
	CHECK(lcache_encode(key0, swapped, 2, &g, &glen) == -EINVAL);
	free(m);
	lcache_release(&c);

	/* any key (nkeys 0), and a second key that matches */
	uint8_t keys[2][LCACHE_KEY] = { { 9 }, { 1, 2, 3 } };
	CHECK(lcache_parse(f, len, NULL, 0, NULL, &c, why, sizeof(why)) == 0);
	lcache_release(&c);
	CHECK(lcache_parse(f, len, (const uint8_t (*)[LCACHE_KEY])keys, 2, &which, &c, why, sizeof(why)) == 0);
	CHECK(which == 1);
	lcache_release(&c);
	CHECK(lcache_parse(f, len, (const uint8_t (*)[LCACHE_KEY])keys, 1, &which, &c, why, sizeof(why)) == -ESTALE);
	free(f);
}

static void test_hostile(void)
{
	size_t len;
	uint8_t *f = encode(&len);
	struct lcache c;
	char why[256];
	int bad = 0;
	for (size_t cut = 0; cut < len; cut++)
		if (lcache_parse(f, cut, &key0, 1, NULL, &c, why, sizeof(why)) == 0) {
			bad++;
			lcache_release(&c);
		}
	CHECK(bad == 0);
	for (size_t at = 0; at < len; at++)
		for (int bit = 0; bit < 8; bit++) {
			f[at] ^= (uint8_t)(1u << bit);
			if (lcache_parse(f, len, &key0, 1, NULL, &c, why, sizeof(why)) == 0) {
				bad++;
				lcache_release(&c);
			}
			f[at] ^= (uint8_t)(1u << bit);
		}
	CHECK(bad == 0);
	CHECK(lcache_parse(f, len, &key0, 1, NULL, &c, why, sizeof(why)) == 0);
	lcache_release(&c);

	/* payload changes with good checksums: the entry checks refuse them */
	uint8_t *ent = f + LCACHE_HEAD;
	struct { size_t off; uint32_t val; const char *what; } cases[] = {
		{ LCACHE_ENT + 0, 0x0fff, "address below the previous" },
		{ 16, 0x7fffffff, "path offset past the strings" },
		{ 2 * LCACHE_ENT + 16, 0, "a path on a no-line entry" },
		{ 16, LCACHE_NONE, "a line without a path" },
		{ 28, 3, "an unknown flag" },
		{ 3 * LCACHE_ENT + 12, 5, "a call line outside inlined code" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *g = malloc(len);
		memcpy(g, f, len);
		if (cases[i].off == LCACHE_ENT + 0)
			put64(g + LCACHE_HEAD + LCACHE_ENT, 0x0fff);
		else
			put32(g + LCACHE_HEAD + cases[i].off, cases[i].val);
		if (cases[i].off == 3 * LCACHE_ENT + 12)   /* entry 3 made not inlined, with a call line */
			put32(g + LCACHE_HEAD + 3 * LCACHE_ENT + 20, LCACHE_NONE);
		reseal(g, len);
		int r = lcache_parse(g, len, &key0, 1, NULL, &c, why, sizeof(why));
		if (r != -EINVAL)
			fprintf(stderr, "not refused: %s\n", cases[i].what);
		CHECK(r == -EINVAL);
		if (!r)
			lcache_release(&c);
		free(g);
	}
	/* the strings' last byte not a NUL */
	f[len - 1] = 'x';
	reseal(f, len);
	CHECK(lcache_parse(f, len, &key0, 1, NULL, &c, why, sizeof(why)) == -EINVAL);
	/* a count that claims more than the file holds */
	f[len - 1] = 0;
	put32(f + 12, 1u << 20);
	reseal(f, len);
	CHECK(lcache_parse(f, len, &key0, 1, NULL, &c, why, sizeof(why)) == -EINVAL);
	(void)ent;
	free(f);
}

static void test_key(void)
{
	char dir[] = "/tmp/test-lcache-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char a[128], b[128], why[256];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	FILE *fa = fopen(a, "w"), *fb = fopen(b, "w");
	CHECK(fa && fb);
	fputs("one", fa);
	fputs("two", fb);
	fclose(fa);
	fclose(fb);
	uint8_t bid[20] = { 0xab, 0xcd }, k1[LCACHE_KEY], k2[LCACHE_KEY];
	CHECK(lcache_key(k1, "s", bid, 20, a, NULL, why, sizeof(why)) == 0);
	CHECK(lcache_key(k2, "s", bid, 20, a, NULL, why, sizeof(why)) == 0);
	CHECK(!memcmp(k1, k2, LCACHE_KEY));
	CHECK(lcache_key(k2, "t", bid, 20, a, NULL, why, sizeof(why)) == 0);   /* another salt */
	CHECK(memcmp(k1, k2, LCACHE_KEY));
	CHECK(lcache_key(k2, "s", bid, 19, a, NULL, why, sizeof(why)) == 0);
	CHECK(memcmp(k1, k2, LCACHE_KEY));
	CHECK(lcache_key(k2, "s", bid, 20, b, NULL, why, sizeof(why)) == 0);
	CHECK(memcmp(k1, k2, LCACHE_KEY));
	CHECK(lcache_key(k2, "s", bid, 20, a, b, why, sizeof(why)) == 0);
	CHECK(memcmp(k1, k2, LCACHE_KEY));
	CHECK(lcache_key(k2, "s", bid, 0, a, NULL, why, sizeof(why)) < 0);
	CHECK(lcache_key(k2, "s", bid, 20, dir, NULL, why, sizeof(why)) < 0);   /* a directory */
	/* the file written again: another key */
	struct stat st;
	CHECK(stat(a, &st) == 0);
	fa = fopen(a, "a");
	fputs("!", fa);
	fclose(fa);
	CHECK(lcache_key(k2, "s", bid, 20, a, NULL, why, sizeof(why)) == 0);
	CHECK(memcmp(k1, k2, LCACHE_KEY));
	unlink(a);
	CHECK(lcache_key(k2, "s", bid, 20, a, NULL, why, sizeof(why)) == -ENOENT);
	unlink(b);
	rmdir(dir);
}

static void test_store(void)
{
	char dir[] = "/tmp/test-lcache-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	setenv("DOMPROF_CACHE", dir, 1);
	uint8_t bid[3] = { 0xab, 0x00, 0x01 };
	char path[4200], why[256];
	char own[4200], dbg[4200], other[4200];
	CHECK(lcache_path(bid, 3, "/bin/x", false, own, sizeof(own)));
	CHECK(lcache_path(bid, 3, "/bin/x", true, dbg, sizeof(dbg)));
	CHECK(lcache_path(bid, 3, "/bin/y", false, other, sizeof(other)));
	CHECK(strstr(own, "/lines/ab0001-") != NULL && strlen(strstr(own, "/lines/ab0001-")) == 14 + 16 + 6);
	CHECK(strcmp(own, dbg) && strcmp(own, other) && strcmp(dbg, other));
	CHECK(!lcache_path(bid, 0, "/bin/x", false, path, sizeof(path)));
	CHECK(lcache_path(bid, 3, "/bin/x", false, path, sizeof(path)));
	CHECK(!strcmp(path, own));
	struct lcache c;
	CHECK(lcache_load(path, &key0, 1, NULL, &c, why, sizeof(why)) == -ENOENT);
	size_t len;
	uint8_t *f = encode(&len);
	CHECK(lcache_store(path, f, len, why, sizeof(why)) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	size_t which;
	CHECK(lcache_load(path, &key0, 1, &which, &c, why, sizeof(why)) == 0);
	CHECK(c.n == NENTS && c.buf != NULL);
	CHECK(c.n == NENTS && !strcmp(c.e[1].inlined, "helper"));
	lcache_release(&c);
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)gettid());
	CHECK(access(tmp, F_OK) != 0);
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/lines", dir);
	rmdir(tmp);
	/* a cache directory under a file: an error */
	snprintf(tmp, sizeof(tmp), "%s/afile", dir);
	FILE *x = fopen(tmp, "w");
	fclose(x);
	snprintf(path, sizeof(path), "%s/afile/sub/ab.lines", dir);
	CHECK(lcache_store(path, f, len, why, sizeof(why)) < 0);
	unlink(tmp);
	rmdir(dir);
	/* no directory at all: no path */
	unsetenv("DOMPROF_CACHE");
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL, *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
	unsetenv("HOME");
	unsetenv("XDG_CACHE_HOME");
	CHECK(!lcache_path(bid, 3, "/bin/x", false, path, sizeof(path)));
	if (home)
		setenv("HOME", home, 1);
	if (xdg)
		setenv("XDG_CACHE_HOME", xdg, 1);
	free(home);
	free(xdg);
	free(f);
}

static void test_mode(void)
{
	unsetenv("DOMPROF_LINE_CACHE");
	CHECK(lcache_mode() == 1);
	setenv("DOMPROF_LINE_CACHE", "0", 1);
	CHECK(lcache_mode() == 0);
	setenv("DOMPROF_LINE_CACHE", "verbose", 1);
	CHECK(lcache_mode() == 2);
	setenv("DOMPROF_LINE_CACHE", "1", 1);
	CHECK(lcache_mode() == 1);
	unsetenv("DOMPROF_LINE_CACHE");
}

int main(void)
{
	test_roundtrip();
	test_hostile();
	test_key();
	test_store();
	test_mode();
	return unit_done();
}
