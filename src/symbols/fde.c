// SPDX-License-Identifier: MIT
/*
 * Function boundaries from unwind tables, for code no symbol names
 * (stripped libraries, static functions of a .dynsym-only binary): every
 * FDE of .eh_frame (and .debug_frame) says where one function starts
 * and how long it is, so a sample there can be named per function
 * ("liblzma.so.5.4.1+0x15b40", see session.c) instead of one
 * "[unknown]" for the whole library.
 *
 * Fast path: .eh_frame_hdr's binary-search table lists every FDE's
 * initial location, sorted, with the FDE's address; only each FDE's
 * pc_range is read from .eh_frame. Without a usable table, .eh_frame is
 * walked entry by entry; .debug_frame, when present, is walked too. A
 * file without section headers is read through PT_GNU_EH_FRAME. The
 * result is one sorted array of [start, end) ranges; the section bytes
 * are not kept.
 *
 * The file is hostile: every offset is checked against its section
 * before a byte is read, every loop advances by at least 4 bytes or one
 * table entry, and counts are bounded by the section size and
 * FDE_MAX_ENTRIES. An entry that does not parse is skipped; nothing here
 * can fail harder than "no ranges".
 */
#include "symbols/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/xalloc.h"

/* DW_EH_PE_* pointer encodings (LSB, "DWARF Extensions"). */
#define PE_OMIT     0xffu
#define PE_FMT      0x0fu
#define PE_ABSPTR   0x00u
#define PE_ULEB     0x01u
#define PE_UDATA2   0x02u
#define PE_UDATA4   0x03u
#define PE_UDATA8   0x04u
#define PE_SLEB     0x09u
#define PE_SDATA2   0x0au
#define PE_SDATA4   0x0bu
#define PE_SDATA8   0x0cu
#define PE_APP      0x70u
#define PE_PCREL    0x10u
#define PE_DATAREL  0x30u
#define PE_INDIRECT 0x80u

/* A bounded reader over one section's bytes. */
struct cur {
	const uint8_t *p;
	size_t size, off;
	bool be;          /* file is big-endian */
	bool bad;         /* read past the end: every later read fails too */
};

static uint64_t rd_uint(struct cur *c, unsigned n)
{
	if (c->bad || c->off > c->size || n > c->size - c->off) {
		c->bad = true;
		return 0;
	}
	uint64_t v = 0;
	const uint8_t *q = c->p + c->off;
	c->off += n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!c->be && (n == 1 || n == 2 || n == 4 || n == 8)) {
		/* the host's order: one load (a byte loop was a tenth of
		 * reading a system-wide report's unwind tables) */
		memcpy(&v, q, n);
		return v;
	}
