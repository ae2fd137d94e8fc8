// SPDX-License-Identifier: MIT
/*
 * The guest kernel's ORC tables and the host-side unwinder (see orc.h).
 * The rules follow the kernel's own arch/x86/kernel/unwind_orc.c; every
 * value read from the guest is checked before it is used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/orc.h"
#include "util/le.h"
#include "util/xalloc.h"

#define ORC_ENTRY_SIZE 6u
#define PAGE 4096u
/* A stack for the loop check: the 16 KiB-aligned block of an sp (task
 * and IRQ stacks are 16 KiB; IST stacks 4 KiB with guard pages). */
#define STACK_BLOCK(sp) ((sp) >> 14)

static const char *const layout_names[] = {
	[GUEST_ORC_V1] = "v1 (sp_reg:4 bp_reg:4 type:2 end:1; 4.14..6.2)",
	[GUEST_ORC_V2] = "v2 (sp_reg:4 bp_reg:4 type:2 signal:1 end:1; 6.3)",
	[GUEST_ORC_V3] = "v3 (sp_reg:4 bp_reg:4 type:3 signal:1; 6.4..7.0, RHEL 9.6)",
	[GUEST_ORC_V4] = "v4 (v3's bits, registers renumbered; 7.1..)",
};
static const char *const short_names[] = {
	[GUEST_ORC_V1] = "v1", [GUEST_ORC_V2] = "v2", [GUEST_ORC_V3] = "v3", [GUEST_ORC_V4] = "v4",
};

const char *guest_orc_layout_short(enum guest_orc_layout l)
{
	return l >= GUEST_ORC_V1 && l <= GUEST_ORC_V4 ? short_names[l] : "?";
}

/* A register number of the table in layout l as ours (orc.h: the
 * numbering of v1..v3); ORC_REG_UNKNOWN when the layout gives that
 * number no register. v4's numbers are those Debian's 7.2 tables use
 * (matched entry by entry against 6.12's: the same rules at the same
 * kind of code); v4's DI, which no entry of those tables uses, is not
 * known and stays ORC_REG_UNKNOWN. */
static uint8_t map_reg(enum guest_orc_layout l, unsigned raw)
{
	static const uint8_t v4[16] = {
		[0] = ORC_REG_UNDEFINED, [1] = ORC_REG_UNKNOWN, [2] = ORC_REG_DX, [3] = ORC_REG_SP,
		[4] = ORC_REG_BP, [5] = ORC_REG_UNKNOWN, [6] = ORC_REG_R10, [7] = ORC_REG_R13,
		[8] = ORC_REG_PREV_SP, [9] = ORC_REG_SP_INDIRECT, [10] = ORC_REG_BP_INDIRECT,
		[11] = ORC_REG_UNKNOWN, [12] = ORC_REG_UNKNOWN, [13] = ORC_REG_UNKNOWN,
		[14] = ORC_REG_UNKNOWN, [15] = ORC_REG_UNKNOWN,
	};
	raw &= 15;
	if (l == GUEST_ORC_V4)
		return v4[raw];
	return raw <= ORC_REG_SP_INDIRECT ? (uint8_t)raw : ORC_REG_UNKNOWN;
}

/* Decodes one 6-byte entry in layout l; false when a field has a value
 * the layout does not allow. */
static bool decode_entry(const uint8_t *b, enum guest_orc_layout l, struct guest_orc_entry *e)
{
	e->sp_offset = (int16_t)get16(b);
	e->bp_offset = (int16_t)get16(b + 2);
	e->sp_reg = map_reg(l, b[4] & 0xf);
	e->bp_reg = map_reg(l, b[4] >> 4);
	unsigned f = b[5];
	if (l == GUEST_ORC_V1 || l == GUEST_ORC_V2) {
		/* v1: type:2 end:1; v2 (6.3): type:2 signal:1 end:1 */
		unsigned type = f & 3, end = l == GUEST_ORC_V1 ? (f >> 2) & 1 : (f >> 3) & 1;
		if (f >> (l == GUEST_ORC_V1 ? 3 : 4) || type == 3)
			return false;
		/* "end" belongs to entries without an sp rule */
		if (end && e->sp_reg != ORC_REG_UNDEFINED)
			return false;
		if (e->sp_reg == ORC_REG_UNDEFINED)
			e->type = end ? GUEST_ORC_T_END : GUEST_ORC_T_UNDEFINED;
		else
			e->type = (uint8_t)(GUEST_ORC_T_CALL + type);
		e->signal = type != 0 || (l == GUEST_ORC_V2 && ((f >> 2) & 1));
	} else {
		if (f >> 4 || (f & 7) > 4)
			return false;
		e->type = (uint8_t)(f & 7);   /* the same numbering as ours */
		e->signal = (f >> 3) & 1;
		if (e->type >= GUEST_ORC_T_REGS)
			e->signal = 1;
	}
	return true;
}

/* How well the table decodes in layout l: entries refused, entries with
 * a register the layout does not number, and whether the counts have
 * the shape every kernel's table has (CALL the most common type, SP the
 * most common sp rule and PREV_SP the most common bp rule of CALL
 * entries, at least one end-of-stack entry). */
