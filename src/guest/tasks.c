// SPDX-License-Identifier: MIT
/*
 * The guest's processes from its task list (tasks.h).
 *
 * Every pointer comes from guest memory and may be anything: each is
 * checked with guest_mem_kptr (the kernel half of the guest's paging
 * mode, m->paging) before it is followed, a task address seen
 * twice ends the walk (a cycle that does not come back to the head), and
 * the walk never takes more than `max` steps. One task costs two reads
 * of its own fields on 6.1 and 6.12 (flags near the start; tasks..comm,
 * start_time among them, within 800 bytes, see read_fields) plus its mm's
 * pgd and its parent's tgid; its identity alone (guest_task_ident) one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/tasks.h"
#include "util/hmap.h"
#include "util/le.h"
#include "util/why.h"
#include "util/xalloc.h"

#define PF_KTHREAD 0x00200000u
/* Fields of a task read in one transfer: at most RUN_MAX bytes (one
 * gdbstub packet), skipping gaps of at most RUN_GAP bytes between them
 * (a transfer costs more than 1 KiB of hex on the stub's socket). */
#define RUN_MAX GUEST_MEM_CHUNK
#define RUN_GAP 1024u

static bool layout_ok(const struct guest_layout *l)
{
	const uint32_t f[] = { l->task_tasks, l->task_pid, l->task_tgid, l->task_comm, l->task_mm,
			       l->task_real_parent, l->task_flags, l->mm_pgd };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] > (1u << 20))   /* also GUEST_NO_OFFSET; task_struct is ~10 KiB */
			return false;
	return l->task_comm_len >= 1 && l->task_comm_len <= 64;
}

/* start_time is optional (GUEST_NO_OFFSET: not read) */
static bool has_start(const struct guest_layout *l)
{
	return l->task_start_time <= (1u << 20);
}

/* A comm as read (clen bytes, maybe without NUL) into out[16]:
 * printable, others '?', cut at 15. */
static void take_comm(char out[16], const char *comm, uint32_t clen)
{
	memset(out, 0, 16);
	for (uint32_t i = 0; i < clen && i < 15 && comm[i]; i++)
		out[i] = comm[i] >= 0x20 && comm[i] < 0x7f ? comm[i] : '?';
}

/* Reads the fields f[0..n) of the task at address task, in as few
 * transfers as the layout allows: fields sorted by offset are read
 * together while the gap to the next is at most RUN_GAP and the run
 * fits RUN_MAX (6.1: flags alone, then tasks..comm in one 800-byte run). */
struct fld { uint32_t off, len; uint8_t *dst; };

static int read_fields(struct guest_mem *m, uint64_t task, struct fld *f, size_t n)
{
	for (size_t i = 1; i < n; i++)   /* insertion sort: n is 8 at most */
		for (size_t j = i; j > 0 && f[j - 1].off > f[j].off; j--) {
			struct fld x = f[j];
			f[j] = f[j - 1];
			f[j - 1] = x;
		}
	uint8_t run[RUN_MAX];
	for (size_t i = 0; i < n;) {
		uint64_t lo = f[i].off, hi = lo + f[i].len;
		size_t j = i + 1;
		for (; j < n && f[j].off <= hi + RUN_GAP; j++) {
			uint64_t e = (uint64_t)f[j].off + f[j].len > hi ? (uint64_t)f[j].off + f[j].len : hi;
			if (e - lo > RUN_MAX)
				break;
			hi = e;
		}
		int r = guest_mem_read(m, task + lo, run, (size_t)(hi - lo));
		if (r < 0)
			return r;
		for (; i < j; i++)
			memcpy(f[i].dst, run + (f[i].off - lo), f[i].len);
	}
	return 0;
}

/* Fills *t from the task at address task; *next gets its tasks.next.
 * Returns 0 or the read error of the task itself (its parent and mm
 * failing only leave ppid / asid 0). */
static int read_task(struct guest_mem *m, const struct guest_layout *l, uint64_t task, struct guest_task *t,
		     uint64_t *next)
{
	uint32_t clen = l->task_comm_len < sizeof(t->comm) ? l->task_comm_len : sizeof(t->comm);
	uint8_t b[8][8] = { { 0 } };
	char comm[sizeof(t->comm)];
	struct fld f[8] = {
		{ l->task_tasks, 8, b[0] }, { l->task_pid, 4, b[1] }, { l->task_tgid, 4, b[2] },
		{ l->task_comm, clen, (uint8_t *)comm }, { l->task_mm, 8, b[4] },
		{ l->task_real_parent, 8, b[5] }, { l->task_flags, 4, b[6] },
	};
	size_t nf = 7;
	if (has_start(l))
		f[nf++] = (struct fld){ l->task_start_time, 8, b[7] };
	int r = read_fields(m, task, f, nf);
	if (r < 0)
		return r;
	memset(t, 0, sizeof(*t));
	t->addr = task;
	*next = get64(b[0]);
	t->pid = get32(b[1]);
	t->tgid = get32(b[2]);
	take_comm(t->comm, comm, clen);
	uint64_t mm = get64(b[4]), parent = get64(b[5]);
	t->mm = mm;
	t->start_time = get64(b[7]);
	t->kthread = (get32(b[6]) & PF_KTHREAD) || mm == 0;
	uint32_t ptgid;
	if (guest_mem_kptr(m, parent) && guest_mem_u32(m, parent + l->task_tgid, &ptgid) == 0)
		t->ppid = ptgid;
	uint64_t pgd;
	if (mm && guest_mem_kptr(m, mm) && guest_mem_u64(m, mm + l->mm_pgd, &pgd) == 0 && guest_mem_kptr(m, pgd) &&
	    pgd >= l->page_offset_base)
		t->asid = guest_asid_of_cr3(pgd - l->page_offset_base);
	return 0;
}

