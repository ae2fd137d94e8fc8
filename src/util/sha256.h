/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the agent
 * protocol's challenge-response (collect/agent_proto.c). domprof links no
 * crypto library, and these are small enough to carry and check against
 * the published vectors (tests/unit/test-sha256.c: FIPS 180-4 examples,
 * RFC 4231). Not a general crypto toolkit: no streaming HMAC, no
 * key-derivation, nothing secret is wiped beyond the HMAC pads.
 */
#ifndef DOMPROF_UTIL_SHA256_H
#define DOMPROF_UTIL_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;        /* message length so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *p, size_t n);
void sha256_final(struct sha256 *c, uint8_t out[SHA256_LEN]);
void sha256(const void *p, size_t n, uint8_t out[SHA256_LEN]);

/* HMAC-SHA256 of the concatenation of the nparts parts (so a caller can
 * MAC label || nonce || nonce without building a buffer). */
void hmac_sha256(const void *key, size_t keylen, const void *const *parts, const size_t *lens,
		 size_t nparts, uint8_t out[SHA256_LEN]);

/* Compare n bytes in time that depends only on n (for MACs). */
bool ct_equal(const void *a, const void *b, size_t n);

#endif
