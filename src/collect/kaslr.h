/* SPDX-License-Identifier: MIT */
/*
 * Finding a guest kernel's KASLR offset from outside the guest.
 *
 * The offset is runtime(_text) - link(_text). x86_64 KASLR moves the
 * kernel's virtual base by a multiple of 2 MiB (CONFIG_PHYSICAL_ALIGN is at
 * least that) within the 1 GiB kernel image area starting at
 * 0xffffffff80000000. After boot the kernel unmaps everything in that area
 * below _text (cleanup_highmap), so the first mapped 2 MiB step at or after
 * link(_text) is the runtime _text. With a vmlinux we also know the bytes
 * at _text and require them to match. Kernel-mode rips of the vCPUs, when
 * available, must then fall inside the moved image. See docs/passive.md.
 *
 * Guest memory is read through a callback (the gdbstub `m` packet), so
 * this module is testable without a VM.
 */
#ifndef DOMPROF_COLLECT_KASLR_H
#define DOMPROF_COLLECT_KASLR_H

#include <stddef.h>
#include <stdint.h>

#define KASLR_ALIGN      (2ull << 20)
#define KASLR_MAX        (1ull << 30)
#define KASLR_MAP_START  0xffffffff80000000ull
#define KASLR_MAP_END    0xffffffffc0000000ull   /* modules start here */
#define KASLR_MAX_BYTES  64u

/* What we know of the kernel image at link time (unrelocated). */
struct kaslr_image {
	uint64_t text;          /* _text (required) */
	uint64_t etext;         /* _etext, or 0 if unknown */
	uint64_t end;           /* _end, or the highest kernel symbol */
	size_t nsyms;           /* symbols seen in the table */
	uint8_t bytes[KASLR_MAX_BYTES];  /* file bytes at _text (vmlinux only) */
	size_t nbytes;
};

/* From /proc/kallsyms or System.map text ("ADDR TYPE NAME [module]"
 * lines; module symbols ignored). Returns 0, or -ENOENT if _text is
 * missing, -EINVAL if no line parses. */
int kaslr_image_from_symtext(const char *text, size_t len, struct kaslr_image *img);

/* From a vmlinux ELF file: _text/_etext/_end from .symtab and the bytes at
 * _text from its section. Returns 0 or a negative errno (-ENOENT: no
 * _text symbol; -ENOEXEC: not an ELF file). */
int kaslr_image_from_vmlinux(const char *path, struct kaslr_image *img);

/* Read len bytes of guest virtual memory at addr into buf. Returns 0, or a
 * negative value if the address is not mapped (or on any error). */
typedef int (*kaslr_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * Find the offset. krips: kernel-mode rips sampled from the vCPUs (may be
 * empty), used as a cross-check. On success *offset is set and how (a
 * short phrase for the info line, e.g. "kernel bytes at _text") is
 * filled. Returns 0, -ENOENT if no candidate fits, -EPROTO if a candidate
 * contradicts the rips.
 */
int kaslr_find(const struct kaslr_image *img, kaslr_read_fn rd, void *ctx,
	       const uint64_t *krips, size_t nrips,
	       uint64_t *offset, char *how, size_t howlen);

#endif
