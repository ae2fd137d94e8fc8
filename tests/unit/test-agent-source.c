// SPDX-License-Identifier: MIT
/*
 * The host side of active domains (collect/agent_source) against a
 * hostile or broken agent. The test plays the agent itself on a real
 * loopback TCP socket (a thread of this process listening on 127.0.0.1,
 * port 0) and drives the host through the public API: start, write_meta,
 * drain into a dp_writer on a temp file, stop, free. Each agent
 * misbehaves in one way (garbage, wrong version, oversized or cut
 * frames, forbidden or lying records, bad zstd, silence after STOP,
 * wrong END totals); the host must end only that source with a one-line
 * reason (or fail start cleanly), and the file read back with dp_reader
 * must be undamaged and hold only the agent's TASK/MMAP/SAMPLE/SYMTAB
 * records under the agent's domain id: a guest cannot forge another
 * domain's samples, DOMAIN, EVENT or STATS records. A well-behaved agent
 * closes the set. The "never answers STOP" case shortens the host's
 * collect timeout through DOMPROF_AGENT_COLLECT_TIMEOUT_MS.
 *
 * Claims and limits: a forged lost count of 2^63 (then UINT64_MAX) is
 * clamped to what 2 CPUs at 100 Hz could lose in the run, and the clamp
 * said; 4097 symbol blobs leave the domain at 4096 symbol tables, the
 * rest counted as refused; past max-bytes= the domain ends. An agent that
 * never answers COLLECT is given up within a second of the interrupt
 * flag (the recorder's second Ctrl-C) rising. Keys: with key=FILE the
 * host proves the key and accepts an agent that proves it too, and
 * refuses one that only reflects the host's own proof.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "collect/agent_proto.h"
#include "collect/agent_source.h"
#include "format/format.h"
#include "unit.h"

#define DOM 3u          /* the domain id the host gives the agent */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* ---- records the agent sends ------------------------------------------ */

struct blob {
	uint8_t *p;
	size_t n;
};

static struct blob valid;          /* TASK, MMAP, 3 SAMPLEs, a SYMTAB: all allowed */
static unsigned valid_samples;
static struct blob rec_domain, rec_event, rec_stats, rec_symtab;

static void blob_add(struct blob *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->n + n);
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* Real records as the format writes them, taken back raw from a reader. */
static void make_records(void)
{
	char path[] = "/tmp/dp-agent-rec-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	struct dp_header h = { .major = DP_VERSION_MAJOR, .minor = DP_VERSION_MINOR, .ncpus = 1,
			       .hostname = "guest", .release = "6.1", .cpu_desc = "", .cmdline = "" };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, NULL, &err);
	CHECK(w != NULL);
	struct dp_task t = { .kind = DP_TASK_COMM, .pid = 42, .tid = 42, .comm = "guestproc" };
	struct dp_mmap m = { .pid = 42, .start = 0x400000, .len = 0x10000, .buildid_len = 20,
			     .path = "/usr/bin/guestproc" };
	memset(m.buildid, 0xab, 20);
	CHECK(dp_write_task(w, 0, &t) == 0);
	CHECK(dp_write_mmap(w, 0, &m) == 0);
	uint64_t chain[3] = { 0x401000, 0x401100, 0x401200 };
	for (int i = 0; i < 3; i++) {
		struct dp_sample s = { .time = 1000000000ull * (uint64_t)i, .ip = 0x401000 + i, .period = 1, .pid = 42,
				       .tid = 42, .mode = DP_MODE_USER, .nr_callchain = 3, .callchain = chain };
		CHECK(dp_write_sample(w, 0, &s) == 0);
	}
	const char ks[] = "ffffffff81000000 T _stext\n";
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)ks, .size = sizeof(ks) - 1 };
	CHECK(dp_write_symtab(w, 0, &st) == 0);
	struct dp_domain d = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "" };
	CHECK(dp_write_domain(w, &d) == 0);
	struct dp_event ev = { .id = 0, .name = "cpu-clock" };
	CHECK(dp_write_event(w, &ev) == 0);
	struct dp_stats sts = { .samples = 999 };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);

	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	struct dp_record rec;
	while (r && dp_reader_next(r, &rec) == 1) {
		switch (rec.type) {
		case DP_REC_DOMAIN: blob_add(&rec_domain, rec.raw, rec.raw_len); break;
		case DP_REC_EVENT: blob_add(&rec_event, rec.raw, rec.raw_len); break;
		case DP_REC_STATS: blob_add(&rec_stats, rec.raw, rec.raw_len); break;
		case DP_REC_SYMTAB: blob_add(&rec_symtab, rec.raw, rec.raw_len); /* fall through */
		case DP_REC_SAMPLE: valid_samples += rec.type == DP_REC_SAMPLE; /* fall through */
		default: blob_add(&valid, rec.raw, rec.raw_len); break;
		}
	}
	dp_reader_free(r);
	unlink(path);
	CHECK(valid_samples == 3 && rec_domain.n && rec_event.n && rec_stats.n);
}

