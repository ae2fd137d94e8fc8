// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: unwind tables are hostile (src/symbols/fde.c). An
 * input starting with "\177ELF" is a whole file, read by fde_load from
 * memory (libelf finds the sections); any other input is raw sections:
 *   byte 0     flags: 1 .eh_frame_hdr present, 2 big endian,
 *              4 32-bit addresses, 8 the rest is .debug_frame too
 *   bytes 1-2  .eh_frame_hdr length (LE), bytes 3-4 .eh_frame length
 *   bytes 5-8  .eh_frame_hdr address, bytes 9-12 .eh_frame address
 *   then the header, .eh_frame and (flag 8) .debug_frame bytes, each
 *   copied to a buffer of exactly its size so ASan sees any read past it.
 * Any crash, sanitizer report, or a table that is unsorted, has an empty
 * range, more ranges than the bytes could hold, or a lookup that misses
 * a range's own start, is a bug (abort); so is a lazy table (fde_open,
 * fde_open_sections) that answers a lookup otherwise than the full one.
 *
 * With FUZZ_FDE_VERBOSE set, each input's ranges are printed on stderr
 * ("fuzz-fde: N ranges", then "range START END" for the first 16;
 * tests/e2e/fuzz-fde.sh checks its seeds' known answers with it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

static uint8_t *copy(const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	if (c && n)
		memcpy(c, p, n);
	return c;
}

static void check(struct fde_table *t, size_t bytes)
{
	if (t->n > bytes / 8 + 1 || t->n > FDE_MAX_ENTRIES)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		size_t idx;
		if (t->v[i].start >= t->v[i].end || (i && t->v[i - 1].start >= t->v[i].start))
			abort();
		const struct fde_range *r = fde_find(t, t->v[i].start, &idx);
		if (!r || r->start > t->v[i].start || r->end <= t->v[i].start)
			abort();
	}
	if (getenv("FUZZ_FDE_VERBOSE")) {
		fprintf(stderr, "fuzz-fde: %zu ranges\n", t->n);
		for (size_t i = 0; i < t->n && i < 16; i++)
			fprintf(stderr, "range %#llx %#llx\n", (unsigned long long)t->v[i].start,
				(unsigned long long)t->v[i].end);
	}
}

/* The lazy table (fde_open*) must answer as the full one: at every
 * range's start, last byte and end, and a few addresses from the input. */
static void same_lazy(struct fde_table *full, struct fde_table *lazy, const uint8_t *data, size_t size)
{
	size_t n = full->n < 4096 ? full->n : 4096;
	for (size_t k = 0; k < 3 * n + 16; k++) {
		uint64_t a;
		if (k < 3 * n) {
			const struct fde_range *r = &full->v[k / 3];
			a = k % 3 == 0 ? r->start : k % 3 == 1 ? r->end - 1 : r->end;
		} else {
			a = 0;
			if (size >= 8)
				memcpy(&a, data + (k * 7) % (size - 7), 4);
		}
		const struct fde_range *x = fde_find(full, a, NULL), *y = fde_find(lazy, a, NULL);
		if (!x != !y || (x && (x->start != y->start || x->end != y->end)))
			abort();
	}
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fde_table t;
	if (size >= 4 && !memcmp(data, "\177ELF", 4)) {
		uint8_t *c = copy(data, size);
		if (!c)
			return 0;
		if (fde_load(NULL, c, size, &t) < 0 && t.n)
			abort();
		check(&t, size);
		struct fde_table l;
		if (fde_open(NULL, c, size, &l) >= 0)
			same_lazy(&t, &l, data, size);
		fde_release(&l);
		fde_release(&t);
		free(c);
		return 0;
	}
	if (size < 13)
		return 0;
	uint8_t fl = data[0];
	size_t hn = (size_t)data[1] | (size_t)data[2] << 8, en = (size_t)data[3] | (size_t)data[4] << 8;
	const uint8_t *p = data + 13, *end = data + size;
	if (hn > (size_t)(end - p))
		hn = (size_t)(end - p);
	const uint8_t *hp = p;
	p += hn;
	if (en > (size_t)(end - p))
		en = (size_t)(end - p);
	const uint8_t *ep = p;
	p += en;
	size_t dn = (fl & 8) ? (size_t)(end - p) : 0;
	uint8_t *h = copy(hp, hn), *e = copy(ep, en), *d = copy(p, dn);
	if (h && e && d) {
		struct fde_sections s = {
			.hdr = (fl & 1) ? h : NULL, .hdr_size = hn, .hdr_addr = le32(data + 5),
			.eh = e, .eh_size = en, .eh_addr = le32(data + 9),
			.dbg = (fl & 8) ? d : NULL, .dbg_size = dn,
			.addr_size = (fl & 4) ? 4 : 8, .big_endian = (fl & 2) != 0,
		};
		fde_parse(&s, &t);
		check(&t, en + dn);
		struct fde_table l;
		fde_open_sections(&s, &l);
		same_lazy(&t, &l, data, size);
		fde_release(&l);
		fde_release(&t);
	}
	free(h);
	free(e);
	free(d);
	return 0;
}
