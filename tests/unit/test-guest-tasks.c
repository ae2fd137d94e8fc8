// SPDX-License-Identifier: MIT
/*
 * Unit test of the guest task-list walk (src/guest/tasks.c) on a fake
 * guest memory: a hand-built list of tasks in a small kernel-half region,
 * with the hostile cases a guest kernel could present — a cycle that
 * never returns to init_task, a task linked to itself, next pointers
 * into user space or unmapped kernel space, an endless list of distinct
 * tasks (made up on the fly by the reader), a spent read budget, a comm
 * without NUL or with control bytes, parents and mms that are not
 * kernel pointers — each bounded and with the tasks read before the
 * break kept. A guest with 5-level paging (tasks below
 * 0xffff800000000000) is walked in its mode, and not in 4-level's. Also the current task through a per-CPU slot, and the asid
 * of cr3 values with PCID and PTI bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guest/tasks.h"
#include "unit.h"
#include "util/le.h"

/* ---- Fake memory: one region of kernel-half bytes ------------------------ */

#define BASE   0xffff888000100000ull
#define SIZE   (64u << 10)
#define POB    0xffff888000000000ull   /* page_offset_base */
#define TSIZE  256u                    /* a fake task_struct */

static uint8_t mem[SIZE];
static bool endless;   /* addresses past the region read as an endless list */

static void endless_bytes(uint64_t addr, uint8_t *buf, size_t len);

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (addr >= BASE && addr - BASE <= SIZE && len <= SIZE - (addr - BASE)) {
		memcpy(buf, mem + (addr - BASE), len);
		return 0;
	}
	if (endless && addr >= BASE + SIZE && addr < 0xffffc00000000000ull) {
		endless_bytes(addr, buf, len);
		return 0;
	}
	return -EFAULT;
}

static struct guest_layout lay(void)
{
	struct guest_layout l;
	memset(&l, 0, sizeof(l));
	l.task_flags = 4;
	l.task_tasks = 16;
	l.task_pid = 48;
	l.task_tgid = 52;
	l.task_real_parent = 56;
	l.task_comm = 64;
	l.task_comm_len = 16;
	l.task_mm = 96;
	l.task_start_time = 104;
	l.mm_pgd = 8;
	l.init_task = BASE;
	l.page_offset_base = POB;
	l.percpu_current = 0x20;
	l.has_current = true;
	return l;
}

static uint64_t task_at(unsigned i) { return BASE + (uint64_t)i * TSIZE; }
static uint64_t mm_at(unsigned i) { return BASE + 0x8000 + (uint64_t)i * 64; }

static void set_task(const struct guest_layout *l, unsigned i, uint32_t pid, uint32_t tgid, const char *comm,
		     uint64_t parent, uint64_t pgd, bool kthread)
{
	uint8_t *t = mem + (task_at(i) - BASE);
	memset(t, 0, TSIZE);
	put32(t + l->task_pid, pid);
	put32(t + l->task_tgid, tgid);
	memcpy(t + l->task_comm, comm, strnlen(comm, 16));
	put64(t + l->task_real_parent, parent);
	put32(t + l->task_flags, kthread ? 0x00200000u : 0x400000u);
	put64(t + l->task_start_time, 1000000ull * pid + 7);
	if (!kthread) {
		put64(t + l->task_mm, mm_at(i));
		put64(mem + (mm_at(i) - BASE) + l->mm_pgd, pgd);
	}
}

static void link_to(const struct guest_layout *l, unsigned from, uint64_t next_list)
{
	put64(mem + (task_at(from) - BASE) + l->task_tasks, next_list);
}

static uint64_t list_of(const struct guest_layout *l, unsigned i) { return task_at(i) + l->task_tasks; }

/* The endless list: past the region, every TSIZE step is a task whose
 * next is the following one (never the head, never seen twice). */