/* ---- the fake agent ------------------------------------------------------ */

enum play {
	P_GARBAGE, P_GARBAGE_SHORT, P_VERSION, P_HELLO_SHORT, P_HUGE_HELLO, P_CUT_HELLO,
	P_REFUSE_START, P_SLOW_START, P_CLOSE_RECORDING, P_RECORD_EARLY, P_HUGE_COLLECT, P_CUT_COLLECT,
	P_BAD_RECORDS, P_ZSTD_GARBAGE, P_ZSTD_CORRUPT, P_SILENT_STOP, P_END_MISMATCH, P_GOOD,
	P_LOST_FORGED, P_SYMTAB_MANY, P_MAX_BYTES, P_COLLECT_SILENT, P_AUTH_GOOD, P_AUTH_REFLECT,
};

static struct ap_key test_key;      /* the key of the P_AUTH_* agents */
static char spec_opts[256];         /* appended to the host's agent spec */
/* --call-graph dwarf: what the host asks for (0: -g), what the fake
 * agent offers in HELLO_OK, and the START it got */
static uint32_t host_ustack;
static uint32_t agent_features;
static struct ap_start seen_start;
/* when START arrived at the fake, and when the host called begin
 * (now_ms); start_at stays 0 when no START came */
static volatile int64_t start_at, begin_at;
static volatile sig_atomic_t interrupt_flag;
static int interrupt_after_ms = -1; /* raise interrupt_flag this long into stop */

struct fake {
	int lfd, port;
	enum play play;
	struct blob bad;        /* P_BAD_RECORDS: the frame's payload */
	pthread_t th;
};

/* Agent-thread findings: unit.h's counters belong to the main thread,
 * so the agent only counts what went wrong here; main checks it. */
