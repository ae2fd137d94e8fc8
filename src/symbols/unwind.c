// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of recorded user stacks (issue 14, docs/dwarf-notes.md):
 * a SAMPLE of `record --call-graph dwarf` carries the user registers and
 * the bytes of the user stack from sp upwards; libdwfl's unwinder walks
 * them with the CFI (.eh_frame, .debug_frame, also from separate debug
 * files) of the images the process had mapped, as perf's
 * util/unwind-libdw.c does, and gives the user call chain.
 *
 * One Dwfl per (domain, pid), kept for the whole load: libdwfl caches
 * each module's CFI, so a process's images are opened and parsed once.
 * Modules are reported lazily: the frame callback checks that the pc it
 * is given lies in a reported module; when it does not but a mapping of
 * the process holds it, the module is reported and the sample unwound
 * again (bounded retries). A pc whose mapping changed since it was
 * reported (exec, a library mapped again elsewhere) rebuilds the
 * process's Dwfl.
 *
 * Everything read here is hostile: registers and every stack word are
 * file contents. memory_read answers only from [sp, sp + len) of the
 * stored stack and from the file bytes of a reported module's PT_LOAD
 * segments, each bounded; depth is bounded by the caller's max and
 * UW_MAX_FRAMES.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/hmap.h"
#include "util/xalloc.h"

/* Modules one process's Dwfl may hold, and the reports (retries) one
 * sample may cause: a real process maps far fewer images than this. */
#define UW_MAX_MODS 512u
#define UW_MAX_RETRIES 16u
#define UW_MAX_FRAMES 256u

struct uw_mod {
	uint64_t lo, hi;            /* the mapping's range */
	const struct sym_image *img;
	uint64_t bias;              /* ip = image address + bias */
};

struct uw_proc {
	Dwfl *dwfl;
	bool attached;
	struct uw_mod *mods;
	size_t nmods;
	uint32_t domain, pid;
};

/* The sample being unwound and the frame walk's state. */
struct uw_walk {
	const struct dp_sample *smp;
	uint64_t sp;
	uint64_t *pcs;
	uint32_t max, n;
	const struct sym_map *need;     /* a mapping to report, then retry */
	bool rebuild;                   /* the process's mappings changed */
};

struct sym_unwinder {
	struct sym_session *s;
	struct hmap procs;              /* (domain << 32 | pid) -> uw_proc */
	struct uw_proc **all;           /* every uw_proc, for freeing */
	size_t nall, capall;
	struct uw_proc *cur;
	struct uw_walk *walk;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct sym_unwind_stats st;
	char err[160];
};

/* perf's x86-64 register of each DWARF register 0..16 (16: the return
 * address column, the ip): ax dx cx bx si di bp sp r8..r15 ip. */
static const unsigned uw_perf_reg[17] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	/* only get_thread is used; the process has no thread list */
	*thread_argp = NULL;
	return 0;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* A word of a reported module's file, at address addr of the process. */
static bool uw_read_module(Dwfl *dwfl, uint64_t addr, uint64_t *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	if (!mod)
		return false;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		return false;
	size_t rawsize;
	const char *raw = elf_rawfile(elf, &rawsize);
	size_t nph;
	if (!raw || elf_getphdrnum(elf, &nph) != 0)
		return false;
	uint64_t va = addr - bias;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va < ph.p_vaddr || va - ph.p_vaddr >= ph.p_filesz ||
		    ph.p_filesz - (va - ph.p_vaddr) < 8)
			continue;
		uint64_t off = ph.p_offset + (va - ph.p_vaddr);
		if (off > rawsize || rawsize - off < 8)
			return false;
		memcpy(out, raw + off, 8);
		return true;
	}
	return false;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sym_unwinder *u = arg;
	const struct uw_walk *w = u->walk;
	if (!w)
		return false;
	const struct dp_sample *smp = w->smp;
	if (addr >= w->sp && addr - w->sp <= smp->ustack_len &&
	    smp->ustack_len - (addr - w->sp) >= 8) {
		uint64_t v;
		memcpy(&v, smp->ustack + (addr - w->sp), 8);
		*result = v;
		return true;
	}
	uint64_t v;
	if (uw_read_module(dwfl, addr, &v)) {
		*result = v;
		return true;
	}
	return false;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sym_unwinder *u = arg;
	const struct dp_sample *smp = u->walk->smp;
	Dwarf_Word regs[17];
	for (unsigned i = 0; i < 17; i++) {
		uint64_t v = 0;
		if (!dp_sample_ureg(smp, uw_perf_reg[i], &v) && (i == 7 || i == 16))
			return false;
		regs[i] = v;
	}
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks uw_thread_cb = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

struct sym_unwinder *sym_unwinder_new(struct sym_session *s)
{
	struct sym_unwinder *u = xcalloc(1, sizeof(*u));
	u->s = s;
	/* libdwfl's search path: beside the file, its .debug/, the session's
	 * debug root (build-id and debuglink, as src/symbols/elf.c does) */
	const char *dd = s->debug_dir ? s->debug_dir : "/usr/lib/debug";
	size_t n = strlen(dd) + 16;
	u->debuginfo_path = xmalloc(n);
	snprintf(u->debuginfo_path, n, ":.debug:%s", dd);
	u->cb.find_elf = NULL;
	u->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	return u;
}

static void uw_proc_reset(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
	p->nmods = 0;
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nall; i++) {
		uw_proc_reset(u->all[i]);
		free(u->all[i]->mods);
		free(u->all[i]);
	}
	free(u->all);
	hmap_release(&u->procs);
	free(u->debuginfo_path);
	free(u);
}

