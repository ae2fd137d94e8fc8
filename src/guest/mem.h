/* SPDX-License-Identifier: MIT */
/*
 * Reading a guest's memory: the one interface every module of src/guest/
 * reads through.
 *
 * Everything read here comes from the guest kernel, which may lie about
 * its own tables: callers bound every length, count, offset and pointer
 * before use. This layer bounds the total: a struct guest_mem carries a
 * byte budget, and reads beyond it fail, so no decoder can make domprof
 * read (or keep the VM stopped) without limit, whatever the guest claims.
 *
 * The reader callback does one transfer of at most `chunk` bytes (the
 * gdbstub's `m` packet: 2032 bytes on QEMU 7.2); guest_mem_read splits
 * longer reads. In tests the callback reads a vmlinux file or a fake
 * memory image.
 */
#ifndef DOMPROF_GUEST_MEM_H
#define DOMPROF_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrspace.h"

/* One read of len (<= chunk) bytes of guest virtual memory at addr.
 * Returns 0, or a negative errno (-EFAULT: not mapped). */
typedef int (*guest_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The guest's paging mode, as far as the caller knows it: a read of an
 * address that is not canonical in that mode fails with -EFAULT before
 * the callback is called (the guest's CPU could not translate it
 * either). UNKNOWN accepts the canonical addresses of both modes. */
enum guest_paging { GUEST_PAGING_UNKNOWN = 0, GUEST_PAGING_4 = 4, GUEST_PAGING_5 = 5 };

struct guest_mem {
	guest_read_fn read;
	void *ctx;
	size_t chunk;           /* largest single read; 0 = 2032 */
	uint64_t budget;        /* total bytes allowed; 0 = GUEST_MEM_BUDGET */
	/* Counters, updated by guest_mem_read (for the printed pause and the
	 * benchmarks). */
	uint64_t bytes;         /* bytes read so far */
	uint64_t reads;         /* callback calls so far */
	uint8_t paging;         /* enum guest_paging; 0 (UNKNOWN) when zeroed */
};

/* Default total budget of one guest_mem: 256 MiB (a 6.1 kernel's text and
 * rodata are ~20 MiB; a scan never needs more). */
#define GUEST_MEM_BUDGET (256ull << 20)
#define GUEST_MEM_CHUNK  2032u

/* Reads len bytes at addr, in chunks. Returns 0, the callback's negative
 * errno (the first chunk that failed), -EFAULT when [addr, addr+len) is
 * not canonical in m->paging's mode, or -E2BIG when the read would pass
 * the budget (nothing is read in those two cases). */
int guest_mem_read(struct guest_mem *m, uint64_t addr, void *buf, size_t len);

/* Little-endian scalars; 0 or a negative errno as guest_mem_read. */
int guest_mem_u64(struct guest_mem *m, uint64_t addr, uint64_t *v);
int guest_mem_u32(struct guest_mem *m, uint64_t addr, uint32_t *v);

/* A NUL-terminated string of at most max-1 bytes at addr into buf[max]
 * (always terminated; a string longer than that is cut). Reads at most
 * max bytes, never across a failing chunk. Returns 0 or a negative errno. */
int guest_mem_str(struct guest_mem *m, uint64_t addr, char *buf, size_t max);

/* A guest memory made of a few byte regions (tests and fuzzers: a fake
 * guest; anything outside the regions reads as unmapped). The bytes are
 * borrowed. guest_image_read is a guest_read_fn with ctx a struct
 * guest_image; a read must lie inside one region. */
#define GUEST_IMAGE_REGIONS 8
struct guest_image {
	struct { uint64_t addr; size_t len; const uint8_t *b; } r[GUEST_IMAGE_REGIONS];
	size_t n;
};
int guest_image_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* True when addr is in the kernel half of either paging mode (>=
 * 0xff00000000000000, 5-level's; 4-level's starts at 0xffff800000000000):
 * pointers read from guest memory are checked with it before they are
 * followed, and guest_mem_read refuses what the guest's own mode does not
 * map, so on a 4-level guest nothing below 0xffff800000000000 is read. */
static inline bool guest_kptr(uint64_t addr)
{
	return addr >= KERNEL_ADDR_START_LA57;
}

/* The first kernel-half address of a paging mode (UNKNOWN: 5-level's,
 * the wider). */
static inline uint64_t guest_kernel_start(unsigned paging)
{
	return paging == GUEST_PAGING_4 ? KERNEL_ADDR_START : KERNEL_ADDR_START_LA57;
}

/* guest_kptr in m's paging mode: exactly 4-level's check on a guest
 * known to use 4-level paging. */
static inline bool guest_mem_kptr(const struct guest_mem *m, uint64_t addr)
{
	return addr >= guest_kernel_start(m->paging);
}

/* True when addr is canonical in the paging mode (UNKNOWN: in either):
 * bits 63..47 (4-level) or 63..56 (5-level) all equal. */
static inline bool guest_canonical(uint64_t addr, unsigned paging)
{
	unsigned top = paging == GUEST_PAGING_4 ? 47 : 56;
	uint64_t hi = addr >> top;
	return hi == 0 || hi == (UINT64_MAX >> top);
}

#endif
