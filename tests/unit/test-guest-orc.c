// SPDX-License-Identifier: MIT
/*
 * The ORC tables and the unwinder of src/guest/orc.c on synthetic data: a
 * small v3 table (and a v1 one) for a made-up text, laid in a fake guest
 * memory (guest_image) with a task stack and an IRQ stack. Known chains:
 * CALL frames to an end-of-stack entry; an IRQ on the IRQ stack (a full
 * pt_regs) back to the task stack and a syscall's user-mode pt_regs (the
 * user rip last); an iret frame (REGS_PARTIAL); the frame-pointer guess
 * for an ip outside the table. Hostile ones cut with their reason: sp not
 * moving, sp going down, a switch back to a stack already left, a huge
 * recursion (depth, then the byte limit), an unmapped or misaligned
 * stack. Table checks: unsorted ips, counts that disagree, fields the
 * layout forbids, no symbols; the four layouts (v1, 6.3's v2, v3, 7.1's
 * v4 with its renumbered registers) told from the table alone, whatever
 * version is given, each other layout forced refused; the known-stack
 * check (guest_orc_check) passing, and refusing a table whose function
 * entries do not unwind to the entry point.
 */
#include <errno.h>
#include <stdlib.h>

#include "guest/orc.h"
#include "unit.h"
#include "util/le.h"

#define TEXT  0xffffffff81000000ull
#define IPT   0xffffffff82000000ull   /* the ip table */
#define ENT   0xffffffff82100000ull   /* the entries */
#define TASK  0xffffc90000010000ull   /* a 16 KiB task stack */
#define IRQ   0xffffc90000100000ull   /* a 16 KiB IRQ stack */
#define STK   0x4000u
#define USER_IP 0x401000ull

/* v3 fields */
enum { U = 0, END = 1, CALL = 2, REGS = 3, PART = 4 };
struct e { uint32_t ip; unsigned sp_reg; int sp_off; unsigned bp_reg; int bp_off; unsigned type; };

/* The made-up text: leaf 0x100, mid 0x200, top 0x300, a kthread's first
 * frame 0x400, a syscall entry 0x500, an IRQ entry 0x600, a loop 0x800,
 * sp down 0x900, a recursion 0xa00, end of text 0xf00. */
static const struct e tab[] = {
	{ 0x000, 0, 0, 0, 0, U },
	{ 0x100, ORC_REG_SP, 8, 0, 0, CALL },
	{ 0x104, ORC_REG_SP, 24, 0, 0, CALL },
	{ 0x200, ORC_REG_SP, 8, 0, 0, CALL },
	{ 0x210, ORC_REG_SP, 16, ORC_REG_PREV_SP, -16, CALL },
	{ 0x300, ORC_REG_SP, 8, 0, 0, CALL },
	{ 0x400, 0, 0, 0, 0, END },
	{ 0x500, 0, 0, 0, 0, U },
	{ 0x510, ORC_REG_SP, 0, 0, 0, REGS },
	{ 0x600, ORC_REG_SP, 0, 0, 0, PART },
	{ 0x610, ORC_REG_SP, 0, 0, 0, REGS },
	{ 0x700, 0, 0, 0, 0, U },
	{ 0x800, ORC_REG_SP, 0, 0, 0, CALL },
	{ 0x900, ORC_REG_SP, -16, 0, 0, CALL },
	{ 0xa00, ORC_REG_SP, 8, 0, 0, CALL },
	{ 0xf00, 0, 0, 0, 0, U },
};
#define NTAB (sizeof(tab) / sizeof(tab[0]))

static uint8_t ipt[NTAB * 4], ent[NTAB * 6];
static uint8_t task[STK], irq[STK];
static struct guest_image im;

/* v4's numbers of our registers (orc.c map_reg, inverted) */
static unsigned v4_reg(unsigned r)
{
	switch (r) {
	case ORC_REG_SP: return 3;
	case ORC_REG_PREV_SP: return 8;
	case ORC_REG_SP_INDIRECT: return 9;
	case ORC_REG_BP_INDIRECT: return 10;
	default: return r;   /* UNDEFINED, DX, BP, R10, R13 keep theirs */
	}
}

