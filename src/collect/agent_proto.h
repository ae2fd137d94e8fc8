/* SPDX-License-Identifier: MIT */
/*
 * The active-domain wire protocol, spoken between the host's recorder
 * (collect/agent_source.c) and `domprof agent` inside a guest
 * (src/agent/). docs/active.md is the normative description; this
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
 * only its own recorder, with a frequency, call-graph flags and (for
 * --call-graph dwarf) a stack size, each a number checked here.
 *
 * An agent with a key (--key-file) first demands a challenge-response
 * in which each side proves it holds the shared key (AUTH, AUTH_CHALLENGE,
 * AUTH_PROOF, AUTH_OK; HMAC-SHA256 over both sides' nonces, see
 * docs/active.md); nothing else is accepted before it. Requests are tiny:
 * the agent reads at most AP_MAX_REQUEST bytes of one, decompressed.
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
#define AP_MAX_REQUEST 4096u       /* largest request the agent accepts, decompressed */
#define AP_NONCE 32u               /* bytes of each side's challenge */
#define AP_MAC 32u                 /* HMAC-SHA256 */
#define AP_KEY_MIN 16u             /* a key file holds 16..AP_KEY_MAX bytes */
#define AP_KEY_MAX 1024u

enum ap_type {
	/* host -> agent: the only requests */
	AP_HELLO = 1,       /* u32 version */
	AP_START = 2,       /* struct ap_start */
	AP_STOP = 3,        /* empty */
	AP_COLLECT = 4,     /* empty */
	AP_AUTH = 5,        /* host nonce (AP_NONCE bytes) */
	AP_AUTH_PROOF = 6,  /* HMAC(key, "domprof-agent host" | host nonce | agent nonce) */
	/* agent -> host */
	AP_HELLO_OK = 16,   /* struct ap_hello */
	AP_STARTED = 17,    /* empty */
	AP_STOPPED = 18,    /* text: the recorder's summary line */
	AP_RECORD = 19,     /* one raw domprof record of the guest's domain 0 */
	AP_SYMTAB = 20,     /* u32 kind, u16 name length, name, data (maybe zstd) */
	AP_LOST = 21,       /* u64 count */
	AP_END = 22,        /* u64 records, u64 samples, u64 lost: collection done */
	AP_ERROR = 23,      /* text; the request failed (state unchanged) */
	AP_AUTH_CHALLENGE = 24, /* agent nonce (AP_NONCE bytes) */
	AP_AUTH_OK = 25,    /* HMAC(key, "domprof-agent agent" | host nonce | agent nonce) */
};

/* What an agent offers beyond version 1's HELLO/START/STOP/COLLECT, in
 * HELLO_OK's optional trailing u32 (an agent without it offers none; a
 * host ignores bits it does not know). */
#define AP_FEAT_DWARF 1u   /* START may ask for AP_START_DWARF */

struct ap_hello {
	uint32_t version;
	uint32_t ncpus;
	char hostname[65];
	char release[65];
	uint32_t features;  /* AP_FEAT_*; 0 when HELLO_OK has no such field */
};

/*
 * START: u32 hz, u32 flags, and with AP_START_DWARF a u32 stack_size:
 * 8 or 12 bytes, nothing else. AP_START_DWARF asks the guest's recorder
 * for `--call-graph dwarf,stack_size` (user registers and up to
 * stack_size bytes of user stack with every sample; it needs
 * AP_START_CALLCHAIN, and stack_size is a multiple of 8 in
 * 8..DP_MAX_USTACK). An agent that predates it refuses a 12-byte START
 * (and does not offer AP_FEAT_DWARF, so a host never sends it one).
 */
#define AP_START_CALLCHAIN 1u
#define AP_START_DWARF 2u
#define AP_START_MAX 12u    /* bytes of the largest START payload */
struct ap_start {
	uint32_t hz;
	uint32_t flags;     /* AP_START_* */
	uint32_t stack_size; /* with AP_START_DWARF; 0 otherwise */
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

/*
 * ap_recv with a bound: a payload larger than max (as sent, or once
 * decompressed) is refused with -EMSGSIZE before anything of that size is
 * allocated. A zstd frame that states its content size is checked
 * against max first; one that does not is decompressed in a stream that
 * stops at max, with the decoder's window limited to max as well.
 * ap_recv() is ap_recv_max(..., AP_MAX_FRAME, ...).
 */
int ap_recv_max(int fd, uint16_t *type, uint16_t *flags, uint8_t **buf, size_t *cap,
		size_t *len, size_t max, int timeout_ms, bool resync);

/* A receive error as a few words for messages ("protocol error",
 * "frame too large", strerror otherwise). */
const char *ap_strerror(int r);

/* ---- authentication ---------------------------------------------------- */

struct ap_key {
	uint8_t k[AP_KEY_MAX];
	size_t len;
};

/*
 * Load a key file: a regular file owned by the effective user, not
 * readable or writable by group or others, holding AP_KEY_MIN..AP_KEY_MAX
 * bytes (a trailing newline is not part of the key). With create, a
 * missing file is created (mode 0600, O_EXCL) with 32 random bytes in hex
 * and *created set. Returns 0, or -errno with a one-line reason in err
 * naming the path.
 */
int ap_key_load(const char *path, bool create, struct ap_key *key, bool *created,
		char *err, size_t errlen);

/* AP_NONCE random bytes from getrandom(). Returns 0 or -errno. */
int ap_nonce(uint8_t out[AP_NONCE]);

/* The MAC one side sends: host_side picks the label, so the agent's
 * answer can never be replayed as the host's proof or the other way. */
void ap_auth_mac(const struct ap_key *key, bool host_side, const uint8_t host_nonce[AP_NONCE],
		 const uint8_t agent_nonce[AP_NONCE], uint8_t out[AP_MAC]);

/* ---- payloads (pure functions, unit tested) -------------------------- */

size_t ap_hello_encode(const struct ap_hello *h, uint8_t *out, size_t outlen);
int ap_hello_decode(const uint8_t *p, size_t len, struct ap_hello *h);
/* START: encode returns the payload's length (8, or 12 with
 * AP_START_DWARF); decode checks everything the agent acts on: -EPROTO
 * for a length that does not fit the flags, -EINVAL for hz outside
 * 1..100000, unknown flags, DWARF without CALLCHAIN or a stack_size that
 * is not a multiple of 8 in 8..DP_MAX_USTACK. */
size_t ap_start_encode(const struct ap_start *s, uint8_t out[AP_START_MAX]);
int ap_start_decode(const uint8_t *p, size_t len, struct ap_start *s);
void ap_end_encode(const struct ap_end *e, uint8_t out[24]);
/* HELLO's payload: u32 version. decode: the version, or 0 when the
 * payload is shorter than 4 bytes (no version this agent speaks). */
void ap_hello_req_encode(uint32_t version, uint8_t out[4]);
uint32_t ap_hello_req_decode(const uint8_t *p, size_t len);
/* LOST's payload: u64 count; decode: -EPROTO unless len is 8. */
void ap_lost_encode(uint64_t count, uint8_t out[8]);
int ap_lost_decode(const uint8_t *p, size_t len, uint64_t *count);
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

struct sockaddr;
/* True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
bool ap_is_loopback(const struct sockaddr *sa);

/* Name of a frame type for messages ("START", "type 99"). Returns a
 * static string or buf. */
const char *ap_type_name(uint16_t type, char *buf, size_t buflen);

#endif