static volatile int agent_problems;
#define AGENT_EXPECT(c) do { if (!(c)) { agent_problems++; \
	fprintf(stderr, "%s:%d: agent: %s failed\n", __FILE__, __LINE__, #c); } } while (0)

struct conn {
	int fd;
	uint8_t *buf;
	size_t cap, len;
	uint16_t type, flags;
};

static int a_recv(struct conn *c, int timeout_ms)
{
	return ap_recv(c->fd, &c->type, &c->flags, &c->buf, &c->cap, &c->len, timeout_ms, false);
}

static void a_write(struct conn *c, const void *p, size_t n)
{
	/* may fail once the host hung up on an earlier bad frame: fine */
	if (send(c->fd, p, n, MSG_NOSIGNAL) < 0)
		return;
}

static void a_hdr(struct conn *c, uint16_t type, uint16_t flags, uint32_t len)
{
	uint8_t h[AP_HDR];
	put32(h, AP_MAGIC);
	put16(h + 4, type);
	put16(h + 6, flags);
	put32(h + 8, len);
	a_write(c, h, sizeof(h));
}

static void a_hello_ok(struct conn *c, uint32_t version)
{
	struct ap_hello h = { .version = version, .ncpus = 2, .features = agent_features };
	strcpy(h.hostname, "guest");
	strcpy(h.release, "6.1.0-test");
	uint8_t out[256];
	size_t n = ap_hello_encode(&h, out, sizeof(out));
	AGENT_EXPECT(n > 0);
	(void)ap_send(c->fd, AP_HELLO_OK, 0, out, n);
}

/* HELLO -> HELLO_OK, START -> STARTED, as `domprof agent` does. */
static bool a_handshake(struct conn *c)
{
	if (a_recv(c, 10000) < 0 || c->type != AP_HELLO)
		return false;
	a_hello_ok(c, AP_VERSION);
	if (a_recv(c, 10000) < 0 || c->type != AP_START)
		return false;
	struct ap_start st;
	start_at = now_ms();
	AGENT_EXPECT(ap_start_decode(c->buf, c->len, &st) == 0);
	AGENT_EXPECT(st.hz == 100 && (st.flags & AP_START_CALLCHAIN));
	seen_start = st;
	return ap_send(c->fd, AP_STARTED, 0, NULL, 0) == 0;
}

/* STOP -> STOPPED, then wait for COLLECT. */
static bool a_until_collect(struct conn *c)
{
	if (a_recv(c, 10000) < 0 || c->type != AP_STOP)
		return false;
	(void)ap_send(c->fd, AP_STOPPED, 0, "stopped", 7);
	return a_recv(c, 10000) == 0 && c->type == AP_COLLECT;
}

static void a_end(struct conn *c, uint64_t samples)
{
	struct ap_end e = { .records = 6, .samples = samples };
	uint8_t p[24];
	ap_end_encode(&e, p);
	(void)ap_send(c->fd, AP_END, 0, p, sizeof(p));
}

/* The agent's side of the challenge-response; an honest agent answers
 * with its own MAC, a dishonest one (no key) reflects the host's proof. */
static bool a_auth(struct conn *c, bool honest)
{
	uint8_t nh[AP_NONCE], na[AP_NONCE], mac[AP_MAC];
	if (a_recv(c, 10000) < 0 || c->type != AP_AUTH || c->len != AP_NONCE)
		return false;
	memcpy(nh, c->buf, AP_NONCE);
	AGENT_EXPECT(ap_nonce(na) == 0);
	(void)ap_send(c->fd, AP_AUTH_CHALLENGE, 0, na, AP_NONCE);
	if (a_recv(c, 10000) < 0 || c->type != AP_AUTH_PROOF)
		return false;
	ap_auth_mac(&test_key, true, nh, na, mac);
	AGENT_EXPECT(c->len == AP_MAC && !memcmp(c->buf, mac, AP_MAC)); /* the host proved it */
	if (honest)
		ap_auth_mac(&test_key, false, nh, na, mac);
	(void)ap_send(c->fd, AP_AUTH_OK, 0, mac, AP_MAC);
	return true;
}

static void a_symtab(struct conn *c, const char *name, size_t size)
{
	uint8_t *data = calloc(1, size ? size : 1);
	size_t plen;
	uint8_t *p = ap_symtab_encode(DP_SYMTAB_ELF, name, data, size, &plen);
	(void)ap_send(c->fd, AP_SYMTAB, AP_F_ZSTD, p, plen);
	free(p);
	free(data);
}

static void play(struct fake *f, struct conn *c)
{
	if (f->play == P_AUTH_GOOD || f->play == P_AUTH_REFLECT)
		if (!a_auth(c, f->play == P_AUTH_GOOD) || f->play == P_AUTH_REFLECT)
			return;
	switch (f->play) {
	case P_GARBAGE:
		a_recv(c, 10000);
		a_write(c, "GARBAGE!GARBAGE!GARBAGE!", 24);
		return;
	case P_GARBAGE_SHORT:
		a_recv(c, 10000);
		a_write(c, "NOPE", 4);
		return;
	case P_VERSION:
		a_recv(c, 10000);
		a_hello_ok(c, AP_VERSION + 1);
		return;
	case P_HELLO_SHORT:
		a_recv(c, 10000);
		(void)ap_send(c->fd, AP_HELLO_OK, 0, "\1\0\0", 3);
		return;
	case P_HUGE_HELLO:
		a_recv(c, 10000);
		a_hdr(c, AP_HELLO_OK, 0, AP_MAX_FRAME + 1);
		a_write(c, "xxxxxxxx", 8);
		return;
	case P_CUT_HELLO:
		a_recv(c, 10000);
		a_hdr(c, AP_HELLO_OK, 0, 40);
		a_write(c, "\1\0\0\0\2\0\0\0\5\0", 10);
		return;
	case P_SLOW_START: /* takes START, never says STARTED */
		if (a_recv(c, 10000) < 0)
			return;
		a_hello_ok(c, AP_VERSION);
		a_recv(c, 10000);
		return;
	case P_REFUSE_START:
		if (a_recv(c, 10000) < 0)
			return;
		a_hello_ok(c, AP_VERSION);
		a_recv(c, 10000);
		(void)ap_send(c->fd, AP_ERROR, 0, "perf_event_open: Permission denied", 34);
		return;
	default:
		break;
	}
	if (!a_handshake(c))
		return;
	switch (f->play) {
	case P_CLOSE_RECORDING:
		return;
	case P_RECORD_EARLY: /* records before the host asked for them */
		(void)ap_send(c->fd, AP_RECORD, 0, valid.p, valid.n);
		return;
	default:
		break;
	}
	if (f->play == P_SILENT_STOP) /* never answers STOP: read until the host hangs up */
		return;
	if (!a_until_collect(c))
		return;
	if (f->play == P_COLLECT_SILENT) /* never answers COLLECT */
		return;
	/* every collection begins with a good batch, which must arrive */
	(void)ap_send(c->fd, AP_RECORD, AP_F_ZSTD, valid.p, valid.n);
	switch (f->play) {
	case P_HUGE_COLLECT:
		a_hdr(c, AP_RECORD, 0, 0xffffffffu);
		a_write(c, valid.p, 64);
		return;
	case P_CUT_COLLECT:
		a_hdr(c, AP_RECORD, 0, (uint32_t)valid.n);
		a_write(c, valid.p, valid.n / 2);
		return;
	case P_BAD_RECORDS:
		(void)ap_send(c->fd, AP_RECORD, 0, f->bad.p, f->bad.n);
		a_end(c, valid_samples);
		return;
	case P_ZSTD_GARBAGE:
		a_hdr(c, AP_RECORD, AP_F_ZSTD, 32);
		a_write(c, "this is not a zstd frame at all!", 32);
		a_end(c, valid_samples);
		return;
	case P_ZSTD_CORRUPT: {
		/* a real zstd frame (header and content size intact), body damaged */
		size_t bound = ZSTD_compressBound(valid.n);
		uint8_t *z = malloc(bound);
		size_t zn = ZSTD_compress(z, bound, valid.p, valid.n, 1);
		AGENT_EXPECT(!ZSTD_isError(zn) && zn > 24);
		for (size_t i = 12; i < zn - 4; i += 3)
			z[i] ^= 0x5a;
		a_hdr(c, AP_RECORD, AP_F_ZSTD, (uint32_t)zn);
		a_write(c, z, zn);
		free(z);
		a_end(c, valid_samples);
		return;
	}
	case P_END_MISMATCH:
		a_end(c, valid_samples + 5);
		return;
	case P_LOST_FORGED: {
		uint64_t lost = 1ull << 63;
		(void)ap_send(c->fd, AP_LOST, 0, &lost, 8);
		lost = UINT64_MAX; /* and a sum that would wrap */
		(void)ap_send(c->fd, AP_LOST, 0, &lost, 8);
		a_end(c, valid_samples);
		return;
	}
	case P_SYMTAB_MANY:
		for (int i = 0; i < 4097; i++) {
			char name[48];
			snprintf(name, sizeof(name), "%040x", i);
			a_symtab(c, name, 16);
		}
		a_end(c, valid_samples);
		return;
	case P_MAX_BYTES: /* 2 x 700 KB of symbol data against max-bytes=1M */
		a_symtab(c, "abababababababababababababababababababab", 700 << 10);
		a_symtab(c, "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd", 700 << 10);
		a_end(c, valid_samples);
		return;
	case P_GOOD:
	case P_AUTH_GOOD: {
		uint8_t elf[64] = { 0x7f, 'E', 'L', 'F' };
		size_t plen;
		uint8_t *p = ap_symtab_encode(DP_SYMTAB_ELF, "abababababababababababababababababababab",
					      elf, sizeof(elf), &plen);
		(void)ap_send(c->fd, AP_SYMTAB, AP_F_ZSTD, p, plen);
		free(p);
		uint64_t lost = 7;
		(void)ap_send(c->fd, AP_LOST, 0, &lost, 8);
		a_end(c, valid_samples);
		return;
	}
	default:
		return;
	}
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct pollfd pf = { .fd = f->lfd, .events = POLLIN };
	if (poll(&pf, 1, 10000) == 1) {
		struct conn c = { .fd = accept(f->lfd, NULL, NULL) };
		if (c.fd >= 0) {
			play(f, &c);
			free(c.buf);
			/* a graceful end: everything sent is read by the host
			 * before it sees end of stream; then wait for it to hang
			 * up, so no unread request turns our close into a reset */
			if (f->play != P_SILENT_STOP && f->play != P_COLLECT_SILENT && f->play != P_SLOW_START)
				shutdown(c.fd, SHUT_WR);
			int64_t until = now_ms() + 15000;
			char b[4096];
			while (now_ms() < until) {
				struct pollfd q = { .fd = c.fd, .events = POLLIN };
				if (poll(&q, 1, 100) == 1 && recv(c.fd, b, sizeof(b), 0) <= 0)
					break;
			}
			close(c.fd);
		}
	}
	free(f->bad.p);
	close(f->lfd);
	return NULL;
}

static void fake_start(struct fake *f)
{
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	CHECK(f->lfd >= 0 && bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(f->lfd, 1) == 0 && getsockname(f->lfd, (struct sockaddr *)&sa, &sl) == 0);
	f->port = ntohs(sa.sin_port);
	CHECK(pthread_create(&f->th, NULL, fake_main, f) == 0);
}

/* ---- the host ------------------------------------------------------------ */

struct outcome {
	bool started, ended;
	char err[512], msg[512], info[512];
	int64_t stop_ms, total_ms;
	uint64_t api_samples, api_lost;
	uint64_t span_ns;       /* the rate's span: from the samples' times */
	/* the file, read back */
	unsigned domains, samples, tasks, mmaps, symtabs, elf_symtabs, others, foreign, bad_switch;
	uint64_t lost;
	size_t damage;
};

/* The recorder's second Ctrl-C, interrupt_after_ms into the stop. */
static void *interrupter(void *arg)
{
	(void)arg;
	usleep((useconds_t)interrupt_after_ms * 1000);
	interrupt_flag = 1;
	return NULL;
}

static bool one_line(const char *s)
{
	return s && s[0] && !strchr(s, '\n');
}

static bool stop_before_begin; /* run() stops the source without begin */

static void run(enum play p, const struct blob *bad, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	int64_t t0 = now_ms();
	struct fake *f = calloc(1, sizeof(*f));
	f->play = p;
	if (bad)
		blob_add(&f->bad, bad->p, bad->n);
	fake_start(f);

	char spec[512];
	snprintf(spec, sizeof(spec), "vm=agent:127.0.0.1:%d%s", f->port, spec_opts);
	struct domain_source_opts opts = { .hz = 100, .callchains = true, .ustack_size = host_ustack,
					   .interrupt = &interrupt_flag };
	memset(&seen_start, 0, sizeof(seen_start));
	start_at = begin_at = 0;
	struct agent_source *s = agent_source_start(spec, DOM, &opts, o->err, sizeof(o->err));
	o->started = s != NULL;
	if (!s) {
		CHECK(pthread_join(f->th, NULL) == 0);
		free(f);
		o->total_ms = now_ms() - t0;
		return;
	}
	CHECK(strstr(agent_source_info(s), "guest") != NULL);
	snprintf(o->info, sizeof(o->info), "%s", agent_source_info(s));

	char path[] = "/tmp/dp-agent-src-XXXXXX";
	int fd = mkstemp(path);
	struct dp_header h;
	dp_header_fill_local(&h, 0, NULL);
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, NULL, &err);
	CHECK(w != NULL);
	CHECK(agent_source_write_meta(s, w) == 0);
	/* START only at begin: the agent records the collector's window */
	usleep(50000);
	begin_at = now_ms();
	if (!stop_before_begin)
		agent_source_begin(s);
	/* the "recording": a few drains, as the collector's loop does */
	for (int i = 0; i < 10 && !agent_source_ended(s); i++) {
		CHECK(agent_source_drain(s, w) >= 0);
		usleep(20000);
	}
	int64_t ts = now_ms();
	pthread_t it;
	bool timer = interrupt_after_ms >= 0 && pthread_create(&it, NULL, interrupter, NULL) == 0;
	agent_source_stop(s);
	o->stop_ms = now_ms() - ts;
	if (timer)
		pthread_join(it, NULL);
	interrupt_flag = 0;
	agent_source_stop(s); /* safe twice */
	CHECK(agent_source_drain(s, w) >= 0);
	o->ended = agent_source_ended(s);
	const char *m = agent_source_message(s);
	snprintf(o->msg, sizeof(o->msg), "%s", m ? m : "");
	o->api_samples = agent_source_samples(s);
	o->api_lost = agent_source_lost(s);
	struct domain_source_rate rt;
	memset(&rt, 0, sizeof(rt));
	agent_source_rate(s, &rt);
	o->span_ns = rt.span_ns;
	agent_source_free(s);
	CHECK(dp_writer_finish(w) == 0);
	CHECK(pthread_join(f->th, NULL) == 0);
	free(f);

	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	struct dp_record rec;
	while (r && dp_reader_next(r, &rec) == 1) {
		switch (rec.type) {
		case DP_REC_DOMAIN:
			o->domains++;
			CHECK(rec.u.domain.id == DOM && rec.u.domain.kind == DP_DOMAIN_ACTIVE);
			CHECK_STR(rec.u.domain.name, "vm");
			CHECK(rec.u.domain.vcpus == 2);
			break;
		case DP_REC_DOMAIN_SWITCH:
			o->bad_switch += rec.u.switch_to != DOM;
			break;
		case DP_REC_SAMPLE:
		case DP_REC_TASK:
		case DP_REC_MMAP:
		case DP_REC_SYMTAB:
			o->foreign += rec.domain != DOM;
			o->samples += rec.type == DP_REC_SAMPLE;
			o->tasks += rec.type == DP_REC_TASK;
			o->mmaps += rec.type == DP_REC_MMAP;
			o->symtabs += rec.type == DP_REC_SYMTAB;
			o->elf_symtabs += rec.type == DP_REC_SYMTAB && rec.u.symtab.kind == DP_SYMTAB_ELF;
			if (rec.type == DP_REC_SAMPLE)
				CHECK(rec.u.sample.pid == 42 && rec.u.sample.nr_callchain == 3);
			break;
		case DP_REC_LOST:
			o->lost += rec.u.lost.count;
			CHECK(rec.u.lost.source == DP_LOST_AGENT && rec.u.lost.where == DOM);
			break;
		default:
			o->others++; /* EVENT, STATS, unknown: never from an agent */
			break;
		}
	}
	const struct dp_damage *dmg;
	o->damage = r ? dp_reader_damage(r, &dmg) : 1;
	for (size_t i = 0; i < o->damage && r; i++)
		fprintf(stderr, "  damage at %" PRIu64 ": %s\n", dmg[i].offset, dmg[i].what);
	dp_reader_free(r);
	unlink(path);
	o->total_ms = now_ms() - t0;
}

