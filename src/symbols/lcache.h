/* SPDX-License-Identifier: MIT */
/*
 * The source line cache: per image build-id, the answers of the source
 * line lookups (symbols.h: sym_srcline) of the addresses looked up so
 * far, kept in a file between runs (docs/report.md, "The line cache").
 * A cold `report -s srcline` spends most of its time on one-time work
 * per image: libc's compressed DWARF inflated, line tables and DIE trees
 * decoded per compilation unit; a report of any recording that touches
 * the same image then answers the addresses already looked up from the
 * file, and opens the DWARF only for the others (then merges them in).
 *
 * The file is lines/BUILDID-HASH.lines in domprof's cache directory
 * (util/cachedir.h), HASH naming the file the lines came from. Its key
 * is a SHA-256 of the format version, the version of the lookups' code
 * and libdw's (lines.c: what else the answers depend on), the build-id
 * and the identity (device, inode, size, modification and
 * change times) of the file the lines came from: the image's own file,
 * or the image's file and the debug file when the image's file has no
 * line tables (lines.c picks the same file again only while both are
 * unchanged). Embedded ELF copies (the recording is hostile: a forged
 * copy must not change other recordings' lines) and the kernel are never
 * cached, nor images without a build-id.
 *
 * The file is hostile input: its size, counts and every string offset are
 * bounded, header and payload checksummed, its key compared, entries in
 * strictly ascending address order; any fault means it is not used (the
 * DWARF answers, the same output). Written to a temporary file and
 * renamed into place, mode 0600 in a 0700 directory.
 *
 * Format (little-endian): a header of LCACHE_HEAD bytes: magic (8),
 * header size (4), entry count (4), string bytes (4), payload crc32c
 * (4), payload length (8), key (32), header crc32c over the bytes before
 * it (4), zero (4); then the entries, LCACHE_ENT bytes each: address
 * (8), line (4), call line (4), path, inlined function, call file (4
 * each: offsets into the strings, LCACHE_NONE for none), flags (4: bit 0
 * the lookup found a line); then the strings, each NUL-terminated, the
 * last byte a NUL.
 *
 * Modules return codes and never print (why strings).
 */
#ifndef DOMPROF_SYMBOLS_LCACHE_H
#define DOMPROF_SYMBOLS_LCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LCACHE_MAGIC "DPLCACH1"        /* 8 bytes, no NUL */
#define LCACHE_HEAD 72u
#define LCACHE_ENT 32u
#define LCACHE_KEY 32u                 /* SHA-256 */
#define LCACHE_MAX (64u << 20)         /* bytes a cache file may hold */
#define LCACHE_MAX_ENTS (1u << 21)     /* entries a cache file may hold */
#define LCACHE_NONE UINT32_MAX
#define LCACHE_F_OK 1u

/* One address's answer: what lines_lookup returns (the file is the base
 * name of path). Strings are borrowed: from the loaded file's buffer or
 * the lookup's handle. */
struct lcache_ent {
	uint64_t addr;
	const char *path, *inlined, *call_file;   /* NULL: none */
	uint32_t line, call_line;
	bool ok;                                  /* false: no line there ("??") */
};

/* A cache file read and checked: n entries sorted by address, their
 * strings in buf. Release with lcache_release. */
struct lcache {
	uint8_t *buf;
	struct lcache_ent *e;
	size_t n;
};

/* The mode from $DOMPROF_LINE_CACHE: 0 off ("0", "off", "no"), 1 on
 * (unset, empty, anything else), 2 on and say in one warning line what
 * it did ("verbose", "v"). */
int lcache_mode(void);

/* The key for lines read from image (the image's own file) or, with
 * debug not NULL, from the debug file debug of an image whose own file
 * image has none; salt (may be NULL) names what else the answers depend
 * on (the lookup code's version and libdw's: lines.c). Returns 0, or a
 * negative errno with why set when a file is not a regular file that
 * can be stat'ed. */
int lcache_key(uint8_t key[LCACHE_KEY], const char *salt, const uint8_t *bid, size_t bidlen,
	       const char *image, const char *debug, char *why, size_t whylen);

/* The cache file of build-id bid for lines read from the file src (the
 * image's own, or with debug its debug file) into buf:
 * lines/BUILDID-HASH.lines, HASH 16 hex digits of a SHA-256 of the kind
 * and src's name; false without a cache directory, an empty or
 * over-long build-id, or a path too long. */
bool lcache_path(const uint8_t *bid, size_t bidlen, const char *src, bool debug, char *buf, size_t len);

/*
 * Check the bytes [data, data+len) of a cache file and read its entries
 * into c (c->e allocated, strings pointing into data, c->buf left NULL:
 * data must outlive c). keys[0..nkeys) are the keys it may have (nkeys 0:
 * any); *which (may be NULL) is the one it has. Returns 0, -ESTALE for
 * another key, or -EINVAL for a malformed file (why set).
 */
int lcache_parse(const uint8_t *data, size_t len, const uint8_t (*keys)[LCACHE_KEY], size_t nkeys,
		 size_t *which, struct lcache *c, char *why, size_t whylen);

/* Read and check the file at path (lcache_parse); c->buf owns the bytes.
 * Returns 0, -ENOENT without a file, or another negative errno (why). */
int lcache_load(const char *path, const uint8_t (*keys)[LCACHE_KEY], size_t nkeys, size_t *which,
		struct lcache *c, char *why, size_t whylen);

void lcache_release(struct lcache *c);

/* The entry of addr, or NULL. */
const struct lcache_ent *lcache_find(const struct lcache *c, uint64_t addr);

/* The entries of old and add[0..nadd) (add is sorted in place; an
 * address in both keeps old's) as one malloc'd sorted array into *out,
 * *n entries; strings stay borrowed from both. */
void lcache_merge(const struct lcache *old, struct lcache_ent *add, size_t nadd,
		  struct lcache_ent **out, size_t *n);

/* The bytes of a cache file for key over e[0..n) (strictly ascending
 * addresses; equal strings stored once) into a malloc'd *out of *len
 * bytes. Returns 0, -EINVAL (order, an ok entry without a path) or
 * -EFBIG (over the limits). */
int lcache_encode(const uint8_t key[LCACHE_KEY], const struct lcache_ent *e, size_t n, uint8_t **out,
		  size_t *len);

/* Write [data, data+len) to path atomically (a temporary file renamed),
 * making its directory (0700) first. Returns 0 or a negative errno (why
 * set). */
int lcache_store(const char *path, const uint8_t *data, size_t len, char *why, size_t whylen);

#endif