static void endless_bytes(uint64_t addr, uint8_t *buf, size_t len)
{
	struct guest_layout l = lay();
	for (size_t i = 0; i < len; i++) {
		uint64_t a = addr + i, task = a - (a - BASE) % TSIZE, off = a - task;
		uint8_t word[8] = { 0 };
		if (off >= l.task_tasks && off < l.task_tasks + 8)
			put64(word, task + TSIZE + l.task_tasks), buf[i] = word[off - l.task_tasks];
		else if (off >= l.task_pid && off < l.task_pid + 4)
			put32(word, (uint32_t)((task - BASE) / TSIZE)), buf[i] = word[off - l.task_pid];
		else if (off >= l.task_flags && off < l.task_flags + 4)
			put32(word, 0x00200000u), buf[i] = word[off - l.task_flags];
		else
			buf[i] = off >= l.task_comm && off < l.task_comm + 4 ? 'k' : 0;
	}
}

static struct guest_mem gm(uint64_t budget)
{
	struct guest_mem m = { fake_read, NULL, 0, budget, 0, 0, GUEST_PAGING_UNKNOWN };
	return m;
}

/* init_task (0) -> 1 (init) -> 2 (kthreadd) -> 3 (gw, child of init) -> init_task */
static void build_good(const struct guest_layout *l)
{
	memset(mem, 0, sizeof(mem));
	set_task(l, 0, 0, 0, "swapper/0", task_at(0), 0, true);
	set_task(l, 1, 1, 1, "init", task_at(0), POB + 0x1234000, false);
	set_task(l, 2, 2, 2, "kthreadd", task_at(0), 0, true);
	set_task(l, 3, 77, 77, "gw", task_at(1), POB + 0x5678000, false);
	link_to(l, 0, list_of(l, 1));
	link_to(l, 1, list_of(l, 2));
	link_to(l, 2, list_of(l, 3));
	link_to(l, 3, list_of(l, 0));
}

static void test_good(void)
{
	struct guest_layout l = lay();
	build_good(&l);
	struct guest_mem m = gm(0);
	struct guest_task *t;
	char why[256];
	int n = guest_tasks_walk(&m, &l, &t, 100, why, sizeof(why));
	CHECK_EQ_U64(n, 3);
	CHECK_STR(why, "");
	if (n == 3) {
		CHECK(t[0].pid == 1 && t[0].tgid == 1 && t[0].ppid == 0 && !t[0].kthread);
		CHECK_STR(t[0].comm, "init");
		CHECK_EQ_U64(t[0].asid, 0x1234000);
		CHECK(t[1].pid == 2 && t[1].kthread && t[1].asid == 0);
		CHECK_STR(t[1].comm, "kthreadd");
		CHECK(t[2].pid == 77 && t[2].ppid == 1 && !t[2].kthread);
		CHECK_EQ_U64(t[2].asid, 0x5678000);
		CHECK_STR(t[2].comm, "gw");
	}
	free(t);
	/* One span read plus the parent's tgid and the pgd per task, and
	 * the head: the cost the docs give. */
	CHECK_EQ_U64(m.reads, 1 + 3 * 2 + 2);

	/* max cuts the walk; the tasks before the cut are kept. */
	n = guest_tasks_walk(&m, &l, &t, 2, why, sizeof(why));
	CHECK_EQ_U64(n, 2);
	CHECK(strstr(why, "limit") != NULL);
	free(t);

}

/* Fields more than one transfer apart: each is read on its own. */
static void test_span(void)
{
	struct guest_layout l = lay();
	l.task_comm = 3000;   /* past TSIZE: one task at a sparse address */
	memset(mem, 0, sizeof(mem));
	/* init at 0, one task at 0x4000 whose comm is 3000 bytes in. */
	uint64_t t1 = BASE + 0x4000;
	put64(mem + l.task_tasks, t1 + l.task_tasks);
	put64(mem + 0x4000 + l.task_tasks, BASE + l.task_tasks);
	put32(mem + 0x4000 + l.task_pid, 9);
	put32(mem + 0x4000 + l.task_tgid, 9);
	memcpy(mem + 0x4000 + 3000, "far", 3);
	struct guest_mem m = gm(0);
	struct guest_task *t;
	char why[256];
	int n = guest_tasks_walk(&m, &l, &t, 100, why, sizeof(why));
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_STR(t[0].comm, "far");
		CHECK(t[0].pid == 9 && t[0].kthread && t[0].asid == 0);
	}
	free(t);
	CHECK(m.bytes < 200);   /* fields, not the 3 KiB between them */
}

