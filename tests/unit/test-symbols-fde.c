// SPDX-License-Identifier: MIT
/*
 * Unit tests for function ranges from unwind tables (src/symbols/fde.c)
 * and the names the session gives them. Synthetic .eh_frame,
 * .eh_frame_hdr and .debug_frame bytes built here (little and big
 * endian, 32- and 64-bit DWARF) must decode to the ranges they were
 * built from, by the header's table and by the walk alike; corrupt ones
 * (every truncation, every byte set to 0x00 and 0xff, lengths past the
 * end, CIE pointers outside, an unsorted or oversized table, overlong
 * LEB128s) must neither crash (ASan) nor invent ranges. On a real file,
 * the stripped build/workloads/libfde.so, the ranges must start at the
 * static functions' addresses in its unstripped copy, and sym_resolve
 * must name them "libfde.so+0xSTART" (fde, not known), keep the exported
 * symbol's name, and leave an address no FDE covers [unknown]; a
 * static function after an exported symbol without a size
 * (build/fixtures/libunsized.so) gets its FDE name instead of being
 * swallowed by the stretched symbol.
 * Run from the repo root (`make workloads` builds the library).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "symbols/symbols.h"
#include "unit.h"

/* ---- building frames ---- */

struct buf {
	uint8_t b[8192];
	size_t n;
	bool be;
};

static void put(struct buf *b, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		b->b[b->n + (b->be ? size - 1 - i : i)] = (uint8_t)(v >> (8 * i));
	b->n += size;
}

static void put_at(struct buf *b, size_t off, uint64_t v, unsigned size)
{
	size_t n = b->n;
	b->n = off;
	put(b, v, size);
	b->n = n;
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		b->b[b->n++] = c | (v ? 0x80 : 0);
	} while (v);
}

/* pad an entry that started at `start` (its length field) to 8 bytes
 * with DW_CFA_nop and fill in its length */
static void finish_entry(struct buf *b, size_t start, bool dw64)
{
	while ((b->n - start) % 8)
		b->b[b->n++] = 0;
	if (dw64)
		put_at(b, start + 4, b->n - start - 12, 8);
	else
		put_at(b, start, b->n - start - 4, 4);
}

#define EH_ADDR  0x2040u
#define HDR_ADDR 0x2000u

struct fn { uint64_t start, len; };
static const struct fn FNS[] = {
	{ 0x1100, 0x34 }, { 0x1140, 0x34 }, { 0x1180, 0x34 }, { 0x11c0, 0x75 }, { 0x5000, 0x10 },
};
#define NFNS (sizeof(FNS) / sizeof(FNS[0]))

/* .eh_frame: one "zR" CIE (FDE pointers pcrel|sdata4), an FDE per fn,
 * a terminator. fde_off[] gets each FDE's offset. */
static void build_eh(struct buf *b, size_t *fde_off)
{
	memset(b, 0, sizeof(*b));
	size_t cie = b->n;
	put(b, 0, 4);
	put(b, 0, 4);                   /* CIE id */
	put(b, 1, 1);                   /* version */
	memcpy(b->b + b->n, "zR", 3);
	b->n += 3;
	put_uleb(b, 1);                 /* code alignment */
	b->b[b->n++] = 0x78;            /* data alignment -8 */
	put(b, 16, 1);                  /* return address register */
	put_uleb(b, 1);                 /* augmentation length */
	put(b, 0x1b, 1);                /* R: pcrel | sdata4 */
	finish_entry(b, cie, false);
	for (size_t i = 0; i < NFNS; i++) {
		size_t e = b->n;
		fde_off[i] = e;
		put(b, 0, 4);
		put(b, b->n - cie, 4);  /* CIE pointer: back from this field */
		put(b, (uint32_t)(FNS[i].start - (EH_ADDR + b->n)), 4);
		put(b, FNS[i].len, 4);
		put_uleb(b, 0);         /* augmentation length */
		finish_entry(b, e, false);
	}
	put(b, 0, 4);                   /* terminator */
}