/* What every case that got past start must show: a sound file with the
 * one DOMAIN record and nothing an agent may not write. */
static void check_file(const char *name, const struct outcome *o, unsigned want_samples)
{
	printf("  %-22s %s%s (stop %" PRId64 " ms, total %" PRId64 " ms)\n", name,
	       o->ended ? "ended: " : "ok: ", o->msg, o->stop_ms, o->total_ms);
	CHECK(o->started);
	CHECK(one_line(o->msg));
	CHECK(o->damage == 0);
	CHECK(o->domains == 1);
	CHECK(o->others == 0);
	CHECK(o->foreign == 0);
	CHECK(o->bad_switch == 0);
	CHECK_EQ_U64(o->samples, want_samples);
	CHECK_EQ_U64(o->api_samples, want_samples);
	CHECK(o->tasks == (want_samples ? 1u : 0u) && o->mmaps == o->tasks);
	CHECK(o->stop_ms < 5000);
}

static void check_refused(const char *name, const struct outcome *o, const char *want)
{
	printf("  %-22s start failed: %s (%" PRId64 " ms)\n", name, o->err, o->total_ms);
	CHECK(!o->started);
	CHECK(one_line(o->err));
	CHECK(strstr(o->err, want) != NULL);
	CHECK(o->total_ms < 5000);
}

