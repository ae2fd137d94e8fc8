// SPDX-License-Identifier: MIT
/*
 * Unit tests for the kernel symbol index (SYMTAB kind 8: format/ksymidx.c,
 * its writer sideband_kallsyms_index and its reader in symbols/ktab.c):
 *
 * - one kallsyms text (12,000 symbols: aliases of every rank, __pfx_
 *   padding symbols, data symbols, zero addresses, two modules listed
 *   out of address order) is given to one session as kind 1 text and to
 *   another as the index; every probed address (each symbol's start, its
 *   middle, its last byte, the gaps and the ends) must resolve the same
 *   in both: image, name, start, end, known. Control: an index made
 *   from the text with one name changed must differ at that symbol.
 * - a valid index only decodes the blocks the lookups touch.
 * - hostile indexes: a cut index, blocks out of order, an offset past
 *   the end, a huge entry count, raw sizes over the bound, sizes that do
 *   not add up, a bad module table are refused by dp_ksymidx_open; a
 *   damaged block (zstd bytes, a reference at a block's end) by
 *   dp_ksymidx_block; in a session either becomes one warning and
 *   [unknown] kernel samples (or, for a refused index with a kallsyms
 *   text beside it, the text's names), never a crash.
 * - the kernel symbol cache file (symbols/kcache.c): a good file of the
 *   right key passes kcache_check and names the index; the same file
 *   under another key is refused as stale (control); every cut and a
 *   flipped bit in each header byte and through the index are refused,
 *   never read outside the buffer; the index of a text with bad lines
 *   counts them. kcache_store writes it atomically (no temporary left)
 *   and kcache_load reads it back, into a DOMPROF_CACHE directory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "collect/sideband.h"
#include "format/format.h"
#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "symbols/kcache.h"
#include "symbols/symbols.h"
#include "unit.h"
#include "util/le.h"
#include "util/xalloc.h"

#define NSYM 12000
#define BASE 0xffffffff81000000ull
#define MODA 0xffffffffc0010000ull
#define MODB 0xffffffffc0002000ull

/* The kallsyms text; symbol i of the core at BASE + 0x40*i. */
static char *make_text(size_t *len, int rename)
{
	size_t cap = (size_t)NSYM * 160 + 4096, o = 0;
	char *t = xmalloc(cap);
#define L(...) (o += (size_t)snprintf(t + o, cap - o, __VA_ARGS__))
	L("0000000000000000 A fixed_percpu_data\n");
	L("0000000000000000 T zero_text\n");    /* kptr_restrict style: never a function */
	for (unsigned i = 0; i < NSYM; i++) {
		unsigned long long a = BASE + 0x40ull * i;
		if (i % 2 == 0 && i)
			L("%016llx t __pfx_%s%u\n", a - 16, i % 5 ? "fn_" : "f", i);
		if (i % 97 == 0)
			L("%016llx T __a%u\n", a, i);       /* as long as fn_N, more underscores: loses */
		if (i % 194 == 0) {
			L("%016llx T zn_%u\n", a, i);       /* same rank as fn_: alphabetical */
			L("%016llx W s_%u\n", a, i);        /* shorter but weak: loses */
		}
		if (i == (unsigned)rename)
			L("%016llx T renamed_%u\n", a, i);
		else
			L("%016llx %c %s%u\n", a, i % 3 ? 'T' : 't', i % 5 ? "fn_" : "f", i);
		if (i % 1000 == 1)
			L("%016llx D data_%u\n", a + 8, i);  /* data: never a function */
	}
	/* modules after the core, each listed in its own order */
	for (unsigned i = 0; i < 40; i++)
		L("%016llx t moda_%u\t[moda]\n", (unsigned long long)(MODA + 0x100ull * (39 - i)), 39 - i);
	L("%016llx d moda_data\t[moda]\n", (unsigned long long)(MODA + 0x9000));
	for (unsigned i = 0; i < 30; i++)
		L("%016llx T modb_%u\t[modb]\n", (unsigned long long)(MODB + 0x80ull * i), i);
#undef L
	*len = o;
	return t;
}

static void add_table(struct sym_session *s, uint32_t kind, const void *data, size_t len)
{
	struct dp_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.type = DP_REC_SYMTAB;
	rec.u.symtab.kind = kind;
	rec.u.symtab.name = "kallsyms";
	rec.u.symtab.data = data;
	rec.u.symtab.size = len;
	rec.symtab_stored = data;
	rec.symtab_stored_size = len;
	sym_add_symtab_rec(s, &rec);
}

