// SPDX-License-Identifier: MIT
/*
 * Passive domains, guest introspection: with no symbol file (or with
 * kallsyms=guest), the guest kernel's symbols, modules and processes are
 * read from the guest's own memory through the stub (src/guest/), so a
 * passive domain needs nothing from inside the guest. With a symbol file
 * (kallsyms=, sysmap=, vmlinux=) only the symbols come from the file:
 * its names at this boot's addresses (gdb_symfile_text) locate the BTF,
 * the modules, the task list and the ORC tables read from memory all the
 * same, and the file stays the domain's symbol table. Part of the gdb
 * source (gdb_internal.h).
 *
 * At start (the VM is stopped since connect): the kernel image is found
 * from the vCPUs' kernel rips, its build-id keys the host cache
 * (guest/cache.h), and the kallsyms tables are decoded from memory (or
 * taken from the cache after the span they were decoded from, read again
 * from this guest, hashes the same); the modules list and
 * the BTF layouts follow, then the task list. The symbol text becomes the
 * domain's embedded SYMTAB, exactly like a kallsyms copy of the same boot.
 *
 * While sampling (sampler thread, VM stopped by the tick): with the
 * guest's current task read at every tick (the sampler's batch carries
 * one `m` per vCPU, see gdb_build_batch; current=0 turns it off), every
 * sample, kernel or user, gets the pid and thread of the task that ran.
 * A task is known by its identity (pointer, pid, start_time, mm), not by
 * its pointer alone, which a new process reuses: a pointer is checked
 * again (current_of) when its vCPU ran another task at the last tick or
 * the sample's cr3 is not its address space, and a changed identity
 * (a new process, an exec) is read whole and renamed by a new TASK
 * record from that tick on.
 * Otherwise user-mode samples get the pid of the process whose address
 * space their cr3 is. An address space not yet known triggers a new walk
 * of the task list, at most once per GUEST_REWALK_NS; at the end one more
 * walk. Each task seen becomes a TASK record carrying its asid (format
 * 1.2), queued under s->lock and written by gdb_guest_drain.
 *
 * With -g, the ORC tables are read last (gdb_chains.c), located by the
 * symbols just read.
 *
 * Everything read is hostile: the decoders in src/guest/ bound it, and a
 * failure here never fails the recording: the domain is then recorded by
 * address, and s->info says once what was not found.
 */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gdb_internal.h"
#include "guest/cache.h"
#include "guest/ksyms.h"
#include "guest/layout.h"
#include "guest/modules.h"
#include "guest/tasks.h"
#include "symbols/kallsyms.h"
#include "util/clock.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* At most one task-list walk per second for address spaces not yet seen:
 * a walk of ~100 tasks costs a few ms of stopped VM. */
#define GUEST_REWALK_NS 1000000000ull
/* A walk during the recording holds the VM stopped: it gets this budget
 * (walk-ms=; a 100-task walk reads ~100 KB in a few ms). A walk cut by it keeps
 * what it read, and the next one waits twice as long, up to
 * GUEST_REWALK_MAX_NS, so a guest with a huge task list cannot hold
 * its VM stopped for a large share of the time. */
#define GUEST_REWALK_BUDGET_MS 100u
#define GUEST_REWALK_BUDGET_BYTES (2u << 20)
#define GUEST_REWALK_MAX_NS 64000000000ull
/* Processes remembered per domain (new address spaces beyond this keep
 * their cr3 bucket). */
#define GUEST_MAX_PROCS 65536u
/* Largest cache entry read back (a kallsyms text is ~10 MiB). */
#define GUEST_CACHE_MAX (64u << 20)

struct gproc {
	uint64_t addr;          /* the task_struct's address */
	uint32_t pid, tgid, ppid;
	uint64_t asid;
	uint64_t mm, start_time;  /* with pid and addr: the task's identity */
	unsigned recheck;       /* checks left while it may be mid-exec */
	char comm[16];
};

