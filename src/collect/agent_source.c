// SPDX-License-Identifier: MIT
/*
 * Active domain source (see agent_source.h): connect to an in-guest
 * `domprof agent`, start its recording, and at the end receive and relay
 * the guest's records. The receiver thread owns the socket after start;
 * the recorder's thread only queues requests (stop) and drains the queue.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "collect/agent_proto.h"
#include "collect/agent_source.h"
#include "format/raw.h"
#include "util/clock.h"
#include "util/sat.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#define QUEUE_MAX_BYTES AGENT_QUEUE_MAX_BYTES /* beyond this the guest's records are dropped and counted */
#define LOST_CAP (1ull << 40)  /* no claim of lost samples is counted beyond this */
#define NCPUS_CAP 4096u        /* a guest claiming more CPUs is reckoned with this many */

enum item_kind { IT_RECORDS, IT_SYMTAB };

struct item {
	enum item_kind kind;
	uint8_t *data;          /* raw records back to back, or a symtab blob */
	size_t len;
	uint32_t symkind;
	char *name;
};

struct agent_source {
	struct agent_spec spec;
	uint32_t domain_id;
	int fd;
	struct ap_hello hello;
	char info[512];
	char msg[512];

	pthread_t th;
	bool th_running;
	pthread_mutex_t lock;
	/* shared under lock */
	struct item *q;
	size_t qhead, qn, qcap;
	uint64_t qbytes;
	uint64_t lost_pending;      /* guest's own lost samples + what we dropped */
	uint64_t lost_total;        /* all of them, for the summary */
	bool want_stop;
	bool ended;                 /* ended by itself (error, disconnect), or a claim refused: message printed */
	bool done;                  /* thread finished */
	uint64_t samples_rx;
	bool aborted;               /* the recorder was interrupted while waiting */
	/* receiver thread only: what the agent sent after STOP */
	uint64_t rx_bytes;          /* decompressed, against spec.max_bytes */
	uint64_t sym_bytes;         /* symbol data: SYMTAB frames and SYMTAB records */
	unsigned nsym;
	uint64_t refused_sym, refused_sym_bytes;
	uint64_t lost_claimed;      /* the agent's LOST frames, summed saturating */
	int64_t started_ms;         /* STARTED arrived (host clock), under lock */
	struct ap_start start;      /* what START asks, sent by the receiver at begin */
	bool begun;                 /* under lock: agent_source_begin was called */
	/* under lock: when sampling ended (STOP sent, or the domain ended
	 * by itself first), and the receiver thread's CPU time at its end */
	uint64_t end_ns, cpu_ns;
	unsigned hz;
	/* recorder thread only */
	uint64_t samples_written;
	uint64_t t_first, t_last;   /* the written samples' times (guest clock) */
	bool stopped;
	int collect_timeout_ms;     /* AGENT_COLLECT_TIMEOUT_MS, or shorter for tests */
	const volatile sig_atomic_t *interrupt;
};



/* Take the trailing ",key=FILE" and ",max-bytes=SIZE" options off addr
 * (in place). Options are recognised from the end, so a unix socket path
 * may itself contain commas. */
static int agent_spec_options(struct agent_spec *out, char *addr, char *err, size_t errlen)
{
	out->max_bytes = AGENT_MAX_BYTES;
	for (int i = 0; i < 4; i++) {
		char *k = strstr(addr, ",key="), *m = strstr(addr, ",max-bytes="), *o;
		while (k && strstr(k + 1, ",key="))
			k = strstr(k + 1, ",key=");
		while (m && strstr(m + 1, ",max-bytes="))
			m = strstr(m + 1, ",max-bytes=");
		o = !k ? m : !m ? k : k > m ? k : m;
		if (!o)
			return 0;
		if (o == k) {
			if (!k[5] || strlen(k + 5) >= sizeof(out->key_file) || out->key_file[0]) {
				snprintf(err, errlen, "%s: key= needs one FILE", out->name);
				return -EINVAL;
			}
			snprintf(out->key_file, sizeof(out->key_file), "%s", k + 5);
		} else {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(m + 11, &end, 10);
			uint64_t mul = *end == 'K' || *end == 'k' ? 1ull << 10 : *end == 'M' ? 1ull << 20 :
				       *end == 'G' ? 1ull << 30 : 1;
			if (mul > 1)
				end++;
			if (errno || end == m + 11 || *end || !v || v > (1ull << 50) / mul) {
				snprintf(err, errlen, "%s: bad max-bytes '%s' (a size like 32G)", out->name, m + 11);
				return -EINVAL;
			}
			out->max_bytes = v * mul;
		}
		*o = '\0';
	}
	return 0;
}

