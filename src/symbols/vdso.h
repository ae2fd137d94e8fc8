/* SPDX-License-Identifier: MIT */
/*
 * A copy of this process's vDSO image, the one copier of the project:
 * the host report names [vdso] samples with it (the same kernel gives
 * the same vDSO) and the agent ships it to the host. The image is found
 * through the auxiliary vector (getauxval(AT_SYSINFO_EHDR)), not
 * /proc/self/maps, and its size comes from its own ELF headers, bounded
 * by VDSO_MAX_SIZE.
 */
#ifndef DOMPROF_SYMBOLS_VDSO_H
#define DOMPROF_SYMBOLS_VDSO_H

#include <stddef.h>
#include <stdint.h>

/* No vDSO is near this (x86-64's is 8 KiB): larger headers are not believed. */
#define VDSO_MAX_SIZE (1u << 20)

/*
 * Copy this process's vDSO: *data (xmalloc'd, the caller frees it) gets
 * *len bytes, the ELF image rounded up to whole pages (the bytes of its
 * mapping). Returns 0, -ENOENT when the process has no vDSO, -EINVAL
 * when its headers are not a native ELF image of at most VDSO_MAX_SIZE
 * bytes. On error *data and *len are not changed.
 */
int vdso_copy(uint8_t **data, size_t *len);

/*
 * The size of the ELF image at img from its headers: the furthest end of
 * the ELF header, program headers, PT_LOAD file contents and section
 * header table. Only img[0, avail) is read (the headers must lie there;
 * the section headers are not read, only their extent). Returns 0 and
 * *len, or -EINVAL for a non-native ELF, headers outside avail, or an
 * extent over VDSO_MAX_SIZE. Exposed for tests.
 */
int vdso_extent(const void *img, size_t avail, size_t *len);

#endif
