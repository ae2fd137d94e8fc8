// SPDX-License-Identifier: MIT
/*
 * test-tool guest-tasks [--shift=N [--shift-only=SYM]] [--pob=ADDR] [--samples=N] MEMSPEC KALLSYMS
 *
 * The guest's structure layout from its own BTF (src/guest/layout.c) and,
 * on a live VM ("gdb:SOCKET"), its process list (src/guest/tasks.c) and
 * the task running on each vCPU, for tests/vm/test-guest-tasks.sh and
 * for measuring what that costs. KALLSYMS is a kallsyms text (the guest's
 * own /proc/kallsyms copy, CRLF or LF) used as the symbol callback.
 * Controls: --shift adds N to every kernel-half symbol (a kallsyms of
 * another boot; with --shift-only, to that symbol only), --pob replaces
 * page_offset_base's value (asids off).
 * --samples resumes the VM N times for ~30 ms and reads the current task
 * of every vCPU after each stop.
 *
 * Output, one item per line:
 *   layout task tasks=.. pid=.. tgid=.. comm=../.. mm=.. real_parent=.. flags=..
 *   layout mm pgd=..
 *   layout module list=.. name=../.. kallsyms=.. core_base=.. core_size=..
 *   layout mod_kallsyms symtab=.. num_symtab=.. strtab=.. typetab=..
 *   layout current SYM+OFF=0x.. (or "none")
 *   addr init_task=0x.. modules=0x.. page_offset_base=0x.. per_cpu_offset=0x..
 *   cost layout bytes=N reads=N us=N
 *   task PID TGID PPID ASID COMM         (one per task)
 *   cost tasks n=N bytes=N reads=N us=N
 *   walk WHY                              (only when the walk was cut)
 *   vcpu I mode=kernel|user percpu=0x.. cr3=0x.. asid=0x..
 *   current I PID TGID ASID COMM asid-match=yes|no
 *   cost current bytes=N reads=N us=N.N    (mean of 100 calls)
 *   cost slot bytes=8 reads=1 us=N.N       (the per-CPU slot alone, mean of 100)
 *   sample K I COMM asid-match=yes|no      (--samples)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "guest/layout.h"
#include "guest/tasks.h"
#include "guestmem.h"
#include "symbols/kallsyms.h"
#include "test-tool.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

struct syms {
	const char *text;
	size_t len;
	uint64_t shift;
	const char *only;       /* shift this symbol only (NULL: all) */
};

/* The first core-kernel symbol called name (linear: a handful of lookups). */
static uint64_t sym_lookup(void *ctx, const char *name)
{
	struct syms *s = ctx;
	uint64_t a = kallsyms_lookup(s->text, s->len, name);
	return guest_kptr(a) && (!s->only || !strcmp(s->only, name)) ? a + s->shift : a;
}

/* ---- Registers of the vCPUs (gdb backend) -------------------------------- */

struct xfer { struct rsp_conn *c; };

static int xfer_read(void *vctx, const char *annex, char **data, size_t *len)
{
	struct xfer *x = vctx;
	size_t n = 0;
	char *buf = NULL;
	for (int i = 0; i < 512; i++) {
		char req[256];
		snprintf(req, sizeof(req), "qXfer:features:read:%s:%zx,%x", annex, n, 0xffb);
		int r = rsp_request(x->c, req);
		if (r < 0 || x->c->pktlen < 1 || (x->c->pkt[0] != 'm' && x->c->pkt[0] != 'l') ||
		    n + x->c->pktlen > RSP_MAX_XML) {
			free(buf);
			return r < 0 ? r : -ENOENT;
		}
		buf = xrealloc(buf, n + x->c->pktlen);
		memcpy(buf + n, x->c->pkt + 1, x->c->pktlen - 1);
		n += x->c->pktlen - 1;
		if (x->c->pkt[0] == 'l' || x->c->pktlen == 1) {
			*data = buf;
			*len = n;
			return 0;
		}
	}
	free(buf);
	return -EPROTO;
}

struct vregs { uint64_t cs, gs_base, k_gs_base, cr3; };
struct regmap { const struct rsp_reg *cs, *gs, *kgs, *cr3; };

static int reg_of_g(struct rsp_conn *c, const struct rsp_tdesc *td, const struct rsp_reg *r, uint64_t *v)
{
	size_t off = 0;
	for (size_t i = 0; i < td->nregs && &td->regs[i] != r; i++)
		off += td->regs[i].bitsize / 8;
	if ((off + r->bitsize / 8) * 2 > c->pktlen)
		return -ERANGE;
	return rsp_hex_le(c->pkt + off * 2, r->bitsize / 4, r->bitsize / 8, v);
}

