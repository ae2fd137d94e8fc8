// SPDX-License-Identifier: MIT
/*
 * Passive domain sampler: one thread per VM talks to the VM's gdbstub,
 * stops it at the sampling rate, reads rip/cs/cr3 of every vCPU, and
 * resumes it. Samples go to a bounded queue under a mutex that the
 * recorder's collector empties with gdb_source_drain(); the sampler never
 * touches the writer, so a stalled VM cannot block the recording.
 *
 * Only reading packets are sent (?, g, p, Hg, qfThreadInfo, qsThreadInfo,
 * qSupported, qXfer:features:read, QStartNoAckMode, m, c, 0x03, D): the
 * stub gives full control of the VM, and we never write its memory or
 * registers.
 *
 * QEMU (softmmu) stops a running VM on *any* byte it receives, so in ack
 * mode every '+' we owe is sent before the `c` that resumes the VM, in the
 * same write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_source.h"
#include "collect/kaslr.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

#define GDB_TIMEOUT_MS 1000
/* How long a stub that stopped answering is still waited for once the
 * recording is asked to stop (see recover_vm). */
#define GDB_STOP_GRACE_MS 2000
/* Appended to an end message when we cannot know the VM was resumed. */
#define MAY_BE_PAUSED "; the VM may be left paused (run `cont` in its QEMU monitor)"
#define GDB_MAX_SYMFILE (1024ull << 20)

struct reginfo {
	bool present;
	bool in_g;              /* else read with `p regnum` */
	size_t offset;          /* bytes into the g reply */
	unsigned size;          /* bytes */
	unsigned regnum;
};

struct gdb_source {
	struct gdb_spec spec;
	uint32_t domain_id;
	unsigned hz;
	bool use_p;             /* regs=p: read rip/cs/cr3 with p packets */
	bool pipeline;          /* 0x03 and register requests in one write */
	char address[300];
	char symsrc[4200];
	char info[512];
	char message[512];
	uint64_t kaslr;

	struct rsp_conn *conn;
	struct rsp_tdesc td;
	struct reginfo rip, cs, cr3;
	char (*tids)[RSP_MAX_TID];
	size_t nvcpu;
	char *batch;            /* pipelined per-tick requests */
	size_t batchlen;
	unsigned replies;       /* replies the batch produces */
	char detach[40];        /* "D", or "D;PID" for multiprocess thread ids */

	/* What the stub owes the sampler (sampler thread only): the stop
	 * reply to our 0x03 and the replies to requests already sent. If it
	 * stops answering with something owed, it will stop the VM for us
	 * once it catches up (see recover_vm). */
	bool stop_owed;
	unsigned owed;
	bool unsure;            /* a packet write failed midway: state unknown */

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop_req;          /* under lock */
	uint64_t stop_req_ns;   /* under lock: when stop_req was set */
	bool stopped;           /* stop() done */
	atomic_bool ended;

	/* Queue, under lock. */
	struct dp_sample *q;
	size_t qcap, qhead, qcount;
	uint64_t lost_pending;

	atomic_uint_fast64_t samples;   /* vCPU samples taken */
	atomic_uint_fast64_t ticks;     /* VM stops */
	atomic_uint_fast64_t stop_ns;   /* total time the VM was held stopped */
	atomic_uint_fast64_t intr_ns;   /* of which: 0x03 until the stop reply */
	atomic_uint_fast64_t lost_total;
};

/* ---- Spec --------------------------------------------------------------- */

