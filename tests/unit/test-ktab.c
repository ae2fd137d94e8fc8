// SPDX-License-Identifier: MIT
/*
 * Unit tests for the compact kernel table (src/symbols/ktab.c) through
 * the symbol session: a kallsyms of 20,000 symbols given plain and as a
 * compressed SYMTAB record (DP_READ_SYMTAB_STORED), sorted and shuffled,
 * must name every probed address the same as a straightforward model
 * (best alias: T over t/W, fewer leading underscores, shorter, then
 * alphabetical; end at the next address), with module symbols in their
 * module, with and without announcing the lookups (sym_want); a damaged
 * compressed blob gives a warning, not a crash.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/format.h"
#include "symbols/symbols.h"
#include "unit.h"
#include "util/xalloc.h"

#define NSYM 20000
#define BASE 0xffffffff81000000ull

struct line {
	char text[96];
};

/* Symbol i sits at BASE + 0x40*i. Every 97th address has aliases:
 * "__sym_i" (more underscores, loses), and every 194th also an equal-rank
 * twin "zym_i" vs "sym_i" (same length and underscores: alphabetical,
 * "sym_i" wins) and a weak "s_i" (shorter, but weak: loses). */
static size_t make_lines(struct line *v)
{
	size_t n = 0;
	for (unsigned i = 0; i < NSYM; i++) {
		uint64_t a = BASE + 0x40ull * i;
		if (i % 97 == 0)
			snprintf(v[n++].text, sizeof(v[0].text), "%016llx T __sym_%u\n", (unsigned long long)a, i);
		if (i % 194 == 0) {
			snprintf(v[n++].text, sizeof(v[0].text), "%016llx T zym_%u\n", (unsigned long long)a, i);
			snprintf(v[n++].text, sizeof(v[0].text), "%016llx W s_%u\n", (unsigned long long)a, i);
		}
		snprintf(v[n++].text, sizeof(v[0].text), "%016llx %c sym_%u\n", (unsigned long long)a,
			 (i % 3 || i % 97 == 0) ? 'T' : 't', i);
		if (i % 1000 == 1)   /* a data symbol: never a function */
			snprintf(v[n++].text, sizeof(v[0].text), "%016llx D data_%u\n",
				 (unsigned long long)a + 8, i);
	}
	/* a module after the core kernel, as in /proc/kallsyms */
	snprintf(v[n++].text, sizeof(v[0].text), "ffffffffc0001000 t mod_a\t[mymod]\n");
	snprintf(v[n++].text, sizeof(v[0].text), "ffffffffc0001100 t mod_b\t[mymod]\n");
	return n;
}

static char *join(const struct line *v, size_t n, size_t *len)
{
	char *t = xmalloc(n * sizeof(v[0].text) + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i].text);
		memcpy(t + o, v[i].text, l);
		o += l;
	}
	t[o] = '\0';
	*len = o;
	return t;
}

/* Expected name at BASE + 0x40*i + delta (delta < 0x40). */
static void expect_name(unsigned i, char *buf, size_t n)
{
	snprintf(buf, n, "sym_%u", i);
}

static struct sym_session *session_with(const char *text, size_t len, bool compressed,
					uint8_t **zout)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 0, DP_DOMAIN_HOST, "host", 0);
	struct dp_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.type = DP_REC_SYMTAB;
	rec.domain = 0;
	rec.u.symtab.kind = DP_SYMTAB_KALLSYMS;
	rec.u.symtab.name = "kallsyms";
	rec.u.symtab.size = len;
	*zout = NULL;
	if (compressed) {
		size_t bound = ZSTD_compressBound(len);
		uint8_t *z = xmalloc(bound);
		size_t zn = ZSTD_compress(z, bound, text, len, 3);
		CHECK(!ZSTD_isError(zn));
		rec.symtab_compression = 1;
		rec.symtab_stored = z;
		rec.symtab_stored_size = zn;
		rec.u.symtab.data = NULL;  /* as the reader leaves it */
		*zout = z;
	} else {
		rec.u.symtab.data = (const uint8_t *)text;
		rec.symtab_stored = (const uint8_t *)text;
		rec.symtab_stored_size = len;
	}
	sym_add_symtab_rec(s, &rec);
	return s;
}

