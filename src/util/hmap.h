/* SPDX-License-Identifier: MIT */
/*
 * The one open-addressing map of the project, for lookups by id or name
 * that a crafted file can make numerous (domains, processes, events,
 * images, warnings): a file with 20,000 domains must not cost 20,000
 * compares per record. Keys are either a u64 (u64map_*: domain ids,
 * pid keys, guest cr3s) or a string (strmap_*: the string's hash_str64
 * plus the string itself, compared on a hash match, so colliding names
 * stay apart). Values are non-NULL pointers; to map to an array index,
 * store (void *)(uintptr_t)(index + 1).
 *
 * A zeroed struct hmap is an empty map. Strings used as keys are not
 * copied: they must outlive the map. hmap_release frees the table only.
 * Iterate with `for (i < m->cap) if (m->v[i].val)`. Load factor <= 1/2.
 */
#ifndef DOMPROF_UTIL_HMAP_H
#define DOMPROF_UTIL_HMAP_H

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

#endif