int gdb_spec_parse(const char *spec, struct gdb_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *eq = strchr(spec, '=');
	size_t nl = eq ? (size_t)(eq - spec) : 0;
	if (!eq || nl == 0 || nl >= sizeof(out->name)) {
		snprintf(err, errlen, "%s: bad domain spec (expected NAME=gdb:HOST:PORT or NAME=gdb:unix:PATH)", spec);
		return -EINVAL;
	}
	for (size_t i = 0; i < nl; i++) {
		char c = spec[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.')) {
			snprintf(err, errlen, "%.*s: bad domain name (use letters, digits, '_', '-', '.')", (int)nl, spec);
			return -EINVAL;
		}
	}
	memcpy(out->name, spec, nl);
	const char *name = out->name;
	const char *k = eq + 1;
	if (strncmp(k, "gdb:", 4)) {
		snprintf(err, errlen, "%s: not a gdb domain spec", name);
		return -EINVAL;
	}
	k += 4;
	size_t al = strcspn(k, ",");
	char addr[4400];
	if (al == 0 || al >= sizeof(addr)) {
		snprintf(err, errlen, "%s: missing address after gdb: (HOST:PORT or unix:PATH)", name);
		return -EINVAL;
	}
	memcpy(addr, k, al);
	addr[al] = 0;
	if (!strncmp(addr, "unix:", 5)) {
		out->is_unix = true;
		if (!addr[5] || strlen(addr + 5) >= sizeof(out->host) || strlen(addr + 5) >= 108) {
			snprintf(err, errlen, "%s: bad unix socket path '%s'", name, addr + 5);
			return -EINVAL;
		}
		strcpy(out->host, addr + 5);
	} else {
		char *colon = strrchr(addr, ':');
		if (!colon || colon == addr || !colon[1] || strlen(colon + 1) >= sizeof(out->port)) {
			snprintf(err, errlen, "%s: bad address '%s' (expected HOST:PORT or unix:PATH)", name, addr);
			return -EINVAL;
		}
		*colon = 0;
		char *h = addr;
		size_t hl = strlen(h);
		if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
			h[hl - 1] = 0;
			h++;
		}
		char *pe;
		unsigned long port = strtoul(colon + 1, &pe, 10);
		if (*pe || port == 0 || port > 65535 || !*h || strlen(h) >= sizeof(out->host)) {
			snprintf(err, errlen, "%s: bad address '%s:%s'", name, addr, colon + 1);
			return -EINVAL;
		}
		strcpy(out->host, h);
		snprintf(out->port, sizeof(out->port), "%lu", port);
	}
	const char *o = k + al;
	while (*o == ',') {
		o++;
		size_t ol = strcspn(o, ",");
		char opt[4200];
		if (ol == 0 || ol >= sizeof(opt)) {
			snprintf(err, errlen, "%s: empty or too long option", name);
			return -EINVAL;
		}
		memcpy(opt, o, ol);
		opt[ol] = 0;
		o += ol;
		char *val = strchr(opt, '=');
		if (!val || !val[1]) {
			snprintf(err, errlen, "%s: option '%s' needs a value", name, opt);
			return -EINVAL;
		}
		*val++ = 0;
		enum gdb_symsrc ss = GDB_SYM_NONE;
		if (!strcmp(opt, "kallsyms"))
			ss = GDB_SYM_KALLSYMS;
		else if (!strcmp(opt, "sysmap"))
			ss = GDB_SYM_SYSMAP;
		else if (!strcmp(opt, "vmlinux"))
			ss = GDB_SYM_VMLINUX;
		if (ss) {
			if (out->symsrc) {
				snprintf(err, errlen, "%s: give only one of kallsyms=, sysmap=, vmlinux=", name);
				return -EINVAL;
			}
			if (strlen(val) >= sizeof(out->symfile)) {
				snprintf(err, errlen, "%s: symbol file path too long", name);
				return -EINVAL;
			}
			out->symsrc = ss;
			strcpy(out->symfile, val);
		} else if (!strcmp(opt, "kaslr")) {
			out->kaslr_given = true;
			if (!strcmp(val, "auto")) {
				out->kaslr_auto = true;
			} else {
				char *e;
				errno = 0;
				out->kaslr = strtoull(val, &e, 0);
				if (*e || errno || val[0] == '-') {
					snprintf(err, errlen, "%s: bad kaslr= value '%s' (auto or an offset like 0x1e000000)", name, val);
					return -EINVAL;
				}
			}
		} else if (!strcmp(opt, "pipeline")) {
			if (strcmp(val, "0") && strcmp(val, "1")) {
				snprintf(err, errlen, "%s: pipeline= must be 0 or 1", name);
				return -EINVAL;
			}
			out->no_pipeline = val[0] == '0';
		} else if (!strcmp(opt, "regs")) {
			if (strcmp(val, "g") && strcmp(val, "p")) {
				snprintf(err, errlen, "%s: regs= must be g or p", name);
				return -EINVAL;
			}
			out->regs_p = val[0] == 'p';
		} else {
			snprintf(err, errlen, "%s: unknown option '%s' (kallsyms=, sysmap=, vmlinux=, kaslr=, regs=, pipeline=)", name, opt);
			return -EINVAL;
		}
	}
	if (!out->kaslr_given)
		out->kaslr_auto = out->symsrc == GDB_SYM_SYSMAP || out->symsrc == GDB_SYM_VMLINUX;
	if (out->kaslr_auto && !out->symsrc) {
		snprintf(err, errlen, "%s: kaslr=auto needs a symbol source (kallsyms=, sysmap= or vmlinux=)", name);
		return -EINVAL;
	}
	return 0;
}

static bool addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return true;
		/* ::ffff:127.x.y.z */
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

int gdb_check_loopback(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int r = getaddrinfo(host, port, &hints, &res);
	if (r) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(r));
		return -ENOENT;
	}
	int ret = 0;
	for (ai = res; ai; ai = ai->ai_next) {
		if (!addr_is_loopback(ai->ai_addr)) {
			snprintf(err, errlen, "%s is not a loopback address; a gdb stub gives full control "
				 "of the VM, use a unix socket or 127.0.0.1, or pass --allow-remote-stub", host);
			ret = -EPERM;
			break;
		}
	}
	freeaddrinfo(res);
	return ret;
}

/* ---- Helpers ---------------------------------------------------------- */

/* A symbol file the user named: bounded, and never a FIFO or device. */
static int read_whole_file(const char *path, uint8_t **data, size_t *len)
{
	char *buf;
	int r = file_read_all(path, GDB_MAX_SYMFILE, &buf, len);
	*data = (uint8_t *)buf;
	return r;
}

static const char *symsrc_key(enum gdb_symsrc s)
{
	switch (s) {
	case GDB_SYM_KALLSYMS: return "kallsyms";
	case GDB_SYM_SYSMAP: return "sysmap";
	case GDB_SYM_VMLINUX: return "vmlinux";
	default: return "";
	}
}

/* Describe an errno from the protocol layer. */
static const char *rsp_strerror(int e)
{
	switch (e) {
	case -ETIMEDOUT: return "stub did not answer within 1 s";
	case -EPIPE: return "stub closed the connection";
	case -EBADMSG: return "packet with a bad checksum";
	case -EMSGSIZE: return "overlong packet";
	case -EPROTO: return "malformed packet";
	default: return strerror(-e);
	}
}

/* ---- Target description -------------------------------------------------- */

struct xfer_ctx { struct rsp_conn *c; };

static int xfer_read(void *vctx, const char *annex, char **data, size_t *len)
{
	struct xfer_ctx *x = vctx;
	size_t n = 0, cap = 4096;
	char *buf = xmalloc(cap);
	char req[256];

	for (;;) {
		snprintf(req, sizeof(req), "qXfer:features:read:%s:%zx,%x", annex, n, 0xffb);
		int r = rsp_request(x->c, req);
		if (r < 0) {
			free(buf);
			return r;
		}
		const char *p = x->c->pkt;
		size_t pl = x->c->pktlen;
		if (pl < 1 || (p[0] != 'm' && p[0] != 'l')) {
			free(buf);
			return -ENOENT;   /* "E00" or empty: annex not there */
		}
		if (n + pl - 1 > RSP_MAX_XML) {
			free(buf);
			return -EMSGSIZE;
		}
		if (n + pl > cap) {
			cap = (n + pl) * 2;
			buf = xrealloc(buf, cap);
		}
		memcpy(buf + n, p + 1, pl - 1);
		n += pl - 1;
		if (p[0] == 'l')
			break;
		if (pl == 1) {
			free(buf);
			return -EPROTO;   /* 'm' with no data would loop forever */
		}
	}
	*data = buf;
	*len = n;
	return 0;
}

