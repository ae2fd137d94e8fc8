// SPDX-License-Identifier: MIT
/* The line tables of a merge united per image (merge_lines.h). */
#include "analysis/merge_lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "symbols/lcache.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* One image's table: the entries so far, and every buffer their strings
 * point into (a parsed table borrows its bytes). */
struct table {
	uint32_t dom;
	char *key;             /* "DOM/BUILDID", the map's key (heap: stays put
				* when the tables grow) */
	const char *name;      /* the build-id in key, as the SYMTAB names it */
	struct lcache_ent *e;  /* sorted by address */
	size_t n, ntables;
	uint8_t **bufs;        /* the inputs' plain blobs */
	size_t nbufs, cbufs;
	uint8_t *raw;          /* the first input's record, written as it is when alone */
	size_t raw_len;
};

struct merge_lines {
	struct hmap by_key;    /* key -> index + 1 */
	struct table *t;
	size_t n, cap;
};

struct merge_lines *merge_lines_new(void)
{
	return xcalloc(1, sizeof(struct merge_lines));
}

/* The table's plain bytes, malloc'd: the reader's, or its stored zstd
 * frame decompressed (its size bounded first); NULL when it does not. */
static uint8_t *plain(const struct dp_record *rec)
{
	const struct dp_symtab *st = &rec->u.symtab;
	if (!st->size || st->size > LCACHE_MAX)
		return NULL;
	uint8_t *buf = xmalloc(st->size);
	if (st->data) {
		memcpy(buf, st->data, st->size);
		return buf;
	}
	size_t n = rec->symtab_compression == 1 && rec->symtab_stored
		   ? ZSTD_decompress(buf, st->size, rec->symtab_stored, rec->symtab_stored_size) : 0;
	if (!rec->symtab_stored || ZSTD_isError(n) || n != st->size) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool merge_lines_hold(struct merge_lines *ml, uint32_t dom, const struct dp_record *rec)
{
	const struct dp_symtab *st = &rec->u.symtab;
	if (rec->type != DP_REC_SYMTAB || st->kind != DP_SYMTAB_LINES || !st->name || !rec->raw)
		return false;
	char key[64];
	if (snprintf(key, sizeof(key), "%u/%s", dom, st->name) >= (int)sizeof(key))
		return false;   /* no build-id is that long: the reader will say so */
	uint8_t *buf = plain(rec);
	struct lcache c = { 0 };
	char why[128];
	if (!buf || lcache_parse(buf, st->size, NULL, 0, NULL, &c, why, sizeof(why)) != 0) {
		free(buf);
		return false;
	}
	uintptr_t at = (uintptr_t)strmap_get(&ml->by_key, key);
	struct table *t;
	if (!at) {
		xgrow((void **)&ml->t, &ml->cap, ml->n + 1, sizeof(*ml->t));
		t = &ml->t[ml->n++];
		memset(t, 0, sizeof(*t));
		t->dom = dom;
		t->key = xstrdup(key);
		t->name = strchr(t->key, '/') + 1;
		t->raw = xmalloc(rec->raw_len);
		memcpy(t->raw, rec->raw, rec->raw_len);
		t->raw_len = rec->raw_len;
		t->e = c.e;
		t->n = c.n;
		strmap_put(&ml->by_key, t->key, (void *)(uintptr_t)ml->n);
	} else {
		t = &ml->t[at - 1];
		struct lcache old = { .e = t->e, .n = t->n };
		struct lcache_ent *v;
		size_t n;
		lcache_merge(&old, c.e, c.n, &v, &n);
		free(t->e);
		free(c.e);
		t->e = v;
		t->n = n;
	}
	t->ntables++;
	xgrow((void **)&t->bufs, &t->cbufs, t->nbufs + 1, sizeof(*t->bufs));
	t->bufs[t->nbufs++] = buf;
	return true;
}

int merge_lines_write(struct merge_lines *ml, struct dp_writer *w)
{
	static const uint8_t zero[LCACHE_KEY];
	for (size_t i = 0; i < ml->n; i++) {
		struct table *t = &ml->t[i];
		uint8_t *out = NULL;
		size_t len = 0;
		int err;
		/* a union over the limits: the first input's table, the rest of
		 * the addresses from the DWARF */
		if (t->ntables > 1 && lcache_encode(zero, t->e, t->n, &out, &len) == 0) {
			struct dp_symtab st = { DP_SYMTAB_LINES, t->name, out, len };
			err = dp_write_symtab(w, t->dom, &st);
			free(out);
			if (err != -EFBIG) {
				if (err)
					return err;
				continue;
			}
		}
		if ((err = dp_write_raw(w, t->dom, t->raw, t->raw_len)))
			return err;
	}
	return 0;
}

void merge_lines_free(struct merge_lines *ml)
{
	if (!ml)
		return;
	for (size_t i = 0; i < ml->n; i++) {
		struct table *t = &ml->t[i];
		for (size_t j = 0; j < t->nbufs; j++)
			free(t->bufs[j]);
		free(t->bufs);
		free(t->e);
		free(t->raw);
		free(t->key);
	}
	hmap_release(&ml->by_key);
	free(ml->t);
	free(ml);
}
