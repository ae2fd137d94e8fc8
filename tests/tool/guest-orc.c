// SPDX-License-Identifier: MIT
/*
 * test-tool guest-orc [OPTIONS] MEMSPEC KALLSYMS: the guest kernel's ORC
 * tables read from a memory backend (guestmem.h) with src/guest/orc.c,
 * located by the symbols of KALLSYMS (a /proc/kallsyms text), and checked
 * against what every kernel's tables say at a function's first
 * instruction: the caller's sp is sp+8 and the frame is a CALL (the
 * return address is on top of the stack); *.cold parts are skipped. One stats line on stderr:
 *   guest-orc: entries=N layout=.. undefined=N ends=N bytes=N reads=N ms=..
 *   guest-orc: funcs=N call8=N
 * and the first non-matching names on stdout ("other NAME sp_reg=..").
 * Options: --layout=v1|v2|v3|v4 forces a layout (the control: it must
 * be refused), --version=V is passed on (it does not decide), --shift=N adds N to the kernel-half
 * symbols of the function check only (the control: shifted functions do
 * not start where the ORC says), --orc-shift=N adds N to every table ip
 * after that check (the unwinding control: a table that does not fit).
 * --stops=N (gdb backend): N times run the VM ~20 ms and stop it; when
 * the stopped vCPU is in kernel mode, unwind its stack and print the
 * chain, symbolized: "chain STOP-REASON frames=N bytes=N reads=N: a <- b
 * <- ...". --window=N, --max-bytes=N, --depth=N are the unwind options.
 * --verify-raw: the host cache's sampled check of the raw tables (see
 * verify_raw below).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/gdb_rsp.h"
#include "guest/orc.h"
#include "guestmem.h"
#include "symbols/kallsyms.h"
#include "test-tool.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

struct fn { uint64_t addr; const char *name; size_t len; };
struct syms {
	const char *text;
	size_t len;
	struct fn *f;           /* text symbols, sorted */
	size_t n;
};

static uint64_t sym_lookup(void *ctx, const char *name)
{
	const struct syms *s = ctx;
	return kallsyms_lookup(s->text, s->len, name);
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_fns(struct syms *s)
{
	const char *p = s->text, *end = s->text + s->len;
	struct kallsyms_line l;
	int r;
	size_t cap = 0;
	while ((r = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END) {
		if (r != KALLSYMS_LINE || l.mod || (l.type != 'T' && l.type != 't' && l.type != 'W' && l.type != 'w'))
			continue;
		if (s->n == cap)
			s->f = xrealloc(s->f, (cap = cap ? 2 * cap : 4096) * sizeof(*s->f));
		s->f[s->n++] = (struct fn){ l.addr, l.name, l.namelen };
	}
	qsort(s->f, s->n, sizeof(*s->f), fn_cmp);
}

static void print_sym(const struct syms *s, uint64_t a)
{
	size_t lo = 0, hi = s->n;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->f[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || !guest_kptr(a))
		printf("0x%" PRIx64, a);
	else
		printf("%.*s+0x%" PRIx64, (int)s->f[lo - 1].len, s->f[lo - 1].name, a - s->f[lo - 1].addr);
}

/* Every text function between _stext and _etext: is the entry at its
 * first byte "sp+8, CALL"? */
static void check_functions(const struct guest_orc *o, const struct syms *s, uint64_t shift)
{
	size_t funcs = 0, ok = 0, shown = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t a = s->f[i].addr + shift;
		/* gcc's split-off unlikely parts start mid-frame. */
		if (a < o->text || a >= o->etext || memmem(s->f[i].name, s->f[i].len, ".cold", 5))
			continue;
		funcs++;
		const struct guest_orc_entry *e = guest_orc_find(o, a);
		if (e && e->type == GUEST_ORC_T_CALL && e->sp_reg == ORC_REG_SP && e->sp_offset == 8) {
			ok++;
		} else if (shown++ < 20) {
			printf("other %.*s", (int)s->f[i].len, s->f[i].name);
			if (e)
				printf(" sp_reg=%u sp_offset=%d type=%u\n", e->sp_reg, e->sp_offset, e->type);
			else
				printf(" no entry\n");
		}
	}
	fprintf(stderr, "guest-orc: funcs=%zu call8=%zu\n", funcs, ok);
}

/* The stopped thread's registers from `g` (QEMU's x86_64 order: rax rbx
 * rcx rdx rsi rdi rbp rsp r8..r15 at 8 bytes, rip, then eflags cs ss at
 * 4 bytes). */
static int read_regs(struct rsp_conn *c, struct guest_regs *g)
{
	static const int map[16] = { GR_AX, GR_BX, GR_CX, GR_DX, GR_SI, GR_DI, GR_BP, GR_SP,
				     GR_R8, GR_R9, GR_R10, GR_R11, GR_R12, GR_R13, GR_R14, GR_R15 };
	if (rsp_request(c, "g") < 0 || c->pktlen < 2 * 148)
		return -EPROTO;
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < 16; i++)
		if (rsp_hex_le(c->pkt + 16 * i, 16, 8, &g->r[map[i]]) < 0)
			return -EPROTO;
	if (rsp_hex_le(c->pkt + 256, 16, 8, &g->r[GR_IP]) < 0 || rsp_hex_le(c->pkt + 272, 8, 4, &g->r[GR_FLAGS]) < 0 ||
	    rsp_hex_le(c->pkt + 280, 8, 4, &g->r[GR_CS]) < 0 || rsp_hex_le(c->pkt + 288, 8, 4, &g->r[GR_SS]) < 0)
		return -EPROTO;
	return 0;
}

