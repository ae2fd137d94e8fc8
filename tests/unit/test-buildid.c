// SPDX-License-Identifier: MIT
/* sym_read_build_id (symbols/buildid.c) on real files: this test binary
 * (gcc on Debian always links a 20-byte GNU build-id), a non-ELF file and
 * a missing one. The id must match what the kernel reports for our own
 * executable mapping is checked end to end by tests/e2e/record-command. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "symbols/buildid.h"
#include "unit.h"

int main(void)
{
	uint8_t id[20], id2[20], len = 99, len2 = 0;
	CHECK(sym_read_build_id("/proc/self/exe", id, &len) == 0);
	CHECK(len == 20);
	int nonzero = 0;
	for (int i = 0; i < len; i++)
		nonzero |= id[i];
	CHECK(nonzero);
	CHECK(sym_read_build_id("/proc/self/exe", id2, &len2) == 0 && len2 == len && !memcmp(id, id2, len));

	char tmpl[] = "/tmp/test-buildid-XXXXXX";
	int fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "not an ELF file\n", 16) == 16);
		close(fd);
		CHECK(sym_read_build_id(tmpl, id, &len) == -ENOEXEC && len == 0);
		unlink(tmpl);
	}
	CHECK(sym_read_build_id("/nonexistent/file", id, &len) == -ENOENT && len == 0);
	return unit_done();
}