#endif
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)q[c->be ? n - 1 - i : i] << (8 * i);
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint64_t b = rd_uint(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		if (shift > 70) {   /* longer than any 64-bit value */
			c->bad = true;
			break;
		}
	}
	return 0;
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0, b = 0;
	unsigned shift = 0;
	do {
		if (shift > 70) {
			c->bad = true;
			return 0;
		}
		b = rd_uint(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* The size of a fixed-size encoded value, 0 for (s)leb128 or invalid. */
static unsigned pe_size(uint8_t enc, unsigned addr_size)
{
	switch (enc & PE_FMT) {
	case PE_ABSPTR: return addr_size;
	case PE_UDATA2: case PE_SDATA2: return 2;
	case PE_UDATA4: case PE_SDATA4: return 4;
	case PE_UDATA8: case PE_SDATA8: return 8;
	default: return 0;
	}
}

/*
 * Read one encoded pointer at c's offset. sec_addr is the section's
 * address (pcrel values are relative to the field's own address),
 * data_base the base of datarel values (.eh_frame_hdr's address, or 0:
 * refused). apply false: the raw value only (pc_range). False when the
 * value cannot be turned into an address (indirect, text/func-relative,
 * omitted, malformed).
 */
static bool rd_enc(struct cur *c, uint8_t enc, unsigned addr_size, uint64_t sec_addr,
		   uint64_t data_base, bool apply, uint64_t *out)
{
	if (enc == PE_OMIT)
		return false;
	uint64_t field = sec_addr + c->off;
	uint64_t v;
	switch (enc & PE_FMT) {
	case PE_ABSPTR: v = rd_uint(c, addr_size); break;
	case PE_ULEB:   v = rd_uleb(c); break;
	case PE_UDATA2: v = rd_uint(c, 2); break;
	case PE_UDATA4: v = rd_uint(c, 4); break;
	case PE_UDATA8: v = rd_uint(c, 8); break;
	case PE_SLEB:   v = (uint64_t)rd_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)rd_uint(c, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)rd_uint(c, 4); break;
	case PE_SDATA8: v = rd_uint(c, 8); break;
	default: return false;
	}
	if (c->bad)
		return false;
	if (addr_size == 4 && (enc & PE_FMT) == PE_ABSPTR)
		v &= 0xffffffffu;
	if (apply) {
		if (enc & PE_INDIRECT)
			return false;   /* a pointer to the value: not in this section */
		switch (enc & PE_APP) {
		case 0: break;
		case PE_PCREL: v += field; break;
		case PE_DATAREL:
			if (!data_base)
				return false;
			v += data_base;
			break;
		default: return false;   /* textrel, funcrel, aligned: not used for FDEs */
		}
		if (addr_size == 4)
			v &= 0xffffffffu;
	}
	*out = v;
	return true;
}

/* One section of frame entries: .eh_frame or .debug_frame. */
struct frames {
	struct cur c;             /* the whole section */
	uint64_t addr;            /* its address (pcrel base) */
	uint64_t hdr_addr;        /* .eh_frame_hdr's (datarel base), 0 if none */
	unsigned addr_size;       /* 4 or 8, from the ELF class */
	bool debug;               /* .debug_frame rules (CIE ids, no augmentation) */
};

/* The few CIE facts an FDE needs, cached by the CIE's offset. */
#define CIE_CACHE 64
struct cie {
	size_t off;               /* offset + 1 of the CIE; 0 = empty slot */
	uint8_t fde_enc;
	bool has_aug_len;         /* 'z': FDEs carry an augmentation length */
	bool ok;
};

/* The entry header at off: its end and where its body (after the id)
 * starts; the id/CIE pointer value and its field's offset. False at the
 * end or on a length that leaves the section. *zero: a terminator. */
static bool entry_head(const struct frames *f, size_t off, size_t *end, size_t *body,
		       uint64_t *id, size_t *id_off, unsigned *id_size, bool *zero)
{
	struct cur c = f->c;
	c.off = off;
	*zero = false;
	uint64_t len = rd_uint(&c, 4);
	unsigned osz = 4;
	if (len == 0xffffffffu) {
		len = rd_uint(&c, 8);
		osz = 8;
	}
	if (c.bad)
		return false;
	if (len == 0) {
		*zero = true;
		*end = c.off;
		return true;
	}
	if (len > c.size - c.off || len < osz)
		return false;
	*end = c.off + len;
	*id_off = c.off;
	*id = rd_uint(&c, f->debug ? osz : 4);
	*id_size = f->debug ? osz : 4;
	*body = c.off;
	return !c.bad;
}

static bool parse_cie(const struct frames *f, size_t off, struct cie *out)
{
	memset(out, 0, sizeof(*out));
	out->off = off + 1;
	size_t end, body, id_off;
	uint64_t id;
	unsigned idsz;
	bool zero;
	if (!entry_head(f, off, &end, &body, &id, &id_off, &idsz, &zero) || zero)
		return false;
	bool is_cie = f->debug ? id == (idsz == 8 ? UINT64_MAX : 0xffffffffu) : id == 0;
	if (!is_cie)
		return false;
	struct cur c = f->c;
	c.size = end;               /* reads stop at the CIE's end */
	c.off = body;
	unsigned ver = (unsigned)rd_uint(&c, 1);
	if (ver != 1 && ver != 3 && ver != 4)
		return false;
	const char *aug = (const char *)c.p + c.off;
	size_t alen = c.off < c.size ? strnlen(aug, c.size - c.off) : 0;
	if (c.off + alen >= c.size)
		return false;
	c.off += alen + 1;
	unsigned asz = f->addr_size;
	if (ver == 4) {
		asz = (unsigned)rd_uint(&c, 1);
		rd_uint(&c, 1);     /* segment selector size */
		if (asz != 4 && asz != 8)
			return false;
	}
	rd_uleb(&c);                /* code alignment */
	rd_sleb(&c);                /* data alignment */
	if (ver == 1)
		rd_uint(&c, 1);
	else
		rd_uleb(&c);        /* return address register */
	out->fde_enc = asz == 8 ? PE_UDATA8 : PE_UDATA4;   /* absolute, address-sized */
	if (alen && aug[0] == 'z') {
		out->has_aug_len = true;
		uint64_t dlen = rd_uleb(&c);
		if (c.bad || dlen > c.size - c.off)
			return false;
		struct cur a = c;
		a.size = c.off + dlen;
		for (size_t i = 1; i < alen && !a.bad; i++) {
			if (aug[i] == 'R') {
				out->fde_enc = (uint8_t)rd_uint(&a, 1);
			} else if (aug[i] == 'P') {
				uint64_t ignored;
				uint8_t penc = (uint8_t)rd_uint(&a, 1);
				/* the personality routine's pointer is skipped, not used */
				if (!rd_enc(&a, penc & ~PE_INDIRECT & 0x0f, asz, 0, 0, false, &ignored))
					return false;
			} else if (aug[i] == 'L') {
				rd_uint(&a, 1);
			} else if (aug[i] != 'S' && aug[i] != 'B' && aug[i] != 'G') {
				break;      /* unknown letter: the rest is skipped by length */
			}
		}
		if (a.bad)
			return false;
	} else if (alen) {
		return false;       /* an old augmentation ("eh"): layout unknown */
	}
	out->ok = !c.bad;
	return out->ok;
}

static const struct cie *cie_get(const struct frames *f, struct cie *cache, size_t off)
{
	struct cie *slot = &cache[(off / 4) % CIE_CACHE];
	if (slot->off != off + 1)
		parse_cie(f, off, slot);
	return slot->ok ? slot : NULL;
}

/*
 * The FDE at off: its range. False for a CIE, a terminator, or an FDE
 * that does not parse; *next the offset after the entry (0: stop).
 */
static bool parse_fde(const struct frames *f, struct cie *cache, size_t off,
		      uint64_t *start, uint64_t *end, size_t *next)
{
	size_t eend, body, id_off;
	uint64_t id;
	unsigned idsz;
	bool zero;
	*next = 0;
	if (!entry_head(f, off, &eend, &body, &id, &id_off, &idsz, &zero))
		return false;
	*next = eend;
	if (zero)
		return false;
	size_t cie_off;
	if (f->debug) {
		if (id == (idsz == 8 ? UINT64_MAX : 0xffffffffu) || id >= f->c.size)
			return false;
		cie_off = (size_t)id;
	} else {
		if (id == 0 || id > id_off)
			return false;       /* a CIE, or a pointer before the section */
		cie_off = id_off - (size_t)id;
	}
	const struct cie *ci = cie_get(f, cache, cie_off);
	if (!ci)
		return false;
	struct cur c = f->c;
	c.size = eend;
	c.off = body;
	uint64_t b, r;
	if (!rd_enc(&c, ci->fde_enc, f->addr_size, f->addr, f->hdr_addr, true, &b) ||
	    !rd_enc(&c, ci->fde_enc & PE_FMT, f->addr_size, 0, 0, false, &r))
		return false;
	/* an empty range names nothing; a 4 GiB function is not credible */
	if (r == 0 || r > UINT32_MAX || b + r < b)
		return false;
	*start = b;
	*end = b + r;
	return true;
}

static void push(struct fde_table *t, size_t *cap, uint64_t start, uint64_t end)
{
	if (t->n >= FDE_MAX_ENTRIES)
		return;
	if (t->n == *cap)
		xgrow((void **)&t->v, cap, t->n + 1, sizeof(*t->v));
	t->v[t->n].start = start;
	t->v[t->n].end = end;
	t->n++;
}

/* Every FDE of a section, in file order. Each step advances >= 4 bytes. */
static void walk(const struct frames *f, struct fde_table *t, size_t *cap)
{
	struct cie *cache = xcalloc(CIE_CACHE, sizeof(*cache));
	size_t off = 0;
	while (off + 4 <= f->c.size && t->n < FDE_MAX_ENTRIES) {
		uint64_t s, e;
		size_t next;
		bool got = parse_fde(f, cache, off, &s, &e, &next);
		if (next <= off)
			break;               /* a length leaving the section: stop */
		if (got)
			push(t, cap, s, e);
		else if (!f->debug && next == off + 4 && f->c.p[off] == 0 && f->c.p[off + 1] == 0 &&
			 f->c.p[off + 2] == 0 && f->c.p[off + 3] == 0)
			break;               /* .eh_frame's terminator */
		off = next;
	}
	free(cache);
}

/*
 * The .eh_frame_hdr header: true when its table is a usable binary-search
 * table for f's .eh_frame, with *h at its first entry, *count entries of
 * *tab_enc (*vsz bytes each value) that fit the section.
 */
static bool hdr_table(const struct fde_sections *sec, const struct frames *f, struct cur *h,
		      uint8_t *tab_enc, unsigned *vsz, uint64_t *count)
{
	*h = (struct cur){ .p = sec->hdr, .size = sec->hdr_size, .be = sec->big_endian };
	unsigned ver = (unsigned)rd_uint(h, 1);
	uint8_t ptr_enc = (uint8_t)rd_uint(h, 1), cnt_enc = (uint8_t)rd_uint(h, 1);
	*tab_enc = (uint8_t)rd_uint(h, 1);
	uint64_t ehp;
	if (h->bad || ver != 1 || *tab_enc == PE_OMIT || cnt_enc == PE_OMIT)
		return false;
	if (!rd_enc(h, ptr_enc, f->addr_size, sec->hdr_addr, sec->hdr_addr, true, &ehp) ||
	    !rd_enc(h, cnt_enc, f->addr_size, sec->hdr_addr, sec->hdr_addr, true, count))
		return false;
	*vsz = pe_size(*tab_enc, f->addr_size);
	if (!*vsz || ehp != f->addr)
		return false;        /* not a binary-search table, or another .eh_frame */
	if (*count > (h->size - h->off) / (2 * *vsz) || *count > FDE_MAX_ENTRIES)
		return false;        /* more entries than the section holds */
	return true;
}

/* Entry i of the table at h: its initial location and FDE address. */
static bool hdr_entry(const struct fde_sections *sec, const struct frames *f, struct cur *h,
		      uint8_t tab_enc, uint64_t *loc, uint64_t *fde)
{
	return rd_enc(h, tab_enc, f->addr_size, sec->hdr_addr, sec->hdr_addr, true, loc) &&
	       rd_enc(h, tab_enc, f->addr_size, sec->hdr_addr, sec->hdr_addr, true, fde);
}

/* The range of the FDE at address fde if it parses and starts at loc. */
static bool hdr_fde(const struct frames *f, struct cie *cache, uint64_t loc, uint64_t fde,
		    uint64_t *s, uint64_t *e)
{
	size_t next;
	if (fde < f->addr || fde - f->addr >= f->c.size)
		return false;        /* points outside .eh_frame */
	return parse_fde(f, cache, (size_t)(fde - f->addr), s, e, &next) && *s == loc;
}

/*
 * The .eh_frame_hdr table: true when it was usable (then every entry
 * whose FDE parses and agrees was added). False sends the caller to
 * walk .eh_frame instead.
 */
static bool from_hdr(const struct fde_sections *sec, const struct frames *f,
		     struct fde_table *t, size_t *cap)
{
	struct cur h;
	uint8_t tab_enc;
	unsigned vsz;
	uint64_t count;
	if (!hdr_table(sec, f, &h, &tab_enc, &vsz, &count))
		return false;
	struct cie *cache = xcalloc(CIE_CACHE, sizeof(*cache));
	for (uint64_t i = 0; i < count; i++) {
		uint64_t loc, fde, s, e;
		if (!hdr_entry(sec, f, &h, tab_enc, &loc, &fde))
			break;
		if (hdr_fde(f, cache, loc, fde, &s, &e))
			push(t, cap, s, e);
	}
	free(cache);
	return true;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct fde_range *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* at one start, the longer range first (it is kept) */
	return a->end > b->end ? -1 : a->end < b->end;
}

/* sec's .eh_frame as a section of frame entries */
static struct frames eh_frames(const struct fde_sections *sec)
{
	return (struct frames){
		.c = { .p = sec->eh, .size = sec->eh_size, .be = sec->big_endian },
		.addr = sec->eh_addr, .hdr_addr = sec->hdr ? sec->hdr_addr : 0,
		.addr_size = sec->addr_size == 4 ? 4 : 8,
	};
}

int fde_parse(const struct fde_sections *sec, struct fde_table *t)
{
	memset(t, 0, sizeof(*t));
	unsigned asz = sec->addr_size == 4 ? 4 : 8;
	size_t cap = 0;
	if (sec->eh && sec->eh_size) {
		struct frames f = eh_frames(sec);
		if (!sec->hdr || !sec->hdr_size || !from_hdr(sec, &f, t, &cap))
			walk(&f, t, &cap);
	}
	if (sec->dbg && sec->dbg_size) {
		struct frames f = {
			.c = { .p = sec->dbg, .size = sec->dbg_size, .be = sec->big_endian },
			.addr_size = asz, .debug = true,
		};
		walk(&f, t, &cap);
	}
	bool sorted = true;
	for (size_t i = 1; i < t->n && sorted; i++)
		sorted = t->v[i - 1].start < t->v[i].start;
	if (!sorted) {
		qsort(t->v, t->n, sizeof(*t->v), cmp_range);
		size_t w = 0;
		for (size_t i = 0; i < t->n; i++)
			if (!w || t->v[w - 1].start != t->v[i].start)
				t->v[w++] = t->v[i];
		t->n = w;
	}
	return (int)(t->n > INT32_MAX ? INT32_MAX : t->n);
}

/* ---- the lazy table ---- */

/* Steps back over entries whose FDE does not parse before a lookup turns
 * the table into the full one (which skipped them): a real table has
 * none, a hostile one cannot make lookups slow. */
#define LAZY_BACK 32

struct fde_lazy {
	Elf *e;                   /* fde_open's file, or NULL */
	int fd;                   /* its descriptor, or -1 */
	struct fde_sections sec;  /* into e's data or the caller's bytes */
	struct frames f;
	size_t tab_off;           /* the hdr table's first entry, in .eh_frame_hdr */
	uint8_t tab_enc;
	unsigned vsz;
	uint8_t *state;           /* per entry: 0 unread, 1 read (v[i]), 2 no FDE */
	struct cie cache[CIE_CACHE];
};

static void lazy_free(struct fde_lazy *lz)
{
	if (!lz)
		return;
	free(lz->state);
	if (lz->e)
		elf_end(lz->e);
	if (lz->fd >= 0)
		close(lz->fd);
	free(lz);
}

/* Entry i of the hdr table (i < count: inside the section): what
 * hdr_entry reads there. The usual encoding, datarel sdata4 in the
 * host's byte order, is read directly: the sortedness pass reads every
 * entry, and rd_enc per value was a tenth of a small report. */
static bool lazy_entry(const struct fde_lazy *lz, size_t i, uint64_t *loc, uint64_t *fde)
{
	const struct fde_sections *sec = &lz->sec;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (lz->tab_enc == (PE_DATAREL | PE_SDATA4) && !sec->big_endian && sec->hdr_addr) {
		const uint8_t *q = sec->hdr + lz->tab_off + i * 8;
		int32_t a, b;
		memcpy(&a, q, 4);
		memcpy(&b, q + 4, 4);
		*loc = sec->hdr_addr + (uint64_t)(int64_t)a;
		*fde = sec->hdr_addr + (uint64_t)(int64_t)b;
		if (lz->f.addr_size == 4) {
			*loc &= 0xffffffffu;
			*fde &= 0xffffffffu;
		}
		return true;
	}
#endif
	struct cur h = { .p = sec->hdr, .size = sec->hdr_size, .be = sec->big_endian,
			 .off = lz->tab_off + i * 2 * lz->vsz };
	return hdr_entry(sec, &lz->f, &h, lz->tab_enc, loc, fde);
}

/* A lazy table over sec when that gives fde_parse's answers: no
 * .debug_frame, and a usable hdr table whose entries all read and are
 * strictly sorted (then fde_parse keeps them in table order, skipping
 * those whose FDE does not parse, and neither sorts nor merges). */
static bool lazy_make(const struct fde_sections *sec, struct fde_table *t)
{
	if ((sec->dbg && sec->dbg_size) || !sec->eh || !sec->eh_size || !sec->hdr || !sec->hdr_size)
		return false;
	struct fde_lazy *lz = xcalloc(1, sizeof(*lz));
	lz->fd = -1;
	lz->sec = *sec;
	lz->f = eh_frames(sec);
	struct cur h;
	uint64_t count;
	if (!hdr_table(sec, &lz->f, &h, &lz->tab_enc, &lz->vsz, &count)) {
		free(lz);
		return false;
	}
	lz->tab_off = h.off;
	uint64_t prev = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t loc, fde;
		if (!lazy_entry(lz, i, &loc, &fde) || (i && loc <= prev)) {
			lazy_free(lz);
			return false;
		}
		prev = loc;
	}
	lz->state = xcalloc(count ? count : 1, 1);
	t->v = xcalloc(count ? count : 1, sizeof(*t->v));
	t->n = (size_t)count;
	t->lz = lz;
	return true;
}

