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
#include "symbols/debuginfod.h"
#include "symbols/internal.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* Modules one process's Dwfl may hold, and the reports (retries) one
 * sample may cause: a real process maps far fewer images than this. */
#define UW_MAX_MODS 512u
#define UW_MAX_RETRIES 16u
#define UW_MAX_FRAMES 256u
#define UW_MAX_LIVE 64u
/* The answer cache (see sym_unwind_user): stack words one unwind may
 * read and still be cached, and the words all entries may hold (8 bytes
 * each: 64 MiB). Past the total, samples are unwound but not cached. */
#define UW_MAX_READS 512u
#define UW_CACHE_WORDS (8u << 20)
/* Entries one key (process, ip, sp, bp, length) may hold. A key whose
 * stack words keep changing (xz's hot loop: the callers' saved registers
 * hold its data) would otherwise grow a chain each lookup walks and
 * verifies: 20% of an xz report's time, for 0.5% hits. */
#define UW_MAX_VARIANTS 8u
/* Slots of the FDE-presence cache (uw_has_fde), a power of two. */
#define UW_FDE_SLOTS 4096u

struct uw_mod {
	uint64_t lo, hi;            /* the mapping's range */
	const struct sym_image *img;
	uint64_t bias;              /* ip = image address + bias */
	bool debug_frame;           /* may have .debug_frame (see uw_debug_frame) */
};

struct uw_proc {
	Dwfl *dwfl;
	bool attached;
	struct uw_mod *mods;
	size_t nmods;
	uint32_t domain, pid;
	uint64_t gen;               /* bumped when the Dwfl is rebuilt */
};

/* Registers libdwfl is given (DWARF numbers 0..16). */
#define UW_NREGS 17u

/* One cached unwind: its key (the process, every register, the stack
 * length), the stack words it read (addr, value pairs) and its pcs, all
 * in the unwinder's word arena. Every register, not only ip, sp and bp:
 * a CFA rule may use another (gcc's main realigning its stack computes
 * the CFA from r10), so two samples that differ in any register may
 * unwind differently. */
struct uw_ent {
	const struct uw_proc *proc;
	uint64_t gen;
	uint32_t len;               /* the sample's ustack_len */
	uint32_t nreads, npcs;
	size_t regs_off, reads_off, pcs_off;
	bool complete;
	bool no_fde;                /* ended at a pc without FDE (uw_walk.no_fde) */
	uint32_t next;              /* index+1 of the next entry of the bucket */
};

/* The sample being unwound and the frame walk's state. */
struct uw_walk {
	const struct dp_sample *smp;
	uint64_t regs[UW_NREGS];        /* the initial registers, DWARF order */
	uint64_t sp;
	uint64_t *pcs;
	uint32_t max, n;
	const struct sym_map *need;     /* a mapping to report, then retry */
	bool rebuild;                   /* the process's mappings changed */
	bool no_fde;                    /* ended at a pc .eh_frame does not cover */
	uint32_t failed_at;             /* n + 1 when a memory read last failed */
	uint64_t reads[2 * UW_MAX_READS]; /* stack words read: addr, value */
	uint32_t nreads;
	bool uncacheable;               /* read more than UW_MAX_READS */
};

