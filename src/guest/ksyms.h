/* SPDX-License-Identifier: MIT */
/*
 * A guest kernel's own symbol table, found and decoded in guest memory.
 *
 * A passive domain needs nothing from inside the guest: the kernel image
 * is found from outside (the first mapped 2 MiB step of the kernel image
 * area, which must hold the vCPUs' kernel-mode rips), and the kernel's
 * compressed kallsyms tables (kallsyms_num_syms, _names, _markers,
 * _token_table, _token_index, _offsets + _relative_base or _addresses)
 * are located by their structure in the image's read-only data, then
 * decoded and validated (_text, _stext, startup_64 consistent, names
 * printable, addresses sorted where the layout says so).
 *
 * All of it is hostile input: every count, length and offset is bounded
 * against the region read before use; a table that does not validate is
 * refused with a one-line cause, never half-used.
 */
#ifndef DOMPROF_GUEST_KSYMS_H
#define DOMPROF_GUEST_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "guest/mem.h"

/* x86_64's kernel image area and KASLR step. */
#define GUEST_KIMAGE_START 0xffffffff80000000ull
#define GUEST_KIMAGE_END   0xffffffffc0000000ull   /* modules start here */
#define GUEST_KIMAGE_ALIGN (2ull << 20)
/* The unrelocated _text of x86_64 kernels (CONFIG_PHYSICAL_START 16 MiB). */
#define GUEST_LINK_TEXT    0xffffffff81000000ull
/* Bounds on what a decoded table may hold. */
#define GUEST_KSYMS_MAX_SYMS  (4u << 20)   /* symbols (6.1: ~140,000 with KALLSYMS_ALL) */
#define GUEST_KSYMS_MAX_TEXT  (256u << 20) /* bytes of the kallsyms text made */
/* Bytes of read-only data scanned for the tables or the build-id note
 * (6.12's .rodata .. .notes is ~7 MiB). */
#define GUEST_KSYMS_MAX_SCAN  (32u << 20)

/* Where the kernel image is at run time. */
struct guest_kimage {
	uint64_t text;          /* runtime _text (2 MiB aligned) */
	uint64_t end;           /* end of the mapped image found (exclusive) */
};

/* Finds the image: krips are kernel-mode rips read from the vCPUs (may be
 * empty; when given, all that fall in the kernel image area must fall in
 * [text, end): rips in modules or BPF programs are not checked). Probes
 * one 8-byte read a 2 MiB step: at most 512 reads. Returns 0, -ENOENT
 * (nothing mapped in the kernel image area: not Linux, or still in
 * firmware), -EPROTO (the rips are outside what was found). *why gets a
 * one-line cause on failure. */
int guest_kimage_find(struct guest_mem *m, const uint64_t *krips, size_t nrips,
		      struct guest_kimage *img, char *why, size_t whylen);

/* The kernel's identity, for the host-side cache: the GNU build-id note of
 * the image (in .notes, found by a bounded scan: one packet every 64 KiB
 * of rodata until .BTF, then the 76 KiB before it; ~0.4 MB on Debian's
 * kernels; the vDSO images' own notes are skipped), as lowercase hex into
 * hex[41]. Returns 0 or -ENOENT (no note found; *why says so), -E2BIG
 * (read budget). */
int guest_kernel_buildid(struct guest_mem *m, const struct guest_kimage *img,
			 char hex[41], char *why, size_t whylen);

/* The kernel's version word from its banner at banner (linux_banner:
 * "Linux version 7.2.13+deb14-amd64 (...)"), for the lines that say on
 * which kernel a table failed to decode. Reads 96 bytes; the word is
 * printable ASCII, at most vlen - 1 bytes. Returns 0, or -ENOENT (no
 * banner there; v is then ""). */
int guest_kernel_version(struct guest_mem *m, uint64_t banner, char *v, size_t vlen);

