// SPDX-License-Identifier: MIT
/*
 * Passive domains, call chains (record -g): every vCPU sample taken in
 * kernel mode gets the guest kernel's call chain, unwound on the host
 * with the guest's own ORC tables (guest/orc.h) from the registers the
 * tick's `g` reply already holds and a window of the guest's stack read
 * in the same stop. Part of the gdb source (gdb_internal.h).
 *
 * At start (VM stopped): the ORC tables are located by the symbols read
 * from guest memory (or a symbol file's, moved by the KASLR offset; the
 * tables are read from guest memory either way), the layout told from
 * the table and checked on known stacks (guest/orc.h), taken from the host cache when this kernel's
 * build-id has an entry whose sampled packets match this guest's memory
 * (guest_orc_verify_raw, ~270 KB read), else read (3.9 MB on Debian's
 * 6.1, ~0.5 s of stopped VM) and cached (replacing an entry that did
 * not match). A kernel without ORC
 * is unwound by frame pointers. The `g` offsets of every register the
 * unwinder uses come from the target description.
 *
 * Per tick: the batch (gdb_build_batch) already reads, for each vCPU
 * that was in kernel mode at the last tick, the stack window ending at
 * the page end of its sp then (gdb_chains_next), so most chains need no
 * request of their own: with a second round trip a tick the VM was held
 * twice as long. With all batch replies read (VM stopped), the acks owed
 * go out, a kernel-mode vCPU is selected before the first read the
 * window does not serve when the batch's last one is not (with page-table isolation a user cr3 does
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
#include <sys/random.h>

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
	/* Where a one-frame chain's user rip is in rcx: the syscall entry
	 * before its pt_regs is built [entry_SYSCALL_64, .._after_hwframe),
	 * and the sysret exit after they are popped [syscall_return_via_
	 * sysret, entry_SYSRETQ_end) (sysret jumps to rcx). 0: unknown. */
	uint64_t rcx_at[2][2];
	/* The stack window each vCPU's batch reads ahead (see gdb_chains_
	 * guess): where it starts (0: none asked), and what came back */
	uint64_t *guess;            /* [nvcpu] */
	uint8_t *pre;               /* [nvcpu * window] */
	uint64_t *pre_addr;         /* [nvcpu], 0: nothing read ahead this tick */
	size_t window;              /* bytes read ahead (<= the stub's `m`) */
	/* Counters (sampler thread; the few the stats show are atomics) */
	uint64_t stops[GUEST_ORC_NSTOP];
	uint64_t frames, ahead_used, ahead_bytes;
	atomic_uint_fast64_t chains, complete, bytes, reads;
};

/* A chain's reads: the window read ahead in the batch when it holds the
 * bytes asked (the head not in it is asked of the stub), else the stub. */
struct chain_mem {
	struct mem_ctx mc;
	const uint8_t *pre;
	uint64_t pre_addr;
	size_t pre_len;
	uint64_t stub_reads, stub_bytes;   /* `m` sent for this chain */
	bool used;                         /* the window read ahead served some */
	const char *hg;                    /* a vCPU to select before the first `m` */
	unsigned *acks;                    /* acks owed, sent before the first request */
};

static int chain_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct chain_mem *cm = vctx;
	size_t head = len;
	if (cm->pre_addr && addr + len > cm->pre_addr && addr < cm->pre_addr + cm->pre_len &&
	    addr + len <= cm->pre_addr + cm->pre_len) {
		/* the tail (or all) of the range is in the window */
		uint64_t from = addr > cm->pre_addr ? addr : cm->pre_addr;
		head = (size_t)(from - addr);
		memcpy((uint8_t *)buf + head, cm->pre + (from - cm->pre_addr), len - head);
		cm->used = true;
	}
	if (!head)
		return 0;
	/* Our requests follow the replies read so far: ack those first (a
	 * tick whose chains the window served sends nothing: the acks go
	 * out with the `c`). */
	if (*cm->acks) {
		if (rsp_ack(cm->mc.c, *cm->acks) < 0)
			return -EIO;
		*cm->acks = 0;
	}
	if (cm->hg) {
		char req[64];
		snprintf(req, sizeof(req), "Hg%s", cm->hg);
		cm->hg = NULL;
		if (rsp_request(cm->mc.c, req) < 0 || strcmp(cm->mc.c->pkt, "OK"))
			return -EIO;
	}
	cm->stub_reads++;
	cm->stub_bytes += head;
	return gdb_mem_read(&cm->mc, addr, buf, head);
}

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
	c->pre_addr[i] = 0;   /* this tick's window, if asked, comes next */
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

