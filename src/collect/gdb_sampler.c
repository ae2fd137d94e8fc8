// SPDX-License-Identifier: MIT
/*
 * Passive domains, the sampler: register reads (pipelined with the 0x03
 * that stops the VM when the stub allows), interrupting and resuming the
 * VM, the bounded sample queue, and the sampler thread with its stall,
 * pause, recover and detach handling. Part of the gdb source
 * (gdb_internal.h); the queue is emptied by gdb_source_drain().
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
#include "collect/gdb_internal.h"
#include "collect/kaslr.h"
#include "guest/tasks.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

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

int gdb_read_reg(struct gdb_source *s, const struct reginfo *ri, uint64_t *v)
{
	if (!ri->present)
		return -ENOENT;
	char req[32];
	bool g = ri->in_g && !s->use_p;
	if (g)
		snprintf(req, sizeof(req), "g");
	else
		snprintf(req, sizeof(req), "p%x", ri->regnum);
	int r = rsp_request(s->conn, req);
	if (r < 0)
		return r;
	return g ? reg_from_g(s->conn, ri, v) : reg_from_p(s->conn, ri, v);
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
 * Hg<tid> then g (or p for rip, cs, cr3 with regs=p), then, when the
 * guest's current task is read and the vCPU's per-CPU base is known,
 * m<base+cur_off>,8 (the task pointer), then with -g the stack window
 * read ahead for it (gdb_chains_guess). */
void gdb_build_batch(struct gdb_source *s)
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
		if (s->batch_m)
			s->batch_m[i] = false;
		if (s->cur_off && s->pcpu_base && s->pcpu_base[i]) {
			snprintf(req, sizeof(req), "m%" PRIx64 ",8", s->pcpu_base[i] + s->cur_off);
			batch_add(s, &cap, req);
			s->batch_m[i] = true;
		}
		uint64_t at;
		size_t len;
		if (s->batch_pre)
			s->batch_pre[i] = gdb_chains_guess(s, i, &at, &len);
		if (s->batch_pre && s->batch_pre[i]) {
			snprintf(req, sizeof(req), "m%" PRIx64 ",%zx", at, len);
			batch_add(s, &cap, req);
		}
	}
	s->rebuild = false;
}

/* The per-CPU base of vCPU i from its g reply: gs_base in kernel mode,
 * k_gs_base in user mode; the one that is a kernel address (that also
 * covers a vCPU stopped between kernel entry and swapgs). */
static void learn_pcpu_base(struct gdb_source *s, const struct rsp_conn *c, size_t i)
{
	uint64_t gs = 0, kgs = 0, base = 0;
	if (!s->cur_off || !s->pcpu_base || s->use_p || !s->gs_base.in_g || !s->k_gs_base.in_g)
		return;
	if (reg_from_g(c, &s->gs_base, &gs) < 0 || reg_from_g(c, &s->k_gs_base, &kgs) < 0)
		return;
	base = guest_kptr(gs) ? gs : guest_kptr(kgs) ? kgs : 0;
	if (base && base != s->pcpu_base[i]) {
		s->pcpu_base[i] = base;
		s->rebuild = true;
	}
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
int gdb_read_vcpus(struct gdb_source *s, struct dp_sample *out, uint64_t t, bool send)
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
			if (!err)
				learn_pcpu_base(s, c, i);
			if (!err)
				gdb_chains_regs(s, c, i);
		}
		if (s->cr3.present && (s->use_p || !s->cr3.in_g)) {
			if ((r = recv_owed(s)) < 0)
				return r;
			if (!err)
				err = reg_from_p(c, &s->cr3, &cr3);
		}
		if (s->batch_m && s->batch_m[i]) {
			uint64_t task = 0;
			if ((r = recv_owed(s)) < 0)
				return r;
			/* an error reply (E14) or junk: no task this tick */
			if (c->pktlen != 16 || rsp_hex_le(c->pkt, 16, 8, &task) < 0)
				task = 0;
			s->cur_task[i] = task;
		}
		if (s->batch_pre && s->batch_pre[i]) {
			if ((r = recv_owed(s)) < 0)
				return r;
			gdb_chains_ahead(s, c, i);
		}
		struct dp_sample *sm = &out[i];
		memset(sm, 0, sizeof(*sm));
		sm->time = t;
		sm->cpu = (uint32_t)i;
		sm->ip = rip;
		sm->mode = (cs & 3) == 0 ? DP_MODE_KERNEL : DP_MODE_USER;
		sm->has_asid = s->cr3.present;
		sm->asid = guest_asid_of_cr3(cr3);   /* without the PCID (bits 0-11) and NOFLUSH */
		sm->period = 1000000000ull / s->hz;
	}
	return err;
}

/* Send 0x03 and wait for the VM to report it stopped. With `batch`, the
 * register requests follow the 0x03 in the same write (see
 * docs/passive.md, "one round trip"): their replies come after the stop
 * reply and gdb_read_vcpus(send = false) collects them. */