static int read_vregs(struct rsp_conn *c, const struct rsp_tdesc *td, const struct regmap *rm, const char *tid,
		      struct vregs *v)
{
	char req[64];
	snprintf(req, sizeof(req), "Hg%s", tid);
	int r = rsp_request(c, req);
	if (r < 0 || (r = rsp_request(c, "g")) < 0)
		return r;
	if ((r = reg_of_g(c, td, rm->cs, &v->cs)) < 0 || (r = reg_of_g(c, td, rm->gs, &v->gs_base)) < 0 ||
	    (r = reg_of_g(c, td, rm->kgs, &v->k_gs_base)) < 0 || (r = reg_of_g(c, td, rm->cr3, &v->cr3)) < 0)
		return r;
	return 0;
}

/* The vCPUs' thread ids; 0 on failure. */
static size_t vcpus(struct rsp_conn *c, char (*tids)[RSP_MAX_TID])
{
	size_t n = 0;
	const char *q = "qfThreadInfo";
	for (int i = 0; i < 64; i++) {
		if (rsp_request(c, q) < 0)
			return 0;
		int r = rsp_parse_threads(c->pkt, c->pktlen, tids, &n, RSP_MAX_THREADS);
		if (r <= 0)
			return r < 0 ? 0 : n;
		q = "qsThreadInfo";
	}
	return n;
}

static void print_layout(const struct guest_layout *l)
{
	printf("layout task tasks=%u pid=%u tgid=%u comm=%u/%u mm=%u real_parent=%u flags=%u\n", l->task_tasks,
	       l->task_pid, l->task_tgid, l->task_comm, l->task_comm_len, l->task_mm, l->task_real_parent,
	       l->task_flags);
	printf("layout mm pgd=%u\n", l->mm_pgd);
	printf("layout module list=%d name=%d/%u kallsyms=%d core_base=%d core_size=%d\n", (int)l->mod_list,
	       (int)l->mod_name, l->mod_name_len, (int)l->mod_kallsyms, (int)l->mod_core_base,
	       (int)l->mod_core_size);
	printf("layout mod_kallsyms symtab=%d num_symtab=%d strtab=%d typetab=%d\n", (int)l->mks_symtab,
	       (int)l->mks_num_symtab, (int)l->mks_strtab, (int)l->mks_typetab);
	if (l->has_current)
		printf("layout current %s=0x%" PRIx64 "\n", l->percpu_sym, l->percpu_current);
	else
		printf("layout current none (%s not in kallsyms)\n", l->percpu_sym);
	printf("addr init_task=0x%" PRIx64 " modules=0x%" PRIx64 " page_offset_base=0x%" PRIx64
	       " per_cpu_offset=0x%" PRIx64 "\n", l->init_task, l->modules, l->page_offset_base, l->per_cpu_offset);
}

static void print_current(struct guest_mem *m, const struct guest_layout *l, unsigned i, const struct vregs *v,
			  const char *tag)
{
	/* The kernel's gs base is whichever of the two is a kernel address. */
	uint64_t base = guest_kptr(v->gs_base) ? v->gs_base : v->k_gs_base;
	struct guest_task t;
	int r = guest_current_task(m, l, base, &t);
	uint64_t asid = guest_asid_of_cr3(v->cr3);
	if (r < 0)
		printf("%s %u error %s\n", tag, i, strerror(-r));
	else if (!strcmp(tag, "current"))
		printf("current %u %u %u 0x%" PRIx64 " %s asid-match=%s\n", i, t.pid, t.tgid, t.asid, t.comm,
		       t.asid == asid ? "yes" : "no");
	else
		printf("%s %u %s asid-match=%s\n", tag, i, t.comm, t.asid == asid ? "yes" : "no");
}