static struct sym_session *session_of(uint32_t kind, const void *data, size_t len)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 0, DP_DOMAIN_HOST, "host", 0);
	add_table(s, kind, data, len);
	return s;
}

static void resolve(struct sym_session *s, uint64_t ip, struct sym_result *r)
{
	const struct sym_map *m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, ip);
	sym_resolve(s, m, ip, r);
}

/* Probes for both sessions; the number of addresses that differ. */
static size_t compare(struct sym_session *a, struct sym_session *b, bool verbose)
{
	size_t bad = 0, n = 0;
	uint64_t extra[] = { 0, 1, BASE - 1, BASE - 17, BASE - 16, MODB - 1, MODB, MODA + 0x9000,
			     MODA + 0x3000, BASE + 0x40ull * NSYM + 4095, BASE + 0x40ull * NSYM + 8192,
			     0xffffffffffffffffull };
	for (size_t k = 0; k < NSYM * 3 + sizeof(extra) / sizeof(extra[0]); k++) {
		uint64_t ip;
		if (k < NSYM * 3) {
			uint64_t s0 = BASE + 0x40ull * (k / 3);
			ip = k % 3 == 0 ? s0 : k % 3 == 1 ? s0 - 9 : s0 + 0x3f;
		} else {
			ip = extra[k - NSYM * 3];
		}
		struct sym_result x, y;
		resolve(a, ip, &x);
		resolve(b, ip, &y);
		n++;
		if (x.known != y.known || strcmp(x.symbol, y.symbol) || strcmp(x.image, y.image) ||
		    (x.known && (x.sym_start != y.sym_start || x.sym_end != y.sym_end))) {
			if (verbose && bad < 5)
				fprintf(stderr, "ip 0x%llx: text %s %s [%llx,%llx) %d, index %s %s [%llx,%llx) %d\n",
					(unsigned long long)ip, x.image, x.symbol,
					(unsigned long long)x.sym_start, (unsigned long long)x.sym_end, x.known,
					y.image, y.symbol, (unsigned long long)y.sym_start,
					(unsigned long long)y.sym_end, y.known);
			bad++;
		}
	}
	/* module symbols, each of them */
	for (unsigned i = 0; i < 40; i++) {
		struct sym_result x, y;
		resolve(a, MODA + 0x100ull * i + 3, &x);
		resolve(b, MODA + 0x100ull * i + 3, &y);
		if (strcmp(x.symbol, y.symbol) || strcmp(x.image, y.image))
			bad++;
	}
	CHECK(n > NSYM * 3);
	return bad;
}