int gdb_interrupt_vm(struct gdb_source *s, bool batch)
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
		/* With the batch, the ack goes out with the `c` (gdb_resume_vm
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
int gdb_resume_vm(struct gdb_source *s, unsigned acks)
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
		size_t slot = (s->qhead + s->qcount) % s->qcap;
		s->q[slot] = v[i];
		if (v[i].nr_callchain && s->qchain) {
			/* the slot's own room: v's chain lives until the next tick */
			uint64_t *to = s->qchain + slot * s->chain_depth;
			s->q[slot].nr_callchain = v[i].nr_callchain < s->chain_depth ? v[i].nr_callchain : s->chain_depth;
			memcpy(to, v[i].callchain, s->q[slot].nr_callchain * sizeof(*to));
			s->q[slot].callchain = to;
		} else {
			s->q[slot].nr_callchain = 0;
			s->q[slot].callchain = NULL;
		}
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
	if (s->starting)
		snprintf(s->message, sizeof(s->message), "%s: %s during its start-up (reading guest memory); "
			 "the recording goes on without this domain%s", s->spec.name, cause, tail ? tail : "");
	else
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
	return gdb_rsp_strerror(e);
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
int gdb_detach_vm(struct gdb_source *s)
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
	return outside ? -EALREADY : gdb_detach_vm(s);
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
	} else if (held && gdb_detach_vm(s) < 0) {
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
	int r = gdb_interrupt_vm(s, false);
	if (r == 0) {
		gdb_guest_final(s);
		gdb_code_final(s);
		r = gdb_detach_vm(s);
	}
	else if (r == -ETIMEDOUT && !s->unsure)
		r = recover_vm(s);
	if (r == 0 || r == -ECHILD || r == -EPIPE)
		return;
	if (r == -EALREADY)
		end_with(s, end_cause(r), NULL);
	else
		end_with(s, r == -ETIMEDOUT ? "stub did not answer when the recording ended" :
			 r == -EPROTO ? "stub refused to detach when the recording ended" :
			 gdb_rsp_strerror(r), MAY_BE_PAUSED);
}

void *gdb_sampler_main(void *arg)
{
	struct gdb_source *s = arg;
	uint64_t period = 1000000000ull / s->hz;
	struct dp_sample *v = xcalloc(s->nvcpu, sizeof(*v));
	bool held = true;       /* the VM is stopped by us (since connect) */
	int r = 0;
	uint64_t next = 0;
	if (s->late) {
		/* The VM stays stopped while its memory is read (a bounded
		 * time: gdb_source.h); the others sample meanwhile. */
		s->starting = true;   /* an end now is "during its start-up" */
		if ((r = gdb_source_late_start(s)) < 0)
			goto out;
		s->starting = false;
		if (atomic_load(&s->stop_at_ns)) {
			/* the recording ended first: leave the VM running */
			atomic_store(&s->t_end, mono_ns());
			if ((r = gdb_detach_vm(s)) < 0 && r != -EPIPE)
				end_with(s, "stub did not answer when the recording ended", MAY_BE_PAUSED);
			goto close;
		}
	}
	r = gdb_resume_vm(s, 0);
	next = mono_ns() + period;
	if (r < 0)
		goto out;
	held = false;
	/* The VM runs; the first tick waits for gdb_source_begin. */
	pthread_mutex_lock(&s->lock);
	while (!s->go && !s->stop_req)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	next = mono_ns() + period;
	atomic_store(&s->t_begin, next - period);
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool slept = false;
		while (!s->stop_req) {
			uint64_t n = mono_ns();
			if (n >= next) {
				/* a tick it slept for: how late the thread got
				 * the CPU (catch-up ticks are late by design) */
				if (slept) {
					atomic_fetch_add(&s->late_ns, n - next);
					atomic_fetch_add(&s->wakes, 1);
				}
				break;
			}
			slept = true;
			struct timespec ts = { .tv_sec = next / 1000000000ull, .tv_nsec = next % 1000000000ull };
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		}
		bool stop = s->stop_req;
		pthread_mutex_unlock(&s->lock);
		if (stop) {
			atomic_store(&s->t_end, mono_ns());   /* sampling ends here, not after the final reads */
			break;
		}

		uint64_t t0 = mono_ns();
		if ((r = gdb_interrupt_vm(s, s->pipeline)) < 0)
			goto out;
		held = true;
		uint64_t t = mono_ns();
		atomic_fetch_add(&s->intr_ns, t - t0);
		int rr = gdb_read_vcpus(s, v, t, !s->pipeline);
		if (rr < 0 && (rr == -ETIMEDOUT || rr == -EPIPE || rr == -EMSGSIZE || rr == -EBADMSG)) {
			r = rr;
			goto out;
		}
		unsigned acks = s->replies + (s->pipeline ? 1 : 0);
		if (rr == 0) {
			/* chains first: a chain that reaches user mode tells
			 * whose the sample is */
			gdb_chains_tick(s, v, s->nvcpu, &acks);
			gdb_guest_tick(s, v, s->nvcpu, &acks);
			gdb_chains_next(s, v, s->nvcpu);
			gdb_code_tick(s, v, s->nvcpu);
		}
		if ((r = gdb_resume_vm(s, acks)) < 0)
			goto out;
		if (s->rebuild)
			gdb_build_batch(s);   /* next tick reads the new bases */
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
	atomic_store(&s->t_end, mono_ns());
	end_on_error(s, r, held);
close:
	free(v);
	rsp_close(s->conn);
	/* a sampler that never began (stopped first) sampled nothing */
	if (!atomic_load(&s->t_begin))
		atomic_store(&s->t_begin, mono_ns());
	if (!atomic_load(&s->t_end))
		atomic_store(&s->t_end, mono_ns());
	atomic_store(&s->cpu_ns, thread_cpu_ns());
	return NULL;
}