/* .eh_frame_hdr: table of (initial location, FDE address), datarel sdata4. */
static void build_hdr(struct buf *h, const size_t *fde_off, uint32_t count)
{
	memset(h, 0, sizeof(*h));
	put(h, 1, 1);
	put(h, 0x1b, 1);                /* eh_frame_ptr: pcrel sdata4 */
	put(h, 0x03, 1);                /* fde_count: udata4 */
	put(h, 0x3b, 1);                /* table: datarel sdata4 */
	put(h, (uint32_t)(EH_ADDR - (HDR_ADDR + h->n)), 4);
	put(h, count, 4);
	for (size_t i = 0; i < NFNS; i++) {
		put(h, (uint32_t)(FNS[i].start - HDR_ADDR), 4);
		put(h, (uint32_t)(EH_ADDR + fde_off[i] - HDR_ADDR), 4);
	}
}

/* .debug_frame, 64-bit DWARF, version 4 CIE, absolute addresses of
 * addr_size bytes; big endian when be. */
static void build_dbg(struct buf *b, bool be, unsigned addr_size)
{
	memset(b, 0, sizeof(*b));
	b->be = be;
	size_t cie = b->n;
	put(b, 0xffffffffu, 4);
	put(b, 0, 8);
	put(b, UINT64_MAX, 8);          /* CIE id */
	put(b, 4, 1);
	b->b[b->n++] = 0;               /* no augmentation */
	put(b, addr_size, 1);
	put(b, 0, 1);
	put_uleb(b, 1);
	b->b[b->n++] = 0x78;
	put_uleb(b, 16);
	finish_entry(b, cie, true);
	for (size_t i = 0; i < NFNS; i++) {
		size_t e = b->n;
		put(b, 0xffffffffu, 4);
		put(b, 0, 8);
		put(b, cie, 8);
		put(b, FNS[i].start + 0x100000, addr_size);
		put(b, FNS[i].len, addr_size);
		finish_entry(b, e, true);
	}
}

static bool has_all(const struct fde_table *t, uint64_t bias)
{
	if (t->n != NFNS)
		return false;
	for (size_t i = 0; i < NFNS; i++)
		if (t->v[i].start != FNS[i].start + bias || t->v[i].end != FNS[i].start + bias + FNS[i].len)
			return false;
	return true;
}

/* Every range of t is one of FNS (+bias): a corrupt input may lose
 * ranges but must not invent an overlapping or unsorted one. */
static bool sane(const struct fde_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].start >= t->v[i].end)
			return false;
		if (i && t->v[i - 1].start >= t->v[i].start)
			return false;
	}
	return t->n <= 2 * NFNS + 2;
}

static struct fde_sections eh_sec(const struct buf *eh, const struct buf *hdr)
{
	struct fde_sections s = {
		.eh = eh->b, .eh_size = eh->n, .eh_addr = EH_ADDR, .addr_size = 8,
	};
	if (hdr) {
		s.hdr = hdr->b;
		s.hdr_size = hdr->n;
		s.hdr_addr = HDR_ADDR;
	}
	return s;
}