static void test_same_as_text(void)
{
	size_t len, ixlen, rlen, rixlen;
	char *text = make_text(&len, -1);
	uint8_t *ix = sideband_kallsyms_index(text, len, &ixlen);
	CHECK(ix != NULL);
	struct dp_ksymidx *x;
	char why[160];
	CHECK(dp_ksymidx_open(ix, ixlen, &x, why, sizeof(why)) == 0);
	size_t nb = dp_ksymidx_nblocks(x);
	CHECK(nb > 10);
	dp_ksymidx_free(x);

	struct sym_session *a = session_of(DP_SYMTAB_KALLSYMS, text, len);
	struct sym_session *b = session_of(DP_SYMTAB_KSYMIDX, ix, ixlen);
	CHECK(compare(a, b, true) == 0);
	struct sym_result r;
	resolve(b, BASE + 0x40ull * 194 + 5, &r);
	CHECK_STR(r.symbol, "fn_194");          /* alias rules */
	resolve(b, BASE + 0x40ull * 10 - 3, &r);
	CHECK_STR(r.symbol, "__pfx_f10");       /* a reference name expanded */
	resolve(b, MODA + 0x100ull * 7 + 1, &r);
	CHECK_STR(r.image, "[moda]");
	CHECK_STR(r.symbol, "moda_7");
	resolve(b, MODB + 0x80ull * 29 + 1, &r);
	CHECK_STR(r.image, "[modb]");
	const char *const *w;
	CHECK(sym_warnings(b, &w) == 0);
	sym_session_free(b);

	/* the control: a changed name must show */
	char *rtext = make_text(&rlen, 4321);
	uint8_t *rix = sideband_kallsyms_index(rtext, rlen, &rixlen);
	b = session_of(DP_SYMTAB_KSYMIDX, rix, rixlen);
	CHECK(compare(a, b, false) == 1);   /* its start (its end is __pfx_fn_4322's) */
	sym_session_free(b);
	sym_session_free(a);
	free(rix);
	free(rtext);

	/* a module's symbols load on its first lookup (kernel_load_module),
	 * after core lookups */
	b = session_of(DP_SYMTAB_KSYMIDX, ix, ixlen);
	resolve(b, BASE + 0x40ull * 100, &r);
	CHECK_STR(r.symbol, "f100");
	resolve(b, MODB + 0x80ull * 2, &r);
	CHECK_STR(r.symbol, "modb_2");
	CHECK_STR(r.image, "[modb]");
	sym_session_free(b);

	/* one lookup decodes one block, not the table */
	CHECK(dp_ksymidx_open(ix, ixlen, &x, why, sizeof(why)) == 0);
	const struct dp_ksymblk *blk = dp_ksymidx_block(x, 3, why, sizeof(why));
	CHECK(blk != NULL);
	CHECK(dp_ksymidx_decoded(x) == dp_ksymidx_index(x, 3)->raw);
	CHECK(dp_ksymidx_decoded(x) < dp_ksymidx_total_raw(x) / 8);
	CHECK(dp_ksymidx_block(x, 3, why, sizeof(why)) == blk);   /* cached */
	dp_ksymidx_free(x);
	free(ix);
	free(text);
}

/* ---- hostile indexes ---- */

static size_t mods_at(const uint8_t *p)
{
	return DP_KSYMIDX_HEAD + ((get32(p + 20) + 7u) & ~7u);
}

static size_t idx_at(const uint8_t *p)
{
	return mods_at(p) + (size_t)get32(p + 16) * DP_KSYMIDX_MOD_RANGE;
}

static bool opens(const uint8_t *p, size_t len, const char *want)
{
	struct dp_ksymidx *x = NULL;
	char why[160] = "";
	int r = dp_ksymidx_open(p, len, &x, why, sizeof(why));
	dp_ksymidx_free(x);
	if (r && want && !strstr(why, want))
		fprintf(stderr, "refused for '%s', expected '%s'\n", why, want);
	return r == 0 && (!want || !*want);
}

