/* SPDX-License-Identifier: MIT */
/*
 * What KASLR detection (src/collect/kaslr.c) needs from a vmlinux file:
 * the link-time addresses of _text, _etext and _end, and the file's
 * bytes at _text. Here because only src/symbols/ reads ELF (libelf).
 */
#ifndef DOMPROF_SYMBOLS_VMLINUX_H
#define DOMPROF_SYMBOLS_VMLINUX_H

#include <stddef.h>
#include <stdint.h>

struct vmlinux_text {
	uint64_t text;      /* _text (valid when the call returns 0) */
	uint64_t etext;     /* _etext, or 0 if the table has none */
	uint64_t end;       /* _end, or 0 if the table has none */
	size_t nsyms;       /* named symbols seen in .symtab */
	size_t nbytes;      /* bytes stored in the caller's buffer */
};

/*
 * Read the ELF file at path (a regular file: no FIFO): the symbols above
 * from its .symtab and up to max bytes of the allocated PROGBITS section
 * holding _text, from _text on, into bytes[]. *out is always filled
 * (zeros where nothing was found). Returns 0, -ENOENT when there is no
 * _text symbol, -ENOEXEC when it is not an ELF file, or a negative errno
 * from opening it.
 */
int elf_text_bytes(const char *path, struct vmlinux_text *out, uint8_t *bytes, size_t max);

/*
 * The named symbols of the ELF file at path's SHT_SYMTAB sections as
 * kallsyms text ("%016llx t NAME\n" per symbol, link-time addresses), at
 * most max bytes of it (symbols past that are left out), in *text
 * (malloc'd, NUL-terminated; *len without the NUL). Returns 0, -ENOEXEC
 * (not an ELF file), -ENOENT (no named symbol) or a negative errno from
 * opening it.
 */
int elf_symtab_text(const char *path, size_t max, char **text, size_t *len);

#endif
