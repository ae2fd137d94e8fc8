// SPDX-License-Identifier: MIT
/*
 * The quick unwind step (docs/dwarf-notes.md, "The quick step"): most
 * x86-64 frames of compiled code have CFI of one form, "CFA = sp or bp +
 * N, return address at CFA + R, the caller's bp at CFA + B or unchanged,
 * the caller's sp = CFA". For such a frame a step is a table lookup and
 * two stack loads: no allocation, no libdwfl state. The rule of each
 * (image, image address) is asked of libdw once (dwarf_cfi_addrframe on
 * the image's own .eh_frame, the same table libdwfl reads first) and
 * kept for the whole load, shared by every process that maps the image.
 *
 * One more form is followed: the CFA expression of GNU ld's lazy .plt
 * entries (uwq_plt_cfa). The walk gives up (UWQ_FALLBACK, and unwind.c
 * unwinds the sample with libdwfl as before) wherever libdwfl might do
 * something else: a pc in
 * no readable ELF image (libdwfl then tries frame pointers), an image
 * without .eh_frame, a rule of another form (expressions, other CFA
 * registers, a signal frame), a saved register outside the stored stack.
 * What it returns otherwise is what libdwfl gives:
 * tests/e2e/unwind-quick.sh compares both on every chain of real
 * recordings.
 *
 * Hostile input: the registers and stack words are file contents; every
 * load is bounded to the stored stack; the walk is bounded by max; the
 * ELF files are parsed by libdw, as for the libdwfl path.
 */
#include "symbols/internal.h"
#include "symbols/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* Images one load keeps open (each holds a descriptor and a mapping),
 * and rules it keeps (40 bytes each): past either, samples go the
 * libdwfl way. */
#define UWQ_MAX_IMAGES 1024u
#define UWQ_MAX_RULES (1u << 20)

enum { X86_BP = 6, X86_SP = 7, X86_RA = 16 };
/* cfa_reg of the PLT form (below): not a DWARF register number */
enum { CFA_PLT = 0xff };

enum uwq_kind {
	RULE_STEP,       /* the simple form: step with the fields below */
	RULE_OUTERMOST,  /* the return address is undefined: the outermost frame */
	RULE_NO_FDE,     /* .eh_frame has no FDE (or none that parses) for it */
	RULE_OTHER,      /* any other form: libdwfl's */
};

enum { BP_SAME, BP_SAVED };

struct uwq_rule {
	const struct sym_image *img;
	uint64_t addr;               /* image address */
	uint8_t kind, cfa_reg, bp_how;
	uint8_t plt_k;               /* CFA_PLT: 8 more from (pc & 15) >= plt_k */
	int32_t cfa_off, ra_off, bp_off;
	/* the offsets from the CFA of every register saved in memory: libdwfl
	 * reads them all at each step, and a failed read at the outermost
	 * step makes the walk "stopped" (uw_memory_read's failed_at) */
	int32_t save_lo, save_hi;
	bool saves;
};

struct uwq_img {
	int fd;                      /* -1 for an embedded ELF */
	Elf *elf;
	Dwarf_CFI *cfi;              /* NULL: no .eh_frame, libdwfl's */
};

struct uwq {
	struct sym_session *s;
	struct hmap imgs;            /* image -> uwq_img */
	size_t nimgs;
	struct hidx idx;             /* hash of (image, addr) -> rule */
	struct uwq_rule *rules;
	size_t nrules, caprules;
};

struct uwq *uwq_new(struct sym_session *s)
{
	struct uwq *q = xcalloc(1, sizeof(*q));
	q->s = s;
	hidx_init(&q->idx, 1024);
	return q;
}

void uwq_free(struct uwq *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->imgs.cap; i++) {
		struct uwq_img *qi = q->imgs.v ? q->imgs.v[i].val : NULL;
		if (!qi)
			continue;
		/* the CFI of dwarf_getcfi_elf is the caller's to end */
		if (qi->cfi)
			dwarf_cfi_end(qi->cfi);
		if (qi->elf)
			elf_end(qi->elf);
		if (qi->fd >= 0)
			close(qi->fd);
		free(qi);
	}
	hmap_release(&q->imgs);
	hidx_release(&q->idx);
	free(q->rules);
	free(q);
}

