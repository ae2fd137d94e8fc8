// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a recorded user stack and its registers are hostile
 * (src/symbols/unwind.c). The unwinder runs over this process's own
 * executable mappings (from /proc/self/maps, as MMAP records), so its
 * CFI is real; the input is the sample:
 *   byte 0      flags: 1 the ip is put inside this binary's text,
 *               2 stack words 0xAA.......... become text addresses,
 *               4 a 32-bit ABI, 8 no registers at all
 *   bytes 1-2   the frame bound (LE, 0..65535)
 *   then 20 LE u64 registers in perf's order (ax bx cx dx si di bp sp
 *   ip flags cs ss r8..r15), then the stack bytes (at most 65528),
 *   copied to a buffer of exactly their size so ASan sees any read past
 *   it.
 * Any crash, sanitizer report, or more frames than the bound (or 256),
 * is a bug (abort); so is a chain or completeness that differs between
 * the quick step (unwind_quick.c, on by default) and libdwfl alone (a
 * second unwinder with it off), over the same history of inputs. With FUZZ_UNWIND_VERBOSE set, each input prints
 * "fuzz-unwind: N frames" on stderr (tests/e2e/fuzz-unwind.sh checks
 * its seeds' known answers with it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"

static struct sym_session *ss;
static struct sym_unwinder *uw, *uw_dwfl;   /* the quick step on; libdwfl alone */
static uint64_t text_lo, text_len;

static void feed_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	char line[4096];
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perm[8], path[3000] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %2999s", &lo, &hi, perm, &off, path) < 4)
			continue;
		if (perm[2] != 'x' || path[0] != '/')
			continue;
		if (!strcmp(path, self) && !text_lo) {
			text_lo = lo;
			text_len = hi - lo;
		}
		struct dp_mmap m = { .pid = 1, .start = lo, .len = hi - lo, .pgoff = off,
				     .path = path };
		sym_add_mmap(ss, 0, &m);
	}
	fclose(f);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ss) {
		ss = sym_session_new();
		feed_maps();
		uw = sym_unwinder_new(ss);
		uw_dwfl = sym_unwinder_new(ss);
		sym_unwinder_set_quick(uw_dwfl, false);
	}
	if (size < 3 + 20 * 8)
		return 0;
	uint8_t flags = data[0];
	uint32_t max = (uint32_t)data[1] | (uint32_t)data[2] << 8;
	uint64_t regs[20];
	for (int i = 0; i < 20; i++)
		regs[i] = le64(data + 3 + 8 * i);
	if ((flags & 1) && text_len)
		regs[8] = text_lo + regs[8] % text_len;
	size_t slen = size - 3 - 20 * 8;
	if (slen > 65528)
		slen = 65528;
	uint8_t *stack = malloc(slen ? slen : 1);
	if (!stack)
		return 0;
	memcpy(stack, data + 3 + 20 * 8, slen);
	if ((flags & 2) && text_len)
		for (size_t o = 0; o + 8 <= slen; o += 8) {
			uint64_t w = le64(stack + o);
			if (w >> 56 == 0xaa) {
				w = text_lo + (w & 0xffffffffull) % text_len;
				memcpy(stack + o, &w, 8);
			}
		}
	struct dp_sample s;
	memset(&s, 0, sizeof(s));
	s.pid = s.tid = 1;
	s.ip = regs[8];
	s.has_uregs = !(flags & 8);
	s.uregs_abi = flags & 4 ? 1 : 2;
	s.uregs_mask = 0xff0fffull;
	s.uregs = regs;
	s.ustack_size = (uint32_t)slen;
	s.ustack_len = (uint32_t)slen;
	s.ustack = stack;
	uint64_t pcs[1024];
	bool complete;
	uint32_t lim = max > 1024 ? 1024 : max;
	uint32_t n = sym_unwind_user(uw, 0, 1, &s, pcs, lim, &complete);
	if (n > lim || n > 256)
		abort();
	/* differential: the quick step gives what libdwfl alone gives */
	uint64_t pcs2[1024];
	bool complete2;
	uint32_t n2 = sym_unwind_user(uw_dwfl, 0, 1, &s, pcs2, lim, &complete2);
	if (n2 != n || complete2 != complete || memcmp(pcs, pcs2, n * sizeof(*pcs))) {
		fprintf(stderr, "fuzz-unwind: quick step %u frames%s, libdwfl %u%s\n", n,
			complete ? " complete" : "", n2, complete2 ? " complete" : "");
		for (uint32_t i = 0; i < n || i < n2; i++)
			fprintf(stderr, "  %u: %#llx %#llx\n", i, i < n ? (unsigned long long)pcs[i] : 0ull,
				i < n2 ? (unsigned long long)pcs2[i] : 0ull);
		abort();
	}
	if (getenv("FUZZ_UNWIND_VERBOSE"))
		fprintf(stderr, "fuzz-unwind: %u frames\n", n);
	free(stack);
	return 0;
}
