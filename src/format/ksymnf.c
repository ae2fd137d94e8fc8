// SPDX-License-Identifier: MIT
/*
 * The kernel symbol name filter (ksymnf.h; docs/file-format.md, SYMTAB
 * kind 9): built from a kernel symbol index's decoded blocks, so that it
 * holds exactly the names a reader of that index sees.
 *
 * Layout (little-endian): magic (8), u32 nblocks, u32 bytes per block
 * (a power of two, 8..4096), u32 k (bits per name, 1..16), u32 the
 * index's check (dp_ksymidx_check); then one flag byte per block, zeros
 * to a multiple of 8; then nblocks filters of `bytes` each.
 *
 * A name's bits: h = FNV-1a 64 of its bytes, h1 its low and h2 its high
 * 32 bits with the lowest bit set; bit i (0 <= i < k) is
 * (h1 + i * h2) mod (8 * bytes), bit j of a filter being bit j % 8 of
 * its byte j / 8 (double hashing, Kirsch and Mitzenmacher).
 */
#include "format/ksymnf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/le.h"
#include "util/why.h"
#include "util/xalloc.h"

struct dp_ksymnf {
	const uint8_t *flags;       /* per block, into the payload */
	const uint8_t *bits;        /* nblocks x bytes, into the payload */
	size_t nblocks;
	uint32_t bytes, k;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static size_t flags_size(size_t nblocks)
{
	return (nblocks + 7) & ~(size_t)7;
}

int dp_ksymnf_build(struct dp_ksymidx *ix, uint8_t **out, size_t *outlen, char *why,
		    size_t whylen)
{
	size_t nb = dp_ksymidx_nblocks(ix), fl = flags_size(nb);
	const uint32_t bytes = DP_KSYMNF_BYTES, k = DP_KSYMNF_K, mask = bytes * 8 - 1;
	size_t len = DP_KSYMNF_HEAD + fl + nb * bytes;
	uint8_t *p = xcalloc(1, len);
	memcpy(p, DP_KSYMNF_MAGIC, 8);
	put32(p + 8, (uint32_t)nb);
	put32(p + 12, bytes);
	put32(p + 16, k);
	put32(p + 20, dp_ksymidx_check(ix));
	uint8_t *flags = p + DP_KSYMNF_HEAD, *bits = flags + fl;
	for (size_t b = 0; b < nb; b++) {
		char w[128];
		const struct dp_ksymblk *d = dp_ksymidx_block(ix, b, w, sizeof(w));
		if (!d) {
			whyf(why, whylen, "block %zu: %s", b, w);
			free(p);
			return -EINVAL;
		}
		uint8_t *f = bits + b * bytes;
		for (uint32_t i = 0; i < d->n; i++) {
			if (!dp_ksym_core_text(d->type[i], d->mod[i], d->addr[i]))
				continue;
			const char *nm = d->names + d->name[i];
			size_t n = d->namelen[i];
			if (n >= 2 && nm[0] == '_' && (nm[1] == 'Z' || nm[1] == 'R'))
				flags[b] |= DP_KSYMNF_F_MANGLED;
			uint64_t h = fnv1a(nm, n);
			uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32) | 1;
			for (uint32_t j = 0; j < k; j++) {
				uint32_t bit = (h1 + j * h2) & mask;
				f[bit >> 3] |= (uint8_t)(1u << (bit & 7));
			}
		}
		/* one block's memory at a time: the recorder (in a guest too)
		 * should not touch the whole table's */
		dp_ksymidx_drop(ix, b);
	}
	*out = p;
	*outlen = len;
	return 0;
}

int dp_ksymnf_open(const uint8_t *p, size_t len, const struct dp_ksymidx *ix,
		   struct dp_ksymnf **out, char *why, size_t whylen)
{
	*out = NULL;
	if (len < DP_KSYMNF_HEAD || memcmp(p, DP_KSYMNF_MAGIC, 8)) {
		whyf(why, whylen, "no filter header");
		return -EINVAL;
	}
	uint32_t nb = get32(p + 8), bytes = get32(p + 12), k = get32(p + 16);
	if (nb != dp_ksymidx_nblocks(ix) || get32(p + 20) != dp_ksymidx_check(ix)) {
		whyf(why, whylen, "built for another index");
		return -EINVAL;
	}
	if (bytes < DP_KSYMNF_BYTES_MIN || bytes > DP_KSYMNF_BYTES_MAX || (bytes & (bytes - 1)) ||
	    !k || k > DP_KSYMNF_K_MAX) {
		whyf(why, whylen, "%u bytes a block, %u bits a name", bytes, k);
		return -EINVAL;
	}
	/* nb <= DP_KSYMIDX_SYMS_MAX and bytes <= 4096: no overflow */
	size_t fl = flags_size(nb);
	if (len != DP_KSYMNF_HEAD + fl + (size_t)nb * bytes) {
		whyf(why, whylen, "%zu bytes for %u blocks of %u", len, nb, bytes);
		return -EINVAL;
	}
	struct dp_ksymnf *f = xcalloc(1, sizeof(*f));
	f->flags = p + DP_KSYMNF_HEAD;
	f->bits = f->flags + fl;
	f->nblocks = nb;
	f->bytes = bytes;
	f->k = k;
	*out = f;
	return 0;
}

void dp_ksymnf_free(struct dp_ksymnf *f)
{
	free(f);
}

bool dp_ksymnf_maybe(const struct dp_ksymnf *f, size_t b, const char *name, size_t len)
{
	if (b >= f->nblocks || (f->flags[b] & DP_KSYMNF_F_MANGLED))
		return true;
	const uint8_t *bits = f->bits + b * f->bytes;
	uint32_t mask = f->bytes * 8 - 1;
	uint64_t h = fnv1a(name, len);
	uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32) | 1;
	for (uint32_t j = 0; j < f->k; j++) {
		uint32_t bit = (h1 + j * h2) & mask;
		if (!(bits[bit >> 3] & (1u << (bit & 7))))
			return false;
	}
	return true;
}
