// SPDX-License-Identifier: MIT
/*
 * The source line cache file (lcache.h): its key, its bytes, its checks,
 * its atomic write.
 */
#include "symbols/lcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/hmap.h"
#include "util/le.h"
#include "util/sha256.h"
#include "util/xalloc.h"

int lcache_mode(void)
{
	return cache_mode("DOMPROF_LINE_CACHE");
}

/* a file's identity: what changes when its bytes may have */
static int hash_file(struct sha256 *c, const char *path, char *why, size_t whylen)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: not a regular file", path);
		return -ENOENT;
	}
	uint64_t f[7] = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			  (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
			  (uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec };
	sha256_update(c, f, sizeof(f));
	return 0;
}

int lcache_key(uint8_t key[LCACHE_KEY], const char *salt, const uint8_t *bid, size_t bidlen,
	       const char *image, const char *debug, char *why, size_t whylen)
{
	if (!bidlen || bidlen > 20) {
		snprintf(why, whylen, "no build-id");
		return -EINVAL;
	}
	struct sha256 c;
	sha256_init(&c);
	static const char tag[] = "domprof line cache 1";
	sha256_update(&c, tag, sizeof(tag));
	sha256_update(&c, salt ? salt : "", salt ? strlen(salt) + 1 : 1);
	uint8_t n = (uint8_t)bidlen, kind = debug != NULL;
	sha256_update(&c, &n, 1);
	sha256_update(&c, bid, bidlen);
	sha256_update(&c, &kind, 1);
	int r = hash_file(&c, image, why, whylen);
	if (!r && debug)
		r = hash_file(&c, debug, why, whylen);
	if (r)
		return r;
	sha256_final(&c, key);
	return 0;
}

bool lcache_path(const uint8_t *bid, size_t bidlen, const char *src, bool debug, char *buf, size_t len)
{
	char dir[4096], hex[41];
	if (!bidlen || bidlen > 20 || !src || !cache_dir("lines", dir, sizeof(dir)))
		return false;
	for (size_t i = 0; i < bidlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	/* which file, by name: copies of one build-id at two places (a
	 * stripped one and its original, a program and its copy) each keep
	 * their own file instead of overwriting each other's */
	struct sha256 c;
	uint8_t h[SHA256_LEN];
	sha256_init(&c);
	sha256_update(&c, debug ? "debug" : "own", debug ? 6 : 4);
	sha256_update(&c, src, strlen(src));
	sha256_final(&c, h);
	int n = snprintf(buf, len, "%s/%s-%02x%02x%02x%02x%02x%02x%02x%02x.lines", dir, hex, h[0], h[1], h[2], h[3],
			 h[4], h[5], h[6], h[7]);
	return n > 0 && (size_t)n < len;
}

int lcache_parse(const uint8_t *data, size_t len, const uint8_t (*keys)[LCACHE_KEY], size_t nkeys,
		 size_t *which, struct lcache *c, char *why, size_t whylen)
{
	memset(c, 0, sizeof(*c));
	if (len < LCACHE_HEAD || len > LCACHE_MAX || memcmp(data, LCACHE_MAGIC, 8) ||
	    get32(data + 8) != LCACHE_HEAD) {
		snprintf(why, whylen, "not a line cache file of this version");
		return -EINVAL;
	}
	if (crc32c(0, data, 64) != get32(data + 64) || get32(data + 68)) {
		snprintf(why, whylen, "header checksum mismatch");
		return -EINVAL;
	}
	uint32_t n = get32(data + 12), slen = get32(data + 16);
	uint64_t plen = get64(data + 24);
	if (n > LCACHE_MAX_ENTS || plen != len - LCACHE_HEAD ||
	    plen != (uint64_t)n * LCACHE_ENT + slen) {
		snprintf(why, whylen, "sizes do not match the file's %zu bytes", len);
		return -EINVAL;
	}
	size_t k = 0;
	while (k < nkeys && memcmp(data + 32, keys[k], LCACHE_KEY))
		k++;
	if (nkeys && k == nkeys) {
		snprintf(why, whylen, "made from another file (the image or its debug file changed)");
		return -ESTALE;
	}
	if (crc32c(0, data + LCACHE_HEAD, (size_t)plen) != get32(data + 20)) {
		snprintf(why, whylen, "payload checksum mismatch");
		return -EINVAL;
	}
	const uint8_t *ent = data + LCACHE_HEAD;
	const char *str = (const char *)ent + (size_t)n * LCACHE_ENT;
	if (slen && str[slen - 1]) {   /* then every offset below slen ends in a NUL */
		snprintf(why, whylen, "strings not terminated");
		return -EINVAL;
	}
	c->e = xmalloc((n ? n : 1) * sizeof(*c->e));
	for (uint32_t i = 0; i < n; i++, ent += LCACHE_ENT) {
		struct lcache_ent *e = &c->e[i];
		uint32_t off[3] = { get32(ent + 16), get32(ent + 20), get32(ent + 24) }, fl = get32(ent + 28);
		const char *s[3];
		bool bad = fl & ~LCACHE_F_OK;
		for (int j = 0; j < 3; j++) {
			s[j] = off[j] == LCACHE_NONE ? NULL : off[j] < slen ? str + off[j] : NULL;
			bad |= off[j] != LCACHE_NONE && off[j] >= slen;
		}
		e->addr = get64(ent);
		e->line = get32(ent + 8);
		e->call_line = get32(ent + 12);
		e->path = s[0];
		e->inlined = s[1];
		e->call_file = s[2];
		e->ok = fl & LCACHE_F_OK;
		/* what lines_lookup can answer: a line has a path; no line has
		 * nothing else; a call site only in inlined code */
		bad |= e->ok ? !e->path : (e->path || e->inlined || e->line || e->call_line);
		bad |= !e->inlined && (e->call_file || e->call_line);
		bad |= i && e->addr <= c->e[i - 1].addr;
		if (bad) {
			snprintf(why, whylen, "entry %u is malformed", i);
			lcache_release(c);
			return -EINVAL;
		}
	}
	c->n = n;
	if (which)
		*which = k;
	return 0;
}

int lcache_load(const char *path, const uint8_t (*keys)[LCACHE_KEY], size_t nkeys, size_t *which,
		struct lcache *c, char *why, size_t whylen)
{
	char *data;
	size_t len;
	memset(c, 0, sizeof(*c));
	int r = cache_read(path, LCACHE_MAX, &data, &len, why, whylen);
	if (r < 0)
		return r;
	if ((r = lcache_parse((const uint8_t *)data, len, keys, nkeys, which, c, why, whylen)) < 0) {
		free(data);
		return r;
	}
	c->buf = (uint8_t *)data;
	return 0;
}

void lcache_release(struct lcache *c)
{
	free(c->e);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

const struct lcache_ent *lcache_find(const struct lcache *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->e[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->e[lo].addr == addr ? &c->e[lo] : NULL;
}

static int ent_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct lcache_ent *)a)->addr, y = ((const struct lcache_ent *)b)->addr;
	return x < y ? -1 : x > y;
}

