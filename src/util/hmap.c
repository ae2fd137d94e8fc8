// SPDX-License-Identifier: MIT
/*
 * Open-addressing map (see hmap.h): linear probing over a power-of-two
 * table, doubled when half full, hashed with hash_mix64 so ids that
 * differ only in high bits still spread.
 */
#include "util/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/xalloc.h"

static int match(const struct hmap *m, size_t i, uint64_t key, const char *str)
{
	return m->v[i].key == key && (!str || !strcmp(m->v[i].str, str));
}

void *hmap_get(const struct hmap *m, uint64_t key, const char *str)
{
	if (!m->cap)
		return NULL;
	/* never full (load <= 1/2), so an empty slot ends every probe */
	for (size_t i = hash_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->v[i].val)
			return NULL;
		if (match(m, i, key, str))
			return m->v[i].val;
	}
}

void hmap_put(struct hmap *m, uint64_t key, const char *str, void *val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct hmap nm = { 0 };
		nm.cap = m->cap ? m->cap * 2 : 32;
		nm.v = xcalloc(nm.cap, sizeof(*nm.v));
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].val)
				hmap_put(&nm, m->v[i].key, m->v[i].str, m->v[i].val);
		free(m->v);
		*m = nm;
	}
	size_t i = hash_mix64(key) & (m->cap - 1);
	while (m->v[i].val && !match(m, i, key, str))
		i = (i + 1) & (m->cap - 1);
	if (!m->v[i].val)
		m->n++;
	m->v[i].key = key;
	m->v[i].str = str;
	m->v[i].val = val;
}

void hmap_release(struct hmap *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

void *u64map_get(const struct hmap *m, uint64_t key)
{
	return hmap_get(m, key, NULL);
}

void u64map_put(struct hmap *m, uint64_t key, void *val)
{
	hmap_put(m, key, NULL, val);
}

void *strmap_get(const struct hmap *m, const char *key)
{
	return hmap_get(m, hash_str64(key), key);
}

void strmap_put(struct hmap *m, const char *key, void *val)
{
	hmap_put(m, hash_str64(key), key, val);
}