static void test_good(void)
{
	struct buf eh, hdr, dbg;
	size_t off[NFNS];
	struct fde_table t;
	build_eh(&eh, off);
	build_hdr(&hdr, off, NFNS);

	struct fde_sections s = eh_sec(&eh, &hdr);
	CHECK(fde_parse(&s, &t) == (int)NFNS && has_all(&t, 0));
	/* lookups: start and last byte hit, end and gaps miss */
	size_t idx = 99;
	CHECK(fde_find(&t, 0x1100, &idx) == &t.v[0] && idx == 0);
	CHECK(fde_find(&t, 0x1133, NULL) == &t.v[0]);
	CHECK(fde_find(&t, 0x1134, NULL) == NULL);
	CHECK(fde_find(&t, 0x10ff, NULL) == NULL);
	CHECK(fde_find(&t, 0x11c0 + 0x74, &idx) && idx == 3);
	CHECK(fde_find(&t, 0x5010, NULL) == NULL);
	CHECK(fde_find(&t, UINT64_MAX, NULL) == NULL);
	fde_release(&t);

	/* no header: the walk finds the same */
	s = eh_sec(&eh, NULL);
	CHECK(fde_parse(&s, &t) == (int)NFNS && has_all(&t, 0));
	fde_release(&t);

	/* a header claiming more entries than it holds: refused, walked */
	build_hdr(&hdr, off, 1000000);
	s = eh_sec(&eh, &hdr);
	CHECK(fde_parse(&s, &t) == (int)NFNS && has_all(&t, 0));
	fde_release(&t);

	/* a header for another .eh_frame (eh_frame_ptr elsewhere): walked */
	build_hdr(&hdr, off, NFNS);
	put_at(&hdr, 4, 0x1000, 4);
	CHECK(fde_parse(&s, &t) == (int)NFNS && has_all(&t, 0));
	fde_release(&t);

	/* an unsorted table (entries 0 and 2 swapped) still gives sorted ranges */
	build_hdr(&hdr, off, NFNS);
	uint8_t tmp[8];
	memcpy(tmp, hdr.b + 12, 8);
	memcpy(hdr.b + 12, hdr.b + 12 + 16, 8);
	memcpy(hdr.b + 12 + 16, tmp, 8);
	CHECK(fde_parse(&s, &t) == (int)NFNS && has_all(&t, 0));
	fde_release(&t);

	/* an entry whose location disagrees with its FDE is dropped */
	build_hdr(&hdr, off, NFNS);
	put_at(&hdr, 12 + 8, 0x1234 - HDR_ADDR, 4);
	CHECK(fde_parse(&s, &t) == (int)NFNS - 1 && !fde_find(&t, 0x1140, NULL) && fde_find(&t, 0x1100, NULL));
	fde_release(&t);

	/* the lazy table (fde_open_sections) answers as the full one: good,
	 * unsorted (then it is the full one), an entry whose FDE is outside
	 * .eh_frame (the full table drops it, a lazy lookup steps back over
	 * it). Control: the entry count differs, the answers do not */
	for (int k = 0; k < 3; k++) {
		build_hdr(&hdr, off, NFNS);
		if (k == 1) {
			memcpy(tmp, hdr.b + 12, 8);
			memcpy(hdr.b + 12, hdr.b + 12 + 16, 8);
			memcpy(hdr.b + 12 + 16, tmp, 8);
		} else if (k == 2) {
			put_at(&hdr, 12 + 8 + 4, 0x7fffffff, 4);   /* entry 1's FDE: outside */
		}
		struct fde_table full, lazy;
		fde_parse(&s, &full);
		CHECK(fde_open_sections(&s, &lazy) == (int)NFNS);
		CHECK((lazy.lz != NULL) == (k != 1));
		CHECK(full.n == (k == 2 ? NFNS - 1 : NFNS));
		size_t diff = 0;
		for (uint64_t a = 0x10f0; a < 0x1300; a++) {
			const struct fde_range *x = fde_find(&full, a, NULL), *y = fde_find(&lazy, a, NULL);
			diff += !x != !y || (x && (x->start != y->start || x->end != y->end));
		}
		CHECK_EQ_U64(diff, 0);
		fde_release(&lazy);
		fde_release(&full);
	}

	/* .debug_frame, 64-bit DWARF, little and big endian, 8- and 4-byte addresses */
	for (int k = 0; k < 3; k++) {
		build_dbg(&dbg, k > 0, k == 2 ? 4 : 8);
		struct fde_sections d = { .dbg = dbg.b, .dbg_size = dbg.n, .addr_size = k == 2 ? 4 : 8,
					  .big_endian = k > 0 };
		CHECK(fde_parse(&d, &t) == (int)NFNS && has_all(&t, 0x100000));
		fde_release(&t);
	}
	/* both: merged, sorted */
	build_dbg(&dbg, false, 8);
	s = eh_sec(&eh, &hdr);
	s.dbg = dbg.b;
	s.dbg_size = dbg.n;
	build_hdr(&hdr, off, NFNS);
	CHECK(fde_parse(&s, &t) == 2 * (int)NFNS && fde_find(&t, 0x1100, NULL) &&
	      fde_find(&t, 0x101100, NULL) && sane(&t));
	fde_release(&t);
}

