/* SPDX-License-Identifier: MIT */
/*
 * The host-side cache of what was read from guest kernels, keyed by the
 * kernel's identity (its build-id), so a second recording of the same
 * kernel does not rescan guest memory while the VM is stopped.
 *
 * Folder: $DOMPROF_CACHE, else $XDG_CACHE_HOME/domprof, else
 * $HOME/.cache/domprof; entries are guest-kernels/BUILDID.KIND files
 * (KIND "kallsyms", "btf"), created 0600 in 0700 folders, written to a
 * temporary file and renamed, so a reader never sees half an entry.
 * The key comes from guest memory: only 40 lowercase hex digits are
 * accepted, so a guest cannot name a path. The contents are input like
 * any file (bounded by the caller's max; the decoders validate them).
 */
#ifndef DOMPROF_GUEST_CACHE_H
#define DOMPROF_GUEST_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Reads entry BUILDID.KIND (at most max bytes) into *data (malloc'd,
 * NUL-terminated; *len without the NUL). Returns 0, -ENOENT (no entry),
 * -EINVAL (a key that is not a build-id), or another negative errno. */
int guest_cache_get(const char *buildid, const char *kind, size_t max,
		    char **data, size_t *len);

/* Writes entry BUILDID.KIND. Returns 0 or a negative errno (the caller
 * goes on without a cache: it is an optimisation only). */
int guest_cache_put(const char *buildid, const char *kind, const void *data, size_t len);

/* The kallsyms entry: the decoded table (kallsyms text with the runtime
 * addresses of one boot) after a header line naming that boot's _text.
 * encode returns the entry (malloc'd, *outlen bytes). decode moves the
 * table to a boot whose _text is text_addr (kernel-image addresses only;
 * per-CPU offsets stay) and returns it (malloc'd, *outlen bytes plus a NUL,
 * *nsyms lines), or NULL when the entry is not one it wrote (any bad line). */
char *guest_cache_kallsyms_encode(const char *text, size_t len, uint64_t text_addr, size_t *outlen);
char *guest_cache_kallsyms_decode(const char *data, size_t len, uint64_t text_addr, size_t *outlen,
				  size_t *nsyms);

/* The folder entries go to (for messages and docs), into buf. */
void guest_cache_dir(char *buf, size_t len);

#endif