/* lay: the layout to encode the table in */
static void build_layout(enum guest_orc_layout lay)
{
	for (size_t i = 0; i < NTAB; i++) {
		put32(ipt + 4 * i, (uint32_t)(TEXT + tab[i].ip - (IPT + 4 * i)));
		uint8_t *b = ent + 6 * i;
		put16(b, (uint16_t)tab[i].sp_off);
		put16(b + 2, (uint16_t)tab[i].bp_off);
		b[4] = (uint8_t)(tab[i].sp_reg | tab[i].bp_reg << 4);
		if (lay == GUEST_ORC_V4)
			b[4] = (uint8_t)(v4_reg(tab[i].sp_reg) | v4_reg(tab[i].bp_reg) << 4);
		if (lay == GUEST_ORC_V3 || lay == GUEST_ORC_V4)
			b[5] = (uint8_t)(tab[i].type | (tab[i].type >= REGS ? 8 : 0));
		else if (lay == GUEST_ORC_V1)   /* CALL 0, REGS 1, PARTIAL 2; end bit 4; no info = sp_reg 0 */
			b[5] = (uint8_t)(tab[i].type == END ? 4 : tab[i].type >= CALL ? tab[i].type - CALL : 0);
		else   /* v2: v1 with signal 4 (set on REGS types) and end 8 */
			b[5] = (uint8_t)(tab[i].type == END ? 8 : tab[i].type > CALL ? (tab[i].type - CALL) | 4 : 0);
	}
	memset(&im, 0, sizeof(im));
	uint64_t a[4] = { IPT, ENT, TASK, IRQ };
	const uint8_t *p[4] = { ipt, ent, task, irq };
	size_t l[4] = { sizeof(ipt), sizeof(ent), STK, STK };
	for (int i = 0; i < 4; i++) {
		im.r[i].addr = a[i];
		im.r[i].len = l[i];
		im.r[i].b = p[i];
	}
	im.n = 4;
}

static void build(int v1)
{
	build_layout(v1 ? GUEST_ORC_V1 : GUEST_ORC_V3);
}

static void put(uint64_t addr, uint64_t v)
{
	if (addr >= TASK && addr + 8 <= TASK + STK)
		put64(task + (addr - TASK), v);
	else if (addr >= IRQ && addr + 8 <= IRQ + STK)
		put64(irq + (addr - IRQ), v);
	else
		abort();
}

/* A pt_regs at addr. */
static void put_regs(uint64_t addr, uint64_t ip, uint64_t cs, uint64_t sp, uint64_t bp)
{
	for (unsigned i = 0; i < GR_N; i++)
		put(addr + 8 * i, 0x1000 + i);
	put(addr + 8 * GR_IP, ip);
	put(addr + 8 * GR_CS, cs);
	put(addr + 8 * GR_SP, sp);
	put(addr + 8 * GR_SS, 0x18);
	put(addr + 8 * GR_BP, bp);
}

static struct guest_regs kregs(uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct guest_regs r = { { 0 } };
	r.r[GR_IP] = ip;
	r.r[GR_SP] = sp;
	r.r[GR_BP] = bp;
	r.r[GR_CS] = 0x10;
	return r;
}

static struct guest_mem stackmem(void)
{
	struct guest_mem m = { .read = guest_image_read, .ctx = &im, .budget = 1u << 20 };
	return m;
}

static struct guest_orc o;

static void unwind(struct guest_regs r, const struct guest_orc_opts *opt, struct guest_orc_chain *ch)
{
	struct guest_mem m = stackmem();
	CHECK(guest_orc_unwind(&o, &m, &r, opt, ch) == 0);
	CHECK(ch->bytes <= (opt && opt->max_bytes ? opt->max_bytes : 8192));
}

