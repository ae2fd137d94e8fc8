// SPDX-License-Identifier: MIT
/*
 * The active-domain wire protocol (see agent_proto.h and docs/active.md):
 * framing over a file descriptor with deadlines, optional zstd payloads,
 * and the encoders/decoders of the few payloads. Both the host's
 * agent_source and the in-guest agent use it, so a change of the bytes
 * happens in one place.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "collect/agent_proto.h"
#include "format/format.h"
#include "util/clock.h"
#include "util/le.h"
#include "util/sha256.h"
#include "util/xalloc.h"


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
			int64_t left = deadline - mono_ms();
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

static void reserve(uint8_t **buf, size_t *cap, size_t n)
{
	if (*cap < n + 1) {
		*buf = xrealloc(*buf, n + 1);
		*cap = n + 1;
	}
}

/* A frame without a content size: decompress in a stream into *buf,
 * growing it, never past max. The window is capped too, since a stream
 * decoder allocates the window the frame asks for. */
static int unzstd_stream(const uint8_t *src, size_t n, size_t max, uint8_t **buf, size_t *cap,
			 size_t *len)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (!d)
		return -ENOMEM;
	int wlog = 10;
	while (wlog < 27 && ((size_t)1 << wlog) < max)
		wlog++;
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, wlog);
	size_t room = max < 65536 ? max : 65536;
	reserve(buf, cap, room);
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_outBuffer out = { *buf, room, 0 };
	int r = 0;
	for (;;) {
		size_t ipos = in.pos, opos = out.pos;
		size_t z = ZSTD_decompressStream(d, &out, &in);
		if (ZSTD_isError(z)) {
			r = ZSTD_getErrorCode(z) == ZSTD_error_frameParameter_windowTooLarge ? -EMSGSIZE : -EPROTO;
			break;
		}
		if (z == 0 && in.pos == in.size)
			break; /* every frame complete, all input used */
		if (out.pos == out.size) {
			/* room for one byte past max: a frame of exactly max
			 * bytes may need a call more to say it ended */
			if (out.size > max) {
				r = -EMSGSIZE;
				break;
			}
			room = out.size * 2 < max + 1 ? out.size * 2 : max + 1;
			reserve(buf, cap, room);
			out.dst = *buf;
			out.size = room;
		} else if (in.pos == in.size || (in.pos == ipos && out.pos == opos)) {
			r = -EPROTO; /* truncated frame, or no progress */
			break;
		}
	}
	ZSTD_freeDCtx(d);
	*len = out.pos;
	return r;
}

static int unzstd(const uint8_t *raw, size_t n, size_t max, uint8_t **buf, size_t *cap, size_t *len)
{
	unsigned long long size = ZSTD_getFrameContentSize(raw, n);
	if (size == ZSTD_CONTENTSIZE_ERROR)
		return -EPROTO;
	if (size == ZSTD_CONTENTSIZE_UNKNOWN)
		return unzstd_stream(raw, n, max, buf, cap, len);
	if (size > max)
		return -EMSGSIZE; /* checked before a byte is allocated */
	reserve(buf, cap, (size_t)size);
	/* one-shot into a buffer of the stated size: a frame that decodes
	 * to more, or a second frame, fails with dstSize_tooSmall */
	size_t got = ZSTD_decompress(*buf, (size_t)size, raw, n);
	if (ZSTD_isError(got) || got != size)
		return -EPROTO;
	*len = got;
	return 0;
}

int ap_recv_max(int fd, uint16_t *type, uint16_t *flags, uint8_t **buf, size_t *cap,
		size_t *len, size_t max, int timeout_ms, bool resync)
{
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	uint8_t h[AP_HDR];
	if (max > AP_MAX_FRAME)
		max = AP_MAX_FRAME;
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
	uint16_t fl = get16(h + 6);
	/* compressed, a payload of max bytes may take a little more */
	size_t limit = (fl & AP_F_ZSTD) ? ZSTD_compressBound(max) : max;
	if (n > AP_MAX_FRAME)
		return -EPROTO;
	if (n > limit)
		return -EMSGSIZE;
	*type = get16(h + 4);
	*flags = fl;
	if (!(fl & AP_F_ZSTD)) {
		reserve(buf, cap, n);
		if ((r = read_full(fd, *buf, n, deadline)) < 0)
			return r;
		*len = n;
		return 0;
	}
	uint8_t *raw = xmalloc(n ? n : 1);
	if ((r = read_full(fd, raw, n, deadline)) == 0)
		r = unzstd(raw, n, max, buf, cap, len);
	free(raw);
	return r;
}