/* The image's ELF as libdwfl is given it (unwind.c's uw_image_fd: the
 * embedded copy, the debug file the symbols came from, or the path),
 * opened once; NULL when it cannot be. */
static struct uwq_img *uwq_image(struct uwq *q, const struct sym_image *img)
{
	struct uwq_img *qi = u64map_get(&q->imgs, (uint64_t)(uintptr_t)img);
	if (qi)
		return qi->elf ? qi : NULL;
	if (q->nimgs >= UWQ_MAX_IMAGES)
		return NULL;
	qi = xcalloc(1, sizeof(*qi));
	qi->fd = -1;
	elf_version(EV_CURRENT);
	if (img->blob) {
		qi->elf = elf_memory((char *)img->blob, img->blob_size);
	} else {
		const char *path = img->tab_loaded ? img->src_path : img->path;
		qi->fd = path ? file_open_regular(path, NULL) : -1;
		if (qi->fd >= 0)
			qi->elf = elf_begin(qi->fd, ELF_C_READ_MMAP, NULL);
	}
	if (qi->elf && elf_kind(qi->elf) == ELF_K_ELF)
		qi->cfi = dwarf_getcfi_elf(qi->elf);
	u64map_put(&q->imgs, (uint64_t)(uintptr_t)img, qi);
	q->nimgs++;
	return qi->elf ? qi : NULL;
}

void *uwq_image_elf(struct uwq *q, const struct sym_image *img)
{
	struct uwq_img *qi = uwq_image(q, img);
	return qi ? qi->elf : NULL;
}

/* [CFA][plus_uconst N], "at CFA + N" (*off = N), and with a final
 * DW_OP_stack_value "the value CFA + N" (*value): the forms libdw gives
 * for the offset and val_offset rules. */
static bool uwq_cfa_plus(const Dwarf_Op *ops, size_t nops, int32_t *off, bool *value)
{
	*value = nops >= 1 && ops[nops - 1].atom == DW_OP_stack_value;
	if (*value)
		nops--;
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	int64_t n = 0;
	if (nops == 2) {
		if (ops[1].atom != DW_OP_plus_uconst)
			return false;
		n = (int64_t)ops[1].number;
	}
	if (n < -(1 << 20) || n > (1 << 20))
		return false;
	*off = (int32_t)n;
	return true;
}

/*
 * The CFA expression GNU ld writes for the lazy-binding entries of an
 * x86-64 .plt: "rsp + N, 8 more once the entry has pushed its index",
 * DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litK;
 * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus, i.e. CFA = rsp + N +
 * (((rip & 15) >= K) << 3), rip being the frame's pc (register 16, as
 * libdwfl's state holds it). Every sample in a PLT stub went to libdwfl
 * before (a Dwfl per process: gcc's 24 cc1 processes each built one for
 * a few such samples). Exactly this sequence, nothing like it.
 */
static bool uwq_plt_cfa(const Dwarf_Op *ops, size_t nops, struct uwq_rule *r)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 ||
	    ops[1].number != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	int64_t n = (int64_t)ops[0].number;
	if (n < -(1 << 20) || n > (1 << 20))
		return false;
	r->cfa_reg = CFA_PLT;
	r->cfa_off = (int32_t)n;
	r->plt_k = (uint8_t)(ops[4].atom - DW_OP_lit0);
	return true;
}

/* The rule of frame fr, as libdwfl's handle_cfi would read it: "undefined"
 * is nops 0 with ops pointing at ops_mem, "same value" nops 0 with ops
 * NULL (libdw.h, dwarf_frame_register). */