/* A RECORD payload: `n` bytes of a record with header (tag, flags,
 * length field). */
static struct blob rec_raw(uint16_t tag, uint16_t flags, uint32_t lenfield, size_t n)
{
	struct blob b = { calloc(1, n), n };
	put16(b.p, tag);
	put16(b.p + 2, flags);
	put32(b.p + 4, lenfield);
	return b;
}

static void test_bad_records(void)
{
	struct outcome o;
	struct { const char *name; struct blob b; const char *want; } cases[16];
	memset(cases, 0, sizeof(cases));
	int n = 0;
	cases[n].name = "DOMAIN";
	blob_add(&cases[n++].b, rec_domain.p, rec_domain.n);
	cases[n].name = "EVENT";
	blob_add(&cases[n++].b, rec_event.p, rec_event.n);
	cases[n].name = "STATS";
	blob_add(&cases[n++].b, rec_stats.p, rec_stats.n);
	/* a switch to the host's domain followed by a "host" sample */
	cases[n].name = "DOMAIN_SWITCH";
	cases[n].b = rec_raw(DP_REC_DOMAIN_SWITCH, 0, 16, 16);
	blob_add(&cases[n++].b, valid.p, valid.n);
	cases[n].name = "unknown tag";
	cases[n++].b = rec_raw(99, 0, 16, 16);
	cases[n].name = "length > frame";
	cases[n++].b = rec_raw(DP_REC_TASK, 0, 64, 48);
	cases[n].name = "length % 8";
	cases[n++].b = rec_raw(DP_REC_TASK, 0, 12, 16);
	cases[n].name = "length < 8";
	cases[n++].b = rec_raw(DP_REC_SAMPLE, 0, 4, 16);
	cases[n].name = "length 0";
	cases[n++].b = rec_raw(DP_REC_SAMPLE, 0, 0, 16);
	/* a SAMPLE announcing 1025 chain entries, all present */
	size_t sl = 8 + 40 + 8 + 8 * 1025;
	cases[n].name = "callchain 1025";
	cases[n].b = rec_raw(DP_REC_SAMPLE, 2 /* DP_SAMPLE_F_CHAIN */, (uint32_t)sl, sl);
	put32(cases[n++].b.p + 48, 1025);
	/* TASK too short for its fixed fields */
	cases[n].name = "short TASK";
	cases[n++].b = rec_raw(DP_REC_TASK, 0, 16, 16);
	/* a SAMPLE whose chain count runs past its own length */
	cases[n].name = "chain past end";
	cases[n].b = rec_raw(DP_REC_SAMPLE, 2, 64, 64);
	put32(cases[n++].b.p + 48, 4);

	/* a kallsyms SYMTAB whose stored blob was cut short, and one whose
	 * name lost its NUL */
	int first_malformed = n - 3;
	cases[n].name = "SYMTAB blob cut";
	blob_add(&cases[n].b, rec_symtab.p, rec_symtab.n);
	uint64_t stored;
	memcpy(&stored, cases[n].b.p + 24, 8);
	stored -= 2;
	memcpy(cases[n++].b.p + 24, &stored, 8);
	cases[n].name = "SYMTAB name";
	blob_add(&cases[n].b, rec_symtab.p, rec_symtab.n);
	cases[n++].b.p[32 + 2 + strlen("kallsyms")] = 'x';
	CHECK(n <= 16);

	for (int i = 0; i < n; i++) {
		run(P_BAD_RECORDS, &cases[i].b, &o);
		check_file(cases[i].name, &o, valid_samples);
		CHECK(o.ended);
		CHECK(strstr(o.msg, i < first_malformed ? "does not relay" : "malformed record") != NULL);
		free(cases[i].b.p);
	}
}