bool gdb_chains_guess(const struct gdb_source *s, size_t i, uint64_t *addr, size_t *len)
{
	const struct gdb_chains *c = s->chains;
	if (!c || !c->guess[i])
		return false;
	*addr = c->guess[i];
	*len = c->window;
	return true;
}

void gdb_chains_ahead(struct gdb_source *s, const struct rsp_conn *conn, size_t i)
{
	struct gdb_chains *c = s->chains;
	c->pre_addr[i] = 0;
	/* an error reply (the page is gone) or junk: no window this tick */
	if (!c->guess[i] || conn->pktlen != 2 * c->window ||
	    rsp_hex_bytes(conn->pkt, conn->pktlen, c->pre + i * c->window, c->window) != (int)c->window)
		return;
	c->pre_addr[i] = c->guess[i];
	c->ahead_bytes += c->window;
}

/* ---- Start -------------------------------------------------------------- */

/* Packets of each ORC table compared with the guest's when the tables
 * come from the host cache (guest_orc_verify_raw): with the first and
 * last, 2 x 66 packets of 2032 bytes, ~270 KB instead of the tables'
 * 3.9 MB on 6.1. */
#define CHAINS_CACHE_SAMPLE 64u

/* The cached raw tables of this kernel if a sample of them is what this
 * guest's memory holds (the build-id keying the entry is only what the
 * guest says). NULL with *why set when an entry was there but is not
 * used (it is then replaced). */
