// SPDX-License-Identifier: MIT
/*
 * test-tool guest-read MEMSPEC ADDR LEN OUT: LEN bytes of guest virtual
 * memory at ADDR (hex) written to OUT, read through the same backends as
 * the other guest subcommands (guestmem.h) but not through the recorder:
 * the independent view the annotate check compares with
 * (tests/vm/test-guest-chains.sh). LEN at most 1 MiB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestmem.h"
#include "test-tool.h"

int cmd_guest_read(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: test-tool guest-read MEMSPEC ADDR LEN OUT\n");
		return 2;
	}
	char *end;
	unsigned long long addr = strtoull(argv[2], &end, 16);
	unsigned long len = strtoul(argv[3], &end, 0);
	if (!len || len > (1u << 20)) {
		fprintf(stderr, "guest-read: LEN must be 1..1048576\n");
		return 2;
	}
	struct guest_mem m;
	struct tt_mem *t = tt_mem_open(argv[1], &m);
	if (!t)
		return 1;
	unsigned char *buf = malloc(len);
	size_t chunk = m.chunk ? m.chunk : 1024;
	int r = buf ? 0 : -ENOMEM;
	for (size_t off = 0; r == 0 && off < len; off += chunk)
		r = m.read(m.ctx, addr + off, buf + off, len - off < chunk ? len - off : chunk);
	tt_mem_close(t);
	FILE *f = r == 0 ? fopen(argv[4], "wb") : NULL;
	if (r || !f || fwrite(buf, 1, len, f) != len) {
		fprintf(stderr, "guest-read: %s\n", r ? strerror(-r) : strerror(errno));
		if (f)
			fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	free(buf);
	return 0;
}