static void test_claims(void)
{
	struct outcome o;
	/* a lost count of 2^63, then UINT64_MAX */
	run(P_LOST_FORGED, NULL, &o);
	check_file("forged lost count", &o, valid_samples);
	CHECK(o.ended); /* so that the recorder says it */
	CHECK(strstr(o.msg, "claimed 18446744073709551615 lost samples") != NULL);
	/* 100 Hz x 2 CPUs x (the run's seconds + 5) */
	CHECK(o.lost > 0 && o.lost <= 100 * 2 * (uint64_t)(o.total_ms / 1000 + 6));
	CHECK_EQ_U64(o.api_lost, o.lost);

	/* 4097 symbol blobs: 4095 ELF + the kallsyms record are kept */
	run(P_SYMTAB_MANY, NULL, &o);
	check_file("4097 symbol tables", &o, valid_samples);
	CHECK(o.ended);
	CHECK(o.symtabs == AGENT_SYMTAB_MAX_COUNT && o.elf_symtabs == AGENT_SYMTAB_MAX_COUNT - 1);
	CHECK(strstr(o.msg, "refused 2 symbol table(s), 32 bytes") != NULL);

	/* past max-bytes the domain ends; what came before stays */
	snprintf(spec_opts, sizeof(spec_opts), ",max-bytes=1M");
	run(P_MAX_BYTES, NULL, &o);
	spec_opts[0] = '\0';
	check_file("max-bytes=1M", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "more than 1048576 bytes") != NULL);
	CHECK(o.elf_symtabs == 1);

	/* no answer to COLLECT: interrupted 300 ms into the stop */
	setenv("DOMPROF_AGENT_COLLECT_TIMEOUT_MS", "8000", 1);
	interrupt_after_ms = 300;
	run(P_COLLECT_SILENT, NULL, &o);
	interrupt_after_ms = -1;
	unsetenv("DOMPROF_AGENT_COLLECT_TIMEOUT_MS");
	check_file("interrupted collect", &o, 0);
	CHECK(o.ended && strstr(o.msg, "collection interrupted") != NULL);
	CHECK(o.stop_ms >= 250 && o.stop_ms < 2000);
}

