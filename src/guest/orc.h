/* SPDX-License-Identifier: MIT */
/*
 * The guest kernel's call chains, unwound from the host with the guest's
 * own ORC tables.
 *
 * An x86_64 kernel built with CONFIG_UNWINDER_ORC (Debian's are) carries
 * two parallel tables made by objtool and sorted at build time:
 * .orc_unwind_ip (s32 offsets, each relative to its own address, giving
 * the first ip an entry covers) and .orc_unwind (6-byte struct orc_entry:
 * how to find the caller's sp and bp from this ip). guest_orc_read reads
 * both once through struct guest_mem, located by their symbols, checks
 * them (sizes, counts, sorted ips, field values) and decodes the entries
 * into a layout-free form. Four layouts are handled (drgn's numbering):
 *   v1 (4.14 .. 6.2, Debian's 5.10 and 6.1): sp_reg:4 bp_reg:4 type:2
 *       end:1, types CALL 0, REGS 1, REGS_PARTIAL 2; "no info" is sp_reg
 *       UNDEFINED, the end of a stack the same with end set;
 *   v2 (6.3): v1 with a signal bit before end (type:2 signal:1 end:1);
 *   v3 (6.4 .. 7.0, Debian's 6.12, RHEL 9.6's 5.14): sp_reg:4 bp_reg:4
 *       type:3 signal:1, types UNDEFINED 0, END_OF_STACK 1, CALL 2, REGS 3,
 *       REGS_PARTIAL 4;
 *   v4 (7.1 ..): v3's bits with the registers renumbered (SP 3, BP 4,
 *       PREV_SP 8, SP_INDIRECT 9, BP_INDIRECT 10; DX, R10, R13 as before).
 * The layout is told from the table, never from the kernel's version
 * (backports change it): the one layout under which every entry decodes,
 * the counts have the shape of a kernel's table (CALL the most common
 * type, SP the most common sp rule, PREV_SP the most common bp rule, an
 * end-of-stack entry) and no more than 0.1% of the entries use a
 * register it does not number. guest_orc_check then unwinds a few known
 * stacks (guest_orc_read does it) and refuses a layout (detected or
 * forced) under which they do not end at an entry point.
 *
 * guest_orc_unwind walks a stopped vCPU's kernel stack from its registers
 * with those rules, reading the stack in page-bounded windows through a
 * second struct guest_mem (its budget and the option max_bytes bound the
 * bytes read). The stack is hostile: every read is checked, the depth is
 * bounded, sp must strictly increase within a stack, and a switch to
 * another stack (exception or IRQ stack back to the task stack) is
 * allowed a few times and never back to a stack already left. A chain
 * that goes wrong is cut there, with the reason.
 *
 * The kernel's fast lookup table (orc_lookup, lookup_num_blocks: for
 * each 256-byte block of core text from _stext, the index of the first
 * entry covering it; built by the kernel at boot) is read where present
 * and checked value by value against the table; guest_orc_find then
 * searches only the block's entries, as the guest's own unwinder does. A
 * lookup table that does not check is not used (binary search over the
 * whole table instead), and the reason is kept.
 *
 * Not covered: module code (the modules' own ORC tables are not read;
 * their ips get the frame-pointer guess), ftrace trampolines, kretprobe
 * return addresses.
 */
#ifndef DOMPROF_GUEST_ORC_H
#define DOMPROF_GUEST_ORC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/layout.h"
#include "guest/mem.h"

/* Bounds on a guest's table (Debian's 6.1: 385,745 entries, 6.12:
 * 440,189). */
#define GUEST_ORC_MAX_ENTRIES (2u << 20)
/* Deepest chain kept; a chain reaching the depth asked (at most this) is
 * cut with GUEST_ORC_DEPTH. */
#define GUEST_ORC_MAX_DEPTH   128u
/* Most stack bytes one unwind may read (the windows are kept). */
#define GUEST_ORC_MAX_STACK   (32u << 10)
/* Stacks one chain may visit (exception, IRQ, task: 3 in the kernel). */
#define GUEST_ORC_MAX_STACKS  4u
/* No-frame ranges a table may carry. */
#define GUEST_ORC_MAX_NOFRAME 4u
/* The fast lookup table's block (the kernel's LOOKUP_BLOCK_SIZE). */
#define GUEST_ORC_LOOKUP_BLOCK 256u