static void test_hostile(void)
{
	size_t len, n;
	char *text = make_text(&len, -1);
	uint8_t *ix = sideband_kallsyms_index(text, len, &n);
	uint8_t *c = xmalloc(n);
	CHECK(opens(ix, n, NULL));
	size_t ia = idx_at(ix);
	uint32_t nb = get32(ix + 12);
	CHECK(nb > 3);
	struct sym_session *s0;
#define FRESH() memcpy(c, ix, n)
	/* cut: in the header, in the index, in the blocks */
	CHECK(!opens(ix, 20, "no index header"));
	CHECK(!opens(ix, ia + 10, "past the end"));
	CHECK(!opens(ix, n - 1, "past the end"));
	/* blocks out of order */
	FRESH();
	put64(c + ia + DP_KSYMIDX_ENTRY * 2, get64(c + ia + DP_KSYMIDX_ENTRY * 1) - 1);
	CHECK(!opens(c, n, "not sorted"));
	/* an offset past the end, a stored size past the end */
	FRESH();
	put32(c + ia + DP_KSYMIDX_ENTRY * 1 + 24, 0x7fffffff);
	CHECK(!opens(c, n, "past the end"));
	FRESH();
	put32(c + ia + DP_KSYMIDX_ENTRY * (nb - 1) + 28, 0x7fffffff);
	CHECK(!opens(c, n, "past the end"));
	/* a huge entry count: in a block, in the header */
	FRESH();
	put32(c + ia + 36, 0x40000000);
	CHECK(!opens(c, n, "entries"));
	FRESH();
	put32(c + 8, 0xffffffff);
	CHECK(!opens(c, n, "symbols"));
	/* raw size over what the count allows, and sizes not adding up */
	FRESH();
	put32(c + ia + 32, get32(c + ia + 36) * DP_KSYMIDX_ENTRY_RAW_MAX + 1);
	CHECK(!opens(c, n, "raw bytes"));
	FRESH();
	put64(c + 24, get64(c + 24) + 1);
	CHECK(!opens(c, n, "add up"));
	/* a module name running past its table */
	FRESH();
	c[DP_KSYMIDX_HEAD] = 200;
	CHECK(!opens(c, n, "module"));
	/* a module's text range upside down; a module symbol outside it */
	FRESH();
	put64(c + mods_at(c), get64(c + mods_at(c) + 8) + 1);
	CHECK(!opens(c, n, "module 0 text range"));
	FRESH();
	put64(c + mods_at(c) + 16, get64(c + mods_at(c) + 16) + 1);
	CHECK(opens(c, n, ""));
	s0 = session_of(DP_SYMTAB_KSYMIDX, c, n);
	{
		struct sym_result mr;
		resolve(s0, MODB + 0x80ull * 5 + 1, &mr);
		CHECK(!mr.known);
		CHECK_STR(mr.image, "[modb]");
		const char *const *mw;
		CHECK(sym_warnings(s0, &mw) == 1);
		CHECK(strstr(mw[0], "outside its module's range") != NULL);
	}
	sym_session_free(s0);
	/* a text range outside its block */
	FRESH();
	put64(c + ia + 8, get64(c + ia) - 1);
	CHECK(!opens(c, n, "text range"));

	/* damage inside a block: open accepts it, decoding refuses it, and
	 * a session warns once and names nothing from that block */
	FRESH();
	uint32_t off = get32(c + ia + DP_KSYMIDX_ENTRY * 2 + 24);
	uint32_t st = get32(c + ia + DP_KSYMIDX_ENTRY * 2 + 28);
	size_t data = ia + (size_t)nb * DP_KSYMIDX_ENTRY;
	for (uint32_t k = st / 2; k < st; k++)
		c[data + off + k] ^= 0x5a;
	struct dp_ksymidx *x;
	char why[160];
	CHECK(dp_ksymidx_open(c, n, &x, why, sizeof(why)) == 0);
	CHECK(dp_ksymidx_block(x, 2, why, sizeof(why)) == NULL);
	CHECK(dp_ksymidx_block(x, 2, why, sizeof(why)) == NULL);
	CHECK(dp_ksymidx_block(x, 1, why, sizeof(why)) != NULL);
	dp_ksymidx_free(x);
	struct sym_session *s = session_of(DP_SYMTAB_KSYMIDX, c, n);
	uint64_t first2 = get64(c + ia + DP_KSYMIDX_ENTRY * 2 + 8);
	struct sym_result r;
	resolve(s, first2 + 1, &r);
	CHECK(!r.known);
	resolve(s, first2 + 2, &r);
	resolve(s, BASE + 0x40, &r);     /* block 0 still names */
	CHECK(r.known);
	const char *const *w;
	CHECK(sym_warnings(s, &w) == 1);
	CHECK(strstr(w[0], "index damaged") != NULL);
	sym_session_free(s);

	/* a refused index: one warning, kernel samples [unknown], not this
	 * machine's kallsyms */
	FRESH();
	put64(c + ia + DP_KSYMIDX_ENTRY * 2, 1);
	s = session_of(DP_SYMTAB_KSYMIDX, c, n);
	resolve(s, BASE + 0x40, &r);
	CHECK(!r.known);
	CHECK(sym_warnings(s, &w) == 1);
	CHECK(strstr(w[0], "index refused (blocks not sorted") != NULL);
	sym_session_free(s);
	/* with a kallsyms text beside it, that names the samples instead */
	s = session_of(DP_SYMTAB_KSYMIDX, c, n);
	add_table(s, DP_SYMTAB_KALLSYMS, text, len);
	resolve(s, BASE + 0x40, &r);
	CHECK(r.known);
	CHECK_STR(r.symbol, "fn_1");
	CHECK(sym_warnings(s, &w) == 1);
	CHECK(strstr(w[0], "from the kallsyms text beside it") != NULL);
	sym_session_free(s);
	free(c);
	free(ix);
	free(text);
#undef FRESH
}

