// SPDX-License-Identifier: MIT
/*
 * The active-domain wire protocol (collect/agent_proto): frames over a
 * real socketpair (plain, zstd, resync after garbage, end of stream,
 * timeout, oversized and bad-magic frames), the payload codecs with
 * truncated and hostile inputs, and the relay filter: only TASK, MMAP,
 * SAMPLE and SYMTAB records pass, whatever their contents; DOMAIN,
 * DOMAIN_SWITCH, EVENT, STATS and unknown tags never do.
 *
 * Bounds: a zstd bomb (1 GiB of zeros in ~33 KB, with and without a
 * content size in its header) is refused by ap_recv_max without growing
 * the receive buffer past the bound; a frame within the bound still
 * decodes. Keys: a key file is created 0600 and read back; one readable
 * by others, a symbolic link, a short one or one owned by another user
 * is refused. The two sides' MACs differ and depend on every input.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>


#include "collect/agent_proto.h"
#include "format/format.h"
#include "format/raw.h"
#include "unit.h"

/* `total` zero bytes as one zstd frame, built by hand from RLE blocks of
 * 128 KiB (4 bytes each: ~32 KB per GiB, what zstd itself makes of zeros)
 * so the test spends no time compressing; with_size writes the content
 * size into the frame header, else a 128 KiB window descriptor. Valid
 * zstd: the within-bound case below decodes one. */
static uint8_t *zero_bomb(size_t total, bool with_size, size_t *outlen)
{
	size_t nblocks = (total + (128u << 10) - 1) / (128u << 10);
	uint8_t *out = malloc(14 + 4 * nblocks), *p = out;
	uint32_t magic = 0xFD2FB528u;
	memcpy(p, &magic, 4);
	p += 4;
	if (with_size) {
		*p++ = 0xE0; /* 8-byte content size, single segment */
		uint64_t n = total;
		memcpy(p, &n, 8);
		p += 8;
	} else {
		*p++ = 0x00; /* no content size, a window descriptor follows */
		*p++ = 7 << 3; /* window 2^(10+7) */
	}
	for (size_t left = total; left;) {
		uint32_t k = left < (128u << 10) ? (uint32_t)left : 128u << 10;
		left -= k;
		uint32_t bh = (left == 0) | 1u << 1 | k << 3; /* last?, RLE, size */
		*p++ = (uint8_t)bh;
		*p++ = (uint8_t)(bh >> 8);
		*p++ = (uint8_t)(bh >> 16);
		*p++ = 0; /* the repeated byte */
	}
	*outlen = (size_t)(p - out);
	return out;
}

static void send_raw(int fd, uint16_t type, uint16_t flags, const uint8_t *p, size_t n)
{
	uint8_t h[12];
	uint32_t m = AP_MAGIC, nn = (uint32_t)n;
	memcpy(h, &m, 4); memcpy(h + 4, &type, 2); memcpy(h + 6, &flags, 2); memcpy(h + 8, &nn, 4);
	CHECK(write(fd, h, 12) == 12);
	CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
}