enum guest_orc_layout {
	GUEST_ORC_AUTO = 0,     /* guest_orc_read: tell from the table */
	GUEST_ORC_V1,           /* type:2 end:1 (..6.2) */
	GUEST_ORC_V2,           /* type:2 signal:1 end:1 (6.3) */
	GUEST_ORC_V3,           /* type:3 signal:1 (6.4..7.0) */
	GUEST_ORC_V4,           /* v3 with the registers renumbered (7.1..) */
};
/* "v1" .. "v4" ("?" otherwise); static. */
const char *guest_orc_layout_short(enum guest_orc_layout l);

/* Decoded entry; registers numbered as the kernel's orc_types.h of v1
 * to v3 (v4's are mapped to these); UNKNOWN: a number the layout gives
 * no register (a chain reaching it stops with "bad-register"). */
enum { ORC_REG_UNDEFINED = 0, ORC_REG_PREV_SP = 1, ORC_REG_DX = 2, ORC_REG_DI = 3,
       ORC_REG_BP = 4, ORC_REG_SP = 5, ORC_REG_R10 = 6, ORC_REG_R13 = 7,
       ORC_REG_BP_INDIRECT = 8, ORC_REG_SP_INDIRECT = 9, ORC_REG_UNKNOWN = 15 };
enum guest_orc_type {
	GUEST_ORC_T_UNDEFINED,  /* no unwind info: the chain is cut */
	GUEST_ORC_T_END,        /* end of a stack (ret_from_fork, a CPU's idle entry) */
	GUEST_ORC_T_CALL,       /* caller's return address at sp - 8 */
	GUEST_ORC_T_REGS,       /* a full pt_regs at sp */
	GUEST_ORC_T_REGS_PARTIAL, /* an iret frame (ip, cs, flags, sp, ss) at sp */
};
struct guest_orc_entry {
	int16_t sp_offset, bp_offset;
	uint8_t sp_reg, bp_reg;
	uint8_t type;           /* enum guest_orc_type */
	uint8_t signal;         /* the next ip is taken literally (v3's bit;
				 * implied by REGS types) */
};

struct guest_orc {
	uint64_t *ip;           /* n runtime ips, non-decreasing; malloc'd */
	struct guest_orc_entry *e;  /* n entries; malloc'd */
	size_t n;
	enum guest_orc_layout layout;
	const char *layout_name;   /* static: "v1 (sp_reg:4 bp_reg:4 type:2 end:1; 4.14..6.2)" ... */
	/* The text the table covers: [text, etext) and [inittext, einittext)
	 * from the symbols when present, else [ip[0], ip[n-1]]. An ip
	 * outside has no entry. */
	uint64_t text, etext, inittext, einittext;
	/* Counts, for info and the tests. */
	size_t undefined;       /* entries without unwind info */
	size_t ends;            /* end-of-stack entries */
	/* The fast lookup table (guest_orc_read_lookup), NULL: not used.
	 * lookup[b] is the entry covering text + b * 256 (the last whose ip
	 * is at or below it); an ip of block b < nblocks is searched in
	 * [lookup[b], lookup[b + 1]]; nblocks + 1 values. */
	uint32_t *lookup;       /* malloc'd */
	size_t nblocks;
	/* Code that runs with no frame of its own, where a stopped vCPU's
	 * caller is the return address at sp (indirect-branch thunks,
	 * static-call trampolines: one jmp each, no unwind information, an
	 * "end" or "undefined" entry): [start, end) pairs, set with
	 * guest_orc_add_noframe. Applies to the innermost frame only. */
	uint64_t noframe[GUEST_ORC_MAX_NOFRAME][2];
	unsigned nnoframe;
};

/* Adds a no-frame range; ignored when empty, over 64 KiB, not kernel, or
 * past GUEST_ORC_MAX_NOFRAME. */
void guest_orc_add_noframe(struct guest_orc *o, uint64_t start, uint64_t end);

/* Reads and checks the tables through m (their symbols through sym:
 * __start_orc_unwind_ip, __stop_orc_unwind_ip, __start_orc_unwind,
 * __stop_orc_unwind; _stext, _etext, _sinittext, _einittext when there),
 * then guest_orc_check. version (the kernel's, may be NULL) is not used
 * to decide the layout. layout forces one (GUEST_ORC_AUTO: told from the
 * table); a forced layout is checked the same way. Returns 0, -ENOENT
 * (no ORC symbols: kernel without ORC), -EBADMSG (sizes, counts, order
 * or fields do not check, no layout or more than one fits, or the known
 * stacks refuse it; *why says which), -E2BIG (over
 * GUEST_ORC_MAX_ENTRIES), or the read's errno. Reads 10 bytes an entry
 * (3.9 MB on 6.1, 4.4 MB on 6.12). */
