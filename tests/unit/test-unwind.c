// SPDX-License-Identifier: MIT
/*
 * Unit tests for DWARF unwinding of recorded user stacks
 * (src/symbols/unwind.c). The known answer is this test's own stack: a
 * noinline function snapshots its sp, bp, ip and the stack above sp, as
 * the kernel does for PERF_SAMPLE_REGS_USER/STACK_USER, and the unwinder,
 * given this process's executable mappings from /proc/self/maps as MMAP
 * records, must give the return addresses __builtin_return_address saw
 * (into outer() and into main()). Controls: the same registers over a
 * junk stack do not give them; changing the one stack word that holds
 * the return address changes the answer (so the cache, which answers the
 * second identical unwind, looks at the stack). Hostile input: random
 * registers, lengths and stack bytes, registers missing from the mask,
 * a 32-bit ABI, each bounded and without a crash (ASan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "unit.h"

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define SNAP_MAX 4096u
/* perf's x86-64 user register mask as the recorder asks for it */
#define MASK_X86_64 0xff0fffull

struct snap {
	uint64_t regs[20];      /* popcount(MASK_X86_64), perf order */
	uint8_t stack[SNAP_MAX];
	uint32_t len;
	uint64_t ret0;          /* capture's return address (into outer) */
};

static uint64_t stack_top;

/* Byte copy of the stack above sp: other frames' redzones are not this
 * function's to read as far as ASan knows, so it is not instrumented. */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(uint8_t *dst,
								      const volatile uint8_t *src,
								      uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		dst[i] = src[i];
}

__attribute__((noinline)) static void capture(struct snap *s)
{
	uint64_t ip, sp, bp;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	memset(s->regs, 0, sizeof(s->regs));
	s->regs[6] = bp;        /* bits 0..8: ax bx cx dx si di bp sp ip */
	s->regs[7] = sp;
	s->regs[8] = ip;
	uint64_t n = stack_top > sp ? stack_top - sp : 0;
	s->len = n > SNAP_MAX ? SNAP_MAX : (uint32_t)n;
	copy_stack(s->stack, (const volatile uint8_t *)(uintptr_t)sp, s->len);
	/* the stack's padding is whatever it is, as the kernel copies it;
	 * valgrind would follow its undefinedness into libdw */
	VALGRIND_MAKE_MEM_DEFINED(s->stack, s->len);
	s->ret0 = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static uint64_t ret1;   /* outer's return address (into main) */

__attribute__((noinline)) static void outer(struct snap *s)
{
	capture(s);
	ret1 = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

/* This process's executable mappings, and the top of its stack. */
static void feed_maps(struct sym_session *ss)
{
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perm[8], path[3000] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %2999s", &lo, &hi, perm, &off, path) < 4)
			continue;
		/* the mapping holding this frame (valgrind's client stack is
		 * not the one /proc calls [stack]) */
		uintptr_t here = (uintptr_t)__builtin_frame_address(0);
		if (here >= lo && here < hi)
			stack_top = hi;
		if (perm[2] != 'x' || path[0] != '/')
			continue;
		struct dp_mmap m = { .pid = (uint32_t)getpid(), .start = lo, .len = hi - lo,
				     .pgoff = off, .path = path };
		sym_add_mmap(ss, 0, &m);
	}
	fclose(f);
}

static struct dp_sample sample_of(const struct snap *s)
{
	struct dp_sample smp;
	memset(&smp, 0, sizeof(smp));
	smp.pid = smp.tid = (uint32_t)getpid();
	smp.ip = s->regs[8];
	smp.has_uregs = true;
	smp.uregs_abi = 2;
	smp.uregs_mask = MASK_X86_64;
	smp.uregs = s->regs;
	smp.ustack_size = SNAP_MAX;
	smp.ustack_len = s->len;
	smp.ustack = s->stack;
	return smp;
}

static bool has_pc(const uint64_t *pcs, uint32_t n, uint64_t pc)
{
	for (uint32_t i = 0; i < n; i++)
		if (pcs[i] == pc)
			return true;
	return false;
}

/* quick: the unwinder has the quick step on (its answers are walked
 * again, not cached), else libdwfl alone (answers from its cache) */
static void test_known(struct sym_unwinder *u, struct snap *s, bool quick)
{
	struct dp_sample smp = sample_of(s);
	uint64_t pcs[300];
	bool complete;
	uint32_t n = sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &complete);
	CHECK(n >= 3 && n <= 256);
	CHECK_EQ_U64(pcs[0], s->regs[8]);
	CHECK_EQ_U64(n > 1 ? pcs[1] : 0, s->ret0);
	CHECK_EQ_U64(n > 2 ? pcs[2] : 0, ret1);

	/* again: the same answer (libdwfl's from the cache) */
	struct sym_unwind_stats st0, st1;
	sym_unwinder_stats(u, &st0);
	uint64_t again[300];
	bool c2;
	uint32_t n2 = sym_unwind_user(u, 0, smp.pid, &smp, again, 300, &c2);
	sym_unwinder_stats(u, &st1);
	CHECK(n2 == n && c2 == complete && !memcmp(pcs, again, n * sizeof(*pcs)));
	CHECK_EQ_U64(st1.cached, st0.cached + (quick ? 0 : 1));
	CHECK_EQ_U64(st1.quick, st0.quick + (quick ? 1 : 0));

	/* a bound below the chain's length */
	CHECK_EQ_U64(sym_unwind_user(u, 0, smp.pid, &smp, again, 2, &c2), 2);
	CHECK(!c2);

	/* control for the cache: the stack word holding ret0 changed */
	struct snap *t = malloc(sizeof(*t));
	*t = *s;
	uint32_t at = 0;
	for (; at + 8 <= t->len; at += 8) {
		uint64_t v;
		memcpy(&v, t->stack + at, 8);
		if (v == s->ret0)
			break;
	}
	CHECK(at + 8 <= t->len);
	if (at + 8 <= t->len) {
		uint64_t other = ret1;   /* a return address of another function */
		memcpy(t->stack + at, &other, 8);
		struct dp_sample ts = sample_of(t);
		uint32_t n3 = sym_unwind_user(u, 0, ts.pid, &ts, again, 300, &c2);
		CHECK(n3 >= 2 && again[1] == ret1);
	}

	/* control: the same registers over a junk stack */
	memset(t->stack, 0x41, sizeof(t->stack));
	struct dp_sample js = sample_of(t);
	uint32_t nj = sym_unwind_user(u, 0, js.pid, &js, again, 300, &c2);
	CHECK(!has_pc(again, nj, s->ret0) || nj == 0);
	CHECK(!has_pc(again, nj, ret1));
	free(t);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_hostile(struct sym_unwinder *u, const struct snap *s)
{
	struct snap *t = malloc(sizeof(*t));
	uint64_t pcs[300];
	bool c;
	for (unsigned it = 0; it < 3000; it++) {
		*t = *s;
		unsigned kind = it % 4;
		if (kind == 0) {            /* random words over the real stack */
			for (unsigned k = 0; k < 8; k++) {
				uint32_t at = (uint32_t)(rnd() % (t->len ? t->len : 1));
				t->stack[at] = (uint8_t)rnd();
			}
		} else if (kind == 1) {     /* the stack's own words as pointers */
			for (uint32_t at = 0; at + 8 <= t->len; at += 8) {
				uint64_t v = (rnd() & 1) ? s->regs[7] + rnd() % 4096 : rnd();
				memcpy(t->stack + at, &v, 8);
			}
		} else if (kind == 2) {     /* random registers */
			for (unsigned r = 0; r < 20; r++)
				t->regs[r] = rnd();
			if (it & 4)
				t->regs[8] = s->regs[8] + rnd() % 64;
		} else {                    /* random length, cut anywhere */
			t->len = (uint32_t)(rnd() % (t->len + 1));
			t->regs[7] += rnd() % 32;
		}
		struct dp_sample smp = sample_of(t);
		uint32_t max = 1 + (uint32_t)(rnd() % 300);
		uint32_t n = sym_unwind_user(u, 0, smp.pid, &smp, pcs, max, &c);
		if (n > max || n > 256) {
			CHECK(n <= max && n <= 256);
			break;
		}
	}
	/* registers the unwinder needs are not in the mask; a 32-bit ABI;
	 * no registers at all; an unknown pid */
	struct dp_sample smp = sample_of(s);
	uint64_t regs[20];
	memcpy(regs, s->regs, sizeof(regs));
	smp.uregs_mask = 0x3f;   /* ax..di: no sp, no ip */
	CHECK_EQ_U64(sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &c), 0);
	smp = sample_of(s);
	smp.uregs_abi = 1;
	CHECK_EQ_U64(sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &c), 0);
	smp = sample_of(s);
	smp.has_uregs = false;
	CHECK_EQ_U64(sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &c), 0);
	smp = sample_of(s);
	smp.pid = 0x7ffffff0;
	CHECK_EQ_U64(sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &c), 0);
	smp = sample_of(s);
	smp.ustack_len = 0;
	CHECK(sym_unwind_user(u, 0, smp.pid, &smp, pcs, 300, &c) <= 1);
	free(t);
}

