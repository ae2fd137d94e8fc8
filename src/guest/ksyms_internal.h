/* SPDX-License-Identifier: MIT */
/*
 * Private to src/guest/ksyms.c (the kallsyms tables) and kbuildid.c (the
 * kernel's build-id), which both read the guest kernel's read-only data
 * through a growing window. Nothing else includes it: the contract is
 * guest/ksyms.h.
 */
#ifndef DOMPROF_GUEST_KSYMS_INTERNAL_H
#define DOMPROF_GUEST_KSYMS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/ksyms.h"

/* Probes of rodata are one packet every PROBE_STEP bytes. */
#define PROBE_STEP (64u << 10)

/* The read-only data read so far: buf holds [lo, lo + len). */
struct win {
	uint64_t lo;            /* guest address of buf[0] */
	uint8_t *buf;
	size_t len, cap;
	bool eof;               /* a read failed: the mapping ends at lo + len */
};

/* Reads up to `more` bytes after the window, packet by packet, stopping
 * at the first failing read (the end of the mapped rodata). 0, or -E2BIG
 * (the read budget). */
int ksyms_win_grow(struct guest_mem *m, struct win *w, size_t more);

/* The start of the read-only data: the first 2 MiB step after _text
 * whose first page holds the "Linux version " banner; ver gets the
 * version word. 0, or -ENOENT with *why. */
int ksyms_rodata_find(struct guest_mem *m, const struct guest_kimage *img, uint64_t *ro,
		      char *ver, size_t verlen, char *why, size_t whylen);

/* Formats *why (when given) and returns err. */
int ksyms_fail(char *why, size_t whylen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
