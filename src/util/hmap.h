/* SPDX-License-Identifier: MIT */
/*
 * The one hash table of domprof: an open-addressing index from a 64-bit
 * hash to the number of an entry the caller keeps in its own array. The
 * table never sees keys, so one implementation serves string tables,
 * (pid, address) tables and tree children alike; equality is the
 * caller's `eq` callback. Linear probing, at most half full, so a lookup
 * ends at an empty slot after a few probes whatever the hash quality.
 *
 * Ownership: the struct is held by value (zero-initialised = empty);
 * hmap_release frees its arrays. Entries are never removed. Not
 * thread-safe.
 */
#ifndef DOMPROF_UTIL_HMAP_H
#define DOMPROF_UTIL_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HMAP_NONE UINT32_MAX

struct hmap {
	uint64_t *hash;
	uint32_t *val;          /* entry number + 1; 0 = empty slot */
	size_t cap, n;          /* cap is 0 or a power of two */
};

/* Double the slots (1024 at first) and re-place every entry. */
void hmap_grow(struct hmap *m);
void hmap_release(struct hmap *m);

/*
 * The entry with hash h for which eq(ctx, entry) is true (eq NULL: the
 * hash alone decides). When there is none: with add == HMAP_NONE returns
 * HMAP_NONE; otherwise records `add` (the number the caller's new entry
 * will have, usually its array's length) under h and returns it, and the
 * caller creates that entry. Compare the result with `add` to know which
 * happened. Inline so that a constant eq is inlined too.
 */
static inline uint32_t hmap_lookup(struct hmap *m, uint64_t h,
				   bool (*eq)(const void *ctx, uint32_t entry),
				   const void *ctx, uint32_t add)
{
	if (add != HMAP_NONE && (m->n + 1) * 2 > m->cap)
		hmap_grow(m);
	if (!m->cap)
		return HMAP_NONE;
	size_t mask = m->cap - 1, j = h & mask;
	for (; m->val[j]; j = (j + 1) & mask)
		if (m->hash[j] == h && (!eq || eq(ctx, m->val[j] - 1)))
			return m->val[j] - 1;
	if (add == HMAP_NONE)
		return HMAP_NONE;
	m->hash[j] = h;
	m->val[j] = add + 1;
	m->n++;
	return add;
}

#endif