struct fit {
	size_t bad, unknown;
	bool shape;
	char why[200];
};
static void fit_layout(const uint8_t *ent, size_t n, enum guest_orc_layout l, struct fit *f)
{
	size_t type[8] = { 0 }, sp[16] = { 0 }, bp[16] = { 0 };
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		struct guest_orc_entry e;
		if (!decode_entry(ent + i * ORC_ENTRY_SIZE, l, &e)) {
			f->bad++;
			continue;
		}
		type[e.type & 7]++;
		if (e.type < GUEST_ORC_T_CALL)
			continue;
		f->unknown += e.sp_reg == ORC_REG_UNKNOWN || e.bp_reg == ORC_REG_UNKNOWN;
		if (e.type == GUEST_ORC_T_CALL) {
			sp[e.sp_reg & 15]++;
			bp[e.bp_reg & 15]++;
		}
	}
	unsigned ts = 0, ss = 0, bs = 1;
	for (unsigned k = 1; k < 8; k++)
		if (type[k] > type[ts])
			ts = k;
	for (unsigned k = 1; k < 16; k++) {
		if (sp[k] > sp[ss])
			ss = k;
		if (k > 1 && bp[k] > bp[bs])
			bs = k;
	}
	f->shape = ts == GUEST_ORC_T_CALL && ss == ORC_REG_SP && bs == ORC_REG_PREV_SP &&
		   type[GUEST_ORC_T_END] > 0;
	if (f->bad)
		snprintf(f->why, sizeof(f->why), "%zu entries with fields it forbids", f->bad);
	else if (!f->shape)
		snprintf(f->why, sizeof(f->why), "not a kernel table's shape (most common: type %u, "
			 "sp rule %u, bp rule %u; %zu ends)", ts, ss, bs,
			 type[GUEST_ORC_T_END]);
	else if (f->unknown > n / 1000)
		snprintf(f->why, sizeof(f->why), "%zu entries with registers it does not number", f->unknown);
}

static bool fits(const struct fit *f, size_t n)
{
	return !f->bad && f->shape && f->unknown <= n / 1000;
}

/* Tells the layout from the table: the one layout under which every
 * entry decodes, the counts have a kernel table's shape and (nearly) no
 * entry uses a register it does not number; GUEST_ORC_AUTO when none or
 * more than one do (*why says why). */
static enum guest_orc_layout detect_layout(const uint8_t *ent, size_t n, char *why, size_t whylen)
{
	enum guest_orc_layout found = GUEST_ORC_AUTO;
	char w[480] = "";
	size_t used = 0;
	for (int l = GUEST_ORC_V1; l <= GUEST_ORC_V4; l++) {
		struct fit f;
		fit_layout(ent, n, (enum guest_orc_layout)l, &f);
		if (fits(&f, n)) {
			if (found != GUEST_ORC_AUTO) {
				snprintf(why, whylen, "the ORC table decodes as both %s and %s",
					 short_names[found], short_names[l]);
				return GUEST_ORC_AUTO;
			}
			found = (enum guest_orc_layout)l;
		} else if (used < sizeof(w)) {
			used += (size_t)snprintf(w + used, sizeof(w) - used, "%s%s: %s", used ? "; " : "",
						 short_names[l], f.why);
		}
	}
	if (found == GUEST_ORC_AUTO)
		snprintf(why, whylen, "no ORC layout fits the table (%.400s)", w);
	return found;
}

int guest_orc_from_tables(const uint8_t *ipt, uint64_t ipt_addr, const uint8_t *ent, size_t n,
			  const char *version, enum guest_orc_layout layout, struct guest_orc *o,
			  char *why, size_t whylen)
{
	memset(o, 0, sizeof(*o));
	if (n == 0) {
		snprintf(why, whylen, "empty ORC tables");
		return -EBADMSG;
	}
	if (n > GUEST_ORC_MAX_ENTRIES) {
		snprintf(why, whylen, "%zu ORC entries (bound %u)", n, GUEST_ORC_MAX_ENTRIES);
		return -E2BIG;
	}
	/* The kernel's version does not decide: RHEL 9.6's 5.14 has v3
	 * and 7.1's renumbering may be backported in turn. */
	(void)version;
	if (layout == GUEST_ORC_AUTO) {
		layout = detect_layout(ent, n, why, whylen);
		if (layout == GUEST_ORC_AUTO)
			return -EBADMSG;
	} else if (layout < GUEST_ORC_V1 || layout > GUEST_ORC_V4) {
		snprintf(why, whylen, "ORC layout %d unknown", (int)layout);
		return -EINVAL;
	} else {
		struct fit f;
		fit_layout(ent, n, layout, &f);
		if (!fits(&f, n)) {
			snprintf(why, whylen, "ORC layout %s refused: %s", short_names[layout], f.why);
			return -EBADMSG;
		}
	}
	o->ip = xmalloc(n * sizeof(*o->ip));
	o->e = xmalloc(n * sizeof(*o->e));
	o->n = n;
	o->layout = layout;
	o->layout_name = layout_names[layout];
	for (size_t i = 0; i < n; i++) {
		uint64_t at = ipt_addr + 4 * (uint64_t)i;
		o->ip[i] = at + (uint64_t)(int64_t)(int32_t)get32(ipt + 4 * i);
		if (!guest_kptr(o->ip[i]) || (i > 0 && o->ip[i] < o->ip[i - 1])) {
			snprintf(why, whylen, "ORC ip %zu (0x%llx) %s", i, (unsigned long long)o->ip[i],
				 guest_kptr(o->ip[i]) ? "below the one before: table not sorted"
						       : "not a kernel address");
			goto bad;
		}
		if (!decode_entry(ent + i * ORC_ENTRY_SIZE, layout, &o->e[i])) {
			snprintf(why, whylen, "ORC entry %zu has fields the %s layout does not allow",
				 i, short_names[layout]);
			goto bad;
		}
		o->undefined += o->e[i].type == GUEST_ORC_T_UNDEFINED;
		o->ends += o->e[i].type == GUEST_ORC_T_END;
	}
	o->text = o->ip[0];
	o->etext = o->ip[n - 1] + 1;
	return 0;
bad:
	guest_orc_free(o);
	return -EBADMSG;
}

