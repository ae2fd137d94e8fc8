// SPDX-License-Identifier: MIT
/*
 * bench/gdb-floor: the least a passive sampler can cost a VM. Connects to
 * a QEMU gdbstub (unix socket), then for SECS seconds at HZ stops the VM
 * (0x03), waits for the stop reply and resumes it (`c`), reading nothing;
 * at the end stops it once more and detaches, which leaves it running.
 * Prints the ticks and the mean time the VM was held per tick, from
 * before the 0x03 until the `c` is written: what `domprof record`'s
 * "held" means, so bench/passive-overhead can show domprof's hold time
 * and the guest's slowdown as multiples of this floor, which is QEMU's
 * own stop/resume cost.
 *
 * It speaks to the stub as domprof's sampler does (src/collect/
 * gdb_sampler.c): the same qSupported, no-ack mode when offered, acks
 * only in the write that resumes the VM (QEMU stops a running VM on any
 * byte it receives), and the same tick schedule (late ticks taken back
 * to back while under CATCH_UP periods behind, older ones skipped).
 *
 * With --reads=N, each stop also makes N `g` requests one after the
 * other (request, wait for the reply) before the `c`: what N more round
 * trips inside a stop cost, as `record -g` makes one for the stack
 * window after the pipelined batch.
 *
 * usage: gdb-floor [--reads=N] SOCKET HZ SECS
 * stdout, one line:
 *   gdb-floor: N ticks in S.SS s, M skipped (held X.XXX ms a tick, Y.YYY ms of it until the stop reply)
 * Exit 0, 1 when the stub fails (one line on stderr; the VM may then be
 * left paused), 2 on usage errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/gdb_rsp.h"
#include "util/clock.h"
#include "util/xalloc.h"

enum { TIMEOUT_MS = 2000, CATCH_UP = 8, MAX_SKIP = 64, MAX_READS = 64 };

static const char *why(int r)
{
	return r == -ETIMEDOUT ? "the stub did not answer in time" : strerror(-r);
}

/* Read packets until the stop reply to our 0x03 (at most MAX_SKIP
 * console-output packets before it). *owed counts the packets that need
 * an ack; they are sent with the next resume or detach, never alone. */
static int wait_stop(struct rsp_conn *c, unsigned *owed)
{
	for (int i = 0; i < MAX_SKIP; i++) {
		int r = rsp_recv(c, TIMEOUT_MS);
		if (r < 0)
			return r;
		(*owed)++;
		int k = rsp_parse_stop(c->pkt, c->pktlen, NULL, 0);
		if (k == RSP_STOP_SIGNAL)
			return 0;
		if (k == RSP_STOP_EXITED)
			return -ECHILD;
		if (k != RSP_STOP_OUTPUT)
			return -EPROTO;
	}
	return -EPROTO;
}

/* Write the acks owed and then one framed packet, in one write. */
static int send_after_acks(struct rsp_conn *c, unsigned *owed, const char *payload)
{
	char buf[MAX_SKIP + 80];
	size_t n = 0;
	if (!c->noack) {
		memset(buf, '+', *owed);
		n = *owed;
	}
	int f = rsp_frame(payload, strlen(payload), buf + n, sizeof(buf) - n);
	if (f < 0)
		return f;
	*owed = 0;
	return rsp_write(c, buf, n + (size_t)f);
}

/* Connect, negotiate, learn the detach packet. The VM is stopped after
 * this (QEMU stops it when a debugger connects). */
