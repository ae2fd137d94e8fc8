// SPDX-License-Identifier: MIT
/*
 * test-tool guest-ksyms MEMSPEC [--buildid] [--rip ADDR] [--flip ADDR]:
 * finds the guest kernel image in a memory backend (guestmem.h), decodes
 * its kallsyms tables from memory (src/guest/ksyms.c) and prints the
 * /proc/kallsyms-style text on stdout, or with --buildid the image's
 * GNU build id. One stats line on stderr: symbols, bytes and reads of
 * guest memory, the time taken (the time a live VM stayed stopped) and
 * the layout decoded. --flip ADDR inverts one byte the decoder reads at
 * ADDR (the corrupted-image controls); --rip ADDR adds a kernel rip the
 * image must contain.
 *
 * --reuse [SPEC2]: the host cache's path (guest_ksyms_reuse): the tables
 * are decoded as above (no flip), then decoded again where that decode
 * found them, from SPEC2 (another backend, e.g. another shift; default
 * the same memory) with --flip applied there; prints that second table,
 * and a "reuse:" line with its result, bytes and reads and whether the
 * two tables are equal (moved to one _text). Exit 1 when the reuse is
 * refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest/cache.h"
#include "guest/ksyms.h"
#include "guestmem.h"
#include "util/file.h"
#include "test-tool.h"

struct flip {
	struct guest_mem inner;
	uint64_t addr;
	bool on;
};

static int flip_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct flip *f = ctx;
	int r = f->inner.read(f->inner.ctx, addr, buf, len);
	if (r == 0 && f->on && f->addr >= addr && f->addr - addr < len)
		((unsigned char *)buf)[f->addr - addr] ^= 0xff;
	return r;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The second decode of --reuse (see the head comment). */
static int reuse_check(const struct guest_ksyms *k, struct flip *f, const char *spec2, const uint64_t *rips,
		       size_t nrips)
{
	struct flip f2 = { .addr = f->addr, .on = f->on };
	struct tt_mem *t2 = NULL;
	if (spec2) {
		if (!(t2 = tt_mem_open(spec2, &f2.inner)))
			return 1;
	} else {
		f2.inner = f->inner;
	}
	struct guest_mem m = f2.inner;
	m.read = flip_read;
	m.ctx = &f2;
	char why[256] = "";
	struct guest_kimage img;
	struct guest_ksyms k2;
	int r = guest_kimage_find(&m, rips, nrips, &img, why, sizeof(why));
	uint64_t b0 = m.bytes, r0 = m.reads;
	/* the entry as the cache writes and reads it: the first table moved
	 * to this _text, and where the tables were */
	size_t n, len, ns;
	struct guest_ksyms_src src;
	char *e = guest_cache_kallsyms_encode(k->text, k->len, k->text_addr, &k->src, &n);
	char *moved = guest_cache_kallsyms_decode(e, n, img.text, &src, &len, &ns);
	free(e);
	if (r == 0 && !moved) {
		snprintf(why, sizeof(why), "the entry written does not read back");
		r = -EINVAL;
	}
	if (r == 0)
		r = guest_ksyms_reuse(&m, &img, &src, &k2, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "reuse: refused (%s): %s bytes=%" PRIu64 " reads=%" PRIu64 "\n",
			r == -ESTALE ? "stale" : r == -EBADMSG ? "bad" : "error", why, m.bytes - b0, m.reads - r0);
		free(moved);
		tt_mem_close(t2);
		return 1;
	}
	bool same = moved && len == k2.len && !memcmp(moved, k2.text, len);
	fwrite(k2.text, 1, k2.len, stdout);
	fprintf(stderr, "reuse: ok symbols=%zu bytes=%" PRIu64 " reads=%" PRIu64 " span=%" PRIu64
		" same=%d layout=%s\n", k2.nsyms, m.bytes - b0, m.reads - r0, k->src.hi - k->src.lo, same, k2.layout);
	free(moved);
	guest_ksyms_free(&k2);
	tt_mem_close(t2);
	return 0;
}

