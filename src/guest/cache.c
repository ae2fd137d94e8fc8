// SPDX-License-Identifier: MIT
/*
 * The host-side cache of guest kernel tables (cache.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/cache.h"
#include "guest/ksyms.h"
#include "symbols/kallsyms.h"
#include "util/cachedir.h"
#include "util/xalloc.h"

bool guest_cache_dir(char *buf, size_t len)
{
	return cache_dir("guest-kernels", buf, len);
}

static bool good_key(const char *id)
{
	size_t n = 0;
	for (; id[n]; n++)
		if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
			return false;
	return n == 40;
}

static bool good_kind(const char *k)
{
	return !strcmp(k, "kallsyms") || !strcmp(k, "orc");
}

static int entry_path(const char *id, const char *kind, char *buf, size_t len)
{
	if (!good_key(id) || !good_kind(kind))
		return -EINVAL;
	char dir[4096];
	if (!guest_cache_dir(dir, sizeof(dir)))
		return -ENOENT;
	if ((size_t)snprintf(buf, len, "%s/%s.%s", dir, id, kind) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int guest_cache_get(const char *buildid, const char *kind, size_t max, char **data, size_t *len,
		    char *why, size_t whylen)
{
	char path[4200];
	int r = entry_path(buildid, kind, path, sizeof(path));
	if (r < 0) {
		snprintf(why, whylen, "%s", r == -ENOENT ? "no cache directory" : "not a cache key");
		return r;
	}
	return cache_read(path, max, data, len, why, whylen);
}

int guest_cache_put(const char *buildid, const char *kind, const void *data, size_t len,
		    char *why, size_t whylen)
{
	char path[4200];
	int r = entry_path(buildid, kind, path, sizeof(path));
	if (r < 0) {
		snprintf(why, whylen, "%s", r == -ENOENT ? "no cache directory" : "not a cache key");
		return r;
	}
	struct iovec v = { (void *)data, len };
	return cache_write(path, &v, 1, why, whylen);
}

/* ---- The kallsyms entry ------------------------------------------------ */

#define KALLSYMS_HEAD "# domprof guest kallsyms 2 text=%" PRIx64 " lo=%" PRIx64 " hi=%" PRIx64 \
	" num_syms=%" PRIx64 " markers=%" PRIx64 " mwidth=%" PRIu64 " ti=%" PRIx64 " addrs=%" PRIx64 \
	" relbase=%" PRIx64 " nsyms=%" PRIu64 " sha256=%s\n"
#define KALLSYMS_SCAN "# domprof guest kallsyms 2 text=%" SCNx64 " lo=%" SCNx64 " hi=%" SCNx64 \
	" num_syms=%" SCNx64 " markers=%" SCNx64 " mwidth=%" SCNu64 " ti=%" SCNx64 " addrs=%" SCNx64 \
	" relbase=%" SCNx64 " nsyms=%" SCNu64 " sha256=%64[0-9a-f]"

/* Moves every kernel-image address of a cached table by delta (this
 * boot's _text minus the cached one); per-CPU offsets ('A' symbols below
 * the image area) stay. The entry is our own output, but a file: any
 * line that is not a core-kernel kallsyms line with a 16-digit address
 * refuses it. Returns the new text (*outlen bytes and a NUL, *nsyms
 * lines) or NULL. */
static char *shift_table(const char *in, size_t len, int64_t delta, size_t *outlen, size_t *nsyms)
{
	size_t cap = len + 64, n = 0;
	char *out = xmalloc(cap), *o = out;
	const char *p = in, *end = in + len;
	struct kallsyms_line l;
	int r;
	while ((r = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END) {
		if (r != KALLSYMS_LINE || l.mod || l.addr_end - l.line != 16 ||
		    (size_t)(o - out) + l.linelen + 2 > cap) {
			free(out);
			return NULL;
		}
		uint64_t a = l.addr >= GUEST_KIMAGE_START ? l.addr + (uint64_t)delta : l.addr;
		o += sprintf(o, "%016" PRIx64, a);
		memcpy(o, l.addr_end, l.linelen - 16);
		o += l.linelen - 16;
		*o++ = '\n';
		n++;
	}
	*o = 0;   /* room: every line left two bytes spare */
	*outlen = (size_t)(o - out);
	*nsyms = n;
	return out;
}

char *guest_cache_kallsyms_encode(const char *text, size_t len, uint64_t text_addr,
				  const struct guest_ksyms_src *src, size_t *outlen)
{
	char head[400], hex[2 * 32 + 1];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", src->digest[i]);
	int hn = snprintf(head, sizeof(head), KALLSYMS_HEAD, text_addr, src->lo, src->hi, src->num_syms, src->markers,
			  src->mwidth, src->ti, src->addrs, src->relbase, src->nsyms, hex);
	char *buf = xmalloc((size_t)hn + len);
	memcpy(buf, head, (size_t)hn);
	memcpy(buf + hn, text, len);
	*outlen = (size_t)hn + len;
	return buf;
}

char *guest_cache_kallsyms_decode(const char *data, size_t len, uint64_t text_addr,
				  struct guest_ksyms_src *src, size_t *outlen, size_t *nsyms)
{
	uint64_t text = 0;
	const char *nl = memchr(data, '\n', len);
	char head[400], hex[65];
	if (!nl || (size_t)(nl - data) >= sizeof(head))
		return NULL;
	memcpy(head, data, (size_t)(nl - data));
	head[nl - data] = 0;
	memset(src, 0, sizeof(*src));
	if (sscanf(head, KALLSYMS_SCAN, &text, &src->lo, &src->hi, &src->num_syms, &src->markers, &src->mwidth,
		   &src->ti, &src->addrs, &src->relbase, &src->nsyms, hex) != 11 || strlen(hex) != 64 ||
	    text % GUEST_KIMAGE_ALIGN || text < GUEST_KIMAGE_START ||
	    text >= GUEST_KIMAGE_END)
		return NULL;
	for (int i = 0; i < 32; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return NULL;
		src->digest[i] = (uint8_t)v;
	}
	size_t skip = (size_t)(nl + 1 - data);
	char *t = shift_table(nl + 1, len - skip, (int64_t)(text_addr - text), outlen, nsyms);
	if (t && *nsyms != src->nsyms) {   /* not the table the span holds */
		free(t);
		return NULL;
	}
	return t;
}