int main(void)
{
	struct sym_session *ss = sym_session_new();
	feed_maps(ss);
	CHECK(stack_top != 0);
	struct snap *s = malloc(sizeof(*s));
	outer(s);
	/* libdwfl alone, then with the quick step (the default): the same
	 * known chain, the same bounds over hostile stacks */
	uint64_t pcs_dwfl[300], pcs_quick[300];
	uint32_t n_dwfl = 0, n_quick = 0;
	for (int quick = 0; quick <= 1; quick++) {
		struct sym_unwinder *u = sym_unwinder_new(ss);
		sym_unwinder_set_quick(u, quick);
		test_known(u, s, quick);
		struct dp_sample smp = sample_of(s);
		bool c;
		if (quick)
			n_quick = sym_unwind_user(u, 0, smp.pid, &smp, pcs_quick, 300, &c);
		else
			n_dwfl = sym_unwind_user(u, 0, smp.pid, &smp, pcs_dwfl, 300, &c);
		test_hostile(u, s);
		struct sym_unwind_stats st;
		sym_unwinder_stats(u, &st);
		CHECK(st.samples > 3000 && (quick ? st.quick >= 1 : st.cached >= 1));
		sym_unwinder_free(u);
	}
	CHECK(n_quick == n_dwfl && n_quick && !memcmp(pcs_quick, pcs_dwfl, n_quick * sizeof(uint64_t)));
	/* an unwinder freed unused */
	sym_unwinder_free(sym_unwinder_new(ss));
	sym_session_free(ss);
	free(s);
	return unit_done();
}
