// SPDX-License-Identifier: MIT
/*
 * Embedded symbol tables (SYMTAB records) of a domain: kallsyms, modules,
 * System.map, ELF blobs keyed by build-id or name, perf maps. They are
 * copied as the reader gives them, indexed by kind, name and perf-map
 * pid, and kept compressed until a lookup needs one; then the table is
 * charged to the per-domain and per-file limits below and decompressed
 * (a kallsyms is never decompressed whole: ktab.c streams it). The
 * contents are untrusted: the users (image.c, kernel.c, kallsyms.c)
 * bound what they read by the sizes kept here.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "util/hmap.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util/xalloc.h"

/* Bounds on what embedded symbol tables may decompress to, charged when a
 * table is first used (docs/symbols.md, "Limits"). A real domain needs one
 * kernel table (a kallsyms is 5-15 MB of text, System.map alike) and the
 * binaries its samples hit (a few MB each; the agent ships at most 256 MiB
 * per file): 256 MiB per domain is ten times a large real need. 512 MiB
 * per file bounds what one report holds for every domain together. A
 * table over the limit is refused: its samples keep their image name.
 * DOMPROF_MAX_SYMTAB=PER_DOMAIN[:PER_FILE] (bytes, K/M/G suffixes)
 * changes them. */
#define SYMTAB_DOMAIN_MAX (256ull << 20)
#define SYMTAB_FILE_MAX (512ull << 20)

/* "123", "64K", "256M", "1G" -> bytes; false when not a size. */
static bool parse_size(const char *p, const char **end, uint64_t *out)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(p, &e, 10);
	if (e == p || errno || *p == '-')
		return false;
	unsigned shift = 0;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	default: break;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	*end = e;
	return true;
}

/* The decompression limits, from DOMPROF_MAX_SYMTAB=PER_DOMAIN[:PER_FILE]
 * when set (a single value bounds both). */
void blob_limits(struct sym_session *s)
{
	s->symtab_domain_max = SYMTAB_DOMAIN_MAX;
	s->symtab_file_max = SYMTAB_FILE_MAX;
	const char *env = getenv("DOMPROF_MAX_SYMTAB");
	if (!env || !*env)
		return;
	uint64_t dom, file;
	const char *e;
	bool ok = parse_size(env, &e, &dom);
	file = dom;
	if (ok && *e == ':')
		ok = parse_size(e + 1, &e, &file);
	if (ok && !*e) {
		s->symtab_domain_max = dom;
		s->symtab_file_max = file;
	} else {
		sym_warn(s, "DOMPROF_MAX_SYMTAB='%.64s' is not PER_DOMAIN[:PER_FILE] (bytes, K/M/G): "
		     "using %llu MiB per domain, %llu MiB per file", env,
		     SYMTAB_DOMAIN_MAX >> 20, SYMTAB_FILE_MAX >> 20);
	}
}

/* ---- embedded symbol tables ---- */

/* The blob index key of (kind, name): names match without case. The
 * caller frees it. */
static char *blob_key(uint32_t kind, const char *name)
{
	size_t n = strlen(name);
	char *k = xmalloc(n + 16);
	int o = snprintf(k, 16, "%" PRIu32 "|", kind);
	for (size_t i = 0; i <= n; i++)
		k[o + i] = (char)tolower((unsigned char)name[i]);
	return k;
}

/* The pid a perf map table is for: the number after "perf-" in its name
 * (or at its start when there is none); false when there is none. */
static bool perfmap_pid(const char *name, uint64_t *pid)
{
	const char *q = strstr(name, "perf-");
	q = q ? q + 5 : name;
	char *endp;
	unsigned long v = strtoul(q, &endp, 10);
	*pid = v;
	return endp != q && v <= UINT32_MAX;
}