/* The writer's own checks and the reference rules, on small tables. */
static void test_encode(void)
{
	struct dp_ksym v[5] = {
		{ 0x1000, "__pfx_a", 7, 0, 't' },
		{ 0x1010, "a", 1, 0, 'T' },
		{ 0x1020, "bad\0name", 8, 0, 'T' },   /* a NUL: dropped */
		{ 0x1030, "", 0, 0, 'T' },            /* empty: dropped */
		{ 0x1040, "c", 1, 0, 'T' },
	};
	uint8_t *out;
	size_t len, dropped;
	CHECK(dp_ksymidx_encode(v, 5, NULL, NULL, 0, 3, &out, &len, &dropped) == 0);
	CHECK(dropped == 2);
	struct dp_ksymidx *x;
	char why[160];
	CHECK(dp_ksymidx_open(out, len, &x, why, sizeof(why)) == 0);
	CHECK(dp_ksymidx_nsyms(x) == 3);
	const struct dp_ksymblk *b = dp_ksymidx_block(x, 0, why, sizeof(why));
	CHECK(b && b->n == 3);
	if (b) {
		CHECK_STR(b->names + b->name[0], "__pfx_a");
		CHECK(b->namelen[0] == 7);
		CHECK_STR(b->names + b->name[2], "c");
	}
	dp_ksymidx_free(x);
	free(out);
	/* unsorted input is refused */
	struct dp_ksym u[2] = { { 0x2000, "x", 1, 0, 'T' }, { 0x1000, "y", 1, 0, 'T' } };
	CHECK(dp_ksymidx_encode(u, 2, NULL, NULL, 0, 3, &out, &len, NULL) < 0);
	/* an empty table opens and names nothing */
	CHECK(dp_ksymidx_encode(NULL, 0, NULL, NULL, 0, 3, &out, &len, NULL) == 0);
	CHECK(dp_ksymidx_open(out, len, &x, why, sizeof(why)) == 0);
	CHECK(dp_ksymidx_nblocks(x) == 0);
	dp_ksymidx_free(x);
	free(out);
	/* one address with more aliases than a block holds: never split */
	size_t nn = DP_KSYMIDX_BLOCK_MAX + 10;
	struct dp_ksym *many = xmalloc((nn + 1) * sizeof(*many));
	for (size_t i = 0; i < nn; i++)
		many[i] = (struct dp_ksym){ 0x5000, "al", 2, 0, 'T' };
	many[nn] = (struct dp_ksym){ 0x6000, "after", 5, 0, 'T' };
	CHECK(dp_ksymidx_encode(many, nn + 1, NULL, NULL, 0, 3, &out, &len, &dropped) == 0);
	CHECK(dropped == 10);
	CHECK(dp_ksymidx_open(out, len, &x, why, sizeof(why)) == 0);
	CHECK(dp_ksymidx_nblocks(x) == 2);
	CHECK(dp_ksymidx_block(x, 0, why, sizeof(why)) != NULL);
	CHECK(dp_ksymidx_block(x, 1, why, sizeof(why)) != NULL);
	dp_ksymidx_free(x);
	free(out);
	free(many);

	/* a reference with no plain name after it is damage */
	uint8_t raw[] = { 0, 'T', 0, DP_KSYMIDX_REF, 'p', 0 };
	size_t zb = ZSTD_compressBound(sizeof(raw));
	uint8_t *buf = xcalloc(1, DP_KSYMIDX_HEAD + DP_KSYMIDX_ENTRY + zb);
	size_t z = ZSTD_compress(buf + DP_KSYMIDX_HEAD + DP_KSYMIDX_ENTRY, zb, raw, sizeof(raw), 3);
	CHECK(!ZSTD_isError(z));
	memcpy(buf, DP_KSYMIDX_MAGIC, 8);
	put32(buf + 8, 1);
	put32(buf + 12, 1);
	put64(buf + 24, sizeof(raw));
	put64(buf + 32, z);
	uint8_t *e = buf + DP_KSYMIDX_HEAD;
	put64(e, 0x1000);
	put64(e + 8, 0x1000);
	put64(e + 16, 0x1000);
	put32(e + 28, (uint32_t)z);
	put32(e + 32, sizeof(raw));
	put32(e + 36, 1);
	CHECK(dp_ksymidx_open(buf, DP_KSYMIDX_HEAD + DP_KSYMIDX_ENTRY + z, &x, why, sizeof(why)) == 0);
	CHECK(dp_ksymidx_block(x, 0, why, sizeof(why)) == NULL);
	CHECK(strstr(why, "refers to no plain name") != NULL);
	dp_ksymidx_free(x);
	free(buf);
}