static int live(struct tt_mem *tm, struct guest_mem *m, const struct guest_layout *l, unsigned samples)
{
	struct rsp_conn *c = tt_mem_conn(tm);
	struct rsp_tdesc td = { 0 };
	struct xfer x = { c };
	char *xml = NULL;
	size_t xl = 0;
	int r = xfer_read(&x, "target.xml", &xml, &xl);
	if (r == 0) {
		r = rsp_tdesc_parse(&td, xml, xl, xfer_read, &x);
		free(xml);
	}
	if (r == 0)
		r = rsp_tdesc_finish(&td);
	struct regmap rm = { rsp_tdesc_find(&td, "cs"), rsp_tdesc_find(&td, "gs_base"),
			     rsp_tdesc_find(&td, "k_gs_base"), rsp_tdesc_find(&td, "cr3") };
	if (r < 0 || !rm.cs || !rm.gs || !rm.kgs || !rm.cr3) {
		fprintf(stderr, "test-tool guest-tasks: the stub does not describe cs/gs_base/k_gs_base/cr3\n");
		rsp_tdesc_release(&td);
		return 1;
	}
	char (*tids)[RSP_MAX_TID] = xcalloc(RSP_MAX_THREADS, RSP_MAX_TID);
	size_t n = vcpus(c, tids);
	int rc = 0;
	for (unsigned k = 0; k <= samples && rc == 0; k++) {
		if (k > 0 && tt_run_for(c, 30) < 0) {
			fprintf(stderr, "test-tool guest-tasks: cannot resume and stop the VM\n");
			rc = 1;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			struct vregs v;
			if (read_vregs(c, &td, &rm, tids[i], &v) < 0) {
				fprintf(stderr, "test-tool guest-tasks: cannot read the registers of vCPU %zu\n", i);
				rc = 1;
				break;
			}
			if (k > 0) {
				char tag[32];
				snprintf(tag, sizeof(tag), "sample %u", k);
				print_current(m, l, (unsigned)i, &v, tag);
				continue;
			}
			uint64_t base = guest_kptr(v.gs_base) ? v.gs_base : v.k_gs_base;
			printf("vcpu %zu mode=%s percpu=0x%" PRIx64 " cr3=0x%" PRIx64 " asid=0x%" PRIx64 "\n", i,
			       (v.cs & 3) ? "user" : "kernel", base, v.cr3, guest_asid_of_cr3(v.cr3));
			print_current(m, l, (unsigned)i, &v, "current");
			if (i == 0) {   /* its cost: 100 calls on the stopped VM */
				uint64_t b0 = m->bytes, r0 = m->reads, t0 = mono_ns();
				struct guest_task t;
				for (int j = 0; j < 100; j++)
					guest_current_task(m, l, base, &t);
				uint64_t dt = mono_ns() - t0;
				printf("cost current bytes=%" PRIu64 " reads=%" PRIu64 " us=%.1f\n", (m->bytes - b0) / 100,
				       (m->reads - r0) / 100, dt / 100 / 1000.0);
				/* The slot alone (8 bytes): what a sampler that keeps a
				 * task -> process map from the walk would read per sample. */
				uint64_t task;
				t0 = mono_ns();
				for (int j = 0; j < 100; j++)
					guest_mem_u64(m, base + l->percpu_current, &task);
				dt = mono_ns() - t0;
				printf("cost slot bytes=8 reads=1 us=%.1f\n", dt / 100 / 1000.0);
			}
		}
	}
	free(tids);
	rsp_tdesc_release(&td);
	return rc;
}

int cmd_guest_tasks(int argc, char **argv)
{
	uint64_t shift = 0, pob = 0;
	const char *only = NULL;
	unsigned samples = 0;
	int a = 1;
	for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
		if (!strncmp(argv[a], "--shift=", 8))
			shift = strtoull(argv[a] + 8, NULL, 0);
		else if (!strncmp(argv[a], "--shift-only=", 13))
			only = argv[a] + 13;
		else if (!strncmp(argv[a], "--pob=", 6))
			pob = strtoull(argv[a] + 6, NULL, 0);
		else if (!strncmp(argv[a], "--samples=", 10))
			samples = (unsigned)strtoul(argv[a] + 10, NULL, 0);
		else
			break;
	}
	if (argc - a != 2 || samples > 10000) {
		fprintf(stderr, "usage: test-tool guest-tasks [--shift=N [--shift-only=SYM]] [--pob=ADDR] [--samples=N] "
				"MEMSPEC KALLSYMS\n");
		return 2;
	}
	char *text;
	size_t len;
	int r = file_read_all(argv[a + 1], 256u << 20, &text, &len);
	if (r < 0) {
		fprintf(stderr, "test-tool guest-tasks: cannot read %s: %s\n", argv[a + 1], file_strerror(r));
		return 1;
	}
	struct syms s = { text, len, shift, only };
	struct guest_mem m;
	struct tt_mem *tm = tt_mem_open(argv[a], &m);
	if (!tm) {
		free(text);
		return 1;
	}
	struct guest_layout l;
	char why[256];
	uint64_t t0 = mono_ns();
	r = guest_layout_read(&m, sym_lookup, &s, &l, why, sizeof(why));
	uint64_t dt = mono_ns() - t0;
	int rc = 0;
	if (r < 0) {
		fprintf(stderr, "test-tool guest-tasks: %s\n", why);
		rc = 1;
		goto out;
	}
	if (pob)
		l.page_offset_base = pob;
	print_layout(&l);
	printf("cost layout bytes=%" PRIu64 " reads=%" PRIu64 " us=%" PRIu64 "\n", m.bytes, m.reads, dt / 1000);
	struct guest_task *t;
	uint64_t b0 = m.bytes, r0 = m.reads;
	t0 = mono_ns();
	int n = guest_tasks_walk(&m, &l, &t, GUEST_TASKS_MAX, why, sizeof(why));
	dt = mono_ns() - t0;
	if (n < 0) {
		fprintf(stderr, "test-tool guest-tasks: %s\n", why);
		rc = 1;
		goto out;
	}
	for (int i = 0; i < n; i++)
		printf("task %u %u %u 0x%" PRIx64 " %s\n", t[i].pid, t[i].tgid, t[i].ppid, t[i].asid, t[i].comm);
	printf("cost tasks n=%d bytes=%" PRIu64 " reads=%" PRIu64 " us=%" PRIu64 "\n", n, m.bytes - b0,
	       m.reads - r0, dt / 1000);
	if (why[0])
		printf("walk %s\n", why);
	free(t);
	if (tt_mem_conn(tm))
		rc = live(tm, &m, &l, samples);
out:
	tt_mem_close(tm);
	free(text);
	return rc;
}