/* A symbol's address, checked to be a kernel address; 0 when absent. */
static uint64_t ksym(guest_sym_fn sym, void *ctx, const char *name)
{
	uint64_t a = sym(ctx, name);
	return guest_kptr(a) ? a : 0;
}

int guest_orc_locate(guest_sym_fn sym, void *symctx, struct guest_orc_loc *l, char *why, size_t whylen)
{
	memset(l, 0, sizeof(*l));
	uint64_t ip0 = ksym(sym, symctx, "__start_orc_unwind_ip");
	uint64_t ip1 = ksym(sym, symctx, "__stop_orc_unwind_ip");
	uint64_t e0 = ksym(sym, symctx, "__start_orc_unwind");
	uint64_t e1 = ksym(sym, symctx, "__stop_orc_unwind");
	if (!ip0 || !ip1 || !e0 || !e1) {
		snprintf(why, whylen, "no __start_orc_unwind_ip/__start_orc_unwind symbols: kernel without ORC");
		return -ENOENT;
	}
	if (ip1 < ip0 || e1 < e0 || (ip1 - ip0) % 4 || (e1 - e0) % ORC_ENTRY_SIZE) {
		snprintf(why, whylen, "ORC table bounds do not check (ip 0x%llx..0x%llx, entries 0x%llx..0x%llx)",
			 (unsigned long long)ip0, (unsigned long long)ip1, (unsigned long long)e0,
			 (unsigned long long)e1);
		return -EBADMSG;
	}
	uint64_t n = (ip1 - ip0) / 4;
	if (n != (e1 - e0) / ORC_ENTRY_SIZE) {
		snprintf(why, whylen, "ORC tables disagree: %llu ips, %llu entries", (unsigned long long)n,
			 (unsigned long long)((e1 - e0) / ORC_ENTRY_SIZE));
		return -EBADMSG;
	}
	if (n > GUEST_ORC_MAX_ENTRIES || n == 0) {
		snprintf(why, whylen, "%llu ORC entries (bound 1..%u)", (unsigned long long)n,
			 GUEST_ORC_MAX_ENTRIES);
		return n ? -E2BIG : -EBADMSG;
	}
	l->ipt = ip0;
	l->ent = e0;
	l->n = (size_t)n;
	l->text = ksym(sym, symctx, "_stext");
	l->etext = ksym(sym, symctx, "_etext");
	l->inittext = ksym(sym, symctx, "_sinittext");
	l->einittext = ksym(sym, symctx, "_einittext");
	l->lookup = ksym(sym, symctx, "orc_lookup");
	l->lookup_end = ksym(sym, symctx, "orc_lookup_end");
	l->lookup_num = ksym(sym, symctx, "lookup_num_blocks");
	return 0;
}

/* The index of the last entry whose ip <= ip in [lo, hi), or lo - 1
 * when none (lo > 0), SIZE_MAX when lo == 0 and none. */