struct sym_unwinder {
	struct sym_session *s;
	struct uwq *quick;              /* the quick step (unwind_quick.c), or NULL */
	struct hmap procs;              /* (domain << 32 | pid) -> uw_proc */
	struct uw_proc **all;           /* every uw_proc, for freeing */
	size_t nall, capall;
	struct uw_proc *cur;
	struct uw_walk *walk;
	struct uw_walk *wbuf;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct sym_unwind_stats st;
	struct hmap cache;              /* key hash -> index+1 of an entry */
	size_t live;                    /* processes holding a Dwfl */
	struct hmap dbgframe;           /* image -> 2: has .debug_frame, 1: not */
	struct uw_ent *ents;
	size_t nents, capents;
	uint64_t *words;
	size_t nwords, capwords;
	/* Whether an image's .eh_frame covers an address (uw_has_fde),
	 * direct-mapped; images live as long as the session. */
	struct uw_fde_slot {
		const struct sym_image *img;
		uint64_t addr;           /* image address */
		bool has;
	} *fde_slots;
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
		struct uw_walk *ww = u->walk;
		if (ww->nreads < UW_MAX_READS) {
			ww->reads[2 * ww->nreads] = addr;
			ww->reads[2 * ww->nreads + 1] = v;
			ww->nreads++;
		} else {
			ww->uncacheable = true;
		}
		return true;
	}
	/* Only the stored stack is memory here: not the modules' file bytes
	 * (as perf's unwind-libdw.c reads): what libdwfl could read would
	 * then depend on which modules earlier samples of the process
	 * reported, and no x86-64 CFI rule of compiled code reads there.
	 * libdwfl takes a return address it cannot read for an undefined
	 * one, the outermost frame: remember that this step read past the
	 * stored stack, so a cut stack is not counted complete */
	u->walk->failed_at = w->n + 1;
	return false;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sym_unwinder *u = arg;
	Dwarf_Word regs[UW_NREGS];
	for (unsigned i = 0; i < UW_NREGS; i++)
		regs[i] = u->walk->regs[i];
	return dwfl_thread_state_registers(thread, 0, UW_NREGS, regs);
}

static const Dwfl_Thread_Callbacks uw_thread_cb = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

/*
 * libdwfl's search for a module's debug file (beside it, .debug/, the
 * debug root), with its own last step, an unbounded debuginfod query
 * when DEBUGINFOD_URLS is set, replaced by the session's (bounded, once
 * per build-id, off after a server failure or with --no-debuginfod).
 * The module's user data is the unwinder (uw_report).
 */
static int uw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char *urls = dbgfd_env_hide();
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);
	dbgfd_env_restore(urls);
	struct sym_unwinder *u = userdata ? *userdata : NULL;
	const unsigned char *bid;
	GElf_Addr vaddr;
	int blen;
	if (fd >= 0 || !u || (blen = dwfl_module_build_id(mod, &bid, &vaddr)) < 2 || blen > 64)
		return fd;
	const char *path = sym_debuginfod(u->s, bid, (uint8_t)blen);
	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	free(*debuginfo_file_name);
	*debuginfo_file_name = strdup(path);
	return fd;
}

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
	u->cb.find_debuginfo = uw_find_debuginfo;
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	u->quick = uwq_new(s);
	return u;
}

void sym_unwinder_set_quick(struct sym_unwinder *u, bool on)
{
	if (!on) {
		uwq_free(u->quick);
		u->quick = NULL;
	} else if (!u->quick) {
		u->quick = uwq_new(u->s);
	}
}

static void uw_proc_reset(struct sym_unwinder *u, struct uw_proc *p)
{
	if (p->dwfl) {
		dwfl_end(p->dwfl);
		u->live--;
	}
	p->dwfl = NULL;
	p->attached = false;
	p->nmods = 0;
	p->gen++;
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nall; i++) {
		uw_proc_reset(u, u->all[i]);
		free(u->all[i]->mods);
		free(u->all[i]);
	}
	free(u->all);
	hmap_release(&u->cache);
	hmap_release(&u->dbgframe);
	free(u->fde_slots);
	free(u->ents);
	free(u->words);
	hmap_release(&u->procs);
	free(u->debuginfo_path);
	free(u->wbuf);
	uwq_free(u->quick);
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

/* What the sections of e say: .debug_frame present (*frame), DWARF of
 * its own (*info), .eh_frame (*eh). Section headers only: nothing is
 * decompressed. */
static void uw_sections(Elf *e, bool *frame, bool *info, bool *eh)
{
	*frame = *info = *eh = false;
	size_t shstr;
	if (!e || elf_getshdrstrndx(e, &shstr) != 0)
		return;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 65536 && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"))
			*frame = true;
		else if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			*info = true;
		else if (!strcmp(name, ".eh_frame"))
			*eh = true;
	}
}

/* Does a debug file with .debug_frame exist where libdwfl looks for one
 * (the build-id directory of the debug root; the debuglink name beside
 * the file, in its .debug/, under the debug root)? Looked up here rather
 * than with dwfl_standard_find_debuginfo on the module, which leaves the
 * module unable to load the file later. The CRC is libdwfl's to check. */
