// SPDX-License-Identifier: MIT
/*
 * A guest kernel's kallsyms tables, found by their structure in guest
 * memory and decoded (see ksyms.h and docs/passive.md, "Guest kernel
 * symbols from guest memory").
 *
 * The read-only data starts at the first 2 MiB step after _text that
 * holds the "Linux version " banner. One packet every 64 KiB of it is
 * read until one looks like kallsyms_offsets or kallsyms_names; from the
 * probe before that one, rodata is read forward into a host window until
 * the token table and index are seen (if nothing decodes from there, the
 * scan is repeated from the start of rodata). Every other table is then
 * located relative to them by the adjacencies that scripts/kallsyms.c
 * produces in any version (each table 8-aligned):
 *
 *   num_syms, names, markers are always in that order, names directly
 *   after num_syms and markers directly after names;
 *   markers is followed by the token table, or by kallsyms_seqs_of_names
 *   (3 or 4 bytes a symbol) and then the token table;
 *   the token index directly follows the token table;
 *   offsets + relative_base (or addresses) come either just before
 *   num_syms (up to 6.3) or just after the token index (6.4+).
 *
 * Each candidate is verified by decoding (markers must match the decoded
 * names, addresses must be sorted, _text/_stext/startup_64 consistent)
 * before it is used. The guest is hostile: every count and offset is
 * checked against the window read, and all loops are bounded by it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/ksyms.h"
#include "guest/ksyms_internal.h"
#include "util/le.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#define KSYM_NAME_LEN 512          /* the kernel's limit since 6.1 */
#define BANNER "Linux version "
#define BANNER_WINDOW 4096u        /* the banner is in rodata's first page */

