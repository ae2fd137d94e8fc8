// SPDX-License-Identifier: MIT
/* Growth and release of the hash index (util/hmap.h). */
#include "util/hmap.h"

#include <stdlib.h>

#include "util/xalloc.h"

void hmap_grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	uint64_t *hash = xcalloc(cap, sizeof(*hash));
	uint32_t *val = xcalloc(cap, sizeof(*val));
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->val[i])
			continue;
		size_t j = m->hash[i] & (cap - 1);
		while (val[j])
			j = (j + 1) & (cap - 1);
		hash[j] = m->hash[i];
		val[j] = m->val[i];
	}
	free(m->hash);
	free(m->val);
	m->hash = hash;
	m->val = val;
	m->cap = cap;
}

void hmap_release(struct hmap *m)
{
	free(m->hash);
	free(m->val);
	*m = (struct hmap){ 0 };
}
