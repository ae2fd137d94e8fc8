// SPDX-License-Identifier: MIT
/*
 * The active-domain wire protocol (see agent_proto.h and docs/active.md):
 * framing over a file descriptor with deadlines, optional zstd payloads,
 * and the encoders/decoders of the few payloads. Both the host's
 * agent_source and the in-guest agent use it, so a change of the bytes
 * happens in one place.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "collect/agent_proto.h"
#include "format/format.h"
#include "util/le.h"
#include "util/xalloc.h"


static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	bool sock = true;
	while (n) {
		/* MSG_NOSIGNAL: a peer that went away is an error to report,
		 * not a SIGPIPE that kills the recorder */
		ssize_t w = sock ? send(fd, b, n, MSG_NOSIGNAL) : write(fd, b, n);
		if (w < 0 && errno == ENOTSOCK) {
			sock = false;
			continue;
		}
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = { .fd = fd, .events = POLLOUT };
				poll(&pf, 1, 1000);
				continue;
			}
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int ap_send(int fd, uint16_t type, uint16_t flags, const void *payload, size_t len)
{
	void *z = NULL;
	if ((flags & AP_F_ZSTD) && len) {
		size_t bound = ZSTD_compressBound(len);
		z = xmalloc(bound);
		size_t zn = ZSTD_compress(z, bound, payload, len, 1);
		if (ZSTD_isError(zn)) {
			free(z);
			return -EIO;
		}
		payload = z;
		len = zn;
	} else {
		flags &= (uint16_t)~AP_F_ZSTD;
	}
	if (len > AP_MAX_FRAME) {
		free(z);
		return -EMSGSIZE;
	}
	uint8_t h[AP_HDR];
	put32(h, AP_MAGIC);
	put16(h + 4, type);
	put16(h + 6, flags);
	put32(h + 8, (uint32_t)len);
	int r = write_all(fd, h, sizeof(h));
	if (!r && len)
		r = write_all(fd, payload, len);
	free(z);
	return r;
}

/* Read exactly n bytes before the deadline (-1: none). */
static int read_full(int fd, void *p, size_t n, int64_t deadline)
{
	uint8_t *b = p;
	while (n) {
		int t = -1;
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			t = left > 1000000 ? 1000000 : (int)left;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int pr = poll(&pf, 1, t);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pr == 0)
			continue; /* the deadline check above ends it */
		ssize_t r = read(fd, b, n);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

int ap_recv(int fd, uint16_t *type, uint16_t *flags, uint8_t **buf, size_t *cap,
	    size_t *len, int timeout_ms, bool resync)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t h[AP_HDR];
	int r = read_full(fd, h, AP_HDR, deadline);
	if (r < 0)
		return r;
	while (get32(h) != AP_MAGIC) {
		if (!resync)
			return -EPROTO;
		memmove(h, h + 1, AP_HDR - 1);
		if ((r = read_full(fd, h + AP_HDR - 1, 1, deadline)) < 0)
			return r;
	}
	uint32_t n = get32(h + 8);
	if (n > AP_MAX_FRAME)
		return -EPROTO;
	*type = get16(h + 4);
	*flags = get16(h + 6);
	uint8_t *raw = xmalloc(n ? n : 1);
	if ((r = read_full(fd, raw, n, deadline)) < 0) {
		free(raw);
		return r;
	}
	if (*flags & AP_F_ZSTD) {
		unsigned long long size = ZSTD_getFrameContentSize(raw, n);
		if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
		    size > (1ull << 30)) {
			free(raw);
			return -EPROTO;
		}
		if (*cap < size + 1) {
			*buf = xrealloc(*buf, (size_t)size + 1);
			*cap = (size_t)size + 1;
		}
		size_t got = ZSTD_decompress(*buf, (size_t)size, raw, n);
		free(raw);
		if (ZSTD_isError(got) || got != size)
			return -EPROTO;
		*len = got;
		return 0;
	}
	if (*cap < (size_t)n + 1) {
		*buf = xrealloc(*buf, (size_t)n + 1);
		*cap = (size_t)n + 1;
	}
	memcpy(*buf, raw, n);
	free(raw);
	*len = n;
	return 0;
}

/* ---- payloads ---- */

static size_t put_str(uint8_t *out, size_t room, const char *s)
{
	size_t n = strnlen(s, 64);
	if (room < 2 + n)
		return 0;
	put16(out, (uint16_t)n);
	memcpy(out + 2, s, n);
	return 2 + n;
}