struct gdb_guest {
	char *symtab;           /* kallsyms text (kernel + modules), runtime addresses */
	size_t symtab_len;
	char buildid[41];
	char version[64];       /* the banner's version word, "" if none */
	bool from_file;         /* symtab is the user's symbol file, relocated */
	struct guest_layout layout;
	bool have_layout;
	/* Processes seen (sampler thread after start). */
	struct gproc *procs;
	size_t nprocs;
	struct hmap by_asid;    /* asid -> index + 1 */
	struct hmap by_pid;     /* pid -> index + 1 */
	struct hmap by_task;    /* task_struct address -> index + 1 */
	unsigned task_reads;    /* current tasks read (checked) this tick */
	uint64_t *vtask;        /* [nvcpu]: the task last checked current there */
	atomic_uint_fast64_t checks, changes;  /* identities read, of which changed */
	atomic_uint_fast64_t check_ns;         /* time the VM was held for them */
	bool want_walk;         /* a sample had an unknown address space */
	uint64_t last_walk_ns;
	uint64_t rewalk_ns;     /* wait between walks: GUEST_REWALK_NS, doubled per cut walk */
	atomic_uint_fast64_t walks_cut;  /* walks during the recording cut by their budget */
	/* Set by the recorder's thread (a new --switch-output file): the
	 * sampler queues every process known again at its next tick. */
	atomic_bool replay;
	/* TASK records to write, under s->lock. */
	struct dp_task *tq;
	char (*tqcomm)[16];
	size_t tqn, tqcap;
};

/* Runtime address of a core-kernel symbol of the table read, 0 if none. */
static uint64_t text_sym(void *ctx, const char *name)
{
	const struct gdb_guest *g = ctx;
	return kallsyms_lookup(g->symtab, g->symtab_len, name);
}

/* ---- Kernel symbols ---------------------------------------------------- */

static void to_cache(const struct gdb_guest *g, const struct guest_ksyms *k)
{
	size_t n;
	char why[300];
	if (!k->src.nsyms)
		return;   /* no span to check a later guest against: not cached */
	char *buf = guest_cache_kallsyms_encode(k->text, k->len, k->text_addr, &k->src, &n);
	(void)guest_cache_put(g->buildid, "kallsyms", buf, n, why, sizeof(why));
	free(buf);
}

/* This guest's table through the host cache: the entry says where the
 * tables are (no search), and the table is decoded from this guest's
 * memory there (guest_ksyms_reuse: the span read again and its digest
 * compared first); the build-id that keys the entry is only what the
 * guest says, so nothing of the entry's own table is used. The entry's
 * table must equal the one decoded, else the entry is replaced. Returns
 * the decoded table (g->symtab), or NULL (the caller searches) with
 * *why a "; ..." note when an entry was there but is not used. */
static char *from_cache(struct gdb_guest *g, struct guest_mem *m, const struct guest_kimage *img,
			size_t *nsyms, char *why, size_t whylen)
{
	char *data, w[240];
	size_t dl, len, n;
	struct guest_ksyms_src src;
	int r = guest_cache_get(g->buildid, "kallsyms", GUEST_CACHE_MAX, &data, &dl, w, sizeof(w));
	if (r < 0) {
		/* no entry yet, or no cache directory: nothing to say */
		if (r != -ENOENT)
			snprintf(why, whylen, "; host cache not used: %.120s", w);
		return NULL;
	}
	char *t = guest_cache_kallsyms_decode(data, dl, img->text, &src, &len, &n);
	free(data);
	if (!t) {
		snprintf(why, whylen, "; cached kallsyms entry replaced (not of this version)");
		return NULL;
	}
	struct guest_ksyms k;
	if ((r = guest_ksyms_reuse(m, img, &src, &k, w, sizeof(w))) < 0) {
		snprintf(why, whylen, "; cached kallsyms entry replaced (%.120s)",
			 r == -ESTALE ? "not this guest's tables" : w);
		free(t);
		return NULL;
	}
	why[0] = 0;
	if (k.len != len || memcmp(k.text, t, len)) {
		/* the entry's table is not what this guest's tables decode
		 * to: the decode is used, and replaces the entry */
		snprintf(why, whylen, "; cached kallsyms entry replaced (not this guest's table)");
		to_cache(g, &k);
	}
	free(t);
	*nsyms = k.nsyms;
	g->symtab = k.text;
	g->symtab_len = k.len;
	k.text = NULL;
	guest_ksyms_free(&k);
	return g->symtab;
}

/* Kernel-mode rips of the stopped VM; selects (Hg) a vCPU in kernel
 * mode for the memory reads that follow. */
static int kernel_rips(struct gdb_source *s, uint64_t *rips, size_t *nr)
{
	int kcpu = -1;
	int r = gdb_kernel_vcpus(s, rips, nr, &kcpu);
	if (r < 0)
		return r;
	char req[64];
	snprintf(req, sizeof(req), "Hg%s", s->tids[kcpu]);
	return rsp_request(s->conn, req);
}

