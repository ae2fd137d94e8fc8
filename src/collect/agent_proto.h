/* SPDX-License-Identifier: MIT */
/*
 * The active-domain wire protocol, spoken between the host's recorder
 * (collect/agent_source.c) and `domprof agent` inside a guest
 * (cmd-agent.c). docs/active.md is the normative description; this
 * header mirrors it and is shared by both sides.
 *
 * A byte stream (TCP, a unix socket, a virtio-serial port or a serial
 * line) carries frames:
 *
 *   u32 magic "DPAG" | u16 type | u16 flags | u32 length | payload
 *
 * little endian, length <= AP_MAX_FRAME. The host always speaks first
 * (HELLO), then asks START, STOP and COLLECT, one at a time; the agent
 * answers each request. The agent understands nothing else: any other
 * type is answered with ERROR and the connection is closed. There is no
 * request that names a file, a command or an address: the agent runs
 * only its own recorder, with a frequency and a call-graph flag.
 *
 * A frame's kind comes only from its type (the Xenoprof seed's lesson):
 * payload values are data. Decoders check every length before use,
 * because either side may be damaged or hostile.
 */
#ifndef DOMPROF_COLLECT_AGENT_PROTO_H
#define DOMPROF_COLLECT_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AP_MAGIC 0x47415044u       /* "DPAG" little endian */
#define AP_VERSION 1u
#define AP_HDR 12u
#define AP_MAX_FRAME (64u << 20)   /* largest payload either side accepts */
#define AP_F_ZSTD 1u               /* payload is one zstd frame */

enum ap_type {
	/* host -> agent: the only requests */
	AP_HELLO = 1,       /* u32 version */
	AP_START = 2,       /* struct ap_start */
	AP_STOP = 3,        /* empty */
	AP_COLLECT = 4,     /* empty */
	/* agent -> host */
	AP_HELLO_OK = 16,   /* struct ap_hello */
	AP_STARTED = 17,    /* empty */
	AP_STOPPED = 18,    /* text: the recorder's summary line */
	AP_RECORD = 19,     /* one raw domprof record of the guest's domain 0 */
	AP_SYMTAB = 20,     /* u32 kind, u16 name length, name, data (maybe zstd) */
	AP_LOST = 21,       /* u64 count */
	AP_END = 22,        /* u64 records, u64 samples, u64 lost: collection done */
	AP_ERROR = 23,      /* text; the request failed (state unchanged) */
};

struct ap_hello {
	uint32_t version;
	uint32_t ncpus;
	char hostname[65];
	char release[65];
};

#define AP_START_CALLCHAIN 1u
struct ap_start {
	uint32_t hz;
	uint32_t flags;     /* AP_START_* */
};

struct ap_end {
	uint64_t records, samples, lost;
};

/* ---- frames over a file descriptor ---------------------------------- */

/* Write one frame (all of it, retrying short writes and EINTR). With
 * AP_F_ZSTD in flags the payload is compressed first. Returns 0 or
 * -errno. */
int ap_send(int fd, uint16_t type, uint16_t flags, const void *payload, size_t len);

/*
 * Read one frame. *buf (malloc'd, grown as needed, capacity in *cap) gets
 * the payload, decompressed if it was sent with AP_F_ZSTD; *len its
 * length. timeout_ms < 0 waits forever; otherwise the whole frame must
 * arrive in that time. resync: skip bytes until a magic is found (for
 * character devices, where a previous peer may have left half a frame).
 * Returns 0, -ECONNRESET at end of stream, -ETIMEDOUT, -EPROTO (bad
 * magic, too long, bad compression) or another -errno.
 */
int ap_recv(int fd, uint16_t *type, uint16_t *flags, uint8_t **buf, size_t *cap,
	    size_t *len, int timeout_ms, bool resync);

/* ---- payloads (pure functions, unit tested) -------------------------- */

size_t ap_hello_encode(const struct ap_hello *h, uint8_t *out, size_t outlen);
int ap_hello_decode(const uint8_t *p, size_t len, struct ap_hello *h);
void ap_start_encode(const struct ap_start *s, uint8_t out[8]);
int ap_start_decode(const uint8_t *p, size_t len, struct ap_start *s);
void ap_end_encode(const struct ap_end *e, uint8_t out[24]);
int ap_end_decode(const uint8_t *p, size_t len, struct ap_end *e);

/* SYMTAB payload: build into a malloc'd buffer; decode borrows from p. */
uint8_t *ap_symtab_encode(uint32_t kind, const char *name, const void *data, size_t size,
			  size_t *outlen);
int ap_symtab_decode(const uint8_t *p, size_t len, uint32_t *kind, char *name, size_t namecap,
		     const uint8_t **data, size_t *size);

/*
 * Check one raw domprof record received in an AP_RECORD frame: its
 * length field matches, it is 8-byte aligned, and its tag is one the host
 * relays (TASK, MMAP, SAMPLE, SYMTAB). Everything else (DOMAIN,
 * DOMAIN_SWITCH, EVENT, STATS, unknown tags) is refused: an agent must
 * not be able to create domains, switch to the host's domain, or write
 * totals. Returns the tag, or -EPROTO.
 */
int ap_check_record(const uint8_t *raw, size_t len);

/* Name of a frame type for messages ("START", "type 99"). Returns a
 * static string or buf. */
const char *ap_type_name(uint16_t type, char *buf, size_t buflen);

#endif