static void test_kcache(void)
{
	size_t len, ixlen, n, odd = 99;
	char *text = make_text(&len, -1);
	uint8_t *ix = ksyms_index_build(text, len, KCACHE_LEVEL, &ixlen, &odd);
	CHECK(ix != NULL);
	CHECK(odd > 0);    /* make_text has zero addresses */
	size_t flen = KCACHE_HEAD + ixlen;
	uint8_t *f = xmalloc(flen), key[KCACHE_KEY], other[KCACHE_KEY];
	for (unsigned i = 0; i < KCACHE_KEY; i++) {
		key[i] = (uint8_t)(i * 7 + 1);
		other[i] = key[i];
	}
	other[31] ^= 1;
	kcache_header(f, key, ix, ixlen);
	memcpy(f + KCACHE_HEAD, ix, ixlen);
	char why[200];
	CHECK(kcache_check(f, flen, key, &n, why, sizeof(why)) == 0);
	CHECK(n == ixlen);
	CHECK(kcache_check(f, flen, NULL, &n, why, sizeof(why)) == 0);
	/* control: another key is stale */
	CHECK(kcache_check(f, flen, other, &n, why, sizeof(why)) == -ESTALE);
	CHECK(strstr(why, "another boot") != NULL);
	/* every cut is refused (copied to an exact-size buffer: ASan sees
	 * any read past it) */
	size_t bad = 0;
	for (size_t cut = 0; cut < flen; cut += cut < 256 ? 1 : 97) {
		uint8_t *c = xmalloc(cut ? cut : 1);
		memcpy(c, f, cut);
		if (kcache_check(c, cut, key, &n, why, sizeof(why)) == 0)
			bad++;
		free(c);
	}
	CHECK(bad == 0);
	/* a flipped bit anywhere: refused */
	for (size_t at = 0; at < flen; at += at < KCACHE_HEAD ? 1 : 61) {
		f[at] ^= 0x10;
		if (kcache_check(f, flen, key, &n, why, sizeof(why)) == 0)
			bad++;
		f[at] ^= 0x10;
	}
	CHECK(bad == 0);
	CHECK(kcache_check(f, flen, key, &n, why, sizeof(why)) == 0);

	/* store and load through the directory */
	char dir[] = "/tmp/test-kcache-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	setenv("DOMPROF_CACHE", dir, 1);
	struct kcache_key k;
	memset(&k, 0, sizeof(k));
	k.buildid_len = 3;
	k.buildid[0] = 0xab;
	memcpy(k.key, key, KCACHE_KEY);
	char path[4200];
	CHECK(kcache_path(&k, path, sizeof(path)));
	CHECK(strstr(path, "/host-kernel/ab0000.idx") != NULL);
	char *buf;
	const uint8_t *data;
	size_t dlen;
	CHECK(kcache_load(&k, &buf, &data, &dlen, why, sizeof(why)) == -ENOENT);
	CHECK(kcache_store(&k, ix, ixlen, why, sizeof(why)) == 0);
	CHECK(kcache_load(&k, &buf, &data, &dlen, why, sizeof(why)) == 0);
	CHECK(dlen == ixlen && !memcmp(data, ix, ixlen));
	free(buf);
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	CHECK(access(tmp, F_OK) != 0);
	memcpy(k.key, other, KCACHE_KEY);
	CHECK(kcache_load(&k, &buf, &data, &dlen, why, sizeof(why)) == -ESTALE);
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/host-kernel", dir);
	rmdir(tmp);
	rmdir(dir);
	unsetenv("DOMPROF_CACHE");
	free(f);
	free(ix);
	free(text);
}

/*
 * The name filter (kind 9): every core text name of a block answers
 * "maybe" for its block (a "no" there would hide samples), few absent
 * names do, and open refuses every cut, foreign index and bad size.
 * Control: a filter with one block's bits cleared fails the first check.
 */
static size_t false_noes(const struct dp_ksymnf *f, struct dp_ksymidx *x)
{
	size_t bad = 0;
	for (size_t b = 0; b < dp_ksymidx_nblocks(x); b++) {
		const struct dp_ksymblk *d = dp_ksymidx_block(x, b, NULL, 0);
		for (uint32_t i = 0; d && i < d->n; i++)
			if (dp_ksym_core_text(d->type[i], d->mod[i], d->addr[i]) &&
			    !dp_ksymnf_maybe(f, b, d->names + d->name[i], d->namelen[i]))
				bad++;
	}
	return bad;
}

