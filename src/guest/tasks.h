/* SPDX-License-Identifier: MIT */
/*
 * The guest's processes, read from its task list.
 *
 * Walks init_task.tasks (a circular list: bounded by GUEST_TASKS_MAX and
 * by revisits) with the offsets of guest/layout.h, and gives each task its
 * address space as the guest's cr3 holds it: mm->pgd is a direct-map
 * virtual address, so asid = pgd - page_offset_base (the direct map's base
 * is randomized; its value is in the layout; with 5-level paging cr3
 * holds the top table's address the same way). Pointers are checked
 * against the kernel half of m->paging's mode (guest_mem_kptr): the
 * caller sets it, as guest_layout_resolve does. A cr3 read from a vCPU is
 * compared after guest_asid_of_cr3 strips the PCID bits and the bits
 * above the physical address. Page-table isolation's user-half bit (12)
 * is kept: without isolation it is an ordinary address bit (pgds are
 * 4 KiB pages then), so the caller matches a user-mode cr3 with bit 12
 * set against the task's asid with it cleared second
 * (collect/gdb_guest.c).
 *
 * Processes, not threads: the tasks list links thread-group leaders only
 * (a thread is on its leader's signal->thread_head, not walked here), so
 * one entry is one process (pid == tgid, its main thread). All threads
 * of a process share its mm, hence its asid: naming samples by asid needs
 * no more. guest_current_task does give the running thread (pid != tgid
 * for a secondary thread). init_task itself (pid 0, the boot CPU's idle
 * task) is the list's head and is not listed, as in for_each_process.
 *
 * The walk reads guest memory while the VM is stopped: the list is then
 * consistent (the kernel links tasks with list_add_tail_rcu, so `next`
 * pointers are valid at every instruction boundary).
 */
#ifndef DOMPROF_GUEST_TASKS_H
#define DOMPROF_GUEST_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/layout.h"
#include "guest/mem.h"

#define GUEST_TASKS_MAX 65536u

struct guest_task {
	uint32_t pid;           /* the kernel's task pid (thread id) */
	uint32_t tgid;          /* process id */
	uint32_t ppid;          /* real_parent's tgid, 0 if unknown */
	char comm[16];          /* NUL-terminated, printable (others -> '?') */
	uint64_t asid;          /* guest_asid_of_cr3 form; 0: kernel thread (no mm) */
	bool kthread;
	uint64_t addr;          /* the task_struct's guest address */
	uint64_t mm;            /* its mm pointer (0: none); exec gives a new one */
	uint64_t start_time;    /* its start_time (0 when the layout lacks it) */
};

/* The address-space id of a cr3 value: the page-table base without PCID
 * bits (0-11) and without bits 52-63 (bit 63 is the NOFLUSH hint). */
static inline uint64_t guest_asid_of_cr3(uint64_t cr3)
{
	return cr3 & 0x000ffffffffff000ull;
}

/* Reads the one task at address task (a task pointer seen in a per-CPU
 * slot: a thread, an idle task). Returns 0, -ENOENT (layout lacks the
 * task fields), -EFAULT (not a kernel address) or a read error. */
int guest_task_read(struct guest_mem *m, const struct guest_layout *l, uint64_t task,
		    struct guest_task *out);

/* The identity of the task at address task, cheaply: pid, tgid, comm,
 * mm and start_time only (one transfer when they lie within one stub
 * packet's span, as on 6.1 and 6.12), for telling whether a task pointer
 * seen again is still the process read before: a task_struct freed and
 * reused by a new process has another pid and start_time, an exec gives
 * the task a new mm (then its comm). ppid and asid are left 0; kthread
 * is set from mm alone. Returns as guest_task_read. */
int guest_task_ident(struct guest_mem *m, const struct guest_layout *l, uint64_t task,
		     struct guest_task *out);

/* Walks the task list. *out is malloc'd (caller frees; NULL when none),
 * at most max (clamped to GUEST_TASKS_MAX) entries. Returns the number of
 * tasks, or a negative errno with *why set. A broken list (a pointer that
 * is not a kernel address, a task seen twice, a task that cannot be read,
 * more than max tasks) stops the walk: what was read so far is returned,
 * with *why saying where and why it was cut (else *why is ""), and
 * -EBADMSG only when nothing was read. A task whose mm or parent cannot
 * be read keeps asid 0 / ppid 0. */
int guest_tasks_walk(struct guest_mem *m, const struct guest_layout *l,
		     struct guest_task **out, size_t max, char *why, size_t whylen);

/* The task running on a vCPU: percpu_base is gs_base (kernel mode) or
 * k_gs_base (user mode); as the other one is the user's (never a kernel
 * address), taking whichever of the two guest_kptr accepts also covers a
 * vCPU stopped between kernel entry and swapgs. Costs one read of the
 * per-CPU slot plus the task's (on 6.1 and 6.12: two of its fields, its
 * mm's pgd, its parent's tgid; five stub packets in all). Returns 0, -ENOENT (layout has no
 * current), -EFAULT (percpu_base not a kernel address), -EBADMSG (the
 * per-CPU slot holds no kernel pointer), or a read error. */
int guest_current_task(struct guest_mem *m, const struct guest_layout *l,
		       uint64_t percpu_base, struct guest_task *out);

#endif