static void stops(struct tt_mem *t, const struct guest_orc *o, const struct syms *s, unsigned n,
		  const struct guest_orc_opts *opt, struct guest_mem *base)
{
	struct rsp_conn *c = tt_mem_conn(t);
	unsigned kernel = 0, complete = 0;
	uint64_t bytes = 0;
	for (unsigned i = 0; i < n && c; i++) {
		struct guest_regs g;
		if (tt_run_for(c, 20) < 0 || read_regs(c, &g) < 0) {
			fprintf(stderr, "test-tool guest-orc: stop %u: the stub failed\n", i);
			return;
		}
		if (g.r[GR_CS] & 3)
			continue;
		struct guest_mem m = *base;
		m.bytes = m.reads = 0;
		m.budget = 1u << 20;
		struct guest_orc_chain ch;
		guest_orc_unwind(o, &m, &g, opt, &ch);
		kernel++;
		complete += ch.stop <= GUEST_ORC_FP_END;
		bytes += ch.bytes;
		printf("chain %s frames=%u fp=%u switches=%u bytes=%" PRIu64 " reads=%" PRIu64 ":", guest_orc_stop_name(ch.stop),
		       ch.n, ch.fp_frames, ch.switches, ch.bytes, ch.reads);
		for (unsigned k = 0; k < ch.n; k++) {
			printf(k ? " <- " : " ");
			print_sym(s, ch.ip[k]);
		}
		printf("\n");
	}
	fprintf(stderr, "guest-orc: stops=%u kernel=%u complete=%u stack-bytes=%" PRIu64 "\n", n, kernel, complete,
		bytes);
}

/* --verify-raw: the host cache's check of raw tables (guest_orc_verify_raw)
 * against this memory: the tables read here pass; a copy with one byte of
 * its first ip packet changed, and one with every byte changed, do not.
 * One line: "verify-raw: clean=ok bytes=N tables=N first=stale all=stale". */
static int verify_raw(struct guest_mem *m, struct syms *s)
{
	struct guest_orc_loc l;
	char why[256];
	uint8_t *raw;
	if (guest_orc_locate(sym_lookup, s, &l, why, sizeof(why)) < 0 || guest_orc_read_raw(m, &l, &raw, why, sizeof(why)) < 0) {
		fprintf(stderr, "test-tool guest-orc: %s\n", why);
		return 1;
	}
	size_t len = l.n * GUEST_ORC_RAW_ENTRY;
	const char *res[3];
	uint64_t bytes = 0;
	for (int k = 0; k < 3; k++) {
		uint8_t *c = xmalloc(len);
		memcpy(c, raw, len);
		if (k == 1)
			c[100] ^= 1;
		for (size_t i = 0; k == 2 && i < len; i++)
			c[i] ^= 0x5a;
		uint64_t b0 = m->bytes;
		int r = guest_orc_verify_raw(m, &l, c, len, 64, 12345 + (uint64_t)k, why, sizeof(why));
		if (k == 0)
			bytes = m->bytes - b0;
		res[k] = r == 0 ? "ok" : r == -ESTALE ? "stale" : "error";
		free(c);
	}
	fprintf(stderr, "verify-raw: clean=%s bytes=%" PRIu64 " tables=%zu first=%s all=%s\n", res[0], bytes, len, res[1],
		res[2]);
	free(raw);
	return 0;
}

