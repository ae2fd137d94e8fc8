// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: guest memory is hostile. The input is a fake guest:
 * its first byte picks where _text is (bits 0-2: one of 8 steps of 2 MiB
 * from 0xffffffff81000000) and the reader's chunk size (bits 3-4); the
 * rest is the memory at _text + 2 MiB (where the read-only data, with the
 * kallsyms tables and the build-id note, is searched). 8 bytes at _text
 * are mapped (zeros); everything else reads as unmapped. With bit 5 set,
 * the second byte's low 6 bits are the number of 2 MiB steps (1 to 63;
 * 0 counts as 1) from _text to the memory, which is the rest, and
 * everything from _text to it reads as zeros: a real kernel's read-only
 * data at its own place (tests/e2e/lib/kernel-seeds.py cuts such seeds
 * from the matrix's vmlinux files). guest_kimage_find, guest_ksyms_read
 * (and guest_ksyms_reuse at the places it found, which must give the same
 * table, and at the places a forged cache entry names) and
 * guest_kernel_buildid and guest_kernel_version (at the read-only data's
 * start) run on it under a small read budget; any crash,
 * sanitizer report or text not matching the count it claims is a bug.
 *
 * With FUZZ_KSYMS_VERBOSE set, each input's result is printed on stderr
 * (the count, layout, a digest of the text and where the token table
 * was: tests/e2e/fuzz-ksyms.sh checks that its seeds decode, and that a
 * corrupted one is refused or decodes to another text).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/cache.h"
#include "guest/ksyms.h"
#include "util/sha256.h"

struct fake {
	uint64_t text;
	uint64_t ro;            /* where data is mapped */
	const uint8_t *data;
	size_t size;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	uint64_t ro = f->ro;
	uint64_t zeros = ro > f->text + GUEST_KIMAGE_ALIGN ? ro : f->text + 8;
	if (addr >= f->text && addr + len <= zeros && addr + len >= addr) {
		memset(buf, 0, len);
		return 0;
	}
	if (addr < ro || addr - ro > f->size || len > f->size - (addr - ro))
		return -EFAULT;
	memcpy(buf, f->data + (addr - ro), len);
	return 0;
}

/* The host cache's kallsyms entry is read back from a file: the input,
 * after a valid header, moved to another boot. */
static void cache_entry(struct guest_mem *m, const struct guest_kimage *img, const uint8_t *data, size_t size)
{
	static const char head[] = "# domprof guest kallsyms 2 text=ffffffff81000000 lo=1000000 hi=1200000 "
		"num_syms=1000008 markers=1080000 mwidth=4 ti=10a0000 addrs=1000010 relbase=1100000 nsyms=3 "
		"sha256=0101010101010101010101010101010101010101010101010101010101010101\n";
	struct guest_ksyms_src src;
	char *buf = malloc(sizeof(head) - 1 + size);
	if (!buf)
		return;
	memcpy(buf, head, sizeof(head) - 1);
	memcpy(buf + sizeof(head) - 1, data, size);
	size_t len, n;
	char *t = guest_cache_kallsyms_decode(buf, sizeof(head) - 1 + size, GUEST_LINK_TEXT + 0x200000, &src, &len, &n);
	if (t && len > size + 64)
		abort();
	bool decoded = t != NULL;
	free(t);
	/* the places a forged entry names, read from the fuzzed memory */
	if (decoded && img) {
		struct guest_ksyms k;
		char why[256];
		if (guest_ksyms_reuse(m, img, &src, &k, why, sizeof(why)) == 0)
			guest_ksyms_free(&k);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const size_t chunks[4] = { 2032, 64, 4096, 1 };
	struct fake f = {
		.text = GUEST_LINK_TEXT + (uint64_t)(data[0] & 7) * GUEST_KIMAGE_ALIGN,
		.data = data + 1,
		.size = size - 1,
	};
	f.ro = f.text + GUEST_KIMAGE_ALIGN;
	if ((data[0] & 32) && size >= 2) {
		unsigned steps = data[1] & 63;
		f.ro = f.text + (uint64_t)(steps ? steps : 1) * GUEST_KIMAGE_ALIGN;
		f.data = data + 2;
		f.size = size - 2;
	}
	struct guest_mem m = {
		.read = fake_read,
		.ctx = &f,
		.chunk = chunks[(data[0] >> 3) & 3],
		.budget = 64u << 20,
	};
	bool verbose = getenv("FUZZ_KSYMS_VERBOSE") != NULL;
	char why[256];
	struct guest_kimage img;
	uint64_t rip = f.text + 0x100;
	if (guest_kimage_find(&m, &rip, 1, &img, why, sizeof(why)) < 0) {
		if (verbose)
			fprintf(stderr, "fuzz-ksyms: image: %s\n", why);
		cache_entry(&m, NULL, data, size);
		return 0;
	}
	cache_entry(&m, &img, data, size);
	if (img.text != f.text)
		abort();
	struct guest_ksyms k;
	int r = guest_ksyms_read(&m, &img, &k, why, sizeof(why));
	if (r == 0) {
		size_t lines = 0;
		for (size_t i = 0; i < k.len; i++)
			lines += k.text[i] == '\n';
		if (lines != k.nsyms || k.len > GUEST_KSYMS_MAX_TEXT)
			abort();
		if (verbose) {
			uint8_t d[SHA256_LEN];
			sha256(k.text, k.len, d);
			fprintf(stderr, "fuzz-ksyms: decoded %zu symbols, layout %s, bytes %llu, text sha256 "
				"%02x%02x%02x%02x%02x%02x%02x%02x, tokens at +0x%llx\n", k.nsyms, k.layout,
				(unsigned long long)m.bytes, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7],
				(unsigned long long)(k.tokens_at - f.ro));
		}
		/* the cache's reuse of the places found, on the same memory,
		 * must give the same table */
		struct guest_ksyms k2;
		if (guest_ksyms_reuse(&m, &img, &k.src, &k2, why, sizeof(why)) == 0) {
			if (k2.nsyms != k.nsyms || k2.len != k.len || memcmp(k2.text, k.text, k.len))
				abort();
			guest_ksyms_free(&k2);
		} else if (verbose) {
			fprintf(stderr, "fuzz-ksyms: reuse refused: %s\n", why);
		}
		guest_ksyms_free(&k);
	} else if (verbose) {
		fprintf(stderr, "fuzz-ksyms: refused: %s\n", why);
	}
	/* the banner's version word, as the refusal lines read it: printable,
	 * bounded, "" when refused */
	uint64_t banner = k.rodata ? k.rodata : img.text;
	char ver[64];
	r = guest_kernel_version(&m, banner, ver, sizeof(ver));
	size_t vl = strnlen(ver, sizeof(ver));
	if (vl == sizeof(ver) || (r == 0) != (vl > 0))
		abort();
	for (size_t i = 0; i < vl; i++)
		if (ver[i] <= ' ' || ver[i] >= 0x7f)
			abort();
	char hex[41];
	r = guest_kernel_buildid(&m, &img, hex, why, sizeof(why));
	if (r == 0 && strlen(hex) != 40)
		abort();
	if (verbose)
		fprintf(stderr, "fuzz-ksyms: build id %s\n", r == 0 ? hex : why);
	return 0;
}
