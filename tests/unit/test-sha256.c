// SPDX-License-Identifier: MIT
/*
 * util/sha256: SHA-256 against the FIPS 180-4 example messages (empty,
 * "abc", the 448-bit two-block message, a million 'a' fed in uneven
 * pieces) and HMAC-SHA256 against RFC 4231 test cases 1-4, 6 and 7 (keys
 * shorter than, and longer than, a block); a MAC split into parts equals
 * the MAC of the joined message; ct_equal tells equal from unequal.
 */
#include <stdlib.h>

#include "util/sha256.h"
#include "unit.h"

static const char *hex(const uint8_t *p, size_t n)
{
	static char out[2 * SHA256_LEN + 1];
	for (size_t i = 0; i < n && i < SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	return out;
}

static void check_sha(const char *msg, const char *want)
{
	uint8_t d[SHA256_LEN];
	sha256(msg, strlen(msg), d);
	CHECK_STR(hex(d, sizeof(d)), want);
}

static void check_hmac(const void *key, size_t keylen, const void *data, size_t n, const char *want)
{
	uint8_t d[SHA256_LEN];
	const void *parts[] = { data };
	size_t lens[] = { n };
	hmac_sha256(key, keylen, parts, lens, 1, d);
	CHECK_STR(hex(d, sizeof(d)), want);
}

int main(void)
{
	check_sha("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a', in pieces that straddle block boundaries */
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	struct sha256 c;
	sha256_init(&c);
	for (size_t o = 0, k = 1; o < 1000000; o += k, k = k * 7 % 1000 + 1)
		sha256_update(&c, a + o, o + k > 1000000 ? 1000000 - o : k);
	uint8_t d[SHA256_LEN];
	sha256_final(&c, d);
	CHECK_STR(hex(d, sizeof(d)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);

	uint8_t k[131], m[50];
	memset(k, 0x0b, 20);
	check_hmac(k, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	check_hmac("Jefe", 4, "what do ya want for nothing?", 28,
		   "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(k, 0xaa, 20);
	memset(m, 0xdd, 50);
	check_hmac(k, 20, m, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	for (int i = 0; i < 25; i++)
		k[i] = (uint8_t)(i + 1);
	memset(m, 0xcd, 50);
	check_hmac(k, 25, m, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
	memset(k, 0xaa, 131);
	const char *t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	check_hmac(k, 131, t6, strlen(t6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	const char *t7 = "This is a test using a larger than block-size key and a larger than block-size data."
			 " The key needs to be hashed before being used by the HMAC algorithm.";
	check_hmac(k, 131, t7, strlen(t7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");

	/* parts: "what do ya " + "want for nothing?" is test case 2 */
	const void *parts[] = { "what do ya ", "", "want for nothing?" };
	size_t lens[] = { 11, 0, 17 };
	hmac_sha256("Jefe", 4, parts, lens, 3, d);
	CHECK_STR(hex(d, sizeof(d)), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

	uint8_t x[32] = { 0 }, y[32] = { 0 };
	CHECK(ct_equal(x, y, 32));
	y[31] = 1;
	CHECK(!ct_equal(x, y, 32));
	y[31] = 0;
	y[0] = 0x80;
	CHECK(!ct_equal(x, y, 32));
	return unit_done();
}
