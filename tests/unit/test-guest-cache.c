// SPDX-License-Identifier: MIT
/*
 * The host cache of guest kernel tables (src/guest/cache.c): keys that
 * come from guest memory never name a path, entries round-trip, and the
 * kallsyms entry moves to another boot's _text with only kernel-image
 * addresses shifted; entries it did not write are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/cache.h"
#include "guest/ksyms.h"
#include "unit.h"

static const char table[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000040 T startup_64\n"
	"000000000001fb80 A current_task\n"
	"ffffffff82000100 D linux_banner\n";

static void kallsyms_entry(void)
{
	size_t n, len, nsyms;
	struct guest_ksyms_src src = { .lo = 0x1000000, .hi = 0x1200000, .num_syms = 0x1000008, .markers = 0x1080000,
				       .mwidth = 4, .ti = 0x10a0000, .addrs = 0x1000010, .relbase = 0x1100000,
				       .nsyms = 4 }, back;
	for (int i = 0; i < 32; i++)
		src.digest[i] = (uint8_t)(i * 7 + 1);
	char *e = guest_cache_kallsyms_encode(table, strlen(table), 0xffffffff81000000ull, &src, &n);
	/* the same boot: unchanged, and the span comes back */
	char *t = guest_cache_kallsyms_decode(e, n, 0xffffffff81000000ull, &back, &len, &nsyms);
	CHECK(t && len == strlen(table) && !memcmp(t, table, len));
	CHECK_EQ_U64(nsyms, 4);
	CHECK(!memcmp(&back, &src, sizeof(src)));
	free(t);
	/* another boot, 0x3e00000 higher: image addresses move, the per-CPU
	 * offset stays */
	t = guest_cache_kallsyms_decode(e, n, 0xffffffff84e00000ull, &back, &len, &nsyms);
	CHECK(t != NULL);
	if (t) {
		CHECK(strstr(t, "ffffffff84e00000 T _text\n") != NULL);
		CHECK(strstr(t, "ffffffff85e00100 D linux_banner\n") != NULL);
		CHECK(strstr(t, "000000000001fb80 A current_task\n") != NULL);
		/* control: the unshifted address is gone */
		CHECK(strstr(t, "ffffffff81000000 T _text") == NULL);
	}
	free(t);
	free(e);

	/* refused: no header, a bad header, a _text off the 2 MiB grid, a
	 * module line, a short address, a malformed line */
#define H2 "# domprof guest kallsyms 2 text=ffffffff81000000 lo=1000000 hi=1200000 num_syms=1000008 " \
	"markers=1080000 mwidth=4 ti=10a0000 addrs=1000010 relbase=1100000 nsyms=1 " \
	"sha256=0101010101010101010101010101010101010101010101010101010101010101\n"
	const char *bad[] = {
		"ffffffff81000000 T _text\n",
		/* version 1 (no span to check): not used */
		"# domprof guest kallsyms 1 text=ffffffff81000000\nffffffff81000000 T _text\n",
		/* a line count that is not the span's */
		H2 "ffffffff81000000 T _text\nffffffff81000040 T startup_64\n",
		/* a short digest */
		"# domprof guest kallsyms 2 text=ffffffff81000000 lo=1000000 hi=1200000 num_syms=1000008 "
		"markers=1080000 mwidth=4 ti=10a0000 addrs=1000010 relbase=1100000 nsyms=1 sha256=0101\n"
		"ffffffff81000000 T _text\n",
		"# something else\nffffffff81000000 T _text\n",
		"# domprof guest kallsyms 1 text=ffffffff81001000\nffffffff81001000 T _text\n",
		"# domprof guest kallsyms 1 text=ffffffff81000000\nffffffffc0000000 t f\t[mod]\n",
		"# domprof guest kallsyms 1 text=ffffffff81000000\n81000000 T _text\n",
		"# domprof guest kallsyms 1 text=ffffffff81000000\nffffffff81000000\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = guest_cache_kallsyms_decode(bad[i], strlen(bad[i]), 0xffffffff81000000ull, &back, &len, &nsyms);
		CHECK(t == NULL);
		if (t)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		free(t);
	}
	/* control: the version-2 header itself is accepted, and a table
	 * with any names is decoded as it is (the entry's table is not a
	 * thing to trust: the caller decodes the guest's own tables) */
	static const char good[] = H2 "ffffffff81000000 T HACKED_1\n";
	t = guest_cache_kallsyms_decode(good, strlen(good), 0xffffffff81000000ull, &back, &len, &nsyms);
	CHECK(t != NULL && strstr(t, "HACKED_1"));
	CHECK_EQ_U64(back.mwidth, 4);
	CHECK_EQ_U64(back.ti, 0x10a0000);
	free(t);
}

static void keys(void)
{
	char dir[] = "/tmp/dp-gcache-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	setenv("DOMPROF_CACHE", dir, 1);
	const char *id = "6a2b4ac77585c8bfb7b4c4b05bd9d1b7c0b1e2f3";
	char w[300];
	CHECK_EQ_U64(guest_cache_put(id, "orc", "abc", 3, w, sizeof(w)), 0);
	char *d;
	size_t len;
	CHECK_EQ_U64(guest_cache_get(id, "orc", 1024, &d, &len, w, sizeof(w)), 0);
	CHECK(len == 3 && !memcmp(d, "abc", 3));
	free(d);
	CHECK_EQ_U64(guest_cache_get(id, "kallsyms", 1024, &d, &len, w, sizeof(w)), (uint64_t)-ENOENT);
	/* keys and kinds from a guest never name a path */
	const char *badkeys[] = { "../../../../etc/passwd", "6A2B4AC77585C8BFB7B4C4B05BD9D1B7C0B1E2F3",
				  "6a2b", "", "6a2b4ac77585c8bfb7b4c4b05bd9d1b7c0b1e2f3/" };
	for (size_t i = 0; i < sizeof(badkeys) / sizeof(badkeys[0]); i++)
		CHECK_EQ_U64(guest_cache_put(badkeys[i], "orc", "x", 1, w, sizeof(w)), (uint64_t)-EINVAL);
	CHECK_EQ_U64(guest_cache_put(id, "../orc", "x", 1, w, sizeof(w)), (uint64_t)-EINVAL);
	/* BTF is not a kind any more (a cached copy cannot be checked for
	 * less than reading the guest's) */
	CHECK_EQ_U64(guest_cache_put(id, "btf", "x", 1, w, sizeof(w)), (uint64_t)-EINVAL);
	/* over the reader's bound */
	CHECK_EQ_U64(guest_cache_get(id, "orc", 2, &d, &len, w, sizeof(w)), (uint64_t)-EFBIG);
	char path[300];
	snprintf(path, sizeof(path), "%s/guest-kernels/%s.orc", dir, id);
	unlink(path);
	snprintf(path, sizeof(path), "%s/guest-kernels", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	kallsyms_entry();
	keys();
	return unit_done();
}
