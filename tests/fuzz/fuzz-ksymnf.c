// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the kernel symbol name filter (SYMTAB kind 9,
 * src/format/ksymnf.h) is hostile input. The input is a filter payload,
 * opened against a fixed index (a synthetic kallsyms of 3000 symbols,
 * built once); when it opens, every block is asked about a name present
 * and a name absent. Any crash or sanitizer report is a bug, and so is a
 * filter built from the index that says "no" for a name its block holds.
 *
 * FUZZ_KSYMNF_SEED=PATH writes the index's own filter to PATH (the seed)
 * and exits; FUZZ_KSYMNF_VERBOSE prints each input's result on stderr
 * ("fuzz-ksymnf: ok N blocks" or "fuzz-ksymnf: refused: WHY";
 * tests/e2e/fuzz-ksymnf.sh checks the seed and a damaged one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "symbols/kcache.h"

static struct dp_ksymidx *ix;
static uint8_t *ixdata;

static void setup(void)
{
	size_t cap = 3000 * 48, o = 0, len;
	char *t = malloc(cap);
	if (!t)
		abort();
	for (unsigned i = 0; i < 3000; i++)
		o += (size_t)snprintf(t + o, cap - o, "%016llx %c fn_%u\n",
				      0xffffffff81000000ull + 0x40ull * i, i % 3 ? 'T' : 't', i);
	ixdata = ksyms_index_build(t, o, 1, &len, NULL);
	free(t);
	if (!ixdata || dp_ksymidx_open(ixdata, len, &ix, NULL, 0) < 0)
		abort();
	uint8_t *nf;
	size_t nflen;
	if (dp_ksymnf_build(ix, &nf, &nflen, NULL, 0) < 0)
		abort();
	/* the built filter never says no where the name is */
	struct dp_ksymnf *f;
	if (dp_ksymnf_open(nf, nflen, ix, &f, NULL, 0) < 0)
		abort();
	for (size_t b = 0; b < dp_ksymidx_nblocks(ix); b++) {
		const struct dp_ksymblk *d = dp_ksymidx_block(ix, b, NULL, 0);
		for (uint32_t i = 0; d && i < d->n; i++)
			if (!dp_ksymnf_maybe(f, b, d->names + d->name[i], d->namelen[i]))
				abort();
	}
	dp_ksymnf_free(f);
	const char *seed = getenv("FUZZ_KSYMNF_SEED");
	if (seed) {
		FILE *o2 = fopen(seed, "wb");
		if (!o2 || fwrite(nf, 1, nflen, o2) != nflen || fclose(o2))
			abort();
		exit(0);
	}
	free(nf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ix)
		setup();
	char why[200];
	struct dp_ksymnf *f;
	bool verbose = getenv("FUZZ_KSYMNF_VERBOSE") != NULL;
	if (dp_ksymnf_open(data, size, ix, &f, why, sizeof(why)) < 0) {
		if (verbose)
			fprintf(stderr, "fuzz-ksymnf: refused: %s\n", why);
		return 0;
	}
	volatile size_t maybe = 0;
	for (size_t b = 0; b <= dp_ksymidx_nblocks(ix); b++)
		maybe += dp_ksymnf_maybe(f, b, "fn_17", 5) + dp_ksymnf_maybe(f, b, "absent", 6);
	if (verbose)
		fprintf(stderr, "fuzz-ksymnf: ok %zu blocks\n", dp_ksymidx_nblocks(ix));
	dp_ksymnf_free(f);
	return 0;
}