/* Parse a copy of exactly n bytes (so ASan sees any read past them). */
static int parse_copy(const struct buf *eh, size_t n, const struct buf *hdr, size_t hn,
		      struct fde_table *t)
{
	uint8_t *e = malloc(n ? n : 1), *h = malloc(hn ? hn : 1);
	memcpy(e, eh->b, n);
	if (hdr)
		memcpy(h, hdr->b, hn);
	struct fde_sections s = {
		.eh = e, .eh_size = n, .eh_addr = EH_ADDR, .addr_size = 8,
		.hdr = hdr ? h : NULL, .hdr_size = hn, .hdr_addr = HDR_ADDR,
	};
	int r = fde_parse(&s, t);
	free(e);
	free(h);
	return r;
}

static void test_corrupt(void)
{
	struct buf eh, hdr;
	size_t off[NFNS];
	struct fde_table t;
	build_eh(&eh, off);
	build_hdr(&hdr, off, NFNS);
	int bad = 0;
	/* every truncation of .eh_frame and of the header */
	for (size_t n = 0; n <= eh.n; n++) {
		parse_copy(&eh, n, NULL, 0, &t);
		bad += !sane(&t);
		fde_release(&t);
		parse_copy(&eh, n, &hdr, hdr.n, &t);
		bad += !sane(&t);
		fde_release(&t);
	}
	for (size_t n = 0; n <= hdr.n; n++) {
		parse_copy(&eh, eh.n, &hdr, n, &t);
		bad += !sane(&t);
		fde_release(&t);
	}
	/* every byte of both set to 0x00, 0xff and 0x80 */
	static const uint8_t vals[] = { 0x00, 0xff, 0x80 };
	for (size_t v = 0; v < 3; v++) {
		for (size_t i = 0; i < eh.n; i++) {
			struct buf c = eh;
			c.b[i] = vals[v];
			parse_copy(&c, c.n, NULL, 0, &t);
			bad += !sane(&t);
			fde_release(&t);
			parse_copy(&c, c.n, &hdr, hdr.n, &t);
			bad += !sane(&t);
			fde_release(&t);
		}
		for (size_t i = 0; i < hdr.n; i++) {
			struct buf c = hdr;
			c.b[i] = vals[v];
			parse_copy(&eh, eh.n, &c, c.n, &t);
			bad += !sane(&t);
			fde_release(&t);
		}
	}
	CHECK(bad == 0);

	/* a first length past the end: nothing, and no hang */
	struct buf c = eh;
	put_at(&c, 0, 0x7ffffff0, 4);
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == 0);
	fde_release(&t);
	/* a 64-bit length past the end */
	c = eh;
	put_at(&c, off[2], 0xffffffffu, 4);
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == 2);   /* the two before it */
	fde_release(&t);
	/* an FDE whose CIE pointer leaves the section, or points at an FDE */
	c = eh;
	put_at(&c, off[1] + 4, 0x7fffffff, 4);
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == (int)NFNS - 1 && !fde_find(&t, 0x1140, NULL));
	fde_release(&t);
	c = eh;
	put_at(&c, off[1] + 4, off[1] + 4 - off[0], 4);
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == (int)NFNS - 1);
	fde_release(&t);
	/* zero and 4 GiB+ ranges name nothing; a range wrapping past 2^64 neither */
	c = eh;
	put_at(&c, off[0] + 12, 0, 4);
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == (int)NFNS - 1 && !fde_find(&t, 0x1100, NULL));
	fde_release(&t);
	/* an overlong LEB128 as the CIE's augmentation length: the CIE is refused */
	c = eh;
	memset(c.b + 14, 0xff, 4);      /* code alignment, data alignment, ra, aug length */
	CHECK(parse_copy(&c, c.n, NULL, 0, &t) == 0);
	fde_release(&t);
	/* an unknown CIE version */
	c = eh;
	c.b[8] = 9;
	CHECK(parse_copy(&c, c.n, &hdr, hdr.n, &t) == 0);
	fde_release(&t);
	/* empty input */
	struct fde_sections none = { .addr_size = 8 };
	CHECK(fde_parse(&none, &t) == 0 && fde_find(&t, 0x1100, NULL) == NULL);
	fde_release(&t);
}