static void test_bounds(void)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	int big = 1 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0, zn;
	uint16_t type = 0, flags = 0;

	/* 1 GiB of zeros with its size in the header: refused on the size,
	 * before anything of it is allocated, at the host's bound too */
	uint8_t *z = zero_bomb(1ull << 30, true, &zn);
	printf("  zstd bomb: 1 GiB of zeros in %zu bytes\n", zn);
	CHECK(zn < 64 * 1024);
	send_raw(sv[0], AP_HELLO, AP_F_ZSTD, z, zn);
	CHECK(ap_recv_max(sv[1], &type, &flags, &buf, &cap, &len, AP_MAX_FRAME, 1000, false) == -EMSGSIZE);
	CHECK(cap < (1u << 20));
	close(sv[0]);
	close(sv[1]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	send_raw(sv[0], AP_HELLO, AP_F_ZSTD, z, zn);
	CHECK(ap_recv_max(sv[1], &type, &flags, &buf, &cap, &len, AP_MAX_REQUEST, 1000, false) == -EMSGSIZE);
	CHECK(cap < (1u << 20));
	free(z);
	close(sv[0]);
	close(sv[1]);

	/* no content size in the header: the stream decoder stops at the bound */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	z = zero_bomb(64u << 20, false, &zn);
	send_raw(sv[0], AP_RECORD, AP_F_ZSTD, z, zn);
	CHECK(ap_recv_max(sv[1], &type, &flags, &buf, &cap, &len, 8u << 20, 2000, false) == -EMSGSIZE);
	CHECK(cap <= (8u << 20) + 2);
	free(z);
	/* ... and decodes one within it, exactly at the bound too */
	z = zero_bomb(100000, false, &zn);
	send_raw(sv[0], AP_RECORD, AP_F_ZSTD, z, zn);
	CHECK(ap_recv_max(sv[1], &type, &flags, &buf, &cap, &len, 100000, 2000, false) == 0);
	CHECK(type == AP_RECORD && len == 100000 && buf[0] == 0 && buf[99999] == 0);
	free(z);
	/* plain payloads: over the bound refused by the header alone */
	uint8_t junk[5000] = { 0 };
	send_raw(sv[0], AP_HELLO, 0, junk, sizeof(junk));
	CHECK(ap_recv_max(sv[1], &type, &flags, &buf, &cap, &len, AP_MAX_REQUEST, 1000, false) == -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
	free(buf);
}

static void test_keys(void)
{
	char dir[] = "/tmp/dp-key-XXXXXX", path[64], err[512];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/key", dir);
	struct ap_key k1, k2;
	bool created = false;
	CHECK(ap_key_load(path, false, &k1, &created, err, sizeof(err)) == -ENOENT);
	CHECK(ap_key_load(path, true, &k1, &created, err, sizeof(err)) == 0 && created);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid());
	CHECK(k1.len == 64);
	CHECK(ap_key_load(path, true, &k2, &created, err, sizeof(err)) == 0 && !created);
	CHECK(k2.len == k1.len && !memcmp(k1.k, k2.k, k1.len));
	/* readable by group or others */
	CHECK(chmod(path, 0640) == 0);
	CHECK(ap_key_load(path, false, &k2, NULL, err, sizeof(err)) == -EPERM);
	printf("  %s\n", err);
	CHECK(strstr(err, "chmod 600") != NULL);
	CHECK(chmod(path, 0604) == 0);
	CHECK(ap_key_load(path, false, &k2, NULL, err, sizeof(err)) == -EPERM);
	CHECK(chmod(path, 0600) == 0);
	/* owned by someone else (needs root to arrange) */
	struct passwd *nb = getpwnam("nobody");
	if (geteuid() == 0 && nb) {
		CHECK(chown(path, nb->pw_uid, (gid_t)-1) == 0);
		CHECK(ap_key_load(path, false, &k2, NULL, err, sizeof(err)) == -EPERM);
		printf("  %s\n", err);
		CHECK(strstr(err, "owned by uid") != NULL);
		CHECK(chown(path, 0, (gid_t)-1) == 0);
	}
	/* a symbolic link is not followed */
	char link[80];
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK(symlink(path, link) == 0);
	CHECK(ap_key_load(link, true, &k2, NULL, err, sizeof(err)) < 0);
	CHECK(strstr(err, "symbolic link") != NULL);
	/* too short */
	char shortp[80];
	snprintf(shortp, sizeof(shortp), "%s/short", dir);
	int fd = open(shortp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "tooshort\n", 9) == 9);
	close(fd);
	CHECK(ap_key_load(shortp, false, &k2, NULL, err, sizeof(err)) == -EINVAL);

	/* MACs: the two sides' labels differ; each input changes the MAC */
	uint8_t nh[AP_NONCE], na[AP_NONCE], m1[AP_MAC], m2[AP_MAC];
	CHECK(ap_nonce(nh) == 0 && ap_nonce(na) == 0);
	CHECK(memcmp(nh, na, AP_NONCE) != 0);
	ap_auth_mac(&k1, true, nh, na, m1);
	ap_auth_mac(&k1, false, nh, na, m2);
	CHECK(memcmp(m1, m2, AP_MAC) != 0);
	ap_auth_mac(&k1, true, na, nh, m2);
	CHECK(memcmp(m1, m2, AP_MAC) != 0);
	k2 = k1;
	k2.k[0] ^= 1;
	ap_auth_mac(&k2, true, nh, na, m2);
	CHECK(memcmp(m1, m2, AP_MAC) != 0);
	ap_auth_mac(&k1, true, nh, na, m2);
	CHECK(memcmp(m1, m2, AP_MAC) == 0);

	unlink(link);
	unlink(shortp);
	unlink(path);
	rmdir(dir);
}

