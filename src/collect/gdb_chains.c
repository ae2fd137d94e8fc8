// SPDX-License-Identifier: MIT
/*
 * Passive domains, call chains (record -g): every vCPU sample taken in
 * kernel mode gets the guest kernel's call chain, unwound on the host
 * with the guest's own ORC tables (guest/orc.h) from the registers the
 * tick's `g` reply already holds and a window of the guest's stack read
 * in the same stop. Part of the gdb source (gdb_internal.h).
 *
 * At start (VM stopped): the ORC tables are located by the symbols read
 * from guest memory, taken from the host cache when this kernel's
 * build-id has an entry that still matches memory, else read (3.9 MB on
 * Debian's 6.1, ~0.5 s of stopped VM) and cached. A kernel without ORC
 * is unwound by frame pointers. The `g` offsets of every register the
 * unwinder uses come from the target description.
 *
 * Per tick (sampler thread, VM stopped, all batch replies read): the
 * acks owed go out, a kernel-mode vCPU is selected for the reads when
 * the batch's last one is not (with page-table isolation a user cr3 does
 * not map the kernel), and each kernel-mode sample is unwound within the
 * unwinder's bounds and a per-tick byte budget. The chain (innermost
 * first, ip[0] the sample's ip, the user rip last when the chain reaches
 * the user boundary) is the sample's callchain, as host chains are.
 *
 * Counted: chains, frames, bytes and `m` reads, and how each chain ended
 * (guest_orc_stop_name), written at the end as the domain's COUNTERS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gdb_internal.h"
#include "guest/cache.h"
#include "util/clock.h"
#include "util/xalloc.h"

/* Bytes of stack one tick may read over all its vCPUs (with the
 * unwinder's per-chain bound, unwind-max=). */
#define CHAINS_TICK_BUDGET (256u << 10)
/* Largest cache entry: GUEST_ORC_MAX_ENTRIES raw entries. */
#define CHAINS_CACHE_MAX ((size_t)GUEST_ORC_MAX_ENTRIES * GUEST_ORC_RAW_ENTRY)

struct gdb_chains {
	struct guest_orc orc;   /* n == 0: frame pointers only */
	struct guest_orc_opts opt;
	unsigned depth;
	struct reginfo reg[GR_N];
	struct guest_regs *regs;    /* [nvcpu], this tick's */
	bool *have;                 /* [nvcpu]: regs[i] read this tick */
	uint64_t *chain;            /* [nvcpu * depth] */
	/* [entry_SYSCALL_64, entry_SYSCALL_64_after_hwframe): the syscall
	 * entry before its pt_regs is built; the user rip is still in rcx */
	uint64_t sys0, sys1;
	/* Counters (sampler thread; the few the stats show are atomics) */
	uint64_t stops[GUEST_ORC_NSTOP];
	uint64_t frames;
	atomic_uint_fast64_t chains, complete, bytes, reads;
};

/* ---- Registers -------------------------------------------------------- */

/* The target-description names of struct guest_regs' slots (orig_ax has
 * none: it stays 0). */
static const char *const reg_names[GR_N] = {
	[GR_R15] = "r15", [GR_R14] = "r14", [GR_R13] = "r13", [GR_R12] = "r12", [GR_BP] = "rbp",
	[GR_BX] = "rbx", [GR_R11] = "r11", [GR_R10] = "r10", [GR_R9] = "r9", [GR_R8] = "r8",
	[GR_AX] = "rax", [GR_CX] = "rcx", [GR_DX] = "rdx", [GR_SI] = "rsi", [GR_DI] = "rdi",
	[GR_IP] = "rip", [GR_CS] = "cs", [GR_FLAGS] = "eflags", [GR_SP] = "rsp", [GR_SS] = "ss",
};