int guest_orc_read(struct guest_mem *m, guest_sym_fn sym, void *symctx, const char *version,
		   enum guest_orc_layout layout, struct guest_orc *o, char *why, size_t whylen);

/* Where the tables are (from the symbols guest_orc_read names): n
 * entries, the ip table at ipt, the entries at ent; the text bounds are 0
 * when their symbols are absent. Lets a caller keep the raw tables (the
 * host cache, keyed by build-id: their ips are relative, so one copy
 * serves every KASLR boot of a kernel). */
struct guest_orc_loc {
	uint64_t ipt, ent;
	size_t n;
	uint64_t text, etext, inittext, einittext;
	/* orc_lookup .. orc_lookup_end and lookup_num_blocks (0: absent) */
	uint64_t lookup, lookup_end, lookup_num;
};
/* Bytes a raw copy holds per entry: the s32 ip, then (after all ips) the
 * 6-byte entry. */
#define GUEST_ORC_RAW_ENTRY 10u
/* guest_orc_read in three steps: locate (same returns but no read),
 * read the raw tables (*raw malloc'd, n * GUEST_ORC_RAW_ENTRY bytes;
 * the read's errno), decode and check them (guest_orc_from_tables, with
 * l's text bounds). */
int guest_orc_locate(guest_sym_fn sym, void *symctx, struct guest_orc_loc *l, char *why, size_t whylen);
int guest_orc_read_raw(struct guest_mem *m, const struct guest_orc_loc *l, uint8_t **raw,
		       char *why, size_t whylen);
int guest_orc_from_raw(const uint8_t *raw, const struct guest_orc_loc *l, const char *version,
		       enum guest_orc_layout layout, struct guest_orc *o, char *why, size_t whylen);

/* Checks raw tables from the host cache (rawlen bytes, the layout of
 * guest_orc_read_raw) against the guest's, in l: the first and last
 * packet of each table and `packets` more of each at random (xorshift
 * from seed), compared byte for byte. Reads at most (packets + 2) * 2
 * packets (GUEST_MEM_CHUNK bytes each) instead of the tables' 10 bytes an
 * entry. A sample, not a proof: a cache entry that differs from the
 * guest in one packet passes with the chance that no sampled packet is
 * that one; what differs is the unwind rules of the call chains (never
 * a sample's own function or process), and the fast lookup table, when
 * read, checks every 256-byte block's first ip again (docs/passive.md).
 * Returns 0, -ESTALE (a packet differs, or the size is not the guest's
 * table; *why says where) or the read's errno. */
int guest_orc_verify_raw(struct guest_mem *m, const struct guest_orc_loc *l, const uint8_t *raw,
			 size_t rawlen, unsigned packets, uint64_t seed, char *why, size_t whylen);

/* Reads the fast lookup table located in l into o (already read from
 * l) and checks it: lookup_num_blocks blocks (bounded by the table's
 * size and the text's), every value the first entry covering its block.
 * Returns 0 (o->lookup set), -ENOENT (no such table: o unchanged),
 * -EBADMSG (it does not check; *why says where; o unchanged) or the
 * read's errno. Reads 4 bytes per 256 of core text (~230 KB on 6.1). */
int guest_orc_read_lookup(struct guest_mem *m, const struct guest_orc_loc *l, struct guest_orc *o,
			  char *why, size_t whylen);

/* The same from tables already in host memory: ipt (n s32) read at guest
 * address ipt_addr, ent (n * 6 bytes). o's text bounds are taken from the
 * ips; the caller may set them after. Same returns. */
int guest_orc_from_tables(const uint8_t *ipt, uint64_t ipt_addr, const uint8_t *ent, size_t n,
			  const char *version, enum guest_orc_layout layout, struct guest_orc *o,
			  char *why, size_t whylen);

/* The known stacks: for each of a few functions every kernel has (the
 * ones sym names inside the table's text), a one-page stack holding only
 * a return address to an entry point (an end-of-stack entry's ip) is
 * unwound from the function's first byte; each must end there, at that
 * entry point, after one frame. Returns 0, -ENOENT (no such function
 * named: nothing checked) or -EBADMSG (*why: "ORC v4 refused: ..."). */