int cmd_guest_ksyms(int argc, char **argv)
{
	const char *spec = NULL;
	bool buildid = false;
	struct flip f = { 0 };
	uint64_t rips[8];
	size_t nrips = 0;
	bool reuse = false;
	const char *spec2 = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--buildid"))
			buildid = true;
		else if (!strcmp(argv[i], "--reuse")) {
			reuse = true;
			if (i + 1 < argc && argv[i + 1][0] != '-')
				spec2 = argv[++i];
		}
		else if (!strcmp(argv[i], "--flip") && i + 1 < argc) {
			f.addr = strtoull(argv[++i], NULL, 0);
			f.on = true;
		} else if (!strcmp(argv[i], "--rip") && i + 1 < argc && nrips < 8)
			rips[nrips++] = strtoull(argv[++i], NULL, 0);
		else if (!spec && argv[i][0] != '-')
			spec = argv[i];
		else {
			fprintf(stderr, "usage: test-tool guest-ksyms MEMSPEC [--buildid] [--rip ADDR] [--flip ADDR] [--reuse [SPEC2]]\n");
			return 2;
		}
	}
	if (!spec) {
		fprintf(stderr, "usage: test-tool guest-ksyms MEMSPEC [--buildid] [--rip ADDR] [--flip ADDR] [--reuse [SPEC2]]\n");
		return 2;
	}
	struct guest_mem m;
	struct tt_mem *t = tt_mem_open(spec, &f.inner);
	if (!t)
		return 1;
	m = f.inner;
	bool flip2 = f.on;
	if (reuse)
		f.on = false;   /* the first decode is of the clean tables */
	m.read = flip_read;
	m.ctx = &f;
	nrips += tt_mem_krips(t, rips + nrips, 8 - nrips);
	char why[256] = "";
	struct guest_kimage img;
	double t0 = now_ms();
	int r = guest_kimage_find(&m, rips, nrips, &img, why, sizeof(why));
	int rc = 0;
	if (r < 0) {
		fprintf(stderr, "test-tool: guest-ksyms: %s\n", why);
		rc = 1;
	} else if (buildid) {
		char hex[41];
		r = guest_kernel_buildid(&m, &img, hex, why, sizeof(why));
		double ms = now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "test-tool: guest-ksyms: %s\n", why);
			rc = 1;
		} else {
			printf("%s\n", hex);
			fprintf(stderr, "guest-ksyms: build-id %s text=0x%" PRIx64 " bytes=%" PRIu64
				" reads=%" PRIu64 " ms=%.1f\n", hex, img.text, m.bytes, m.reads, ms);
		}
	} else {
		struct guest_ksyms k;
		r = guest_ksyms_read(&m, &img, &k, why, sizeof(why));
		double ms = now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "test-tool: guest-ksyms: %s (bytes=%" PRIu64 " reads=%" PRIu64 ")\n",
				why, m.bytes, m.reads);
			rc = 1;
		} else if (reuse) {
			f.on = flip2;
			rc = reuse_check(&k, &f, spec2, rips, nrips);
			guest_ksyms_free(&k);
		} else {
			fwrite(k.text, 1, k.len, stdout);
			fprintf(stderr, "guest-ksyms: symbols=%zu bytes=%" PRIu64 " reads=%" PRIu64
				" ms=%.1f text=0x%" PRIx64 " kaslr=0x%" PRIx64 " delta=0x%" PRIx64
				" rodata=0x%" PRIx64 " tables=0x%" PRIx64 " tokens=0x%" PRIx64 " version=%s layout=%s\n",
				k.nsyms, m.bytes, m.reads, ms, k.text_addr, k.kaslr_offset, k.delta,
				k.rodata, k.tables_at, k.tokens_at, k.version, k.layout);
			guest_ksyms_free(&k);
		}
	}
	tt_mem_close(t);
	return rc;
}

/* test-tool guest-cache-kallsyms ENTRY TEXT-ADDR: what a host cache
 * kallsyms entry holds (the VM tests' control that a forged entry is
 * well-formed: the decoder alone takes it). */
int cmd_guest_cache_kallsyms(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-tool guest-cache-kallsyms ENTRY TEXT-ADDR\n");
		return 2;
	}
	char *data;
	size_t dl, len, n;
	if (file_read_all(argv[1], 256u << 20, &data, &dl) < 0) {
		fprintf(stderr, "test-tool guest-cache-kallsyms: cannot read %s\n", argv[1]);
		return 1;
	}
	struct guest_ksyms_src src;
	char *t = guest_cache_kallsyms_decode(data, dl, strtoull(argv[2], NULL, 0), &src, &len, &n);
	free(data);
	if (!t) {
		fprintf(stderr, "test-tool guest-cache-kallsyms: %s: not an entry\n", argv[1]);
		return 1;
	}
	fwrite(t, 1, len, stdout);
	fprintf(stderr, "guest-cache-kallsyms: %zu symbols, span %" PRIu64 " bytes\n", n, src.hi - src.lo);
	free(t);
	return 0;
}
