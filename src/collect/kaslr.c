// SPDX-License-Identifier: MIT
/*
 * KASLR offset discovery for passive domains: read the link-time layout
 * from a symbol table or vmlinux, then probe guest memory at each 2 MiB
 * candidate (see kaslr.h for why this works).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "collect/kaslr.h"
#include "symbols/kallsyms.h"
#include "symbols/vmlinux.h"

static bool is_kernel_image_addr(uint64_t a)
{
	return a >= KASLR_MAP_START && a < KASLR_MAP_END;
}

int kaslr_image_from_symtext(const char *text, size_t len, struct kaslr_image *img)
{
	const char *p = text, *e = text + len;
	bool have_text = false, have_end = false;
	uint64_t maxaddr = 0;
	struct kallsyms_line l;
	int r;

	memset(img, 0, sizeof(*img));
	while ((r = kallsyms_next(&p, e, 0, &l)) != KALLSYMS_END) {
		if (r != KALLSYMS_LINE || l.mod)
			continue;   /* malformed, or "[module]": not the core kernel */
		uint64_t a = l.addr;
		img->nsyms++;
		if (kallsyms_name_is(&l, "_text")) {
			img->text = a;
			have_text = true;
		} else if (kallsyms_name_is(&l, "_etext")) {
			img->etext = a;
		} else if (kallsyms_name_is(&l, "_end")) {
			img->end = a;
			have_end = true;
		}
		if (is_kernel_image_addr(a) && l.type != 'a' && l.type != 'A' && a > maxaddr)
			maxaddr = a;
	}
	if (!img->nsyms)
		return -EINVAL;
	if (!have_text)
		return -ENOENT;
	if (!have_end)
		img->end = maxaddr > img->text ? maxaddr + 1 : img->text + 1;
	return 0;
}

/* The ELF reading is in src/symbols/vmlinux.c (only src/symbols/ uses libelf). */
int kaslr_image_from_vmlinux(const char *path, struct kaslr_image *img)
{
	struct vmlinux_text vt;

	memset(img, 0, sizeof(*img));
	int ret = elf_text_bytes(path, &vt, img->bytes, KASLR_MAX_BYTES);
	img->text = vt.text;
	img->etext = vt.etext;
	img->end = vt.end;
	img->nsyms = vt.nsyms;
	img->nbytes = vt.nbytes;
	if (ret < 0)
		return ret;
	if (!img->end)
		img->end = img->etext ? img->etext : img->text + 1;
	return 0;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * Do the guest's bytes g equal the file's bytes f once relocated by off?
 * The running kernel has applied its KASLR relocations, so absolute
 * addresses in the code (e.g. `mov $_text, %rdx` near startup_64) differ
 * from the file by exactly +-off as 32- or 64-bit fields. Every mismatch
 * must be explained by such a field, and most bytes must match as they
 * are, so a wrong candidate cannot pass by chance.
 */
static bool bytes_match(const uint8_t *g, const uint8_t *f, size_t n, uint64_t off)
{
	size_t i = 0, same = 0;

	while (i < n) {
		if (g[i] == f[i]) {
			i++;
			same++;
			continue;
		}
		bool ok = false;
		for (unsigned w = 8; w >= 4 && !ok; w -= 4) {
			for (size_t j = i >= w - 1 ? i - (w - 1) : 0; j <= i && j + w <= n; j++) {
				uint64_t d = le(g + j, w) - le(f + j, w);
				uint64_t mask = w == 8 ? ~0ull : 0xffffffffull;
				if ((d & mask) == (off & mask) || (d & mask) == (-off & mask)) {
					i = j + w;
					ok = true;
					break;
				}
			}
		}
		if (!ok)
			return false;
	}
	return same * 2 >= n;
}

static bool readable(kaslr_read_fn rd, void *ctx, uint64_t a)
{
	uint8_t b;
	return rd(ctx, a, &b, 1) == 0;
}

int kaslr_find(const struct kaslr_image *img, kaslr_read_fn rd, void *ctx,
	       const uint64_t *krips, size_t nrips,
	       uint64_t *offset, char *how, size_t howlen)
{
	uint8_t buf[KASLR_MAX_BYTES];
	bool found = false;
	uint64_t off = 0;

	if (!is_kernel_image_addr(img->text))
		return -ENOENT;
	for (off = 0; off < KASLR_MAX && img->text + off < KASLR_MAP_END; off += KASLR_ALIGN) {
		uint64_t a = img->text + off;
		if (img->nbytes) {
			if (rd(ctx, a, buf, img->nbytes) == 0 && bytes_match(buf, img->bytes, img->nbytes, off)) {
				found = true;
				snprintf(how, howlen, "kernel bytes at _text");
				break;
			}
			continue;
		}
		if (!readable(rd, ctx, a))
			continue;
		/* Below the runtime _text nothing is mapped after boot; if it
		 * is, the guest is still booting (or the layout is not what we
		 * know) and the first readable page proves nothing. */
		if (readable(rd, ctx, a - 1))
			return -ENOENT;
		/* The whole text must be there too. */
		if (img->etext > img->text && !readable(rd, ctx, img->etext - 1 + off))
			continue;
		found = true;
		snprintf(how, howlen, "first mapped page of the kernel image");
		break;
	}
	if (!found)
		return -ENOENT;
	/* A kernel rip in the image area must be inside the moved image;
	 * rips in the module area (or elsewhere) say nothing. */
	uint64_t lo = img->text + off, hi = (img->end > img->text ? img->end : img->text + 1) + off;
	for (size_t i = 0; i < nrips; i++)
		if (is_kernel_image_addr(krips[i]) && (krips[i] < lo || krips[i] >= hi))
			return -EPROTO;
	if (nrips) {
		size_t l = strlen(how);
		if (l + 1 < howlen)
			snprintf(how + l, howlen - l, ", checked against %zu vCPU rip%s", nrips,
				 nrips == 1 ? "" : "s");
	}
	*offset = off;
	return 0;
}
