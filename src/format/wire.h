/* SPDX-License-Identifier: MIT */
/*
 * Private to src/format/: on-disk constants and little-endian field
 * access shared by writer.c and reader.c. See docs/file-format.md.
 */
#ifndef DOMPROF_FORMAT_WIRE_H
#define DOMPROF_FORMAT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "util/le.h"

#define DP_FILE_HDR_FIXED 48u
/* The file header's fixed fields, by offset (docs/file-format.md):
 * magic[8], u16 major, u16 minor, u8 byte order (1: little), u32 length,
 * u32 CRC-32C of the bytes after it, u64 created, u32 CPUs, u32 fields */
#define DP_FH_MAJOR 8u
#define DP_FH_MINOR 10u
#define DP_FH_ORDER 12u
#define DP_FH_LEN 16u
#define DP_FH_CRC 20u
#define DP_FH_CREATED 24u      /* the CRC covers the header from here */
#define DP_FH_NCPUS 32u
#define DP_FH_NFIELDS 36u
#define DP_FILE_HDR_MAX (1u << 20)
#define DP_CHUNK_HDR 32u
/* A chunk header's u32 fields, by offset (docs/file-format.md) */
#define DP_CH_MAGIC 0u
#define DP_CH_FLAGS 4u
#define DP_CH_STORED 8u        /* payload bytes in the file */
#define DP_CH_RAW 12u          /* payload bytes decoded */
#define DP_CH_NREC 16u
#define DP_CH_PAYLOAD_CRC 20u  /* CRC-32C of the stored payload */
#define DP_CH_SEQ 24u
#define DP_CH_HDR_CRC 28u      /* CRC-32C of the 28 bytes before it */
#define DP_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" little-endian */
#define DP_CHUNK_ZSTD 1u
#define DP_CHUNK_COUNTS 2u /* 1.6: a counts part after the records' zstd frame (format/counts.h) */
#define DP_CHUNK_MAX (256u << 20)
#define DP_REC_HDR 8u
#define DP_SAMPLE_FIXED 40u
#define DP_SWITCH_LEN 16u  /* a DOMAIN_SWITCH's least length: header, u32 domain, padding */
#define DP_SAMPLE_F_ASID 1u
#define DP_SAMPLE_F_CHAIN 2u
#define DP_SAMPLE_F_USTACK 4u  /* 1.4: user registers and stack block after the chain */
#define DP_SAMPLE_F_USTACK_DELTA 8u /* 1.5: the same block, its stack in delta form (format/ustack.h) */
/* Every optional part: the readers' fast paths test against this, so a
 * part added above must be added here (a fast path that did not know
 * USTACK_DELTA read DWARF samples without their stacks) */
#define DP_SAMPLE_F_PARTS (DP_SAMPLE_F_ASID | DP_SAMPLE_F_CHAIN | DP_SAMPLE_F_USTACK | DP_SAMPLE_F_USTACK_DELTA)
#define DP_USTACK_FIXED 24u    /* u64 mask, u32 abi, u32 0, u32 size, u32 len; then regs, stack */
#define DP_MMAP_IDENT 40u /* 1.1 MMAP identity: u32 flags, u32 0, u64 dev, ino, size, mtime_ns */
#define DP_TASK_ASID 16u  /* 1.2 TASK address space: u32 flags, u32 0, u64 asid */
#define DP_SYMTAB_MAX_RAW (1u << 30)
#define DP_COUNTERS_FIXED 8u /* 1.3 COUNTERS: u32 n, u32 0; then n of (u64 value, u16 len, len bytes) */
#define DP_COUNTER_ENTRY 10u /* an entry's bytes before its name */

/* The asid and call chain of a SAMPLE record at p (len bytes, len >=
 * DP_REC_HDR + DP_SAMPLE_FIXED, framing checked) with flags, bounds
 * checked as every decoder of samples checks them (reader.c's dec_sample,
 * digest.c): false when a part does not fit. rest: the bytes after them. */
struct sample_parts {
	uint64_t asid;
	uint32_t nr;
	const uint8_t *chain;   /* nr u64s, maybe unaligned; NULL without */
	const uint8_t *rest;
};

static inline __attribute__((always_inline)) bool
sample_parts(const uint8_t *p, uint32_t len, uint16_t flags, struct sample_parts *o)
{
	const uint8_t *end = p + len, *q = p + DP_REC_HDR + DP_SAMPLE_FIXED;
	o->asid = 0;
	o->nr = 0;
	o->chain = NULL;
	if (flags & DP_SAMPLE_F_ASID) {
		if (end - q < 8)
			return false;
		o->asid = get64(q);
		q += 8;
	}
	if (flags & DP_SAMPLE_F_CHAIN) {
		if (end - q < 8)
			return false;
		uint32_t nr = get32(q);
		q += 8;
		if (nr > DP_MAX_CALLCHAIN || (size_t)(end - q) / 8 < nr)
			return false;
		o->nr = nr;
		o->chain = q;
		q += 8 * (size_t)nr;
	}
	o->rest = q;
	return true;
}

enum { DP_FIELD_HOSTNAME = 1, DP_FIELD_RELEASE = 2, DP_FIELD_CPU = 3, DP_FIELD_CMDLINE = 4 };

static inline uint32_t align8(uint32_t n) { return (n + 7u) & ~7u; }

/* damage.c: a reader's damage list (*v, *n, *cap), at most DP_MAX_DAMAGE
 * entries; an offset before `until` was reported by an earlier pass.
 * dp_open_fail sets *err and the one-line msg of a refused open and
 * returns code. */
#define DP_MAX_DAMAGE 1000u
#include <stdarg.h>
void dp_damage_vadd(struct dp_damage **v, size_t *n, size_t *cap, uint64_t until, uint64_t off,
		    uint64_t lost, const char *fmt, va_list ap);
int dp_open_fail(int *err, char *msg, size_t msglen, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* A counter name: 1..DP_MAX_COUNTER_NAME bytes of [a-z0-9._-] (what the
 * writer accepts and the reader decodes; the set keeps names printable
 * and safe in every output format without escaping). */
static inline bool dp_counter_name_ok(const char *s, size_t n)
{
	if (n < 1 || n > DP_MAX_COUNTER_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

#endif