int fde_open_sections(const struct fde_sections *sec, struct fde_table *t)
{
	memset(t, 0, sizeof(*t));
	if (lazy_make(sec, t))
		return (int)(t->n > INT32_MAX ? INT32_MAX : t->n);
	return fde_parse(sec, t);
}

/* A lookup stepped back too far: the full table from the same sections
 * (names were made for the lazy indexes: dropped, made again). */
static void lazy_to_full(struct fde_table *t)
{
	struct fde_lazy *lz = t->lz;
	struct fde_table full;
	fde_parse(&lz->sec, &full);
	free(t->v);
	free(t->names);
	*t = full;
	lazy_free(lz);
}

static const struct fde_range *lazy_find(struct fde_table *t, uint64_t addr, size_t *idx)
{
	struct fde_lazy *lz = t->lz;
	if (!t->n)
		return NULL;
	uint64_t loc, fde;
	lazy_entry(lz, 0, &loc, &fde);   /* every entry read when the table was made */
	if (addr < loc)
		return NULL;
	size_t lo = 0, hi = t->n;    /* last entry with loc <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		lazy_entry(lz, mid, &loc, &fde);
		if (loc <= addr)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t back = 0;; back++) {
		if (back == LAZY_BACK) {
			lazy_to_full(t);
			return fde_find(t, addr, idx);
		}
		if (!lz->state[lo]) {
			uint64_t s, e;
			lazy_entry(lz, lo, &loc, &fde);
			bool ok = hdr_fde(&lz->f, lz->cache, loc, fde, &s, &e);
			lz->state[lo] = ok ? 1 : 2;
			if (ok)
				t->v[lo] = (struct fde_range){ s, e };
		}
		if (lz->state[lo] == 1)
			break;
		if (!lo)
			return NULL;
		lo--;
	}
	if (addr >= t->v[lo].end)
		return NULL;
	if (idx)
		*idx = lo;
	return &t->v[lo];
}

const struct fde_range *fde_find(struct fde_table *t, uint64_t addr, size_t *idx)
{
	if (t->lz)
		return lazy_find(t, addr, idx);
	if (!t->n || addr < t->v[0].start)
		return NULL;
	size_t lo = 0, hi = t->n;    /* last entry with start <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr >= t->v[lo].end)
		return NULL;
	if (idx)
		*idx = lo;
	return &t->v[lo];
}

void fde_release(struct fde_table *t)
{
	lazy_free(t->lz);
	free(t->v);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

/* A section's bytes, or NULL for NOBITS/empty/unreadable ones. */
static const uint8_t *sec_bytes(Elf_Scn *scn, const GElf_Shdr *sh, size_t *size)
{
	if (sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return NULL;
	Elf_Data *d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	*size = d->d_size;
	return d->d_buf;
}

/* The bytes of [vaddr, end of its PT_LOAD segment's file part). */
static const uint8_t *seg_bytes(Elf *e, size_t phnum, uint64_t vaddr, size_t *size)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		uint64_t off = ph.p_offset + (vaddr - ph.p_vaddr), n = ph.p_filesz - (vaddr - ph.p_vaddr);
		if (off < ph.p_offset || n > (256u << 20))
			return NULL;
		/* libelf checks the range against the file */
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)off, (size_t)n, ELF_T_BYTE);
		if (!d || !d->d_buf)
			return NULL;
		*size = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

