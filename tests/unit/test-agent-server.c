// SPDX-License-Identifier: MIT
/*
 * agent/server over a socketpair: the protocol server runs in a thread on
 * one end, the test speaks agent_proto frames on the other. The recorder
 * is a fake behind agent_server_ops (START/STOP/COLLECT answer at once;
 * COLLECT sends only END), so what is checked is the server's state
 * machine: HELLO, START refused before HELLO, busy refusal of a second
 * controller, unknown request, idle timeout, and the key gate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/server.h"
#include "agent/collect.h"
#include "unit.h"

struct fake { bool running; int starts, stops, collects; struct ap_start last; };

static int f_start(void *ctx, const struct ap_start *st, char *why, size_t whylen)
{
	struct fake *f = ctx;
	f->starts++;
	f->running = true;
	f->last = *st;
	return 0;
}
static int f_stop(void *ctx, char *msg, size_t msglen)
{
	struct fake *f = ctx;
	f->stops++;
	f->running = false;
	snprintf(msg, msglen, "fake summary");
	return 0;
}
static bool f_running(void *ctx) { return ((struct fake *)ctx)->running; }
static int f_ended(void *ctx, int *status) { return 0; }
static int f_collect(void *ctx, int fd, const struct agent_log *log, char *why, size_t whylen)
{
	((struct fake *)ctx)->collects++;
	uint8_t e[24];
	struct ap_end end = { 0 };
	ap_end_encode(&end, e);
	return ap_send(fd, AP_END, 0, e, sizeof(e)) < 0 ? AGENT_COLLECT_GONE : 0;
}
static void f_discard(void *ctx) { }

static const struct agent_server_ops fake_ops = {
	.start = f_start, .stop = f_stop, .running = f_running, .ended = f_ended,
	.collect = f_collect, .discard = f_discard,
};

struct run { struct agent_server_cfg cfg; int fd; pthread_t th; };

static void *serve_thread(void *arg)
{
	struct run *r = arg;
	agent_serve(&r->cfg, r->fd);
	close(r->fd);
	return NULL;
}

/* Start serving one end of a socketpair; returns the other end. */
static int start(struct run *r, struct fake *f, const struct ap_key *key, int idle_ms, int lfd)
{
	int sv[2];
	memset(r, 0, sizeof(*r));
	r->cfg = (struct agent_server_cfg){ .key = key, .idle_ms = idle_ms, .lfd = lfd,
					    .ops = &fake_ops, .ctx = f };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	r->fd = sv[1];
	pthread_create(&r->th, NULL, serve_thread, r);
	return sv[0];
}

static void finish(struct run *r, int c)
{
	close(c);
	pthread_join(r->th, NULL);
}

static uint8_t *buf;
static size_t cap, len;

/* Send a request, return the answer's type (or a negative receive error);
 * the payload is in buf[0..len). */
static int ask(int c, uint16_t type, const void *p, size_t n)
{
	if (ap_send(c, type, 0, p, n) < 0)
		return -EPIPE;
	uint16_t t, fl;
	int r = ap_recv(c, &t, &fl, &buf, &cap, &len, 5000, false);
	return r < 0 ? r : t;
}

static bool text_has(const char *s)
{
	char text[600];
	snprintf(text, sizeof(text), "%.*s", (int)(len < 599 ? len : 599), (const char *)buf);
	return strstr(text, s) != NULL;
}

static int hello(int c)
{
	uint8_t v[4];
	ap_hello_req_encode(AP_VERSION, v);
	return ask(c, AP_HELLO, v, 4);
}

static bool closed(int c)
{
	uint16_t t, fl;
	return ap_recv(c, &t, &fl, &buf, &cap, &len, 5000, false) == -ECONNRESET;
}