static int find_reg(struct gdb_source *s, const char *name, struct reginfo *ri)
{
	const struct rsp_reg *r = rsp_tdesc_find(&s->td, name);
	memset(ri, 0, sizeof(*ri));
	if (!r)
		return -ENOENT;
	ri->present = true;
	ri->offset = r->offset;
	ri->size = r->bitsize / 8;
	ri->regnum = r->regnum;
	if (ri->size > 8)
		return -EPROTO;
	return 0;
}

/* ---- Register reads ---------------------------------------------------- */

/* Read one register value from the current reply (g or p). */
static int reg_from_g(const struct rsp_conn *c, const struct reginfo *ri, uint64_t *v)
{
	size_t off = ri->offset * 2;
	if (c->pktlen < off + ri->size * 2u)
		return -EPROTO;
	return rsp_hex_le(c->pkt + off, c->pktlen - off, ri->size, v);
}

static int reg_from_p(const struct rsp_conn *c, const struct reginfo *ri, uint64_t *v)
{
	if (c->pktlen != ri->size * 2u)
		return -EPROTO;
	return rsp_hex_le(c->pkt, c->pktlen, ri->size, v);
}

static void batch_add(struct gdb_source *s, size_t *cap, const char *payload)
{
	char f[128];
	int n = rsp_frame(payload, strlen(payload), f, sizeof(f));
	if (n < 0)
		abort();   /* our own short packets always fit */
	xgrow((void **)&s->batch, cap, s->batchlen + n + 1, 1);
	memcpy(s->batch + s->batchlen, f, n);
	s->batchlen += n;
	s->replies++;
}

/* Requests sent at every tick, pipelined in one write: for each vCPU
 * Hg<tid> then g (or p for rip, cs, cr3 with regs=p). */
static void build_batch(struct gdb_source *s)
{
	size_t cap = 0;
	char req[64];

	/* Byte 0 is room for the 0x03 of a one-round-trip tick. */
	xgrow((void **)&s->batch, &cap, 1, 1);
	s->batch[0] = 0x03;
	s->batchlen = 1;
	s->replies = 0;
	for (size_t i = 0; i < s->nvcpu; i++) {
		snprintf(req, sizeof(req), "Hg%s", s->tids[i]);
		batch_add(s, &cap, req);
		if (s->use_p) {
			snprintf(req, sizeof(req), "p%x", s->rip.regnum);
			batch_add(s, &cap, req);
			snprintf(req, sizeof(req), "p%x", s->cs.regnum);
			batch_add(s, &cap, req);
		} else {
			batch_add(s, &cap, "g");
		}
		if (s->cr3.present && (s->use_p || !s->cr3.in_g)) {
			snprintf(req, sizeof(req), "p%x", s->cr3.regnum);
			batch_add(s, &cap, req);
		}
	}
}

/* Detach with "D;PID" when the stub names threads "pPID.TID": once any
 * client negotiated multiprocess, QEMU answers a bare "D" with E22 and
 * leaves the VM paused. */
static void set_detach(struct gdb_source *s, const char *tid)
{
	size_t n = 0;
	snprintf(s->detach, sizeof(s->detach), "D");
	if (tid[0] != 'p')
		return;
	while (n < 16 && ((tid[1 + n] >= '0' && tid[1 + n] <= '9') ||
			  (tid[1 + n] >= 'a' && tid[1 + n] <= 'f') || (tid[1 + n] >= 'A' && tid[1 + n] <= 'F')))
		n++;
	if (n > 0 && n < 16 && tid[1 + n] == '.')
		snprintf(s->detach, sizeof(s->detach), "D;%.*s", (int)n, tid + 1);
}

/* Write framed packets (0x03, requests, `c`). A write that fails midway
 * leaves a partial packet in the stub's input: what the VM does next is
 * then unknown. */
static int write_pkts(struct gdb_source *s, const void *buf, size_t len)
{
	int r = rsp_write(s->conn, buf, len);
	if (r < 0 && r != -EPIPE)
		s->unsure = true;
	return r;
}

/* Receive one reply the stub owes. */
static int recv_owed(struct gdb_source *s)
{
	int r = rsp_recv(s->conn, 0);
	if (r == 0 && s->owed)
		s->owed--;
	return r;
}

/* Read all vCPUs' registers (the VM must be stopped). On success fills
 * out[0..nvcpu). Leaves every reply acked. */
static int read_vcpus(struct gdb_source *s, struct dp_sample *out, uint64_t t, bool send)
{
	struct rsp_conn *c = s->conn;
	int r = send ? write_pkts(s, s->batch + 1, s->batchlen - 1) : 0;
	if (r < 0)
		return r;
	if (send)
		s->owed = s->replies;
	int err = 0;
	for (size_t i = 0; i < s->nvcpu; i++) {
		uint64_t rip = 0, cs = 0, cr3 = 0;
		/* Hg */
		if ((r = recv_owed(s)) < 0)
			return r;
		if (strcmp(c->pkt, "OK") && !err)
			err = -EPROTO;
		if (s->use_p) {
			if ((r = recv_owed(s)) < 0)
				return r;
			if (!err)
				err = reg_from_p(c, &s->rip, &rip);
			if ((r = recv_owed(s)) < 0)
				return r;
			if (!err)
				err = reg_from_p(c, &s->cs, &cs);
		} else {
			if ((r = recv_owed(s)) < 0)
				return r;
			if (!err)
				err = reg_from_g(c, &s->rip, &rip);
			if (!err)
				err = reg_from_g(c, &s->cs, &cs);
			if (!err && s->cr3.present && s->cr3.in_g)
				err = reg_from_g(c, &s->cr3, &cr3);
		}
		if (s->cr3.present && (s->use_p || !s->cr3.in_g)) {
			if ((r = recv_owed(s)) < 0)
				return r;
			if (!err)
				err = reg_from_p(c, &s->cr3, &cr3);
		}
		struct dp_sample *sm = &out[i];
		memset(sm, 0, sizeof(*sm));
		sm->time = t;
		sm->cpu = (uint32_t)i;
		sm->ip = rip;
		sm->mode = (cs & 3) == 0 ? DP_MODE_KERNEL : DP_MODE_USER;
		sm->has_asid = s->cr3.present;
		sm->asid = cr3 & ~0xfffull;   /* low 12 bits are the PCID */
		sm->period = 1000000000ull / s->hz;
	}
	return err;
}

