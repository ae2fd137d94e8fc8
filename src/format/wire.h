/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: on-disk constants and little-endian field
 * access shared by writer.c and reader.c. See docs/file-format.md.
 */
#ifndef DOMPROF_FORMAT_WIRE_H
#define DOMPROF_FORMAT_WIRE_H

#include <stdint.h>

#include "util/le.h"

#define DP_FILE_HDR_FIXED 48u
#define DP_FILE_HDR_MAX (1u << 20)
#define DP_CHUNK_HDR 32u
#define DP_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" little-endian */
#define DP_CHUNK_ZSTD 1u
#define DP_CHUNK_MAX (256u << 20)
#define DP_REC_HDR 8u
#define DP_SAMPLE_FIXED 40u
#define DP_SAMPLE_F_ASID 1u
#define DP_SAMPLE_F_CHAIN 2u
#define DP_MMAP_IDENT 40u /* 1.1 MMAP identity: u32 flags, u32 0, u64 dev, ino, size, mtime_ns */
#define DP_TASK_ASID 16u  /* 1.2 TASK address space: u32 flags, u32 0, u64 asid */
#define DP_SYMTAB_MAX_RAW (1u << 30)

enum { DP_FIELD_HOSTNAME = 1, DP_FIELD_RELEASE = 2, DP_FIELD_CPU = 3, DP_FIELD_CMDLINE = 4 };

static inline uint32_t align8(uint32_t n) { return (n + 7u) & ~7u; }

#endif