static void index_blob(struct sym_session *s, struct sym_domain *d, size_t at)
{
	const struct blob *b = &d->blobs[at];
	void *val = (void *)(uintptr_t)(at + 1);
	if (b->kind < 16 && !d->first_kind[b->kind])
		d->first_kind[b->kind] = at + 1;
	char *k = blob_key(b->kind, b->name);
	if (!strmap_get(&d->blobidx, k))
		strmap_put(&d->blobidx, pool_strdup(&s->pool, k), val);
	free(k);
	/* a pid's perf map: the last one (the recorder writes the map as
	 * it first finds it, then as it is at the end: sideband.h) */
	uint64_t pid;
	if (b->kind == DP_SYMTAB_PERFMAP && perfmap_pid(b->name, &pid))
		u64map_put(&d->perfmapidx, pid, val);
}

/*
 * True when the table of this kind and name that lookups use (the first
 * one) holds the same bytes: the files of one `record --switch-output`
 * series each carry the kernel's kallsyms, and a report over many of
 * them keeps one copy, not one per file (only the first is ever used).
 */
static bool same_as_first(const struct sym_domain *d, const struct dp_symtab *st,
			  uint32_t compression, const uint8_t *stored, size_t stored_size)
{
	char *k = blob_key(st->kind, st->name ? st->name : "");
	uintptr_t at = (uintptr_t)strmap_get(&d->blobidx, k);
	free(k);
	if (!at)
		return false;
	const struct blob *b = &d->blobs[at - 1];
	if (b->size != st->size)
		return false;
	if (!st->data && compression == 1 && stored)
		return b->z && b->zsize == stored_size && !memcmp(b->z, stored, stored_size);
	return st->data && !b->z && b->data && !memcmp(b->data, st->data, st->size);
}

static void add_symtab(struct sym_session *s, uint32_t domain, const struct dp_symtab *st,
		       uint32_t compression, const uint8_t *stored, size_t stored_size)
{
	struct sym_domain *d = sym_domain_get(s, domain);
	if (same_as_first(d, st, compression, stored, stored_size))
		return;
	if (d->early_elf && st->kind == DP_SYMTAB_ELF)
		s->early_stale = true;   /* an image answered may have chosen it */
	if (d->nblobs == d->cblobs)
		xgrow((void **)&d->blobs, &d->cblobs, d->nblobs + 1, sizeof(*d->blobs));
	struct blob *b = &d->blobs[d->nblobs++];
	b->kind = st->kind;
	b->name = pool_strdup(&s->pool, st->name ? st->name : "");
	b->z = NULL;
	b->admit = 0;
	b->zsize = 0;
	if (!st->data && compression == 1 && stored && stored_size && st->size) {
		/* the reader left it compressed (DP_READ_SYMTAB_STORED) */
		b->data = NULL;
		b->size = st->size;
		b->z = xmalloc(stored_size);
		memcpy(b->z, stored, stored_size);
		b->zsize = stored_size;
	} else {
		b->size = st->data ? st->size : 0;
		b->data = xmalloc(b->size + 1);
		if (b->size)
			memcpy(b->data, st->data, b->size);
		b->data[b->size] = '\0';
	}
	index_blob(s, d, d->nblobs - 1);
}

void sym_add_symtab(struct sym_session *s, uint32_t domain, const struct dp_symtab *st)
{
	if (st)
		add_symtab(s, domain, st, 0, NULL, 0);
}

void sym_add_symtab_rec(struct sym_session *s, const struct dp_record *rec)
{
	if (rec && rec->type == DP_REC_SYMTAB)
		add_symtab(s, rec->domain, &rec->u.symtab, rec->symtab_compression,
			   rec->symtab_stored, rec->symtab_stored_size);
}

/* "12288 MiB", "64 KiB", "100 bytes" (rounded up), into buf[32]. */
static const char *size_str(uint64_t n, char *buf)
{
	if (n >= (1u << 20))
		snprintf(buf, 32, "%" PRIu64 " MiB", (n >> 20) + !!(n & ((1u << 20) - 1)));
	else if (n >= 1024)
		snprintf(buf, 32, "%" PRIu64 " KiB", (n >> 10) + !!(n & 1023));
	else
		snprintf(buf, 32, "%" PRIu64 " bytes", n);
	return buf;
}

/*
 * May blob b of domain d be decompressed? Asked once per blob, when it is
 * first needed; its size is charged to the domain's and the file's
 * budgets. A refused table stays compressed and unused, and is counted in
 * one summary warning (updated in place, so it stays one line).
 */