/* Send 0x03 and wait for the VM to report it stopped. With `batch`, the
 * register requests follow the 0x03 in the same write (see
 * docs/passive.md, "one round trip"): their replies come after the stop
 * reply and read_vcpus(send = false) collects them. */
static int interrupt_vm(struct gdb_source *s, bool batch)
{
	struct rsp_conn *c = s->conn;
	int r;

	/* Something from the stub while the VM runs: a stop reply means it
	 * was stopped by someone else (the monitor's `stop` makes QEMU send
	 * one); leave it stopped. Console output is skipped. EOF ends. */
	while (rsp_pending(c)) {
		if ((r = rsp_recv(c, 0)) < 0)
			return r;
		if ((r = rsp_ack(c, 1)) < 0)
			return r;
		int k = rsp_parse_stop(c->pkt, c->pktlen, NULL, 0);
		if (k == RSP_STOP_EXITED)
			return -ECHILD;
		if (k != RSP_STOP_OUTPUT)
			return -EALREADY;
	}
	if (batch) {
		s->batch[0] = 0x03;
		r = write_pkts(s, s->batch, s->batchlen);
	} else {
		r = write_pkts(s, "\x03", 1);
	}
	if (r < 0)
		return r;
	s->stop_owed = true;
	s->owed = batch ? s->replies : 0;
	for (int i = 0; i < 64; i++) {
		if ((r = rsp_recv(c, 0)) < 0)
			return r;
		/* With the batch, the ack goes out with the `c` (resume_vm
		 * adds one); the VM is stopped either way. */
		if (!batch && (r = rsp_ack(c, 1)) < 0)
			return r;
		/* The reply to our Hg instead of a stop reply: QEMU ignores
		 * 0x03 when the VM is not running, i.e. someone else (the
		 * monitor's `stop`) paused it. Leave it paused. */
		if (batch && !strcmp(c->pkt, "OK"))
			return -EALREADY;
		char tid[RSP_MAX_TID];
		int k = rsp_parse_stop(c->pkt, c->pktlen, tid, sizeof(tid));
		if (k == RSP_STOP_OUTPUT) {
			if (batch && (r = rsp_ack(c, 1)) < 0)
				return r;
			continue;   /* console output from the stub */
		}
		if (k == RSP_STOP_EXITED)
			return -ECHILD;
		if (k < 0)
			return k;
		s->stop_owed = false;
		return 0;
	}
	return -EPROTO;
}

/* Resume: the acks we still owe go in the same write, before `c`. */
static int resume_vm(struct gdb_source *s, unsigned acks)
{
	char buf[RSP_MAX_THREADS * 4 + 16];
	size_t n = 0;

	if (!s->conn->noack) {
		if (acks > sizeof(buf) - 8)
			acks = sizeof(buf) - 8;
		memset(buf, '+', acks);
		n = acks;
	}
	memcpy(buf + n, "$c#63", 5);
	n += 5;
	return write_pkts(s, buf, n);
}

/* ---- Queue ---------------------------------------------------------------- */

/* Queue n samples (a full queue drops them as lost) and `lost` missed
 * ones; returns how many were queued, so `samples` counts exactly what
 * drain will write. */
static size_t queue_push(struct gdb_source *s, const struct dp_sample *v, size_t n, uint64_t lost)
{
	size_t queued = 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < n; i++) {
		if (s->qcount == s->qcap) {
			lost++;
			continue;
		}
		s->q[(s->qhead + s->qcount) % s->qcap] = v[i];
		s->qcount++;
		queued++;
	}
	s->lost_pending += lost;
	atomic_fetch_add(&s->lost_total, lost);
	pthread_mutex_unlock(&s->lock);
	return queued;
}

/* ---- Sampler thread ------------------------------------------------------- */

/* Set the end message once: "NAME: CAUSE after N samples[TAIL]". */
static void end_with(struct gdb_source *s, const char *cause, const char *tail)
{
	if (atomic_load(&s->ended))
		return;
	snprintf(s->message, sizeof(s->message), "%s: %s after %" PRIu64 " samples%s",
		 s->spec.name, cause, (uint64_t)atomic_load(&s->samples), tail ? tail : "");
	atomic_store(&s->ended, true);
}

static const char *end_cause(int e)
{
	if (e == -ECHILD)
		return "VM exited";
	if (e == -EALREADY)
		return "VM was paused outside domprof (left paused)";
	return rsp_strerror(e);
}

/* True once stop was asked for more than GDB_STOP_GRACE_MS ago. */
static bool past_grace(struct gdb_source *s)
{
	pthread_mutex_lock(&s->lock);
	bool past = s->stop_req && mono_ns() >= s->stop_req_ns + GDB_STOP_GRACE_MS * 1000000ull;
	pthread_mutex_unlock(&s->lock);
	return past;
}

/* Receive a packet from a stub that may be stalled (QEMU stopped, host
 * overloaded): wait in short steps while the recording runs, and until
 * GDB_STOP_GRACE_MS after it is asked to stop; then -ETIMEDOUT. */
static int recv_patient(struct gdb_source *s)
{
	for (;;) {
		int r = rsp_recv(s->conn, 100);
		if (r != -ETIMEDOUT || past_grace(s))
			return r;
	}
}

/* Detach, which makes QEMU resume the VM, and wait (GDB_TIMEOUT_MS in
 * all) for its "OK" (QEMU resumes before it answers). Only while the VM
 * is stopped: a byte sent to a running VM stops it instead. Returns 0
 * when confirmed. */