void lcache_merge(const struct lcache *old, struct lcache_ent *add, size_t nadd,
		  struct lcache_ent **out, size_t *n)
{
	size_t no = old ? old->n : 0;
	if (nadd > 1)
		qsort(add, nadd, sizeof(*add), ent_cmp);
	struct lcache_ent *v = xmalloc((no + nadd ? no + nadd : 1) * sizeof(*v));
	size_t i = 0, j = 0, m = 0;
	while (i < no || j < nadd) {
		const struct lcache_ent *x;
		if (j == nadd || (i < no && old->e[i].addr <= add[j].addr)) {
			x = &old->e[i++];
			while (j < nadd && add[j].addr == x->addr)
				j++;
		} else {
			x = &add[j++];
		}
		if (!m || v[m - 1].addr != x->addr)
			v[m++] = *x;
	}
	*out = v;
	*n = m;
}

/* s's offset in the strings, added once */
static uint32_t intern(struct hmap *seen, char **str, size_t *slen, size_t *cap, const char *s, int *err)
{
	if (!s || *err)
		return LCACHE_NONE;
	uintptr_t o = (uintptr_t)strmap_get(seen, s);
	if (o)
		return (uint32_t)(o - 1);
	size_t l = strlen(s) + 1;
	if (*slen + l > LCACHE_MAX) {
		*err = -EFBIG;
		return LCACHE_NONE;
	}
	xgrow((void **)str, cap, *slen + l, 1);
	memcpy(*str + *slen, s, l);
	o = *slen + 1;
	*slen += l;
	strmap_put(seen, s, (void *)o);
	return (uint32_t)(o - 1);
}

int lcache_encode(const uint8_t key[LCACHE_KEY], const struct lcache_ent *e, size_t n, uint8_t **out,
		  size_t *len)
{
	*out = NULL;
	if (n > LCACHE_MAX_ENTS)
		return -EFBIG;
	struct hmap seen = { 0 };
	char *str = NULL;
	size_t slen = 0, cap = 0;
	uint8_t *ents = xmalloc((n ? n : 1) * LCACHE_ENT);
	int r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		if ((i && e[i].addr <= e[i - 1].addr) || (e[i].ok && !e[i].path)) {
			r = -EINVAL;
			break;
		}
		uint8_t *p = ents + i * LCACHE_ENT;
		put64(p, e[i].addr);
		put32(p + 8, e[i].ok ? e[i].line : 0);
		put32(p + 12, e[i].ok && e[i].inlined ? e[i].call_line : 0);
		put32(p + 16, e[i].ok ? intern(&seen, &str, &slen, &cap, e[i].path, &r) : LCACHE_NONE);
		put32(p + 20, e[i].ok ? intern(&seen, &str, &slen, &cap, e[i].inlined, &r) : LCACHE_NONE);
		put32(p + 24, e[i].ok && e[i].inlined ? intern(&seen, &str, &slen, &cap, e[i].call_file, &r)
						     : LCACHE_NONE);
		put32(p + 28, e[i].ok ? LCACHE_F_OK : 0);
		if (!r && slen + (i + 1) * LCACHE_ENT > LCACHE_MAX - LCACHE_HEAD)
			r = -EFBIG;
	}
	hmap_release(&seen);
	if (!r) {
		size_t plen = n * LCACHE_ENT + slen;
		uint8_t *b = xmalloc(LCACHE_HEAD + plen);
		memcpy(b + LCACHE_HEAD, ents, n * LCACHE_ENT);
		if (slen)
			memcpy(b + LCACHE_HEAD + n * LCACHE_ENT, str, slen);
		memset(b, 0, LCACHE_HEAD);
		memcpy(b, LCACHE_MAGIC, 8);
		put32(b + 8, LCACHE_HEAD);
		put32(b + 12, (uint32_t)n);
		put32(b + 16, (uint32_t)slen);
		put32(b + 20, crc32c(0, b + LCACHE_HEAD, plen));
		put64(b + 24, plen);
		memcpy(b + 32, key, LCACHE_KEY);
		put32(b + 64, crc32c(0, b, 64));
		*out = b;
		*len = LCACHE_HEAD + plen;
	}
	free(ents);
	free(str);
	return r;
}

int lcache_store(const char *path, const uint8_t *data, size_t len, char *why, size_t whylen)
{
	struct iovec v = { (void *)data, len };
	return cache_write(path, &v, 1, why, whylen);
}
