// SPDX-License-Identifier: MIT
/*
 * test-tool guest-modules [--shift-kallsyms N] MEM KALLSYMS: the guest's
 * module symbols as src/guest/modules.c reads them from guest memory
 * (MEM: guestmem.h's vmlinux:PATH or gdb:SOCKET), printed as the
 * "ADDR t name\t[module]" lines it makes. KALLSYMS is a kallsyms text of
 * the same boot (the VM tests' ttyS1 copy, CRLF endings are fine): only
 * its kernel lines (no [module]) are used, to find `modules`, `init_task`,
 * `__start_BTF` ... for guest_layout_read. --shift-kallsyms adds N to the
 * struct module.kallsyms offset BTF gave (a wrong layout, the VM test's
 * control). On stderr: one line of counts ("guest-modules: 1 modules, 465
 * symbols, 0 skipped; walk read 21624 bytes in 15 reads (2100 us); layout
 * read ...") and the walk's note when it has one. Exit 0 when the walk
 * returned 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/layout.h"
#include "guest/modules.h"
#include "guestmem.h"
#include "symbols/kallsyms.h"
#include "test-tool.h"
#include "util/clock.h"
#include "util/file.h"

struct ksyms_text { const char *p; size_t len; };

static uint64_t text_sym(void *ctx, const char *name)
{
	const struct ksyms_text *t = ctx;
	return kallsyms_lookup(t->p, t->len, name);
}

int cmd_guest_modules(int argc, char **argv)
{
	long shift = 0;
	int a = 1;
	if (argc >= 3 && !strcmp(argv[1], "--shift-kallsyms")) {
		shift = strtol(argv[2], NULL, 0);
		a = 3;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: test-tool guest-modules [--shift-kallsyms N] vmlinux:PATH|gdb:SOCKET KALLSYMS\n");
		return 2;
	}
	char *text;
	size_t len;
	int r = file_read_all(argv[a + 1], 256u << 20, &text, &len);
	if (r < 0) {
		fprintf(stderr, "test-tool guest-modules: %s: %s\n", argv[a + 1], file_strerror(r));
		return 1;
	}
	struct ksyms_text kt = { text, len };
	struct guest_mem m;
	struct tt_mem *t = tt_mem_open(argv[a], &m);
	if (!t) {
		free(text);
		return 1;
	}
	struct guest_layout l;
	char why[256] = "";
	int rc = 1;
	r = guest_layout_read(&m, text_sym, &kt, &l, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "test-tool guest-modules: layout: %s\n", why);
		goto out;
	}
	uint64_t lbytes = m.bytes, lreads = m.reads;
	if (shift)
		l.mod_kallsyms = (uint32_t)((int64_t)l.mod_kallsyms + shift);
	struct guest_modsyms k;
	size_t skipped = 0;
	uint64_t t0 = mono_ns();
	r = guest_modules_read(&m, &l, &k, &skipped, why, sizeof(why));
	uint64_t dt_us = (mono_ns() - t0) / 1000;
	if (r < 0) {
		fprintf(stderr, "test-tool guest-modules: %s\n", why);
		goto out;
	}
	fwrite(k.text, 1, k.len, stdout);
	fprintf(stderr, "guest-modules: %zu modules, %zu symbols, %zu skipped; walk read %" PRIu64
		" bytes in %" PRIu64 " reads (%" PRIu64 " us); layout read %" PRIu64 " bytes in %" PRIu64 " reads\n",
		k.nmodules, k.nsyms, skipped, m.bytes - lbytes, m.reads - lreads, dt_us, lbytes, lreads);
	if (why[0])
		fprintf(stderr, "guest-modules: note: %s\n", why);
	guest_modsyms_free(&k);
	rc = 0;
out:
	tt_mem_close(t);
	free(text);
	return rc;
}
