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

Elf *elf_open(const char *path, const void *buf, size_t len, int *fd, int *err)
{
	elf_version(EV_CURRENT);
	*fd = -1;
	*err = -EINVAL;
	if (buf) {
		if (len < sizeof(Elf32_Ehdr))
			return NULL;
		/* ELF_C_READ_MMAP semantics: libelf only reads the buffer */
		return elf_memory((char *)buf, len);
	}
	/* a mapped path or debug file may name a FIFO or device */
	*fd = file_open_regular(path, NULL);
	if (*fd < 0) {
		*err = *fd;
		*fd = -1;
		return NULL;
	}
	Elf *e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(*fd);
		*fd = -1;
	}
	return e;
}

int elf_with(const char *path, const void *buf, size_t len, int (*fn)(void *elf, void *ctx), void *ctx)
{
	int fd, ret;
	Elf *e = elf_open(path, buf, len, &fd, &ret);
	if (!e)
		return ret;
	ret = fn(e, ctx);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}