bool blob_admit(struct sym_session *s, struct sym_domain *d, struct blob *b)
{
	/* stored plain: already in memory, nothing to expand */
	return blob_admit_n(s, d, b, b->z ? b->size : 0);
}

bool blob_admit_n(struct sym_session *s, struct sym_domain *d, struct blob *b, uint64_t n)
{
	if (b->admit)
		return b->admit == 1;
	if (!n) {
		b->admit = 1;
		return true;
	}
	if (n <= s->symtab_domain_max - d->symtab_used &&
	    n <= s->symtab_file_max - s->symtab_used) {
		d->symtab_used += n;
		s->symtab_used += n;
		b->admit = 1;
		return true;
	}
	b->admit = 2;
	d->symtab_refused = true;
	/* the stored copy is not needed any more */
	free(b->z);
	b->z = NULL;
	b->zsize = 0;
	s->refused_tables++;
	s->refused_bytes += n;
	char all[32], dom[32], file[32];
	snprintf(s->refused_line, sizeof(s->refused_line),
		 "%" PRIu64 " embedded symbol table(s) refused, %s uncompressed in all "
		 "(limits: %s per domain, %s per file; DOMPROF_MAX_SYMTAB raises them): "
		 "their samples are named by image only", s->refused_tables,
		 size_str(s->refused_bytes, all), size_str(s->symtab_domain_max, dom),
		 size_str(s->symtab_file_max, file));
	if (!s->refused_warn) {
		if (s->nwarn == s->cwarn)
			xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
		s->warn[s->nwarn++] = s->refused_line;
		s->refused_warn = s->nwarn;
	}
	return false;
}

/* The plain bytes of a blob, decompressed on first use (NUL-terminated),
 * or NULL when the limits refuse it (blob_admit). A blob that does not
 * decompress becomes empty, with a warning. */
const uint8_t *blob_data(struct sym_session *s, struct sym_domain *d, struct blob *b)
{
	if (!blob_admit(s, d, b))
		return NULL;
	if (b->data)
		return b->data;
	uint8_t *buf = xmalloc(b->size + 1);
	size_t n = ZSTD_decompress(buf, b->size, b->z, b->zsize);
	if (ZSTD_isError(n) || n != b->size) {
		sym_warn(s, "domain %s: embedded symbol table %s does not decompress, ignored",
		     d->name, b->name);
		b->size = 0;
	}
	buf[b->size] = '\0';
	b->data = buf;
	free(b->z);
	b->z = NULL;
	b->zsize = 0;
	return b->data;
}

/* Where the text of a kallsyms/System.map blob is, for ktab.c. */
struct ktext blob_text(const struct blob *b)
{
	struct ktext t = { NULL, NULL, 0, b->size };
	if (b->data)
		t.plain = (const char *)b->data;
	else {
		t.z = b->z;
		t.zlen = b->zsize;
	}
	return t;
}

/* The first blob of a kind (name NULL) or of a kind and name (any case). */
struct blob *find_blob(const struct sym_domain *d, uint32_t kind, const char *name)
{
	uintptr_t at;
	if (!name) {
		at = kind < 16 ? d->first_kind[kind] : 0;
	} else {
		char *k = blob_key(kind, name);
		at = (uintptr_t)strmap_get(&d->blobidx, k);
		free(k);
	}
	return at ? &d->blobs[at - 1] : NULL;
}

/* The perf map (/tmp/perf-PID.map) stored in the recording for pid, or
 * NULL: the blob whose name holds pid after "perf-" (or starts with it
 * when there is no "perf-"). */
struct blob *perfmap_blob(struct sym_domain *d, uint32_t pid)
{
	uintptr_t at = (uintptr_t)u64map_get(&d->perfmapidx, pid);
	return at ? &d->blobs[at - 1] : NULL;
}

/* Free the blobs of d and their indexes. */
void blobs_release(struct sym_domain *d)
{
	for (size_t j = 0; j < d->nblobs; j++) {
		free(d->blobs[j].data);
		free(d->blobs[j].z);
	}
	free(d->blobs);
	hmap_release(&d->blobidx);
	hmap_release(&d->perfmapidx);
}
