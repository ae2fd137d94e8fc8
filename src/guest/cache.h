/* SPDX-License-Identifier: MIT */
/*
 * The host-side cache of what was read from guest kernels, keyed by the
 * kernel's identity (its build-id), so a second recording of the same
 * kernel does not decode guest memory again while the VM is stopped.
 *
 * Where and whom it trusts: the directory guest-kernels of domprof's
 * cache directory (util/cachedir.h: this user's only, opened without
 * following links; no HOME and no DOMPROF_CACHE means no cache). Entries
 * are BUILDID.KIND files (KIND "kallsyms" or "orc"), written 0600 through
 * a temporary file and renamed, so a reader never sees half an entry.
 *
 * What it does not trust: the key. The build-id is what the guest says
 * it is, so any guest can name any kernel's entries, and the first guest
 * to record a build-id writes its entry. An entry therefore serves a
 * guest only after a check against that guest's memory (the callers,
 * collect/gdb_guest.c and gdb_chains.c): the kallsyms entry carries the
 * span its table was decoded from and that span's digest
 * (guest_ksyms_verify re-reads the span and compares); the ORC entry is
 * the raw tables, compared with sampled packets of the guest's
 * (guest/orc.h, guest_orc_verify_raw). An entry that fails is decoded
 * afresh and replaced. The key is 40 lowercase hex digits or refused, so
 * a guest cannot name a path. Contents are input like any file (bounded
 * by the caller's max; the decoders validate them).
 */
#ifndef DOMPROF_GUEST_CACHE_H
#define DOMPROF_GUEST_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/ksyms.h"

/* Reads entry BUILDID.KIND (at most max bytes) into *data (malloc'd,
 * NUL-terminated; *len without the NUL). Returns 0, -ENOENT (no entry, or
 * no cache directory), -EINVAL (a key that is not a build-id), -EPERM (the
 * directory or file is refused by util/cachedir.h's rules), or another
 * negative errno; *why one line. */
int guest_cache_get(const char *buildid, const char *kind, size_t max,
		    char **data, size_t *len, char *why, size_t whylen);

/* Writes entry BUILDID.KIND. Returns 0 or a negative errno (the caller
 * goes on without a cache: it is an optimisation only). */
int guest_cache_put(const char *buildid, const char *kind, const void *data, size_t len,
		    char *why, size_t whylen);

/* The kallsyms entry: a header line naming the boot's _text and the span
 * of guest memory the table was decoded from (struct guest_ksyms_src:
 * offsets and digest), then the decoded table (kallsyms text with that
 * boot's runtime addresses). encode returns the entry (malloc'd, *outlen
 * bytes). decode fills *src, moves the table to a boot whose _text is
 * text_addr (kernel-image addresses only; per-CPU offsets stay) and
 * returns it (malloc'd, *outlen bytes plus a NUL, *nsyms lines), or NULL
 * when the entry is not one it wrote (any bad line, a line count not the
 * span's). Decoding does not check the span against a guest: the caller
 * does (guest_ksyms_verify) before using the table. */
char *guest_cache_kallsyms_encode(const char *text, size_t len, uint64_t text_addr,
				  const struct guest_ksyms_src *src, size_t *outlen);
char *guest_cache_kallsyms_decode(const char *data, size_t len, uint64_t text_addr,
				  struct guest_ksyms_src *src, size_t *outlen, size_t *nsyms);

/* The folder entries go to (for messages and docs), into buf; false when
 * there is none (util/cachedir.h). */
bool guest_cache_dir(char *buf, size_t len);

#endif
