// SPDX-License-Identifier: MIT
/*
 * The kernel symbol index (ksymidx.h; docs/file-format.md, SYMTAB kind 8):
 * its writer, the validation of its index, and the decoding of one block.
 *
 * Layout (little-endian): a 40-byte header, the module name table padded
 * to 8, nblocks index entries of 48 bytes, then the blocks' zstd frames
 * back to back. A block's raw bytes are columns: count ULEB128 address
 * deltas (the first from the block's first_addr, so 0), count type
 * bytes, count ULEB128 module numbers, count NUL-terminated names.
 * Columns compress better than lines: the deltas and types repeat.
 */
#include "format/ksymidx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util/crc32c.h"
#include "util/le.h"
#include "util/why.h"
#include "util/xalloc.h"

struct dec {
	struct dp_ksymblk b;
	uint8_t *raw;
	char *names;                /* the names, references expanded */
	bool bad;
};

struct dp_ksymidx {
	const uint8_t *data;        /* the block area */
	size_t nblocks, nsyms, nmods;
	uint64_t total_raw, decoded;
	uint32_t check;             /* crc32c of the bytes before the block area */
	struct dp_ksymidx_block *blk;
	const uint8_t **modname;    /* into the payload */
	uint8_t *modlen;
	const uint8_t *modrange;    /* nmods x (u64 lo, u64 hi), into the payload */
	struct dec **dec;           /* decoded blocks, NULL until asked */
	ZSTD_DCtx *dctx;
};

/* ---- writing ---- */

