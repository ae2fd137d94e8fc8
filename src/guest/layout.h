/* SPDX-License-Identifier: MIT */
/*
 * The guest kernel's structure layouts, from its own BTF.
 *
 * Offsets of what the passive domain reads from guest memory to name
 * processes and modules, found with libbpf in the BTF the guest kernel
 * embeds (__start_BTF..__stop_BTF). Nothing here is hard-coded per kernel
 * version: a field is known when BTF names it. The BTF blob is hostile
 * input (read from guest memory): its size is bounded before it is read
 * and libbpf validates it.
 */
#ifndef DOMPROF_GUEST_LAYOUT_H
#define DOMPROF_GUEST_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/mem.h"

/* Largest BTF blob read from a guest (Debian's 6.1: 4.2 MiB, 6.12: 4.7). */
#define GUEST_BTF_MAX (32u << 20)

/* Runtime address of a guest kernel symbol by name (the decoded kallsyms
 * table), or 0 when it is not there. */
typedef uint64_t (*guest_sym_fn)(void *ctx, const char *name);

/* Byte offsets; a field that BTF does not have is GUEST_NO_OFFSET. */
#define GUEST_NO_OFFSET UINT32_MAX
struct guest_layout {
	/* struct task_struct */
	uint32_t task_tasks;        /* struct list_head tasks */
	uint32_t task_pid, task_tgid;  /* pid_t (4 bytes each) */
	uint32_t task_comm;         /* char comm[TASK_COMM_LEN] */
	uint32_t task_comm_len;     /* its size (16 on 6.1 and 6.12; 8..64 accepted) */
	uint32_t task_mm;           /* struct mm_struct *mm */
	uint32_t task_real_parent;  /* struct task_struct *real_parent */
	uint32_t task_flags;        /* unsigned int flags (PF_KTHREAD 0x00200000) */
	uint32_t task_start_time;   /* u64 start_time (monotonic ns at fork); optional:
				     * GUEST_NO_OFFSET when BTF lacks it */
	/* struct mm_struct */
	uint32_t mm_pgd;            /* pgd_t *pgd */
	/* The per-CPU current task: offset of the task pointer from a CPU's
	 * per-CPU base (gs_base in kernel mode, k_gs_base in user mode):
	 * `current_task` (6.1) or `pcpu_hot` + offsetof(current_task) (6.2+).
	 * The kernel addresses a per-CPU variable as %gs:SYMBOL, so the
	 * offset is the symbol's kallsyms value (with absolute per-CPU
	 * symbols, 6.1..6.14, a small number such as 0x1fb80; it is not
	 * KASLR-shifted) plus the member's offset. guest_layout_from_btf sets
	 * percpu_sym and the member offset only; guest_layout_read adds the
	 * symbol's value and sets has_current. */
	char percpu_sym[16];        /* "pcpu_hot" or "current_task" */
	uint64_t percpu_current;
	bool has_current;
	/* struct module (for module symbols) */
	uint32_t mod_list;          /* struct list_head list */
	uint32_t mod_name;          /* char name[56] */
	uint32_t mod_name_len;      /* its size */
	uint32_t mod_kallsyms;      /* struct mod_kallsyms *kallsyms */
	uint32_t mod_core_base;     /* core text base: core_layout.base (<6.4) or mem[MOD_TEXT].base (6.4+) */
	uint32_t mod_core_size;     /* its size field (unsigned int, 4 bytes):
				     * <6.4 the whole core (text, rodata, data), 6.4+ text only */
	/* struct mod_kallsyms */
	uint32_t mks_symtab, mks_num_symtab, mks_strtab, mks_typetab;
	/* Elf64_Sym is fixed by the ELF ABI: 24 bytes, st_name at 0, st_value at 8. */
	/* Runtime addresses (from the symbol table, KASLR applied). */
	uint64_t init_task;
	uint64_t modules;           /* the `modules` list head, 0 if unknown */
	uint64_t page_offset_base;  /* value read from guest memory: the
				     * direct map's (randomized) base */
	uint64_t per_cpu_offset;    /* address of __per_cpu_offset[] */
	/* The guest's paging mode (GUEST_PAGING_4 or _5, see
	 * guest_layout_resolve) and what told it: "as given" (the
	 * caller's m->paging), "__pgtable_l5_enabled", "the half
	 * page_offset_base is in", or "no page_offset_base". */
	unsigned paging;
	const char *paging_how;
};

/* Fills *l from a BTF blob (offline tests: a vmlinux's .BTF section).
 * Returns 0, -ENOENT (BTF lacks task_struct's fields: *why says which),
 * -EINVAL (not BTF, libbpf refused it), -EBADMSG (a field has a size or
 * place no kernel gives it: *why says which), -E2BIG (len over
 * GUEST_BTF_MAX). Module fields missing is not an error (each stays
 * GUEST_NO_OFFSET). The runtime addresses are left 0. A member inside
 * anonymous structs/unions is found (bounded depth and work); a
 * bitfield member is refused. Nothing is printed (libbpf's messages are
 * silenced during the call; libbpf's print hook is process-global, so
 * this is not to be called concurrently with other libbpf users). */
int guest_layout_from_btf(const void *btf, size_t len, struct guest_layout *l,
			  char *why, size_t whylen);

/* Reads the guest's BTF through m (bounds: GUEST_BTF_MAX), fills *l, and
 * the runtime addresses through sym (and page_offset_base's value through
 * m). Returns 0 or a negative errno with *why a one-line cause
 * ("no __start_BTF symbol: kernel built without BTF", ...).
 *
 * Paging (resolve): 4-level paging puts the direct map at or above
 * 0xffff800000000000 (0xffff888000000000 without KASLR), 5-level (LA57)
 * anywhere in its wider kernel half (0xff11000000000000 without KASLR).
 * The mode is m->paging when the caller knows it (cr4.LA57 of a vCPU, or
 * the user's paging=), else the kernel's own __pgtable_l5_enabled (0 or
 * 1; kernels that have it), else the half page_offset_base's value lies
 * in, else (no page_offset_base: a kernel that cannot use 5-level) 4.
 * page_offset_base must be a 1 GiB-aligned kernel-half address of that
 * mode; with 5-level paging it must also map the kernel image: the
 * bytes of linux_banner (or init_task) read through the direct map at
 * page_offset_base + (symbol - 0xffffffff80000000 + phys_base) must be
 * the symbol's own (skipped when the kernel has no phys_base symbol).
 * Success sets m->paging to the mode found (later reads are checked
 * against it: guest_mem_read). Version numbers decide nothing. */
int guest_layout_read(struct guest_mem *m, guest_sym_fn sym, void *symctx,
		      struct guest_layout *l, char *why, size_t whylen);

/* guest_layout_read in its two halves, for a caller that caches the BTF
 * (collect/gdb_guest.c keys it by the kernel's build-id): the bounded
 * read of the BTF blob (*btf malloc'd, caller frees), and, after
 * guest_layout_from_btf, the runtime addresses and page_offset_base's
 * value. Same returns as guest_layout_read. */
int guest_layout_fetch_btf(struct guest_mem *m, guest_sym_fn sym, void *symctx, void **btf,
			   size_t *len, char *why, size_t whylen);
int guest_layout_resolve(struct guest_mem *m, guest_sym_fn sym, void *symctx,
			 struct guest_layout *l, char *why, size_t whylen);

#endif