static void test_auth(void)
{
	struct outcome o;
	char dir[] = "/tmp/dp-agent-key-XXXXXX", path[64], err[512];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/key", dir);
	CHECK(ap_key_load(path, true, &test_key, NULL, err, sizeof(err)) == 0);
	snprintf(spec_opts, sizeof(spec_opts), ",key=%s", path);
	run(P_AUTH_GOOD, NULL, &o);
	check_file("key, both prove it", &o, valid_samples);
	CHECK(!o.ended && strstr(o.msg, "3 samples from the agent") != NULL);
	run(P_AUTH_REFLECT, NULL, &o);
	check_refused("key, agent reflects", &o, "did not prove it holds the key");
	/* without key= the host speaks HELLO first: a keyed agent's a_auth fails */
	spec_opts[0] = '\0';
	run(P_AUTH_GOOD, NULL, &o);
	check_refused("agent wants a key", &o, "HELLO");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int64_t t0 = now_ms();
	struct outcome o;
	make_records();

	/* 1-4 during start: a clean error, nothing left behind */
	run(P_GARBAGE, NULL, &o);
	check_refused("garbage", &o, "bad reply to HELLO");
	run(P_GARBAGE_SHORT, NULL, &o);
	check_refused("short garbage", &o, "connection closed");
	run(P_VERSION, NULL, &o);
	check_refused("wrong version", &o, "version 2");
	run(P_HELLO_SHORT, NULL, &o);
	check_refused("truncated HELLO_OK", &o, "malformed HELLO_OK");
	run(P_HUGE_HELLO, NULL, &o);
	check_refused("huge HELLO_OK", &o, "bad reply to HELLO");
	run(P_CUT_HELLO, NULL, &o);
	check_refused("cut HELLO_OK", &o, "connection closed");
	/* START is sent at begin, not at start: refused, it ends the source
	 * (and the recorder, which waits for every agent's STARTED, fails) */
	run(P_REFUSE_START, NULL, &o);
	check_file("START refused", &o, 0);
	CHECK(o.ended && strstr(o.msg, "refused START: perf_event_open: Permission denied"));
	/* stopped while the agent starts: the source does not wait for it */
	run(P_SLOW_START, NULL, &o);
	check_file("stopped while starting", &o, 0);
	CHECK(!o.ended && strstr(o.msg, "stopped before the agent had started its own"));
	/* stopped before begin: no START reaches the agent */
	stop_before_begin = true;
	run(P_GOOD, NULL, &o);
	stop_before_begin = false;
	check_file("stopped before begin", &o, 0);
	CHECK(start_at == 0 && strstr(o.msg, "stopped before the agent was started"));

	/* during the recording and the collection */
	run(P_CLOSE_RECORDING, NULL, &o);
	check_file("closed while recording", &o, 0);
	CHECK(o.ended && strstr(o.msg, "during the recording"));
	run(P_RECORD_EARLY, NULL, &o);
	check_file("RECORD before STOP", &o, 0);
	CHECK(o.ended && strstr(o.msg, "unexpected RECORD"));
	run(P_HUGE_COLLECT, NULL, &o);
	check_file("huge frame", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "protocol error"));
	run(P_CUT_COLLECT, NULL, &o);
	check_file("cut frame", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "closed the connection while sending"));
	test_bad_records();
	run(P_ZSTD_GARBAGE, NULL, &o);
	check_file("zstd garbage", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "protocol error"));
	run(P_ZSTD_CORRUPT, NULL, &o);
	check_file("zstd corrupt", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "protocol error"));

	/* 7: silence after STOP ends at the (shortened) collect timeout */
	setenv("DOMPROF_AGENT_COLLECT_TIMEOUT_MS", "1500", 1);
	run(P_SILENT_STOP, NULL, &o);
	unsetenv("DOMPROF_AGENT_COLLECT_TIMEOUT_MS");
	check_file("silent after STOP", &o, 0);
	CHECK(o.ended && strstr(o.msg, "did not send its records"));
	CHECK(o.stop_ms >= 1400 && o.stop_ms < 4000);

	/* 8: END disagrees with what arrived: said, and the file stays sound */
	run(P_END_MISMATCH, NULL, &o);
	check_file("END mismatch", &o, valid_samples);
	CHECK(o.ended && strstr(o.msg, "does not match"));

	/* 9: a well-behaved agent, its START sent after begin (control: a
	 * START sent at connect arrives 50 ms before begin_at) */
	run(P_GOOD, NULL, &o);
	check_file("good agent", &o, valid_samples);
	CHECK(!o.ended);
	CHECK(start_at >= begin_at && begin_at > 0);
	/* the span is the samples' own: 0, 1 and 2 s, plus one tick at
	 * 100 Hz (the host's STARTED-to-STOP here is a fraction of that) */
	CHECK_EQ_U64(o.span_ns, 2010000000ull);
	CHECK(strstr(o.msg, "3 samples from the agent") != NULL);
	CHECK(o.symtabs == 2 && o.elf_symtabs == 1);
	CHECK_EQ_U64(o.lost, 7);
	CHECK_EQ_U64(o.api_lost, 7);

	/* 10: --call-graph dwarf: asked of an agent that offers it (START
	 * carries the stack size); an agent that does not (older, or not
	 * x86-64) records frame-pointer chains, and the info line says so */
	CHECK(seen_start.flags == AP_START_CALLCHAIN && seen_start.stack_size == 0);
	host_ustack = 4096;
	agent_features = AP_FEAT_DWARF;
	run(P_GOOD, NULL, &o);
	check_file("dwarf agent", &o, valid_samples);
	CHECK(seen_start.flags == (AP_START_CALLCHAIN | AP_START_DWARF) && seen_start.stack_size == 4096);
	CHECK(strstr(o.info, "user stacks (--call-graph dwarf)") != NULL);
	agent_features = 0;
	run(P_GOOD, NULL, &o);
	check_file("agent without dwarf", &o, valid_samples);
	CHECK(seen_start.flags == AP_START_CALLCHAIN && seen_start.stack_size == 0);
	CHECK(strstr(o.info, "frame-pointer call chains only") != NULL);
	printf("  %s\n", o.info);
	host_ustack = 0;

	test_claims();
	test_auth();

	free(valid.p);
	free(rec_domain.p);
	free(rec_event.p);
	free(rec_stats.p);
	free(rec_symtab.p);
	CHECK(agent_problems == 0);
	printf("  all cases: %" PRId64 " ms\n", now_ms() - t0);
	return unit_done();
}
