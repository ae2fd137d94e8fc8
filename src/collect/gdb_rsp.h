/* SPDX-License-Identifier: MIT */
/*
 * A client for the GDB remote serial protocol (RSP), as spoken by QEMU's
 * gdbstub. Two layers:
 *
 * - pure parsers (rsp_parse, rsp_tdesc_*, rsp_parse_stop, ...) over
 *   caller buffers: every byte from a stub is hostile, so each has a hard
 *   bound and returns an error instead of guessing. These are what
 *   tests/fuzz/fuzz-gdb.c exercises.
 * - a connection (struct rsp_conn) that frames, sends and receives
 *   packets over a socket with a timeout on every wait.
 *
 * Functions return 0 / a positive count on success and a negative errno
 * on failure; nothing here prints. -ETIMEDOUT: the stub did not answer in
 * time; -EPIPE: it closed the connection; -EBADMSG: bad checksum;
 * -EMSGSIZE: a packet longer than RSP_MAX_PAYLOAD; -EPROTO: bytes that are
 * not the protocol.
 */
#ifndef DOMPROF_COLLECT_GDB_RSP_H
#define DOMPROF_COLLECT_GDB_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest decoded payload accepted (QEMU announces PacketSize=1000 hex,
 * i.e. 4096, and a `g` reply of x86_64 is 1216 chars). */
#define RSP_MAX_PAYLOAD 16384u
/* Largest raw packet body ($...#) accepted before giving up on it. */
#define RSP_MAX_RAW (2u * RSP_MAX_PAYLOAD)

/*
 * Parse one packet at the start of buf[0..len). Leading '+' acks are
 * skipped. Returns 1 with the decoded payload in out[0..*outlen) (escapes
 * '}' and run-length '*' expanded, checksum verified) and *consumed set to
 * the bytes used; 0 if more bytes are needed (*consumed may still be > 0
 * for skipped acks); or a negative errno (see above). out is not
 * NUL-terminated by this function.
 */
int rsp_parse(const uint8_t *buf, size_t len, size_t *consumed,
	      uint8_t *out, size_t outcap, size_t *outlen);

/* Frame payload as $payload#xx (escaping $ # } *) into out. Returns the
 * framed length, or -EMSGSIZE if it does not fit in cap. */
int rsp_frame(const char *payload, size_t len, char *out, size_t cap);

/* ---- Target description ---------------------------------------------- */

#define RSP_MAX_REGS 1024u
#define RSP_MAX_XML (256u * 1024u)   /* per annex */
#define RSP_MAX_INCLUDES 32u

struct rsp_reg {
	char name[32];
	unsigned regnum;
	unsigned bitsize;
	size_t offset;          /* byte offset in the binary `g` reply */
};

struct rsp_tdesc {
	char arch[64];          /* <architecture>, e.g. "i386:x86-64" */
	struct rsp_reg *regs;   /* sorted by regnum, owned */
	size_t nregs;
	size_t gbytes;          /* bytes of all registers in regnum order */
	unsigned nincludes;
	unsigned next_regnum;   /* parse state: number of the next <reg> */
};

/* Called for each xi:include href: fetch the annex into a malloc'ed
 * buffer (*data, *len). Return 0 or a negative errno. */
typedef int (*rsp_fetch_fn)(void *ctx, const char *annex, char **data, size_t *len);

/*
 * Parse one target description document (and, through fetch, the annexes
 * it includes, at most RSP_MAX_INCLUDES, nested at most 4 deep) into td,
 * which must start zeroed. Comments, processing instructions and DOCTYPE
 * are skipped. Call rsp_tdesc_finish after the top document.
 */
int rsp_tdesc_parse(struct rsp_tdesc *td, const char *xml, size_t len,
		    rsp_fetch_fn fetch, void *ctx);
/* Sort registers by regnum and compute their `g` offsets. */
int rsp_tdesc_finish(struct rsp_tdesc *td);
const struct rsp_reg *rsp_tdesc_find(const struct rsp_tdesc *td, const char *name);
void rsp_tdesc_release(struct rsp_tdesc *td);

/* ---- Other replies --------------------------------------------------- */

/* Decode `nbytes` bytes of hex at hex[0..hexlen) as a little-endian
 * integer (nbytes <= 8). Returns 0, -EINVAL on bad/short hex, -ENODATA if
 * the stub marked the value unavailable ('x'). */