static void probe_all(struct sym_session *s, const char *what, bool announce)
{
	/* probe every 7th symbol at a varying offset inside it */
	uint64_t ips[NSYM / 7 + 1];
	size_t nip = 0;
	for (unsigned i = 0; i < NSYM; i += 7)
		ips[nip++] = BASE + 0x40ull * i + (i % 0x40);
	const struct sym_map *maps[NSYM / 7 + 1];
	for (size_t j = 0; j < nip; j++)
		maps[j] = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, ips[j]);
	if (announce)
		for (size_t j = 0; j < nip; j++)
			sym_want(s, maps[j], ips[j]);
	size_t bad = 0;
	for (size_t j = 0; j < nip; j++) {
		struct sym_result r;
		sym_resolve(s, maps[j], ips[j], &r);
		unsigned i = (unsigned)((ips[j] - BASE) / 0x40);
		char want[32];
		expect_name(i, want, sizeof(want));
		if (!r.known || strcmp(r.symbol, want) || r.sym_start != BASE + 0x40ull * i ||
		    strcmp(r.image, "[kernel.kallsyms]")) {
			if (bad++ < 5)
				fprintf(stderr, "%s: ip 0x%llx: got %s (%s) want %s\n", what,
					(unsigned long long)ips[j], r.symbol, r.image, want);
		}
	}
	CHECK(bad == 0);

	/* the last core symbol ends 4096 bytes on; the gap before the module is unknown */
	uint64_t last = BASE + 0x40ull * (NSYM - 1);
	struct sym_result r;
	const struct sym_map *m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, last + 100);
	sym_resolve(s, m, last + 100, &r);
	CHECK(r.known);
	m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, last + 8192);
	sym_resolve(s, m, last + 8192, &r);
	CHECK(!r.known);
	/* below the first symbol */
	m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, BASE - 1);
	sym_resolve(s, m, BASE - 1, &r);
	CHECK(!r.known);
	/* modules keep their own image */
	m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, 0xffffffffc0001104ull);
	sym_resolve(s, m, 0xffffffffc0001104ull, &r);
	CHECK_STR(r.image, "[mymod]");
	CHECK_STR(r.symbol, "mod_b");
}

static void test_variants(void)
{
	struct line *v = xmalloc((NSYM * 2 + 100) * sizeof(*v));
	size_t n = make_lines(v);
	size_t len;
	char *sorted = join(v, n, &len);
	/* shuffled (deterministic): takes the slow path */
	uint64_t x = 88172645463325252ull;
	for (size_t i = n - 1; i > 0; i--) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		size_t j = x % (i + 1);
		struct line t = v[i]; v[i] = v[j]; v[j] = t;
	}
	size_t len2;
	char *shuffled = join(v, n, &len2);
	CHECK(len == len2);

	const struct { const char *name; const char *text; bool z; bool announce; } cases[] = {
		{ "plain sorted", sorted, false, false },
		{ "zstd sorted", sorted, true, true },
		{ "zstd sorted, no sym_want", sorted, true, false },
		{ "plain shuffled", shuffled, false, true },
		{ "zstd shuffled", shuffled, true, true },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint8_t *z;
		struct sym_session *s = session_with(cases[c].text, len, cases[c].z, &z);
		probe_all(s, cases[c].name, cases[c].announce);
		const char *const *w;
		CHECK(sym_warnings(s, &w) == 0);
		sym_session_free(s);
		free(z);
	}

	/* alias rules, checked one address at a time */
	uint8_t *z;
	struct sym_session *s = session_with(shuffled, len, true, &z);
	for (unsigned i = 0; i <= 388; i += 97) {
		uint64_t ip = BASE + 0x40ull * i + 1;
		const struct sym_map *m = sym_find_map(s, 0, 1, DP_MODE_KERNEL, false, 0, ip);
		struct sym_result r;
		sym_resolve(s, m, ip, &r);
		char want[32];
		expect_name(i, want, sizeof(want));
		CHECK_STR(r.symbol, want);
	}
	sym_session_free(s);
	free(z);

	/* a damaged compressed blob: a warning, samples unknown, no crash */
	s = session_with(sorted, len, true, &z);
	sym_session_free(s);
	{
		size_t bound = ZSTD_compressBound(len);
		uint8_t *zz = xmalloc(bound);
		size_t zn = ZSTD_compress(zz, bound, sorted, len, 3);
		struct sym_session *t = sym_session_new();
		struct dp_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.type = DP_REC_SYMTAB;
		rec.u.symtab.kind = DP_SYMTAB_KALLSYMS;
		rec.u.symtab.name = "kallsyms";
		rec.u.symtab.size = len;
		rec.symtab_compression = 1;
		rec.symtab_stored = zz;
		rec.symtab_stored_size = zn / 2;   /* truncated */
		sym_add_symtab_rec(t, &rec);
		memset(zz, 0, zn);                 /* copied: the session must not need it */
		uint64_t ip = BASE + 0x40ull * 3;
		const struct sym_map *m = sym_find_map(t, 0, 1, DP_MODE_KERNEL, false, 0, ip);
		struct sym_result r;
		sym_resolve(t, m, ip, &r);
		CHECK_STR(r.symbol, "sym_3");      /* the first half was parsed */
		const char *const *w;
		size_t nw = sym_warnings(t, &w);
		CHECK(nw >= 1 && strstr(w[0], "does not decompress"));
		sym_session_free(t);
		free(zz);
	}
	free(z);
	free(sorted);
	free(shuffled);
	free(v);
}

int main(void)
{
	test_variants();
	return unit_done();
}