static void test_comm(void)
{
	struct guest_layout l = lay();
	build_good(&l);
	uint8_t *c = mem + (task_at(1) - BASE) + l.task_comm;
	memset(c, 'A', 16);   /* no NUL */
	c = mem + (task_at(2) - BASE) + l.task_comm;
	memcpy(c, "a\x01\x7f\xff" "b", 6);
	struct guest_mem m = gm(0);
	struct guest_task *t;
	char why[256];
	int n = guest_tasks_walk(&m, &l, &t, 100, why, sizeof(why));
	CHECK_EQ_U64(n, 3);
	if (n == 3) {
		CHECK_STR(t[0].comm, "AAAAAAAAAAAAAAA");
		CHECK_STR(t[1].comm, "a???b");
	}
	free(t);
}

static int walk(struct guest_layout *l, struct guest_task **t, char *why)
{
	struct guest_mem m = gm(0);
	return guest_tasks_walk(&m, l, t, 100, why, 256);
}

static void test_broken(void)
{
	struct guest_layout l = lay();
	struct guest_task *t;
	char why[256];
	int n;

	/* A cycle 1 -> 2 -> 3 -> 2 that never returns to the head. */
	build_good(&l);
	link_to(&l, 3, list_of(&l, 2));
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 3);
	CHECK(strstr(why, "loops") != NULL);
	free(t);

	/* A task linked to itself. */
	build_good(&l);
	link_to(&l, 1, list_of(&l, 1));
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 1);
	CHECK(strstr(why, "loops") != NULL);
	free(t);

	/* A next pointer into user space. */
	build_good(&l);
	link_to(&l, 2, 0x1000);
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 2);
	CHECK(strstr(why, "not a kernel address") != NULL);
	free(t);

	/* A next pointer below task_tasks (the task would wrap around). */
	build_good(&l);
	link_to(&l, 2, 8);
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 2);
	free(t);

	/* A kernel pointer to nothing mapped. */
	build_good(&l);
	link_to(&l, 2, 0xffff888012345678ull);
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 2);
	CHECK(strstr(why, "cannot be read") != NULL);
	free(t);

	/* The head's own next is garbage: nothing read, -EBADMSG. */
	build_good(&l);
	link_to(&l, 0, 0xdeadbeef);
	t = (void *)1;
	n = walk(&l, &t, why);
	CHECK_EQ_U64((uint64_t)(int64_t)n, (uint64_t)(int64_t)-EBADMSG);
	CHECK(t == NULL);
	CHECK(why[0] != 0);

	/* init_task not readable; not a kernel address; no layout. */
	build_good(&l);
	struct guest_layout bad = l;
	bad.init_task = 0xffff888099999000ull;
	CHECK(walk(&bad, &t, why) == -EFAULT && t == NULL);
	bad.init_task = 0x400000;
	CHECK(walk(&bad, &t, why) == -ENOENT && t == NULL);
	bad = l;
	bad.task_comm = GUEST_NO_OFFSET;
	CHECK(walk(&bad, &t, why) == -ENOENT && t == NULL);
	bad = l;
	bad.task_comm_len = 0;
	CHECK(walk(&bad, &t, why) == -ENOENT);

	/* A parent, an mm, a pgd that are not kernel pointers: the task is
	 * kept, with ppid / asid 0; a user task stays a user task. */
	build_good(&l);
	put64(mem + (task_at(3) - BASE) + l.task_real_parent, 0x7fff0000);
	put64(mem + (task_at(1) - BASE) + l.task_mm, 0x5000);
	put64(mem + (mm_at(3) - BASE) + l.mm_pgd, POB - 0x1000);   /* below the direct map */
	n = walk(&l, &t, why);
	CHECK_EQ_U64(n, 3);
	if (n == 3) {
		CHECK(t[2].ppid == 0 && t[2].asid == 0 && !t[2].kthread);
		CHECK(t[0].asid == 0 && !t[0].kthread);
	}
	free(t);
}

/* An endless list of distinct tasks: stops at GUEST_TASKS_MAX, or at the
 * read budget, whichever comes first. */