int ksyms_fail(char *why, size_t whylen, int err, const char *fmt, ...)
{
	if (why && whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static uint64_t align8(uint64_t v) { return (v + 7) & ~7ull; }

/* --- the image ---------------------------------------------------- */

static bool step_mapped(struct guest_mem *m, uint64_t addr)
{
	uint64_t v;
	return guest_mem_u64(m, addr, &v) == 0;
}

int guest_kimage_find(struct guest_mem *m, const uint64_t *krips, size_t nrips,
		      struct guest_kimage *img, char *why, size_t whylen)
{
	uint64_t a = GUEST_KIMAGE_START;
	while (a < GUEST_KIMAGE_END && !step_mapped(m, a))
		a += GUEST_KIMAGE_ALIGN;
	if (a >= GUEST_KIMAGE_END)
		return ksyms_fail(why, whylen, -ENOENT, "nothing mapped in the kernel image area "
			          "[0x%llx, 0x%llx): not a Linux x86_64 guest, or still in firmware",
			          GUEST_KIMAGE_START, GUEST_KIMAGE_END);
	uint64_t e = a + GUEST_KIMAGE_ALIGN;
	while (e < GUEST_KIMAGE_END && step_mapped(m, e))
		e += GUEST_KIMAGE_ALIGN;
	img->text = a;
	img->end = e;
	for (size_t i = 0; i < nrips; i++) {
		if (krips[i] < GUEST_KIMAGE_START || krips[i] >= GUEST_KIMAGE_END)
			continue;   /* a module or BPF program: not the image */
		if (krips[i] < a || krips[i] >= e)
			return ksyms_fail(why, whylen, -EPROTO, "vCPU rip 0x%llx is outside the kernel "
				          "image found at [0x%llx, 0x%llx)", (unsigned long long)krips[i],
				          (unsigned long long)a, (unsigned long long)e);
	}
	return 0;
}

/* The start of the read-only data: the first 2 MiB step after _text whose
 * first page holds the kernel banner (init/version.c is linked first).
 * Fills ver with the version word of the banner. */
int ksyms_rodata_find(struct guest_mem *m, const struct guest_kimage *img, uint64_t *ro,
		      char *ver, size_t verlen, char *why, size_t whylen)
{
	char page[BANNER_WINDOW + 1];   /* on the stack: guests are read from several threads */
	for (uint64_t b = img->text + GUEST_KIMAGE_ALIGN; b < img->end && b > img->text;
	     b += GUEST_KIMAGE_ALIGN) {
		size_t got = 0;
		/* Packet by packet: the banner is near the start, stop there. */
		while (got < BANNER_WINDOW) {
			size_t n = m->chunk ? m->chunk : GUEST_MEM_CHUNK;
			if (n > BANNER_WINDOW - got)
				n = BANNER_WINDOW - got;
			if (guest_mem_read(m, b + got, page + got, n) < 0)
				break;
			got += n;
			page[got] = 0;
			const char *s = memmem(page, got, BANNER, strlen(BANNER));
			if (s && (size_t)(s - page) + strlen(BANNER) + 1 < got) {
				const char *v = s + strlen(BANNER);
				size_t k = 0;
				while (k + 1 < verlen && v + k < page + got && v[k] > ' ' && v[k] < 0x7f)
					k++;
				memcpy(ver, v, k);
				ver[k] = 0;
				*ro = b;
				return 0;
			}
		}
	}
	return ksyms_fail(why, whylen, -ENOENT, "no \"Linux version\" banner at the start of a 2 MiB "
		          "step in [0x%llx, 0x%llx): no read-only data found", (unsigned long long)img->text,
		          (unsigned long long)img->end);
}

/* --- the window of read-only data read so far --------------------- */

/* Reads up to `more` bytes after the window, packet by packet, stopping at
 * the first failing read (the end of the mapped rodata). */
int ksyms_win_grow(struct guest_mem *m, struct win *w, size_t more)
{
	if (w->eof)
		return 0;
	if (more > GUEST_KSYMS_MAX_SCAN - w->len)
		more = GUEST_KSYMS_MAX_SCAN - w->len;
	if (w->len + more > w->cap) {
		w->cap = w->len + more;
		w->buf = xrealloc(w->buf, w->cap);
	}
	size_t chunk = m->chunk ? m->chunk : GUEST_MEM_CHUNK;
	size_t end = w->len + more;
	while (w->len < end) {
		size_t n = end - w->len < chunk ? end - w->len : chunk;
		int r = guest_mem_read(m, w->lo + w->len, w->buf + w->len, n);
		if (r == -E2BIG)
			return r;
		if (r < 0) {
			/* The mapping ends within this read: halve it down to
			 * 64 bytes, so the bytes up to the end are kept (a
			 * file-backed image ends mid-page). */
			if (n <= 64) {
				w->eof = true;
				return 0;
			}
			chunk = n / 2;
			continue;
		}
		w->len += n;
	}
	return 0;
}

/* Makes [addr, addr + len) available in the window (reading forward as
 * needed); false if it is not there. */
static bool win_have(struct guest_mem *m, struct win *w, uint64_t addr, uint64_t len)
{
	if (addr < w->lo || len > GUEST_KSYMS_MAX_SCAN || addr - w->lo > GUEST_KSYMS_MAX_SCAN)
		return false;
	uint64_t end = addr - w->lo + len;
	if (end > w->len && end <= GUEST_KSYMS_MAX_SCAN)
		(void)ksyms_win_grow(m, w, end - w->len);
	return end <= w->len;
}

static const uint8_t *at(const struct win *w, uint64_t addr) { return w->buf + (addr - w->lo); }

/* --- the tables ----------------------------------------------------- */

struct tables {
	uint64_t tt, ti;        /* token table, token index */
	uint16_t idx[256];
	uint64_t markers;       /* kallsyms_markers */
	unsigned mwidth;        /* 4 (6.1+) or 8 bytes an entry */
	uint64_t nmarkers;
	uint64_t seqs_size;     /* bytes of seqs_of_names between markers and tt */
	uint64_t num_syms_at, names, names_end;
	unsigned nsw;           /* bytes of num_syms: 8 (up to 7.1), 4 (7.2+) */
	uint64_t nsyms;
	uint64_t addrs;         /* offsets or addresses */
	uint64_t relbase;       /* value of kallsyms_relative_base; 0: absolute */
	bool prel;              /* offsets relative to their own place (7.2+) */
	bool offsets_first;     /* offsets before num_syms (up to 6.3) */
	bool abs_percpu;
	uint64_t work;          /* steps of the search so far (WORK_MAX) */
};

/* A crafted window could make the candidate search quadratic: it stops
 * after this many steps (a real kernel needs ~1 M: one per 8 bytes of
 * rodata scanned, one per name walked). */
#define WORK_MAX (64ull << 20)

/* Is there a valid token index at ti (4-aligned) with its token table just
 * before it (4-aligned: 8 up to 7.2, 4 in 7.3)? */
static bool tokens_at(const struct win *w, uint64_t ti, struct tables *t)
{
	const uint8_t *p = at(w, ti);
	uint16_t idx[256];
	for (int k = 0; k < 256; k++) {
		idx[k] = get16(p + 2 * k);
		if (k == 0 ? idx[0] != 0 : idx[k] < idx[k - 1] + 2)
			return false;
	}
	/* The last token ends with the last NUL before ti, after at most 7
	 * bytes of alignment padding. */
	uint64_t e = ti;
	int pad = 0;
	while (e > w->lo && at(w, e)[-1] == 0 && pad < 9) {
		e--;
		pad++;
	}
	if (pad == 0 || pad > 8)
		return false;
	e++;   /* e: just after the last token's NUL */
	uint64_t s = e - 1;   /* the NUL */
	int n = 0;
	while (s > w->lo && at(w, s)[-1] != 0 && n < 256) {
		s--;
		n++;
	}
	if (n == 0 || s < w->lo + idx[255] || (s - idx[255]) % 4)
		return false;
	uint64_t tt = s - idx[255];
	for (int k = 0; k < 256; k++) {
		uint64_t a = tt + idx[k], b = k < 255 ? tt + idx[k + 1] : e;
		for (uint64_t q = a; q + 1 < b; q++)
			if (at(w, q)[0] < 0x20 || at(w, q)[0] >= 0x7f)
				return false;
		if (at(w, b - 1)[0] != 0)
			return false;
	}
	t->tt = tt;
	t->ti = ti;
	memcpy(t->idx, idx, sizeof(idx));
	return true;
}

static uint64_t marker(const struct win *w, const struct tables *t, uint64_t k)
{
	const uint8_t *p = at(w, t->markers + k * t->mwidth);
	return t->mwidth == 4 ? get32(p) : get64(p);
}

/* One names entry at p (< end): its token count and header size. */
static bool name_entry(const struct win *w, uint64_t p, uint64_t end, unsigned *len, unsigned *hdr)
{
	if (p >= end)
		return false;
	unsigned l = at(w, p)[0];
	*hdr = 1;
	if (l & 0x80) {   /* two-byte length (6.1+) */
		if (p + 1 >= end)
			return false;
		l = (l & 0x7f) | ((unsigned)at(w, p + 1)[0] << 7);
		*hdr = 2;
	}
	if (l == 0 || l > KSYM_NAME_LEN || p + *hdr + l > end)
		return false;
	*len = l;
	return true;
}

/* Walks nsyms names from t->names: every 256th must start at its marker,
 * and the last must end within the 8 bytes before the markers. */
static bool names_walk(const struct win *w, struct tables *t, uint64_t nsyms)
{
	uint64_t p = t->names, end = t->markers;
	for (uint64_t i = 0; i < nsyms; i++) {
		unsigned len, hdr;
		if (++t->work > WORK_MAX)
			return false;
		if (i % 256 == 0 && marker(w, t, i / 256) != p - t->names)
			return false;
		if (!name_entry(w, p, end, &len, &hdr))
			return false;
		p += hdr + len;
	}
	if (p > end || end - p >= 8)   /* padding to the markers' alignment */
		return false;
	t->names_end = p;
	t->nsyms = nsyms;
	return true;
}

/* With markers at t->markers (nmarkers of them) and the names' symbol
 * count in [nlo, nhi]: finds num_syms just before the names. */
static bool names_find(const struct win *w, struct tables *t, uint64_t nlo, uint64_t nhi)
{
	uint64_t c = t->nmarkers, last = marker(w, t, c - 1);
	uint64_t rest = nhi - 256 * (c - 1);      /* symbols after the last marker */
	if (t->markers < w->lo + 8 + 2 + last)
		return false;
	uint64_t hi = t->markers - 2 - last;      /* names start at most here */
	uint64_t span = rest * (2 + KSYM_NAME_LEN) + 8;
	uint64_t lo = hi - w->lo > span ? hi - span : w->lo + 8;
	/* num_syms is 8 bytes (8-aligned, names 8-aligned after it) up to
	 * 7.1, 4 bytes with the names 4-aligned right after it from 7.2 */
	for (uint64_t names = hi & ~3ull; names >= lo && names >= w->lo + 8; names -= 4) {
		if (++t->work > WORK_MAX)
			return false;
		for (unsigned nsw = 8; nsw >= 4; nsw -= 4) {
			if (nsw == 8 && names % 8)
				continue;
			uint32_t n = get32(at(w, names - nsw));
			if (n < nlo || n > nhi || n > GUEST_KSYMS_MAX_SYMS || (nsw == 8 && get32(at(w, names - 4)) != 0))
				continue;
			t->names = names;
			t->num_syms_at = names - nsw;
			t->nsw = nsw;
			if (names_walk(w, t, n))
				return true;
		}
	}
	return false;
}

/* Finds markers (and names, num_syms) before the token table: an 8-aligned
 * ascending array starting with 0, ending at the token table or at the
 * seqs_of_names table before it. */
static bool markers_find(struct win *w, struct tables *t)
{
	uint64_t lo = w->lo;
	for (unsigned mw = 4; mw <= 8; mw += 4) {
		for (uint64_t m = (t->tt - 4) & ~3ull; m >= lo + 8 && m + mw <= t->tt; m -= 4) {
			if (mw == 8 && m % 8)
				continue;
			const uint8_t *p = at(w, m);
			if (++t->work > WORK_MAX)
				return false;
			if ((mw == 4 ? get32(p) : get64(p)) != 0)
				continue;
			t->markers = m;
			t->mwidth = mw;
			/* The run of ascending markers (at most up to tt). */
			uint64_t run = 1, prev = 0;
			while (m + (run + 1) * mw <= t->tt && run < GUEST_KSYMS_MAX_SYMS / 256 + 1) {
				t->nmarkers = run + 1;
				t->work++;
				uint64_t v = marker(w, t, run);
				if (v < prev + 2 * 256 || v > prev + 256ull * (2 + KSYM_NAME_LEN))
					break;
				prev = v;
				run++;
			}
			for (uint64_t c = run; c >= 1; c--) {
				uint64_t endm = m + c * mw, gap = t->tt - endm;
				uint64_t nlo = 256 * (c - 1) + 1, nhi = 256 * c;
				if (endm > t->tt || ++t->work > WORK_MAX)
					continue;
				t->nmarkers = c;
				t->seqs_size = gap >= 8 ? gap : 0;
				for (unsigned sw = 0; sw <= 4; sw++) {
					if (sw == 1 || sw == 2)
						continue;
					uint64_t a = nlo, b = nhi;
					if (sw) {   /* gap: up to 7 bytes of padding on each side of sw * N */
						if (gap < 8)
							continue;
						uint64_t x = gap > 14 ? (gap - 14 + sw - 1) / sw : 1, y = gap / sw;
						if (x > a)
							a = x;
						if (y < b)
							b = y;
					} else if (gap >= 8) {
						continue;
					}
					if (a <= b && names_find(w, t, a, b))
						return true;
				}
			}
		}
	}
	return false;
}

/* Decodes the address of symbol i. */
static uint64_t sym_addr(const struct win *w, const struct tables *t, uint64_t i)
{
	if (t->prel)
		return t->addrs + 4 * i + (uint64_t)(int64_t)(int32_t)get32(at(w, t->addrs + 4 * i));
	if (!t->relbase)
		return get64(at(w, t->addrs + 8 * i));
	uint32_t off = get32(at(w, t->addrs + 4 * i));
	if (!t->abs_percpu)
		return t->relbase + off;
	if ((int32_t)off >= 0)
		return off;
	return t->relbase - 1 - (int32_t)off;
}

static bool addrs_sorted(const struct win *w, struct tables *t)
{
	t->abs_percpu = false;
	if (t->relbase && !t->prel)
		for (uint64_t i = 0; i < t->nsyms; i++)
			if ((int32_t)get32(at(w, t->addrs + 4 * i)) < 0) {
				t->abs_percpu = true;
				break;
			}
	uint64_t prev = 0;
	for (uint64_t i = 0; i < t->nsyms; i++) {
		uint64_t a = sym_addr(w, t, i);
		if (a < prev)
			return false;
		prev = a;
	}
	return true;
}

/* Offsets + relative_base, or absolute addresses: before num_syms (up to
 * 6.3) or after the token index (6.4+); or offsets relative to their own
 * place after the token index (7.2+, 4-aligned in 7.3); the first that
 * is sorted wins (decode then checks the anchors). */
static bool addrs_find(struct guest_mem *m, struct win *w, struct tables *t)
{
	uint64_t n = t->nsyms, after = t->ti + 512;
	struct { uint64_t at, rb; bool first, prel; } c[6] = {
		{ t->num_syms_at - 8 - align8(4 * n), t->num_syms_at - 8, true, false },
		{ align8(after), align8(after) + align8(4 * n), false, false },
		{ t->num_syms_at - 8 * n, 0, true, false },
		{ align8(after), 0, false, false },
		{ after, 0, false, true },
		{ align8(after), 0, false, true },
	};
	for (int i = 0; i < 6; i++) {
		bool rel = c[i].rb != 0;
		if (i == 5 && after % 8 == 0)
			continue;   /* the same as the one before */
		if (c[i].at < w->lo || c[i].at > t->num_syms_at + GUEST_KSYMS_MAX_SCAN)
			continue;   /* before the window (or wrapped) */
		if (!win_have(m, w, c[i].at, rel ? c[i].rb + 8 - c[i].at : (c[i].prel ? 4 : 8) * n))
			continue;
		t->addrs = c[i].at;
		t->relbase = rel ? get64(at(w, c[i].rb)) : 0;
		t->offsets_first = c[i].first;
		t->prel = c[i].prel;
		if (rel && !guest_kptr(t->relbase))
			continue;
		if (addrs_sorted(w, t))
			return true;
	}
	t->prel = false;
	return false;
}

/* Expands symbol entry at p into name[] (type letter first). */
static int expand(const struct win *w, const struct tables *t, uint64_t p, unsigned len,
		  char *name, size_t max)
{
	size_t o = 0;
	for (unsigned i = 0; i < len; i++) {
		const uint8_t *tok = at(w, t->tt + t->idx[at(w, p + i)[0]]);
		for (; *tok; tok++) {   /* tokens were checked NUL-terminated */
			if (o + 1 >= max)
				return -1;
			name[o++] = (char)*tok;
		}
	}
	name[o] = 0;
	return (int)o;
}

struct text {
	char *s;
	size_t len, cap;
};

static int text_line(struct text *x, uint64_t addr, char type, const char *name)
{
	size_t need = 16 + 3 + strlen(name) + 2;
	if (x->len + need > GUEST_KSYMS_MAX_TEXT)
		return -E2BIG;
	if (x->len + need > x->cap) {
		x->cap = (x->len + need) * 2;
		if (x->cap > GUEST_KSYMS_MAX_TEXT + 1)
			x->cap = GUEST_KSYMS_MAX_TEXT + 1;
		x->s = xrealloc(x->s, x->cap);
	}
	x->len += (size_t)snprintf(x->s + x->len, x->cap - x->len, "%016llx %c %s\n",
				   (unsigned long long)addr, type, name);
	return 0;
}

/* Do the decoded addresses look like one kernel image at text: every
 * symbol in the image area at or after text, and within 1 GiB of it
 * (absolute per-cpu symbols, below the image area, aside)? With
 * startup_64 no longer at _text (6.19: _text + 40 MiB), no one anchor
 * decides. */
static bool img_sane(const struct win *w, const struct tables *t, uint64_t text)
{
	for (uint64_t i = 0; i < t->nsyms; i++) {
		uint64_t a = sym_addr(w, t, i);
		if (a < GUEST_KIMAGE_START)
			continue;
		if (a < text || a - text >= (1ull << 30))
			return false;
	}
	return true;
}

/* Decodes every symbol into out->text; validates names and the anchors:
 * _text 2 MiB aligned in the image area, _stext within 64 MiB after it,
 * startup_64 after it in the image area (at _text up to 6.1, at _text +
 * 0xb53 in 6.12, _text + 40 MiB in 6.19), every image symbol within
 * 1 GiB after _text. */
static int decode(const struct win *w, const struct tables *t, const struct guest_kimage *img,
		  struct guest_ksyms *out, char *why, size_t whylen)
{
	char name[KSYM_NAME_LEN + 2];
	uint64_t text = 0, stext = 0, s64 = 0;
	/* First pass: the anchors, to know the shift of unrelocated tables. */
	uint64_t p = t->names;
	for (uint64_t i = 0; i < t->nsyms; i++) {
		unsigned len, hdr;
		if (!name_entry(w, p, t->markers, &len, &hdr))
			return ksyms_fail(why, whylen, -EBADMSG, "kallsyms_names entry %llu is cut", (unsigned long long)i);
		int n = expand(w, t, p + hdr, len, name, sizeof(name));
		if (n < 2)
			return ksyms_fail(why, whylen, -EBADMSG, "kallsyms symbol %llu: name %s", (unsigned long long)i,
				          n < 0 ? "longer than 512 bytes" : "empty");
		for (int k = 0; k < n; k++)
			if (name[k] <= ' ' || name[k] >= 0x7f)
				return ksyms_fail(why, whylen, -EBADMSG, "kallsyms symbol %llu: unprintable byte 0x%02x",
					          (unsigned long long)i, (unsigned char)name[k]);
		if (!strcmp(name + 1, "_text"))
			text = sym_addr(w, t, i);
		else if (!strcmp(name + 1, "_stext"))
			stext = sym_addr(w, t, i);
		else if (!strcmp(name + 1, "startup_64"))
			s64 = sym_addr(w, t, i);
		p += hdr + len;
	}
	if (!text || !stext || !s64)
		return ksyms_fail(why, whylen, -EBADMSG, "kallsyms has no %s symbol",
			          !text ? "_text" : !stext ? "_stext" : "startup_64");
	if (text % GUEST_KIMAGE_ALIGN || text < GUEST_KIMAGE_START || text >= GUEST_KIMAGE_END ||
	    s64 < text || s64 >= GUEST_KIMAGE_END || stext < text || stext - text >= (64u << 20) ||
	    !img_sane(w, t, text))
		return ksyms_fail(why, whylen, -EBADMSG, "kallsyms anchors inconsistent: _text 0x%llx, "
			          "_stext 0x%llx, startup_64 0x%llx", (unsigned long long)text,
			          (unsigned long long)stext, (unsigned long long)s64);
	/* Tables read from a live guest are relocated (text == img->text);
	 * an unrelocated image (a vmlinux placed at a shift) is shifted. */
	uint64_t delta = img->text - text;
	struct text x = { 0 };
	p = t->names;
	for (uint64_t i = 0; i < t->nsyms; i++) {
		unsigned len, hdr;
		(void)name_entry(w, p, t->markers, &len, &hdr);
		(void)expand(w, t, p + hdr, len, name, sizeof(name));
		uint64_t a = sym_addr(w, t, i);
		/* Absolute symbols (per-cpu offsets) are not relocated. */
		if (a >= GUEST_KIMAGE_START)
			a += delta;
		int r = text_line(&x, a, name[0], name + 1);
		if (r < 0) {
			free(x.s);
			return ksyms_fail(why, whylen, r, "kallsyms text over %u bytes", GUEST_KSYMS_MAX_TEXT);
		}
		p += hdr + len;
	}
	out->text = x.s ? x.s : xcalloc(1, 1);
	out->len = x.len;
	out->nsyms = t->nsyms;
	out->text_addr = img->text;
	out->kaslr_offset = img->text - GUEST_LINK_TEXT;
	out->delta = delta;
	return 0;
}

/* The digest of the span at buf (guest address lo, len bytes) by the
 * rules of struct guest_ksyms_src, for a boot whose _text is text. */
static void span_digest(const uint8_t *buf, uint64_t lo, size_t len, uint64_t text,
			const struct guest_ksyms_src *src, uint8_t out[SHA256_LEN])
{
	struct sha256 c;
	sha256_init(&c);
	static const char tag[] = "domprof guest kallsyms span 2";
	sha256_update(&c, tag, sizeof(tag));
	uint64_t hdr[8] = { src->hi - src->lo, src->num_syms, src->markers, src->mwidth, src->ti, src->addrs,
			    src->relbase, src->nsyms };
	sha256_update(&c, hdr, sizeof(hdr));
	size_t o;
	if (src->mwidth & GUEST_KSYMS_SRC_PREL) {
		/* offsets relative to their own place: the same at any
		 * KASLR offset, hashed as they are */
		o = 0;
	} else if (src->relbase) {
		size_t rb = (size_t)(text + src->relbase - lo);
		sha256_update(&c, buf, rb);
		/* not hashed: every address decodes as relative_base plus an
		 * offset and is then moved by this boot's _text minus the
		 * decoded _text, so relative_base cancels out of the table
		 * (the decode still validates it) */
		static const uint8_t zero[8];
		sha256_update(&c, zero, 8);
		o = rb + 8;
	} else {
		size_t a = (size_t)(text + src->addrs - lo);
		sha256_update(&c, buf, a);
		for (uint64_t i = 0; i < src->nsyms; i++) {
			uint8_t v[8];
			uint64_t x = get64(buf + a + 8 * i);
			put64(v, x >= GUEST_KIMAGE_START ? x - text : x);
			sha256_update(&c, v, 8);
		}
		o = a + 8 * src->nsyms;
	}
	sha256_update(&c, buf + o, len - o);
	sha256_final(&c, out);
}

static bool in_span(const struct guest_ksyms_src *s, uint64_t off, uint64_t len)
{
	return off >= s->lo && off <= s->hi && len <= s->hi - off;
}

/* Is src a span this module makes: bounded, every table inside? */
static bool span_ok(const struct guest_ksyms_src *s)
{
	uint64_t mw = s->mwidth & ~(uint64_t)GUEST_KSYMS_SRC_PREL;
	bool prel = s->mwidth & GUEST_KSYMS_SRC_PREL;
	if (s->hi <= s->lo || s->hi - s->lo > GUEST_KSYMS_MAX_SPAN || s->lo >= GUEST_KIMAGE_END - GUEST_KIMAGE_START ||
	    s->nsyms == 0 || s->nsyms > GUEST_KSYMS_MAX_SYMS || (mw != 4 && mw != 8))
		return false;
	uint64_t nm = (s->nsyms + 255) / 256;
	if (!in_span(s, s->num_syms, 8) || !in_span(s, s->markers, nm * mw) || !in_span(s, s->ti, 512) ||
	    s->markers <= s->num_syms + 8 || s->ti <= s->markers)
		return false;
	if (prel)
		return s->relbase == 0 && in_span(s, s->addrs, 4 * s->nsyms);
	if (s->relbase)
		return in_span(s, s->relbase, 8) && in_span(s, s->addrs, 4 * s->nsyms);
	return in_span(s, s->addrs, 8 * s->nsyms);
}

/* Fills out->src from the tables found (all inside the window). */
/* decode, and on success the layout found and where the tables are. */
static int decode_named(const struct win *w, const struct tables *t, const struct guest_kimage *img,
			struct guest_ksyms *out, char *why, size_t whylen)
{
	int r = decode(w, t, img, out, why, whylen);
	if (r == 0) {
		snprintf(out->layout, sizeof(out->layout), "%s%s, %s first%s, markers u%u%s",
			 t->prel ? "place-relative" : t->relbase ? "base-relative" : "absolute",
			 t->abs_percpu ? " abs-percpu" : "",
			 t->offsets_first ? (t->relbase ? "offsets" : "addresses") : "names",
			 t->nsw == 4 ? ", num_syms u32" : "",
			 t->mwidth * 8, t->seqs_size ? ", seqs" : "");
		out->tables_at = t->offsets_first ? t->addrs : t->num_syms_at;
		out->tokens_at = t->tt;
	}
	return r;
}

static void span_make(const struct win *w, const struct tables *t, const struct guest_kimage *img,
		      struct guest_ksyms *out)
{
	struct guest_ksyms_src *s = &out->src;
	uint64_t alen = t->relbase || t->prel ? 4 * t->nsyms : 8 * t->nsyms;
	uint64_t rb = t->relbase && !t->prel ? t->addrs + align8(alen) : 0;   /* where addrs_find took it */
	uint64_t lo = t->addrs < t->num_syms_at ? t->addrs : t->num_syms_at;
	uint64_t hi = t->ti + 512;
	if (t->addrs + alen > hi)
		hi = t->addrs + alen;
	if (rb && rb + 8 > hi)
		hi = rb + 8;
	memset(s, 0, sizeof(*s));
	if (lo < img->text || lo < w->lo || hi > w->lo + w->len)
		return;   /* not a span of this image: nothing cached */
	uint64_t x = img->text;
	*s = (struct guest_ksyms_src){ .lo = lo - x, .hi = hi - x, .num_syms = t->num_syms_at - x,
				       .markers = t->markers - x,
				       .mwidth = t->mwidth | (t->prel ? GUEST_KSYMS_SRC_PREL : 0), .ti = t->ti - x,
				       .addrs = t->addrs - x, .relbase = rb ? rb - x : 0, .nsyms = t->nsyms };
	if (!span_ok(s)) {
		memset(s, 0, sizeof(*s));
		return;
	}
	span_digest(at(w, lo), lo, (size_t)(hi - lo), img->text, s, s->digest);
}

int guest_ksyms_reuse(struct guest_mem *m, const struct guest_kimage *img,
		      const struct guest_ksyms_src *src, struct guest_ksyms *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	if (!span_ok(src))
		return ksyms_fail(why, whylen, -EINVAL, "not a kallsyms span");
	uint64_t x = img->text;
	struct win w = { .lo = x + src->lo, .len = (size_t)(src->hi - src->lo) };
	w.cap = w.len;
	w.buf = xmalloc(w.len);
	int r = guest_mem_read(m, w.lo, w.buf, w.len);
	if (r < 0) {
		free(w.buf);
		return ksyms_fail(why, whylen, r, "cannot read the guest's kallsyms tables (%zu bytes at 0x%llx)", w.len,
			          (unsigned long long)w.lo);
	}
	uint8_t d[SHA256_LEN];
	span_digest(w.buf, w.lo, w.len, x, src, d);
	if (memcmp(d, src->digest, SHA256_LEN)) {
		free(w.buf);
		return ksyms_fail(why, whylen, -ESTALE, "the guest's kallsyms tables (%zu bytes at _text+0x%llx) are not "
			          "the ones the entry was made from", w.len, (unsigned long long)src->lo);
	}
	/* the tables at their places, validated as the search validates
	 * its candidates */
	struct tables t;
	memset(&t, 0, sizeof(t));
	t.markers = x + src->markers;
	t.mwidth = (unsigned)(src->mwidth & ~(uint64_t)GUEST_KSYMS_SRC_PREL);
	t.prel = src->mwidth & GUEST_KSYMS_SRC_PREL;
	t.nmarkers = (src->nsyms + 255) / 256;
	t.num_syms_at = x + src->num_syms;
	/* a u64 num_syms has its high half zero; a u32 one (7.2+) is
	 * followed by the first name's non-zero length */
	t.nsw = get32(at(&w, t.num_syms_at + 4)) == 0 ? 8 : 4;
	t.names = t.num_syms_at + t.nsw;
	t.addrs = x + src->addrs;
	t.relbase = src->relbase ? get64(at(&w, x + src->relbase)) : 0;
	t.offsets_first = src->addrs < src->num_syms;
	bool ok = tokens_at(&w, x + src->ti, &t) && t.tt > t.markers &&
		  get32(at(&w, t.num_syms_at)) == src->nsyms && names_walk(&w, &t, src->nsyms) &&
		  (!t.relbase || guest_kptr(t.relbase)) && addrs_sorted(&w, &t);
	if (!ok) {
		free(w.buf);
		return ksyms_fail(why, whylen, -EBADMSG, "the guest's kallsyms tables where the entry says do not decode");
	}
	uint64_t mend = align8(t.markers + t.nmarkers * t.mwidth);
	t.seqs_size = t.tt > mend ? t.tt - mend : 0;
	r = decode_named(&w, &t, img, out, why, whylen);
	if (r == 0)
		out->src = *src;
	free(w.buf);
	return r;
}

/* Does the packet look like kallsyms_offsets: at least 80% of the steps
 * between consecutive u32 go one way, by less than 1 MiB (descending for
 * absolute per-cpu offsets, ascending otherwise)? */
static bool offsets_like(const uint8_t *p, size_t n)
{
	size_t up = 0, down = 0, steps = n / 4 - 1;
	for (size_t i = 0; i + 8 <= n; i += 4) {
		int64_t d = (int64_t)(int32_t)get32(p + i + 4) - (int32_t)get32(p + i);
		up += d > 0 && d < (1 << 20);
		down += d < 0 && d > -(1 << 20);
	}
	return (up > down ? up : down) * 5 >= steps * 4;
}

/* Does it look like kallsyms_names: from one of its first 64 bytes, a
 * chain of entries with lengths 1..100 covers the packet, at least one
 * entry per 20 bytes (strings, zeros and pointers break the chain)? */
static bool names_like(const uint8_t *p, size_t n)
{
	for (size_t s = 0; s < 64 && s < n; s++) {
		size_t o = s, k = 0;
		while (o < n && p[o] != 0 && p[o] <= 100) {
			o += 1 + p[o];
			k++;
		}
		if (o >= n && k * 20 >= n)
			return true;
	}
	return false;
}

/* Where to start reading: one packet every 64 KiB from ro until one looks
 * like offsets or names (the first table in every layout is one of them,
 * or num_syms just before the names); the scan starts at the probe before
 * it. ro if none does. (Debian 6.1: 1.4 MiB of rodata skipped, 6.12:
 * 1.6 MiB; no probe before the tables looks like either.) */
static uint64_t scan_start(struct guest_mem *m, uint64_t ro)
{
	uint8_t pkt[GUEST_MEM_CHUNK];
	for (uint64_t p = ro + PROBE_STEP; p - ro < GUEST_KSYMS_MAX_SCAN; p += PROBE_STEP) {
		if (guest_mem_read(m, p, pkt, sizeof(pkt)) < 0)
			break;
		if (offsets_like(pkt, sizeof(pkt)) || names_like(pkt, sizeof(pkt)))
			return p - PROBE_STEP;
	}
	return ro;
}

/* Reads forward from lo until the token index, then finds and decodes the
 * other tables in what was read. */
static int ksyms_from(struct guest_mem *m, const struct guest_kimage *img, uint64_t lo,
		      struct guest_ksyms *out, char *why, size_t whylen)
{
	int r;
	struct win w = { .lo = lo };
	struct tables t;
	memset(&t, 0, sizeof(t));
	bool found = false;
	/* Scan forward in 64 KiB steps for the token index. */
	while (!found && !w.eof && w.len < GUEST_KSYMS_MAX_SCAN) {
		size_t old = w.len;
		r = ksyms_win_grow(m, &w, 64u << 10);
		if (r < 0) {
			free(w.buf);
			return ksyms_fail(why, whylen, r, "scanning the kernel's read-only data: over the read budget");
		}
		if (w.len == old)
			break;
		/* Candidates whose 512 bytes are all in the window now. */
		uint64_t from = old > 512 ? w.lo + old - 512 : w.lo;
		for (uint64_t ti = (from + 3) & ~3ull; ti + 512 <= w.lo + w.len; ti += 4) {
			const uint8_t *q = at(&w, ti);
			if (get16(q) != 0 || get16(q + 2) < 2 || get16(q + 2) > 4096)
				continue;
			if (tokens_at(&w, ti, &t)) {
				found = true;
				break;
			}
		}
	}
	if (!found) {
		free(w.buf);
		return ksyms_fail(why, whylen, -ENOENT, "no kallsyms token table in %zu bytes of read-only data "
			          "from 0x%llx", w.len, (unsigned long long)lo);
	}
	if (!markers_find(&w, &t)) {
		free(w.buf);
		if (t.work > WORK_MAX)
			return ksyms_fail(why, whylen, -E2BIG, "kallsyms token table at 0x%llx: the search for "
				          "the tables before it passed its bound of %llu steps",
				          (unsigned long long)t.tt, WORK_MAX);
		return ksyms_fail(why, whylen, -EBADMSG, "kallsyms token table at 0x%llx, but no "
			          "num_syms/names/markers before it that decode", (unsigned long long)t.tt);
	}
	if (!addrs_find(m, &w, &t)) {
		free(w.buf);
		return ksyms_fail(why, whylen, -EBADMSG, "kallsyms: %llu names at 0x%llx, but no sorted "
			          "offsets or addresses next to them", (unsigned long long)t.nsyms,
			          (unsigned long long)t.names);
	}
	r = decode_named(&w, &t, img, out, why, whylen);
	if (r == 0)
		span_make(&w, &t, img, out);
	free(w.buf);
	return r;
}

int guest_ksyms_read(struct guest_mem *m, const struct guest_kimage *img,
		     struct guest_ksyms *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	uint64_t ro;
	int r = ksyms_rodata_find(m, img, &ro, out->version, sizeof(out->version), why, whylen);
	if (r < 0)
		return r;
	out->rodata = ro;
	/* From where the probes say the tables start; if they do not decode
	 * from there (a probe misled), from the start of rodata. */
	uint64_t lo = scan_start(m, ro);
	if (lo > ro) {
		r = ksyms_from(m, img, lo, out, why, whylen);
		if (r == 0 || r == -E2BIG)
			return r;
	}
	return ksyms_from(m, img, ro, out, why, whylen);
}

void guest_ksyms_free(struct guest_ksyms *k)
{
	if (!k)
		return;
	free(k->text);
	k->text = NULL;
	k->len = k->nsyms = 0;
}