/* Where the decoded tables are and a digest of their bytes, for the host
 * cache (guest/cache.h). Offsets are from _text. The span [lo, hi) holds
 * every table (num_syms, names, markers, seqs, token table and index,
 * offsets and relative_base or addresses); the digest is SHA-256 over it
 * with the values KASLR relocates made boot-independent: relative_base
 * left out (it cancels out of the decoded table), each absolute address
 * at or above the image area taken minus _text. The decoded table is a
 * function of the digested bytes and this boot's _text alone. */
struct guest_ksyms_src {
	uint64_t lo, hi;        /* the span */
	uint64_t num_syms;      /* kallsyms_num_syms (names follow it) */
	uint64_t markers;       /* kallsyms_markers */
	uint64_t mwidth;        /* its entries' bytes: 4 or 8, plus
				 * GUEST_KSYMS_SRC_PREL when the offsets are
				 * relative to their own place (7.2+) */
	uint64_t ti;            /* kallsyms_token_index (the token table ends at it) */
	uint64_t addrs;         /* kallsyms_offsets or kallsyms_addresses */
	uint64_t relbase;       /* kallsyms_relative_base; 0: absolute addresses */
	uint64_t nsyms;
	uint8_t digest[32];
};
#define GUEST_KSYMS_SRC_PREL 0x100u
/* The span's largest size accepted (the tables of 6.1: ~1.9 MB). */
#define GUEST_KSYMS_MAX_SPAN (2 * GUEST_KSYMS_MAX_SCAN)

struct guest_ksyms {
	char *text;             /* /proc/kallsyms-style text, one
				 * "%016lx T name\n" line per symbol, runtime
				 * addresses; malloc'd, caller frees */
	size_t len;
	size_t nsyms;
	uint64_t text_addr;     /* runtime _text as decoded */
	uint64_t kaslr_offset;  /* text_addr - GUEST_LINK_TEXT */
	char layout[96];        /* which table layout decoded, for info/docs:
				 * "base-relative abs-percpu, offsets first,
				 * markers u32, seqs" ... */
	uint64_t tables_at;     /* guest address of the first table (in
				 * memory order: offsets or num_syms) */
	uint64_t tokens_at;     /* kallsyms_token_table (the tests corrupt it) */
	uint64_t rodata;        /* where the read-only data starts (the
				 * 2 MiB step holding the banner) */
	uint64_t delta;         /* added to the tables' addresses: 0 for a
				 * live guest (its tables are relocated);
				 * the shift of an unrelocated image */
	char version[64];       /* the banner's version word, "6.1.0-57-amd64" */
	struct guest_ksyms_src src;   /* where the tables were, their digest */
};

/* Finds and decodes the tables in img (reads 2-3 MB of guest memory on
 * Debian's 6.1 and 6.12, at most GUEST_KSYMS_MAX_SCAN twice). Returns 0 and fills *out, or a
 * negative errno with *why a one-line cause (-ENOENT: tables not found;
 * -EBADMSG: found but did not validate; -E2BIG: over a bound). */
int guest_ksyms_read(struct guest_mem *m, const struct guest_kimage *img,
		     struct guest_ksyms *out, char *why, size_t whylen);

void guest_ksyms_free(struct guest_ksyms *k);

/* Decodes the guest's own tables where src says they are, with no
 * search: reads the span (hi - lo bytes at img->text + lo, nothing
 * else), compares its digest with src's, then decodes and validates the
 * tables at src's places exactly as guest_ksyms_read does. The text
 * comes from this guest's memory alone; src only says where to look.
 * Returns 0 (*out filled, out->src = *src), -ESTALE (the span's bytes
 * are not the ones src was made from: the caller searches afresh),
 * -EINVAL (src is not a span this module makes), -EBADMSG (the tables
 * there do not validate), or the read's errno; *why one line. */
int guest_ksyms_reuse(struct guest_mem *m, const struct guest_kimage *img,
		      const struct guest_ksyms_src *src, struct guest_ksyms *out, char *why, size_t whylen);

#endif