static int read_kernel(struct gdb_source *s, struct gdb_guest *g, struct guest_mem *m,
		       char *note, size_t notelen)
{
	uint64_t rips[RSP_MAX_THREADS];
	size_t nr = 0;
	char why[200] = "";
	int r = kernel_rips(s, rips, &nr);
	if (r < 0) {
		snprintf(note, notelen, "no kernel symbols from guest memory: %s",
			 r == -EAGAIN ? "no vCPU was in kernel mode (still in firmware, or not Linux?)" :
			 gdb_rsp_strerror(r));
		return r;
	}
	struct guest_kimage img;
	if ((r = guest_kimage_find(m, rips, nr, &img, why, sizeof(why))) < 0) {
		snprintf(note, notelen, "no kernel symbols from guest memory: %s", why);
		return r;
	}
	bool have_id = guest_kernel_buildid(m, &img, g->buildid, why, sizeof(why)) == 0;
	size_t nsyms = 0;
	char cwhy[300] = "";
	uint64_t b0 = m->bytes;
	if (have_id && from_cache(g, m, &img, &nsyms, cwhy, sizeof(cwhy))) {
		snprintf(note, notelen, "kernel symbols from guest memory (at the places cached for %.12s, %.1f MB "
			 "read): %zu symbols, KASLR offset 0x%" PRIx64 "%s", g->buildid, (m->bytes - b0) / 1e6, nsyms,
			 (uint64_t)(img.text - GUEST_LINK_TEXT), cwhy);
		return 0;
	}
	struct guest_ksyms k;
	if ((r = guest_ksyms_read(m, &img, &k, why, sizeof(why))) < 0) {
		if (k.version[0])
			snprintf(note, notelen, "no kernel symbols from guest memory on Linux %s: %s", k.version, why);
		else
			snprintf(note, notelen, "no kernel symbols from guest memory: %s", why);
		return r;
	}
	snprintf(g->version, sizeof(g->version), "%s", k.version);
	if (have_id)
		to_cache(g, &k);
	snprintf(note, notelen, "kernel symbols from guest memory (%s): %zu symbols, KASLR offset 0x%" PRIx64 "%s",
		 k.layout, k.nsyms, k.kaslr_offset, cwhy);
	g->symtab = k.text;
	g->symtab_len = k.len;
	k.text = NULL;
	guest_ksyms_free(&k);
	return 0;
}

/* With a symbol file: its symbols at this boot's addresses name what is
 * read from guest memory (BTF, the task list, the ORC tables); the
 * file stays the domain's symbol table. */
static int read_file_symbols(struct gdb_source *s, struct gdb_guest *g, char *note, size_t notelen)
{
	uint64_t rips[RSP_MAX_THREADS];
	size_t nr = 0;
	/* a kernel-mode vCPU for the reads (page-table isolation) */
	int r = kernel_rips(s, rips, &nr);
	if (r == -ETIMEDOUT || r == -EPIPE)
		return r;
	if ((r = gdb_symfile_text(s, &g->symtab, &g->symtab_len)) < 0) {
		snprintf(note, notelen, "no kernel symbols from %s=%s for guest memory: %s", gdb_symsrc_key(s->spec.symsrc),
			 s->spec.symfile, r == -ENOENT ? "no symbol lines" : strerror(-r));
		return r;
	}
	g->from_file = true;
	snprintf(note, notelen, "guest memory read by the symbols of the %s file", gdb_symsrc_key(s->spec.symsrc));
	return 0;
}

/* ---- Layout, modules ------------------------------------------------- */

/* CR4 bits: PAE (set in long mode, whatever the paging depth), LA57. */
#define CR4_PAE  (1ull << 5)
#define CR4_LA57 (1ull << 12)

/* The paging mode as the user or the guest's CPU says, before the
 * kernel is asked (guest_layout_resolve): the spec's paging=, else
 * cr4.LA57 of the kernel-mode vCPU selected (read_kernel's Hg), when the
 * stub describes cr4 and it reads as a long-mode value (PAE set). *how
 * names the source; GUEST_PAGING_UNKNOWN when neither says. */