static size_t search(const struct guest_orc *o, uint64_t ip, size_t lo, size_t hi)
{
	if (lo >= hi || o->ip[lo] > ip)
		return lo ? lo - 1 : SIZE_MAX;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->ip[mid] <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int guest_orc_read_lookup(struct guest_mem *m, const struct guest_orc_loc *l, struct guest_orc *o,
			  char *why, size_t whylen)
{
	if (!l->lookup || !l->lookup_end || !l->lookup_num || !o->n || !o->text || o->etext <= o->text)
		return -ENOENT;
	uint32_t num;
	int r = guest_mem_read(m, l->lookup_num, &num, sizeof(num));
	if (r < 0) {
		snprintf(why, whylen, "reading lookup_num_blocks: %s", strerror(-r));
		return r;
	}
	/* The kernel's unwind_init: num values, one per 256-byte block of
	 * [_stext, _etext) and one for _etext; its orc_find searches
	 * [lookup[b], lookup[b + 1]] for an ip in block b < num - 1. */
	uint64_t room = l->lookup_end > l->lookup ? (l->lookup_end - l->lookup) / 4 : 0;
	uint64_t text_blocks = (o->etext - o->text + GUEST_ORC_LOOKUP_BLOCK - 1) / GUEST_ORC_LOOKUP_BLOCK;
	if (num < 2 || num > room || num > text_blocks + 1) {
		snprintf(why, whylen, "lookup_num_blocks %u does not fit orc_lookup (%llu values) or the text "
			 "(%llu blocks)", num, (unsigned long long)room, (unsigned long long)text_blocks);
		return -EBADMSG;
	}
	uint32_t *t = xmalloc((size_t)num * 4);
	if ((r = guest_mem_read(m, l->lookup, t, (size_t)num * 4)) < 0) {
		snprintf(why, whylen, "reading orc_lookup (%u blocks): %s", num, strerror(-r));
		free(t);
		return r;
	}
	for (uint32_t b = 0; b < num; b++) {
		uint64_t at = b + 1 < num ? o->text + (uint64_t)b * GUEST_ORC_LOOKUP_BLOCK : o->etext;
		size_t want = search(o, at, 0, o->n);
		if (want == SIZE_MAX || t[b] != want) {
			snprintf(why, whylen, "orc_lookup[%u] is %u, the table says %lld", b, t[b],
				 want == SIZE_MAX ? -1ll : (long long)want);
			free(t);
			return -EBADMSG;
		}
	}
	o->lookup = t;
	o->nblocks = num - 1;
	return 0;
}

int guest_orc_read_raw(struct guest_mem *m, const struct guest_orc_loc *l, uint8_t **raw,
		       char *why, size_t whylen)
{
	uint8_t *b = xmalloc(l->n * GUEST_ORC_RAW_ENTRY);
	int r = guest_mem_read(m, l->ipt, b, l->n * 4);
	if (r == 0)
		r = guest_mem_read(m, l->ent, b + l->n * 4, l->n * ORC_ENTRY_SIZE);
	if (r < 0) {
		snprintf(why, whylen, "reading the ORC tables (%zu entries): %s", l->n, strerror(-r));
		free(b);
		return r;
	}
	*raw = b;
	return 0;
}

/* Compares len bytes of raw at off (a table at guest address at) with
 * the guest's; 0, -ESTALE or the read's errno. */
static int same_packet(struct guest_mem *m, uint64_t at, const uint8_t *raw, size_t off, size_t len,
		       uint8_t *buf)
{
	int r = guest_mem_read(m, at + off, buf, len);
	if (r < 0)
		return r;
	return memcmp(buf, raw + off, len) ? -ESTALE : 0;
}

int guest_orc_verify_raw(struct guest_mem *m, const struct guest_orc_loc *l, const uint8_t *raw,
			 size_t rawlen, unsigned packets, uint64_t seed, char *why, size_t whylen)
{
	if (rawlen != l->n * GUEST_ORC_RAW_ENTRY || !l->n) {
		snprintf(why, whylen, "the cached tables hold %zu bytes, the guest's %zu entries need %zu", rawlen,
			 l->n, l->n * GUEST_ORC_RAW_ENTRY);
		return -ESTALE;
	}
	uint8_t buf[GUEST_MEM_CHUNK];
	size_t pkt = m->chunk && m->chunk < sizeof(buf) ? m->chunk : sizeof(buf);
	const struct { uint64_t at; size_t off, len; const char *name; } t[2] = {
		{ l->ipt, 0, l->n * 4, "ip" }, { l->ent, l->n * 4, l->n * ORC_ENTRY_SIZE, "entry" },
	};
	uint64_t x = seed | 1;
	for (int k = 0; k < 2; k++) {
		size_t np = (t[k].len + pkt - 1) / pkt;
		for (unsigned i = 0; i < packets + 2; i++) {
			/* the first and last packets, then random ones */
			size_t p;
			if (i == 0)
				p = 0;
			else if (i == 1)
				p = np - 1;
			else {
				x ^= x << 13;   /* xorshift64 */
				x ^= x >> 7;
				x ^= x << 17;
				p = (size_t)(x % np);
			}
			size_t off = p * pkt, len = t[k].len - off < pkt ? t[k].len - off : pkt;
			int r = same_packet(m, t[k].at, raw + t[k].off, off, len, buf);
			if (r < 0) {
				snprintf(why, whylen, r == -ESTALE ? "the guest's ORC %s table differs at byte %zu" :
					 "reading the guest's ORC %s table at byte %zu: %s", t[k].name, off, strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

int guest_orc_from_raw(const uint8_t *raw, const struct guest_orc_loc *l, const char *version,
		       enum guest_orc_layout layout, struct guest_orc *o, char *why, size_t whylen)
{
	int r = guest_orc_from_tables(raw, l->ipt, raw + l->n * 4, l->n, version, layout, o, why, whylen);
	if (r < 0)
		return r;
	if (l->text && l->etext > l->text) {
		o->text = l->text;
		o->etext = l->etext;
	}
	if (l->inittext && l->einittext > l->inittext) {
		o->inittext = l->inittext;
		o->einittext = l->einittext;
	}
	return 0;
}

int guest_orc_read(struct guest_mem *m, guest_sym_fn sym, void *symctx, const char *version,
		   enum guest_orc_layout layout, struct guest_orc *o, char *why, size_t whylen)
{
	struct guest_orc_loc l;
	uint8_t *raw = NULL;
	memset(o, 0, sizeof(*o));
	int r = guest_orc_locate(sym, symctx, &l, why, whylen);
	if (r == 0)
		r = guest_orc_read_raw(m, &l, &raw, why, whylen);
	if (r == 0)
		r = guest_orc_from_raw(raw, &l, version, layout, o, why, whylen);
	free(raw);
	if (r == 0 && (r = guest_orc_check(o, sym, symctx, why, whylen)) == -ENOENT)
		r = 0;   /* no known function named: the table's own checks stand */
	if (r < 0)
		guest_orc_free(o);
	if (r == 0) {
		/* the fast table is an option: the table alone unwinds */
		char lwhy[160];
		(void)guest_orc_read_lookup(m, &l, o, lwhy, sizeof(lwhy));
	}
	return r;
}

/* ---- the check on known stacks ---- */

/* A one-page stack for the check: the return address at its sp. */
struct fake_stack {
	uint64_t base;
	uint8_t page[PAGE];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake_stack *f = ctx;
	if (addr < f->base || addr - f->base > PAGE || len > PAGE - (addr - f->base))
		return -EFAULT;
	memcpy(buf, f->page + (addr - f->base), len);
	return 0;
}

/* Functions every x86_64 kernel since 4.14 has (some renamed over time:
 * the ones found are used). */
static const char *const known_funcs[] = {
	"vfs_read", "vfs_write", "schedule", "do_sys_open", "do_sys_openat2", "ksys_read",
	"kernel_clone", "_do_fork", "do_exit", "__x64_sys_read", "filemap_read", "generic_file_read_iter",
};

int guest_orc_check(const struct guest_orc *o, guest_sym_fn sym, void *symctx, char *why, size_t whylen)
{
	/* The entry point the fake stacks return to: an end-of-stack
	 * entry's first byte (the unwinder looks a return address up at
	 * ip - 1, so one past it; its entry must still cover that byte). */
	uint64_t end_ip = 0;
	for (size_t i = 0; i + 1 < o->n && !end_ip; i++)
		if (o->e[i].type == GUEST_ORC_T_END && o->ip[i + 1] > o->ip[i] + 1 &&
		    guest_orc_find(o, o->ip[i]) == &o->e[i])
			end_ip = o->ip[i];
	if (!end_ip) {
		snprintf(why, whylen, "ORC %s refused: no end-of-stack entry to unwind to",
			 guest_orc_layout_short(o->layout));
		return -EBADMSG;
	}
	struct fake_stack *f = xcalloc(1, sizeof(*f));
	f->base = 0xffffc90000000000ull;   /* any 8-aligned kernel address */
	uint64_t sp = f->base + PAGE / 2;
	put64(f->page + PAGE / 2, end_ip + 1);
	struct guest_mem m = { .read = fake_read, .ctx = f };
	struct guest_orc_opts opt = { .depth = 4, .no_fp = true };
	unsigned tried = 0, ok = 0;
	char first[160] = "";
	for (size_t k = 0; k < sizeof(known_funcs) / sizeof(known_funcs[0]); k++) {
		uint64_t a = sym ? sym(symctx, known_funcs[k]) : 0;
		if (!guest_kptr(a) || a < o->text || a >= o->etext)
			continue;
		/* at a function's first byte: its caller's return address on
		 * top of the stack, as after the call */
		struct guest_regs r = { .r = { [GR_IP] = a, [GR_SP] = sp, [GR_BP] = sp + 64 } };
		struct guest_orc_chain ch;
		guest_orc_unwind(o, &m, &r, &opt, &ch);
		tried++;
		if (ch.stop == GUEST_ORC_END && ch.n == 2 && ch.ip[1] == end_ip + 1)
			ok++;
		else if (!first[0])
			snprintf(first, sizeof(first), "%s: %s after %u frame%s", known_funcs[k],
				 guest_orc_stop_name(ch.stop), ch.n, ch.n == 1 ? "" : "s");
	}
	free(f);
	if (!tried)
		return -ENOENT;
	if (ok < tried) {
		snprintf(why, whylen, "ORC %s refused: the unwinder reached an entry point on %u of %u known stacks "
			 "(%s)", guest_orc_layout_short(o->layout), ok, tried, first);
		return -EBADMSG;
	}
	return 0;
}

const struct guest_orc_entry *guest_orc_find(const struct guest_orc *o, uint64_t ip)
{
	bool in = (ip >= o->text && ip < o->etext) || (ip >= o->inittext && ip < o->einittext);
	if (!in || o->n == 0 || ip < o->ip[0])
		return NULL;
	/* The last entry whose ip <= ip: within the block's entries when
	 * the fast table covers ip (checked when read), else in all. */
	size_t lo = 0, hi = o->n;
	uint64_t b = (ip - o->text) / GUEST_ORC_LOOKUP_BLOCK;
	if (o->lookup && ip >= o->text && b < o->nblocks) {
		lo = o->lookup[b];
		hi = (size_t)o->lookup[b + 1] + 1;   /* both checked < n */
	}
	size_t i = search(o, ip, lo, hi);
	return i == SIZE_MAX ? NULL : &o->e[i];
}

void guest_orc_free(struct guest_orc *o)
{
	free(o->ip);
	free(o->e);
	free(o->lookup);
	memset(o, 0, sizeof(*o));
}

const char *guest_orc_stop_name(enum guest_orc_stop s)
{
	static const char *const names[GUEST_ORC_NSTOP] = {
		"end", "user", "fp-end", "depth", "undefined", "no-entry", "bad-register", "not-kernel",
		"bad-sp", "unreadable", "bytes", "sp-down", "loop", "stacks",
	};
	return (unsigned)s < GUEST_ORC_NSTOP ? names[s] : "?";
}

/* ---- the stack, read in windows ---- */

#define MAX_WINDOWS 16
struct stack {
	struct guest_mem *m;
	size_t window, max_bytes, used;
	uint64_t floor;         /* the current frame's sp (8-aligned) */
	struct { uint64_t addr; size_t len, off; } w[MAX_WINDOWS];
	unsigned nw;
	uint8_t buf[GUEST_ORC_MAX_STACK];
};

/* The u64 at addr (8-aligned, kernel half), from a window read before or
 * a new one of up to window bytes, never past the page end. */
static enum guest_orc_stop stack_u64(struct stack *s, uint64_t addr, uint64_t *v)
{
	if ((addr & 7) || !guest_kptr(addr))
		return GUEST_ORC_BADSP;
	for (unsigned i = 0; i < s->nw; i++)
		if (addr >= s->w[i].addr && addr - s->w[i].addr + 8 <= s->w[i].len) {
			*v = get64(s->buf + s->w[i].off + (addr - s->w[i].addr));
			return GUEST_ORC_END;
		}
	/* Start at the frame's sp when addr is near it (a frame's reads are
	 * all at or above its sp: bp's slot lies below the return
	 * address's), but not inside a window already read. */
	uint64_t start = addr;
	if (s->floor <= addr && addr - s->floor < s->window && (s->floor >> 12) == (addr >> 12))
		start = s->floor;
	for (unsigned k = 0, moved = 1; moved && k <= s->nw; k++) {
		moved = 0;
		for (unsigned i = 0; i < s->nw; i++)
			if (start >= s->w[i].addr && start - s->w[i].addr < s->w[i].len) {
				start = s->w[i].addr + s->w[i].len;
				moved = 1;
			}
	}
	if (start > addr)
		start = addr;
	size_t len = s->window;
	uint64_t page_end = (start | (PAGE - 1)) + 1;
	if (len > page_end - start)
		len = page_end - start;
	if (len > s->max_bytes - s->used)
		len = (s->max_bytes - s->used) & ~(size_t)7;
	if (len < 8 || addr - start + 8 > len || s->nw == MAX_WINDOWS)
		return GUEST_ORC_BYTES;
	int r = guest_mem_read(s->m, start, s->buf + s->used, len);
	if (r == -E2BIG)
		return GUEST_ORC_BYTES;
	if (r < 0)
		return GUEST_ORC_READ;
	s->w[s->nw].addr = start;
	s->w[s->nw].len = len;
	s->w[s->nw++].off = s->used;
	s->used += len;
	*v = get64(s->buf + s->w[s->nw - 1].off + (addr - start));
	return GUEST_ORC_END;
}

/* ---- the unwinder ---- */

/* What the unwinder knows of the current frame's registers. */
struct frame {
	struct guest_regs r;
	bool full;      /* all of r (the vCPU's own, or a full pt_regs) */
	bool iret;      /* only ip, cs, flags, sp, ss (a partial pt_regs) */
	bool signal;    /* look ip up as it is, not ip - 1 */
};

/* The innermost frame in a no-frame range: the return address on top. */
static const struct guest_orc_entry top_entry = {
	.sp_offset = 8, .sp_reg = ORC_REG_SP, .bp_reg = ORC_REG_UNDEFINED, .type = GUEST_ORC_T_CALL,
};

void guest_orc_add_noframe(struct guest_orc *o, uint64_t start, uint64_t end)
{
	if (o->nnoframe >= GUEST_ORC_MAX_NOFRAME || end <= start || end - start > (64u << 10) ||
	    !guest_kptr(start))
		return;
	o->noframe[o->nnoframe][0] = start;
	o->noframe[o->nnoframe++][1] = end;
}

static bool in_noframe(const struct guest_orc *o, uint64_t ip)
{
	for (unsigned i = 0; i < o->nnoframe && i < GUEST_ORC_MAX_NOFRAME; i++)
		if (ip >= o->noframe[i][0] && ip < o->noframe[i][1])
			return true;
	return false;
}

/* The frame-pointer guess the kernel uses for code ORC does not know. */
static const struct guest_orc_entry fp_entry = {
	.sp_offset = 16, .bp_offset = -16, .sp_reg = ORC_REG_BP, .bp_reg = ORC_REG_PREV_SP,
	.type = GUEST_ORC_T_CALL,
};

/* A register for an sp rule: only when this frame has it. */
static bool frame_reg(const struct frame *f, unsigned gr, uint64_t *v)
{
	if (!f->full)
		return false;
	*v = f->r.r[gr];
	return true;
}

/* The caller's sp by the entry's sp rule. */
static enum guest_orc_stop rule_sp(struct stack *s, const struct frame *f,
				   const struct guest_orc_entry *e, uint64_t *sp)
{
	bool indirect = false;
	uint64_t v;
	switch (e->sp_reg) {
	case ORC_REG_SP: *sp = f->r.r[GR_SP] + (uint64_t)(int64_t)e->sp_offset; break;
	case ORC_REG_BP: *sp = f->r.r[GR_BP] + (uint64_t)(int64_t)e->sp_offset; break;
	case ORC_REG_SP_INDIRECT: *sp = f->r.r[GR_SP]; indirect = true; break;
	case ORC_REG_BP_INDIRECT:
		*sp = f->r.r[GR_BP] + (uint64_t)(int64_t)e->sp_offset;
		indirect = true;
		break;
	case ORC_REG_R10: if (!frame_reg(f, GR_R10, sp)) return GUEST_ORC_BADREG; break;
	case ORC_REG_R13: if (!frame_reg(f, GR_R13, sp)) return GUEST_ORC_BADREG; break;
	case ORC_REG_DI: if (!frame_reg(f, GR_DI, sp)) return GUEST_ORC_BADREG; break;
	case ORC_REG_DX: if (!frame_reg(f, GR_DX, sp)) return GUEST_ORC_BADREG; break;
	default: return GUEST_ORC_BADREG;
	}
	if (indirect) {
		enum guest_orc_stop st = stack_u64(s, *sp, &v);
		if (st != GUEST_ORC_END)
			return st;
		*sp = v;
		if (e->sp_reg == ORC_REG_SP_INDIRECT)
			*sp += (uint64_t)(int64_t)e->sp_offset;
	}
	return GUEST_ORC_END;
}

/* Reads n u64 at addr into r.r[first..]. */
static enum guest_orc_stop stack_regs(struct stack *s, uint64_t addr, unsigned first, unsigned n,
				      struct guest_regs *r)
{
	for (unsigned i = 0; i < n; i++) {
		enum guest_orc_stop st = stack_u64(s, addr + 8 * (uint64_t)i, &r->r[first + i]);
		if (st != GUEST_ORC_END)
			return st;
	}
	return GUEST_ORC_END;
}

/* One step: from frame f by entry e to the caller's frame in *nf.
 * Returns GUEST_ORC_END to go on (the caller looks at nf), or why not. */
static enum guest_orc_stop step(struct stack *s, const struct frame *f,
				const struct guest_orc_entry *e, struct frame *nf)
{
	uint64_t sp, v;
	enum guest_orc_stop st = rule_sp(s, f, e, &sp);
	if (st != GUEST_ORC_END)
		return st;
	*nf = *f;
	switch (e->type) {
	case GUEST_ORC_T_CALL:
		if ((st = stack_u64(s, sp - 8, &nf->r.r[GR_IP])) != GUEST_ORC_END)
			return st;
		nf->r.r[GR_SP] = sp;
		nf->full = nf->iret = false;
		nf->signal = e->signal;
		break;
	case GUEST_ORC_T_REGS:
		if ((st = stack_regs(s, sp, 0, GR_N, &nf->r)) != GUEST_ORC_END)
			return st;
		nf->full = true;
		nf->iret = false;
		nf->signal = true;
		break;
	case GUEST_ORC_T_REGS_PARTIAL:
		if ((st = stack_regs(s, sp, GR_IP, GR_N - GR_IP, &nf->r)) != GUEST_ORC_END)
			return st;
		nf->full = false;
		nf->iret = true;
		nf->signal = true;
		break;
	default:
		return GUEST_ORC_UNDEF;
	}
	/* The caller's bp. A full pt_regs brought its own bp. */
	switch (e->bp_reg) {
	case ORC_REG_UNDEFINED:
		break;
	case ORC_REG_PREV_SP:
		if ((st = stack_u64(s, sp + (uint64_t)(int64_t)e->bp_offset, &v)) != GUEST_ORC_END)
			return st;
		nf->r.r[GR_BP] = v;
		break;
	case ORC_REG_BP:
		if ((st = stack_u64(s, f->r.r[GR_BP] + (uint64_t)(int64_t)e->bp_offset, &v)) != GUEST_ORC_END)
			return st;
		nf->r.r[GR_BP] = v;
		break;
	default:
		return GUEST_ORC_BADREG;
	}
	return GUEST_ORC_END;
}

/* The loop check: sp strictly up within a stack; a switch (sp down) only
 * to a block never seen, at most GUEST_ORC_MAX_STACKS times. */
struct stacks {
	uint64_t seen[GUEST_ORC_MAX_DEPTH + 1];
	unsigned nseen, switches;
};

static enum guest_orc_stop check_sp(struct stacks *k, uint64_t prev, uint64_t sp)
{
	if (sp == prev)
		return GUEST_ORC_LOOP;
	if (sp > prev) {
		if (STACK_BLOCK(sp) != STACK_BLOCK(prev) && k->nseen < GUEST_ORC_MAX_DEPTH + 1)
			k->seen[k->nseen++] = STACK_BLOCK(sp);
		return GUEST_ORC_END;
	}
	if (STACK_BLOCK(sp) == STACK_BLOCK(prev))
		return GUEST_ORC_SP_DOWN;
	for (unsigned i = 0; i < k->nseen; i++)
		if (k->seen[i] == STACK_BLOCK(sp))
			return GUEST_ORC_LOOP;
	if (++k->switches > GUEST_ORC_MAX_STACKS)
		return GUEST_ORC_STACKS;
	if (k->nseen < GUEST_ORC_MAX_DEPTH + 1)
		k->seen[k->nseen++] = STACK_BLOCK(sp);
	return GUEST_ORC_END;
}

int guest_orc_unwind(const struct guest_orc *o, struct guest_mem *stack,
		     const struct guest_regs *regs, const struct guest_orc_opts *opt,
		     struct guest_orc_chain *out)
{
	static const struct guest_orc_opts defaults = { 0 };
	if (!opt)
		opt = &defaults;
	memset(out, 0, sizeof(*out));
	out->ip[out->n++] = regs->r[GR_IP];
	if (regs->r[GR_CS] & 3) {
		out->stop = GUEST_ORC_USER;
		return -EINVAL;
	}
	unsigned depth = opt->depth ? opt->depth : 64;
	if (depth > GUEST_ORC_MAX_DEPTH)
		depth = GUEST_ORC_MAX_DEPTH;
	struct stack *s = xmalloc(sizeof(*s));
	s->m = stack;
	s->window = opt->window ? opt->window : GUEST_MEM_CHUNK;
	s->max_bytes = opt->max_bytes ? opt->max_bytes : 8192;
	if (s->max_bytes > GUEST_ORC_MAX_STACK)
		s->max_bytes = GUEST_ORC_MAX_STACK;
	s->used = 0;
	s->nw = 0;
	uint64_t b0 = stack->bytes, r0 = stack->reads;
	struct stacks k = { .seen = { STACK_BLOCK(regs->r[GR_SP]) }, .nseen = 1 };
	struct frame f = { .r = *regs, .full = true, .signal = true };
	enum guest_orc_stop st;
	for (;;) {
		uint64_t ip = f.r.r[GR_IP];
		if (!guest_kptr(ip)) {
			st = GUEST_ORC_NOTKERNEL;
			break;
		}
		const struct guest_orc_entry *e = guest_orc_find(o, f.signal ? ip : ip - 1);
		if (out->n == 1 && in_noframe(o, ip))
			e = &top_entry;
		bool fp = false;
		if (!e) {
			if (opt->no_fp) {
				st = GUEST_ORC_NOENTRY;
				break;
			}
			if (f.r.r[GR_BP] == 0) {
				st = GUEST_ORC_FP_END;
				break;
			}
			e = &fp_entry;
			fp = true;
		}
		if (e->type == GUEST_ORC_T_END) {
			st = GUEST_ORC_END;
			break;
		}
		if (e->type == GUEST_ORC_T_UNDEFINED) {
			st = GUEST_ORC_UNDEF;
			break;
		}
		if (out->n >= depth) {
			st = GUEST_ORC_DEPTH;
			break;
		}
		struct frame nf;
		s->floor = f.r.r[GR_SP] & ~7ull;
		if ((st = step(s, &f, e, &nf)) != GUEST_ORC_END)
			break;
		/* A pt_regs from user mode: its rip is the last frame (its sp
		 * is the user stack, not checked). */
		if ((nf.full || nf.iret) && (nf.r.r[GR_CS] & 3)) {
			out->ip[out->n++] = nf.r.r[GR_IP];
			st = GUEST_ORC_USER;
			break;
		}
		if ((st = check_sp(&k, f.r.r[GR_SP], nf.r.r[GR_SP])) != GUEST_ORC_END)
			break;
		out->ip[out->n++] = nf.r.r[GR_IP];
		out->fp_frames += fp;
		f = nf;
	}
	out->stop = st;
	out->switches = k.switches;
	out->bytes = stack->bytes - b0;
	out->reads = stack->reads - r0;
	free(s);
	return 0;
}