static void uwq_rule_of(Dwarf_Frame *fr, struct uwq_rule *r)
{
	r->kind = RULE_OTHER;
	Dwarf_Addr start, end;
	bool signal = false;
	if (dwarf_frame_info(fr, &start, &end, &signal) != X86_RA || signal)
		return;
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0)
		return;
	if (uwq_plt_cfa(ops, nops, r)) {
		/* the PLT form: cfa_reg, cfa_off and plt_k are set */
	} else if (nops != 1 || ops[0].atom != DW_OP_bregx ||
		   (ops[0].number != X86_SP && ops[0].number != X86_BP) ||
		   (int64_t)ops[0].number2 < -(1 << 20) || (int64_t)ops[0].number2 > (1 << 20)) {
		return;
	} else {
		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	}
	bool ra_undefined = false;
	for (int reg = 0; reg <= X86_RA; reg++) {
		Dwarf_Op mem[3];
		int k = dwarf_frame_register(fr, reg, mem, &ops, &nops);
		if (k < 0)
			return;
		bool undefined = nops == 0 && ops == mem;
		bool same = nops == 0 && !ops;
		int32_t off = 0;
		bool value = false;
		bool plus = k == 0 && uwq_cfa_plus(ops, nops, &off, &value);
		if (!undefined && !same && !plus)
			return;   /* a register or expression rule */
		if (reg == X86_SP) {
			/* the caller's sp is the CFA (x86-64 ABI CFI: val_offset 0) */
			if (!plus || !value || off != 0)
				return;
			continue;
		}
		bool at = plus && !value;
		if (plus && value && (reg == X86_RA || reg == X86_BP))
			return;
		if (at) {
			r->save_lo = r->saves && r->save_lo < off ? r->save_lo : off;
			r->save_hi = r->saves && r->save_hi > off ? r->save_hi : off;
			r->saves = true;
		}
		if (reg == X86_RA) {
			if (undefined)
				ra_undefined = true;
			else if (at)
				r->ra_off = off;
			else
				return;
		} else if (reg == X86_BP) {
			if (same)
				r->bp_how = BP_SAME;
			else if (at) {
				r->bp_how = BP_SAVED;
				r->bp_off = off;
			} else {
				return;
			}
		}
	}
	r->kind = ra_undefined ? RULE_OUTERMOST : RULE_STEP;
}

struct uwq_key {
	const struct uwq *q;
	const struct sym_image *img;
	uint64_t addr;
};

static bool uwq_key_eq(const void *ctx, uint32_t e)
{
	const struct uwq_key *k = ctx;
	const struct uwq_rule *r = &k->q->rules[e];
	return r->img == k->img && r->addr == k->addr;
}

/* The rule at image address addr of img (whose CFI qi holds). */
static struct uwq_rule uwq_rule(struct uwq *q, struct uwq_img *qi, const struct sym_image *img,
				uint64_t addr)
{
	uint64_t h = hash_fold64(hash_mix64((uint64_t)(uintptr_t)img), addr);
	struct uwq_key k = { q, img, addr };
	size_t slot;
	uint32_t e = hidx_find(&q->idx, h, uwq_key_eq, &k, &slot);
	if (e != HIDX_NONE)
		return q->rules[e];
	struct uwq_rule r = { .img = img, .addr = addr, .kind = RULE_NO_FDE };
	Dwarf_Frame *fr = NULL;
	if (dwarf_cfi_addrframe(qi->cfi, addr, &fr) == 0)
		uwq_rule_of(fr, &r);
	free(fr);
	if (q->nrules < UWQ_MAX_RULES) {
		xgrow((void **)&q->rules, &q->caprules, q->nrules + 1, sizeof(*q->rules));
		q->rules[q->nrules] = r;
		hidx_fill(&q->idx, slot, h, (uint32_t)q->nrules);
		q->nrules++;
	}
	return r;
}

/* Stack word at addr of the stored stack (from sp0), or false. */
static bool uwq_load(const struct dp_sample *smp, uint64_t sp0, uint64_t addr, uint64_t *v)
{
	if (addr < sp0 || addr - sp0 > smp->ustack_len || smp->ustack_len - (addr - sp0) < 8)
		return false;
	memcpy(v, smp->ustack + (addr - sp0), 8);
	return true;
}

/* The end of a walk at an outermost step: libdwfl read every saved
 * register of the step, and one read that failed would make the walk
 * "stopped" (uw_memory_read's failed_at): reads outside the stack are
 * left to libdwfl (the stored stack is one range: its ends suffice). */
static enum uwq_end uwq_last_step(const struct dp_sample *smp, uint64_t sp0,
				  const struct uwq_rule *r, uint64_t cfa)
{
	uint64_t v;
	if (r->saves && (!uwq_load(smp, sp0, cfa + (uint64_t)(int64_t)r->save_lo, &v) ||
			 !uwq_load(smp, sp0, cfa + (uint64_t)(int64_t)r->save_hi, &v)))
		return UWQ_FALLBACK;
	return UWQ_OUTERMOST;
}