static unsigned given_paging(struct gdb_source *s, const char **how)
{
	uint64_t cr4;
	if (s->spec.paging) {
		*how = s->spec.paging == GUEST_PAGING_5 ? "paging=5" : "paging=4";
		return s->spec.paging;
	}
	if (gdb_read_reg(s, &s->cr4, &cr4) < 0 || !(cr4 & CR4_PAE))
		return GUEST_PAGING_UNKNOWN;
	*how = "cr4.LA57";
	return cr4 & CR4_LA57 ? GUEST_PAGING_5 : GUEST_PAGING_4;
}

static void read_layout(struct gdb_source *s, struct gdb_guest *g, struct guest_mem *m,
			char *note, size_t notelen)
{
	char why[200] = "";
	const char *how = NULL;
	s->paging = given_paging(s, &how);
	m->paging = (uint8_t)s->paging;
	if (!g->version[0])   /* a symbol file: the banner it names */
		(void)guest_kernel_version(m, text_sym(g, "linux_banner"), g->version, sizeof(g->version));
	void *btf = NULL;
	size_t blen = 0;
	/* BTF is not cached: checking a cached copy against this guest
	 * means reading the guest's BTF whole (any byte can change a
	 * layout), which is what reading it costs */
	int r = guest_layout_fetch_btf(m, text_sym, g, &btf, &blen, why, sizeof(why));
	if (r == 0)
		r = guest_layout_from_btf(btf, blen, &g->layout, why, sizeof(why));
	free(btf);
	if (r == 0)
		r = guest_layout_resolve(m, text_sym, g, &g->layout, why, sizeof(why));
	if (r < 0) {
		if (g->version[0])
			snprintf(note, notelen, "; processes not named on Linux %s (%s)", g->version, why);
		else
			snprintf(note, notelen, "; processes not named (%s)", why);
		return;
	}
	g->have_layout = true;
	/* later reads (walks, current tasks, stacks) check against it */
	s->paging = g->layout.paging;
	struct guest_modsyms ms;
	size_t skipped = 0;
	if (guest_modules_read(m, &g->layout, &ms, &skipped, why, sizeof(why)) == 0) {
		if (ms.len) {
			g->symtab = xrealloc(g->symtab, g->symtab_len + ms.len + 1);
			memcpy(g->symtab + g->symtab_len, ms.text, ms.len);
			g->symtab_len += ms.len;
			g->symtab[g->symtab_len] = 0;
		}
		size_t used = strlen(note);
		snprintf(note + used, notelen - used, ", %zu module%s", ms.nmodules, ms.nmodules == 1 ? "" : "s");
		if (skipped) {
			used = strlen(note);
			snprintf(note + used, notelen - used, " (%zu refused)", skipped);
		}
		guest_modsyms_free(&ms);
	}
	/* 4-level paging is the common case: the line names only the other */
	if (g->layout.paging == GUEST_PAGING_5) {
		size_t used = strlen(note);
		snprintf(note + used, notelen - used, ", 5-level paging (%s)", how ? how : g->layout.paging_how);
	}
}

/* ---- Processes --------------------------------------------------------- */

static void queue_task(struct gdb_source *s, struct gdb_guest *g, const struct gproc *p, uint64_t t)
{
	pthread_mutex_lock(&s->lock);
	if (g->tqn == g->tqcap) {
		g->tqcap = g->tqcap ? 2 * g->tqcap : 64;
		g->tq = xrealloc(g->tq, g->tqcap * sizeof(*g->tq));
		g->tqcomm = xrealloc(g->tqcomm, g->tqcap * sizeof(*g->tqcomm));
	}
	memcpy(g->tqcomm[g->tqn], p->comm, sizeof(p->comm));
	g->tq[g->tqn] = (struct dp_task){
		.kind = DP_TASK_COMM, .pid = p->tgid, .tid = p->pid, .ppid = p->ppid, .ptid = p->ppid,
		.time = t, .has_asid = p->asid != 0, .asid = p->asid,
	};
	g->tqn++;
	pthread_mutex_unlock(&s->lock);
}

/* Remembers a task read from guest memory; a new or renamed one is
 * queued as a TASK record. Returns it (NULL: over GUEST_MAX_PROCS). */