/* Every register the unwinder may use, from the g reply. */
static int find_regs(const struct gdb_source *s, struct gdb_chains *c, char *why, size_t whylen)
{
	for (unsigned i = 0; i < GR_N; i++) {
		if (!reg_names[i])
			continue;
		const struct rsp_reg *r = rsp_tdesc_find(&s->td, reg_names[i]);
		if (!r || r->bitsize < 32 || r->bitsize > 64 || r->bitsize % 8 ||
		    r->offset + r->bitsize / 8 > s->gbytes) {
			snprintf(why, whylen, "register %s is not in the g reply", reg_names[i]);
			return -ENOENT;
		}
		c->reg[i] = (struct reginfo){ .present = true, .in_g = true, .offset = r->offset,
					      .size = r->bitsize / 8, .regnum = r->regnum };
	}
	return 0;
}

void gdb_chains_regs(struct gdb_source *s, const struct rsp_conn *conn, size_t i)
{
	struct gdb_chains *c = s->chains;
	if (!c)
		return;
	c->have[i] = false;
	struct guest_regs *g = &c->regs[i];
	memset(g, 0, sizeof(*g));
	for (unsigned k = 0; k < GR_N; k++) {
		const struct reginfo *ri = &c->reg[k];
		if (!ri->present)
			continue;
		size_t off = ri->offset * 2;
		if (conn->pktlen < off + ri->size * 2u ||
		    rsp_hex_le(conn->pkt + off, conn->pktlen - off, ri->size, &g->r[k]) < 0)
			return;   /* an unavailable register: no chain this tick */
	}
	c->have[i] = true;
}

/* ---- Start -------------------------------------------------------------- */

/* The kernel's version ("6.1.0-57-amd64") from linux_banner; "" if not
 * readable (the table's layout is then told from the table alone). */
static void kernel_version(struct guest_mem *m, guest_sym_fn sym, void *ctx, char *v, size_t vlen)
{
	char b[96];
	uint64_t a = sym(ctx, "linux_banner");
	v[0] = 0;
	if (!guest_kptr(a) || guest_mem_read(m, a, b, sizeof(b) - 1) < 0)
		return;
	b[sizeof(b) - 1] = 0;
	if (strncmp(b, "Linux version ", 14))
		return;
	size_t n = strcspn(b + 14, " \n");
	if (n >= vlen)
		n = vlen - 1;
	memcpy(v, b + 14, n);
	v[n] = 0;
}

/* The cached raw tables if they are this kernel's and still what memory
 * holds (the first entries of both tables compared). */
static uint8_t *from_cache(const char *buildid, struct guest_mem *m, const struct guest_orc_loc *l)
{
	char *data;
	size_t len;
	if (!buildid || !buildid[0] || guest_cache_get(buildid, "orc", CHAINS_CACHE_MAX, &data, &len) < 0)
		return NULL;
	uint8_t head[2][64];
	size_t hi = l->n * 4 < 64 ? l->n * 4 : 64, he = l->n * 6 < 64 ? l->n * 6 : 64;
	if (len != l->n * GUEST_ORC_RAW_ENTRY || guest_mem_read(m, l->ipt, head[0], hi) < 0 ||
	    guest_mem_read(m, l->ent, head[1], he) < 0 || memcmp(head[0], data, hi) ||
	    memcmp(head[1], data + l->n * 4, he)) {
		free(data);
		return NULL;
	}
	return (uint8_t *)data;
}

/* Reads the tables into c->orc; the note says how. A kernel without ORC
 * leaves the table empty (frame pointers). */