/*
 * No section headers (removed by sstrip-like tools): PT_GNU_EH_FRAME is
 * .eh_frame_hdr, and its eh_frame_ptr locates .eh_frame, which runs at
 * most to the end of its segment (the walk stops at its terminator).
 */
static void frames_from_phdrs(Elf *e, struct fde_sections *sec)
{
	size_t phnum = 0;
	if (elf_getphdrnum(e, &phnum) != 0 || !phnum)
		return;
	if (phnum > 4096)
		phnum = 4096;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, (size_t)ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_buf || d->d_size < 8)
			return;
		struct cur h = { .p = d->d_buf, .size = d->d_size, .off = 4, .be = sec->big_endian };
		uint64_t ehp;
		if (((const uint8_t *)d->d_buf)[0] != 1 ||
		    !rd_enc(&h, ((const uint8_t *)d->d_buf)[1], sec->addr_size, ph.p_vaddr, ph.p_vaddr,
			    true, &ehp))
			return;
		size_t n = 0;
		const uint8_t *eh = seg_bytes(e, phnum, ehp, &n);
		if (!eh)
			return;
		sec->hdr = d->d_buf;
		sec->hdr_size = d->d_size;
		sec->hdr_addr = ph.p_vaddr;
		sec->eh = eh;
		sec->eh_size = n;
		sec->eh_addr = ehp;
		return;
	}
}