static struct gproc *note_task(struct gdb_source *s, struct gdb_guest *g, const struct guest_task *k,
			       uint64_t t)
{
	uintptr_t at = (uintptr_t)u64map_get(&g->by_pid, k->pid);
	struct gproc *p = at ? &g->procs[at - 1] : NULL;
	if (p && p->addr == k->addr && p->asid == k->asid && p->mm == k->mm &&
	    p->start_time == k->start_time && !memcmp(p->comm, k->comm, sizeof(p->comm)))
		return p;   /* known, unchanged */
	if (!p) {
		if (g->nprocs >= GUEST_MAX_PROCS)
			return NULL;
		g->procs = xrealloc(g->procs, (g->nprocs + 1) * sizeof(*g->procs));
		p = &g->procs[g->nprocs++];
		u64map_put(&g->by_pid, k->pid, (void *)(uintptr_t)g->nprocs);
	}
	uintptr_t idx = (uintptr_t)(p - g->procs + 1);
	p->addr = k->addr;
	p->pid = k->pid;
	p->tgid = k->tgid;
	p->ppid = k->ppid;
	p->asid = k->asid;
	p->mm = k->mm;
	p->start_time = k->start_time;
	p->recheck = 0;
	memcpy(p->comm, k->comm, sizeof(p->comm));
	p->comm[15] = 0;
	u64map_put(&g->by_task, k->addr, (void *)idx);
	/* the process's address space is named by its main thread */
	if (k->asid && k->pid == k->tgid)
		u64map_put(&g->by_asid, k->asid, (void *)idx);
	/* pid 0 (idle) is named only when kernel samples carry the current
	 * task: otherwise every kernel sample has pid 0 */
	if (k->pid || s->cur_off)
		queue_task(s, g, p, t);
	return p;
}

/* Walks the task list; new or renamed tasks are queued as TASK records.
 * Returns 0 or a negative errno (the walk failed). */
static int walk(struct gdb_source *s, struct gdb_guest *g, struct guest_mem *m)
{
	struct guest_task *tv = NULL;
	char why[200];
	uint64_t t = mono_ns();
	int n = guest_tasks_walk(m, &g->layout, &tv, GUEST_TASKS_MAX, why, sizeof(why));
	g->last_walk_ns = mono_ns();
	g->want_walk = false;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		note_task(s, g, &tv[i], t);
	free(tv);
	return 0;
}

/* The process of a sample's address space, or NULL. The sample's asid is
 * cr3 without the PCID bits; with page-table isolation a user-mode cr3
 * points at the user half of the pgd (bit 12 set, the pgd is 8 KiB
 * aligned then), so that form is tried second and the sample is given
 * the process's asid: its user and kernel samples stay one address
 * space. Without isolation bit 12 is an ordinary address bit, which is
 * why it is not simply masked. */
static const struct gproc *proc_of(struct gdb_guest *g, struct dp_sample *v)
{
	uintptr_t at = (uintptr_t)u64map_get(&g->by_asid, v->asid);
	if (!at && (v->asid & 0x1000))
		at = (uintptr_t)u64map_get(&g->by_asid, v->asid & ~0x1000ull);
	if (!at)
		return NULL;
	const struct gproc *p = &g->procs[at - 1];
	v->asid = p->asid;
	return p;
}

/* Whether sample v's address space can be task p's: a task with an mm
 * runs in it in kernel and user mode alike (page-table isolation's user
 * half sets bit 12); a kernel thread borrows whichever mm ran before it,
 * but never runs in user mode. A mismatch means the task changed its mm
 * (exec) or the pointer is another task's now. */
static bool asid_fits(const struct gproc *p, const struct dp_sample *v)
{
	if (!v->has_asid)
		return true;
	if (!p->asid)
		return v->mode != DP_MODE_USER;
	return v->asid == p->asid || (v->asid & ~0x1000ull) == p->asid;
}

static bool same_task(const struct gproc *p, const struct guest_task *k)
{
	return p->pid == k->pid && p->tgid == k->tgid && p->mm == k->mm && p->start_time == k->start_time &&
	       !memcmp(p->comm, k->comm, sizeof(p->comm));
}

/* The task vCPU cpu ran (its pointer s->cur_task[cpu], read in the
 * tick's batch), as a process known by its identity: task pointers are
 * reused by new processes as soon as old ones are reaped, and a task
 * that execs keeps its pointer and pid but gets a new mm and comm. So a
 * known pointer is taken as is only while it is the one this vCPU ran
 * at the last tick it was checked and the sample's cr3 is still its
 * address space; otherwise (another task, a new cr3, a task changed
 * lately) its identity is read again (guest_task_ident, one transfer),
 * and only a changed identity costs the whole task read (its parent,
 * its mm's pgd) and a new TASK record. At most GUEST_TASK_READS tasks
 * are checked per tick (the acks owed go first); past that a known
 * pointer is taken unchecked. Idle tasks (pid 0, one per CPU, for the
 * whole boot) are never checked. */