static int read_tables(struct gdb_chains *c, struct guest_mem *m, guest_sym_fn sym, void *ctx,
		       const char *buildid, char *note, size_t notelen)
{
	char why[200], version[64];
	struct guest_orc_loc l;
	int r = guest_orc_locate(sym, ctx, &l, why, sizeof(why));
	if (r == -ENOENT) {
		snprintf(note, notelen, "; call chains by frame pointers (%s)", why);
		return 0;
	}
	if (r < 0)
		goto bad;
	kernel_version(m, sym, ctx, version, sizeof(version));
	uint64_t t0 = mono_ns(), b0 = m->bytes;
	uint8_t *raw = from_cache(buildid, m, &l);
	bool cached = raw != NULL;
	if (!raw && (r = guest_orc_read_raw(m, &l, &raw, why, sizeof(why))) < 0)
		goto bad;
	r = guest_orc_from_raw(raw, &l, version[0] ? version : NULL, GUEST_ORC_AUTO, &c->orc, why, sizeof(why));
	if (r == 0 && !cached && buildid && buildid[0])
		(void)guest_cache_put(buildid, "orc", raw, l.n * GUEST_ORC_RAW_ENTRY);
	free(raw);
	if (r < 0)
		goto bad;
	snprintf(note, notelen, "; call chains by ORC (%s, %zu entries, %s %.1f MB in %.2f s)", c->orc.layout_name,
		 c->orc.n, cached ? "cached, checked" : "read", (m->bytes - b0) / 1e6, (mono_ns() - t0) / 1e9);
	return 0;
bad:
	snprintf(note, notelen, "; no call chains: %s", why);
	return r;
}

int gdb_chains_start(struct gdb_source *s, struct guest_mem *m, guest_sym_fn sym, void *ctx,
		     const char *buildid, char *note, size_t notelen)
{
	struct gdb_chains *c = xcalloc(1, sizeof(*c));
	char why[200];
	int r;
	note[0] = 0;
	if (s->use_p) {
		snprintf(note, notelen, "; no call chains: they need the registers by g, not regs=p");
		r = -EINVAL;
		goto fail;
	}
	if ((r = find_regs(s, c, why, sizeof(why))) < 0) {
		snprintf(note, notelen, "; no call chains: %s", why);
		goto fail;
	}
	if ((r = read_tables(c, m, sym, ctx, buildid, note, notelen)) < 0)
		goto fail;
	c->opt = s->spec.unwind;
	c->depth = c->opt.depth ? c->opt.depth : 64;
	c->opt.depth = c->depth;
	c->sys0 = sym(ctx, "entry_SYSCALL_64");
	c->sys1 = sym(ctx, "entry_SYSCALL_64_after_hwframe");
	if (!guest_kptr(c->sys0) || c->sys1 <= c->sys0 || c->sys1 - c->sys0 > 256)
		c->sys0 = c->sys1 = 0;
	c->regs = xcalloc(s->nvcpu, sizeof(*c->regs));
	c->have = xcalloc(s->nvcpu, sizeof(*c->have));
	c->chain = xcalloc(s->nvcpu * c->depth, sizeof(*c->chain));
	s->chains = c;
	s->chain_depth = c->depth;
	return 0;
fail:
	guest_orc_free(&c->orc);
	free(c);
	return r;
}

/* ---- Per tick ---------------------------------------------------------- */

/* One chain into the sample: the user rip of a syscall entry stopped
 * before its pt_regs is built is rcx. */
static void keep_chain(struct gdb_chains *c, const struct guest_regs *g, struct guest_orc_chain *ch,
		       struct dp_sample *v, uint64_t *out)
{
	uint64_t ip = g->r[GR_IP];
	if (ch->n == 1 && c->sys0 && ip >= c->sys0 && ip < c->sys1 && !guest_kptr(g->r[GR_CX]) && g->r[GR_CX]) {
		ch->ip[ch->n++] = g->r[GR_CX];
		ch->stop = GUEST_ORC_USER;
	}
	unsigned n = ch->n < c->depth ? ch->n : c->depth;
	memcpy(out, ch->ip, n * sizeof(*out));
	v->callchain = out;
	v->nr_callchain = n;
	c->stops[ch->stop]++;
	c->frames += n;
	atomic_fetch_add(&c->chains, 1);
	if (ch->stop <= GUEST_ORC_FP_END)
		atomic_fetch_add(&c->complete, 1);
	atomic_fetch_add(&c->bytes, ch->bytes);
	atomic_fetch_add(&c->reads, ch->reads);
}