int guest_orc_check(const struct guest_orc *o, guest_sym_fn sym, void *symctx, char *why, size_t whylen);

/* The entry covering ip, or NULL (outside the text covered). Borrowed:
 * valid until guest_orc_free(o). */
const struct guest_orc_entry *guest_orc_find(const struct guest_orc *o, uint64_t ip);

void guest_orc_free(struct guest_orc *o);

/* A stopped vCPU's registers, in struct pt_regs order (so a pt_regs
 * found on the stack is read straight into it). */
enum { GR_R15, GR_R14, GR_R13, GR_R12, GR_BP, GR_BX, GR_R11, GR_R10, GR_R9, GR_R8,
       GR_AX, GR_CX, GR_DX, GR_SI, GR_DI, GR_ORIG_AX, GR_IP, GR_CS, GR_FLAGS, GR_SP,
       GR_SS, GR_N };
#define GUEST_PTREGS_SIZE (GR_N * 8u)   /* 168 */
#define GUEST_IRET_OFFSET (GR_IP * 8u)  /* 128: an iret frame is pt_regs from ip */
struct guest_regs {
	uint64_t r[GR_N];
};

/* Why a chain ended. The first three are complete chains. */
enum guest_orc_stop {
	GUEST_ORC_END,          /* an end-of-stack entry (ret_from_fork, ...) */
	GUEST_ORC_USER,         /* a user-mode pt_regs: the user rip is the last frame */
	GUEST_ORC_FP_END,       /* frame-pointer walk reached bp 0 */
	GUEST_ORC_DEPTH,        /* the depth asked was reached */
	GUEST_ORC_UNDEF,        /* an entry without unwind info */
	GUEST_ORC_NOENTRY,      /* an ip the table does not cover (no FP fallback) */
	GUEST_ORC_BADREG,       /* a rule on a register not known in this frame */
	GUEST_ORC_NOTKERNEL,    /* a return address not in the kernel half */
	GUEST_ORC_BADSP,        /* a stack address not 8-aligned or not kernel */
	GUEST_ORC_READ,         /* the stack did not read (unmapped) */
	GUEST_ORC_BYTES,        /* the byte limit was reached */
	GUEST_ORC_SP_DOWN,      /* sp went down within a stack */
	GUEST_ORC_LOOP,         /* sp did not move, or went back to a stack left */
	GUEST_ORC_STACKS,       /* more stack switches than GUEST_ORC_MAX_STACKS */
	GUEST_ORC_NSTOP
};
/* "end", "user", ... (static, for stats and tests). */
const char *guest_orc_stop_name(enum guest_orc_stop s);

struct guest_orc_opts {
	unsigned depth;         /* frames at most (0 = 64; capped at GUEST_ORC_MAX_DEPTH) */
	size_t window;          /* bytes of a stack read at once (0 = GUEST_MEM_CHUNK,
				 * 2032: one `m` packet; reads stop at a page end so
				 * a guard page never fails them; docs/passive.md
				 * has the reads a chain costs per window) */
	size_t max_bytes;       /* stack bytes at most (0 = 8192; capped at GUEST_ORC_MAX_STACK) */
	bool no_fp;             /* no frame-pointer guess for ips without an entry */
};

struct guest_orc_chain {
	uint64_t ip[GUEST_ORC_MAX_DEPTH];   /* innermost first; ip[0] is the vCPU's rip */
	unsigned n;
	enum guest_orc_stop stop;
	unsigned fp_frames;     /* frames found by the frame-pointer guess */
	unsigned switches;      /* switches to a lower stack taken (a move up to
				 * another stack, e.g. IRQ stack above the task
				 * stack, is not told apart from a frame) */
	uint64_t bytes, reads;  /* stack bytes read, reads made (this unwind) */
};

/* Unwinds from regs (a vCPU in kernel mode: cs & 3 == 0) reading the
 * stack through stack (its budget is a second bound; its counters grow
 * by what was read). opt may be NULL (defaults). Always fills *out with
 * at least regs' ip; returns 0, or -EINVAL for a user-mode regs (stop
 * "user", one frame). o is only read: one table serves unwinds on
 * several threads. Host cost: one 32 KiB scratch allocation a call. */
int guest_orc_unwind(const struct guest_orc *o, struct guest_mem *stack,
		     const struct guest_regs *regs, const struct guest_orc_opts *opt,
		     struct guest_orc_chain *out);

#endif