static void test_endless(void)
{
	struct guest_layout l = lay();
	memset(mem, 0, sizeof(mem));
	put64(mem + l.task_tasks, BASE + SIZE + l.task_tasks);
	endless = true;
	struct guest_mem m = gm(0);
	struct guest_task *t;
	char why[256];
	int n = guest_tasks_walk(&m, &l, &t, SIZE_MAX, why, sizeof(why));
	CHECK_EQ_U64(n, GUEST_TASKS_MAX);
	CHECK(strstr(why, "limit") != NULL);
	if (n > 2)
		CHECK(t[1].pid == t[0].pid + 1 && t[0].kthread && !strcmp(t[0].comm, "kkkk"));
	free(t);

	m = gm(64 << 10);
	n = guest_tasks_walk(&m, &l, &t, SIZE_MAX, why, sizeof(why));
	CHECK(n > 0 && n < 1000);
	CHECK(strstr(why, "budget") != NULL);
	CHECK(m.bytes <= 64 << 10);
	free(t);
	endless = false;
}

static void test_current(void)
{
	struct guest_layout l = lay();
	build_good(&l);
	uint64_t percpu = BASE + 0xc000;
	put64(mem + 0xc000 + l.percpu_current, task_at(3));
	struct guest_mem m = gm(0);
	struct guest_task t;
	CHECK(guest_current_task(&m, &l, percpu, &t) == 0);
	CHECK(t.pid == 77 && !strcmp(t.comm, "gw") && t.asid == 0x5678000);
	/* Controls: the user's gs base, an empty slot, no current in the layout. */
	CHECK(guest_current_task(&m, &l, 0x7f0000000000ull, &t) == -EFAULT);
	CHECK(guest_current_task(&m, &l, percpu + 8, &t) == -EBADMSG);
	CHECK(guest_current_task(&m, &l, 0xffff888077770000ull, &t) == -EFAULT);
	CHECK(guest_current_task(&m, &l, 0xffffffffffffffffull, &t) < 0);
	l.has_current = false;
	CHECK(guest_current_task(&m, &l, percpu, &t) == -ENOENT);
}

/* A task's identity, as the sampler checks a current task pointer with:
 * one transfer; a reused task_struct (new pid, start time) and an exec
 * (new mm, then comm) read differently. */
static void test_ident(void)
{
	struct guest_layout l = lay();
	build_good(&l);
	struct guest_mem m = gm(0);
	struct guest_task t, full;
	CHECK(guest_task_ident(&m, &l, task_at(3), &t) == 0);
	CHECK_EQ_U64(m.reads, 1);
	CHECK(t.pid == 77 && t.tgid == 77 && !strcmp(t.comm, "gw") && !t.kthread);
	CHECK_EQ_U64(t.mm, mm_at(3));
	CHECK_EQ_U64(t.start_time, 77000007);
	CHECK_EQ_U64(t.addr, task_at(3));
	CHECK(t.asid == 0 && t.ppid == 0);          /* not read: the whole read gives them */
	CHECK(guest_task_read(&m, &l, task_at(3), &full) == 0);
	CHECK(full.mm == t.mm && full.start_time == t.start_time && full.asid == 0x5678000 && full.ppid == 1);
	/* the pointer reused by a new process: another pid and start time */
	set_task(&l, 3, 78, 78, "gw", task_at(1), POB + 0x5678000, false);
	struct guest_task u;
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == 0);
	CHECK(u.pid == 78 && u.start_time != t.start_time);
	/* an exec: a new mm, then a new comm */
	put64(mem + (task_at(3) - BASE) + l.task_mm, mm_at(5));
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == 0);
	CHECK(u.mm == mm_at(5) && !strcmp(u.comm, "gw"));
	memcpy(mem + (task_at(3) - BASE) + l.task_comm, "alpha\0", 6);
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == 0);
	CHECK(!strcmp(u.comm, "alpha"));
	/* a kernel thread: no mm */
	CHECK(guest_task_ident(&m, &l, task_at(2), &u) == 0);
	CHECK(u.kthread && u.mm == 0 && u.pid == 2);
	/* hostile comm: no NUL, control bytes */
	memcpy(mem + (task_at(3) - BASE) + l.task_comm, "\x1b]0;0123456789abcdef", 20);
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == 0);
	CHECK_STR(u.comm, "?]0;0123456789a");
	/* without start_time in the layout: 0, the rest as before */
	l.task_start_time = GUEST_NO_OFFSET;
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == 0);
	CHECK(u.start_time == 0 && u.pid == 78);
	/* controls: not a kernel address, a layout without task fields,
	 * an address that cannot be read */
	CHECK(guest_task_ident(&m, &l, 0x7f0000001000ull, &u) == -EFAULT);
	CHECK(guest_task_ident(&m, &l, BASE + SIZE + 0x100000000ull, &u) < 0);
	l.task_comm = GUEST_NO_OFFSET;
	CHECK(guest_task_ident(&m, &l, task_at(3), &u) == -ENOENT);
}

