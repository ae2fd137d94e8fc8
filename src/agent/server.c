// SPDX-License-Identifier: MIT
/*
 * The agent's protocol server (agent/server.h): one controller, the
 * authentication gate, HELLO/START/STOP/COLLECT, the idle timeout and
 * the refusal of a second controller.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent/child.h"
#include "agent/collect.h"
#include "agent/server.h"
#include "format/format.h"
#include "util/clock.h"
#include "util/sha256.h"

/* ---- the real recorder behind the ops ---- */

static int rec_start(void *ctx, const struct ap_start *st, char *why, size_t whylen)
{
	return agent_child_start(ctx, st->hz, st->flags & AP_START_CALLCHAIN,
				 (st->flags & AP_START_DWARF) ? st->stack_size : 0, why, whylen);
}
static int rec_stop(void *ctx, char *msg, size_t msglen) { return agent_child_stop(ctx, msg, msglen); }
static bool rec_running(void *ctx) { return agent_child_running(ctx); }
static int rec_ended(void *ctx, int *status) { return agent_child_ended(ctx, status); }
static int rec_collect(void *ctx, int fd, const struct agent_log *log, char *why, size_t whylen)
{
	return agent_collect(((struct agent_child *)ctx)->data, fd, log, why, whylen);
}
static void rec_discard(void *ctx) { agent_child_discard(ctx); }

const struct agent_server_ops agent_recorder_ops = {
	.start = rec_start, .stop = rec_stop, .running = rec_running, .ended = rec_ended,
	.collect = rec_collect, .discard = rec_discard,
};

/* ---- one controller ---- */

struct session {
	const struct agent_server_cfg *cfg;
	int fd;
	bool hello, recording, stopped;
	uint8_t *buf;
	size_t cap, len;
	int64_t last;           /* when the controller last sent a frame */
	/* challenge-response state (see agent_proto.h) */
	bool authed;            /* the controller proved the key (or there is none) */
	bool challenged;        /* AUTH_CHALLENGE sent, AUTH_PROOF awaited */
	uint8_t nh[AP_NONCE], na[AP_NONCE];
};

#define say(s, ...) agent_logf(&(s)->cfg->log, __VA_ARGS__)