/* The unwind sections of e into *sec (its bytes are e's); -EINVAL when
 * e is not an ELF file. */
static int elf_frame_sections(Elf *e, struct fde_sections *out)
{
	GElf_Ehdr eh;
	size_t shstrndx = 0;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -EINVAL;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		shstrndx = 0;
	struct fde_sections sec = {
		.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8,
		.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB,
	};
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		/* compressed sections (SHF_COMPRESSED .debug_frame) are skipped */
		if (sh.sh_flags & SHF_COMPRESSED)
			continue;
		const char *nm = shstrndx ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (!nm)
			continue;
		size_t size = 0;
		if (!strcmp(nm, ".eh_frame_hdr") && !sec.hdr) {
			if ((sec.hdr = sec_bytes(scn, &sh, &size))) {
				sec.hdr_size = size;
				sec.hdr_addr = sh.sh_addr;
			}
		} else if (!strcmp(nm, ".eh_frame") && !sec.eh) {
			if ((sec.eh = sec_bytes(scn, &sh, &size))) {
				sec.eh_size = size;
				sec.eh_addr = sh.sh_addr;
			}
		} else if (!strcmp(nm, ".debug_frame") && !sec.dbg) {
			if ((sec.dbg = sec_bytes(scn, &sh, &size)))
				sec.dbg_size = size;
		}
	}
	if (!sec.eh && !sec.dbg)
		frames_from_phdrs(e, &sec);
	*out = sec;
	return 0;
}

