// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for what a passive domain reads from guest memory to
 * name processes: the guest kernel's BTF (guest_layout_from_btf, through
 * libbpf), page_offset_base and the paging mode (guest_layout_resolve)
 * and its task list (guest_tasks_walk, guest_current_task,
 * guest_task_ident) on a fake guest memory made of the input.
 *
 * First byte odd: the rest is a BTF blob (up to GUEST_BTF_MAX: a real
 * kernel's .BTF, 4-6 MB, is a seed: tests/e2e/lib/kernel-seeds.py). Even
 * (at most 1 MiB): bytes 1..15 are a task
 * layout (one byte per field offset, the comm size, the walk's limit,
 * the per-CPU slot, the read budget) and the rest is guest memory mapped
 * at 0xffff888000000000, which is also init_task, page_offset_base and
 * the per-CPU base: every pointer in it that lands back in the input is
 * followed.
 *
 * With FUZZ_GUEST_VERBOSE set, a BTF input's layout (or why it was
 * refused) is printed on stderr (tests/e2e/fuzz-guest.sh checks its real
 * seeds' offsets against its own walk of the BTF).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/layout.h"
#include "guest/tasks.h"

#define BASE 0xffff888000000000ull


/* Every symbol the layout's resolve asks for (page_offset_base,
 * __pgtable_l5_enabled, linux_banner, phys_base, ...) is at a place in
 * the input that its name and the input pick. */
static uint64_t fuzz_sym(void *ctx, const char *name)
{
	const uint8_t *d = ctx;
	unsigned h = d[14];
	for (const char *p = name; *p; p++)
		h = h * 31 + (unsigned char)*p;
	return BASE + (h & 0xff) * 8;
}

static void tasks(const uint8_t *d, size_t n)
{
	if (n < 16)
		return;
	struct guest_layout l;
	memset(&l, 0, sizeof(l));
	l.task_tasks = d[1];
	l.task_pid = d[2];
	l.task_tgid = d[3];
	l.task_comm = d[4];
	l.task_mm = d[5];
	l.task_real_parent = d[6];
	l.task_flags = d[7];
	l.mm_pgd = d[8];
	l.task_start_time = d[15] == 255 ? GUEST_NO_OFFSET : d[15];
	l.task_comm_len = d[9] & 63;   /* 0 is refused */
	l.init_task = BASE;
	l.page_offset_base = BASE;
	l.percpu_current = d[11];
	l.has_current = d[11] & 1;
	size_t max = d[10] == 255 ? SIZE_MAX : d[10];
	struct guest_image f = { .r = { { BASE, n - 16, d + 16 } }, .n = 1 };
	struct guest_mem m = { guest_image_read, &f, 1 + (d[12] & 63), d[13] ? (uint64_t)d[13] << 6 : 0, 0, 0,
				GUEST_PAGING_UNKNOWN };
	struct guest_task *t;
	char why[256];
	int r = guest_tasks_walk(&m, &l, &t, max, why, sizeof(why));
	if (r >= 0) {
		for (int i = 0; i < r; i++)
			if (strnlen(t[i].comm, sizeof(t[i].comm)) == sizeof(t[i].comm))
				abort();   /* every comm is terminated */
		free(t);
	}
	/* page_offset_base and the paging mode from the same memory: the
	 * mode found is one of the two, whatever the memory says */
	struct guest_layout rl = l;
	struct guest_mem rm = m;
	rm.paging = (uint8_t)(d[12] >> 6 == 1 ? GUEST_PAGING_4 : d[12] >> 6 == 2 ? GUEST_PAGING_5 : GUEST_PAGING_UNKNOWN);
	if (guest_layout_resolve(&rm, fuzz_sym, (void *)d, &rl, why, sizeof(why)) == 0 &&
	    rl.paging != GUEST_PAGING_4 && rl.paging != GUEST_PAGING_5)
		abort();
	struct guest_task cur;
	(void)guest_current_task(&m, &l, BASE + d[14], &cur);
	if (guest_task_ident(&m, &l, BASE + d[14], &cur) == 0 && strnlen(cur.comm, sizeof(cur.comm)) == sizeof(cur.comm))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > GUEST_BTF_MAX + 1 || (!(data[0] & 1) && size > (1u << 20)))
		return 0;
	if (data[0] & 1) {
		struct guest_layout l;
		char why[256];
		int r = guest_layout_from_btf(data + 1, size - 1, &l, why, sizeof(why));
		if (r == 0 && (l.task_comm_len < 8 || l.task_comm_len > 64))
			abort();   /* accepted fields keep their bounds */
		if (getenv("FUZZ_GUEST_VERBOSE")) {
			if (r == 0)
				fprintf(stderr, "fuzz-guest: btf: tasks=%u pid=%u tgid=%u comm=%u/%u mm=%u "
					"real_parent=%u flags=%u pgd=%u\n", l.task_tasks, l.task_pid, l.task_tgid,
					l.task_comm, l.task_comm_len, l.task_mm, l.task_real_parent, l.task_flags,
					l.mm_pgd);
			else
				fprintf(stderr, "fuzz-guest: btf refused: %s\n", why);
		}
	} else {
		tasks(data, size);
	}
	return 0;
}
