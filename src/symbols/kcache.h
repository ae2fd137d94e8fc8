/* SPDX-License-Identifier: MIT */
/*
 * This machine's kernel symbol index, made from its live /proc/kallsyms
 * and kept in a cache file between runs (docs/perfdata.md, "The kernel
 * symbol cache"), as perf keeps ~/.debug. A perf.data carries no kernel
 * symbol table, so every report of one recorded here read and parsed the
 * live kallsyms: ~5 MB of text the kernel formats anew at each read (~25
 * ms of kernel time) and ~90 M instructions of parsing, most of a
 * report's cost. The cache holds the index (SYMTAB kind 8,
 * format/ksymidx.h), which a report opens without parsing and whose
 * blocks it decodes only where kernel samples fall.
 *
 * The cache file is host-kernel/BUILDID.idx in domprof's cache directory
 * ($DOMPROF_CACHE, else $XDG_CACHE_HOME/domprof, else ~/.cache/domprof:
 * util/cachedir.h, shared with the source line cache, symbols/lcache.h). It is keyed by a
 * SHA-256 of what makes the live kallsyms what it is: the running
 * kernel's build-id (/sys/kernel/notes), the boot (boot_id), the loaded
 * modules and their addresses (/proc/modules), the loaded BPF programs
 * (their ids), the effective user and kptr_restrict (who may see the
 * addresses). The file is hostile input: its size is bounded, its header
 * and payload checksummed, its key compared, and the index validated by
 * dp_ksymidx_open; any fault means the live kallsyms is read instead.
 * It is written to a temporary file and renamed into place, mode 0600 in
 * a 0700 directory; a directory that cannot be written is not an error.
 *
 * Modules return codes and never print: the caller says what happened
 * (why strings). Not thread-safe (reads the environment).
 */
#ifndef DOMPROF_SYMBOLS_KCACHE_H
#define DOMPROF_SYMBOLS_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KCACHE_MAGIC "DPKCACH1"        /* 8 bytes, no NUL */
#define KCACHE_HEAD 64u                /* header bytes before the index */
#define KCACHE_MAX (64u << 20)         /* bytes a cache file may hold */
#define KCACHE_KEY 32u                 /* SHA-256 */
#define KCACHE_LEVEL (-5)              /* zstd level of the cached index's blocks */

/*
 * kallsyms text [ks, ks+len) as a kernel symbol index (SYMTAB kind
 * DP_SYMTAB_KSYMIDX, format/ksymidx.h), blocks compressed at zstd level:
 * every line with an address, type and name, sorted by address (equal
 * addresses in the text's order), module names numbered in the order
 * they first appear. *odd (may be NULL) counts the lines a text table
 * would warn about (malformed, or a text symbol at address 0). Returns a
 * malloc'd payload of *outlen bytes, or NULL.
 */
uint8_t *ksyms_index_build(const char *ks, size_t len, int level, size_t *outlen, size_t *odd);

/* What the cache is keyed by, read from this machine. */
struct kcache_key {
	uint8_t buildid[20];          /* the running kernel's, or the perf copy's */
	uint8_t buildid_len;
	bool perf_copy;               /* the index of perf's copy (kcache_key_file) */
	uint8_t key[KCACHE_KEY];
};

/* The cache's mode from $DOMPROF_KSYM_CACHE: 0 off ("0", "off", "no"),
 * 1 on (unset, empty, anything else), 2 on and say what it did
 * ("verbose", "v"). */
int kcache_mode(void);

/* The running kernel's build-id from /sys/kernel/notes: its length (1..20)
 * into id, or a negative errno (-ENOENT: no GNU build-id note). */
int kcache_running_buildid(uint8_t id[20]);

/* The key of this machine now; modules is /proc/modules' text (NULL, 0
 * when there is none). Returns 0, or a negative errno with why set when
 * the state cannot be read whole (then no cache is used). */
int kcache_key_live(struct kcache_key *k, const char *modules, size_t modlen, char *why,
		    size_t whylen);

/* The key of a kallsyms copy in perf's build-id cache at path, of the
 * kernel build-id bid: the build-id, the file's identity (device, inode,
 * size, modification and change times) and the effective uid. Its cache
 * file is host-kernel/perf-BUILDID.idx. Returns 0, or a negative errno
 * with why set (no such file). */
int kcache_key_file(struct kcache_key *k, const uint8_t *bid, size_t bidlen, const char *path,
		    char *why, size_t whylen);

/* The cache file's path for key k into buf; false when no directory is
 * known (no HOME) or the path does not fit. */
bool kcache_path(const struct kcache_key *k, char *buf, size_t len);

/*
 * Read and check the cache file for k: a malloc'd buffer into *buf (the
 * caller frees it) whose index payload is [*ix, *ix + *ixlen) (already
 * opened once by dp_ksymidx_open, so it validates). Returns 0, -ENOENT
 * when there is no file, or another negative errno with why set ("key of
 * another boot or module set", "checksum mismatch", ...).
 */
int kcache_load(const struct kcache_key *k, char **buf, const uint8_t **ix, size_t *ixlen,
		char *why, size_t whylen);

/* Write index [ix, ix+len) for k, atomically (temporary file, rename).
 * Returns 0 or a negative errno (why set). */
int kcache_store(const struct kcache_key *k, const uint8_t *ix, size_t len, char *why,
		 size_t whylen);

/* Check a cache file's bytes [data, data+len) against key (NULL: any
 * key): header, checksums, index. On success the index is at data +
 * KCACHE_HEAD, *ixlen bytes. Exposed for the unit and fuzz tests. */
int kcache_check(const uint8_t *data, size_t len, const uint8_t *key, size_t *ixlen, char *why,
		 size_t whylen);

/* The header of a cache file for key over index [ix, ix+len) into
 * head[KCACHE_HEAD] (for the tests making files by hand). */
void kcache_header(uint8_t head[KCACHE_HEAD], const uint8_t key[KCACHE_KEY], const uint8_t *ix,
		   size_t len);

#endif
