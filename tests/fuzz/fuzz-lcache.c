// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the source line cache file (src/symbols/lcache.h) is
 * hostile input. The input is a cache file: lcache_parse (any key)
 * checks it; when it passes, every entry is walked as sym_srcline would
 * answer it (every string read to its NUL, the file's base name found),
 * looked up by its address, and the entries encoded again and parsed
 * back, which must give the same answers. Any crash, sanitizer report,
 * an entry out of address order, a lookup that misses, or a round trip
 * that differs is a bug.
 *
 * With FUZZ_LCACHE_VERBOSE set, each input's result is printed on stderr
 * ("fuzz-lcache: ok N entries, M with a line, I inlined" or
 * "fuzz-lcache: refused: WHY"; tests/e2e/fuzz-lcache.sh checks its
 * seeds and a damaged one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/lcache.h"

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	bool verbose = getenv("FUZZ_LCACHE_VERBOSE") != NULL;
	struct lcache c;
	uint8_t key[LCACHE_KEY];
	if (lcache_parse(data, size, NULL, 0, NULL, &c, why, sizeof(why)) < 0) {
		if (verbose)
			fprintf(stderr, "fuzz-lcache: refused: %s\n", why);
		return 0;
	}
	size_t lines = 0, inl = 0;
	volatile size_t sum = 0;
	for (size_t i = 0; i < c.n; i++) {
		const struct lcache_ent *e = &c.e[i];
		if (i && e->addr <= c.e[i - 1].addr)
			abort();
		if (lcache_find(&c, e->addr) != e)
			abort();
		if (e->ok) {
			const char *b = strrchr(e->path, '/');
			sum += strlen(b ? b + 1 : e->path) + e->line;
			lines++;
		}
		if (e->inlined) {
			sum += strlen(e->inlined) + (e->call_file ? strlen(e->call_file) : 0) + e->call_line;
			inl++;
		}
	}
	memcpy(key, data + 32, LCACHE_KEY);   /* the header's key */
	uint8_t *again;
	size_t alen;
	if (lcache_encode(key, c.e, c.n, &again, &alen) != 0)
		abort();    /* what parses encodes */
	struct lcache d;
	if (lcache_parse(again, alen, &key, 1, NULL, &d, why, sizeof(why)) != 0 || d.n != c.n)
		abort();
	for (size_t i = 0; i < c.n; i++)
		if (d.e[i].addr != c.e[i].addr || d.e[i].line != c.e[i].line || d.e[i].ok != c.e[i].ok ||
		    d.e[i].call_line != c.e[i].call_line || !same(d.e[i].path, c.e[i].path) ||
		    !same(d.e[i].inlined, c.e[i].inlined) || !same(d.e[i].call_file, c.e[i].call_file))
			abort();
	lcache_release(&d);
	free(again);
	if (verbose)
		fprintf(stderr, "fuzz-lcache: ok %zu entries, %zu with a line, %zu inlined\n", c.n, lines, inl);
	lcache_release(&c);
	return 0;
}