static int detach_vm(struct gdb_source *s)
{
	struct rsp_conn *c = s->conn;
	uint64_t end = mono_ns() + GDB_TIMEOUT_MS * 1000000ull;
	int r = rsp_send(c, s->detach);
	for (int i = 0; r == 0 && i < 64; i++) {
		uint64_t t = mono_ns();
		if (t >= end) {
			r = -ETIMEDOUT;
			break;
		}
		if ((r = rsp_recv(c, (int)((end - t) / 1000000ull) + 1)) < 0)
			break;
		if (!strcmp(c->pkt, "OK"))
			return 0;
		if (rsp_parse_stop(c->pkt, c->pktlen, NULL, 0) != RSP_STOP_OUTPUT)
			return -EPROTO;   /* "E22": not detached, the VM stays paused */
		r = rsp_ack(c, 1);
	}
	return r < 0 ? r : -EPROTO;
}

/*
 * The stub stopped answering while it owed us the stop reply to our 0x03
 * and/or replies to our requests (QEMU stopped with SIGSTOP, or starved).
 * Those bytes are already in its input: when it catches up, our 0x03
 * stops the VM (or the VM was already held by us), and nothing resumes
 * it, since QEMU keeps a VM paused when its debugger disconnects. So wait
 * for the stub (while the recording runs, and GDB_STOP_GRACE_MS after it
 * is asked to stop), read what it owes, and detach.
 *
 * Returns 0 once the VM was resumed; -ETIMEDOUT if the stub did not catch
 * up in time; -EALREADY if the VM turned out to be paused by someone else
 * (left so); -ECHILD or -EPIPE if the VM is gone; another error if what
 * the VM does is unknown.
 */
static int recover_vm(struct gdb_source *s)
{
	struct rsp_conn *c = s->conn;
	bool outside = false;

	for (unsigned i = 0; (s->stop_owed || s->owed) && i < s->replies + 64; i++) {
		int r = recv_patient(s);
		if (r < 0)
			return r;
		/* The VM is stopped now (by our 0x03), so acks cannot stop it. */
		if ((r = rsp_ack(c, 1)) < 0)
			return r;
		int k = rsp_parse_stop(c->pkt, c->pktlen, NULL, 0);
		if (k == RSP_STOP_OUTPUT)
			continue;
		if (s->stop_owed) {
			s->stop_owed = false;
			if (k == RSP_STOP_EXITED)
				return -ECHILD;
			if (k == RSP_STOP_SIGNAL)
				continue;
			if (!s->owed)
				return -EPROTO;
			/* The reply to the Hg behind the 0x03 and no stop reply:
			 * QEMU ignores 0x03 when the VM is not running, so
			 * someone else had paused it. */
			outside = true;
		}
		s->owed--;
	}
	if (s->stop_owed || s->owed)
		return -EPROTO;
	return outside ? -EALREADY : detach_vm(s);
}

/* The sampler ended on error e with the VM `held` (stopped by us, every
 * reply read) or not. Leave the VM running if we can; when we cannot
 * know that it runs, say so in the end message. */
static void end_on_error(struct gdb_source *s, int e, bool held)
{
	const char *cause = end_cause(e), *tail = NULL;

	if (e == -ECHILD || e == -EALREADY || e == -EPIPE) {
		/* Gone, or paused by someone else: send nothing. */
	} else if (s->unsure) {
		tail = MAY_BE_PAUSED;
	} else if (s->stop_owed || s->owed) {
		int r = recover_vm(s);
		tail = r == 0 ? (e == -ETIMEDOUT ? "; the VM was resumed when the stub answered again" :
				 "; the VM was resumed") :
		       r == -ECHILD ? "; then the VM exited" :
		       r == -EPIPE ? "; then the stub closed the connection" :
		       r == -EALREADY ? "; the VM was paused outside domprof (left paused)" : MAY_BE_PAUSED;
	} else if (held && detach_vm(s) < 0) {
		tail = MAY_BE_PAUSED;
	}
	/* Otherwise the VM runs (our `c` was its last byte): send nothing,
	 * any byte would stop it again. */
	end_with(s, cause, tail);
}

/* Asked to stop: the VM is running; stop it, then detach (which resumes
 * it). Silent when that worked or the VM is gone. */
static void end_on_stop(struct gdb_source *s)
{
	int r = interrupt_vm(s, false);
	if (r == 0)
		r = detach_vm(s);
	else if (r == -ETIMEDOUT && !s->unsure)
		r = recover_vm(s);
	if (r == 0 || r == -ECHILD || r == -EPIPE)
		return;
	if (r == -EALREADY)
		end_with(s, end_cause(r), NULL);
	else
		end_with(s, r == -ETIMEDOUT ? "stub did not answer when the recording ended" :
			 r == -EPROTO ? "stub refused to detach when the recording ended" :
			 rsp_strerror(r), MAY_BE_PAUSED);
}

