// SPDX-License-Identifier: MIT
/*
 * The DWARF sections a line lookup reads, decompressed (internal.h:
 * dwsect_image). libdw's dwarf_begin_elf inflates every compressed
 * debug section of a file at open, with zlib, one after the other:
 * libc6-dbg's debug file for libc.so.6 is 3.8 MB of compressed sections,
 * 11.4 MB inflated, 232 M instructions, three quarters of a
 * `report -s srcline` of a one-command recording. Here only the sections
 * the lookups in lines.c read are inflated (not .debug_loclists, macros,
 * frames, name indexes), with libdeflate (whole-buffer, ~2.3x zlib's
 * speed), the larger ones on a second thread, into a new
 * in-memory ELF file of just those sections that libdw opens instead.
 *
 * The file is hostile: section counts and sizes are bounded, a section
 * must lie inside the file, and its inflated size must be exactly what
 * its header says. Anything this does not handle (32-bit or other-endian
 * files, ET_REL, old .zdebug sections, dwz's alternate files, split
 * DWARF) returns "not used", and libdw reads the file itself as before.
 */
#include <elf.h>
#include <gelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"

#define DWS_MAX_SECTIONS 65536
#define DWS_MAX_SECTION (1ull << 30)   /* inflated bytes per section */
#define DWS_MAX_TOTAL (2ull << 30)     /* inflated bytes per file */
#define DWS_THREAD_MIN (1u << 20)      /* a second thread only for this much */
/* deflate inflates at most ~1032:1: a header that claims more is a lie
 * (and would have us allocate it) */
#define DWS_MAX_RATIO 1032

/* What lines.c's lookups read through libdw: CUs and their DIEs, line
 * tables, strings, address ranges. */
static const char *const wanted[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
	".debug_aranges", ".debug_ranges", ".debug_rnglists", ".debug_addr", ".debug_str_offsets",
};
#define NWANT (sizeof(wanted) / sizeof(wanted[0]))

struct dws_sec {
	unsigned want;           /* index into wanted */
	const uint8_t *src;      /* the section's bytes in the file (after a Chdr) */
	size_t srclen;
	uint32_t ctype;          /* 0: stored, else ELFCOMPRESS_ZLIB */
	uint64_t size, align, flags, entsize;
	uint64_t off;            /* in the new image */
	bool ok;
};

struct dwsect {
	struct dws_sec sec[NWANT];
	size_t n;
	uint8_t *img;
	uint64_t len, stroff, shoff;
	GElf_Ehdr eh;
	char names[256];         /* .shstrtab: the sections' names, then its own */
	size_t nlen;
	uint32_t nameoff[NWANT + 1];
};

static bool inflate_one(struct dws_sec *s, uint8_t *dst, struct libdeflate_decompressor **dd)
{
	if (!s->ctype) {
		memcpy(dst, s->src, s->size);
		return true;
	}
	if (s->ctype == ELFCOMPRESS_ZLIB) {
		if (!*dd && !(*dd = libdeflate_alloc_decompressor()))
			return false;
		/* NULL actual size: anything but exactly s->size bytes fails */
		return libdeflate_zlib_decompress(*dd, s->src, s->srclen, dst, s->size, NULL) ==
		       LIBDEFLATE_SUCCESS;
	}
	return false;
}

static bool host_le(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 1;
}

