/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: the delta form of SAMPLE user stacks (format
 * 1.5, docs/file-format.md "SAMPLE", "User stacks in delta form"). A
 * delta sample stores the bytes of its stack that differ from the
 * previous stored stack of the same (domain, tid) in the same chunk,
 * aligned by absolute address (the stack's first byte is at register 7,
 * sp on x86-64): a literal head [sp, sp+head), a run [sp+head,
 * sp+head+copy) that is the previous stack's bytes at the same
 * addresses, and a literal tail after it. The writer and the reader keep
 * the same state, a table of threads per chunk (reset at every chunk),
 * so chunks stay independent.
 *
 * Each thread's last stack is kept in a window indexed by absolute
 * address: applying a delta writes only the literal parts into it, the
 * copied run is already there. A window is reused (moved with memmove
 * when the stack left it) and grows up to USD_MAX_WINDOW; all windows of
 * a table together stay under USD_MAX_BYTES, at most USD_MAX_THREADS
 * threads are tracked per chunk. Past a bound the writer stores the
 * stack whole and the reader cuts a stack whose reference it cannot
 * resolve (both bounded, never an error of the table).
 */
#ifndef DOMPROF_FORMAT_USTACK_H
#define DOMPROF_FORMAT_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USD_MAX_THREADS 4096u
#define USD_MIN_WINDOW (32u << 10)
#define USD_MAX_WINDOW (128u << 10)     /* > 2 * DP_MAX_USTACK */
#define USD_MAX_BYTES (64u << 20)
/* the writer stores a delta only when it copies at least this much */
#define USD_MIN_COPY 64u

struct usd_thread {
	uint32_t domain, tid;
	bool has_prev;          /* the thread's previous stack is known */
	bool prev_in_window;    /* ... and lies in buf (else at pptr, outside) */
	uint64_t psp;           /* previous stack: [psp, psp + plen) at pptr */
	uint32_t plen;
	const uint8_t *pptr;
	uint64_t base;          /* window: addresses [base, base + cap) in buf */
	uint32_t cap;
	uint8_t *buf;
};

struct usd_table {
	struct usd_thread *t;   /* [0, n) in use this chunk; buffers of [n, alloc) kept */
	uint32_t n, alloc;
	uint32_t *slot;         /* open addressing: index + 1, 0 = free; USD_SLOTS */
	uint64_t bytes;         /* window bytes allocated */
};

void usd_init(struct usd_table *tb);
void usd_free(struct usd_table *tb);
/* A new chunk: no thread known. */
void usd_reset(struct usd_table *tb);
/* The thread's entry; with `add`, created when absent (NULL when the
 * table holds USD_MAX_THREADS already), else NULL when absent. */
struct usd_thread *usd_get(struct usd_table *tb, uint32_t domain, uint32_t tid, bool add);

/*
 * The thread's stack is [sp, sp+len), a copy of `run` bytes at address
 * `at` from its previous stack, the rest literal: `head` (at - sp
 * bytes) and `tail` (the bytes after the run). Checks that the previous
 * stack is known and holds the run, writes the result into the window
 * and makes it the previous stack. Returns it (len bytes, valid until the
 * thread's next stack or usd_reset), or NULL when the reference cannot
 * be resolved (no previous stack, a run outside it, addresses that wrap,
 * len > USD_MAX_WINDOW / 2, the byte budget): the thread's state is then
 * unchanged.
 */
const uint8_t *usd_apply(struct usd_table *tb, struct usd_thread *th, uint64_t sp, uint32_t len,
			 uint32_t head, uint32_t run, const uint8_t *lit_head, const uint8_t *lit_tail);

/* The thread's stack is [sp, sp+len) at p, stored whole. The reader
 * keeps the pointer (p stays valid for the chunk: its payload); the
 * writer (copy) puts the bytes in the window, or forgets the thread when
 * it cannot (budget). */
void usd_full(struct usd_table *tb, struct usd_thread *th, uint64_t sp, uint32_t len,
	      const uint8_t *p, bool copy);

/* The writer's choice for a stack [sp, sp+len) at p: the run of bytes
 * equal to the previous stack's at the same addresses that ends where the
 * overlap of the two ends, grown downwards word by word. Sets *head and
 * *run; false when there is no previous stack or the run is under
 * USD_MIN_COPY. */
bool usd_diff(const struct usd_thread *th, uint64_t sp, uint32_t len, const uint8_t *p,
	      uint32_t *head, uint32_t *run);

#endif
