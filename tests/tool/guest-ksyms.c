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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest/ksyms.h"
#include "guestmem.h"
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

int cmd_guest_ksyms(int argc, char **argv)
{
	const char *spec = NULL;
	bool buildid = false;
	struct flip f = { 0 };
	uint64_t rips[8];
	size_t nrips = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--buildid"))
			buildid = true;
		else if (!strcmp(argv[i], "--flip") && i + 1 < argc) {
			f.addr = strtoull(argv[++i], NULL, 0);
			f.on = true;
		} else if (!strcmp(argv[i], "--rip") && i + 1 < argc && nrips < 8)
			rips[nrips++] = strtoull(argv[++i], NULL, 0);
		else if (!spec && argv[i][0] != '-')
			spec = argv[i];
		else {
			fprintf(stderr, "usage: test-tool guest-ksyms MEMSPEC [--buildid] [--rip ADDR] [--flip ADDR]\n");
			return 2;
		}
	}
	if (!spec) {
		fprintf(stderr, "usage: test-tool guest-ksyms MEMSPEC [--buildid] [--rip ADDR] [--flip ADDR]\n");
		return 2;
	}
	struct guest_mem m;
	struct tt_mem *t = tt_mem_open(spec, &f.inner);
	if (!t)
		return 1;
	m = f.inner;
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