static uint8_t *put_uleb(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static bool storable(const struct dp_ksym *e, size_t nmods)
{
	return e->namelen && e->namelen <= DP_KSYMIDX_NAME_MAX && e->mod <= nmods &&
	       e->name[0] != DP_KSYMIDX_REF && !memchr(e->name, 0, e->namelen);
}

int dp_ksymidx_encode(const struct dp_ksym *v, size_t n, const char *const *mods,
		      const uint32_t *modlens, size_t nmods, int level, uint8_t **out,
		      size_t *outlen, size_t *dropped)
{
	size_t drop = 0;
	if (n > DP_KSYMIDX_SYMS_MAX || nmods > DP_KSYMIDX_MODS_MAX)
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (v[i].addr < v[i - 1].addr)
			return -EINVAL;
	size_t modtab = 0;
	for (size_t i = 0; i < nmods; i++) {
		if (!modlens[i] || modlens[i] > DP_KSYMIDX_MOD_NAME_MAX || memchr(mods[i], 0, modlens[i]))
			return -EINVAL;
		modtab += 1 + modlens[i];
	}
	/* the blocks: [bstart[b], bstart[b+1]) of v, an address never split */
	size_t *bstart = xmalloc((n / DP_KSYMIDX_BLOCK + 2) * sizeof(*bstart) * 2);
	size_t nb = 0;
	for (size_t i = 0; i < n;) {
		bstart[nb++] = i;
		size_t j = i + (n - i < DP_KSYMIDX_BLOCK ? n - i : DP_KSYMIDX_BLOCK);
		while (j < n && j - i < DP_KSYMIDX_BLOCK_MAX && v[j].addr == v[j - 1].addr)
			j++;
		while (j < n && v[j].addr == v[j - 1].addr)
			j++;    /* past BLOCK_MAX at one address: dropped below */
		i = j;
	}
	bstart[nb] = n;
	size_t modpart = ((modtab + 7) & ~(size_t)7) + nmods * 16;
	size_t head = DP_KSYMIDX_HEAD + modpart + nb * DP_KSYMIDX_ENTRY;
	size_t cap = head + 64;
	uint8_t *o = xcalloc(1, cap);
	uint8_t *scratch = NULL;
	size_t scap = 0;
	const struct dp_ksym **pick = xmalloc(DP_KSYMIDX_BLOCK_MAX * sizeof(*pick));
	bool *isref = xmalloc(DP_KSYMIDX_BLOCK_MAX * sizeof(*isref));
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	if (!cc) {
		free(o);
		free(bstart);
		free(pick);
		free(isref);
		return -ENOMEM;
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	/* 4 bytes a block: damage shows as damage, not as other names */
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	size_t data = 0, total = 0, nsyms = 0, nblk = 0;
	for (size_t b = 0; b < nb; b++) {
		size_t i0 = bstart[b], i1 = bstart[b + 1];
		/* the entries kept: storable, at most BLOCK_MAX (each checked
		 * once: the check reads the whole name) */
		size_t need = 0, cnt = 0;
		for (size_t i = i0; i < i1 && cnt < DP_KSYMIDX_BLOCK_MAX; i++)
			if (storable(&v[i], nmods)) {
				need += DP_KSYMIDX_ENTRY_RAW_MAX;
				pick[cnt++] = &v[i];
			}
		drop += (i1 - i0) - cnt;
		if (!cnt)
			continue;
		if (need > scap) {
			free(scratch);
			scratch = xmalloc(need);
			scap = need;
		}
		/* columns */
		uint8_t *p = scratch;
		uint64_t prev = pick[0]->addr, tf = 0, tl = 0;
		uint32_t flags = 0;
		for (size_t k = 0; k < cnt; k++) {
			const struct dp_ksym *e = pick[k];
			p = put_uleb(p, e->addr - prev);
			prev = e->addr;
			if (dp_ksym_core_text(e->type, e->mod, e->addr)) {
				if (!tf)
					tf = e->addr;
				tl = e->addr;
			}
			if (e->mod)
				flags |= DP_KSYMIDX_F_MODULES;
		}
		uint64_t first_addr = pick[0]->addr;
		for (size_t k = 0; k < cnt; k++)
			*p++ = (uint8_t)pick[k]->type;
		for (size_t k = 0; k < cnt; k++)
			p = put_uleb(p, pick[k]->mod);
		/* names: "PREFIX + the next entry's name" as a reference
		 * (\1PREFIX), decided from the last entry back so that a
		 * reference's target is always a plain name: the kernel's
		 * __pfx_NAME padding symbols, half of a kallsyms, come right
		 * before their NAME */
		bool next_ref = true;
		for (size_t q = cnt; q-- > 0;) {
			const struct dp_ksym *e = pick[q], *nx = q + 1 < cnt ? pick[q + 1] : NULL;
			isref[q] = nx && !next_ref && e->namelen > nx->namelen &&
				   e->namelen - nx->namelen <= DP_KSYMIDX_REF_PREFIX_MAX &&
				   !memcmp(e->name + (e->namelen - nx->namelen), nx->name, nx->namelen);
			next_ref = isref[q];
		}
		for (size_t k = 0; k < cnt; k++) {
			const struct dp_ksym *e = pick[k];
			size_t l = isref[k] ? e->namelen - pick[k + 1]->namelen : e->namelen;
			if (isref[k])
				*p++ = DP_KSYMIDX_REF;
			memcpy(p, e->name, l);
			p += l;
			*p++ = 0;
		}
		size_t raw = (size_t)(p - scratch);
		size_t bound = ZSTD_compressBound(raw);
		if (head + data + bound > cap) {
			size_t nc = (head + data + bound) * 2;
			o = xrealloc(o, nc);
			cap = nc;
		}
		size_t z = ZSTD_compress2(cc, o + head + data, bound, scratch, raw);
		if (ZSTD_isError(z) || z > UINT32_MAX || data + z > UINT32_MAX) {
			ZSTD_freeCCtx(cc);
			free(pick);
			free(isref);
			free(scratch);
			free(bstart);
			free(o);
			return -ENOMEM;
		}
		uint8_t *e = o + DP_KSYMIDX_HEAD + modpart + nblk * DP_KSYMIDX_ENTRY;
		memset(e, 0, DP_KSYMIDX_ENTRY);
		put64(e, first_addr);
		put64(e + 8, tf);
		put64(e + 16, tl);
		put32(e + 24, (uint32_t)data);
		put32(e + 28, (uint32_t)z);
		put32(e + 32, (uint32_t)raw);
		put32(e + 36, (uint32_t)cnt);
		put32(e + 40, flags);
		data += z;
		total += raw;
		nsyms += cnt;
		nblk++;
	}
	ZSTD_freeCCtx(cc);
	free(scratch);
	free(bstart);
	free(pick);
	free(isref);
	/* fewer blocks than planned (all of one dropped): close the gap
	 * between the index and the data */
	size_t realhead = DP_KSYMIDX_HEAD + modpart + nblk * DP_KSYMIDX_ENTRY;
	if (realhead != head)
		memmove(o + realhead, o + head, data);
	memcpy(o, DP_KSYMIDX_MAGIC, 8);
	put32(o + 8, (uint32_t)nsyms);
	put32(o + 12, (uint32_t)nblk);
	put32(o + 16, (uint32_t)nmods);
	put32(o + 20, (uint32_t)modtab);
	put64(o + 24, total);
	put64(o + 32, data);
	uint8_t *m = o + DP_KSYMIDX_HEAD;
	for (size_t i = 0; i < nmods; i++) {
		*m++ = (uint8_t)modlens[i];
		memcpy(m, mods[i], modlens[i]);
		m += modlens[i];
	}
	while ((size_t)(m - o - DP_KSYMIDX_HEAD) & 7)
		*m++ = 0;
	/* each module's text range: what a report needs to place a module
	 * without decoding its symbols */
	for (size_t i = 0; i < n; i++)
		if (v[i].mod && v[i].mod <= nmods && storable(&v[i], nmods) &&
		    dp_ksym_text(v[i].type, v[i].addr)) {
			uint8_t *r = m + 16 * (v[i].mod - 1);
			if (!get64(r) || v[i].addr < get64(r))
				put64(r, v[i].addr);
			if (v[i].addr > get64(r + 8))
				put64(r + 8, v[i].addr);
		}
	*out = o;
	*outlen = realhead + data;
	if (dropped)
		*dropped = drop;
	return 0;
}

/* ---- reading ---- */

int dp_ksymidx_open(const uint8_t *p, size_t len, struct dp_ksymidx **out, char *why,
		    size_t whylen)
{
	*out = NULL;
	if (len < DP_KSYMIDX_HEAD || memcmp(p, DP_KSYMIDX_MAGIC, 8)) {
		whyf(why, whylen, "no index header");
		return -EINVAL;
	}
	uint32_t nsyms = get32(p + 8), nblocks = get32(p + 12), nmods = get32(p + 16);
	uint32_t modtab = get32(p + 20);
	uint64_t total = get64(p + 24), data = get64(p + 32);
	if (nsyms > DP_KSYMIDX_SYMS_MAX || nblocks > nsyms || (!nblocks) != (!nsyms)) {
		whyf(why, whylen, "%u symbols in %u blocks", nsyms, nblocks);
		return -EINVAL;
	}
	if (nmods > DP_KSYMIDX_MODS_MAX || modtab > nmods * (1u + DP_KSYMIDX_MOD_NAME_MAX)) {
		whyf(why, whylen, "module table of %u names in %u bytes", nmods, modtab);
		return -EINVAL;
	}
	uint64_t range_at = DP_KSYMIDX_HEAD + (((uint64_t)modtab + 7) & ~7ull);
	uint64_t idx_at = range_at + (uint64_t)nmods * 16;
	uint64_t data_at = idx_at + (uint64_t)nblocks * DP_KSYMIDX_ENTRY;
	if (data_at > len || data != len - data_at) {
		whyf(why, whylen, "index or blocks past the end of the table");
		return -EINVAL;
	}
	if (total > (1ull << 30)) {
		whyf(why, whylen, "%llu bytes uncompressed", (unsigned long long)total);
		return -EINVAL;
	}
	struct dp_ksymidx *ix = xcalloc(1, sizeof(*ix));
	ix->nblocks = nblocks;
	ix->nsyms = nsyms;
	ix->nmods = nmods;
	ix->total_raw = total;
	ix->data = p + data_at;
	ix->check = crc32c(0, p, data_at);
	ix->modname = xcalloc(nmods + 1, sizeof(*ix->modname));
	ix->modlen = xcalloc(nmods + 1, 1);
	const uint8_t *m = p + DP_KSYMIDX_HEAD, *me = m + modtab;
	for (uint32_t i = 0; i < nmods; i++) {
		if (m >= me || !*m || *m > me - m - 1 || memchr(m + 1, 0, *m)) {
			whyf(why, whylen, "module name %u cut or empty", i);
			goto bad;
		}
		ix->modlen[i] = *m;
		ix->modname[i] = m + 1;
		m += 1 + *m;
	}
	if (m != me) {
		whyf(why, whylen, "module table size does not match its names");
		goto bad;
	}
	ix->modrange = p + range_at;
	for (uint32_t i = 0; i < nmods; i++) {
		uint64_t lo = get64(ix->modrange + 16 * i), hi = get64(ix->modrange + 16 * i + 8);
		if ((!lo) != (!hi) || lo > hi) {
			whyf(why, whylen, "module %u text range", i);
			goto bad;
		}
	}
	ix->blk = xcalloc(nblocks + 1, sizeof(*ix->blk));
	ix->dec = xcalloc(nblocks + 1, sizeof(*ix->dec));
	uint64_t off = 0, sum = 0, syms = 0;
	for (uint32_t i = 0; i < nblocks; i++) {
		const uint8_t *e = p + idx_at + (uint64_t)i * DP_KSYMIDX_ENTRY;
		struct dp_ksymidx_block *b = &ix->blk[i];
		b->first_addr = get64(e);
		b->text_first = get64(e + 8);
		b->text_last = get64(e + 16);
		b->offset = get32(e + 24);
		b->stored = get32(e + 28);
		b->raw = get32(e + 32);
		b->count = get32(e + 36);
		b->flags = get32(e + 40);
		b->first_entry = (uint32_t)syms;
		if (!b->count || b->count > DP_KSYMIDX_BLOCK_MAX) {
			whyf(why, whylen, "block %u holds %u entries", i, b->count);
			goto bad;
		}
		if (b->raw < (uint64_t)b->count * DP_KSYMIDX_ENTRY_RAW_MIN ||
		    b->raw > (uint64_t)b->count * DP_KSYMIDX_ENTRY_RAW_MAX) {
			whyf(why, whylen, "block %u: %u raw bytes for %u entries", i, b->raw, b->count);
			goto bad;
		}
		if (b->offset != off || !b->stored || b->stored > data - off) {
			whyf(why, whylen, "block %u offset or size past the end", i);
			goto bad;
		}
		if (i && b->first_addr <= ix->blk[i - 1].first_addr) {
			whyf(why, whylen, "blocks not sorted at block %u", i);
			goto bad;
		}
		if ((!b->text_first) != (!b->text_last) ||
		    (b->text_first && (b->text_first < b->first_addr || b->text_last < b->text_first))) {
			whyf(why, whylen, "block %u text range out of the block", i);
			goto bad;
		}
		if (i && ix->blk[i - 1].text_last && ix->blk[i - 1].text_last >= b->first_addr) {
			whyf(why, whylen, "block %u text range out of the block", i - 1);
			goto bad;
		}
		off += b->stored;
		sum += b->raw;
		syms += b->count;
	}
	if (off != data || sum != total || syms != nsyms) {
		whyf(why, whylen, "block sizes or counts do not add up to the header's");
		goto bad;
	}
	*out = ix;
	return 0;
bad:
	dp_ksymidx_free(ix);
	return -EINVAL;
}

void dp_ksymidx_drop(struct dp_ksymidx *ix, size_t i)
{
	if (!ix->dec || i >= ix->nblocks || !ix->dec[i])
		return;
	free((void *)ix->dec[i]->b.addr);
	free(ix->dec[i]->raw);
	free(ix->dec[i]->names);
	free(ix->dec[i]);
	ix->dec[i] = NULL;
}

void dp_ksymidx_free(struct dp_ksymidx *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; ix->dec && i < ix->nblocks; i++)
		dp_ksymidx_drop(ix, i);
	free(ix->dec);
	free(ix->blk);
	free(ix->modname);
	free(ix->modlen);
	ZSTD_freeDCtx(ix->dctx);
	free(ix);
}

size_t dp_ksymidx_nblocks(const struct dp_ksymidx *ix) { return ix->nblocks; }
uint32_t dp_ksymidx_check(const struct dp_ksymidx *ix) { return ix->check; }
size_t dp_ksymidx_nsyms(const struct dp_ksymidx *ix) { return ix->nsyms; }
uint64_t dp_ksymidx_total_raw(const struct dp_ksymidx *ix) { return ix->total_raw; }
uint64_t dp_ksymidx_decoded(const struct dp_ksymidx *ix) { return ix->decoded; }
size_t dp_ksymidx_nmods(const struct dp_ksymidx *ix) { return ix->nmods; }

const struct dp_ksymidx_block *dp_ksymidx_index(const struct dp_ksymidx *ix, size_t i)
{
	return i < ix->nblocks ? &ix->blk[i] : NULL;
}

const char *dp_ksymidx_mod(const struct dp_ksymidx *ix, size_t i, size_t *len)
{
	if (i >= ix->nmods) {
		*len = 0;
		return NULL;
	}
	*len = ix->modlen[i];
	return (const char *)ix->modname[i];
}

bool dp_ksymidx_mod_range(const struct dp_ksymidx *ix, size_t i, uint64_t *lo, uint64_t *hi)
{
	if (i >= ix->nmods)
		return false;
	*lo = get64(ix->modrange + 16 * i);
	*hi = get64(ix->modrange + 16 * i + 8);
	return *lo != 0;
}

size_t dp_ksymidx_block_of(const struct dp_ksymidx *ix, size_t e)
{
	if (e >= ix->nsyms)
		return SIZE_MAX;
	size_t lo = 0, hi = ix->nblocks;    /* last block with first_entry <= e */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->blk[mid].first_entry <= e)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static __attribute__((noinline)) bool get_uleb_slow(const uint8_t **pp, const uint8_t *end,
						     uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	for (unsigned sh = 0; p < end && sh < 64; sh += 7) {
		uint8_t c = *p++;
		if (sh == 63 && c > 1)
			return false;
		v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*pp = p;
			*out = v;
			return true;
		}
	}
	return false;
}

