// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the code table a passive domain's recording
 * carries for annotate (SYMTAB kind 7, read by src/symbols/code.c): the
 * input is the table itself, embedded in a passive domain of a symbol
 * session with a small kernel table, and read back over a few ranges
 * (across entries, past the end, at the caller's bound). Nothing may
 * crash, read out of bounds or take unbounded work; every read returns
 * at most the bytes asked for. FUZZ_CODE_VERBOSE=1 prints the bytes
 * the first range returned (the known-answer check of
 * tests/e2e/fuzz-code.sh).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"

static const char KALLSYMS[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81002000 T do_work\n"
	"ffffffff81004000 T other\n"
	"ffffffff81100000 T _etext\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_session *s = sym_session_new();
	if (!s)
		return 0;
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0);
	struct dp_symtab k = { DP_SYMTAB_KALLSYMS, "kallsyms", (const uint8_t *)KALLSYMS, sizeof(KALLSYMS) - 1 };
	sym_add_symtab(s, 1, &k);
	struct dp_symtab c = { DP_SYMTAB_CODE, "[guest.kernel]", data, size };
	sym_add_symtab(s, 1, &c);
	const struct sym_map *m = sym_find_map(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002000ull);
	static uint8_t out[8192];
	static const uint64_t ranges[][3] = {
		{ 0xffffffff81002000ull, 0xffffffff81002100ull, 8192 },
		{ 0xffffffff81002ff0ull, 0xffffffff81003010ull, 8192 },
		{ 0xffffffff81000000ull, 0xffffffff81100000ull, 8192 },
		{ 0xffffffff81003000ull, 0xffffffff81004000ull, 16 },
		{ 0xfffffffffffff000ull, 0xffffffffffffffffull, 8192 },
	};
	for (size_t i = 0; m && i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		long n = sym_image_code(s, m, ranges[i][0], ranges[i][1], out, (size_t)ranges[i][2]);
		if (n > (long)ranges[i][2] || (n < 0 && n != -ENOENT))
			abort();
		if (i == 0 && getenv("FUZZ_CODE_VERBOSE"))
			printf("fuzz-code: %ld bytes%s%02x\n", n, n > 0 ? ", first " : "", n > 0 ? out[0] : 0);
	}
	sym_session_free(s);
	return 0;
}