static void test_session(void)
{
	struct fake f = { 0 };
	struct run r;
	int c = start(&r, &f, NULL, 0, -1);
	CHECK(hello(c) == AP_HELLO_OK);
	struct ap_hello h;
	CHECK(ap_hello_decode(buf, len, &h) == 0 && h.version == AP_VERSION);
	uint8_t st[AP_START_MAX];
	ap_start_encode(&(struct ap_start){ .hz = 99 }, st);
	CHECK(ask(c, AP_STOP, NULL, 0) == AP_ERROR && text_has("not recording"));
	CHECK(ask(c, AP_COLLECT, NULL, 0) == AP_ERROR && text_has("nothing to collect"));
	CHECK(ask(c, AP_START, st, 8) == AP_STARTED);
	CHECK(ask(c, AP_START, st, 8) == AP_ERROR && text_has("already recording"));
	CHECK(ask(c, AP_START, st, 3) == AP_ERROR && text_has("bad START"));
	CHECK(ask(c, AP_STOP, NULL, 0) == AP_STOPPED && text_has("fake summary"));
	CHECK(ask(c, AP_COLLECT, NULL, 0) == AP_END);
	CHECK(f.starts == 1 && f.stops == 1 && f.collects == 1);
	/* DWARF stacks: offered in HELLO_OK on x86-64, the size reaches the
	 * recorder; a size its --call-graph dwarf would refuse does not */
#if defined(__x86_64__)
	CHECK(h.features & AP_FEAT_DWARF);
#endif
	struct ap_start ds = { .hz = 99, .flags = AP_START_CALLCHAIN | AP_START_DWARF, .stack_size = 12 };
	uint8_t dst[AP_START_MAX];
	size_t dn = ap_start_encode(&ds, dst);
	CHECK(ask(c, AP_START, dst, dn) == AP_ERROR && text_has("bad START"));
	CHECK(f.starts == 1);
	ds.stack_size = 4096;
	dn = ap_start_encode(&ds, dst);
	CHECK(ask(c, AP_START, dst, dn) == AP_STARTED);
	CHECK(f.starts == 2 && f.last.stack_size == 4096 && (f.last.flags & AP_START_DWARF));
	CHECK(ask(c, AP_STOP, NULL, 0) == AP_STOPPED);
	/* nothing but the four requests: anything else closes */
	CHECK(ask(c, 99, NULL, 0) == AP_ERROR && text_has("unknown request type 99"));
	CHECK(closed(c));
	finish(&r, c);

	/* control: START before HELLO is refused and the connection closed */
	memset(&f, 0, sizeof(f));
	c = start(&r, &f, NULL, 0, -1);
	CHECK(ask(c, AP_START, st, 8) == AP_ERROR && text_has("say HELLO first"));
	CHECK(closed(c));
	CHECK(f.starts == 0);
	finish(&r, c);

	/* a wrong version */
	c = start(&r, &f, NULL, 0, -1);
	uint8_t v[4];
	ap_hello_req_encode(AP_VERSION + 1, v);
	CHECK(ask(c, AP_HELLO, v, 4) == AP_ERROR && text_has("not supported"));
	finish(&r, c);

	/* a recording still running when the controller leaves is stopped */
	memset(&f, 0, sizeof(f));
	c = start(&r, &f, NULL, 0, -1);
	CHECK(hello(c) == AP_HELLO_OK);
	CHECK(ask(c, AP_START, st, 8) == AP_STARTED);
	finish(&r, c);
	CHECK(f.stops == 1 && !f.running);
}

static void test_idle(void)
{
	struct fake f = { 0 };
	struct run r;
	int c = start(&r, &f, NULL, 300, -1);
	CHECK(hello(c) == AP_HELLO_OK);
	uint16_t t, fl; /* then say nothing: the server gives up */
	CHECK(ap_recv(c, &t, &fl, &buf, &cap, &len, 10000, false) == 0 && t == AP_ERROR && text_has("idle"));
	CHECK(closed(c));
	finish(&r, c);
}

static void test_busy(void)
{
	char dir[] = "/tmp/dp-srv-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(l, 1) == 0);
	struct fake f = { 0 };
	struct run r;
	int c = start(&r, &f, NULL, 0, l);
	CHECK(hello(c) == AP_HELLO_OK);
	int c2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(connect(c2, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(hello(c2) == AP_ERROR && text_has("busy"));
	close(c2);
	/* the first controller is still served */
	CHECK(ask(c, AP_STOP, NULL, 0) == AP_ERROR && text_has("not recording"));
	finish(&r, c);
	close(l);
	unlink(sa.sun_path);
	rmdir(dir);
}

static void test_auth(void)
{
	struct ap_key key = { .len = 32 }, wrong = { .len = 32 };
	memset(key.k, 7, 32);
	memset(wrong.k, 8, 32);
	struct fake f = { 0 };
	struct run r;
	/* a controller without the key gets nothing */
	int c = start(&r, &f, &key, 0, -1);
	CHECK(hello(c) == AP_ERROR && text_has("authentication required"));
	CHECK(closed(c));
	finish(&r, c);

	for (int ok = 0; ok < 2; ok++) { /* the wrong key (control), then the right one */
		c = start(&r, &f, &key, 0, -1);
		uint8_t nh[AP_NONCE], na[AP_NONCE], mac[AP_MAC];
		memset(nh, 1, sizeof(nh));
		CHECK(ask(c, AP_AUTH, nh, AP_NONCE) == AP_AUTH_CHALLENGE && len == AP_NONCE);
		memcpy(na, buf, AP_NONCE);
		ap_auth_mac(ok ? &key : &wrong, true, nh, na, mac);
		int t = ask(c, AP_AUTH_PROOF, mac, AP_MAC);
		if (ok) {
			CHECK(t == AP_AUTH_OK && len == AP_MAC);
			ap_auth_mac(&key, false, nh, na, mac);
			CHECK(!memcmp(buf, mac, AP_MAC));
			CHECK(hello(c) == AP_HELLO_OK);
		} else {
			CHECK(t == AP_ERROR && text_has("wrong key"));
			CHECK(closed(c));
		}
		finish(&r, c);
	}

	/* AUTH to an agent without a key is refused */
	c = start(&r, &f, NULL, 0, -1);
	uint8_t nh[AP_NONCE] = { 0 };
	CHECK(ask(c, AP_AUTH, nh, AP_NONCE) == AP_ERROR && text_has("has no key"));
	finish(&r, c);
}

int main(void)
{
	test_session();
	test_idle();
	test_busy();
	test_auth();
	free(buf);
	return unit_done();
}