static bool uw_debug_file_frame(const struct sym_unwinder *u, Elf *e, const char *path)
{
	const char *root = u->s->debug_dir ? u->s->debug_dir : "/usr/lib/debug";
	char cand[4][4200];
	unsigned nc = 0;
	const void *bid;
	ssize_t blen = dwelf_elf_gnu_build_id(e, &bid);
	if (blen > 1 && blen <= 64) {
		const uint8_t *b = bid;
		int o = snprintf(cand[nc], sizeof(cand[nc]), "%.2000s/.build-id/%02x/", root, b[0]);
		for (ssize_t i = 1; i < blen && o > 0 && o < 4100; i++)
			o += snprintf(cand[nc] + o, sizeof(cand[nc]) - (size_t)o, "%02x", b[i]);
		if (o > 0 && o < 4100) {
			snprintf(cand[nc] + o, sizeof(cand[nc]) - (size_t)o, ".debug");
			nc++;
		}
	}
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(e, &crc);
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (link && !strchr(link, '/') && slash && path[0] == '/') {
		int dl = (int)(slash - path);
		snprintf(cand[nc++], sizeof(cand[0]), "%.*s/%.200s", dl > 2000 ? 2000 : dl, path, link);
		snprintf(cand[nc++], sizeof(cand[0]), "%.*s/.debug/%.200s", dl > 2000 ? 2000 : dl, path,
			 link);
		snprintf(cand[nc++], sizeof(cand[0]), "%.1000s%.*s/%.200s", root,
			 dl > 2000 ? 2000 : dl, path, link);
	}
	for (unsigned i = 0; i < nc; i++) {
		int fd = open(cand[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		bool frame = false, info, eh;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			Elf *d = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			uw_sections(d, &frame, &info, &eh);
			if (d)
				elf_end(d);
		}
		close(fd);
		if (frame)
			return true;
	}
	return false;
}

/*
 * May libdwfl's .debug_frame fallback (for a pc .eh_frame does not
 * cover) find something in mod? It loads the whole DWARF of the module
 * or of its separate debug file to look (every debug section,
 * decompressed), once per process: worth it only when the file, or its
 * debug file, has a .debug_frame section, which gcc emits only where
 * .eh_frame is not made (-fno-asynchronous-unwind-tables). Decided once
 * per image from section headers (the debug file found as libdwfl finds
 * it, opened and closed here).
 */
static bool uw_debug_frame(struct sym_unwinder *u, Elf *e, const struct sym_image *img)
{
	uintptr_t known = (uintptr_t)hmap_get(&u->dbgframe, (uint64_t)(uintptr_t)img, NULL);
	if (known)
		return known == 2;
	bool frame, info, eh;
	uw_sections(e, &frame, &info, &eh);
	if (!frame && !info && e)
		frame = uw_debug_file_frame(u, e, img->path);
	u64map_put(&u->dbgframe, (uint64_t)(uintptr_t)img, (void *)(uintptr_t)(frame ? 2 : 1));
	return frame;
}

/* At most UW_MAX_LIVE processes hold a Dwfl (each keeps its images'
 * files open and mapped): past it, all but p are let go (rebuilt when
 * their next sample comes; a recording without EXIT records, e.g. of
 * long-lived processes, would otherwise run out of descriptors). */
static void uw_bound_live(struct sym_unwinder *u, const struct uw_proc *p)
{
	if (u->live < UW_MAX_LIVE)
		return;
	for (size_t i = 0; i < u->nall; i++)
		if (u->all[i] != p && u->all[i]->dwfl) {
			uw_proc_reset(u, u->all[i]);
			u->st.forgotten++;
		}
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
		uw_bound_live(u, p);
		p->dwfl = dwfl_begin(&u->cb);
		if (!p->dwfl)
			return false;
		u->live++;
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
	void **ud;
	if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = u;    /* for uw_find_debuginfo */
	if (!p->attached) {
		p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)(p->pid ? p->pid : 1),
						&uw_thread_cb, u);
		if (!p->attached)
			return false;
	}
	p->mods = xrealloc(p->mods, (p->nmods + 1) * sizeof(*p->mods));
	Dwarf_Addr b;
	p->mods[p->nmods++] = (struct uw_mod){ m->start, m->end, img, bias,
					       uw_debug_frame(u, dwfl_module_getelf(mod, &b), img) };
	return true;
}