static void test_chains(void)
{
	struct guest_orc_chain ch;
	/* CALL frames to a kthread's end: leaf (sp+24) -> mid (sp+16, bp
	 * saved) -> top (sp+8) -> 0x405 (END). */
	memset(task, 0, STK);
	uint64_t S = TASK + 0x3000;
	put(S + 16, TEXT + 0x215);
	put(S + 24, 0xbbbb);            /* mid's saved bp */
	put(S + 32, TEXT + 0x315);
	put(S + 40, TEXT + 0x405);
	unwind(kregs(TEXT + 0x108, S, 0xaaaa), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "end");
	CHECK(ch.n == 4);
	CHECK_EQ_U64(ch.ip[0], TEXT + 0x108);
	CHECK_EQ_U64(ch.ip[1], TEXT + 0x215);
	CHECK_EQ_U64(ch.ip[2], TEXT + 0x315);
	CHECK_EQ_U64(ch.ip[3], TEXT + 0x405);
	CHECK(ch.reads == 1 && ch.bytes == 2032);  /* one window: one packet */
	/* A return address just past the caller's last byte (a call at a
	 * function's end) is looked up at ip - 1: 0x500 is END's (0x400..),
	 * not the syscall entry's. */
	put(S + 40, TEXT + 0x500);
	unwind(kregs(TEXT + 0x108, S, 0xaaaa), NULL, &ch);
	CHECK(ch.stop == GUEST_ORC_END && ch.n == 4);
	put(S + 40, TEXT + 0x405);
	/* The same with 16-byte windows: more reads, same chain. */
	struct guest_orc_opts small = { .window = 16 };
	unwind(kregs(TEXT + 0x108, S, 0xaaaa), &small, &ch);
	CHECK(ch.stop == GUEST_ORC_END && ch.n == 4 && ch.reads >= 2);

	/* An IRQ: leaf on the IRQ stack (sp+24) -> IRQ entry 0x615 (REGS):
	 * pt_regs back to mid on the task stack (lower: a switch) -> the
	 * syscall entry 0x515 (REGS) -> a user-mode pt_regs: the user rip. */
	memset(irq, 0, STK);
	uint64_t I = IRQ + 0x3f00, P = TASK + 0x3e00;
	put(I + 16, TEXT + 0x615);
	put_regs(I + 24, TEXT + 0x215, 0x10, P, 0xcccc);
	put(P + 0, 0xdddd);             /* mid's saved bp */
	put(P + 8, TEXT + 0x515);
	put_regs(P + 16, USER_IP, 0x33, 0x7ffc0000, 0);
	unwind(kregs(TEXT + 0x104, I, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "user");
	CHECK(ch.n == 5 && ch.switches == 1);
	CHECK_EQ_U64(ch.ip[1], TEXT + 0x615);
	CHECK_EQ_U64(ch.ip[2], TEXT + 0x215);
	CHECK_EQ_U64(ch.ip[3], TEXT + 0x515);
	CHECK_EQ_U64(ch.ip[4], USER_IP);
	/* An iret frame (REGS_PARTIAL at 0x600) from user mode. */
	put(I + 0, USER_IP + 4);
	put(I + 8, 0x33);
	put(I + 24, 0x7ffc0000);
	unwind(kregs(TEXT + 0x600, I, 0), NULL, &ch);
	CHECK(ch.stop == GUEST_ORC_USER && ch.n == 2);
	CHECK_EQ_U64(ch.ip[1], USER_IP + 4);

	/* The frame-pointer guess: an ip outside the text, bp -> (0, ret
	 * into top) -> END. Without the guess: no-entry. */
	put(S + 16, 0);
	put(S + 24, TEXT + 0x315);
	put(S + 32, TEXT + 0x405);
	unwind(kregs(TEXT + 0x10000, S, S + 16), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "end");
	CHECK(ch.n == 3 && ch.fp_frames == 1);
	struct guest_orc_opts nofp = { .no_fp = true };
	unwind(kregs(TEXT + 0x10000, S, S + 16), &nofp, &ch);
	CHECK(ch.stop == GUEST_ORC_NOENTRY && ch.n == 1);
	/* A garbage return address: not kernel; one into an entry without
	 * info: undefined. */
	put(S + 16, 0x1234);
	unwind(kregs(TEXT + 0x108, S, 0), NULL, &ch);
	CHECK(ch.stop == GUEST_ORC_NOTKERNEL && ch.n == 2);
	put(S + 16, TEXT + 0x705);
	unwind(kregs(TEXT + 0x108, S, 0), NULL, &ch);
	CHECK(ch.stop == GUEST_ORC_UNDEF && ch.n == 2);
}

/* A stop in a thunk with no unwind information (entry 0x700: none):
 * cut, unless the range is a no-frame one, where the return address on
 * top of the stack is the caller; only for the innermost frame. */
static void test_noframe(void)
{
	struct guest_orc_chain ch;
	memset(task, 0, STK);
	uint64_t S = TASK + 0x3000;
	put(S, TEXT + 0x305);           /* the thunk's caller, top (sp+8) -> END */
	put(S + 8, TEXT + 0x405);
	unwind(kregs(TEXT + 0x708, S, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "undefined");
	CHECK(ch.n == 1);
	guest_orc_add_noframe(&o, TEXT + 0x700, TEXT + 0x800);
	CHECK(o.nnoframe == 1);
	unwind(kregs(TEXT + 0x708, S, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "end");
	CHECK(ch.n == 3 && ch.ip[1] == TEXT + 0x305 && ch.ip[2] == TEXT + 0x405);
	/* a return address into the range is not a no-frame frame: cut */
	put(S, TEXT + 0x705);
	unwind(kregs(TEXT + 0x708, S, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "undefined");
	CHECK(ch.n == 2);
	/* ranges refused: empty, too big, user half, past the bound */
	guest_orc_add_noframe(&o, TEXT + 0x900, TEXT + 0x900);
	guest_orc_add_noframe(&o, TEXT, TEXT + (1u << 20));
	guest_orc_add_noframe(&o, 0x1000, 0x2000);
	CHECK(o.nnoframe == 1);
	for (int i = 0; i < 8; i++)
		guest_orc_add_noframe(&o, TEXT + 0xf00, TEXT + 0xf10);
	CHECK(o.nnoframe == GUEST_ORC_MAX_NOFRAME);
	o.nnoframe = 0;
}

static void test_hostile(void)
{
	struct guest_orc_chain ch;
	uint64_t S = TASK + 0x2000;
	/* sp does not move (CALL sp+0): a loop. */
	put(S - 8, TEXT + 0x805);
	unwind(kregs(TEXT + 0x805, S, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "loop");
	CHECK(ch.n == 1);
	/* sp goes down (CALL sp-16). */
	put(S - 24, TEXT + 0x108);
	unwind(kregs(TEXT + 0x905, S, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "sp-down");
	/* A switch back to a stack already left: a pt_regs on the task
	 * stack to the IRQ stack, one there back below the first. */
	uint64_t T = TASK + 0x3000, I = IRQ + 0x100;
	put_regs(T, TEXT + 0x610, 0x10, I, 0);
	put_regs(I, TEXT + 0x610, 0x10, T - 0x800, 0);
	unwind(kregs(TEXT + 0x610, T, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "loop");
	CHECK(ch.n == 2);
	/* A huge recursion: every word of the stack returns into 0xa05. */
	for (uint64_t a = TASK; a < TASK + STK; a += 8)
		put(a, TEXT + 0xa05);
	unwind(kregs(TEXT + 0xa05, TASK + 8, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "depth");
	CHECK(ch.n == 64);
	struct guest_orc_opts deep = { .depth = 1000, .max_bytes = 256 };
	unwind(kregs(TEXT + 0xa05, TASK + 8, 0), &deep, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "bytes");
	CHECK(ch.n <= 33 && ch.bytes <= 256);
	struct guest_orc_opts deepest = { .depth = 1000, .max_bytes = 1 << 20 };
	unwind(kregs(TEXT + 0xa05, TASK + 8, 0), &deepest, &ch);
	CHECK(ch.stop == GUEST_ORC_DEPTH && ch.n == GUEST_ORC_MAX_DEPTH);
	/* The recursion runs off the stack's end into unmapped memory. */
	unwind(kregs(TEXT + 0xa05, TASK + STK - 64, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "unreadable");
	/* A small budget on the stack's guest_mem: bytes. */
	struct guest_mem m = stackmem();
	m.budget = 100;
	struct guest_regs r = kregs(TEXT + 0x108, TASK + 0x100, 0);
	CHECK(guest_orc_unwind(&o, &m, &r, NULL, &ch) == 0 && ch.stop == GUEST_ORC_BYTES);
	/* Misaligned and user-half stack pointers. */
	unwind(kregs(TEXT + 0x108, TASK + 0x101, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "bad-sp");
	unwind(kregs(TEXT + 0x108, 0x7ffc0000, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "bad-sp");
	/* A rule on r10 after a CALL frame (not known): bad-reg. Entry 0x100
	 * rewritten for the case. */
	struct guest_orc_entry keep = o.e[1];
	o.e[1].sp_reg = ORC_REG_R10;
	put(TASK + 0x100 + 16, TEXT + 0x101);
	unwind(kregs(TEXT + 0x108, TASK + 0x100, 0), NULL, &ch);
	CHECK_STR(guest_orc_stop_name(ch.stop), "bad-register");
	o.e[1] = keep;
	/* User-mode registers are refused. */
	m = stackmem();
	r.r[GR_CS] = 0x33;
	CHECK(guest_orc_unwind(&o, &m, &r, NULL, &ch) == -EINVAL && ch.n == 1);
}

/* Symbols of the synthetic tables for guest_orc_read. */
static uint64_t syms_bad_count;
static uint64_t sym(void *ctx, const char *name)
{
	if (ctx)
		return 0;
	if (!strcmp(name, "__start_orc_unwind_ip")) return IPT;
	if (!strcmp(name, "__stop_orc_unwind_ip")) return IPT + sizeof(ipt);
	if (!strcmp(name, "__start_orc_unwind")) return ENT;
	if (!strcmp(name, "__stop_orc_unwind")) return ENT + sizeof(ent) - syms_bad_count;
	if (!strcmp(name, "_stext")) return TEXT;
	if (!strcmp(name, "_etext")) return TEXT + 0x1000;
	if (!strcmp(name, "vfs_read")) return TEXT + 0x100;   /* a known function: the leaf */
	if (!strcmp(name, "schedule")) return TEXT + 0x200;
	return 0;
}

static void test_tables(void)
{
	char why[256];
	struct guest_orc t;
	struct guest_mem m = stackmem();
	/* v1 table: told apart, the same entries decoded. */
	build(1);
	CHECK(guest_orc_read(&m, sym, NULL, "6.1.0-57-amd64", GUEST_ORC_AUTO, &t, why, sizeof(why)) == 0);
	CHECK(t.layout == GUEST_ORC_V1 && t.n == NTAB && t.ends == 1 && t.undefined == 4);
	CHECK(t.etext == TEXT + 0x1000);
	for (size_t i = 0; i < NTAB; i++) {
		CHECK(t.e[i].type == o.e[i].type && t.e[i].sp_reg == o.e[i].sp_reg && t.e[i].sp_offset == o.e[i].sp_offset);
		CHECK_EQ_U64(t.ip[i], o.ip[i]);
	}
	CHECK(guest_orc_find(&t, TEXT + 0x10f) == &t.e[2]);
	CHECK(guest_orc_find(&t, TEXT + 0x1000) == NULL);
	guest_orc_free(&t);
	/* The version does not decide (backports): a v1 table with a 6.12
	 * version is still v1. Each layout is told from its table, the
	 * same entries decoded; every other layout forced is refused. */
	CHECK(guest_orc_read(&m, sym, NULL, "6.12.117+deb12-amd64", GUEST_ORC_AUTO, &t, why, sizeof(why)) == 0);
	CHECK(t.layout == GUEST_ORC_V1);
	guest_orc_free(&t);
	for (int lay = GUEST_ORC_V1; lay <= GUEST_ORC_V4; lay++) {
		build_layout((enum guest_orc_layout)lay);
		CHECK(guest_orc_read(&m, sym, NULL, "5.14.0-570.el9", GUEST_ORC_AUTO, &t, why, sizeof(why)) == 0);
		CHECK(t.layout == (enum guest_orc_layout)lay);
		for (size_t i = 0; i < NTAB; i++)
			CHECK(t.e[i].type == o.e[i].type && t.e[i].sp_reg == o.e[i].sp_reg &&
			      t.e[i].bp_reg == o.e[i].bp_reg && t.e[i].signal == o.e[i].signal);
		guest_orc_free(&t);
		for (int other = GUEST_ORC_V1; other <= GUEST_ORC_V4; other++) {
			if (other == lay)
				continue;
			why[0] = 0;
			CHECK(guest_orc_read(&m, sym, NULL, NULL, (enum guest_orc_layout)other, &t, why, sizeof(why)) ==
			      -EBADMSG);
			CHECK(strstr(why, "refused") != NULL);
		}
	}
	build(0);
	CHECK(guest_orc_read(&m, sym, NULL, "6.12.117+deb12-amd64", GUEST_ORC_AUTO, &t, why, sizeof(why)) == 0);
	CHECK(t.layout == GUEST_ORC_V3);
	/* The known stacks: vfs_read and schedule unwind to the entry point
	 * (0x400, an end-of-stack entry); with the leaf's rule on another
	 * register (what a wrong numbering gives) they do not. */
	CHECK(guest_orc_check(&t, sym, NULL, why, sizeof(why)) == 0);
	CHECK(guest_orc_check(&t, sym, &m, why, sizeof(why)) == -ENOENT);
	t.e[1].sp_reg = ORC_REG_BP;
	CHECK(guest_orc_check(&t, sym, NULL, why, sizeof(why)) == -EBADMSG);
	CHECK(strstr(why, "v3 refused") && strstr(why, "1 of 2 known stacks") && strstr(why, "vfs_read"));
	guest_orc_free(&t);
	/* Counts that disagree; no symbols (a kernel without ORC). */
	syms_bad_count = 6;
	CHECK(guest_orc_read(&m, sym, NULL, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -EBADMSG);
	CHECK(strstr(why, "disagree") != NULL);
	syms_bad_count = 1;
	CHECK(guest_orc_read(&m, sym, NULL, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -EBADMSG);
	syms_bad_count = 0;
	CHECK(guest_orc_read(&m, sym, &m, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -ENOENT);
	/* A small read budget: the read's error, nothing kept. */
	struct guest_mem tight = stackmem();
	tight.budget = 10;
	CHECK(guest_orc_read(&tight, sym, NULL, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -E2BIG);
	CHECK(t.ip == NULL && t.n == 0);
	/* Unsorted ips; a field the layout forbids (v3 type 7); v1 forced on
	 * a v3 table. */
	uint8_t bad[sizeof(ipt)];
	memcpy(bad, ipt, sizeof(ipt));
	put32(bad + 4 * 5, get32(bad + 4 * 5) - 0x200);
	CHECK(guest_orc_from_tables(bad, IPT, ent, NTAB, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -EBADMSG);
	CHECK(strstr(why, "not sorted") != NULL);
	uint8_t bade[sizeof(ent)];
	memcpy(bade, ent, sizeof(ent));
	bade[6 * 3 + 5] = 7;
	CHECK(guest_orc_from_tables(ipt, IPT, bade, NTAB, NULL, GUEST_ORC_V3, &t, why, sizeof(why)) == -EBADMSG);
	CHECK(guest_orc_from_tables(ipt, IPT, ent, NTAB, NULL, GUEST_ORC_V1, &t, why, sizeof(why)) == -EBADMSG);
	CHECK(guest_orc_from_tables(ipt, IPT, ent, 0, NULL, GUEST_ORC_AUTO, &t, why, sizeof(why)) == -EBADMSG);
	CHECK(guest_orc_from_tables(ipt, IPT, ent, GUEST_ORC_MAX_ENTRIES + 1, NULL, GUEST_ORC_AUTO, &t, why,
				    sizeof(why)) == -E2BIG);
}

int main(void)
{
	char why[256];
	build(0);
	CHECK(guest_orc_from_tables(ipt, IPT, ent, NTAB, NULL, GUEST_ORC_AUTO, &o, why, sizeof(why)) == 0);
	CHECK(o.layout == GUEST_ORC_V3);
	o.etext = TEXT + 0x1000;
	test_chains();
	test_noframe();
	test_hostile();
	test_tables();
	guest_orc_free(&o);
	return unit_done();
}
