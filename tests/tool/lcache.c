// SPDX-License-Identifier: MIT
/*
 * test-tool lcache IN OUT OLD NEW [zero-key]: a source line cache file
 * (src/symbols/lcache.h) forged from IN: every entry at line OLD says
 * line NEW, encoded again with IN's key (or 32 zero bytes with
 * zero-key), checksums and all, into OUT. tests/e2e/srcline-cache.sh
 * forges with it a cache that passes every check but names another line
 * (the control that the report reads the cache), and one of another key
 * (refused).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/lcache.h"
#include "test-tool.h"

int cmd_lcache(int argc, char **argv)
{
	if (argc != 5 && !(argc == 6 && !strcmp(argv[5], "zero-key"))) {
		fprintf(stderr, "usage: test-tool lcache IN OUT OLD NEW [zero-key]\n");
		return 2;
	}
	struct lcache c;
	char why[256];
	if (lcache_load(argv[1], NULL, 0, NULL, &c, why, sizeof(why)) < 0) {
		fprintf(stderr, "test-tool lcache: %s\n", why);
		return 1;
	}
	uint8_t key[LCACHE_KEY] = { 0 };
	if (argc == 5)
		memcpy(key, c.buf + 32, LCACHE_KEY);
	unsigned long old = strtoul(argv[3], NULL, 10), nw = strtoul(argv[4], NULL, 10);
	size_t changed = 0;
	for (size_t i = 0; i < c.n; i++)
		if (c.e[i].ok && c.e[i].line == old) {
			c.e[i].line = (uint32_t)nw;
			changed++;
		}
	uint8_t *out;
	size_t len;
	int r = lcache_encode(key, c.e, c.n, &out, &len) < 0;
	if (!r) {
		FILE *f = fopen(argv[2], "wb");
		r = !f || fwrite(out, 1, len, f) != len;
		if (f)
			r |= fclose(f) != 0;
		free(out);
	}
	if (r)
		fprintf(stderr, "test-tool lcache: %s: not written\n", argv[2]);
	else
		printf("%zu entries, %zu changed\n", c.n, changed);
	lcache_release(&c);
	return r;
}