/* ---- a real stripped library ---- */

static uint64_t nm_addr(const char *file, const char *sym)
{
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "nm %s", file);
	FILE *p = popen(cmd, "r");
	uint64_t a = 0;
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		char name[128], type;
		unsigned long long v;
		if (sscanf(line, "%llx %c %127s", &v, &type, name) == 3 && !strcmp(name, sym))
			a = v;
	}
	pclose(p);
	return a;
}

#define LIB "build/workloads/libfde.so"
#define LIBFULL "build/workloads/libfde-full.so"

static void test_real(void)
{
	char path[4096];
	if (!realpath(LIB, path)) {
		fprintf(stderr, "missing %s: run `make workloads` from the repo root\n", LIB);
		CHECK(0);
		return;
	}
	uint64_t a = nm_addr(LIBFULL, "fde_a"), b = nm_addr(LIBFULL, "fde_b"),
		 w = nm_addr(LIBFULL, "fde_work");
	CHECK(a && b && w);
	struct fde_table t;
	CHECK(fde_load(path, NULL, 0, &t) >= 4);
	const struct fde_range *r = fde_find(&t, a + 1, NULL);
	CHECK(r && r->start == a);
	r = fde_find(&t, b, NULL);
	CHECK(r && r->start == b && r->end > b);
	fde_release(&t);
	CHECK(fde_load("/nonexistent/libx.so", NULL, 0, &t) < 0 && t.n == 0);
	fde_release(&t);

	/* the same file with its section headers gone (e_shoff, e_shnum,
	 * e_shstrndx zeroed): found through PT_GNU_EH_FRAME, same ranges */
	struct fde_table full;
	CHECK(fde_load(path, NULL, 0, &full) >= 4);
	FILE *f = fopen(path, "rb");
	static uint8_t img[1 << 20];
	size_t len = f ? fread(img, 1, sizeof(img), f) : 0;
	if (f)
		fclose(f);
	CHECK(len > 0x40 && len < sizeof(img) && img[4] == 2);   /* ELFCLASS64 */
	memset(img + 0x28, 0, 8);
	memset(img + 0x3c, 0, 4);
	CHECK(fde_load(NULL, img, len, &t) == (int)full.n && t.n == full.n &&
	      !memcmp(t.v, full.v, full.n * sizeof(*full.v)));
	fde_release(&t);
	/* and its PT_GNU_EH_FRAME turned into PT_NULL too: nothing left */
	uint64_t phoff;
	memcpy(&phoff, img + 0x20, 8);
	for (unsigned i = 0, n = img[0x38] | img[0x39] << 8; i < n && i < 64 && phoff < 4096; i++) {
		uint8_t *ph = img + phoff + 56 * i;
		if (ph[0] == 0x50 && ph[1] == 0xe5 && ph[2] == 0x74 && ph[3] == 0x64)
			memset(ph, 0, 4);
	}
	CHECK(fde_load(NULL, img, len, &t) == 0);
	fde_release(&t);
	fde_release(&full);

	/* through the session: mapped at an arbitrary address */
	struct sym_session *s = sym_session_new();
	const uint64_t base = 0x7f0000000000ull;
	struct dp_mmap m = { .pid = 77, .start = base, .len = 0x4000, .pgoff = 0, .path = path };
	sym_add_mmap(s, 0, &m);
	struct sym_result res;
	const struct sym_map *map = sym_find_map(s, 0, 77, DP_MODE_USER, false, 0, base + a + 3);
	sym_resolve(s, map, base + a + 3, &res);
	char want[64];
	snprintf(want, sizeof(want), "libfde.so+0x%" PRIx64, a);
	CHECK_STR(res.symbol, want);
	CHECK(res.fde && !res.known && res.sym_start == a && res.offset == 3);
	CHECK_STR(res.image, "libfde.so");
	/* the same function, another address: the same name (one row) */
	struct sym_result res2;
	sym_resolve(s, map, base + a + 9, &res2);
	CHECK(res2.symbol == res.symbol);
	/* the exported function keeps its .dynsym name */
	sym_resolve(s, map, base + w + 1, &res2);
	CHECK_STR(res2.symbol, "fde_work");
	CHECK(res2.known && !res2.fde);
	/* an address no FDE covers (the ELF header) stays [unknown] */
	sym_resolve(s, map, base + 0x10, &res2);
	CHECK_STR(res2.symbol, "[unknown]");
	CHECK(!res2.known && !res2.fde);
	sym_session_free(s);
}