static void test_name_filter(void)
{
	size_t len, ixlen, nflen, olen, oflen;
	char *text = make_text(&len, -1), *other = make_text(&olen, 77);
	uint8_t *ix = sideband_kallsyms_index(text, len, &ixlen), *nf = NULL;
	uint8_t *oix = sideband_kallsyms_index(other, olen, &oflen);
	struct dp_ksymidx *x = NULL, *ox = NULL;
	struct dp_ksymnf *f = NULL;
	char why[160];
	CHECK(ix && dp_ksymidx_open(ix, ixlen, &x, why, sizeof(why)) == 0);
	CHECK(oix && dp_ksymidx_open(oix, oflen, &ox, why, sizeof(why)) == 0);
	if (!x || !ox)
		goto out;
	CHECK(dp_ksymnf_build(x, &nf, &nflen, why, sizeof(why)) == 0);
	CHECK(dp_ksymnf_open(nf, nflen, x, &f, why, sizeof(why)) == 0);
	if (!f)
		goto out;
	CHECK_EQ_U64(false_noes(f, x), 0);
	/* absent names: about 2% of the blocks say maybe */
	size_t maybe = 0, asked = 0;
	for (unsigned i = 0; i < 200; i++) {
		char nm[32];
		int n = snprintf(nm, sizeof(nm), "absent_%u", i);
		for (size_t b = 0; b < dp_ksymidx_nblocks(x); b++, asked++)
			maybe += dp_ksymnf_maybe(f, b, nm, (size_t)n);
	}
	CHECK(maybe * 100 < asked * 6);
	CHECK(dp_ksymnf_maybe(f, dp_ksymidx_nblocks(x), "x", 1));   /* out of range: maybe */
	/* control: one block's bits cleared gives false noes */
	uint8_t *cut = xmalloc(nflen);
	memcpy(cut, nf, nflen);
	memset(cut + nflen - DP_KSYMNF_BYTES, 0, DP_KSYMNF_BYTES);
	struct dp_ksymnf *g = NULL;
	CHECK(dp_ksymnf_open(cut, nflen, x, &g, why, sizeof(why)) == 0);
	CHECK(g && false_noes(g, x) > 0);
	dp_ksymnf_free(g);
	/* refused: another index (same block count, other names), every cut,
	 * bad sizes */
	g = NULL;
	CHECK(dp_ksymidx_nblocks(ox) == dp_ksymidx_nblocks(x));
	CHECK(dp_ksymnf_open(nf, nflen, ox, &g, why, sizeof(why)) < 0 && !g);
	CHECK(strstr(why, "another index") != NULL);
	size_t refused = 0;
	for (size_t l = 0; l < nflen; l += l < 64 ? 1 : 997)
		refused += dp_ksymnf_open(nf, l, x, &g, why, sizeof(why)) < 0 && !g;
	CHECK_EQ_U64(refused, 64 + (nflen - 64 + 996) / 997);
	static const struct { size_t at; uint32_t v; } bad[] = {
		{ 12, 0 }, { 12, 4 }, { 12, 384 }, { 12, 8192 }, { 16, 0 }, { 16, 17 }, { 8, 1 }, { 20, 0 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(cut, nf, nflen);
		put32(cut + bad[i].at, bad[i].v);
		g = NULL;
		CHECK(dp_ksymnf_open(cut, nflen, x, &g, why, sizeof(why)) < 0 && !g);
	}
	memcpy(cut, nf, nflen);
	cut[0] ^= 1;
	CHECK(dp_ksymnf_open(cut, nflen, x, &g, why, sizeof(why)) < 0 && !g);
	free(cut);
out:
	dp_ksymnf_free(f);
	if (x)
		dp_ksymidx_free(x);
	if (ox)
		dp_ksymidx_free(ox);
	free(nf);
	free(ix);
	free(oix);
	free(text);
	free(other);
}

int main(void)
{
	test_same_as_text();
	test_hostile();
	test_encode();
	test_kcache();
	test_name_filter();
	return unit_done();
}