void sym_unwinder_stats(const struct sym_unwinder *u, struct sym_unwind_stats *out)
{
	*out = u->st;
}

/* The file descriptor of an image's ELF bytes for libdwfl (which owns
 * it after a successful report), or -1. */
static int uw_image_fd(struct sym_image *img)
{
	if (img->blob) {
		int fd = memfd_create("domprof-elf", MFD_CLOEXEC);
		if (fd < 0)
			return -1;
		size_t done = 0;
		while (done < img->blob_size) {
			ssize_t w = write(fd, img->blob + done, img->blob_size - done);
			if (w <= 0) {
				close(fd);
				return -1;
			}
			done += (size_t)w;
		}
		return fd;
	}
	const char *path = img->tab_loaded ? img->src_path : img->path;
	return path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

/* Report mapping m's image to p's Dwfl. False when it cannot be. */
static bool uw_report(struct sym_unwinder *u, struct uw_proc *p, const struct sym_map *cm)
{
	struct sym_map *m = (struct sym_map *)cm;   /* placed on first use (internal.h) */
	struct sym_image *img = m->img;
	if (img->kind != IMG_ELF || p->nmods >= UW_MAX_MODS)
		return false;
	image_place(u->s, m);
	if (!img->info_usable)
		return false;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&u->cb);
		if (!p->dwfl)
			return false;
	}
	int fd = uw_image_fd(img);
	if (fd < 0)
		return false;
	uint64_t bias = (uint64_t)0 - m->delta;
	dwfl_report_begin_add(p->dwfl);
	Dwfl_Module *mod = dwfl_report_elf(p->dwfl, img->name, img->path, fd, bias, true);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!mod) {
		close(fd);
		return false;
	}
	if (!p->attached) {
		p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)(p->pid ? p->pid : 1),
						&uw_thread_cb, u);
		if (!p->attached)
			return false;
	}
	p->mods = xrealloc(p->mods, (p->nmods + 1) * sizeof(*p->mods));
	p->mods[p->nmods++] = (struct uw_mod){ m->start, m->end, img, bias };
	return true;
}

static const struct uw_mod *uw_find_mod(const struct uw_proc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (pc >= p->mods[i].lo && pc < p->mods[i].hi)
			return &p->mods[i];
	return NULL;
}

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct sym_unwinder *u = arg;
	struct uw_walk *w = u->walk;
	struct uw_proc *p = u->cur;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	/* a return address: the call is just before it */
	uint64_t look = act || !pc ? pc : pc - 1;
	const struct sym_map *m = sym_find_proc_map(u->s, p->domain, p->pid, look);
	const struct uw_mod *um = uw_find_mod(p, look);
	if (m && (!um || um->img != m->img || um->lo != m->start)) {
		if (um)
			w->rebuild = true;
		else if (m->img->kind == IMG_ELF && !w->need)
			w->need = m;
		if (w->rebuild || w->need)
			return DWARF_CB_ABORT;
	}
	if (w->n >= w->max)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = pc;
	return w->n >= w->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static struct uw_proc *uw_proc_get(struct sym_unwinder *u, uint32_t domain, uint32_t pid)
{
	uint64_t key = (uint64_t)domain << 32 | pid;
	struct uw_proc *p = u64map_get(&u->procs, key);
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->domain = domain;
		p->pid = pid;
		u64map_put(&u->procs, key, p);
		xgrow((void **)&u->all, &u->capall, u->nall + 1, sizeof(*u->all));
		u->all[u->nall++] = p;
	}
	return p;
}

uint32_t sym_unwind_user(struct sym_unwinder *u, uint32_t domain, uint32_t pid,
			 const struct dp_sample *smp, uint64_t *pcs, uint32_t max,
			 bool *complete)
{
	*complete = false;
	uint64_t ip, sp;
	if (!smp->has_uregs || smp->uregs_abi != DP_UREGS_ABI_64 || !max ||
	    !dp_sample_ureg(smp, DP_X86_REG_IP, &ip) || !dp_sample_ureg(smp, DP_X86_REG_SP, &sp))
		return 0;
	u->st.samples++;
	if (max > UW_MAX_FRAMES)
		max = UW_MAX_FRAMES;
	struct uw_proc *p = uw_proc_get(u, domain, pid);
	struct uw_walk w = { .smp = smp, .sp = sp, .pcs = pcs, .max = max };
	u->cur = p;
	u->walk = &w;
	/* the sampled ip's image first: the Dwfl needs one module to attach */
	const struct sym_map *m0 = sym_find_proc_map(u->s, domain, pid, ip);
	if (m0 && !uw_find_mod(p, ip))
		uw_report(u, p, m0);
	int r = -1;
	for (unsigned tries = 0; tries <= UW_MAX_RETRIES; tries++) {
		if (!p->attached)
			break;
		w.n = 0;
		w.need = NULL;
		w.rebuild = false;
		r = dwfl_getthread_frames(p->dwfl, (pid_t)(pid ? pid : 1), uw_frame, u);
		if (w.rebuild) {
			u->st.rebuilds++;
			uw_proc_reset(p);
			if (m0)
				uw_report(u, p, m0);
			continue;
		}
		if (!w.need)
			break;
		if (!uw_report(u, p, w.need))
			break;   /* the frame ends there: its image cannot be read */
	}
	u->walk = NULL;
	if (w.n == 0) {
		u->st.failed++;
		return 0;
	}
	/* 0: the CFI said the outermost frame was reached (e.g. _start) */
	*complete = r == 0;
	if (*complete)
		u->st.complete++;
	else if (w.n >= max)
		u->st.depth_cut++;
	else
		u->st.stopped++;
	u->st.frames += w.n;
	return w.n;
}