/* An exported symbol without a size is stretched to the next symbol;
 * the static function in between is named by its FDE, not swallowed. */
#define UNSIZED "build/fixtures/libunsized.so"

static void resolve_at(struct sym_session *s, uint64_t ip, struct sym_result *r)
{
	sym_resolve(s, sym_find_map(s, 0, 78, DP_MODE_USER, false, 0, ip), ip, r);
}

static void test_unsized(void)
{
	char path[4096];
	if (!realpath(UNSIZED, path)) {
		fprintf(stderr, "missing %s: run `make fixtures` from the repo root\n", UNSIZED);
		CHECK(0);
		return;
	}
	uint64_t u = nm_addr(UNSIZED ".full", "unsized_fn"), h = nm_addr(UNSIZED ".full", "hidden_after"),
		 z = nm_addr(UNSIZED ".full", "sized_after"), rt = nm_addr(UNSIZED ".full", "register_tm_clones");
	CHECK(u && h > u && z > h && rt && rt < u);
	struct sym_session *s = sym_session_new();
	const uint64_t base = 0x7f1000000000ull;
	struct dp_mmap m = { .pid = 78, .start = base, .len = 0x4000, .pgoff = 0, .path = path };
	sym_add_mmap(s, 0, &m);
	struct sym_result r;
	resolve_at(s, base + u, &r);
	CHECK_STR(r.symbol, "unsized_fn");
	CHECK(r.known && !r.fde);
	resolve_at(s, base + h + 2, &r);
	char want[64];
	snprintf(want, sizeof(want), "libunsized.so+0x%" PRIx64, h);
	CHECK_STR(r.symbol, want);
	CHECK(r.fde && !r.known && r.offset == 2);
	resolve_at(s, base + z + 1, &r);
	CHECK_STR(r.symbol, "sized_after");
	/* crtstuff's helpers have neither a symbol here nor an FDE */
	resolve_at(s, base + rt + 1, &r);
	CHECK_STR(r.symbol, "[unknown]");
	CHECK(!r.fde);
	sym_session_free(s);
}

int main(void)
{
	test_good();
	test_corrupt();
	test_real();
	test_unsized();
	return unit_done();
}