int guest_tasks_walk(struct guest_mem *m, const struct guest_layout *l, struct guest_task **out, size_t max,
		     char *why, size_t whylen)
{
	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	if (!layout_ok(l)) {
		whyf(why, whylen, "the layout lacks task_struct fields");
		return -ENOENT;
	}
	if (!guest_mem_kptr(m, l->init_task) || l->init_task > UINT64_MAX - l->task_tasks) {
		whyf(why, whylen, "init_task 0x%llx is not a kernel address", (unsigned long long)l->init_task);
		return -ENOENT;
	}
	if (max > GUEST_TASKS_MAX)
		max = GUEST_TASKS_MAX;
	uint64_t head = l->init_task + l->task_tasks, cur;
	int r = guest_mem_u64(m, head, &cur);
	if (r < 0) {
		whyf(why, whylen, "cannot read init_task.tasks at 0x%llx: %s", (unsigned long long)head,
			strerror(-r));
		return r;
	}
	struct guest_task *v = NULL;
	size_t n = 0, cap = 0;
	struct hmap seen = { 0 };
	const char *broken = NULL;
	uint64_t at = 0;
	while (cur != head) {
		if (n >= max) {
			broken = "more tasks than the limit";
			break;
		}
		at = cur;
		uint64_t task = cur - l->task_tasks;
		if (!guest_mem_kptr(m, cur) || cur < l->task_tasks || !guest_mem_kptr(m, task)) {
			broken = "a tasks.next pointer is not a kernel address";
			break;
		}
		if (u64map_get(&seen, task)) {
			broken = "the list loops without coming back to init_task";
			break;
		}
		u64map_put(&seen, task, (void *)1);
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		if ((r = read_task(m, l, task, &v[n], &cur)) < 0) {
			broken = r == -E2BIG ? "the read budget is spent" : "a task cannot be read";
			break;
		}
		n++;
	}
	hmap_release(&seen);
	if (broken)
		whyf(why, whylen, "task list cut after %zu tasks at 0x%llx: %s", n, (unsigned long long)at, broken);
	if (broken && n == 0) {
		free(v);
		return -EBADMSG;
	}
	*out = v;
	return (int)n;
}

int guest_task_read(struct guest_mem *m, const struct guest_layout *l, uint64_t task, struct guest_task *out)
{
	uint64_t next;
	if (!layout_ok(l))
		return -ENOENT;
	if (!guest_mem_kptr(m, task))
		return -EFAULT;
	return read_task(m, l, task, out, &next);
}

int guest_task_ident(struct guest_mem *m, const struct guest_layout *l, uint64_t task, struct guest_task *out)
{
	if (!layout_ok(l))
		return -ENOENT;
	if (!guest_mem_kptr(m, task))
		return -EFAULT;
	uint32_t clen = l->task_comm_len < sizeof(out->comm) ? l->task_comm_len : sizeof(out->comm);
	uint8_t b[4][8] = { { 0 } };
	char comm[sizeof(out->comm)];
	struct fld f[5] = {
		{ l->task_pid, 4, b[0] }, { l->task_tgid, 4, b[1] }, { l->task_mm, 8, b[2] },
		{ l->task_comm, clen, (uint8_t *)comm },
	};
	size_t nf = 4;
	if (has_start(l))
		f[nf++] = (struct fld){ l->task_start_time, 8, b[3] };
	int r = read_fields(m, task, f, nf);
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	out->addr = task;
	out->pid = get32(b[0]);
	out->tgid = get32(b[1]);
	out->mm = get64(b[2]);
	out->start_time = get64(b[3]);
	out->kthread = out->mm == 0;
	take_comm(out->comm, comm, clen);
	return 0;
}

int guest_current_task(struct guest_mem *m, const struct guest_layout *l, uint64_t percpu_base,
		       struct guest_task *out)
{
	if (!l->has_current || !layout_ok(l))
		return -ENOENT;
	if (!guest_mem_kptr(m, percpu_base) || percpu_base > UINT64_MAX - l->percpu_current)
		return -EFAULT;
	uint64_t task, next;
	int r = guest_mem_u64(m, percpu_base + l->percpu_current, &task);
	if (r < 0)
		return r;
	if (!guest_mem_kptr(m, task))
		return -EBADMSG;
	return read_task(m, l, task, out, &next);
}
