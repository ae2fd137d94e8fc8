// SPDX-License-Identifier: MIT
/*
 * Opening an ELF file for the symbol loaders (elf.c: symbols and build-id;
 * fde.c: unwind tables): from a buffer already in memory (an embedded
 * SYMTAB blob) or from a path, which must name a regular file (a mapped
 * path or debug file may name a FIFO or device). See internal.h.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "util/file.h"

int elf_with(const char *path, const void *buf, size_t len, int (*fn)(void *elf, void *ctx), void *ctx)
{
	elf_version(EV_CURRENT);
	int fd = -1;
	Elf *e;
	if (buf) {
		if (len < sizeof(Elf32_Ehdr))
			return -EINVAL;
		/* ELF_C_READ_MMAP semantics: libelf only reads the buffer */
		e = elf_memory((char *)buf, len);
	} else {
		/* a mapped path or debug file may name a FIFO or device */
		fd = file_open_regular(path, NULL);
		if (fd < 0)
			return fd;
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	int ret = -EINVAL;
	if (e) {
		ret = fn(e, ctx);
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	return ret;
}