int rsp_hex_le(const char *hex, size_t hexlen, unsigned nbytes, uint64_t *val);
/* Decode hex into bytes (for `m` replies). Returns bytes decoded or
 * -EINVAL. "Exx" error replies are the caller's to check. */
int rsp_hex_bytes(const char *hex, size_t hexlen, uint8_t *out, size_t cap);

enum rsp_stop_kind { RSP_STOP_SIGNAL = 1, RSP_STOP_EXITED = 2, RSP_STOP_OUTPUT = 3 };
/* Classify a stop reply: "S05", "T05thread:01;..." -> SIGNAL (thread id
 * copied into tid if present, else tid[0] = 0); "W.."/"X.." -> EXITED;
 * "O<hex>" console output -> OUTPUT. Others -> -EPROTO. */
int rsp_parse_stop(const char *p, size_t len, char *tid, size_t tidcap);
/* The detach packet for a stub whose thread ids look like tid: "D;PID"
 * when they are "pPID.TID" (once any client negotiated multiprocess,
 * QEMU answers a bare "D" with E22 and leaves the VM paused), else "D".
 * Written into out[cap] (cap >= 20 holds any). */
void rsp_detach_packet(const char *tid, char *out, size_t cap);

#define RSP_MAX_TID 32u
#define RSP_MAX_THREADS 256u
/* Append the thread ids of one qfThreadInfo/qsThreadInfo reply
 * ("m01,02" or "l") to tids (each RSP_MAX_TID bytes). Returns 1 if more
 * may follow ('m'), 0 at the end ('l'), negative on a malformed reply or
 * more than max threads. */
int rsp_parse_threads(const char *p, size_t len, char (*tids)[RSP_MAX_TID],
		      size_t *ntids, size_t max);

/* ---- Connection ------------------------------------------------------ */

struct rsp_conn {
	int fd;
	bool noack;             /* QStartNoAckMode accepted */
	int timeout_ms;         /* per wait; default 1000 */
	size_t rlen;            /* bytes buffered in rbuf */
	uint8_t rbuf[RSP_MAX_RAW + 8];
	char pkt[RSP_MAX_PAYLOAD + 1];  /* last payload, NUL-terminated */
	size_t pktlen;
	uint64_t bytes_in, bytes_out;
};

/* Take ownership of a connected socket. */
void rsp_init(struct rsp_conn *c, int fd, int timeout_ms);
void rsp_close(struct rsp_conn *c);

/* Connect to a unix socket or TCP host:port (first address that answers
 * within timeout_ms). Return the fd or a negative errno. */
int rsp_connect_unix(const char *path, int timeout_ms);
int rsp_connect_tcp(const char *host, const char *port, int timeout_ms);

/* Send raw bytes (several framed packets, acks, 0x03). */
int rsp_write(struct rsp_conn *c, const void *buf, size_t len);
/* Frame and send one packet (does not wait for the ack; rsp_recv skips
 * acks). */
int rsp_send(struct rsp_conn *c, const char *payload);
/* Receive one packet into c->pkt (NUL-terminated, c->pktlen). Does NOT
 * send an ack: in ack mode the caller owes the stub one '+' per packet
 * (see rsp_ack) and must send it before anything that resumes the VM,
 * because QEMU stops a running VM on any byte it receives. */
int rsp_recv(struct rsp_conn *c, int timeout_ms);
/* True if the stub has sent something not read yet (buffered, or
 * readable on the socket right now). Never waits. */
bool rsp_pending(struct rsp_conn *c);
/* Send `n` acks if in ack mode. */
int rsp_ack(struct rsp_conn *c, unsigned n);
/* rsp_send + rsp_recv + rsp_ack: one request/reply. */
int rsp_request(struct rsp_conn *c, const char *payload);
/* One `m ADDR,LEN` request: len bytes of the selected vCPU's virtual
 * memory into buf (len small enough for one reply). 0, -EFAULT (an error
 * reply such as E14: not mapped, or a short reply), or a transport error. */
int rsp_read_memory(struct rsp_conn *c, uint64_t addr, void *buf, size_t len);
/* Discard whatever the stub already sent (a queued stop reply after
 * connect), acking packets, until it is quiet for quiet_ms. */
int rsp_drain(struct rsp_conn *c, int quiet_ms);

#endif
