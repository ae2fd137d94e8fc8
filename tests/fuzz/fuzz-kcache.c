// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the kernel symbol cache file (src/symbols/kcache.h)
 * is hostile input. The input is a cache file: kcache_check (any key)
 * validates it; when it passes, the index is opened and every block
 * decoded and walked (every name read to its NUL), as a report would.
 * Any crash, sanitizer report, or a block whose entries are not in
 * address order is a bug.
 *
 * With FUZZ_KCACHE_VERBOSE set, each input's result is printed on stderr
 * ("fuzz-kcache: ok N blocks M symbols" or "fuzz-kcache: refused: WHY";
 * tests/e2e/fuzz-kcache.sh checks its seeds and a damaged one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ksymidx.h"
#include "symbols/kcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[200];
	size_t ixlen;
	bool verbose = getenv("FUZZ_KCACHE_VERBOSE") != NULL;
	if (kcache_check(data, size, NULL, &ixlen, why, sizeof(why)) < 0) {
		if (verbose)
			fprintf(stderr, "fuzz-kcache: refused: %s\n", why);
		return 0;
	}
	struct dp_ksymidx *ix;
	if (dp_ksymidx_open(data + KCACHE_HEAD, ixlen, &ix, why, sizeof(why)) < 0)
		abort();    /* kcache_check opened it */
	size_t nsym = 0;
	volatile size_t sum = 0;
	for (size_t b = 0; b < dp_ksymidx_nblocks(ix); b++) {
		const struct dp_ksymblk *k = dp_ksymidx_block(ix, b, why, sizeof(why));
		if (!k)
			continue;
		for (uint32_t e = 0; e < k->n; e++) {
			if (e && k->addr[e] < k->addr[e - 1])
				abort();
			sum += strlen(k->names + k->name[e]) + (size_t)k->type[e] + k->mod[e];
			nsym++;
		}
	}
	if (verbose)
		fprintf(stderr, "fuzz-kcache: ok %zu blocks %zu symbols\n", dp_ksymidx_nblocks(ix), nsym);
	dp_ksymidx_free(ix);
	return 0;
}
