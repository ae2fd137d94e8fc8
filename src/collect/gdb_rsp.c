// SPDX-License-Identifier: MIT
/*
 * GDB remote serial protocol client: packet framing and decoding, target
 * description parsing, and a socket connection with timeouts. All input
 * from the stub is treated as hostile: every loop is bounded by the
 * buffer it fills, and anything unexpected is an error, never a guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "util/clock.h"
#include "util/xalloc.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rsp_parse(const uint8_t *buf, size_t len, size_t *consumed,
	      uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t i = 0;

	*consumed = 0;
	*outlen = 0;
	while (i < len && buf[i] == '+')
		i++;
	*consumed = i;
	if (i == len)
		return 0;
	if (buf[i] != '$')
		return -EPROTO;   /* '-' (NAK), '%' (non-stop notification) or junk */

	size_t start = ++i, n = 0;
	uint8_t sum = 0;
	bool esc = false;
	for (; i < len; i++) {
		uint8_t c = buf[i];
		if (i - start > RSP_MAX_RAW)
			return -EMSGSIZE;
		if (c == '#')
			break;
		if (c == '$')
			return -EPROTO;  /* a new packet inside a packet */
		sum += c;
		if (esc) {
			if (n >= outcap)
				return -EMSGSIZE;
			out[n++] = c ^ 0x20;
			esc = false;
		} else if (c == '}') {
			esc = true;
		} else if (c == '*') {
			/* Run-length: previous byte repeated (count - 29) more times. */
			if (n == 0 || i + 1 >= len) {
				if (n == 0)
					return -EPROTO;
				return i - start > RSP_MAX_RAW ? -EMSGSIZE : 0;
			}
			uint8_t r = buf[++i];
			if (r == '#' || r == '$' || r < ' ' || r > '~')
				return -EPROTO;
			sum += r;
			size_t rep = (size_t)r - 29;
			if (rep > outcap - n)
				return -EMSGSIZE;
			memset(out + n, out[n - 1], rep);
			n += rep;
		} else {
			if (n >= outcap)
				return -EMSGSIZE;
			out[n++] = c;
		}
	}
	if (i >= len || i + 2 >= len)   /* need '#' and two checksum digits */
		return i - start > RSP_MAX_RAW ? -EMSGSIZE : 0;
	if (esc)
		return -EPROTO;
	int h = hexval(buf[i + 1]), l = hexval(buf[i + 2]);
	if (h < 0 || l < 0)
		return -EPROTO;
	if ((uint8_t)(h << 4 | l) != sum)
		return -EBADMSG;
	*consumed = i + 3;
	*outlen = n;
	return 1;
}

int rsp_frame(const char *payload, size_t len, char *out, size_t cap)
{
	size_t n = 0;
	uint8_t sum = 0;

	if (cap < 4)
		return -EMSGSIZE;
	out[n++] = '$';
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)payload[i];
		if (c == '$' || c == '#' || c == '}' || c == '*') {
			if (n + 2 > cap - 3)
				return -EMSGSIZE;
			out[n++] = '}';
			sum += '}';
			c ^= 0x20;
		} else if (n + 1 > cap - 3) {
			return -EMSGSIZE;
		}
		out[n++] = (char)c;
		sum += c;
	}
	static const char hx[] = "0123456789abcdef";
	out[n++] = '#';
	out[n++] = hx[sum >> 4];
	out[n++] = hx[sum & 15];
	return (int)n;
}

/* ---- Target description ---------------------------------------------- */

/* Value of attribute `name` inside tag text t[0..len) into out. */
static bool xml_attr(const char *t, size_t len, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i + nl + 2 < len; i++) {
		if ((i == 0 || t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\n' || t[i - 1] == '\r') &&
		    !memcmp(t + i, name, nl) && t[i + nl] == '=' &&
		    (t[i + nl + 1] == '"' || t[i + nl + 1] == '\'')) {
			char q = t[i + nl + 1];
			size_t s = i + nl + 2, e = s;
			while (e < len && t[e] != q)
				e++;
			if (e >= len || e - s >= cap)
				return false;
			memcpy(out, t + s, e - s);
			out[e - s] = 0;
			return true;
		}
	}
	return false;
}

static bool parse_uint(const char *s, unsigned max, unsigned *v)
{
	char *end;
	if (!*s)
		return false;
	errno = 0;
	unsigned long x = strtoul(s, &end, 0);
	if (*end || errno || x > max || *s == '-')
		return false;
	*v = (unsigned)x;
	return true;
}

static const char *memfind(const char *h, size_t hl, const char *n)
{
	size_t nl = strlen(n);
	return nl <= hl ? memmem(h, hl, n, nl) : NULL;
}