void gdb_chains_tick(struct gdb_source *s, struct dp_sample *v, size_t n, unsigned *acks)
{
	struct gdb_chains *c = s->chains;
	if (!c)
		return;
	int kcpu = -1;
	for (size_t i = 0; i < n && kcpu < 0; i++)
		if (v[i].mode == DP_MODE_KERNEL && c->have[i])
			kcpu = (int)i;
	if (kcpu < 0)
		return;
	/* Our reads follow the replies read so far: ack those first. The
	 * batch ends with the last vCPU selected (or a walk selected a
	 * kernel-mode one). */
	if (*acks && rsp_ack(s->conn, *acks) < 0)
		return;
	*acks = 0;
	if (v[n - 1].mode != DP_MODE_KERNEL) {
		char req[64];
		snprintf(req, sizeof(req), "Hg%s", s->tids[kcpu]);
		if (rsp_request(s->conn, req) < 0 || strcmp(s->conn->pkt, "OK"))
			return;
	}
	struct guest_mem m;
	struct mem_ctx mc;
	gdb_guest_mem(s, &m, &mc);
	m.budget = CHAINS_TICK_BUDGET;
	for (size_t i = (size_t)kcpu; i < n; i++) {
		if (v[i].mode != DP_MODE_KERNEL || !c->have[i] || c->regs[i].r[GR_IP] != v[i].ip)
			continue;
		struct guest_orc_chain ch;
		guest_orc_unwind(&c->orc, &m, &c->regs[i], &c->opt, &ch);
		keep_chain(c, &c->regs[i], &ch, &v[i], c->chain + i * c->depth);
	}
}

/* ---- End ------------------------------------------------------------------ */

void gdb_chains_stats(const struct gdb_source *s, struct gdb_source_stats *st)
{
	const struct gdb_chains *c = s->chains;
	if (!c)
		return;
	st->chains = atomic_load(&c->chains);
	st->chains_complete = atomic_load(&c->complete);
	st->unwind_bytes = atomic_load(&c->bytes);
	st->unwind_reads = atomic_load(&c->reads);
}

int gdb_chains_counters(struct gdb_source *s, struct dp_writer *w)
{
	struct gdb_chains *c = s->chains;
	if (!c)
		return 0;
#ifndef DP_MAX_COUNTERS   /* TEMP until the COUNTERS record lands */
	(void)w;
	return 0;
#else
	char stop_names[GUEST_ORC_NSTOP][40];
	struct dp_counter v[4 + GUEST_ORC_NSTOP];
	uint32_t n = 0;
	v[n++] = (struct dp_counter){ "unwind.chains", atomic_load(&c->chains) };
	v[n++] = (struct dp_counter){ "unwind.frames", c->frames };
	v[n++] = (struct dp_counter){ "unwind.bytes", atomic_load(&c->bytes) };
	v[n++] = (struct dp_counter){ "unwind.reads", atomic_load(&c->reads) };
	for (unsigned k = 0; k < GUEST_ORC_NSTOP; k++) {
		if (!c->stops[k])
			continue;
		snprintf(stop_names[k], sizeof(stop_names[k]), "unwind.stop.%s", guest_orc_stop_name(k));
		v[n++] = (struct dp_counter){ stop_names[k], c->stops[k] };
	}
	struct dp_counters cs = { .n = n, .c = v };
	int r = dp_write_counters(w, s->domain_id, &cs);
	return r < 0 ? r : 1;
#endif
}

void gdb_chains_free(struct gdb_source *s)
{
	struct gdb_chains *c = s->chains;
	if (!c)
		return;
	guest_orc_free(&c->orc);
	free(c->regs);
	free(c->have);
	free(c->chain);
	free(c);
	s->chains = NULL;
}