int agent_spec_parse(const char *spec, struct agent_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(out->name)) {
		snprintf(err, errlen, "%s: bad domain spec, expected NAME=agent:HOST:PORT or NAME=agent:unix:PATH", spec);
		return -EINVAL;
	}
	memcpy(out->name, spec, (size_t)(eq - spec));
	const char *a = eq + 1;
	if (strncmp(a, "agent:", 6)) {
		snprintf(err, errlen, "%s: not an agent spec", out->name);
		return -EINVAL;
	}
	a += 6;
	char addr[4096 + 300];
	if (strlen(a) >= sizeof(addr)) {
		snprintf(err, errlen, "%s: agent spec too long", out->name);
		return -EINVAL;
	}
	snprintf(addr, sizeof(addr), "%s", a);
	if (agent_spec_options(out, addr, err, errlen) < 0)
		return -EINVAL;
	a = addr;
	if (strlen(a) >= sizeof(out->address) - 6) {
		snprintf(err, errlen, "%s: agent address too long", out->name);
		return -EINVAL;
	}
	snprintf(out->address, sizeof(out->address), "agent:%.293s", a);
	if (!strncmp(a, "unix:", 5)) {
		if (!a[5] || strlen(a + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, errlen, "%s: agent socket path empty or too long", out->name);
			return -EINVAL;
		}
		out->is_unix = true;
		snprintf(out->host, sizeof(out->host), "%.255s", a + 5);
		return 0;
	}
	if (!strncmp(a, "tcp:", 4))
		a += 4;
	const char *colon = strrchr(a, ':');
	if (!colon || colon == a || !colon[1] || (size_t)(colon - a) >= sizeof(out->host) ||
	    strlen(colon + 1) >= sizeof(out->port) || strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
		snprintf(err, errlen, "%s: bad agent address '%s', expected HOST:PORT, tcp:HOST:PORT or unix:PATH",
			 out->name, addr);
		return -EINVAL;
	}
	memcpy(out->host, a, (size_t)(colon - a));
	if (out->host[0] == '[') { /* [::1]:7000 */
		size_t n = strlen(out->host);
		if (out->host[n - 1] == ']') {
			memmove(out->host, out->host + 1, n - 2);
			out->host[n - 2] = '\0';
		}
	}
	snprintf(out->port, sizeof(out->port), "%s", colon + 1);
	return 0;
}

static int connect_to(struct agent_source *s, bool allow_remote, char *err, size_t errlen)
{
	if (s->spec.is_unix) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		strcpy(sa.sun_path, s->spec.host);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int e = errno;
			snprintf(err, errlen, "%s: cannot connect to the agent at %s: %s", s->spec.name,
				 s->spec.host, strerror(e));
			if (fd >= 0)
				close(fd);
			return -e;
		}
		s->fd = fd;
		return 0;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int r = getaddrinfo(s->spec.host, s->spec.port, &hints, &res);
	if (r) {
		snprintf(err, errlen, "%s: cannot resolve '%s': %s", s->spec.name, s->spec.host, gai_strerror(r));
		return -ENOENT;
	}
	if (!allow_remote)
		for (ai = res; ai; ai = ai->ai_next)
			if (!ap_is_loopback(ai->ai_addr)) {
				snprintf(err, errlen, "%s: %s is not a loopback address; reach the guest's agent "
					 "through a forwarded loopback port (QEMU hostfwd=tcp:127.0.0.1:PORT-:7000) "
					 "or pass --allow-remote-stub", s->spec.name, s->spec.host);
				freeaddrinfo(res);
				return -EPERM;
			}
	int e = ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			s->fd = fd;
			freeaddrinfo(res);
			return 0;
		}
		e = errno;
		close(fd);
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "%s: cannot connect to the agent at %s:%s: %s", s->spec.name, s->spec.host,
		 s->spec.port, strerror(e));
	return -e;
}