int ap_recv(int fd, uint16_t *type, uint16_t *flags, uint8_t **buf, size_t *cap,
	    size_t *len, int timeout_ms, bool resync)
{
	return ap_recv_max(fd, type, flags, buf, cap, len, AP_MAX_FRAME, timeout_ms, resync);
}

const char *ap_strerror(int r)
{
	switch (r) {
	case -EPROTO: return "protocol error";
	case -EMSGSIZE: return "frame too large";
	case -ETIMEDOUT: return "timed out";
	case -ECONNRESET: return "connection closed";
	default: return strerror(-r);
	}
}

/* ---- authentication ---- */

int ap_key_load(const char *path, bool create, struct ap_key *key, bool *created,
		char *err, size_t errlen)
{
	memset(key, 0, sizeof(*key));
	if (created)
		*created = false;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT && create) {
		uint8_t raw[32];
		char hex[2 * sizeof(raw) + 1];
		int r = ap_nonce(raw);
		if (r < 0) {
			snprintf(err, errlen, "cannot make a key: getrandom: %s", strerror(-r));
			return r;
		}
		for (size_t i = 0; i < sizeof(raw); i++)
			sprintf(hex + 2 * i, "%02x", raw[i]);
		hex[2 * sizeof(raw)] = '\n';
		int w = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (w < 0 || fchmod(w, 0600) < 0 || write(w, hex, sizeof(hex)) != (ssize_t)sizeof(hex) ||
		    fsync(w) < 0) {
			int e = errno;
			snprintf(err, errlen, "cannot create key file %s: %s", path, strerror(e));
			if (w >= 0) {
				close(w);
				unlink(path);
			}
			return -e;
		}
		close(w);
		if (created)
			*created = true;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	}
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open key file %s: %s", path,
			 e == ELOOP ? "it is a symbolic link" : strerror(e));
		return -e;
	}
	struct stat st;
	int r = 0;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot stat key file %s: %s", path, strerror(-r));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "key file %s is not a regular file", path);
	} else if (st.st_uid != geteuid()) {
		r = -EPERM;
		snprintf(err, errlen, "key file %s is owned by uid %u, not by this user (uid %u)", path,
			 (unsigned)st.st_uid, (unsigned)geteuid());
	} else if (st.st_mode & 077) {
		r = -EPERM;
		snprintf(err, errlen, "key file %s is accessible by group or others (mode %04o); "
			 "chmod 600 it", path, (unsigned)(st.st_mode & 07777));
	} else if (st.st_size < AP_KEY_MIN || st.st_size > AP_KEY_MAX + 1) {
		r = -EINVAL;
		snprintf(err, errlen, "key file %s holds %lld bytes; a key is %u to %u bytes", path,
			 (long long)st.st_size, AP_KEY_MIN, AP_KEY_MAX);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	uint8_t b[AP_KEY_MAX + 2];
	ssize_t n;
	while ((n = read(fd, b, sizeof(b))) < 0 && errno == EINTR)
		;
	close(fd);
	if (n > 0 && b[n - 1] == '\n')
		n--;
	if (n < (ssize_t)AP_KEY_MIN || n > (ssize_t)AP_KEY_MAX) {
		snprintf(err, errlen, "key file %s holds %zd bytes; a key is %u to %u bytes", path,
			 n < 0 ? (ssize_t)0 : n, AP_KEY_MIN, AP_KEY_MAX);
		memset(b, 0, sizeof(b));
		return -EINVAL;
	}
	memcpy(key->k, b, (size_t)n);
	key->len = (size_t)n;
	memset(b, 0, sizeof(b));
	return 0;
}