static void test_frames(void)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;
	uint16_t type = 0, flags = 0;

	CHECK(ap_send(sv[0], AP_STOP, 0, NULL, 0) == 0);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == 0);
	CHECK(type == AP_STOP && len == 0);

	/* a compressible payload goes through zstd and comes back whole */
	size_t big = 200000;
	uint8_t *p = malloc(big);
	for (size_t i = 0; i < big; i++)
		p[i] = (uint8_t)(i % 7);
	if (fork() == 0) { /* the writer side must not block the reader */
		ap_send(sv[0], AP_RECORD, AP_F_ZSTD, p, big);
		free(p); /* the child's copy: valgrind counts it at _exit */
		_exit(0);
	}
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 5000, false) == 0);
	CHECK(type == AP_RECORD && (flags & AP_F_ZSTD) && len == big);
	CHECK(len == big && !memcmp(buf, p, big));
	free(p);

	/* garbage before a frame: refused on a socket, skipped with resync */
	CHECK(write(sv[0], "xyz", 3) == 3);
	CHECK(ap_send(sv[0], AP_COLLECT, 0, "ab", 2) == 0);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, true) == 0);
	CHECK(type == AP_COLLECT && len == 2 && !memcmp(buf, "ab", 2));
	CHECK(write(sv[0], "xyzwxyzwxyzw", 12) == 12);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == -EPROTO);

	/* nothing arrives: timeout */
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 50, false) == -ETIMEDOUT);

	/* a frame announcing more than AP_MAX_FRAME is refused unread */
	uint8_t h[12];
	uint32_t m = AP_MAGIC, n = AP_MAX_FRAME + 1;
	uint16_t t = AP_RECORD, f = 0;
	memcpy(h, &m, 4); memcpy(h + 4, &t, 2); memcpy(h + 6, &f, 2); memcpy(h + 8, &n, 4);
	CHECK(write(sv[0], h, 12) == 12);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == -EPROTO);

	/* a "zstd" payload that is not zstd */
	CHECK(ap_send(sv[0], AP_RECORD, 0, "notzstd!", 8) == 0);
	/* rewrite: send a raw header with the flag and junk bytes */
	f = AP_F_ZSTD; n = 8;
	memcpy(h + 6, &f, 2); memcpy(h + 8, &n, 4);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == 0);
	CHECK(write(sv[0], h, 12) == 12 && write(sv[0], "notzstd!", 8) == 8);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == -EPROTO);

	/* the peer goes away: end of stream, also in the middle of a frame */
	CHECK(write(sv[0], h, 5) == 5);
	close(sv[0]);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == -ECONNRESET);
	CHECK(ap_recv(sv[1], &type, &flags, &buf, &cap, &len, 1000, false) == -ECONNRESET);
	/* writing to a closed peer is an error, not SIGPIPE */
	CHECK(ap_send(sv[1], AP_STOP, 0, NULL, 0) == -EPIPE);
	close(sv[1]);
	free(buf);
}

