// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest's ORC tables and its stacks are hostile.
 * The input is a fake guest (guest_image in guest/mem.h):
 *   a 16-byte header: flags (bits 0-1 layout: auto, v1, v3, v4; bits
 *   2-3 the read chunk; bit 4 no frame-pointer guess), the entry count
 *   n (u16), the window and the byte limit (u16 each), the depth (u8),
 *   the first rip (u16 offset from FUZZ_TEXT), the rsp and rbp (u16
 *   offsets into the stack), a u16 added to __stop_orc_unwind (counts
 *   that disagree);
 *   then n s32 ips (mapped at FUZZ_IPT), n 6-byte entries (FUZZ_ENT),
 *   and the rest as a stack mapped at FUZZ_STACK.
 * Flag bit 5: the stack's first bytes are also the fast lookup table
 * (lookup_num_blocks, then orc_lookup). guest_orc_read checks the tables
 * (and the lookup table: when it is kept, every lookup through it must
 * give the entry a search of the whole table gives); when they pass,
 * guest_orc_unwind runs
 * from the header's registers and from each of the first 8 table ips.
 * Any crash, sanitizer report or a chain over its bounds (depth, bytes)
 * is a bug. With FUZZ_ORC_VERBOSE set, each result is printed on stderr
 * (tests/e2e/fuzz-orc.sh checks its seeds' known chains).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/orc.h"
#include "util/le.h"

#define FUZZ_TEXT  0xffffffff81000000ull
#define FUZZ_IPT   0xffffffff82000000ull
#define FUZZ_ENT   0xffffffff82800000ull
#define FUZZ_STACK 0xffffc90000010000ull

struct syms { uint64_t nip, nent, extra; bool lookup; };

static uint64_t sym(void *ctx, const char *name)
{
	const struct syms *s = ctx;
	if (!strcmp(name, "__start_orc_unwind_ip")) return FUZZ_IPT;
	if (!strcmp(name, "__stop_orc_unwind_ip")) return FUZZ_IPT + 4 * s->nip;
	if (!strcmp(name, "__start_orc_unwind")) return FUZZ_ENT;
	if (!strcmp(name, "__stop_orc_unwind")) return FUZZ_ENT + 6 * s->nent + s->extra;
	if (!strcmp(name, "_stext")) return FUZZ_TEXT;
	if (!strcmp(name, "_etext")) return FUZZ_TEXT + 0x10000;
	/* the fast lookup table: the stack's first bytes (a u32 count, then
	 * room for the 257 values of 64 KiB of text) */
	if (s->lookup && !strcmp(name, "lookup_num_blocks")) return FUZZ_STACK;
	if (s->lookup && !strcmp(name, "orc_lookup")) return FUZZ_STACK + 4;
	if (s->lookup && !strcmp(name, "orc_lookup_end")) return FUZZ_STACK + 4 + 4 * 257;
	return 0;
}

static void run(const struct guest_orc *o, struct guest_image *im, const struct guest_regs *r,
		const struct guest_orc_opts *opt, bool verbose)
{
	struct guest_mem m = { .read = guest_image_read, .ctx = im, .budget = 64u << 10 };
	struct guest_orc_chain ch;
	guest_orc_unwind(o, &m, r, opt, &ch);
	unsigned depth = opt->depth ? opt->depth : 64;
	if (depth > GUEST_ORC_MAX_DEPTH)
		depth = GUEST_ORC_MAX_DEPTH;
	size_t maxb = opt->max_bytes ? opt->max_bytes : 8192;
	if (maxb > GUEST_ORC_MAX_STACK)
		maxb = GUEST_ORC_MAX_STACK;
	if (ch.n < 1 || ch.n > depth || ch.bytes > maxb || ch.stop >= GUEST_ORC_NSTOP)
		abort();
	if (verbose) {
		fprintf(stderr, "fuzz-orc: chain %s frames=%u bytes=%llu:", guest_orc_stop_name(ch.stop), ch.n,
			(unsigned long long)ch.bytes);
		for (unsigned i = 0; i < ch.n; i++)
			fprintf(stderr, " 0x%llx", (unsigned long long)(ch.ip[i] - (guest_kptr(ch.ip[i]) ? FUZZ_TEXT : 0)));
		fprintf(stderr, "\n");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 16)
		return 0;
	static const size_t chunks[4] = { 2032, 64, 4096, 6 };
	static const enum guest_orc_layout layouts[4] = { GUEST_ORC_AUTO, GUEST_ORC_V1, GUEST_ORC_V3, GUEST_ORC_V4 };
	bool verbose = getenv("FUZZ_ORC_VERBOSE") != NULL;
	size_t n = get16(data + 1);
	struct guest_orc_opts opt = { .window = get16(data + 3), .max_bytes = get16(data + 5), .depth = data[7],
				      .no_fp = data[0] & 16 };
	struct guest_regs r = { { 0 } };
	r.r[GR_IP] = FUZZ_TEXT + get16(data + 8);
	r.r[GR_SP] = FUZZ_STACK + get16(data + 10);
	r.r[GR_BP] = FUZZ_STACK + get16(data + 12);
	r.r[GR_CS] = 0x10;
	struct syms s = { n, n, get16(data + 14), (data[0] & 32) != 0 };
	data += 16;
	size -= 16;
	if (n * 10 > size)
		return 0;
	struct guest_image im = { .n = 3 };
	im.r[0].addr = FUZZ_IPT; im.r[0].len = 4 * n; im.r[0].b = data;
	im.r[1].addr = FUZZ_ENT; im.r[1].len = 6 * n; im.r[1].b = data + 4 * n;
	im.r[2].addr = FUZZ_STACK; im.r[2].len = size - 10 * n; im.r[2].b = data + 10 * n;
	struct guest_mem m = { .read = guest_image_read, .ctx = &im, .chunk = chunks[(data[-16] >> 2) & 3],
			       .budget = 1u << 20 };
	struct guest_orc o;
	char why[256];
	int rc = guest_orc_read(&m, sym, &s, NULL, layouts[data[-16] & 3], &o, why, sizeof(why));
	if (rc < 0) {
		if (verbose)
			fprintf(stderr, "fuzz-orc: refused: %s\n", why);
		return 0;
	}
	if (o.n != n || o.etext != FUZZ_TEXT + 0x10000)
		abort();
	if (verbose)
		fprintf(stderr, "fuzz-orc: %zu entries, %s%s\n", o.n, guest_orc_layout_short(o.layout),
			o.lookup ? ", fast lookup table" : "");
	if (o.lookup) {
		uint32_t *keep = o.lookup;
		for (uint64_t ip = FUZZ_TEXT; ip < o.etext; ip += 61) {
			const struct guest_orc_entry *fast = guest_orc_find(&o, ip);
			o.lookup = NULL;
			const struct guest_orc_entry *all = guest_orc_find(&o, ip);
			o.lookup = keep;
			if (fast != all && (!fast || !all || memcmp(fast, all, sizeof(*fast))))
				abort();   /* an accepted lookup table misleads */
		}
	}
	/* the host cache's path: the raw tables, checked against the same
	 * memory, must pass, and one changed first byte must not (the
	 * first packet is always compared) */
	struct guest_orc_loc loc;
	struct guest_mem vm = m;   /* a budget of its own for each step */
	uint8_t *raw;
	vm.bytes = 0;
	if (guest_orc_locate(sym, &s, &loc, why, sizeof(why)) == 0 &&
	    guest_orc_read_raw(&vm, &loc, &raw, why, sizeof(why)) == 0) {
		size_t rl = loc.n * GUEST_ORC_RAW_ENTRY;
		vm.bytes = 0;
		if (guest_orc_verify_raw(&vm, &loc, raw, rl, 4, size, why, sizeof(why)) != 0)
			abort();
		vm.bytes = 0;
		if (rl) {
			raw[0] ^= 1;
			if (guest_orc_verify_raw(&vm, &loc, raw, rl, 4, size, why, sizeof(why)) == 0)
				abort();
		}
		free(raw);
	}
	run(&o, &im, &r, &opt, verbose);
	for (size_t i = 0; i < o.n && i < 8; i++) {
		r.r[GR_IP] = o.ip[i];
		run(&o, &im, &r, &opt, false);
	}
	guest_orc_free(&o);
	return 0;
}