int ap_nonce(uint8_t out[AP_NONCE])
{
	size_t got = 0;
	while (got < AP_NONCE) {
		ssize_t n = getrandom(out + got, AP_NONCE - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

void ap_auth_mac(const struct ap_key *key, bool host_side, const uint8_t host_nonce[AP_NONCE],
		 const uint8_t agent_nonce[AP_NONCE], uint8_t out[AP_MAC])
{
	const char *label = host_side ? "domprof-agent host" : "domprof-agent agent";
	const void *parts[] = { label, host_nonce, agent_nonce };
	size_t lens[] = { strlen(label) + 1, AP_NONCE, AP_NONCE };
	hmac_sha256(key->k, key->len, parts, lens, 3, out);
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
	o += k;
	if (outlen - o < 4)
		return 0;
	put32(out + o, h->features);
	return o + 4;
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
	/* an agent before features ends here; bytes past the field are a
	 * later version's, ignored as before */
	if (end - q >= 4)
		h->features = get32(q);
	return 0;
}

size_t ap_start_encode(const struct ap_start *s, uint8_t out[AP_START_MAX])
{
	put32(out, s->hz);
	put32(out + 4, s->flags);
	if (!(s->flags & AP_START_DWARF))
		return 8;
	put32(out + 8, s->stack_size);
	return 12;
}

int ap_start_decode(const uint8_t *p, size_t len, struct ap_start *s)
{
	memset(s, 0, sizeof(*s));
	if (len < 8)
		return -EPROTO;
	s->hz = get32(p);
	s->flags = get32(p + 4);
	/* the length follows from the flags: no field is optional */
	if (len != ((s->flags & AP_START_DWARF) ? 12u : 8u))
		return -EPROTO;
	if (s->flags & AP_START_DWARF)
		s->stack_size = get32(p + 8);
	if (!s->hz || s->hz > 100000 || (s->flags & ~(AP_START_CALLCHAIN | AP_START_DWARF)))
		return -EINVAL;
	/* the stack size becomes the recorder's argument: only what its
	 * own --call-graph dwarf,SIZE would make of a valid SIZE */
	if ((s->flags & AP_START_DWARF) &&
	    (!(s->flags & AP_START_CALLCHAIN) || !s->stack_size || s->stack_size % 8 ||
	     s->stack_size > DP_MAX_USTACK))
		return -EINVAL;
	return 0;
}

void ap_end_encode(const struct ap_end *e, uint8_t out[24])
{
	put64(out, e->records);
	put64(out + 8, e->samples);
	put64(out + 16, e->lost);
}

void ap_hello_req_encode(uint32_t version, uint8_t out[4])
{
	put32(out, version);
}

uint32_t ap_hello_req_decode(const uint8_t *p, size_t len)
{
	return len >= 4 ? get32(p) : 0;
}

void ap_lost_encode(uint64_t count, uint8_t out[8])
{
	put64(out, count);
}

int ap_lost_decode(const uint8_t *p, size_t len, uint64_t *count)
{
	if (len != 8)
		return -EPROTO;
	*count = get64(p);
	return 0;
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

bool ap_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

const char *ap_type_name(uint16_t type, char *buf, size_t buflen)
{
	static const char *const names[] = {
		[AP_HELLO] = "HELLO", [AP_START] = "START", [AP_STOP] = "STOP",
		[AP_COLLECT] = "COLLECT", [AP_HELLO_OK] = "HELLO_OK", [AP_STARTED] = "STARTED",
		[AP_STOPPED] = "STOPPED", [AP_RECORD] = "RECORD", [AP_SYMTAB] = "SYMTAB",
		[AP_LOST] = "LOST", [AP_END] = "END", [AP_ERROR] = "ERROR",
		[AP_AUTH] = "AUTH", [AP_AUTH_PROOF] = "AUTH_PROOF",
		[AP_AUTH_CHALLENGE] = "AUTH_CHALLENGE", [AP_AUTH_OK] = "AUTH_OK",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	snprintf(buf, buflen, "type %u", type);
	return buf;
}