static void *sampler_main(void *arg)
{
	struct gdb_source *s = arg;
	uint64_t period = 1000000000ull / s->hz;
	struct dp_sample *v = xcalloc(s->nvcpu, sizeof(*v));
	bool held = true;       /* the VM is stopped by us (since connect) */
	int r = resume_vm(s, 0);
	uint64_t next = mono_ns() + period;

	if (r < 0)
		goto out;
	held = false;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->stop_req) {
			uint64_t n = mono_ns();
			if (n >= next)
				break;
			struct timespec ts = { .tv_sec = next / 1000000000ull, .tv_nsec = next % 1000000000ull };
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		}
		bool stop = s->stop_req;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;

		uint64_t t0 = mono_ns();
		if ((r = interrupt_vm(s, s->pipeline)) < 0)
			goto out;
		held = true;
		uint64_t t = mono_ns();
		atomic_fetch_add(&s->intr_ns, t - t0);
		int rr = read_vcpus(s, v, t, !s->pipeline);
		if (rr < 0 && (rr == -ETIMEDOUT || rr == -EPIPE || rr == -EMSGSIZE || rr == -EBADMSG)) {
			r = rr;
			goto out;
		}
		if ((r = resume_vm(s, s->replies + (s->pipeline ? 1 : 0))) < 0)
			goto out;
		/* Whatever replies are still unread, QEMU handles our `c`
		 * after their requests: the VM runs. */
		held = false;
		s->stop_owed = false;
		s->owed = 0;
		atomic_fetch_add(&s->stop_ns, mono_ns() - t0);
		atomic_fetch_add(&s->ticks, 1);
		if (rr < 0) {
			/* A reply we could not decode: the stub is not speaking
			 * the protocol we negotiated. */
			end_with(s, rr == -ENODATA ? "registers unavailable" : "malformed register reply", NULL);
			goto close;
		}

		/* Late ticks are taken at once, back to back, while the lag is
		 * under CATCH_UP periods: on a busy 2-CPU host the sampler
		 * thread often wakes a millisecond late (QEMU's vCPU threads
		 * hold both CPUs), and dropping those ticks cost a quarter of
		 * the samples at 1000 Hz. Ticks further overdue are skipped
		 * and counted as lost. */
		enum { CATCH_UP = 8 };
		uint64_t now = mono_ns(), lost = 0;
		next += period;
		if (now >= next + CATCH_UP * period) {
			uint64_t missed = (now - next) / period;
			lost = missed * s->nvcpu;
			next += missed * period;
		}
		atomic_fetch_add(&s->samples, queue_push(s, v, s->nvcpu, lost));
	}
	end_on_stop(s);
	goto close;
out:
	end_on_error(s, r, held);
close:
	free(v);
	rsp_close(s->conn);
	return NULL;
}

/* ---- Setup ------------------------------------------------------------- */

struct mem_ctx { struct rsp_conn *c; };

static int mem_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_ctx *m = vctx;
	char req[64];
	snprintf(req, sizeof(req), "m%" PRIx64 ",%zx", addr, len);
	int r = rsp_request(m->c, req);
	if (r < 0)
		return r;
	if (m->c->pktlen != len * 2)
		return -EFAULT;   /* "E14": not mapped */
	return rsp_hex_bytes(m->c->pkt, m->c->pktlen, buf, len) == (int)len ? 0 : -EFAULT;
}

/* Connect and learn the target. Fills err on failure. The VM is left
 * stopped (QEMU stops it when a debugger connects). */
static int setup_target(struct gdb_source *s, char *err, size_t errlen)
{
	const char *name = s->spec.name;
	int fd = s->spec.is_unix ? rsp_connect_unix(s->spec.host, GDB_TIMEOUT_MS)
				 : rsp_connect_tcp(s->spec.host, s->spec.port, GDB_TIMEOUT_MS);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot connect to %s: %s", name, s->address + 4, strerror(-fd));
		return fd;
	}
	struct rsp_conn *c = s->conn;
	rsp_init(c, fd, GDB_TIMEOUT_MS);
	int r = rsp_drain(c, 50);
	if (r == 0)
		r = rsp_request(c, "qSupported:xmlRegisters=i386");
	if (r < 0) {
		snprintf(err, errlen, "%s: %s is not a GDB stub (%s)", name, s->address + 4, rsp_strerror(r));
		return r;
	}
	bool xfer = strstr(c->pkt, "qXfer:features:read+") != NULL;
	if (strstr(c->pkt, "QStartNoAckMode+")) {
		if ((r = rsp_request(c, "QStartNoAckMode")) < 0)
			goto proto;
		if (!strcmp(c->pkt, "OK"))
			c->noack = true;
	}
	if (!xfer) {
		snprintf(err, errlen, "%s: the stub does not describe its registers (no qXfer:features:read)", name);
		return -ENOTSUP;
	}
	if ((r = rsp_request(c, "?")) < 0)
		goto proto;
	char tid0[RSP_MAX_TID];
	r = rsp_parse_stop(c->pkt, c->pktlen, tid0, sizeof(tid0));
	if (r == RSP_STOP_EXITED) {
		snprintf(err, errlen, "%s: the VM has exited", name);
		return -ECHILD;
	}
	if (r < 0)
		goto proto;
	set_detach(s, tid0);

	/* Registers. */
	struct xfer_ctx xc = { c };
	char *xml = NULL;
	size_t xl = 0;
	r = xfer_read(&xc, "target.xml", &xml, &xl);
	if (r == 0) {
		r = rsp_tdesc_parse(&s->td, xml, xl, xfer_read, &xc);
		free(xml);
	}
	if (r == 0)
		r = rsp_tdesc_finish(&s->td);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read the target description: %s", name,
			 r == -ENOENT ? "no registers described" : rsp_strerror(r));
		return r;
	}
	if (strcmp(s->td.arch, "i386:x86-64")) {
		snprintf(err, errlen, "%s: not x86_64 (the stub says architecture '%s')", name,
			 s->td.arch[0] ? s->td.arch : "unknown");
		return -ENOTSUP;
	}
	if (find_reg(s, "rip", &s->rip) < 0 || find_reg(s, "cs", &s->cs) < 0) {
		snprintf(err, errlen, "%s: the target description has no rip/cs registers", name);
		return -ENOTSUP;
	}
	find_reg(s, "cr3", &s->cr3);

	/* How long is `g` really? Registers past its end need `p`. */
	if ((r = rsp_request(c, "g")) < 0)
		goto proto;
	size_t gbytes = c->pktlen / 2;
	if (s->rip.offset + s->rip.size > gbytes || s->cs.offset + s->cs.size > gbytes)
		s->use_p = true;   /* a stub with a short g: ask per register */
	s->rip.in_g = s->cs.in_g = true;
	s->cr3.in_g = s->cr3.present && s->cr3.offset + s->cr3.size <= gbytes;

	/* vCPUs. */
	s->tids = xcalloc(RSP_MAX_THREADS, RSP_MAX_TID);
	s->nvcpu = 0;
	const char *q = "qfThreadInfo";
	for (int i = 0; i <= (int)RSP_MAX_THREADS; i++) {
		if ((r = rsp_request(c, q)) < 0)
			goto proto;
		r = rsp_parse_threads(c->pkt, c->pktlen, s->tids, &s->nvcpu, RSP_MAX_THREADS);
		if (r < 0) {
			if (s->nvcpu == 0 && c->pktlen == 0)
				break;   /* no thread list: one vCPU */
			goto proto;
		}
		if (r == 0)
			break;
		q = "qsThreadInfo";
	}
	if (s->nvcpu == 0) {
		s->nvcpu = 1;
		snprintf(s->tids[0], RSP_MAX_TID, "%s", tid0[0] ? tid0 : "0");
	}
	set_detach(s, s->tids[0]);
	build_batch(s);
	return 0;
