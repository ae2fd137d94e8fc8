// SPDX-License-Identifier: MIT
/*
 * This process's vDSO, copied (see vdso.h). The kernel maps the vDSO
 * image whole, page-aligned, at AT_SYSINFO_EHDR; its first page holds the
 * ELF and program headers. The size is taken from those headers (nothing
 * else in the image is read before the copy), so no /proc is needed, and
 * every offset is checked for overflow and bounded before use: a broken
 * header gives -EINVAL, never a read outside the mapping.
 */
#include "symbols/vdso.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "util/xalloc.h"

#if UINTPTR_MAX > 0xffffffffu
#define VDSO_CLASS ELFCLASS64
#else
#define VDSO_CLASS ELFCLASS32
#endif

/* max(*ext, off + n * size), false on overflow or past VDSO_MAX_SIZE. */
static bool extend(size_t *ext, uint64_t off, uint64_t n, uint64_t size)
{
	if (n && size > VDSO_MAX_SIZE / n)
		return false;
	uint64_t end = off + n * size;
	if (end < off || end > VDSO_MAX_SIZE)
		return false;
	if (end > *ext)
		*ext = (size_t)end;
	return true;
}

int vdso_extent(const void *img, size_t avail, size_t *len)
{
	ElfW(Ehdr) eh;
	if (!img || avail < sizeof(eh))
		return -EINVAL;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != VDSO_CLASS ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)) ||
	    (eh.e_shnum && eh.e_shentsize != sizeof(ElfW(Shdr))))
		return -EINVAL;
	size_t ext = sizeof(eh);
	if (!extend(&ext, eh.e_phoff, eh.e_phnum, eh.e_phentsize) || ext > avail)
		return -EINVAL;   /* the program headers must be readable here */
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph;
		memcpy(&ph, (const uint8_t *)img + eh.e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && !extend(&ext, ph.p_offset, 1, ph.p_filesz))
			return -EINVAL;
	}
	if (!extend(&ext, eh.e_shoff, eh.e_shnum, eh.e_shentsize))
		return -EINVAL;
	*len = ext;
	return 0;
}

int vdso_copy(uint8_t **data, size_t *len)
{
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -ENOENT;
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;
	size_t n;
	/* the mapping starts at base and is whole pages: one page is there */
	int r = vdso_extent(base, page, &n);
	if (r < 0)
		return r;
	n = (n + page - 1) / page * page;   /* the pages the kernel mapped */
	*data = xmalloc(n);
	memcpy(*data, base, n);
	*len = n;
	return 0;
}
