// SPDX-License-Identifier: MIT
/*
 * Bounded, chunked reads of guest memory (see mem.h).
 */
#include <errno.h>
#include <string.h>

#include "guest/mem.h"
#include "util/le.h"

int guest_mem_read(struct guest_mem *m, uint64_t addr, void *buf, size_t len)
{
	size_t chunk = m->chunk ? m->chunk : GUEST_MEM_CHUNK;
	uint64_t budget = m->budget ? m->budget : GUEST_MEM_BUDGET;
	if (len > budget || m->bytes > budget - len)
		return -E2BIG;
	if (addr + len < addr)
		return -EFAULT;   /* wraps around the address space */
	if (len && (!guest_canonical(addr, m->paging) || !guest_canonical(addr + len - 1, m->paging)))
		return -EFAULT;   /* the guest's MMU would not translate it */
	uint8_t *p = buf;
	while (len) {
		size_t n = len < chunk ? len : chunk;
		m->reads++;
		m->bytes += n;
		int r = m->read(m->ctx, addr, p, n);
		if (r < 0)
			return r;
		addr += n;
		p += n;
		len -= n;
	}
	return 0;
}

int guest_mem_u64(struct guest_mem *m, uint64_t addr, uint64_t *v)
{
	uint8_t b[8];
	int r = guest_mem_read(m, addr, b, sizeof(b));
	if (r == 0)
		*v = get64(b);
	return r;
}

int guest_mem_u32(struct guest_mem *m, uint64_t addr, uint32_t *v)
{
	uint8_t b[4];
	int r = guest_mem_read(m, addr, b, sizeof(b));
	if (r == 0)
		*v = get32(b);
	return r;
}

int guest_mem_str(struct guest_mem *m, uint64_t addr, char *buf, size_t max)
{
	if (max == 0)
		return -EINVAL;
	size_t got = 0;
	buf[0] = 0;
	while (got + 1 < max) {
		/* Read up to the end of the current 64-byte line: strings are
		 * short, and a string near the end of a mapping must not fail
		 * because of bytes after it. */
		size_t n = 64 - (size_t)((addr + got) & 63);
		if (n > max - 1 - got)
			n = max - 1 - got;
		int r = guest_mem_read(m, addr + got, buf + got, n);
		if (r < 0) {
			buf[got] = 0;
			return r;
		}
		void *z = memchr(buf + got, 0, n);
		got += n;
		if (z)
			return 0;
	}
	buf[max - 1] = 0;
	return 0;
}

int guest_image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct guest_image *im = ctx;
	for (size_t i = 0; i < im->n && i < GUEST_IMAGE_REGIONS; i++) {
		uint64_t a = im->r[i].addr;
		if (addr >= a && addr - a <= im->r[i].len && len <= im->r[i].len - (addr - a)) {
			memcpy(buf, im->r[i].b + (addr - a), len);
			return 0;
		}
	}
	return -EFAULT;
}