proto:
	snprintf(err, errlen, "%s: %s while talking to %s", name, rsp_strerror(r), s->address + 4);
	return r < 0 ? r : -EPROTO;
}

/* Auto KASLR: needs the VM stopped with a vCPU in kernel mode, because
 * with page-table isolation a user-mode vCPU does not map the kernel. */
static int find_kaslr(struct gdb_source *s, const struct kaslr_image *img, char *how, size_t howlen)
{
	struct dp_sample *v = xcalloc(s->nvcpu, sizeof(*v));
	uint64_t rips[RSP_MAX_THREADS];
	size_t nr = 0;
	int r = 0, kcpu = -1;

	for (int tries = 0; tries < 50; tries++) {
		if ((r = read_vcpus(s, v, 0, true)) < 0)
			break;
		if ((r = rsp_ack(s->conn, s->replies)) < 0)
			break;
		for (size_t i = 0; i < s->nvcpu; i++)
			if (v[i].mode == DP_MODE_KERNEL) {
				if (kcpu < 0)
					kcpu = (int)i;
				rips[nr++] = v[i].ip;
			}
		if (kcpu >= 0)
			break;
		/* All in user mode: let it run a little and look again. */
		if ((r = resume_vm(s, 0)) < 0)
			break;
		usleep(10000);
		if ((r = interrupt_vm(s, false)) < 0)
			break;
	}
	free(v);
	if (r < 0)
		return r;
	if (kcpu < 0)
		return -EAGAIN;
	char req[64];
	snprintf(req, sizeof(req), "Hg%s", s->tids[kcpu]);
	if ((r = rsp_request(s->conn, req)) < 0)
		return r;
	struct mem_ctx mc = { s->conn };
	uint64_t off = 0;
	r = kaslr_find(img, mem_read, &mc, rips, nr, &off, how, howlen);
	if (r == 0)
		s->kaslr = off;
	return r;
}

static int load_symbols(struct gdb_source *s, struct kaslr_image *img, char *err, size_t errlen)
{
	const char *name = s->spec.name;
	int r;

	/* The file itself, not its contents: say why it cannot be read
	 * (the parsers' -ENOENT means "no _text symbol"). */
	if (access(s->spec.symfile, R_OK) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read %s=%s: %s", name, symsrc_key(s->spec.symsrc),
			 s->spec.symfile, strerror(-r));
		return r;
	}
	if (s->spec.symsrc == GDB_SYM_VMLINUX) {
		r = kaslr_image_from_vmlinux(s->spec.symfile, img);
	} else {
		uint8_t *d;
		size_t l;
		r = read_whole_file(s->spec.symfile, &d, &l);
		if (r == 0) {
			r = kaslr_image_from_symtext((const char *)d, l, img);
			free(d);
			/* A symbol table without _text still names functions;
			 * only auto KASLR needs it. */
			if (r == -ENOENT && !s->spec.kaslr_auto)
				r = 0;
		}
	}
	if (r < 0) {
		const char *why = r == -ENOENT ? "no _text symbol" :
				  r == -EINVAL ? "no symbol lines" :
				  r == -ENOEXEC ? "not an ELF file" : file_strerror(r);
		snprintf(err, errlen, "%s: cannot use %s=%s: %s", name, symsrc_key(s->spec.symsrc),
			 s->spec.symfile, why);
	}
	return r;
}

struct gdb_source *gdb_source_start(const char *spec, uint32_t domain_id,
				    const struct domain_source_opts *o,
				    char *err, size_t errlen)
{
	struct gdb_source *s = xcalloc(1, sizeof(*s));
	struct kaslr_image img;
	int r;

	if (gdb_spec_parse(spec, &s->spec, err, errlen) < 0)
		goto fail;
	s->domain_id = domain_id;
	s->hz = o && o->hz ? o->hz : 1000;
	if (s->hz > 1000000)
		s->hz = 1000000;
	s->use_p = s->spec.regs_p;
	s->pipeline = !s->spec.no_pipeline;
	s->kaslr = s->spec.kaslr;
	snprintf(s->detach, sizeof(s->detach), "D");
	if (s->spec.is_unix)
		snprintf(s->address, sizeof(s->address), "gdb:unix:%s", s->spec.host);
	else if (strchr(s->spec.host, ':'))
		snprintf(s->address, sizeof(s->address), "gdb:[%s]:%s", s->spec.host, s->spec.port);
	else
		snprintf(s->address, sizeof(s->address), "gdb:%s:%s", s->spec.host, s->spec.port);
	if (s->spec.symsrc)
		snprintf(s->symsrc, sizeof(s->symsrc), "%s=%s", symsrc_key(s->spec.symsrc), s->spec.symfile);

	if (!s->spec.is_unix && !(o && o->allow_remote)) {
		char why[400];
		if (gdb_check_loopback(s->spec.host, s->spec.port, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: %s", s->spec.name, why);
			goto fail;
		}
	}
	if (s->spec.symsrc && load_symbols(s, &img, err, errlen) < 0)
		goto fail;

	s->conn = xmalloc(sizeof(*s->conn));
	s->conn->fd = -1;
	if (setup_target(s, err, errlen) < 0)
		goto fail;

	char how[160] = "";
	if (s->spec.kaslr_auto) {
		r = find_kaslr(s, &img, how, sizeof(how));
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot find the guest's KASLR offset (%s); give kaslr=OFFSET",
				 s->spec.name,
				 r == -EAGAIN ? "no vCPU was in kernel mode" :
				 r == -ENOENT ? "no 2 MiB step of the kernel area matches the symbol file" :
				 r == -EPROTO ? "the vCPUs' kernel rips contradict the match" : rsp_strerror(r));
			goto fail;
		}
	}
	const char *kwhy = s->spec.kaslr_auto ? how :
			   s->spec.kaslr_given ? "given" :
			   s->spec.symsrc == GDB_SYM_KALLSYMS ? "kallsyms from the running kernel" : "none";
	snprintf(s->info, sizeof(s->info), "%s: %zu vCPU%s at %s, registers by %s%s; KASLR offset 0x%" PRIx64 " (%s%s)",
		 s->spec.name, s->nvcpu, s->nvcpu == 1 ? "" : "s", s->address + 4,
		 s->use_p ? "p" : "g", s->conn->noack ? ", no-ack" : "", s->kaslr,
		 s->spec.kaslr_auto ? "auto, from " : "", kwhy);

	size_t cap = (size_t)s->hz * s->nvcpu * 2;
	s->qcap = cap < 4096 ? 4096 : cap > (1u << 20) ? (1u << 20) : cap;
	s->q = xcalloc(s->qcap, sizeof(*s->q));
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((r = pthread_create(&s->thread, NULL, sampler_main, s)) != 0) {
		snprintf(err, errlen, "%s: cannot start the sampler thread: %s", s->spec.name, strerror(r));
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		goto fail;
	}
	s->thread_started = true;
	return s;
