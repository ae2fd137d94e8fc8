/* SPDX-License-Identifier: MIT */
/*
 * Read the GNU build-id note (NT_GNU_BUILD_ID) of an ELF file. Used by
 * the recorder when the kernel did not give a mapping's build-id, and by
 * symbol lookup to match a file to the one that was recorded.
 */
#ifndef DOMPROF_SYMBOLS_BUILDID_H
#define DOMPROF_SYMBOLS_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Fill out[0..*len) with the build-id of the ELF file at path. Returns 0,
 * -ENOENT when the file has no build-id note, -ENOEXEC when it is not an
 * ELF file, or another negative errno from open(2). Build-ids longer
 * than 20 bytes are truncated to 20 (the largest perf and domprof keep).
 */
int sym_read_build_id(const char *path, uint8_t out[20], uint8_t *len);

/*
 * The same for an ELF image in memory, buf[0..size) (borrowed, only
 * read): the agent checks the very bytes it is about to ship. Returns 0,
 * -ENOENT (no note) or -ENOEXEC (not ELF).
 */
int sym_build_id_mem(const void *buf, size_t size, uint8_t out[20], uint8_t *len);

#endif