#define GUEST_TASK_READS 4u
/* A task that changed is checked again at every tick it runs until it
 * is seen in user mode (an exec gives the task its new mm first, tears
 * down the old one, and names it last, all before it returns to user
 * mode), at most this many times. */
#define GUEST_RECHECKS 64u
static const struct gproc *current_of(struct gdb_source *s, struct gdb_guest *g, size_t cpu,
				      const struct dp_sample *v, unsigned *acks, uint64_t t)
{
	uint64_t task = s->cur_task[cpu];
	uintptr_t at = (uintptr_t)u64map_get(&g->by_task, task);
	struct gproc *p = at ? &g->procs[at - 1] : NULL;
	if (p && p->pid == 0)
		return p;
	if (p && p->addr != task)
		p = NULL;   /* that pid lives in another task_struct since */
	if (p && g->vtask[cpu] == task && !p->recheck && asid_fits(p, v))
		return p;
	if (g->task_reads >= GUEST_TASK_READS || !guest_kptr(task))
		return p;
	g->task_reads++;
	g->vtask[cpu] = 0;
	if (*acks && rsp_ack(s->conn, *acks) < 0)
		return NULL;
	*acks = 0;
	struct guest_mem m;
	struct mem_ctx mc;
	struct guest_task k;
	gdb_guest_mem(s, &m, &mc);
	atomic_fetch_add(&g->checks, 1);
	uint64_t t0 = mono_ns();
	int r = guest_task_ident(&m, &g->layout, task, &k);
	atomic_fetch_add(&g->check_ns, mono_ns() - t0);
	if (r < 0)
		return NULL;
	if (p && same_task(p, &k)) {
		if (p->recheck)
			p->recheck = v->mode == DP_MODE_USER ? 0 : p->recheck - 1;
		g->vtask[cpu] = task;
		return p;
	}
	atomic_fetch_add(&g->changes, 1);
	t0 = mono_ns();
	r = guest_task_read(&m, &g->layout, task, &k);
	atomic_fetch_add(&g->check_ns, mono_ns() - t0);
	if (r < 0)
		return NULL;
	p = note_task(s, g, &k, t);
	if (p) {
		p->recheck = k.mm && v->mode != DP_MODE_USER ? GUEST_RECHECKS : 0;
		g->vtask[cpu] = task;
	}
	return p;
}

/* The vCPUs' per-CPU bases, read once now so that the first tick
 * already reads their current tasks (the batch learns them otherwise,
 * one tick late). */
static void learn_bases(struct gdb_source *s)
{
	struct dp_sample *v = xcalloc(s->nvcpu, sizeof(*v));
	if (gdb_read_vcpus(s, v, 0, true) == 0 && rsp_ack(s->conn, s->replies) == 0 && s->rebuild)
		gdb_build_batch(s);
	free(v);
}

/* ---- Entry points (gdb_internal.h) -------------------------------------- */

/* The stub itself failed (no more answers will come). */
static bool stub_failed(int e)
{
	return e == -ETIMEDOUT || e == -EPIPE || e == -EBADMSG || e == -EMSGSIZE;
}

/* A start-up cut short by its budget or by the recording's end: one
 * clause saying so and what was not read. */
static void say_cut(char *note, size_t notelen, const struct mem_ctx *mc, uint64_t t0, const char *skipped)
{
	size_t used = strlen(note);
	snprintf(note + used, notelen - used, "; start-up cut after %.1f s and %.1f MB (%s): skipped %s",
		 (double)(mono_ns() - t0) / 1e9, (double)mc->bytes / 1e6,
		 mc->over == -ETIME ? "its time budget, start-time=" :
		 mc->over == -E2BIG ? "its byte budget, start-mb=" : "the recording ended", skipped);
}

