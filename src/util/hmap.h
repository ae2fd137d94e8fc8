/* SPDX-License-Identifier: MIT */
/*
 * The one open-addressing map of the project, for lookups by id or name
 * that a crafted file can make numerous (domains, processes, events,
 * images, warnings): a file with 20,000 domains must not cost 20,000
 * compares per record. Keys are either a u64 (u64map_*: domain ids,
 * pid keys, guest cr3s) or a string (strmap_*: the string's hash_bytes64
 * plus the string itself, compared on a hash match, so colliding names
 * stay apart). Values are non-NULL pointers; to map to an array index,
 * store (void *)(uintptr_t)(index + 1).
 *
 * A zeroed struct hmap is an empty map. Strings used as keys are not
 * copied: they must outlive the map. hmap_release frees the table only.
 * Iterate with `for (i < m->cap) if (m->v[i].val)`. Load factor <= 1/2.
 *
 * Index form (hidx_*), for hot tables whose keys live in the caller's
 * arrays (the profile's sample keys, addresses, symbols, edges, stacks):
 * the table maps a caller-computed 64-bit hash to an entry number, and
 * the caller compares its own entries on a hash match, so composite keys
 * (a call chain, a pair of names) need no copy in the table and hash
 * collisions stay apart. Slots are 8 bytes (entry + 1, 32 bits of the
 * hash) against the general form's 24, and no second mix: the profile's
 * tables are faster and smaller this way (docs/benchmarks.md, "Design
 * measurements").
 *
 * Lookup protocol: hidx_find probes with the caller's compare (a static
 * function: hidx_find is always inlined, so the compare is too and the
 * probe costs what a hand-written loop does):
 *
 *     size_t i;
 *     uint32_t e = hidx_find(t, h, equal, ctx, &i);
 *     if (e != HIDX_NONE)
 *             found entry e;
 *     else
 *             hidx_fill(t, i, h, new_entry_number); // i: the empty slot reached
 *
 * hidx_init gives a table of cap slots (a power of two); hidx_fill grows
 * it when 7/10 full, so the probe always ends on an empty slot.
 * hidx_release frees the table; a zeroed struct hidx is released (not
 * usable before hidx_init).
 */
#ifndef DOMPROF_UTIL_HMAP_H
#define DOMPROF_UTIL_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	struct { uint64_t key; const char *str; void *val; } *v;
	size_t cap, n;
};

/* General form: str NULL compares the key only. */
void *hmap_get(const struct hmap *m, uint64_t key, const char *str);
void hmap_put(struct hmap *m, uint64_t key, const char *str, void *val);
void hmap_release(struct hmap *m);

void *u64map_get(const struct hmap *m, uint64_t key);
void u64map_put(struct hmap *m, uint64_t key, void *val);
void *strmap_get(const struct hmap *m, const char *key);
void strmap_put(struct hmap *m, const char *key, void *val);

/* One slot: the low 32 bits of the entry's hash above the entry number
 * + 1 (0 = empty), so a probe reads one word (one cache miss, not one in
 * a slot array and another in a hash array). The slot index is the low
 * bits of the hash too, so growing needs no other copy of it; the table
 * holds at most 2^32 slots (entry numbers are 32-bit). */
struct hidx {
	uint64_t *slot;
	size_t cap;       /* power of two */
	size_t n;
};

void hidx_init(struct hidx *t, size_t cap);
void hidx_release(struct hidx *t);
/* Empties the table, keeping its slots (a table refilled many times). */
void hidx_clear(struct hidx *t);
/* Fills the empty slot i (where the probe for h ended) with entry idx. */
void hidx_fill(struct hidx *t, size_t i, uint64_t h, uint32_t idx);

static inline size_t hidx_start(const struct hidx *t, uint64_t h)
{
	return h & (t->cap - 1);
}

static inline size_t hidx_step(const struct hidx *t, size_t i)
{
	return (i + 1) & (t->cap - 1);
}

#define HIDX_NONE UINT32_MAX

/* The entry number e (slot - 1) with hash h for which eq(ctx, e) holds,
 * or HIDX_NONE with *empty the empty slot where the probe ended (for
 * hidx_fill). The probe ends: the table is never over 7/10 full. */
static inline __attribute__((always_inline)) uint32_t
hidx_find(const struct hidx *t, uint64_t h, bool (*eq)(const void *ctx, uint32_t e), const void *ctx,
	  size_t *empty)
{
	size_t i = hidx_start(t, h);
	for (uint64_t sl; (sl = t->slot[i]) != 0; i = hidx_step(t, i))
		if ((uint32_t)(sl >> 32) == (uint32_t)h && eq(ctx, (uint32_t)sl - 1)) {
			*empty = i;   /* not empty: set only to keep the contract simple */
			return (uint32_t)sl - 1;
		}
	*empty = i;
	return HIDX_NONE;
}

#endif