static int setup(struct rsp_conn *c, const char *path, char *detach, size_t cap)
{
	int fd = rsp_connect_unix(path, TIMEOUT_MS);
	if (fd < 0)
		return fd;
	rsp_init(c, fd, TIMEOUT_MS);
	int r = rsp_drain(c, 50);
	if (r == 0)
		r = rsp_request(c, "qSupported:xmlRegisters=i386");
	/* a stop reply queued on connect may come after the drain */
	for (int i = 0; r >= 0 && i < 4 && rsp_parse_stop(c->pkt, c->pktlen, NULL, 0) > 0; i++)
		if ((r = rsp_recv(c, 0)) >= 0)
			r = rsp_ack(c, 1);
	if (r < 0)
		return r;
	if (strstr(c->pkt, "QStartNoAckMode+")) {
		if ((r = rsp_request(c, "QStartNoAckMode")) < 0)
			return r;
		c->noack = !strcmp(c->pkt, "OK");
	}
	char tid[RSP_MAX_TID];
	if ((r = rsp_request(c, "?")) < 0)
		return r;
	r = rsp_parse_stop(c->pkt, c->pktlen, tid, sizeof(tid));
	if (r == RSP_STOP_EXITED)
		return -ECHILD;
	if (r != RSP_STOP_SIGNAL)
		return -EPROTO;
	rsp_detach_packet(tid, detach, cap);
	return 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

struct floor_stats {
	uint64_t ticks, skipped, held_ns, intr_ns, run_ns;
};

/* n `g` requests, each waited for (the VM is stopped: acks are safe, and
 * the owed ones go first). */
static int reads(struct rsp_conn *c, unsigned n, unsigned *owed)
{
	int r = 0;
	if (n && *owed && (r = rsp_ack(c, *owed)) == 0)
		*owed = 0;
	for (unsigned i = 0; r == 0 && i < n; i++)
		r = rsp_request(c, "g");
	return r;
}

/* The VM is stopped and nothing is owed: run it for secs seconds with a
 * stop every 1/hz (and nreads requests in each), and leave it stopped
 * with *owed acks owed. */
static int ticks(struct rsp_conn *c, unsigned hz, unsigned secs, unsigned nreads, unsigned *owed,
		 struct floor_stats *st)
{
	uint64_t period = 1000000000ull / hz, start = mono_ns(), end = start + secs * 1000000000ull;
	int r = send_after_acks(c, owed, "c");
	uint64_t next = start + period;
	while (r == 0 && next < end) {
		sleep_until(next);
		uint64_t t0 = mono_ns();
		if ((r = rsp_write(c, "\x03", 1)) < 0 || (r = wait_stop(c, owed)) < 0)
			break;
		uint64_t t1 = mono_ns();
		if ((r = reads(c, nreads, owed)) < 0 || (r = send_after_acks(c, owed, "c")) < 0)
			break;
		uint64_t t2 = mono_ns();
		st->ticks++;
		st->intr_ns += t1 - t0;
		st->held_ns += t2 - t0;
		next += period;
		if (t2 >= next + CATCH_UP * period) {
			uint64_t missed = (t2 - next) / period;
			st->skipped += missed;
			next += missed * period;
		}
	}
	if (r == 0 && (r = rsp_write(c, "\x03", 1)) == 0)
		r = wait_stop(c, owed);
	st->run_ns = mono_ns() - start;
	return r;
}

/* Detach (QEMU resumes the VM) and wait for the "OK". */
static int detach(struct rsp_conn *c, unsigned *owed, const char *pkt)
{
	int r = send_after_acks(c, owed, pkt);
	for (int i = 0; r == 0 && i < MAX_SKIP; i++) {
		if ((r = rsp_recv(c, TIMEOUT_MS)) < 0)
			break;
		if (!strcmp(c->pkt, "OK"))
			return 0;
		if (rsp_parse_stop(c->pkt, c->pktlen, NULL, 0) != RSP_STOP_OUTPUT)
			return -EPROTO;
		r = rsp_ack(c, 1);   /* the VM is still stopped: acks are safe */
	}
	return r < 0 ? r : -EPROTO;
}

int main(int argc, char **argv)
{
	char *e0 = NULL, *e1 = NULL, *e2 = NULL;
	unsigned long nreads = 0;
	if (argc >= 2 && !strncmp(argv[1], "--reads=", 8)) {
		nreads = strtoul(argv[1] + 8, &e0, 10);
		argc--, argv++;
	}
	unsigned long hz = argc == 4 ? strtoul(argv[2], &e1, 10) : 0;
	unsigned long secs = argc == 4 ? strtoul(argv[3], &e2, 10) : 0;
	if (argc != 4 || (e0 && (*e0 || e0 == argv[0] + 8)) || nreads > MAX_READS || *e1 || *e2 || hz < 1 ||
	    hz > 100000 || secs < 1 || secs > 3600) {
		fprintf(stderr, "usage: gdb-floor [--reads=N] SOCKET HZ SECS (N 0-%d, HZ 1-100000, SECS 1-3600)\n",
			MAX_READS);
		return 2;
	}
	struct rsp_conn *c = xcalloc(1, sizeof(*c));
	c->fd = -1;   /* until setup connects: rsp_close must not close stdin */
	struct floor_stats st = { 0 };
	char dpkt[32];
	unsigned owed = 0;
	int r = setup(c, argv[1], dpkt, sizeof(dpkt));
	if (r < 0) {
		fprintf(stderr, "gdb-floor: %s: %s%s%s\n", argv[1], c->fd >= 0 ? "not a GDB stub (" : "", why(r),
			c->fd >= 0 ? ")" : "");
		rsp_close(c);
		free(c);
		return 1;
	}
	const char *step = "ticking";
	if ((r = ticks(c, (unsigned)hz, (unsigned)secs, (unsigned)nreads, &owed, &st)) == 0) {
		step = "detaching";
		r = detach(c, &owed, dpkt);
	}
	rsp_close(c);
	free(c);
	if (r < 0) {
		fprintf(stderr, "gdb-floor: %s: %s after %" PRIu64 " ticks (the VM may be left paused)\n", step, why(r),
			st.ticks);
		return 1;
	}
	double n = st.ticks ? (double)st.ticks : 1.0;
	printf("gdb-floor: %" PRIu64 " ticks in %.2f s, %" PRIu64 " skipped (held %.3f ms a tick, %.3f ms of it until "
	       "the stop reply)\n",
	       st.ticks, (double)st.run_ns / 1e9, st.skipped, (double)st.held_ns / n / 1e6, (double)st.intr_ns / n / 1e6);
	return 0;
}