fail:
	if (s->conn) {
		/* Leave the VM running as we found it. */
		if (s->conn->fd >= 0)
			(void)detach_vm(s);
		rsp_close(s->conn);
		free(s->conn);
	}
	rsp_tdesc_release(&s->td);
	free(s->tids);
	free(s->batch);
	free(s->q);
	free(s);
	return NULL;
}

/* ---- Output ------------------------------------------------------------- */

int gdb_source_write_meta(struct gdb_source *s, struct dp_writer *w)
{
	struct dp_domain d = {
		.id = s->domain_id,
		.kind = DP_DOMAIN_PASSIVE,
		.vcpus = (uint32_t)s->nvcpu,
		.kaslr_offset = s->kaslr,
		.name = s->spec.name,
		.address = s->address,
		.symsrc = s->symsrc,
	};
	int r = dp_write_domain(w, &d);
	if (r < 0 || !s->spec.symsrc)
		return r;
	uint8_t *data;
	size_t len;
	r = read_whole_file(s->spec.symfile, &data, &len);
	if (r < 0)
		return r;
	struct dp_symtab st = {
		.kind = s->spec.symsrc == GDB_SYM_KALLSYMS ? DP_SYMTAB_KALLSYMS :
			s->spec.symsrc == GDB_SYM_SYSMAP ? DP_SYMTAB_SYSMAP : DP_SYMTAB_ELF,
		.name = s->spec.symsrc == GDB_SYM_KALLSYMS ? "kallsyms" :
			s->spec.symsrc == GDB_SYM_SYSMAP ? "System.map" : "vmlinux",
		.data = data,
		.size = len,
	};
	r = dp_write_symtab(w, s->domain_id, &st);
	free(data);
	return r;
}

int gdb_source_drain(struct gdb_source *s, struct dp_writer *w)
{
	struct dp_sample buf[512];
	int written = 0;

	for (;;) {
		size_t n = 0;
		uint64_t lost = 0;
		pthread_mutex_lock(&s->lock);
		while (n < 512 && s->qcount) {
			buf[n++] = s->q[s->qhead];
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qcount--;
		}
		lost = s->lost_pending;
		s->lost_pending = 0;
		pthread_mutex_unlock(&s->lock);
		for (size_t i = 0; i < n; i++) {
			int r = dp_write_sample(w, s->domain_id, &buf[i]);
			if (r < 0)
				return r;
			written++;
		}
		if (lost) {
			struct dp_lost l = { .count = lost, .source = DP_LOST_DOMAIN, .where = s->domain_id };
			int r = dp_write_lost(w, &l);
			if (r < 0)
				return r;
			written++;
		}
		if (n < 512)
			break;
	}
	return written;
}

bool gdb_source_ended(const struct gdb_source *s)
{
	return atomic_load(&s->ended);
}

const char *gdb_source_message(const struct gdb_source *s)
{
	return atomic_load(&s->ended) ? s->message : NULL;
}

const char *gdb_source_info(const struct gdb_source *s)
{
	return s->info[0] ? s->info : NULL;
}

const char *gdb_source_name(const struct gdb_source *s)
{
	return s->spec.name;
}

uint64_t gdb_source_samples(const struct gdb_source *s)
{
	return atomic_load(&s->samples);
}

void gdb_source_get_stats(const struct gdb_source *s, struct gdb_source_stats *st)
{
	st->samples = atomic_load(&s->samples);
	st->ticks = atomic_load(&s->ticks);
	st->lost = atomic_load(&s->lost_total);
	st->stop_ns = atomic_load(&s->stop_ns);
	st->intr_ns = atomic_load(&s->intr_ns);
	st->vcpus = s->nvcpu;
	st->kaslr_offset = s->kaslr;
}

void gdb_source_stop(struct gdb_source *s)
{
	if (!s || s->stopped)
		return;
	s->stopped = true;
	pthread_mutex_lock(&s->lock);
	s->stop_req = true;
	s->stop_req_ns = mono_ns();
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->thread_started)
		pthread_join(s->thread, NULL);
	s->thread_started = false;
}

void gdb_source_free(struct gdb_source *s)
{
	if (!s)
		return;
	gdb_source_stop(s);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	rsp_tdesc_release(&s->td);
	free(s->conn);
	free(s->tids);
	free(s->batch);
	free(s->q);
	free(s);
}