static int send_text(int fd, uint16_t type, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int send_text(int fd, uint16_t type, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ap_send(fd, type, 0, msg, strlen(msg));
}

static void end_session(struct session *s)
{
	const struct agent_server_cfg *c = s->cfg;
	if (s->recording && c->ops->running(c->ctx)) {
		char m[256];
		c->ops->stop(c->ctx, m, sizeof(m));
		say(s, "controller gone while recording; recording discarded");
	}
	s->recording = s->stopped = false;
	c->ops->discard(c->ctx);
}

/* Refuse a second controller while one is served. */
static void refuse_busy(struct session *s)
{
	int c = accept4(s->cfg->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* Read what the newcomer already sent (its HELLO) before answering:
	 * closing a socket with unread input makes TCP send a reset, which
	 * can discard our ERROR before the peer reads it. */
	struct pollfd pf = { .fd = c, .events = POLLIN };
	char junk[512];
	if (poll(&pf, 1, 200) > 0)
		(void)!read(c, junk, sizeof(junk));
	send_text(c, AP_ERROR, "busy: another controller is connected to this agent");
	shutdown(c, SHUT_WR);
	if (poll(&pf, 1, 200) > 0)
		(void)!read(c, junk, sizeof(junk));
	close(c);
	say(s, "refused a second controller");
}

/*
 * The authentication frames, and the gate before every other request.
 * Returns 1 when the frame was an authentication step (go on reading), 0
 * when it may be served, -1 when the connection must close.
 */
static int auth_step(struct session *s, uint16_t type)
{
	const struct ap_key *key = s->cfg->key;
	int fd = s->fd;
	if (type == AP_AUTH) {
		if (!key) {
			send_text(fd, AP_ERROR, "this agent has no key (it runs without --key-file); "
				  "connect without key=");
			say(s, "refused AUTH: no --key-file");
			return -1;
		}
		if (s->len != AP_NONCE || ap_nonce(s->na) < 0) {
			send_text(fd, AP_ERROR, "bad AUTH request");
			return -1;
		}
		memcpy(s->nh, s->buf, AP_NONCE);
		s->authed = false; /* a new controller on a device starts over */
		s->challenged = true;
		return ap_send(fd, AP_AUTH_CHALLENGE, 0, s->na, AP_NONCE) < 0 ? -1 : 1;
	}
	if (type == AP_AUTH_PROOF) {
		uint8_t mac[AP_MAC];
		if (!s->challenged) {
			send_text(fd, AP_ERROR, "AUTH first");
			return -1;
		}
		s->challenged = false;
		ap_auth_mac(key, true, s->nh, s->na, mac);
		if (s->len != AP_MAC || !ct_equal(s->buf, mac, AP_MAC)) {
			send_text(fd, AP_ERROR, "authentication failed: wrong key");
			say(s, "a controller failed authentication (wrong key); closing");
			return -1;
		}
		s->authed = true;
		ap_auth_mac(key, false, s->nh, s->na, mac);
		return ap_send(fd, AP_AUTH_OK, 0, mac, AP_MAC) < 0 ? -1 : 1;
	}
	if (!s->authed) {
		send_text(fd, AP_ERROR, "authentication required: this agent has a key; give the host "
			  "--domain NAME=agent:ADDRESS,key=FILE");
		say(s, "refused a controller without the key");
		return -1;
	}
	return 0;
}

/* HELLO: check the version, answer with this guest's identity. Returns
 * 0 to go on, -1 to close. */
static int on_hello(struct session *s)
{
	uint32_t v = ap_hello_req_decode(s->buf, s->len);
	if (v != AP_VERSION) {
		send_text(s->fd, AP_ERROR, "protocol version %u not supported (agent speaks %u)", v, AP_VERSION);
		return -1;
	}
	if (s->recording) /* a new controller on a device: drop the old run */
		end_session(s);
	struct utsname u;
	uname(&u);
	struct ap_hello hh = { .version = AP_VERSION, .ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN) };
#if defined(__x86_64__)
	/* the recorder knows user registers only on x86-64 (cmd-record.c) */
	hh.features |= AP_FEAT_DWARF;
#endif
	snprintf(hh.hostname, sizeof(hh.hostname), "%s", u.nodename);
	snprintf(hh.release, sizeof(hh.release), "%s", u.release);
	uint8_t out[256];
	size_t n = ap_hello_encode(&hh, out, sizeof(out));
	if (ap_send(s->fd, AP_HELLO_OK, 0, out, n) < 0)
		return -1;
	s->hello = true;
	say(s, "controller connected");
	return 0;
}

/* START, STOP, COLLECT and the refusal of anything else, after HELLO.
 * Returns 0 to go on, -1 to close. */
static int on_request(struct session *s, uint16_t type)
{
	const struct agent_server_cfg *c = s->cfg;
	int fd = s->fd;
	char tb[16], why[512] = "";
	if (type == AP_START) {
		struct ap_start st;
		if (ap_start_decode(s->buf, s->len, &st) < 0) {
			send_text(fd, AP_ERROR, "bad START request (hz 1..100000, known flags only, "
				  "DWARF stacks with call chains and 8..%u bytes, a multiple of 8)", DP_MAX_USTACK);
			return 0;
		}
		if (s->recording) {
			send_text(fd, AP_ERROR, "already recording");
			return 0;
		}
		if (c->ops->start(c->ctx, &st, why, sizeof(why)) < 0) {
			say(s, "%s", why);
			send_text(fd, AP_ERROR, "%s", why);
			return 0;
		}
		s->recording = true;
		s->stopped = false;
		if (st.flags & AP_START_DWARF)
			say(s, "recording the guest at %u Hz with call chains and %u-byte user stacks "
			    "(--call-graph dwarf)", st.hz, st.stack_size);
		else
			say(s, "recording the guest at %u Hz%s", st.hz,
			    st.flags & AP_START_CALLCHAIN ? " with call chains" : "");
		return ap_send(fd, AP_STARTED, 0, NULL, 0) < 0 ? -1 : 0;
	}
	if (type == AP_STOP) {
		if (!s->recording) {
			send_text(fd, AP_ERROR, "not recording");
			return 0;
		}
		s->recording = false;
		int r2 = c->ops->stop(c->ctx, why, sizeof(why));
		s->stopped = r2 == 0;
		say(s, "recording stopped: %s", why);
		return send_text(fd, s->stopped ? AP_STOPPED : AP_ERROR, "%s", why) < 0 ? -1 : 0;
	}
	if (type == AP_COLLECT) {
		if (!s->stopped) {
			send_text(fd, AP_ERROR, "nothing to collect: no finished recording");
			return 0;
		}
		int r = c->ops->collect(c->ctx, fd, &c->log, why, sizeof(why));
		if (r == AGENT_COLLECT_GONE) {
			say(s, "%s", why);
			return -1;
		}
		if (r < 0)
			send_text(fd, AP_ERROR, "%s", why);
		s->stopped = false;
		c->ops->discard(c->ctx);
		return 0;
	}
	/* Nothing else exists: no command, file or address request. */
	say(s, "refused request %s; closing", ap_type_name(type, tb, sizeof(tb)));
	send_text(fd, AP_ERROR, "unknown request %s (only HELLO, START, STOP, COLLECT)",
		  ap_type_name(type, tb, sizeof(tb)));
	return -1;
}

/* Wait for the next frame (refusing newcomers, noticing a recorder that
 * ended by itself). Returns 1 with a frame in s->buf, 0 to wait again,
 * -1 to close. */
static int next_frame(struct session *s, uint16_t *type)
{
	const struct agent_server_cfg *c = s->cfg;
	struct pollfd pf[2] = { { .fd = s->fd, .events = POLLIN }, { .fd = c->lfd, .events = POLLIN } };
	int np = c->lfd >= 0 ? 2 : 1;
	int pr = poll(pf, (nfds_t)np, 500);
	if (pr < 0 && errno != EINTR)
		return -1;
	if (np == 2 && (pf[1].revents & POLLIN))
		refuse_busy(s);
	if (s->recording && c->ops->running(c->ctx)) {
		int st;
		if (c->ops->ended(c->ctx, &st) == 1)
			say(s, "the recorder ended by itself (status 0x%x)", st);
	}
	if (pr <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	uint16_t flags;
	int ft = c->idle_ms > 0 && c->idle_ms < 10000 ? c->idle_ms : 10000;
	int r = ap_recv_max(s->fd, type, &flags, &s->buf, &s->cap, &s->len, AP_MAX_REQUEST, ft, c->device);
	if (r == -ECONNRESET) {
		if (c->device) { /* nobody on the other end yet */
			usleep(200000);
			return 0;
		}
		say(s, "controller disconnected");
		return -1;
	}
	if (r < 0) {
		say(s, "bad frame from the controller: %s%s; closing", ap_strerror(r),
		    r == -EMSGSIZE ? " (requests are at most 4096 bytes)" : "");
		send_text(s->fd, AP_ERROR, "%s", r == -EMSGSIZE ? "request too large" : "protocol error");
		return -1;
	}
	s->last = mono_ms();
	return 1;
}

void agent_serve(const struct agent_server_cfg *c, int fd)
{
	struct session s = { .cfg = c, .fd = fd, .authed = !c->key, .last = mono_ms() };
	for (;;) {
		if (c->quit && *c->quit)
			break;
		/* on a device nobody may be there: only a begun session idles */
		bool begun = !c->device || s.hello || s.challenged || (c->key && s.authed);
		if (c->idle_ms > 0 && !s.recording && begun && mono_ms() - s.last > c->idle_ms) {
			say(&s, "controller idle for %d s; closing", c->idle_ms / 1000);
			send_text(fd, AP_ERROR, "idle for %d s; closing", c->idle_ms / 1000);
			break;
		}
		uint16_t type;
		int nf = next_frame(&s, &type);
		if (nf < 0)
			break;
		if (nf == 0)
			continue;
		int as = auth_step(&s, type);
		if (as < 0)
			break;
		if (as > 0)
			continue;
		if (type == AP_HELLO) {
			if (on_hello(&s) < 0)
				break;
			continue;
		}
		if (!s.hello) {
			send_text(fd, AP_ERROR, "say HELLO first");
			break;
		}
		if (on_request(&s, type) < 0)
			break;
	}
	end_session(&s);
	/* nothing of a session outlives it */
	free(s.buf);
}