int cmd_guest_orc(int argc, char **argv)
{
	bool verify = false;
	enum guest_orc_layout layout = GUEST_ORC_AUTO;
	const char *version = NULL;
	uint64_t shift = 0, orc_shift = 0;
	unsigned nstops = 0;
	struct guest_orc_opts opt = { 0 };
	int a = 1;
	for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
		if (!strcmp(argv[a], "--layout=v1"))
			layout = GUEST_ORC_V1;
		else if (!strcmp(argv[a], "--layout=v2"))
			layout = GUEST_ORC_V2;
		else if (!strcmp(argv[a], "--layout=v3"))
			layout = GUEST_ORC_V3;
		else if (!strcmp(argv[a], "--layout=v4"))
			layout = GUEST_ORC_V4;
		else if (!strncmp(argv[a], "--version=", 10))
			version = argv[a] + 10;
		else if (!strncmp(argv[a], "--shift=", 8))
			shift = strtoull(argv[a] + 8, NULL, 0);
		else if (!strncmp(argv[a], "--orc-shift=", 12))
			orc_shift = strtoull(argv[a] + 12, NULL, 0);
		else if (!strncmp(argv[a], "--stops=", 8))
			nstops = (unsigned)strtoul(argv[a] + 8, NULL, 0);
		else if (!strncmp(argv[a], "--window=", 9))
			opt.window = strtoul(argv[a] + 9, NULL, 0);
		else if (!strncmp(argv[a], "--max-bytes=", 12))
			opt.max_bytes = strtoul(argv[a] + 12, NULL, 0);
		else if (!strncmp(argv[a], "--depth=", 8))
			opt.depth = (unsigned)strtoul(argv[a] + 8, NULL, 0);
		else if (!strcmp(argv[a], "--verify-raw"))
			verify = true;
		else
			break;
	}
	if (argc - a != 2 || nstops > 10000) {
		fprintf(stderr, "usage: test-tool guest-orc [--layout=v1|v2|v3|v4] [--version=V] [--shift=N] [--orc-shift=N] "
				"[--stops=N] [--window=N] [--max-bytes=N] [--depth=N] [--verify-raw] MEMSPEC KALLSYMS\n");
		return 2;
	}
	struct syms s = { 0 };
	int r = file_read_all(argv[a + 1], 256u << 20, (char **)&s.text, &s.len);
	if (r < 0) {
		fprintf(stderr, "test-tool guest-orc: cannot read %s: %s\n", argv[a + 1], file_strerror(r));
		return 1;
	}
	load_fns(&s);
	struct guest_mem m;
	struct tt_mem *t = tt_mem_open(argv[a], &m);
	int rc = 1;
	if (!t)
		goto out;
	struct guest_orc o;
	char why[256];
	uint64_t t0 = mono_ns();
	r = guest_orc_read(&m, sym_lookup, &s, version, layout, &o, why, sizeof(why));
	double ms = (double)(mono_ns() - t0) / 1e6;
	if (r < 0) {
		fprintf(stderr, "test-tool guest-orc: %s\n", why);
		goto out;
	}
	fprintf(stderr, "guest-orc: entries=%zu layout=%s undefined=%zu ends=%zu bytes=%" PRIu64 " reads=%" PRIu64
		" ms=%.1f text=0x%" PRIx64 "..0x%" PRIx64 "\n", o.n, guest_orc_layout_short(o.layout), o.undefined,
		o.ends, m.bytes, m.reads, ms, o.text, o.etext);
	check_functions(&o, &s, shift);
	if (verify && verify_raw(&m, &s))
		goto out;
	for (size_t i = 0; i < o.n; i++)   /* the wrong-table control */
		o.ip[i] += orc_shift;
	if (nstops)
		stops(t, &o, &s, nstops, &opt, &m);
	guest_orc_free(&o);
	rc = 0;
out:
	tt_mem_close(t);
	free(s.f);
	free((char *)s.text);
	return rc;
}
