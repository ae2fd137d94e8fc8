// SPDX-License-Identifier: MIT
/*
 * Code bytes of a passive guest's hottest kernel code, for `domprof
 * annotate --domain VM FUNCTION` on a recording with nothing but the
 * stub (no vmlinux, no file at all). While sampling, each guest kernel
 * sample counts its rip's 4 KiB page (a bounded table); when the
 * recording ends and the VM is stopped for the detach, the hottest pages
 * and their neighbours (a function that starts on the page before or
 * runs into the next) are read through the stub, at most
 * GDB_CODE_MAX_PAGES pages, and the final drain writes them as one
 * SYMTAB record of kind DP_SYMTAB_CODE for the domain.
 *
 * What is read is what the guest's memory held at the end: code the
 * guest patched at run time (alternatives, static keys) is as it ran,
 * which is what annotate should show. Pages the stub cannot read
 * (unmapped) are skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gdb_internal.h"
#include "util/le.h"
#include "util/xalloc.h"

#define GDB_CODE_SLOTS 4096u      /* distinct pages counted */
#define GDB_CODE_HOT 24u          /* hottest pages taken, each with its neighbours */
#define GDB_CODE_MAX_PAGES 64u    /* pages read at the end: 256 KiB */
#define PAGE 4096u

struct gdb_code {
	uint64_t page[GDB_CODE_SLOTS];   /* page address + 1; 0 empty */
	uint64_t count[GDB_CODE_SLOTS];
	size_t used;
	uint8_t *blob;                   /* the SYMTAB payload, once read */
	size_t blen;
};

static struct gdb_code *code_of(struct gdb_source *s)
{
	if (!s->code)
		s->code = xcalloc(1, sizeof(*s->code));
	return s->code;
}

void gdb_code_tick(struct gdb_source *s, const struct dp_sample *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].mode != DP_MODE_KERNEL)   /* a passive domain's samples: the guest's modes */
			continue;
		struct gdb_code *c = code_of(s);
		uint64_t pg = (v[i].ip & ~(uint64_t)(PAGE - 1)) + 1;
		size_t h = (size_t)((pg >> 12) * 0x9e3779b97f4a7c15ull >> 52) % GDB_CODE_SLOTS;
		for (size_t probe = 0; probe < GDB_CODE_SLOTS; probe++, h = (h + 1) % GDB_CODE_SLOTS) {
			if (c->page[h] == pg) {
				c->count[h]++;
				break;
			}
			if (!c->page[h]) {
				if (c->used >= GDB_CODE_SLOTS / 2)
					break;   /* full enough: later pages are not counted */
				c->page[h] = pg;
				c->count[h] = 1;
				c->used++;
				break;
			}
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct pc { uint64_t page, count; };

static int cmp_hot(const void *a, const void *b)
{
	const struct pc *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->page < y->page ? -1 : x->page > y->page;
}

/* the pages to read: the hottest, each with the page before and after,
 * sorted and without repeats; returns how many */
static size_t pick(const struct gdb_code *c, uint64_t *out)
{
	struct pc *v = xmalloc(GDB_CODE_SLOTS * sizeof(*v));
	size_t nv = 0;
	for (size_t i = 0; i < GDB_CODE_SLOTS; i++)
		if (c->page[i])
			v[nv++] = (struct pc){ c->page[i] - 1, c->count[i] };
	qsort(v, nv, sizeof(*v), cmp_hot);
	size_t n = 0;
	for (size_t i = 0; i < nv && i < GDB_CODE_HOT && n + 3 <= GDB_CODE_MAX_PAGES; i++) {
		out[n++] = v[i].page;
		if (v[i].page >= PAGE)
			out[n++] = v[i].page - PAGE;
		if (v[i].page <= UINT64_MAX - 2 * PAGE)
			out[n++] = v[i].page + PAGE;
	}
	free(v);
	qsort(out, n, sizeof(*out), cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

/* one page through the stub, in reads the stub answers */
static int read_page(struct gdb_source *s, uint64_t addr, uint8_t *buf)
{
	size_t chunk = s->mem_chunk ? s->mem_chunk : 1024;
	for (size_t off = 0; off < PAGE; off += chunk) {
		size_t n = PAGE - off < chunk ? PAGE - off : chunk;
		if (gdb_final_over(s))
			return -ECANCELED;   /* a slow stub: the end does not wait */
		int r = rsp_read_memory(s->conn, addr + off, buf + off, n);
		if (r < 0)
			return r;
	}
	return 0;
}

void gdb_code_final(struct gdb_source *s)
{
	struct gdb_code *c = s->code;
	if (!c || !c->used || c->blob)
		return;
	uint64_t pages[GDB_CODE_MAX_PAGES];
	size_t np = pick(c, pages);
	c->blob = xmalloc(8 + np * (16 + PAGE));
	memcpy(c->blob, "DPCODE1", 8);
	size_t len = 8;
	for (size_t i = 0; i < np; i++) {
		uint8_t *e = c->blob + len;
		int r = read_page(s, pages[i], e + 16);
		if (r == -EFAULT)
			continue;         /* not mapped: skip it */
		if (r < 0)
			break;            /* the stub went away: keep what was read */
		put64(e, pages[i]);
		put32(e + 8, PAGE);
		put32(e + 12, 0);
		len += 16 + PAGE;
	}
	c->blen = len > 8 ? len : 0;
}

int gdb_code_drain(struct gdb_source *s, struct dp_writer *w)
{
	struct gdb_code *c = s->code;
	if (!c || !c->blen)
		return 0;
	struct dp_symtab st = { .kind = DP_SYMTAB_CODE, .name = "[guest.kernel]",
				.data = c->blob, .size = c->blen };
	int r = dp_write_symtab(w, s->domain_id, &st);
	c->blen = 0;   /* once */
	return r < 0 ? r : 1;
}

void gdb_code_free(struct gdb_source *s)
{
	if (s->code)
		free(s->code->blob);
	free(s->code);
	s->code = NULL;
}