int gdb_guest_start(struct gdb_source *s, char *note, size_t notelen)
{
	struct gdb_guest *g = xcalloc(1, sizeof(*g));
	struct guest_mem m;
	struct mem_ctx mc;
	uint64_t t0 = mono_ns();
	gdb_guest_mem(s, &m, &mc);
	/* The budget of gdb_source.h: every read of the start-up goes
	 * through mc, so a guest serving endless tables is cut wherever it
	 * is, and the stages after the cut are not begun. */
	mc.startup = true;
	mc.deadline_ns = t0 + (uint64_t)(s->spec.start_s ? s->spec.start_s : GDB_START_S) * 1000000000ull;
	mc.max_bytes = (uint64_t)(s->spec.start_mb ? s->spec.start_mb : GDB_START_MB) << 20;
	note[0] = 0;
	bool file = s->spec.symsrc && s->spec.symsrc != GDB_SYM_GUEST;
	int r = file ? read_file_symbols(s, g, note, notelen) : read_kernel(s, g, &m, note, notelen);
	if (r == -ETIMEDOUT || r == -EPIPE || stub_failed(mc.over)) {
		free(g);
		return stub_failed(mc.over) ? mc.over : r;   /* the stub itself failed */
	}
	if (r < 0) {
		free(g);
		if (mc.over)
			say_cut(note, notelen, &mc, t0, s->want_chains ? "the kernel's symbols, modules, processes "
				"and call chains" : "the kernel's symbols, modules and processes");
		else if (s->want_chains) {
			size_t used = strlen(note);
			snprintf(note + used, notelen - used, "; no call chains (no kernel symbols)");
		}
		return 0;   /* recorded by address; note says why */
	}
	s->guest = g;   /* from here on what was read is kept, whatever comes */
	const char *cut = NULL;
	if (!mc.over)
		read_layout(s, g, &m, note + strlen(note), notelen - strlen(note));
	if (mc.over)
		cut = s->want_chains ? "modules, processes and call chains" : "modules and processes";
	if (g->have_layout && g->layout.has_current && !s->spec.no_current && !s->use_p &&
	    s->gs_base.in_g && s->k_gs_base.in_g) {
		s->cur_off = g->layout.percpu_current;
		s->pcpu_base = xcalloc(s->nvcpu, sizeof(*s->pcpu_base));
		s->batch_m = xcalloc(s->nvcpu, sizeof(*s->batch_m));
		s->cur_task = xcalloc(s->nvcpu, sizeof(*s->cur_task));
		learn_bases(s);
	}
	size_t nprocs = 0;
	/* a walk cut by the budget keeps the tasks read before the cut */
	if (!cut && g->have_layout && walk(s, g, &m) == 0)
		nprocs = g->nprocs;
	if (!cut && mc.over)
		cut = s->want_chains ? "the rest of the task list and call chains" : "the rest of the task list";
	char chains[400] = "";
	if (!cut && s->want_chains) {
		(void)gdb_chains_start(s, &m, text_sym, g, g->buildid, chains, sizeof(chains));
		if (mc.over)
			cut = "call chains";
	}
	uint64_t pause = mono_ns() - t0;
	size_t used = strlen(note);
	if (g->have_layout)
		snprintf(note + used, notelen - used, ", %zu tasks%s", nprocs,
			 s->cur_off ? ", current task per sample" : "");
	used = strlen(note);
	snprintf(note + used, notelen - used, "%s; VM paused %.2f s to read %.1f MB", chains, pause / 1e9,
		 m.bytes / 1e6);
	if (stub_failed(mc.over))
		return mc.over;
	if (cut)
		say_cut(note, notelen, &mc, t0, cut);
	return 0;
}

const char *gdb_guest_symtab(const struct gdb_source *s, size_t *len)
{
	if (!s->guest || !s->guest->symtab || s->guest->from_file)
		return NULL;
	*len = s->guest->symtab_len;
	return s->guest->symtab;
}

