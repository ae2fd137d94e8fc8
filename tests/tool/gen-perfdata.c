// SPDX-License-Identifier: MIT
/*
 * test-tool gen-perfdata OUT [pipe] [compress] [guest] [samples=N]: a
 * perf.data of the known shape of tests/unit/perfgen.h, written from
 * perf's documented format (not by perf): the perf kvm files this
 * machine cannot record (guest: guest-kernel samples of QEMU pid 4242 at
 * addresses of PG_GUEST_KALLSYMS, which `gen-perfdata --kallsyms` prints),
 * the fuzzer's seeds, the pipe and compressed forms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/perfgen.h"
#include "test-tool.h"

int cmd_gen_perfdata(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--kallsyms")) {
		fputs(PG_GUEST_KALLSYMS, stdout);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: test-tool gen-perfdata OUT [pipe] [compress] [guest] [samples=N] | --kallsyms\n");
		return 2;
	}
	struct pg_opts o = { 0 };
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "pipe"))
			o.pipe = 1;
		else if (!strcmp(argv[i], "compress"))
			o.compress = 1;
		else if (!strcmp(argv[i], "guest"))
			o.guest = 1;
		else if (!strncmp(argv[i], "samples=", 8))
			o.samples = (unsigned)strtoul(argv[i] + 8, NULL, 10);
		else {
			fprintf(stderr, "test-tool gen-perfdata: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	uint8_t *b;
	size_t n = pg_build(&o, &b);
	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "test-tool gen-perfdata: cannot write '%s'\n", argv[1]);
		free(b);
		return 1;
	}
	free(b);
	return 0;
}
