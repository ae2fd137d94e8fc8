// SPDX-License-Identifier: MIT
/*
 * The host-side cache of guest kernel tables (cache.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/cache.h"
#include "guest/ksyms.h"
#include "symbols/kallsyms.h"
#include "util/xalloc.h"
#include "util/file.h"

void guest_cache_dir(char *buf, size_t len)
{
	const char *d = getenv("DOMPROF_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (d && *d)
		snprintf(buf, len, "%s/guest-kernels", d);
	else if (x && *x == '/')
		snprintf(buf, len, "%s/domprof/guest-kernels", x);
	else
		snprintf(buf, len, "%s/.cache/domprof/guest-kernels", h && *h == '/' ? h : "/tmp");
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
	return !strcmp(k, "kallsyms") || !strcmp(k, "btf");
}

static int entry_path(const char *id, const char *kind, char *buf, size_t len)
{
	if (!good_key(id) || !good_kind(kind))
		return -EINVAL;
	char dir[4096];
	guest_cache_dir(dir, sizeof(dir));
	if ((size_t)snprintf(buf, len, "%s/%s.%s", dir, id, kind) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int guest_cache_get(const char *buildid, const char *kind, size_t max, char **data, size_t *len)
{
	char path[4200];
	int r = entry_path(buildid, kind, path, sizeof(path));
	if (r < 0)
		return r;
	return file_read_all(path, max, data, len);
}

int guest_cache_put(const char *buildid, const char *kind, const void *data, size_t len)
{
	char path[4200], tmp[4300], dir[4096];
	int r = entry_path(buildid, kind, path, sizeof(path));
	if (r < 0)
		return r;
	guest_cache_dir(dir, sizeof(dir));
	if ((r = file_make_dirs(dir)) < 0)
		return r;
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* ---- The kallsyms entry ------------------------------------------------ */

#define KALLSYMS_HEAD "# domprof guest kallsyms 1 text=%" PRIx64 "\n"

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

char *guest_cache_kallsyms_encode(const char *text, size_t len, uint64_t text_addr, size_t *outlen)
{
	char head[96];
	int hn = snprintf(head, sizeof(head), KALLSYMS_HEAD, text_addr);
	char *buf = xmalloc((size_t)hn + len);
	memcpy(buf, head, (size_t)hn);
	memcpy(buf + hn, text, len);
	*outlen = (size_t)hn + len;
	return buf;
}

char *guest_cache_kallsyms_decode(const char *data, size_t len, uint64_t text_addr, size_t *outlen,
				  size_t *nsyms)
{
	uint64_t text = 0;
	const char *nl = memchr(data, '\n', len);
	char head[96];
	if (!nl || (size_t)(nl - data) >= sizeof(head))
		return NULL;
	memcpy(head, data, (size_t)(nl - data));
	head[nl - data] = 0;
	if (sscanf(head, "# domprof guest kallsyms 1 text=%" SCNx64, &text) != 1 || text % GUEST_KIMAGE_ALIGN ||
	    text < GUEST_KIMAGE_START || text >= GUEST_KIMAGE_END)
		return NULL;
	size_t skip = (size_t)(nl + 1 - data);
	return shift_table(nl + 1, len - skip, (int64_t)(text_addr - text), outlen, nsyms);
}