static int get_str(const uint8_t **p, const uint8_t *end, char *out, size_t cap)
{
	if (end - *p < 2)
		return -EPROTO;
	size_t n = get16(*p);
	if ((size_t)(end - *p - 2) < n || n >= cap)
		return -EPROTO;
	memcpy(out, *p + 2, n);
	out[n] = '\0';
	if (memchr(out, '\0', n))
		return -EPROTO;
	*p += 2 + n;
	return 0;
}

size_t ap_hello_encode(const struct ap_hello *h, uint8_t *out, size_t outlen)
{
	if (outlen < 8)
		return 0;
	put32(out, h->version);
	put32(out + 4, h->ncpus);
	size_t o = 8, k;
	if (!(k = put_str(out + o, outlen - o, h->hostname)))
		return 0;
	o += k;
	if (!(k = put_str(out + o, outlen - o, h->release)))
		return 0;
	return o + k;
}

int ap_hello_decode(const uint8_t *p, size_t len, struct ap_hello *h)
{
	memset(h, 0, sizeof(*h));
	if (len < 8)
		return -EPROTO;
	h->version = get32(p);
	h->ncpus = get32(p + 4);
	const uint8_t *q = p + 8, *end = p + len;
	if (get_str(&q, end, h->hostname, sizeof(h->hostname)) < 0 ||
	    get_str(&q, end, h->release, sizeof(h->release)) < 0)
		return -EPROTO;
	return 0;
}

void ap_start_encode(const struct ap_start *s, uint8_t out[8])
{
	put32(out, s->hz);
	put32(out + 4, s->flags);
}

int ap_start_decode(const uint8_t *p, size_t len, struct ap_start *s)
{
	if (len != 8)
		return -EPROTO;
	s->hz = get32(p);
	s->flags = get32(p + 4);
	if (!s->hz || s->hz > 100000 || (s->flags & ~AP_START_CALLCHAIN))
		return -EINVAL;
	return 0;
}

void ap_end_encode(const struct ap_end *e, uint8_t out[24])
{
	put64(out, e->records);
	put64(out + 8, e->samples);
	put64(out + 16, e->lost);
}

int ap_end_decode(const uint8_t *p, size_t len, struct ap_end *e)
{
	if (len != 24)
		return -EPROTO;
	e->records = get64(p);
	e->samples = get64(p + 8);
	e->lost = get64(p + 16);
	return 0;
}

uint8_t *ap_symtab_encode(uint32_t kind, const char *name, const void *data, size_t size,
			  size_t *outlen)
{
	size_t n = strlen(name);
	if (n > 4096)
		n = 4096;
	uint8_t *out = xmalloc(6 + n + size);
	put32(out, kind);
	put16(out + 4, (uint16_t)n);
	memcpy(out + 6, name, n);
	if (size)
		memcpy(out + 6 + n, data, size);
	*outlen = 6 + n + size;
	return out;
}

int ap_symtab_decode(const uint8_t *p, size_t len, uint32_t *kind, char *name, size_t namecap,
		     const uint8_t **data, size_t *size)
{
	if (len < 6)
		return -EPROTO;
	*kind = get32(p);
	size_t n = get16(p + 4);
	if (len - 6 < n || n >= namecap || n == 0 || memchr(p + 6, '\0', n))
		return -EPROTO;
	memcpy(name, p + 6, n);
	name[n] = '\0';
	*data = p + 6 + n;
	*size = len - 6 - n;
	return 0;
}

int ap_check_record(const uint8_t *raw, size_t len)
{
	if (len < 8 || len % 8 || get32(raw + 4) != len)
		return -EPROTO;
	uint16_t t = get16(raw);
	switch (t) {
	case DP_REC_TASK:
	case DP_REC_MMAP:
	case DP_REC_SAMPLE:
	case DP_REC_SYMTAB:
		return t;
	default:
		return -EPROTO;
	}
}

const char *ap_type_name(uint16_t type, char *buf, size_t buflen)
{
	static const char *const names[] = {
		[AP_HELLO] = "HELLO", [AP_START] = "START", [AP_STOP] = "STOP",
		[AP_COLLECT] = "COLLECT", [AP_HELLO_OK] = "HELLO_OK", [AP_STARTED] = "STARTED",
		[AP_STOPPED] = "STOPPED", [AP_RECORD] = "RECORD", [AP_SYMTAB] = "SYMTAB",
		[AP_LOST] = "LOST", [AP_END] = "END", [AP_ERROR] = "ERROR",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	snprintf(buf, buflen, "type %u", type);
	return buf;
}