static int load_elf_frames(Elf *e, struct fde_table *t)
{
	struct fde_sections sec;
	int r = elf_frame_sections(e, &sec);
	return r < 0 ? r : fde_parse(&sec, t);
}

static int frames_cb(void *e, void *t)
{
	return load_elf_frames(e, t);
}

int fde_load(const char *path, const void *buf, size_t len, struct fde_table *t)
{
	memset(t, 0, sizeof(*t));
	return elf_with(path, buf, len, frames_cb, t);
}

int fde_open(const char *path, const void *buf, size_t len, struct fde_table *t)
{
	memset(t, 0, sizeof(*t));
	int fd, r;
	Elf *e = elf_open(path, buf, len, &fd, &r);
	if (!e)
		return r;
	struct fde_sections sec;
	r = elf_frame_sections(e, &sec);
	if (!r && lazy_make(&sec, t)) {
		/* the sections are e's mapping: kept, but not the descriptor
		 * (a system-wide report has hundreds of stripped images, and
		 * the quick unwinder keeps up to 1024 descriptors already) */
		t->lz->e = e;
		if (fd >= 0 && elf_cntl(e, ELF_C_FDDONE) == 0)
			close(fd);
		else
			t->lz->fd = fd;
		return (int)(t->n > INT32_MAX ? INT32_MAX : t->n);
	}
	if (!r)
		r = fde_parse(&sec, t);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return r;
}