enum uwq_end uwq_walk(struct uwq *q, uint32_t domain, uint32_t pid, const struct dp_sample *smp,
		      uint64_t ip, uint64_t sp, uint64_t bp, uint64_t *pcs, uint32_t max,
		      uint32_t *n, const struct sym_image **nofde_img)
{
	const uint64_t sp0 = sp;
	uint64_t pc = ip;
	*n = 0;
	*nofde_img = NULL;
	/* One process for the whole walk, and frames in a row mostly in one
	 * mapping and one image: the process is looked up once, a pc inside
	 * the last frame's mapping takes it again (a process's mappings do
	 * not overlap, so the search would find it), and the image's state
	 * of the last frame is kept (uwq_image answers the same for an
	 * image once asked). */
	struct proc *pr = sym_proc_get(q->s, domain, pid, false);
	struct sym_map *last = NULL;
	const struct sym_image *last_img = NULL;
	struct uwq_img *last_qi = NULL;
	bool bp_known = true;   /* false: libdwfl's state has bp unset */
	for (;;) {
		uint64_t look = *n == 0 || !pc ? pc : pc - 1;
		struct sym_map *m = last && look >= last->start && look < last->end ? last
				    : pr ? sym_proc_map_at(pr, look) : NULL;
		if (!m || m->img->kind != IMG_ELF)
			return UWQ_FALLBACK;
		last = m;
		image_place(q->s, m);   /* placed on first use (internal.h) */
		struct uwq_img *qi;
		if (!m->img->info_usable)
			qi = NULL;
		else if (m->img == last_img)
			qi = last_qi;
		else
			qi = uwq_image(q, m->img);
		last_img = m->img->info_usable ? m->img : NULL;
		last_qi = qi;
		if (!qi || !qi->cfi)
			return UWQ_FALLBACK;
		struct uwq_rule r = uwq_rule(q, qi, m->img, look + m->delta);
		if (r.kind == RULE_OTHER)
			return UWQ_FALLBACK;
		pcs[(*n)++] = pc;
		if (*n >= max)
			return UWQ_DEPTH;
		if (r.kind == RULE_NO_FDE) {
			*nofde_img = m->img;
			return UWQ_NO_FDE;
		}
		if (r.cfa_reg == X86_BP && !bp_known)
			return UWQ_FALLBACK;
		uint64_t cfa = (r.cfa_reg == X86_BP ? bp : sp) + (uint64_t)(int64_t)r.cfa_off;
		if (r.cfa_reg == CFA_PLT && (pc & 15) >= r.plt_k)
			cfa += 8;
		if (r.kind == RULE_OUTERMOST)
			return uwq_last_step(smp, sp0, &r, cfa);
		/* a return address past the stored stack (a cut stack): libdwfl
		 * takes it for undefined, and uw_memory_read counts the walk
		 * stopped, whatever became of bp */
		uint64_t ra;
		if (!uwq_load(smp, sp0, cfa + (uint64_t)(int64_t)r.ra_off, &ra))
			return UWQ_STOPPED;
		/* a saved bp outside the stack below a return address inside:
		 * libdwfl goes on with bp unset (handle_cfi skips a register
		 * it cannot read), and so does this walk while no CFA needs
		 * bp: a "same value" bp stays unset, a saved one read sets it
		 * again. A CFA from an unset bp is libdwfl's (it ends the walk
		 * or tries other tables: not followed here). This was every
		 * walk the quick step gave up on in the bench's recordings
		 * (6 of xz's 3007, 137 of python's 4680: a leaf caught after
		 * its epilogue's pop of bp), and the Dwfl they needed was 5%
		 * of a report's time. A ra of 0 at such a step ends the walk
		 * at uwq_last_step, whose check of the saved registers (bp's
		 * among them) gives it to libdwfl. */
		if (r.bp_how == BP_SAVED)
			bp_known = uwq_load(smp, sp0, cfa + (uint64_t)(int64_t)r.bp_off, &bp);
		if (ra == 0)   /* libdwfl: a return address of 0 ends the walk */
			return uwq_last_step(smp, sp0, &r, cfa);
		pc = ra;
		sp = cfa;
	}
}