static void test_payloads(void)
{
	struct ap_hello h = { .version = AP_VERSION, .ncpus = 3, .features = AP_FEAT_DWARF | 0x80 }, g;
	strcpy(h.hostname, "guest-1");
	strcpy(h.release, "6.1.0-57-amd64");
	uint8_t b[256];
	size_t n = ap_hello_encode(&h, b, sizeof(b));
	CHECK(n == 8 + 2 + 7 + 2 + 14 + 4);
	CHECK(ap_hello_decode(b, n, &g) == 0);
	CHECK(g.version == AP_VERSION && g.ncpus == 3 && g.features == (AP_FEAT_DWARF | 0x80));
	CHECK_STR(g.hostname, "guest-1");
	CHECK_STR(g.release, "6.1.0-57-amd64");
	/* an agent before features ends after the release: none offered */
	for (size_t k = n - 4; k < n; k++)
		CHECK(ap_hello_decode(b, k, &g) == 0 && g.features == 0 && g.ncpus == 3);
	/* a later version's trailing bytes are ignored */
	CHECK(ap_hello_decode(b, n, &g) == 0 && g.features == (AP_FEAT_DWARF | 0x80));
	memset(b + n, 0xee, 8);
	CHECK(ap_hello_decode(b, n + 8, &g) == 0 && g.features == (AP_FEAT_DWARF | 0x80));
	for (size_t k = 0; k < n - 4; k++) /* every truncation of the strings is refused */
		CHECK(ap_hello_decode(b, k, &g) == -EPROTO);
	b[8] = 0xff; /* hostname length past the end */
	CHECK(ap_hello_decode(b, n, &g) == -EPROTO);
	CHECK(ap_hello_encode(&h, b, n - 1) == 0); /* no room: nothing */

	struct ap_start s = { .hz = 997, .flags = AP_START_CALLCHAIN }, s2;
	uint8_t sb[AP_START_MAX];
	CHECK(ap_start_encode(&s, sb) == 8);
	CHECK(ap_start_decode(sb, 8, &s2) == 0 && s2.hz == 997 && s2.flags == AP_START_CALLCHAIN &&
	      s2.stack_size == 0);
	CHECK(ap_start_decode(sb, 7, &s2) == -EPROTO);
	CHECK(ap_start_decode(sb, 12, &s2) == -EPROTO); /* a stack size without the flag */
	s.hz = 0; ap_start_encode(&s, sb);
	CHECK(ap_start_decode(sb, 8, &s2) == -EINVAL);
	s.hz = 0xffffffffu; ap_start_encode(&s, sb);
	CHECK(ap_start_decode(sb, 8, &s2) == -EINVAL);
	s.hz = 100; s.flags = 0x80000000u; ap_start_encode(&s, sb);
	CHECK(ap_start_decode(sb, 8, &s2) == -EINVAL); /* unknown flags: refused */

	/* DWARF stacks: 12 bytes, with call chains, 8..DP_MAX_USTACK in 8s */
	s = (struct ap_start){ .hz = 1000, .flags = AP_START_CALLCHAIN | AP_START_DWARF, .stack_size = 8192 };
	CHECK(ap_start_encode(&s, sb) == 12);
	CHECK(ap_start_decode(sb, 12, &s2) == 0 && s2.flags == s.flags && s2.stack_size == 8192);
	for (size_t k = 0; k < 12; k++) /* the stack size is not optional */
		CHECK(ap_start_decode(sb, k, &s2) == -EPROTO);
	uint8_t big[16] = { 0 };
	memcpy(big, sb, 12);
	CHECK(ap_start_decode(big, 16, &s2) == -EPROTO);
	static const uint32_t bad[] = { 0, 4, 12, 8191, DP_MAX_USTACK + 8, 0xfffffff8u, 0xffffffffu };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		s.stack_size = bad[k];
		ap_start_encode(&s, sb);
		CHECK(ap_start_decode(sb, 12, &s2) == -EINVAL);
	}
	static const uint32_t good[] = { 8, 16, 4096, DP_MAX_USTACK };
	for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
		s.stack_size = good[k];
		ap_start_encode(&s, sb);
		CHECK(ap_start_decode(sb, 12, &s2) == 0 && s2.stack_size == good[k]);
	}
	s = (struct ap_start){ .hz = 1000, .flags = AP_START_DWARF, .stack_size = 8192 };
	ap_start_encode(&s, sb);
	CHECK(ap_start_decode(sb, 12, &s2) == -EINVAL); /* DWARF stacks need call chains */

	struct ap_end e = { ~0ull, 0, 42 }, e2;
	uint8_t eb[24];
	ap_end_encode(&e, eb);
	CHECK(ap_end_decode(eb, 24, &e2) == 0 && e2.records == ~0ull && e2.samples == 0 && e2.lost == 42);
	CHECK(ap_end_decode(eb, 23, &e2) == -EPROTO);

	size_t plen;
	uint8_t *p = ap_symtab_encode(DP_SYMTAB_ELF, "0123abcd", "\x7f" "ELF", 4, &plen);
	uint32_t kind;
	char name[64];
	const uint8_t *data;
	size_t size;
	CHECK(ap_symtab_decode(p, plen, &kind, name, sizeof(name), &data, &size) == 0);
	CHECK(kind == DP_SYMTAB_ELF && size == 4 && !memcmp(data, "\x7f" "ELF", 4));
	CHECK_STR(name, "0123abcd");
	CHECK(ap_symtab_decode(p, 9, &kind, name, sizeof(name), &data, &size) == -EPROTO);
	CHECK(ap_symtab_decode(p, plen, &kind, name, 4, &data, &size) == -EPROTO);
	p[8] = '\0'; /* a NUL inside the name */
	CHECK(ap_symtab_decode(p, plen, &kind, name, sizeof(name), &data, &size) == -EPROTO);
	free(p);
}

