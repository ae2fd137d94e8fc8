// SPDX-License-Identifier: MIT
/*
 * Open-addressing map (see hmap.h): linear probing over a power-of-two
 * table, doubled when half full, hashed with hash_mix64 so ids that
 * differ only in high bits still spread. The index form (hidx_*) is
 * the open-addressing index profile.c had of its own, moved here as is:
 * grown at 7/10, probed by the caller.
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

/* eight bytes at a time: image keys are a path, a build-id and a file
 * identity (~150 bytes, one per mapping of a recording: FNV's byte
 * loop over them was a twentieth of a large annotate) */
static uint64_t str_hash(const char *key)
{
	return hash_bytes64(key, strlen(key));
}

void *strmap_get(const struct hmap *m, const char *key)
{
	return hmap_get(m, str_hash(key), key);
}

void strmap_put(struct hmap *m, const char *key, void *val)
{
	hmap_put(m, str_hash(key), key, val);
}

/* ---- index form ---- */

void hidx_init(struct hidx *t, size_t cap)
{
	t->cap = cap;
	t->n = 0;
	t->slot = xcalloc(cap, sizeof(*t->slot));
}

void hidx_release(struct hidx *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

void hidx_clear(struct hidx *t)
{
	if (t->n)
		memset(t->slot, 0, t->cap * sizeof(*t->slot));
	t->n = 0;
}

void hidx_fill(struct hidx *t, size_t i, uint64_t h, uint32_t idx)
{
	t->slot[i] = (uint64_t)(uint32_t)h << 32 | ((uint64_t)idx + 1);
	t->n++;
	if ((t->n + 1) * 10 < t->cap * 7)
		return;
	struct hidx old = *t;
	hidx_init(t, old.cap * 2);
	for (size_t j = 0; j < old.cap; j++) {
		uint64_t sl = old.slot[j];
		if (!sl)
			continue;
		size_t k = hidx_start(t, sl >> 32);
		while (t->slot[k])
			k = hidx_step(t, k);
		t->slot[k] = sl;
		t->n++;
	}
	hidx_release(&old);
}