struct dwsect *dwsect_plan(void *elf)
{
	Elf *e = elf;
	size_t rawlen = 0;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(e, &rawlen);
	GElf_Ehdr eh;
	size_t shstrndx, shnum;
	if (!raw || rawlen < sizeof(Elf64_Ehdr) || !gelf_getehdr(e, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != (host_le() ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_type == ET_REL || elf_getshdrstrndx(e, &shstrndx) != 0 || elf_getshdrnum(e, &shnum) != 0 ||
	    shnum > DWS_MAX_SECTIONS)
		return NULL;
	struct dws_sec sec[NWANT];
	size_t n = 0;
	bool compressed = false;
	uint64_t total = 0;
	Elf_Scn *scn = NULL;
	for (size_t i = 0; i < shnum && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return NULL;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm)
			continue;
		/* what this cannot give libdw: old-style compression, another
		 * file's DWARF (dwz), split units */
		if (!strncmp(nm, ".zdebug", 7) || !strcmp(nm, ".gnu_debugaltlink") || !strcmp(nm, ".debug_sup") ||
		    !strncmp(nm, ".debug_cu_index", 15) || strstr(nm, ".dwo"))
			return NULL;
		unsigned w = 0;
		while (w < NWANT && strcmp(nm, wanted[w]))
			w++;
		if (w == NWANT)
			continue;
		for (size_t k = 0; k < n; k++)
			if (sec[k].want == w)
				return NULL;   /* twice: libdw's choice, not ours */
		if (sh.sh_type == SHT_NOBITS || sh.sh_offset > rawlen || sh.sh_size > rawlen - sh.sh_offset)
			return NULL;
		struct dws_sec *s = &sec[n];
		*s = (struct dws_sec){ .want = w, .src = raw + sh.sh_offset, .srclen = sh.sh_size,
				       .size = sh.sh_size, .align = sh.sh_addralign, .entsize = sh.sh_entsize,
				       .flags = sh.sh_flags & ~(uint64_t)SHF_COMPRESSED };
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;
			if (sh.sh_size < sizeof(ch))
				return NULL;
			memcpy(&ch, s->src, sizeof(ch));
			/* zlib only: libdw 0.188 reads no other, and a file it
			 * cannot read keeps its answer (no lines) */
			if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size > DWS_MAX_SECTION ||
			    ch.ch_size / DWS_MAX_RATIO > sh.sh_size)
				return NULL;
			s->ctype = ch.ch_type;
			s->src += sizeof(ch);
			s->srclen -= sizeof(ch);
			s->size = ch.ch_size;
			s->align = ch.ch_addralign;
			compressed = true;
		}
		if (s->size > DWS_MAX_SECTION || (total += s->size) > DWS_MAX_TOTAL)
			return NULL;
		n++;
	}
	if (!compressed)
		return NULL;   /* libdw maps the file as it is: nothing to save */

	/* layout: Ehdr, the sections (8-aligned), .shstrtab, the headers */
	uint64_t off = sizeof(Elf64_Ehdr);
	for (size_t k = 0; k < n; k++) {
		off = (off + 7) & ~7ull;
		sec[k].off = off;
		off += sec[k].size;
	}
	struct dwsect *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	memcpy(d->sec, sec, n * sizeof(*sec));
	d->n = n;
	d->eh = eh;
	d->stroff = off;
	d->nlen = 1;
	for (size_t k = 0; k <= n; k++) {
		const char *nm = k < n ? wanted[sec[k].want] : ".shstrtab";
		size_t l = strlen(nm) + 1;
		d->nameoff[k] = (uint32_t)d->nlen;
		memcpy(d->names + d->nlen, nm, l);
		d->nlen += l;
	}
	d->shoff = (d->stroff + d->nlen + 7) & ~7ull;
	d->len = d->shoff + (n + 2) * sizeof(Elf64_Shdr);
	if (!(d->img = malloc(d->len))) {
		free(d);
		return NULL;
	}
	return d;
}

size_t dwsect_count(const struct dwsect *d) { return d->n; }
uint64_t dwsect_cost(const struct dwsect *d, size_t k) { return d->sec[k].srclen; }

bool dwsect_fill(struct dwsect *d, size_t k, void **inflater)
{
	struct libdeflate_decompressor *dd = *inflater;
	d->sec[k].ok = inflate_one(&d->sec[k], d->img + d->sec[k].off, &dd);
	*inflater = dd;
	return d->sec[k].ok;
}

void dwsect_inflater_free(void *inflater)
{
	if (inflater)
		libdeflate_free_decompressor(inflater);
}

