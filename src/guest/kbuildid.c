// SPDX-License-Identifier: MIT
/*
 * What the guest kernel says it is, read from its own memory (ksyms.h):
 * its build-id (guest_kernel_buildid: its GNU build-id note, found after
 * the read-only data's start by the shape of the note) and its version
 * (guest_kernel_version: the banner's version word).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/ksyms.h"
#include "guest/ksyms_internal.h"
#include "util/le.h"

#define VDSO_SPAN 8192u   /* a vDSO image's notes are in its first 8 KiB */

/* The kernel's own build-id note, not one of the vDSO images embedded in
 * rodata (vdso64, vdso32, vdsox32, each an ELF file with its own build
 * id, its note ~1.5 KiB after its ELF header): no ELF magic in the 8 KiB
 * before the note. (In vmlinux's .notes the nearest one is ~700 KiB
 * before.) */
static bool kernel_note(const struct win *w, size_t o)
{
	size_t from = o > VDSO_SPAN ? o - VDSO_SPAN : 0;
	return !memmem(w->buf + from, o - from, "\x7f" "ELF", 4);
}

/* Scans [lo, lo + max) (up to the end of the mapping) for the kernel's
 * build-id note. 0 and hex, -ENOENT, or -E2BIG (read budget). */
static int note_scan(struct guest_mem *m, uint64_t lo, uint64_t max, char hex[41])
{
	static const uint8_t pat[16] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0 };
	struct win w = { .lo = lo };
	size_t from = 0;
	uint64_t scanned = 0;
	int r = 0;
	while (!w.eof && scanned < max) {
		size_t old = w.len, step = 64u << 10;
		if (step > max - scanned)
			step = (size_t)(max - scanned);
		if ((r = ksyms_win_grow(m, &w, step)) < 0 || (w.len == old && !w.eof))
			break;
		scanned += w.len - old;
		for (size_t o = (from + 3) & ~(size_t)3; o + 36 <= w.len; o += 4) {
			if (memcmp(w.buf + o, pat, sizeof(pat)) || !kernel_note(&w, o))
				continue;
			for (int k = 0; k < 20; k++)
				snprintf(hex + 2 * k, 3, "%02x", w.buf[o + 16 + k]);
			free(w.buf);
			return 0;
		}
		from = w.len > 100 ? w.len - 100 : 0;
		/* Keep only the tail (what kernel_note looks back at). */
		if (w.len > (1u << 20)) {
			size_t cut = from - VDSO_SPAN, keep = w.len - cut;
			memmove(w.buf, w.buf + cut, keep);
			w.lo += cut;
			w.len = keep;
			from = VDSO_SPAN;
		}
	}
	free(w.buf);
	return r == -E2BIG ? r : -ENOENT;
}

/* Does the packet at p look like BTF type data? Counts btf_type info
 * words (kind 1..19 in bits 24-28, vlen < 1024, bits 16-23 clear): 3-25%
 * of the words inside .BTF of both Debian kernels, none in any 64 KiB
 * probe of the rodata before it. */
static bool btf_like(const uint8_t *p, size_t n)
{
	size_t hits = 0;
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t v = get32(p + i);
		hits += v >= 0x01000000 && v < 0x14000000 && (v & 0xffff) < 0x400 && !(v & 0xff0000);
	}
	return hits >= 10;
}

#define PROBE_TRIES 8u   /* BTF-like probes whose window is searched */

int guest_kernel_buildid(struct guest_mem *m, const struct guest_kimage *img,
			 char hex[41], char *why, size_t whylen)
{
	char ver[64];
	uint64_t ro;
	hex[0] = 0;
	int r = ksyms_rodata_find(m, img, &ro, ver, sizeof(ver), why, whylen);
	if (r < 0)
		return r;
	/* Fast path: .notes sits just before .BTF (in both Debian kernels):
	 * one packet every 64 KiB finds where BTF type data starts, then the
	 * 76 KiB before it are searched. */
	uint8_t pkt[GUEST_MEM_CHUNK];
	size_t n = sizeof(pkt);
	unsigned tries = 0;
	for (uint64_t p = ro + PROBE_STEP; p - ro < GUEST_KSYMS_MAX_SCAN && tries < PROBE_TRIES;
	     p += PROBE_STEP) {
		if ((r = guest_mem_read(m, p, pkt, n)) < 0)
			break;
		if (!btf_like(pkt, n))
			continue;
		tries++;
		uint64_t lo = p - ro > PROBE_STEP + 3 * VDSO_SPAN / 2 ? p - PROBE_STEP - 3 * VDSO_SPAN / 2 : ro;
		if ((r = note_scan(m, lo, p + n - lo, hex)) == 0)
			return 0;
	}
	/* Slow path: everything from the start of rodata. */
	if (r != -E2BIG)
		r = note_scan(m, ro, GUEST_KSYMS_MAX_SCAN, hex);
	if (r == 0)
		return 0;
	if (r == -E2BIG)
		return ksyms_fail(why, whylen, r, "no GNU build-id note within the read budget");
	return ksyms_fail(why, whylen, -ENOENT, "no GNU build-id note in the kernel's read-only data "
		          "(%s, from 0x%llx)", ver, (unsigned long long)ro);
}

int guest_kernel_version(struct guest_mem *m, uint64_t banner, char *v, size_t vlen)
{
	static const char pre[] = "Linux version ";
	char b[96];
	if (vlen)
		v[0] = 0;
	if (!vlen || !guest_kptr(banner) || guest_mem_read(m, banner, b, sizeof(b)) < 0 ||
	    memcmp(b, pre, sizeof(pre) - 1))
		return -ENOENT;
	size_t n = 0, o = sizeof(pre) - 1;
	/* the guest writes this word: printable bytes only, bounded */
	while (o + n < sizeof(b) && n + 1 < vlen && b[o + n] > ' ' && b[o + n] < 0x7f)
		n++;
	memcpy(v, b + o, n);
	v[n] = 0;
	return n ? 0 : -ENOENT;
}
