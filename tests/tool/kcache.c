// SPDX-License-Identifier: MIT
/*
 * test-tool kcache CACHE KALLSYMS OUT [zero-key]: a kernel symbol cache
 * file (src/symbols/kcache.h) made by hand: CACHE's key (an existing
 * cache file, whose header is checked first), or 32 zero bytes with
 * zero-key or CACHE "-", over the index of the text KALLSYMS, checksums
 * and all, into OUT (also the fuzz seeds, tests/e2e/fuzz-kcache.sh). tests/e2e/perfdata-kcache.sh forges with it a cache that passes
 * every check but names other symbols (the control that the report reads
 * the cache), and one of another key (refused).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kcache.h"
#include "test-tool.h"
#include "util/file.h"

int cmd_kcache(int argc, char **argv)
{
	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "zero-key"))) {
		fprintf(stderr, "usage: test-tool kcache CACHE KALLSYMS OUT [zero-key]\n");
		return 2;
	}
	char *cache = NULL, *text, why[200];
	size_t clen, tlen, ixlen;
	bool zero = argc == 5 || !strcmp(argv[1], "-");
	if (!zero && (file_read_all(argv[1], KCACHE_MAX, &cache, &clen) < 0 ||
		      kcache_check((const uint8_t *)cache, clen, NULL, &ixlen, why, sizeof(why)) < 0)) {
		fprintf(stderr, "test-tool kcache: %s: not a good cache file\n", argv[1]);
		free(cache);
		return 1;
	}
	if (file_read_all(argv[2], 256u << 20, &text, &tlen) < 0) {
		fprintf(stderr, "test-tool kcache: %s: unreadable\n", argv[2]);
		free(cache);
		return 1;
	}
	uint8_t key[KCACHE_KEY] = { 0 };
	if (!zero)
		memcpy(key, cache + 24, KCACHE_KEY);
	size_t n;
	uint8_t *ix = ksyms_index_build(text, tlen, KCACHE_LEVEL, &n, NULL);
	uint8_t head[KCACHE_HEAD];
	FILE *f = ix ? fopen(argv[3], "wb") : NULL;
	int r = 1;
	if (f) {
		kcache_header(head, key, ix, n);
		r = fwrite(head, 1, sizeof(head), f) != sizeof(head) || fwrite(ix, 1, n, f) != n;
		r |= fclose(f) != 0;
	}
	if (r)
		fprintf(stderr, "test-tool kcache: %s: not written\n", argv[3]);
	free(ix);
	free(cache);
	free(text);
	return r;
}