int dwsect_finish(struct dwsect *d, void **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	size_t n = d->n;
	uint8_t *img = d->img;
	for (size_t k = 0; k < n; k++)
		if (!d->sec[k].ok) {
			free(img);
			free(d);
			return -1;
		}
	const size_t nlen = d->nlen;
	const uint32_t *nameoff = d->nameoff;
	Elf64_Ehdr *h = (Elf64_Ehdr *)img;
	memset(h, 0, sizeof(*h));
	memcpy(h->e_ident, d->eh.e_ident, EI_NIDENT);
	h->e_type = d->eh.e_type;
	h->e_machine = d->eh.e_machine;
	h->e_version = EV_CURRENT;
	h->e_flags = d->eh.e_flags;
	h->e_ehsize = sizeof(Elf64_Ehdr);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shoff = d->shoff;
	h->e_shnum = (uint16_t)(n + 2);
	h->e_shstrndx = (uint16_t)(n + 1);
	memcpy(img + d->stroff, d->names, nlen);
	memset(img + d->stroff + nlen, 0, d->shoff - d->stroff - nlen);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + d->shoff);
	memset(sh, 0, (n + 2) * sizeof(*sh));
	for (size_t k = 0; k < n; k++)
		sh[k + 1] = (Elf64_Shdr){ .sh_name = nameoff[k], .sh_type = SHT_PROGBITS, .sh_flags = d->sec[k].flags,
					  .sh_offset = d->sec[k].off, .sh_size = d->sec[k].size,
					  /* offsets are 8-aligned: a larger (hostile) claim is not kept */
					  .sh_addralign = d->sec[k].align && d->sec[k].align <= 8 ? d->sec[k].align : 1,
					  .sh_entsize = d->sec[k].entsize };
	sh[n + 1] = (Elf64_Shdr){ .sh_name = nameoff[n], .sh_type = SHT_STRTAB, .sh_offset = d->stroff,
				  .sh_size = nlen, .sh_addralign = 1 };
	/* gaps between sections: zero, not heap garbage */
	uint64_t at = sizeof(Elf64_Ehdr);
	for (size_t k = 0; k < n; k++) {
		memset(img + at, 0, d->sec[k].off - at);
		at = d->sec[k].off + d->sec[k].size;
	}
	memset(img + at, 0, d->stroff - at);
	*out = img;
	*outlen = d->len;
	free(d);
	return 0;
}

/* the other thread of dwsect_image: the sections of bin 1 */
struct dws_half {
	struct dwsect *d;
	const int *bins;
};

static void *fill_bin1(void *p)
{
	struct dws_half *h = p;
	void *dd = NULL;
	for (size_t k = 0; k < h->d->n; k++)
		if (h->bins[k] == 1)
			dwsect_fill(h->d, k, &dd);
	dwsect_inflater_free(dd);
	return NULL;
}

static int cmp_size_desc(const void *a, const void *b)
{
	const struct dws_sec *x = *(const struct dws_sec *const *)a, *y = *(const struct dws_sec *const *)b;
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

int dwsect_image(void *elf, unsigned threads, void **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	struct dwsect *d = dwsect_plan(elf);
	if (!d)
		return -1;
	/* the largest sections first, each to the less loaded of (at most)
	 * two threads; this one takes bin 0 */
	size_t n = d->n;
	uint64_t total = 0;
	int bins[NWANT];
	struct dws_sec *order[NWANT];
	for (size_t k = 0; k < n; k++) {
		order[k] = &d->sec[k];
		total += d->sec[k].size;
	}
	qsort(order, n, sizeof(*order), cmp_size_desc);
	uint64_t load[2] = { 0, 0 };
	unsigned nb = threads > 1 && total >= DWS_THREAD_MIN ? 2 : 1;
	for (size_t k = 0; k < n; k++) {
		int b = nb > 1 && load[1] < load[0];
		bins[order[k] - d->sec] = b;
		load[b] += order[k]->size;
	}
	struct dws_half h = { d, bins };
	pthread_t th;
	bool started = nb > 1 && pthread_create(&th, NULL, fill_bin1, &h) == 0;
	void *dd = NULL;
	for (size_t k = 0; k < n; k++)
		if (bins[k] == 0 || !started)
			dwsect_fill(d, k, &dd);
	dwsect_inflater_free(dd);
	if (started)
		pthread_join(th, NULL);
	return dwsect_finish(d, out, outlen);
}