/* Most values are one byte: that case inline. */
static inline bool get_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	if (*pp < end && **pp < 0x80) {
		*out = *(*pp)++;
		return true;
	}
	return get_uleb_slow(pp, end, out);
}

/* Parse and check the raw bytes of block i into d. */
static bool parse_block(const struct dp_ksymidx *ix, size_t i, struct dec *d, char *why,
			size_t whylen)
{
	const struct dp_ksymidx_block *b = &ix->blk[i];
	uint32_t n = b->count;
	const uint8_t *p = d->raw, *end = d->raw + b->raw;
	/* one allocation for the columns: 8+4+2+2+1 bytes an entry (the
	 * types are copied: the raw bytes are freed once the names are) */
	uint8_t *mem = xmalloc((size_t)n * 17);
	uint64_t *addr = (uint64_t *)(void *)mem;
	uint32_t *name = (uint32_t *)(void *)(mem + (size_t)n * 8);
	uint16_t *mod = (uint16_t *)(void *)(mem + (size_t)n * 12);
	uint16_t *nlen = (uint16_t *)(void *)(mem + (size_t)n * 14);
	d->b.addr = addr;    /* freed with the block, also on failure */
	uint64_t a = b->first_addr, tf = 0, tl = 0;
	uint64_t limit = i + 1 < ix->nblocks ? ix->blk[i + 1].first_addr : UINT64_MAX;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t dv;
		if (!get_uleb(&p, end, &dv) || (k == 0 && dv) || dv > UINT64_MAX - a) {
			whyf(why, whylen, "block %zu: bad address %u", i, k);
			return false;
		}
		a += dv;
		if (a >= limit && i + 1 < ix->nblocks) {
			whyf(why, whylen, "block %zu: address past the next block's", i);
			return false;
		}
		addr[k] = a;
	}
	if ((size_t)(end - p) < n) {
		whyf(why, whylen, "block %zu: types cut", i);
		return false;
	}
	const char *type = (const char *)p;
	p += n;
	uint32_t flags = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t m;
		if (!get_uleb(&p, end, &m) || m > ix->nmods) {
			whyf(why, whylen, "block %zu: bad module of entry %u", i, k);
			return false;
		}
		mod[k] = (uint16_t)m;
		if (m)
			flags |= DP_KSYMIDX_F_MODULES;
		if (m && dp_ksym_text(type[k], addr[k]) &&
		    (addr[k] < get64(ix->modrange + 16 * (m - 1)) ||
		     addr[k] > get64(ix->modrange + 16 * (m - 1) + 8))) {
			whyf(why, whylen, "block %zu: entry %u outside its module's range", i, k);
			return false;
		}
		if (dp_ksym_core_text(type[k], (uint32_t)m, addr[k])) {
			if (!tf)
				tf = addr[k];
			tl = addr[k];
		}
	}
	/* names: where each is in the raw bytes (name[] for now), then the
	 * references expanded, from the last back, into one buffer */
	const uint8_t *names0 = p;
	size_t total = 0;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *z = memchr(p, 0, (size_t)(end - p));
		size_t l = z ? (size_t)(z - p) : 0;
		bool ref = l && *p == DP_KSYMIDX_REF;
		if (!z || !l || l > DP_KSYMIDX_NAME_MAX ||
		    (ref && (l < 2 || l - 1 > DP_KSYMIDX_REF_PREFIX_MAX))) {
			whyf(why, whylen, "block %zu: name of entry %u cut, empty or too long", i, k);
			return false;
		}
		name[k] = (uint32_t)(p - names0);
		nlen[k] = (uint16_t)l;
		p = z + 1;
	}
	if (p != end) {
		whyf(why, whylen, "block %zu: bytes after the last name", i);
		return false;
	}
	for (uint32_t k = n; k-- > 0;) {
		if (names0[name[k]] != DP_KSYMIDX_REF) {
			total += nlen[k] + 1u;
			continue;
		}
		if (k + 1 == n || names0[name[k + 1]] == DP_KSYMIDX_REF ||
		    nlen[k] - 1u + nlen[k + 1] > DP_KSYMIDX_NAME_MAX) {
			whyf(why, whylen, "block %zu: name of entry %u refers to no plain name", i, k);
			return false;
		}
		total += nlen[k] - 1u + nlen[k + 1] + 1u;
	}
	char *names = d->names = xmalloc(total ? total : 1);
	size_t o = 0;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *src = names0 + name[k];
		size_t l = nlen[k];
		name[k] = (uint32_t)o;
		if (*src == DP_KSYMIDX_REF) {
			/* the next entry is plain: its bytes are still in the raw */
			const uint8_t *nx = src + l + 1;
			size_t nl = strlen((const char *)nx);
			memcpy(names + o, src + 1, l - 1);
			memcpy(names + o + l - 1, nx, nl);
			l = l - 1 + nl;
		} else {
			memcpy(names + o, src, l);
		}
		names[o + l] = 0;
		nlen[k] = (uint16_t)l;
		o += l + 1;
	}
	if (tf != b->text_first || tl != b->text_last ||
	    (flags & DP_KSYMIDX_F_MODULES) != (b->flags & DP_KSYMIDX_F_MODULES)) {
		whyf(why, whylen, "block %zu does not match its index entry", i);
		return false;
	}
	char *types = (char *)mem + (size_t)n * 16;
	memcpy(types, type, n);
	d->b.n = n;
	d->b.type = types;
	d->b.mod = mod;
	d->b.name = name;
	d->b.namelen = nlen;
	d->b.names = names;
	return true;
}