/* Wait for one reply frame; an ERROR reply becomes a message in err. */
static int expect(struct agent_source *s, uint16_t want, uint8_t **buf, size_t *cap, size_t *len,
		  int timeout_ms, const char *what, char *err, size_t errlen)
{
	uint16_t type, flags;
	int r = ap_recv(s->fd, &type, &flags, buf, cap, len, timeout_ms, false);
	if (r < 0) {
		snprintf(err, errlen, "%s: agent at %s: %s %s", s->spec.name, s->spec.address + 6,
			 r == -ECONNRESET ? "connection closed while waiting for the reply to" :
			 r == -ETIMEDOUT ? "no reply in time to" : "bad reply to", what);
		return r;
	}
	if (type == AP_ERROR) {
		snprintf(err, errlen, "%s: agent refused %s: %.*s", s->spec.name, what, (int)*len, (char *)*buf);
		return -EREMOTEIO;
	}
	if (type != want) {
		char tb[16];
		snprintf(err, errlen, "%s: agent answered %s with %s", s->spec.name, what,
			 ap_type_name(type, tb, sizeof(tb)));
		return -EPROTO;
	}
	return 0;
}

/* Queue an item; false (and the item freed) when the queue is full. */
static bool enqueue(struct agent_source *s, struct item *it)
{
	pthread_mutex_lock(&s->lock);
	if (s->qbytes + it->len > QUEUE_MAX_BYTES) {
		pthread_mutex_unlock(&s->lock);
		free(it->data);
		free(it->name);
		return false;
	}
	if (s->qhead && s->qhead == s->qn) {
		s->qhead = s->qn = 0;
	}
	xgrow((void **)&s->q, &s->qcap, s->qn + 1, sizeof(*s->q));
	s->q[s->qn++] = *it;
	s->qbytes += it->len;
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* The agent's lost claim, bounded: at most what its CPUs could have
 * sampled at the requested rate for as long as it recorded (host clock,
 * plus a few seconds for its start and stop), and never more than
 * LOST_CAP. What is counted goes out as this domain's LOST record; the
 * clamp, if any, is appended to the domain's message, and the domain
 * marked ended so the recorder prints it (all its records did arrive). */
static void settle_lost_locked(struct agent_source *s)
{
	if (!s->lost_claimed)
		return;
	uint64_t cpus = s->hello.ncpus ? s->hello.ncpus : 1;
	if (cpus > NCPUS_CAP)
		cpus = NCPUS_CAP;
	uint64_t secs = (uint64_t)((mono_ms() - s->started_ms) / 1000) + 5;
	uint64_t plausible = (uint64_t)s->hz * cpus * secs;
	if (plausible > LOST_CAP)
		plausible = LOST_CAP;
	uint64_t l = s->lost_claimed < plausible ? s->lost_claimed : plausible;
	s->lost_pending = sat_add64(s->lost_pending, l);
	s->lost_total = sat_add64(s->lost_total, l);
	if (l < s->lost_claimed) {
		s->ended = true; /* so the recorder prints the message */
		size_t n = strlen(s->msg);
		snprintf(s->msg + n, sizeof(s->msg) - n, "; the agent claimed %" PRIu64 " lost samples, "
			 "more than %u Hz x %" PRIu64 " CPU(s) x %" PRIu64 " s allows: counted %" PRIu64,
			 s->lost_claimed, s->hz, cpus, secs, l);
	}
}

/* What the limits refused, appended to the domain's message. */
static void note_refused_locked(struct agent_source *s)
{
	if (!s->refused_sym)
		return;
	s->ended = true; /* so the recorder prints the message */
	size_t n = strlen(s->msg);
	snprintf(s->msg + n, sizeof(s->msg) - n, "; refused %" PRIu64 " symbol table(s), %" PRIu64
		 " bytes, over the limits (%llu MiB each, %llu MiB and %u in all)", s->refused_sym,
		 s->refused_sym_bytes, AGENT_SYMTAB_MAX_BLOB >> 20, AGENT_SYMTAB_MAX_TOTAL >> 20,
		 AGENT_SYMTAB_MAX_COUNT);
}

/* The receiver's last word: the domain's message, with the lost count
 * settled and what was refused appended, all under the lock, so the
 * recorder never prints half of it. */
static void finish(struct agent_source *s, bool by_itself, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void finish(struct agent_source *s, bool by_itself, const char *fmt, ...)
{
	pthread_mutex_lock(&s->lock);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	settle_lost_locked(s);
	note_refused_locked(s);
	if (by_itself)
		s->ended = true;
	s->done = true;
	pthread_mutex_unlock(&s->lock);
}

/* Count n bytes of symbol data against the domain's limits; false (and
 * the refusal counted) when it does not fit. */
static bool sym_budget(struct agent_source *s, uint64_t n)
{
	if (n > AGENT_SYMTAB_MAX_BLOB || s->nsym >= AGENT_SYMTAB_MAX_COUNT ||
	    s->sym_bytes + n > AGENT_SYMTAB_MAX_TOTAL) {
		s->refused_sym++;
		s->refused_sym_bytes = sat_add64(s->refused_sym_bytes, n);
		return false;
	}
	s->nsym++;
	s->sym_bytes += n;
	return true;
}

/* A batch of raw records: check every one before any is queued: its tag
 * (ap_check_record) and its body (dp_record_check: a record the reader
 * cannot decode would be damage in the host's file).
 * -EPROTO: a record the host does not relay; -EBADMSG: a malformed one. */
static int take_records(struct agent_source *s, uint8_t *buf, size_t len)
{
	uint64_t samples = 0;
	uint16_t tag;
	uint32_t n;
	int nr;
	for (size_t o = 0, at = 0; (nr = dp_raw_next(buf, len, &o, &tag, &n)) != 0; at = o) {
		if (nr < 0)
			return -EPROTO;
		int t = ap_check_record(buf + at, n);
		if (t < 0)
			return t;
		if (!dp_record_check(buf + at, n))
			return -EBADMSG;
		samples += t == DP_REC_SAMPLE;
	}
	/* SYMTAB records (the guest's kallsyms) count against the domain's
	 * symbol budget like SYMTAB frames; those over it are left out */
	struct item it = { .kind = IT_RECORDS, .data = xmalloc(len ? len : 1), .len = 0 };
	for (size_t o = 0, at = 0; dp_raw_next(buf, len, &o, &tag, &n) == 1; at = o) {
		if (tag == DP_REC_SYMTAB && !sym_budget(s, n))
			continue;
		memcpy(it.data + it.len, buf + at, n);
		it.len += n;
	}
	bool queued = enqueue(s, &it);
	pthread_mutex_lock(&s->lock);
	if (queued) {
		s->samples_rx += samples;
	} else { /* the writer fell QUEUE_MAX_BYTES behind: those samples are lost */
		s->lost_pending = sat_add64(s->lost_pending, samples);
		s->lost_total = sat_add64(s->lost_total, samples);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* One SYMTAB frame: an ELF blob, queued unless over the symbol limits.
 * Returns false for a malformed one (the domain ends). */
static bool take_symtab(struct agent_source *s, const uint8_t *buf, size_t len)
{
	struct item it = { .kind = IT_SYMTAB };
	char name[4097];
	const uint8_t *data;
	size_t size;
	if (ap_symtab_decode(buf, len, &it.symkind, name, sizeof(name), &data, &size) < 0 ||
	    it.symkind != DP_SYMTAB_ELF)
		return false;
	if (!sym_budget(s, size))
		return true;
	it.name = xstrdup(name);
	it.data = xmalloc(size ? size : 1);
	memcpy(it.data, data, size);
	it.len = size;
	enqueue(s, &it);
	return true;
}

/* The receiver's first step: wait for agent_source_begin (the collector
 * begins every domain at once, so an agent records the same window as the
 * host and the passive guests, not from its own connect), send START and
 * wait for STARTED. False: the source finished (refused, stopped or
 * interrupted before it began; the recorder then fails, as for a failed
 * connect: it begins the host only when every agent has started). */
static bool start_recording(struct agent_source *s, uint8_t **buf, size_t *cap, size_t *len)
{
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool begun = s->begun, ws = s->want_stop, ab = s->aborted;
		pthread_mutex_unlock(&s->lock);
		if (ab || (ws && !begun)) {
			finish(s, ab, "%s: the recording stopped before the agent was started", s->spec.name);
			return false;
		}
		if (begun)
			break;
		usleep(5000);
	}
	uint8_t p[AP_START_MAX];
	size_t plen = ap_start_encode(&s->start, p);
	char err[400] = "";
	if (ap_send(s->fd, AP_START, 0, p, plen) < 0) {
		finish(s, true, "%s: cannot talk to the agent: %s", s->spec.name, strerror(errno));
		return false;
	}
	/* A TCG guest starting its recorder takes a few seconds, on a
	 * loaded host over a minute (a tenth guest at load average 16):
	 * wait up to AGENT_START_TIMEOUT_MS, and give up at once on a stop
	 * (closing the connection makes the agent discard its recording). */
	int64_t t0 = mono_ms();
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool ws = s->want_stop, ab = s->aborted;
		pthread_mutex_unlock(&s->lock);
		if (ws || ab) {
			finish(s, ab, "%s: the recording stopped before the agent had started its own", s->spec.name);
			return false;
		}
		if (mono_ms() - t0 > AGENT_START_TIMEOUT_MS) {
			finish(s, true, "%s: agent at %s: no STARTED within %d s; domain ended", s->spec.name,
			       s->spec.address + 6, AGENT_START_TIMEOUT_MS / 1000);
			return false;
		}
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		if (poll(&pf, 1, 50) > 0)
			break;
	}
	if (expect(s, AP_STARTED, buf, cap, len, 60000, "START", err, sizeof(err)) < 0) {
		finish(s, true, "%s", err);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	s->started_ms = mono_ms();
	pthread_mutex_unlock(&s->lock);
	return true;
}

static void *receiver(void *arg)
{
	struct agent_source *s = arg;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	bool sent_stop = false, collecting = false;
	int64_t stop_at = 0;
	char tb[16];

	if (!start_recording(s, &buf, &cap, &len)) {
		free(buf);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool ws = s->want_stop, ab = s->aborted;
		uint64_t rx = s->samples_rx;
		pthread_mutex_unlock(&s->lock);
		if (ab) {
			finish(s, true, "%s: collection interrupted; domain ended (%" PRIu64 " samples received)",
			       s->spec.name, rx);
			break;
		}
		if (ws && !sent_stop) {
			sent_stop = true;
			stop_at = mono_ms();
			pthread_mutex_lock(&s->lock);
			s->end_ns = mono_ns();
			pthread_mutex_unlock(&s->lock);
			if (ap_send(s->fd, AP_STOP, 0, NULL, 0) < 0) {
				finish(s, true, "%s: agent connection lost before stop", s->spec.name);
				break;
			}
		}
		if (sent_stop && mono_ms() - stop_at > s->collect_timeout_ms) {
			finish(s, true, "%s: agent did not send its records within %g s (%" PRIu64 " samples received)",
			       s->spec.name, s->collect_timeout_ms / 1000.0, rx);
			break;
		}
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		if (poll(&pf, 1, 50) <= 0)
			continue;
		uint16_t type, flags;
		int r = ap_recv(s->fd, &type, &flags, &buf, &cap, &len, 60000, false);
		pthread_mutex_lock(&s->lock);
		ab = s->aborted;
		pthread_mutex_unlock(&s->lock);
		if (ab)
			continue; /* said at the top */
		if (r == -ECONNRESET) {
			finish(s, true, "%s: agent closed the connection %s (%" PRIu64 " samples received)",
			       s->spec.name, sent_stop ? "while sending its records" : "during the recording", rx);
			break;
		}
		if (r < 0) {
			finish(s, true, "%s: %s from the agent; domain ended (%" PRIu64 " samples received)",
			       s->spec.name, ap_strerror(r), rx);
			break;
		}
		if (collecting && s->rx_bytes + len > s->spec.max_bytes) {
			finish(s, true, "%s: the agent sent more than %" PRIu64 " bytes (max-bytes); domain ended "
			       "(%" PRIu64 " samples received)", s->spec.name, s->spec.max_bytes, rx);
			break;
		}
		s->rx_bytes += len;
		if (type == AP_STOPPED && sent_stop && !collecting) {
			collecting = true;
			if (ap_send(s->fd, AP_COLLECT, 0, NULL, 0) < 0) {
				finish(s, true, "%s: agent connection lost before collect", s->spec.name);
				break;
			}
		} else if (type == AP_RECORD && collecting) {
			int tr = take_records(s, buf, len);
			if (tr == -EBADMSG) {
				finish(s, true, "%s: the agent sent a malformed record; domain ended",
				       s->spec.name);
				break;
			}
			if (tr < 0) {
				finish(s, true, "%s: the agent sent a record the host does not relay "
				       "(only task, mmap, sample, symtab); domain ended", s->spec.name);
				break;
			}
		} else if (type == AP_SYMTAB && collecting) {
			if (!take_symtab(s, buf, len)) {
				finish(s, true, "%s: bad symbol table from the agent; domain ended", s->spec.name);
				break;
			}
		} else if (type == AP_LOST && len == 8 && collecting) {
			uint64_t l = 0;
			ap_lost_decode(buf, len, &l);
			s->lost_claimed = sat_add64(s->lost_claimed, l);
		} else if (type == AP_END && collecting) {
			struct ap_end e;
			if (ap_end_decode(buf, len, &e) < 0 || e.samples != rx) {
				finish(s, true, "%s: agent's end of collection does not match what arrived "
				       "(%" PRIu64 " samples received)", s->spec.name, rx);
				break;
			}
			finish(s, false, "%s: %" PRIu64 " samples from the agent", s->spec.name, rx);
			break;
		} else if (type == AP_ERROR) {
			finish(s, true, "%s: agent: %.*s (%" PRIu64 " samples received)", s->spec.name,
			       (int)(len > 300 ? 300 : len), (char *)buf, rx);
			break;
		} else {
			finish(s, true, "%s: unexpected %s from the agent; domain ended", s->spec.name,
			       ap_type_name(type, tb, sizeof(tb)));
			break;
		}
	}
	free(buf);
	pthread_mutex_lock(&s->lock);
	close(s->fd);
	s->fd = -1;
	if (!s->end_ns)
		s->end_ns = mono_ns();
	s->cpu_ns = thread_cpu_ns();
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* With a key: AUTH (our nonce) -> AUTH_CHALLENGE (the agent's nonce),
 * AUTH_PROOF (our MAC) -> AUTH_OK (the agent's MAC), which we check: both
 * sides prove the key before HELLO. */
static int authenticate(struct agent_source *s, uint8_t **buf, size_t *cap, size_t *len,
			char *err, size_t errlen)
{
	struct ap_key key;
	int r = ap_key_load(s->spec.key_file, false, &key, NULL, err, errlen);
	if (r < 0) {
		char why[600];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", s->spec.name, why);
		return r;
	}
	uint8_t nh[AP_NONCE], na[AP_NONCE], mac[AP_MAC];
	if ((r = ap_nonce(nh)) < 0) {
		snprintf(err, errlen, "%s: getrandom: %s", s->spec.name, strerror(-r));
		goto out;
	}
	if (ap_send(s->fd, AP_AUTH, 0, nh, sizeof(nh)) < 0) {
		r = -errno;
		if (expect(s, AP_AUTH_CHALLENGE, buf, cap, len, 1000, "AUTH", err, errlen) == 0 || !err[0])
			snprintf(err, errlen, "%s: cannot talk to the agent: %s", s->spec.name, strerror(-r));
		goto out;
	}
	if ((r = expect(s, AP_AUTH_CHALLENGE, buf, cap, len, 15000, "AUTH", err, errlen)) < 0)
		goto out;
	if (*len != AP_NONCE) {
		snprintf(err, errlen, "%s: malformed AUTH_CHALLENGE from the agent", s->spec.name);
		r = -EPROTO;
		goto out;
	}
	memcpy(na, *buf, AP_NONCE);
	ap_auth_mac(&key, true, nh, na, mac);
	if (ap_send(s->fd, AP_AUTH_PROOF, 0, mac, sizeof(mac)) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot talk to the agent: %s", s->spec.name, strerror(-r));
		goto out;
	}
	if ((r = expect(s, AP_AUTH_OK, buf, cap, len, 15000, "the key", err, errlen)) < 0)
		goto out;
	ap_auth_mac(&key, false, nh, na, mac);
	if (*len != AP_MAC || !ct_equal(*buf, mac, AP_MAC)) {
		snprintf(err, errlen, "%s: the agent did not prove it holds the key in %s; not using it",
			 s->spec.name, s->spec.key_file);
		r = -EACCES;
	}
out:
	memset(&key, 0, sizeof(key));
	return r;
}

struct agent_source *agent_source_start(const char *spec, uint32_t domain_id,
					const struct domain_source_opts *o,
					char *err, size_t errlen)
{
	struct agent_source *s = xcalloc(1, sizeof(*s));
	s->fd = -1;
	s->domain_id = domain_id;
	/* Tests (tests/unit/test-agent-source.c) shorten the wait for an
	 * agent that never answers STOP; it can only be made shorter. */
	s->collect_timeout_ms = AGENT_COLLECT_TIMEOUT_MS;
	const char *ct = getenv("DOMPROF_AGENT_COLLECT_TIMEOUT_MS");
	if (ct && atoi(ct) > 0 && atoi(ct) < AGENT_COLLECT_TIMEOUT_MS)
		s->collect_timeout_ms = atoi(ct);
	s->interrupt = o ? o->interrupt : NULL;
	pthread_mutex_init(&s->lock, NULL);
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	if (agent_spec_parse(spec, &s->spec, err, errlen) < 0 ||
	    connect_to(s, o && o->allow_remote, err, errlen) < 0)
		goto fail;
	if (s->spec.key_file[0] && authenticate(s, &buf, &cap, &len, err, errlen) < 0)
		goto fail;

	uint8_t v[4];
	ap_hello_req_encode(AP_VERSION, v);
	if (ap_send(s->fd, AP_HELLO, 0, v, sizeof(v)) < 0) {
		/* A busy agent answers ERROR and closes at once: its reason
		 * may already be waiting even though our write failed. */
		int e = errno;
		if (expect(s, AP_HELLO_OK, &buf, &cap, &len, 1000, "HELLO", err, errlen) == 0 || !err[0])
			snprintf(err, errlen, "%s: cannot talk to the agent: %s", s->spec.name, strerror(e));
		goto fail;
	}
	if (expect(s, AP_HELLO_OK, &buf, &cap, &len, 15000, "HELLO", err, errlen) < 0)
		goto fail;
	/* another version may lay HELLO_OK out differently: say the version
	 * when there is one, "malformed" only when even that is missing */
	int hd = ap_hello_decode(buf, len, &s->hello);
	if (hd < 0 && (len < 8 || s->hello.version == AP_VERSION)) {
		snprintf(err, errlen, "%s: malformed HELLO_OK from the agent", s->spec.name);
		goto fail;
	}
	if (s->hello.version != AP_VERSION) {
		snprintf(err, errlen, "%s: agent speaks protocol version %u, this domprof %u",
			 s->spec.name, s->hello.version, AP_VERSION);
		goto fail;
	}
	struct ap_start st = { .hz = o && o->hz ? o->hz : 1000,
			       .flags = o && o->callchains ? AP_START_CALLCHAIN : 0 };
	/* DWARF stacks only from an agent that offers them; an older one
	 * (or one whose recorder cannot take user registers) records
	 * frame-pointer chains, and the info line says so */
	const char *chains = st.flags ? " with call chains" : "";
	uint32_t ustack = o && st.flags ? o->ustack_size : 0;
	if (ustack && (s->hello.features & AP_FEAT_DWARF)) {
		st.flags |= AP_START_DWARF;
		st.stack_size = ustack;
		chains = " with call chains and user stacks (--call-graph dwarf)";
	} else if (ustack) {
		chains = " with frame-pointer call chains only (this agent records no DWARF stacks: "
			 "it is older than this domprof, or not x86-64)";
	}
	s->start = st;
	s->hz = st.hz;
	free(buf);
	buf = NULL;
	snprintf(s->info, sizeof(s->info), "%s: agent on '%s' (Linux %s, %u CPU%s) recording at %u Hz%s",
		 s->spec.name, s->hello.hostname, s->hello.release, s->hello.ncpus,
		 s->hello.ncpus == 1 ? "" : "s", st.hz, chains);
	/* START waits for agent_source_begin: the receiver sends it */
	if (pthread_create(&s->th, NULL, receiver, s)) {
		snprintf(err, errlen, "%s: cannot start a thread", s->spec.name);
		goto fail;
	}
	s->th_running = true;
	return s;
fail:
	free(buf);
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

int agent_source_write_meta(struct agent_source *s, struct dp_writer *w)
{
	struct dp_domain d = {
		.id = s->domain_id,
		.kind = DP_DOMAIN_ACTIVE,
		.vcpus = s->hello.ncpus,
		.kaslr_offset = 0,  /* the guest's own kallsyms already holds run-time addresses */
		.name = s->spec.name,
		.address = s->spec.address,
		.symsrc = "embedded",
	};
	return dp_write_domain(w, &d);
}

int agent_source_drain(struct agent_source *s, struct dp_writer *w)
{
	int written = 0;
	for (;;) {
		struct item it = { 0 };
		bool have = false;
		uint64_t lost;
		pthread_mutex_lock(&s->lock);
		if (s->qhead < s->qn) {
			it = s->q[s->qhead++];
			s->qbytes -= it.len;
			have = true;
		}
		lost = s->lost_pending;
		s->lost_pending = 0;
		pthread_mutex_unlock(&s->lock);
		int r = 0;
		if (lost) {
			struct dp_lost l = { .count = lost, .source = DP_LOST_AGENT, .where = s->domain_id };
			r = dp_write_lost(w, &l);
			written++;
		}
		if (!have || r < 0) {
			if (have) {
				free(it.data);
				free(it.name);
			}
			return r < 0 ? r : written;
		}
		if (it.kind == IT_RECORDS) {
			uint16_t t;
			uint32_t n;
			for (size_t o = 0, at = 0; !r && dp_raw_next(it.data, it.len, &o, &t, &n) == 1; at = o) {
				r = dp_write_raw(w, s->domain_id, it.data + at, n);
				uint64_t ts;
				if (!r && t == DP_REC_SAMPLE && dp_raw_sample_time(it.data + at, n, &ts)) {
					if (!s->samples_written++ || ts < s->t_first)
						s->t_first = ts;
					if (ts > s->t_last)
						s->t_last = ts;
				}
				written++;
			}
		} else {
			struct dp_symtab st = { .kind = it.symkind, .name = it.name, .data = it.data, .size = it.len };
			r = dp_write_symtab(w, s->domain_id, &st);
			written++;
		}
		free(it.data);
		free(it.name);
		if (r < 0)
			return r;
	}
}

bool agent_source_ended(const struct agent_source *s)
{
	struct agent_source *m = (struct agent_source *)s;
	pthread_mutex_lock(&m->lock);
	bool e = m->ended;
	pthread_mutex_unlock(&m->lock);
	return e;
}

const char *agent_source_message(const struct agent_source *s)
{
	struct agent_source *m = (struct agent_source *)s;
	pthread_mutex_lock(&m->lock);
	bool d = m->done;
	pthread_mutex_unlock(&m->lock);
	return d && m->msg[0] ? m->msg : NULL;
}

const char *agent_source_info(const struct agent_source *s)
{
	return s->info[0] ? s->info : NULL;
}

const char *agent_source_name(const struct agent_source *s)
{
	return s->spec.name;
}

uint64_t agent_source_samples(const struct agent_source *s)
{
	return s->samples_written;
}

void agent_source_rate(const struct agent_source *s, struct domain_source_rate *r)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	r->domain = s->domain_id;
	r->hz = s->hz;
	r->units = s->hello.ncpus < NCPUS_CAP ? s->hello.ncpus : NCPUS_CAP;
	/* the guest's recording runs from about its STARTED to our STOP; its
	 * recorder starts sampling before it answers (seconds before, in a
	 * TCG guest), so the samples' own times give the span when they can */
	r->begin_ns = s->started_ms > 0 ? (uint64_t)s->started_ms * 1000000u : 0;
	r->end_ns = s->end_ns;
	if (s->samples_written > 1 && s->t_last > s->t_first && s->hz)
		r->span_ns = s->t_last - s->t_first + 1000000000u / s->hz;
	r->missed = s->lost_total;
	r->cpu_ns = s->cpu_ns;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	r->samples = s->samples_written;
}

uint64_t agent_source_lost(const struct agent_source *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	uint64_t n = s->lost_total;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return n;
}

void agent_source_begin(struct agent_source *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->begun = true;
	pthread_mutex_unlock(&s->lock);
}

bool agent_source_started(const struct agent_source *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	bool r = s->started_ms > 0 || s->done;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return r;
}

void agent_source_request_stop(struct agent_source *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->want_stop = true;
	pthread_mutex_unlock(&s->lock);
}

void agent_source_stop(struct agent_source *s)
{
	if (!s || s->stopped)
		return;
	s->stopped = true;
	pthread_mutex_lock(&s->lock);
	s->want_stop = true;
	pthread_mutex_unlock(&s->lock);
	if (!s->th_running)
		return;
	/* wait for the collection, giving up at once when interrupted: the
	 * receiver may sit in a read, so its socket is shut down under it */
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool done = s->done;
		if (!done && s->interrupt && *s->interrupt && !s->aborted) {
			s->aborted = true;
			if (s->fd >= 0)
				shutdown(s->fd, SHUT_RDWR);
		}
		pthread_mutex_unlock(&s->lock);
		if (done)
			break;
		usleep(20000);
	}
	pthread_join(s->th, NULL);
	s->th_running = false;
}

void agent_source_free(struct agent_source *s)
{
	if (!s)
		return;
	agent_source_stop(s);
	for (size_t i = s->qhead; i < s->qn; i++) {
		free(s->q[i].data);
		free(s->q[i].name);
	}
	free(s->q);
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