void gdb_guest_tick(struct gdb_source *s, struct dp_sample *v, size_t n, unsigned *acks)
{
	struct gdb_guest *g = s->guest;
	if (!g || !g->have_layout)
		return;
	int kcpu = -1;
	g->task_reads = 0;
	if (s->cur_task && !g->vtask)
		g->vtask = xcalloc(s->nvcpu, sizeof(*g->vtask));
	if (atomic_exchange(&g->replay, false))
		for (size_t i = 0; i < g->nprocs; i++)
			queue_task(s, g, &g->procs[i], n ? v[0].time : mono_ns());
	for (size_t i = 0; i < n; i++) {
		if (v[i].mode == DP_MODE_KERNEL && kcpu < 0)
			kcpu = (int)i;
		if (s->cur_task && s->cur_task[i]) {
			const struct gproc *p = current_of(s, g, i, &v[i], acks, v[i].time);
			if (p) {
				v[i].pid = p->tgid;
				v[i].tid = p->pid;
				if (v[i].mode == DP_MODE_USER && v[i].has_asid)
					(void)proc_of(g, &v[i]);   /* the asid form of the process */
				continue;
			}
		}
		/* A kernel sample whose chain reached user mode ran in a
		 * process: its address space names it, as a user sample's. */
		bool user = v[i].mode == DP_MODE_USER ||
			    (v[i].nr_callchain > 1 && !guest_kptr(v[i].callchain[v[i].nr_callchain - 1]));
		if (!user || !v[i].has_asid)
			continue;
		const struct gproc *p = proc_of(g, &v[i]);
		if (p)
			v[i].pid = v[i].tid = p->tgid;
		else
			g->want_walk = true;
	}
	if (!g->rewalk_ns)
		g->rewalk_ns = GUEST_REWALK_NS;
	if (!g->want_walk || mono_ns() - g->last_walk_ns < g->rewalk_ns)
		return;
	/* The replies read so far are acked first: our requests follow. A
	 * kernel-mode vCPU is selected when there is one (with page-table
	 * isolation a user-mode cr3 does not map the kernel). */
	if (rsp_ack(s->conn, *acks) < 0)
		return;
	*acks = 0;
	char req[64];
	snprintf(req, sizeof(req), "Hg%s", s->tids[kcpu >= 0 ? kcpu : 0]);
	if (rsp_request(s->conn, req) < 0)
		return;
	struct guest_mem m;
	struct mem_ctx mc;
	gdb_guest_mem(s, &m, &mc);
	mc.deadline_ns = mono_ns() + (uint64_t)(s->spec.walk_ms ? s->spec.walk_ms : GUEST_REWALK_BUDGET_MS) * 1000000ull;
	mc.max_bytes = GUEST_REWALK_BUDGET_BYTES;
	(void)walk(s, g, &m);
	if (mc.over == -ETIME || mc.over == -E2BIG) {
		atomic_fetch_add(&g->walks_cut, 1);
		if (g->rewalk_ns < GUEST_REWALK_MAX_NS)
			g->rewalk_ns *= 2;
	} else {
		g->rewalk_ns = GUEST_REWALK_NS;
	}
	/* the samples of this tick get the names just read */
	for (size_t i = 0; i < n; i++) {
		const struct gproc *p = v[i].mode == DP_MODE_USER && v[i].has_asid ? proc_of(g, &v[i]) : NULL;
		if (p)
			v[i].pid = v[i].tid = p->tgid;
	}
}

void gdb_guest_final(struct gdb_source *s)
{
	struct gdb_guest *g = s->guest;
	if (!g || !g->have_layout)
		return;
	struct guest_mem m;
	struct mem_ctx mc;
	gdb_guest_mem(s, &m, &mc);
	(void)walk(s, g, &m);
}

void gdb_guest_replay(struct gdb_source *s)
{
	if (s->guest)
		atomic_store(&s->guest->replay, true);
}

void gdb_guest_stats(const struct gdb_source *s, struct gdb_source_stats *st)
{
	st->task_checks = s->guest ? atomic_load(&s->guest->checks) : 0;
	st->task_changes = s->guest ? atomic_load(&s->guest->changes) : 0;
	st->task_check_ns = s->guest ? atomic_load(&s->guest->check_ns) : 0;
	st->walks_cut = s->guest ? atomic_load(&s->guest->walks_cut) : 0;
}

int gdb_guest_drain(struct gdb_source *s, struct dp_writer *w)
{
	struct gdb_guest *g = s->guest;
	if (!g)
		return 0;
	int written = 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < g->tqn; i++) {
		g->tq[i].comm = g->tqcomm[i];
		int r = dp_write_task(w, s->domain_id, &g->tq[i]);
		if (r < 0) {
			written = r;
			break;
		}
		written++;
	}
	g->tqn = 0;
	pthread_mutex_unlock(&s->lock);
	return written;
}

void gdb_guest_free(struct gdb_source *s)
{
	struct gdb_guest *g = s->guest;
	if (!g)
		return;
	free(g->symtab);
	free(g->procs);
	free(g->vtask);
	hmap_release(&g->by_asid);
	hmap_release(&g->by_pid);
	hmap_release(&g->by_task);
	free(g->tq);
	free(g->tqcomm);
	free(g);
	s->guest = NULL;
	free(s->pcpu_base);
	free(s->batch_m);
	free(s->cur_task);
	s->pcpu_base = s->cur_task = NULL;
	s->batch_m = NULL;
	s->cur_off = 0;
}