static void rec(uint8_t *r, uint16_t type, uint32_t len)
{
	memset(r, 0, len);
	memcpy(r, &type, 2);
	memcpy(r + 4, &len, 4);
}

static void test_relay_filter(void)
{
	uint8_t r[64];
	const uint16_t pass[] = { DP_REC_TASK, DP_REC_MMAP, DP_REC_SAMPLE, DP_REC_SYMTAB };
	const uint16_t refuse[] = { 0, DP_REC_EVENT, DP_REC_DOMAIN, DP_REC_DOMAIN_SWITCH, DP_REC_LOST,
				    DP_REC_STATS, DP_REC_MAX_KNOWN + 1, 0xffff };
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		rec(r, pass[i], 48);
		memset(r + 8, 0xff, 40); /* every value is data: ip ~0, pid ~0 ... */
		CHECK(ap_check_record(r, 48) == pass[i]);
		CHECK(ap_check_record(r, 40) == -EPROTO);  /* length field disagrees */
		rec(r, pass[i], 44);
		CHECK(ap_check_record(r, 44) == -EPROTO);  /* not 8-aligned */
	}
	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		rec(r, refuse[i], 16);
		CHECK(ap_check_record(r, 16) == -EPROTO);
	}
	CHECK(ap_check_record(r, 4) == -EPROTO);
	char tb[16];
	CHECK_STR(ap_type_name(AP_START, tb, sizeof(tb)), "START");
	CHECK_STR(ap_type_name(99, tb, sizeof(tb)), "type 99");
}

/* HELLO and LOST payloads, and the raw framing walk the relays use. */
static void test_small_payloads(void)
{
	uint8_t v[4], l[8];
	uint64_t n = 0;
	ap_hello_req_encode(AP_VERSION, v);
	CHECK(ap_hello_req_decode(v, 4) == AP_VERSION);
	CHECK(ap_hello_req_decode(v, 3) == 0);
	ap_lost_encode(0x123456789ull, l);
	CHECK(ap_lost_decode(l, 8, &n) == 0 && n == 0x123456789ull);
	CHECK(ap_lost_decode(l, 7, &n) == -EPROTO);

	uint8_t b[64];
	rec(b, DP_REC_TASK, 16);
	rec(b + 16, DP_REC_SAMPLE, 48);
	size_t o = 0;
	uint16_t t;
	uint32_t rl;
	CHECK(dp_raw_next(b, 64, &o, &t, &rl) == 1 && t == DP_REC_TASK && rl == 16 && o == 16);
	CHECK(dp_raw_next(b, 64, &o, &t, &rl) == 1 && t == DP_REC_SAMPLE && rl == 48 && o == 64);
	CHECK(dp_raw_next(b, 64, &o, &t, &rl) == 0);
	o = 16;
	CHECK(dp_raw_next(b, 60, &o, &t, &rl) == -EPROTO && o == 16); /* runs past the end */
	o = 0;
	CHECK(dp_raw_next(b, 4, &o, &t, &rl) == -EPROTO);             /* no whole header */
	rec(b, DP_REC_TASK, 4);
	CHECK(dp_raw_next(b, 64, &o, &t, &rl) == -EPROTO);            /* length below a header */
}

int main(void)
{
	test_small_payloads();
	test_frames();
	test_payloads();
	test_relay_filter();
	test_bounds();
	test_keys();
	return unit_done();
}