static int tdesc_parse_depth(struct rsp_tdesc *td, const char *x, size_t len,
			     rsp_fetch_fn fetch, void *ctx, int depth)
{
	size_t i = 0;

	if (len > RSP_MAX_XML)
		return -EMSGSIZE;
	while (i < len) {
		const char *lt = memchr(x + i, '<', len - i);
		if (!lt)
			break;
		i = lt - x;
		const char *rest = x + i;
		size_t rl = len - i;
		if (rl >= 4 && !memcmp(rest, "<!--", 4)) {
			const char *e = memfind(rest + 4, rl - 4, "-->");
			if (!e)
				return -EPROTO;
			i = (e + 3) - x;
			continue;
		}
		const char *gt = memchr(rest, '>', rl);
		if (!gt)
			return -EPROTO;
		size_t tl = gt - rest + 1;   /* "<...>" */
		const char *tag = rest + 1;
		size_t nl = tl - 2;
		i += tl;
		if (nl && (tag[0] == '?' || tag[0] == '!' || tag[0] == '/'))
			continue;
		if (nl >= 12 && !memcmp(tag, "architecture", 12) && (tag[12] == '>' || tag[12] == ' ')) {
			const char *e = memfind(x + i, len - i, "</architecture>");
			if (!e)
				return -EPROTO;
			size_t al = e - (x + i);
			while (al && (x[i] == ' ' || x[i] == '\n'))
				i++, al--;
			while (al && (x[i + al - 1] == ' ' || x[i + al - 1] == '\n'))
				al--;
			if (al >= sizeof(td->arch))
				return -EPROTO;
			memcpy(td->arch, x + i, al);
			td->arch[al] = 0;
			continue;
		}
		if (nl >= 11 && !memcmp(tag, "xi:include", 10) && (tag[10] == ' ' || tag[10] == '\t' || tag[10] == '\n')) {
			char href[128];
			if (!xml_attr(tag, nl, "href", href, sizeof(href)) || !href[0])
				return -EPROTO;
			/* An annex name goes into a packet: keep it plain. */
			for (char *p = href; *p; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
					return -EPROTO;
			if (depth >= 4 || td->nincludes >= RSP_MAX_INCLUDES || !fetch)
				return -ELOOP;
			td->nincludes++;
			char *data = NULL;
			size_t dl = 0;
			int r = fetch(ctx, href, &data, &dl);
			if (r < 0)
				return r;
			r = tdesc_parse_depth(td, data, dl, fetch, ctx, depth + 1);
			free(data);
			if (r < 0)
				return r;
			continue;
		}
		if (nl >= 4 && !memcmp(tag, "reg", 3) && (tag[3] == ' ' || tag[3] == '\t' || tag[3] == '\n')) {
			char name[32], bits[16], num[16];
			unsigned b, rn;
			if (!xml_attr(tag, nl, "name", name, sizeof(name)) ||
			    !xml_attr(tag, nl, "bitsize", bits, sizeof(bits)) ||
			    !parse_uint(bits, 4096, &b) || b == 0 || b % 8)
				return -EPROTO;
			rn = td->next_regnum;
			if (xml_attr(tag, nl, "regnum", num, sizeof(num)) && !parse_uint(num, 65535, &rn))
				return -EPROTO;
			if (td->nregs >= RSP_MAX_REGS)
				return -E2BIG;
			if (!td->regs)
				td->regs = xcalloc(RSP_MAX_REGS, sizeof(*td->regs));
			struct rsp_reg *r = &td->regs[td->nregs++];
			memset(r, 0, sizeof(*r));
			strcpy(r->name, name);
			r->regnum = rn;
			r->bitsize = b;
			td->next_regnum = rn + 1;
			continue;
		}
	}
	return 0;
}

int rsp_tdesc_parse(struct rsp_tdesc *td, const char *xml, size_t len,
		    rsp_fetch_fn fetch, void *ctx)
{
	return tdesc_parse_depth(td, xml, len, fetch, ctx, 0);
}

static int reg_cmp(const void *a, const void *b)
{
	const struct rsp_reg *x = a, *y = b;
	return x->regnum < y->regnum ? -1 : x->regnum > y->regnum;
}

int rsp_tdesc_finish(struct rsp_tdesc *td)
{
	size_t off = 0;

	if (!td->nregs)
		return -ENOENT;
	qsort(td->regs, td->nregs, sizeof(*td->regs), reg_cmp);
	for (size_t i = 0; i < td->nregs; i++) {
		if (i && td->regs[i].regnum == td->regs[i - 1].regnum)
			return -EPROTO;   /* two registers with one number */
		td->regs[i].offset = off;
		off += td->regs[i].bitsize / 8;
	}
	td->gbytes = off;
	return 0;
}

const struct rsp_reg *rsp_tdesc_find(const struct rsp_tdesc *td, const char *name)
{
	for (size_t i = 0; i < td->nregs; i++)
		if (!strcmp(td->regs[i].name, name))
			return &td->regs[i];
	return NULL;
}

void rsp_tdesc_release(struct rsp_tdesc *td)
{
	free(td->regs);
	memset(td, 0, sizeof(*td));
}

/* ---- Other replies --------------------------------------------------- */

int rsp_hex_le(const char *hex, size_t hexlen, unsigned nbytes, uint64_t *val)
{
	uint64_t v = 0;

	if (nbytes > 8 || hexlen < 2u * nbytes)
		return -EINVAL;
	for (unsigned i = 0; i < nbytes; i++) {
		if (hex[2 * i] == 'x' || hex[2 * i + 1] == 'x')
			return -ENODATA;
		int h = hexval(hex[2 * i]), l = hexval(hex[2 * i + 1]);
		if (h < 0 || l < 0)
			return -EINVAL;
		v |= (uint64_t)(h << 4 | l) << (8 * i);
	}
	*val = v;
	return 0;
}

int rsp_hex_bytes(const char *hex, size_t hexlen, uint8_t *out, size_t cap)
{
	if (hexlen % 2 || hexlen / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < hexlen / 2; i++) {
		int h = hexval(hex[2 * i]), l = hexval(hex[2 * i + 1]);
		if (h < 0 || l < 0)
			return -EINVAL;
		out[i] = (uint8_t)(h << 4 | l);
	}
	return (int)(hexlen / 2);
}

static bool tid_char(char c)
{
	return hexval(c) >= 0 || c == 'p' || c == '.' || c == '-';
}

int rsp_parse_stop(const char *p, size_t len, char *tid, size_t tidcap)
{
	if (tidcap)
		tid[0] = 0;
	if (len < 1)
		return -EPROTO;
	if (p[0] == 'W' || p[0] == 'X')
		return RSP_STOP_EXITED;
	if (p[0] == 'O' && len > 1 && !(len == 2 && p[1] == 'K'))
		return RSP_STOP_OUTPUT;
	if ((p[0] != 'S' && p[0] != 'T') || len < 3 || hexval(p[1]) < 0 || hexval(p[2]) < 0)
		return -EPROTO;
	if (p[0] == 'T') {
		const char *t = memfind(p + 3, len - 3, "thread:");
		if (t) {
			t += 7;
			size_t n = 0;
			while (t + n < p + len && t[n] != ';') {
				if (!tid_char(t[n]) || n + 1 >= RSP_MAX_TID)
					return -EPROTO;
				n++;
			}
			if (tidcap > n) {
				memcpy(tid, t, n);
				tid[n] = 0;
			}
		}
	}
	return RSP_STOP_SIGNAL;
}

int rsp_parse_threads(const char *p, size_t len, char (*tids)[RSP_MAX_TID],
		      size_t *ntids, size_t max)
{
	if (len == 1 && p[0] == 'l')
		return 0;
	if (len < 2 || p[0] != 'm')
		return -EPROTO;
	size_t i = 1;
	while (i < len) {
		size_t n = 0;
		while (i + n < len && p[i + n] != ',') {
			if (!tid_char(p[i + n]) || n + 1 >= RSP_MAX_TID)
				return -EPROTO;
			n++;
		}
		if (n == 0)
			return -EPROTO;
		if (*ntids >= max)
			return -E2BIG;
		memcpy(tids[*ntids], p + i, n);
		tids[*ntids][n] = 0;
		(*ntids)++;
		i += n + 1;
	}
	return 1;
}

/* ---- Connection ------------------------------------------------------ */

void rsp_init(struct rsp_conn *c, int fd, int timeout_ms)
{
	c->fd = fd;
	c->noack = false;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
	c->rlen = 0;
	c->pktlen = 0;
	c->pkt[0] = 0;
	c->bytes_in = c->bytes_out = 0;
}

void rsp_close(struct rsp_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Wait for a non-blocking connect to finish. */
static int connect_wait(int fd, const struct sockaddr *sa, socklen_t salen, int timeout_ms)
{
	if (connect(fd, sa, salen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int r = poll(&pfd, 1, timeout_ms);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return -errno;
	return soerr ? -soerr : 0;
}

int rsp_connect_unix(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int r = connect_wait(fd, (struct sockaddr *)&sa, sizeof(sa), timeout_ms);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int rsp_connect_tcp(const char *host, const char *port, int timeout_ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int r = getaddrinfo(host, port, &hints, &res);
	if (r)
		return r == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	int err = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		err = connect_wait(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
		if (err == 0) {
			int one = 1;
			/* Small request/reply packets: do not let Nagle hold them. */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			freeaddrinfo(res);
			return fd;
		}
		close(fd);
	}
	freeaddrinfo(res);
	return err;
}

int rsp_write(struct rsp_conn *c, const void *buf, size_t len)
{
	const char *p = buf;
	int64_t deadline = mono_ms() + c->timeout_ms;

	if (c->fd < 0)
		return -EPIPE;
	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= n;
			c->bytes_out += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == ECONNRESET ? -EPIPE : -errno;
		int left = (int)(deadline - mono_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

int rsp_send(struct rsp_conn *c, const char *payload)
{
	char buf[512];
	int n = rsp_frame(payload, strlen(payload), buf, sizeof(buf));
	if (n < 0)
		return n;
	return rsp_write(c, buf, n);
}

int rsp_recv(struct rsp_conn *c, int timeout_ms)
{
	int64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : c->timeout_ms);

	if (c->fd < 0)
		return -EPIPE;
	for (;;) {
		size_t used = 0, plen = 0;
		int r = rsp_parse(c->rbuf, c->rlen, &used, (uint8_t *)c->pkt, RSP_MAX_PAYLOAD, &plen);
		if (used) {
			memmove(c->rbuf, c->rbuf + used, c->rlen - used);
			c->rlen -= used;
		}
		if (r < 0)
			return r;
		if (r == 1) {
			c->pkt[plen] = 0;
			c->pktlen = plen;
			return 0;
		}
		if (c->rlen >= sizeof(c->rbuf))
			return -EMSGSIZE;
		int left = (int)(deadline - mono_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, left);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pr == 0)
			return -ETIMEDOUT;
		ssize_t n = recv(c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen, 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == ECONNRESET ? -EPIPE : -errno;
		}
		c->rlen += n;
		c->bytes_in += n;
	}
}

bool rsp_pending(struct rsp_conn *c)
{
	if (c->fd >= 0 && c->rlen < sizeof(c->rbuf)) {
		ssize_t n = recv(c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen, MSG_DONTWAIT);
		if (n == 0)
			return true;   /* EOF: let rsp_recv report it */
		if (n > 0) {
			c->rlen += n;
			c->bytes_in += n;
		}
	}
	/* Acks (for our `c`) are not news. */
	size_t i = 0;
	while (i < c->rlen && c->rbuf[i] == '+')
		i++;
	if (i) {
		memmove(c->rbuf, c->rbuf + i, c->rlen - i);
		c->rlen -= i;
	}
	return c->rlen > 0;
}

int rsp_ack(struct rsp_conn *c, unsigned n)
{
	char acks[64];

	if (c->noack || n == 0)
		return 0;
	while (n) {
		unsigned k = n < sizeof(acks) ? n : sizeof(acks);
		memset(acks, '+', k);
		int r = rsp_write(c, acks, k);
		if (r < 0)
			return r;
		n -= k;
	}
	return 0;
}

int rsp_request(struct rsp_conn *c, const char *payload)
{
	int r = rsp_send(c, payload);
	if (r < 0)
		return r;
	r = rsp_recv(c, 0);
	if (r < 0)
		return r;
	return rsp_ack(c, 1);
}

int rsp_drain(struct rsp_conn *c, int quiet_ms)
{
	for (int i = 0; i < 64; i++) {
		int r = rsp_recv(c, quiet_ms);
		if (r == -ETIMEDOUT) {
			/* Stray acks or a partial packet are dropped too. */
			c->rlen = 0;
			return 0;
		}
		if (r < 0)
			return r;
		r = rsp_ack(c, 1);
		if (r < 0)
			return r;
	}
	return -EPROTO;   /* a stub that never stops talking */
}

int rsp_read_memory(struct rsp_conn *c, uint64_t addr, void *buf, size_t len)
{
	char req[64];
	snprintf(req, sizeof(req), "m%" PRIx64 ",%zx", addr, len);
	int r = rsp_request(c, req);
	if (r < 0)
		return r;
	if (c->pktlen != len * 2)
		return -EFAULT;
	return rsp_hex_bytes(c->pkt, c->pktlen, buf, len) == (int)len ? 0 : -EFAULT;
}

void rsp_detach_packet(const char *tid, char *out, size_t cap)
{
	size_t n = 0;
	snprintf(out, cap, "D");
	if (tid[0] != 'p')
		return;
	while (n < 16 && ((tid[1 + n] >= '0' && tid[1 + n] <= '9') || (tid[1 + n] >= 'a' && tid[1 + n] <= 'f') ||
			  (tid[1 + n] >= 'A' && tid[1 + n] <= 'F')))
		n++;
	if (n > 0 && n < 16 && tid[1 + n] == '.')
		snprintf(out, cap, "D;%.*s", (int)n, tid + 1);
}