const struct dp_ksymblk *dp_ksymidx_block(struct dp_ksymidx *ix, size_t i, char *why,
					  size_t whylen)
{
	if (i >= ix->nblocks)
		return NULL;
	struct dec *d = ix->dec[i];
	if (d) {
		if (d->bad)
			whyf(why, whylen, "block %zu is damaged", i);
		return d->bad ? NULL : &d->b;
	}
	d = ix->dec[i] = xcalloc(1, sizeof(*d));
	const struct dp_ksymidx_block *b = &ix->blk[i];
	const uint8_t *z = ix->data + b->offset;
	d->raw = xmalloc(b->raw ? b->raw : 1);
	if (!ix->dctx)
		ix->dctx = ZSTD_createDCtx();
	unsigned long long fs = ZSTD_getFrameContentSize(z, b->stored);
	size_t got = fs == b->raw && ix->dctx ? ZSTD_decompressDCtx(ix->dctx, d->raw, b->raw, z, b->stored)
					       : 0;
	if (fs != b->raw || !ix->dctx || ZSTD_isError(got) || got != b->raw) {
		whyf(why, whylen, "block %zu does not decompress to its size", i);
		d->bad = true;
	} else {
		ix->decoded += b->raw;
		d->bad = !parse_block(ix, i, d, why, whylen);
	}
	/* the block is its columns and names now: its raw bytes go */
	free(d->raw);
	d->raw = NULL;
	if (d->bad) {
		free((void *)d->b.addr);
		d->b.addr = NULL;
		free(d->names);
		d->names = NULL;
		return NULL;
	}
	return &d->b;
}