/* A guest with 5-level paging: its tasks, mms and per-CPU areas lie in
 * a direct map below 0xffff800000000000. Read in that mode (m->paging,
 * as guest_layout_resolve sets it) they are named with their asids;
 * control: taken for a 4-level guest, nothing is followed. */
static void test_la57(void)
{
	static uint8_t m5[0x1000];
	const uint64_t pob = 0xff3da8edc0000000ull, base = pob + 0x100000;
	struct guest_layout l = lay();
	l.init_task = base;
	l.page_offset_base = pob;
	memset(m5, 0, sizeof(m5));
	uint8_t *t0 = m5, *t1 = m5 + TSIZE;
	put64(t0 + l.task_tasks, base + TSIZE + l.task_tasks);
	put64(t1 + l.task_tasks, base + l.task_tasks);
	put32(t0 + l.task_flags, 0x00200000u);
	memcpy(t0 + l.task_comm, "swapper/0", 9);
	put32(t1 + l.task_pid, 1);
	put32(t1 + l.task_tgid, 1);
	memcpy(t1 + l.task_comm, "init", 4);
	put64(t1 + l.task_real_parent, base);
	put64(t1 + l.task_mm, base + 0x800);
	put64(m5 + 0x800 + l.mm_pgd, pob + 0x1234000);
	put64(m5 + 0xc00 + l.percpu_current, base + TSIZE);   /* a per-CPU slot */
	struct guest_image im = { .n = 1 };
	im.r[0].addr = base, im.r[0].len = sizeof(m5), im.r[0].b = m5;
	struct guest_mem m = { guest_image_read, &im, 0, 0, 0, 0, GUEST_PAGING_5 };
	struct guest_task *t, cur;
	char why[256];
	int n = guest_tasks_walk(&m, &l, &t, 100, why, sizeof(why));
	CHECK_EQ_U64(n, 1);
	CHECK_STR(why, "");
	if (n == 1) {
		CHECK(t[0].pid == 1 && !strcmp(t[0].comm, "init") && !t[0].kthread);
		CHECK_EQ_U64(t[0].asid, 0x1234000);
		CHECK_EQ_U64(t[0].asid, guest_asid_of_cr3(0x1234000 | 0x1));   /* its cr3 (PCID 1) matches */
	}
	free(t);
	CHECK(guest_current_task(&m, &l, base + 0xc00, &cur) == 0);
	CHECK(cur.pid == 1 && cur.asid == 0x1234000);
	/* control: the same guest taken for a 4-level one */
	m.paging = GUEST_PAGING_4;
	n = guest_tasks_walk(&m, &l, &t, 100, why, sizeof(why));
	CHECK(n == -ENOENT && t == NULL);
	CHECK(strstr(why, "not a kernel address") != NULL);
	CHECK(guest_current_task(&m, &l, base + 0xc00, &cur) == -EFAULT);
}

static void test_asid(void)
{
	CHECK_EQ_U64(guest_asid_of_cr3(0x1234000), 0x1234000);
	CHECK_EQ_U64(guest_asid_of_cr3(0x1234000 | 0x5), 0x1234000);        /* PCID 5 */
	CHECK_EQ_U64(guest_asid_of_cr3(0x1234000 | 0x1000 | 0x85), 0x1235000); /* PTI user half kept */
	CHECK_EQ_U64(guest_asid_of_cr3(0x8000000001234000ull), 0x1234000);  /* NOFLUSH bit */
	CHECK(guest_asid_of_cr3(0x1234000) != guest_asid_of_cr3(0x1236000)); /* control */
}

int main(void)
{
	test_good();
	test_span();
	test_comm();
	test_broken();
	test_endless();
	test_current();
	test_ident();
	test_la57();
	test_asid();
	return unit_done();
}