static uint8_t *from_cache(const char *buildid, struct guest_mem *m, const struct guest_orc_loc *l,
			   char *why, size_t whylen)
{
	char *data, w[240];
	size_t len;
	why[0] = 0;
	if (!buildid || !buildid[0])
		return NULL;
	int r = guest_cache_get(buildid, "orc", CHAINS_CACHE_MAX, &data, &len, w, sizeof(w));
	if (r < 0) {
		if (r != -ENOENT)
			snprintf(why, whylen, "; host cache not used: %.120s", w);
		return NULL;
	}
	uint64_t seed = 0;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = mono_ns();
	if ((r = guest_orc_verify_raw(m, l, (const uint8_t *)data, len, CHAINS_CACHE_SAMPLE, seed, w,
				      sizeof(w))) < 0) {
		snprintf(why, whylen, "; cached ORC entry replaced%s", r == -ESTALE ? "" : " (not checked)");
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
	/* the kernel's version: a hint to the layout (it is told from the
	 * table alone without it), and which kernel a refusal was on */
	(void)guest_kernel_version(m, sym(ctx, "linux_banner"), version, sizeof(version));
	int r = guest_orc_locate(sym, ctx, &l, why, sizeof(why));
	if (r == -ENOENT) {
		snprintf(note, notelen, "; call chains by frame pointers (%s)", why);
		return 0;
	}
	if (r < 0)
		goto bad;
	uint64_t t0 = mono_ns(), b0 = m->bytes;
	char cwhy[300];
	uint8_t *raw = from_cache(buildid, m, &l, cwhy, sizeof(cwhy));
	bool cached = raw != NULL;
	if (!raw && (r = guest_orc_read_raw(m, &l, &raw, why, sizeof(why))) < 0)
		goto bad;
	r = guest_orc_from_raw(raw, &l, version[0] ? version : NULL, GUEST_ORC_AUTO, &c->orc, why, sizeof(why));
	/* the layout found must unwind known stacks to an entry point */
	if (r == 0 && (r = guest_orc_check(&c->orc, sym, ctx, why, sizeof(why))) < 0) {
		if (r == -ENOENT)
			snprintf(why, sizeof(why), "ORC %s refused: no known function to check it on",
				 guest_orc_layout_short(c->orc.layout));
		guest_orc_free(&c->orc);
		r = -EBADMSG;
	}
	if (r == 0 && !cached && buildid && buildid[0]) {
		char w[240];
		(void)guest_cache_put(buildid, "orc", raw, l.n * GUEST_ORC_RAW_ENTRY, w, sizeof(w));
	}
	free(raw);
	if (r < 0)
		goto bad;
	char fast[200] = "fast lookup table";
	int lr = guest_orc_read_lookup(m, &l, &c->orc, why, sizeof(why));
	if (lr == -ENOENT)
		snprintf(fast, sizeof(fast), "no fast lookup table");
	else if (lr < 0)
		snprintf(fast, sizeof(fast), "fast lookup table not used: %.150s", why);
	snprintf(note, notelen, "; call chains by ORC (%s, %zu entries, %.120s; %s %.1f MB in %.2f s%.200s)",
		 c->orc.layout_name, c->orc.n, fast, cached ? "cached, sample checked" : "read",
		 (m->bytes - b0) / 1e6, (mono_ns() - t0) / 1e9, cwhy);
	return 0;
bad:
	if (version[0])
		snprintf(note, notelen, "; no call chains on Linux %s: %s", version, why);
	else
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
	/* The indirect-branch thunks (6.1 brackets them, 6.12 has an array
	 * of 32-byte ones from rax to r15) and the static-call trampolines
	 * have no frame and no unwind information. */
	uint64_t t0 = sym(ctx, "__x86_indirect_thunk_array"), t15 = sym(ctx, "__x86_indirect_thunk_r15");
	guest_orc_add_noframe(&c->orc, sym(ctx, "__indirect_thunk_start"), sym(ctx, "__indirect_thunk_end"));
	if (t15 > t0 && t15 - t0 == 15 * 32)
		guest_orc_add_noframe(&c->orc, t0, t15 + 32);
	guest_orc_add_noframe(&c->orc, sym(ctx, "__static_call_text_start"), sym(ctx, "__static_call_text_end"));
	static const char *const rcx_syms[2][2] = {
		{ "entry_SYSCALL_64", "entry_SYSCALL_64_after_hwframe" },
		{ "syscall_return_via_sysret", "entry_SYSRETQ_end" },
	};
	for (int k = 0; k < 2; k++) {
		uint64_t a = sym(ctx, rcx_syms[k][0]), b = sym(ctx, rcx_syms[k][1]);
		if (guest_kptr(a) && b > a && b - a <= 512) {   /* a few instructions */
			c->rcx_at[k][0] = a;
			c->rcx_at[k][1] = b;
		}
	}
	c->regs = xcalloc(s->nvcpu, sizeof(*c->regs));
	c->have = xcalloc(s->nvcpu, sizeof(*c->have));
	c->chain = xcalloc(s->nvcpu * c->depth, sizeof(*c->chain));
	c->window = c->opt.window ? c->opt.window : GUEST_MEM_CHUNK;
	if (c->window > s->mem_chunk && s->mem_chunk)
		c->window = s->mem_chunk;
	c->guess = xcalloc(s->nvcpu, sizeof(*c->guess));
	c->pre = xcalloc(s->nvcpu, c->window);
	c->pre_addr = xcalloc(s->nvcpu, sizeof(*c->pre_addr));
	s->chains = c;
	s->chain_depth = c->depth;
	s->batch_pre = xcalloc(s->nvcpu, sizeof(*s->batch_pre));
	return 0;
fail:
	guest_orc_free(&c->orc);
	free(c);
	return r;
}

/* ---- Per tick ---------------------------------------------------------- */

/* One chain into the sample: the user rip of a vCPU stopped in the
 * syscall entry or exit code without pt_regs is rcx. */
static void keep_chain(struct gdb_chains *c, const struct guest_regs *g, struct guest_orc_chain *ch,
		       struct dp_sample *v, uint64_t *out)
{
	uint64_t ip = g->r[GR_IP], rcx = g->r[GR_CX];
	for (int k = 0; k < 2 && ch->n == 1 && rcx && !guest_kptr(rcx); k++)
		if (ip >= c->rcx_at[k][0] && ip < c->rcx_at[k][1]) {
			ch->ip[ch->n++] = rcx;
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
	/* The batch ends with the last vCPU selected; reads go through a
	 * kernel-mode one. */
	struct guest_mem m;
	struct mem_ctx mc;
	gdb_guest_mem(s, &m, &mc);
	struct chain_mem cm = { .mc = mc, .hg = v[n - 1].mode != DP_MODE_KERNEL ? s->tids[kcpu] : NULL,
				.acks = acks };
	m.read = chain_read;
	m.ctx = &cm;
	m.budget = CHAINS_TICK_BUDGET;
	for (size_t i = (size_t)kcpu; i < n; i++) {
		if (v[i].mode != DP_MODE_KERNEL || !c->have[i] || c->regs[i].r[GR_IP] != v[i].ip)
			continue;
		cm.pre = c->pre + i * c->window;
		cm.pre_addr = c->pre_addr[i];
		cm.pre_len = c->window;
		cm.used = false;
		uint64_t r0 = cm.stub_reads, b0 = cm.stub_bytes;
		struct guest_orc_chain ch;
		guest_orc_unwind(&c->orc, &m, &c->regs[i], &c->opt, &ch);
		/* the cost is what went to the stub beyond the batch */
		ch.reads = cm.stub_reads - r0;
		ch.bytes = cm.stub_bytes - b0 + (cm.used ? c->window : 0);
		c->ahead_used += cm.used;
		keep_chain(c, &c->regs[i], &ch, &v[i], c->chain + i * c->depth);
	}
}

void gdb_chains_next(struct gdb_source *s, const struct dp_sample *v, size_t n)
{
	struct gdb_chains *c = s->chains;
	if (!c)
		return;
	/* The next tick's batch reads ahead, for each vCPU in the kernel now,
	 * the window that ends at the page end of its sp: a vCPU in a
	 * syscall or kernel thread is likely there again, its frames in the
	 * same page under the pt_regs; one in user mode reads nothing. */
	for (size_t i = 0; i < n; i++) {
		uint64_t sp = c->regs[i].r[GR_SP];
		c->guess[i] = 0;
		if (v[i].mode == DP_MODE_KERNEL && c->have[i] && guest_kptr(sp) && !(sp & 7))
			c->guess[i] = (sp | 4095) + 1 - c->window;
		s->rebuild |= c->guess[i] != 0 || s->batch_pre[i];
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
	char stop_names[GUEST_ORC_NSTOP][40];
	struct dp_counter v[6 + GUEST_ORC_NSTOP];
	uint32_t n = 0;
	v[n++] = (struct dp_counter){ "unwind.chains", atomic_load(&c->chains) };
	v[n++] = (struct dp_counter){ "unwind.frames", c->frames };
	v[n++] = (struct dp_counter){ "unwind.bytes", atomic_load(&c->bytes) };
	v[n++] = (struct dp_counter){ "unwind.reads", atomic_load(&c->reads) };
	v[n++] = (struct dp_counter){ "unwind.ahead.used", c->ahead_used };
	v[n++] = (struct dp_counter){ "unwind.ahead.bytes", c->ahead_bytes };
	for (unsigned k = 0; k < GUEST_ORC_NSTOP; k++) {
		if (!c->stops[k])
			continue;
		snprintf(stop_names[k], sizeof(stop_names[k]), "unwind.stop.%s", guest_orc_stop_name(k));
		v[n++] = (struct dp_counter){ stop_names[k], c->stops[k] };
	}
	struct dp_counters cs = { .n = n, .c = v };
	int r = dp_write_counters(w, s->domain_id, &cs);
	return r < 0 ? r : 1;
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
	free(c->guess);
	free(c->pre);
	free(c->pre_addr);
	free(c);
	free(s->batch_pre);
	s->batch_pre = NULL;
	s->chains = NULL;
}