static const struct uw_mod *uw_find_mod(const struct uw_proc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (pc >= p->mods[i].lo && pc < p->mods[i].hi)
			return &p->mods[i];
	return NULL;
}

/* Whether the .eh_frame of the image of um covers pc (true also where
 * the module has no .eh_frame: libdwfl decides then). The answer is a
 * property of the image's file, so it is kept per (image, image
 * address): the same return addresses recur in every sample, and
 * dwarf_cfi_addrframe parses the FDE and runs its program each time
 * (7.6% of an xz report's instructions before this cache). */
static bool uw_has_fde(struct sym_unwinder *u, const struct uw_proc *p,
		       const struct uw_mod *um, uint64_t pc)
{
	uint64_t addr = pc - um->bias;
	if (!u->fde_slots)
		u->fde_slots = xcalloc(UW_FDE_SLOTS, sizeof(*u->fde_slots));
	struct uw_fde_slot *sl = &u->fde_slots[hash_fold64((uint64_t)(uintptr_t)um->img, addr) &
						(UW_FDE_SLOTS - 1)];
	if (sl->img == um->img && sl->addr == addr)
		return sl->has;
	bool has = true;
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	if (cfi) {
		Dwarf_Frame *fr = NULL;
		if (dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			has = false;
		free(fr);
	}
	/* only an answer about the module of um: the mapping's image is the
	 * one reported (uw_frame checked), so mod is its module */
	if (mod)
		*sl = (struct uw_fde_slot){ .img = um->img, .addr = addr, .has = has };
	return has;
}

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct sym_unwinder *u = arg;
	struct uw_walk *w = u->walk;
	struct uw_proc *p = u->cur;
	Dwarf_Addr pc;
	/* Not asking libdwfl whether the frame is an activation: to say so
	 * it unwinds the frame's caller first (to see a signal frame), before
	 * the checks below could stop it. The first frame is the sampled ip;
	 * the others are return addresses, the call just before them (a
	 * signal handler's interrupted pc is looked up one byte early). */
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	uint64_t look = w->n == 0 || !pc ? pc : pc - 1;
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
	if (w->n >= w->max)
		return DWARF_CB_ABORT;
	/* An image with .eh_frame but no FDE for this pc (junk from a stack
	 * that did not unwind, hand-written code) and no .debug_frame to
	 * look in (uw_debug_frame): the frame ends here. Left to itself
	 * libdwfl would fall back to .debug_frame, loading the module's
	 * whole DWARF to find none, once per process: 73% of a system-wide
	 * report's time before this check. */
	if (!um || um->debug_frame)
		return DWARF_CB_OK;
	if (!uw_has_fde(u, p, um, look)) {
		w->no_fde = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
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

void sym_unwinder_forget(struct sym_unwinder *u, uint32_t domain, uint32_t pid)
{
	struct uw_proc *p = u64map_get(&u->procs, (uint64_t)domain << 32 | pid);
	if (p && p->dwfl) {
		uw_proc_reset(u, p);   /* its cache entries' generation is gone with it */
		u->st.forgotten++;
	}
}

static uint64_t uw_key(const struct uw_proc *p, const uint64_t *regs, uint32_t len)
{
	uint64_t h = hash_fold64(0x5eedull, (uint64_t)(uintptr_t)p);
	h = hash_fold64(h, p->gen);
	for (unsigned i = 0; i < UW_NREGS; i++)
		h = hash_fold64(h, regs[i]);
	return hash_fold64(h, len);
}

/* A cached unwind of the same key whose every stack word read has the
 * same value in this sample: libdwfl would read and compute the same. */
static const struct uw_ent *uw_cache_find(const struct sym_unwinder *u, uint64_t h,
					  const struct uw_proc *p, const uint64_t *regs,
					  const struct dp_sample *smp, uint32_t *variants)
{
	uint32_t at = (uint32_t)(uintptr_t)u64map_get(&u->cache, h);
	*variants = 0;
	for (unsigned hops = 0; at && hops < 4096; hops++) {
		const struct uw_ent *e = &u->ents[at - 1];
		at = e->next;
		if (e->proc != p || e->gen != p->gen || e->len != smp->ustack_len ||
		    memcmp(u->words + e->regs_off, regs, UW_NREGS * sizeof(*regs)))
			continue;
		uint64_t sp = regs[7];
		++*variants;
		const uint64_t *r = u->words + e->reads_off;
		uint32_t i = 0;
		for (; i < e->nreads; i++) {
			uint64_t off = r[2 * i] - sp, v;
			/* the same len: every recorded address is inside */
			memcpy(&v, smp->ustack + off, 8);
			if (v != r[2 * i + 1])
				break;
		}
		if (i == e->nreads)
			return e;
	}
	return NULL;
}

static void uw_cache_put(struct sym_unwinder *u, uint64_t h, const struct uw_proc *p,
			 const struct uw_walk *w, bool complete)
{
	size_t need = UW_NREGS + 2 * (size_t)w->nreads + w->n;
	if (w->uncacheable || u->nwords + need > UW_CACHE_WORDS)
		return;
	xgrow((void **)&u->words, &u->capwords, u->nwords + need, sizeof(*u->words));
	xgrow((void **)&u->ents, &u->capents, u->nents + 1, sizeof(*u->ents));
	struct uw_ent *e = &u->ents[u->nents];
	*e = (struct uw_ent){ .proc = p, .gen = p->gen, .len = w->smp->ustack_len,
			      .nreads = w->nreads, .npcs = w->n, .regs_off = u->nwords,
			      .reads_off = u->nwords + UW_NREGS,
			      .pcs_off = u->nwords + UW_NREGS + 2 * (size_t)w->nreads,
			      .complete = complete, .no_fde = w->no_fde };
	memcpy(u->words + e->regs_off, w->regs, UW_NREGS * sizeof(uint64_t));
	memcpy(u->words + e->reads_off, w->reads, 2 * (size_t)w->nreads * sizeof(uint64_t));
	memcpy(u->words + e->pcs_off, w->pcs, w->n * sizeof(uint64_t));
	u->nwords += need;
	e->next = (uint32_t)(uintptr_t)u64map_get(&u->cache, h);
	u->nents++;
	u64map_put(&u->cache, h, (void *)(uintptr_t)u->nents);
}

/* The walk itself: report the modules it reaches, retry, rebuild. */
static int uw_walk_frames(struct sym_unwinder *u, struct uw_proc *p, struct uw_walk *w,
			  uint32_t pid, uint64_t ip)
{
	/* the sampled ip's image first: the Dwfl needs one module to attach */
	const struct sym_map *m0 = sym_find_proc_map(u->s, p->domain, pid, ip);
	if (m0 && !uw_find_mod(p, ip))
		uw_report(u, p, m0);
	/* an ip in no image that could be reported has no frames, whether or
	 * not an earlier sample attached the process (libdwfl would give the
	 * ip as a frame then, and try frame pointers, but not before: the
	 * recorded frame-pointer chain is kept for such samples anyway) */
	if (!m0 || !uw_find_mod(p, ip))
		return -1;
	int r = -1;
	for (unsigned tries = 0; tries <= UW_MAX_RETRIES; tries++) {
		if (!p->attached)
			break;
		w->n = 0;
		w->nreads = 0;
		w->uncacheable = false;
		w->need = NULL;
		w->rebuild = false;
		w->no_fde = false;
		w->failed_at = 0;
		r = dwfl_getthread_frames(p->dwfl, (pid_t)(pid ? pid : 1), uw_frame, u);
		if (w->rebuild) {
			u->st.rebuilds++;
			uw_proc_reset(u, p);
			if (m0)
				uw_report(u, p, m0);
			continue;
		}
		if (!w->need)
			break;
		if (!uw_report(u, p, w->need))
			break;   /* the frame ends there: its image cannot be read */
	}
	if (w->rebuild || w->need)
		w->uncacheable = true;   /* retries ran out: the next try may differ */
	return r;
}

/* The quick step's walk of the sample, or false when it is libdwfl's. */
static bool uw_quick(struct sym_unwinder *u, uint32_t domain, uint32_t pid,
		     const struct dp_sample *smp, uint64_t ip, uint64_t sp, uint64_t bp,
		     uint64_t *pcs, uint32_t max, uint32_t *n, enum uwq_end *end)
{
	const struct sym_image *img;
	*end = uwq_walk(u->quick, domain, pid, smp, ip, sp, bp, pcs, max, n, &img);
	/* no FDE: libdwfl would look in a .debug_frame, where there is one */
	if (*end == UWQ_NO_FDE && uw_debug_frame(u, uwq_image_elf(u->quick, img), img))
		*end = UWQ_FALLBACK;
	return *end != UWQ_FALLBACK;
}

uint32_t sym_unwind_user(struct sym_unwinder *u, uint32_t domain, uint32_t pid,
			 const struct dp_sample *smp, uint64_t *pcs, uint32_t max,
			 bool *complete)
{
	*complete = false;
	uint64_t ip, sp, bp = 0;
	if (!smp->has_uregs || smp->uregs_abi != DP_UREGS_ABI_64 || !max ||
	    !dp_sample_ureg(smp, DP_X86_REG_IP, &ip) || !dp_sample_ureg(smp, DP_X86_REG_SP, &sp))
		return 0;
	dp_sample_ureg(smp, DP_X86_REG_BP, &bp);
	u->st.samples++;
	if (max > UW_MAX_FRAMES)
		max = UW_MAX_FRAMES;
	uint32_t n;
	enum uwq_end end;
	if (u->quick && uw_quick(u, domain, pid, smp, ip, sp, bp, pcs, max, &n, &end)) {
		u->st.quick++;
		*complete = end == UWQ_OUTERMOST;
		if (end == UWQ_NO_FDE)
			u->st.no_fde++;
		else if (end == UWQ_DEPTH)
			u->st.depth_cut++;
		else if (end == UWQ_STOPPED)
			u->st.stopped++;
		else
			u->st.complete++;
		u->st.frames += n;
		return n;
	}
	/* the walk state is large (the read log): one per unwinder */
	if (!u->wbuf)
		u->wbuf = xmalloc(sizeof(*u->wbuf));
	struct uw_walk *w = u->wbuf;
	memset(w, 0, offsetof(struct uw_walk, reads));
	for (unsigned i = 0; i < UW_NREGS; i++)
		dp_sample_ureg(smp, uw_perf_reg[i], &w->regs[i]);   /* 0 when absent */
	struct uw_proc *p = uw_proc_get(u, domain, pid);
	uint64_t h = uw_key(p, w->regs, smp->ustack_len);
	uint32_t variants;
	const struct uw_ent *e = uw_cache_find(u, h, p, w->regs, smp, &variants);
	if (e) {
		u->st.cached++;
		n = e->npcs < max ? e->npcs : max;
		memcpy(pcs, u->words + e->pcs_off, n * sizeof(uint64_t));
		/* a walk of max frames or more is cut at max, as an uncached
		 * one is (uw_frame stops at max: not complete, even when the
		 * walk would have ended there) */
		*complete = e->complete && e->npcs < max;
	} else {
		w->smp = smp;
		w->sp = sp;
		w->pcs = pcs;
		w->max = max;
		u->cur = p;
		u->walk = w;
		/* 0: the CFI said the outermost frame was reached (e.g. _start),
		 * unless the last step failed to read the stack */
		int r = uw_walk_frames(u, p, w, pid, ip);
		u->walk = NULL;
		n = w->n;
		*complete = r == 0 && n > 0 && w->failed_at != n + 1;
		if (n && max == UW_MAX_FRAMES && variants < UW_MAX_VARIANTS)
			uw_cache_put(u, h, p, w, *complete);
	}
	if (n == 0) {
		u->st.failed++;
		return 0;
	}
	if (*complete)
		u->st.complete++;
	else if (e ? e->no_fde : w->no_fde)
		u->st.no_fde++;
	else if (n >= max)
		u->st.depth_cut++;
	else
		u->st.stopped++;
	u->st.frames += n;
	return n;
}
