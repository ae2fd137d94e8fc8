// SPDX-License-Identifier: MIT
/*
 * test-tool symtab get IN DOMAIN OUT
 *     Write the kallsyms table embedded for domain DOMAIN (by name) to OUT.
 * test-tool symtab set IN DOMAIN FILE OUT
 *     Copy recording IN to OUT with that table (kallsyms text, its delta
 *     form or the kernel symbol index) replaced by FILE's text:
 *     the same samples under another symbol table, so two views of one
 *     recording can be compared (tests/vm/test-guest-kernels.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "test-tool.h"
#include "util/file.h"

static int domain_id(struct dp_reader *r, const char *name, uint32_t *id)
{
	struct dp_record rec;
	int found = -1;
	while (found < 0 && dp_reader_next(r, &rec) == 1)
		if (rec.type == DP_REC_DOMAIN && !strcmp(rec.u.domain.name, name)) {
			*id = rec.u.domain.id;
			found = 0;
		}
	dp_reader_rewind(r);
	return found;
}

static bool is_table(const struct dp_record *rec, uint32_t id)
{
	return rec->type == DP_REC_SYMTAB && rec->domain == id &&
	       (rec->u.symtab.kind == DP_SYMTAB_KALLSYMS || rec->u.symtab.kind == DP_SYMTAB_KALLSYMS_DELTA ||
		rec->u.symtab.kind == DP_SYMTAB_KSYMIDX);
}

int cmd_symtab(int argc, char **argv)
{
	bool set = argc == 6 && !strcmp(argv[1], "set");
	if (!set && !(argc == 5 && !strcmp(argv[1], "get"))) {
		fprintf(stderr, "usage: test-tool symtab get IN DOMAIN OUT | set IN DOMAIN FILE OUT\n");
		return 2;
	}
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(argv[2], &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "test-tool: %s: %s\n", argv[2], msg);
		return 1;
	}
	uint32_t id;
	if (domain_id(r, argv[3], &id) < 0) {
		fprintf(stderr, "test-tool: %s: no domain %s\n", argv[2], argv[3]);
		dp_reader_free(r);
		return 1;
	}
	const char *out = argv[set ? 5 : 4];
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "test-tool: %s: %s\n", out, strerror(errno));
		dp_reader_free(r);
		return 1;
	}
	struct dp_record rec;
	int rc = 1;
	if (!set) {
		while (dp_reader_next(r, &rec) == 1)
			if (is_table(&rec, id) && rec.u.symtab.kind == DP_SYMTAB_KALLSYMS && rec.u.symtab.data) {
				rc = write(fd, rec.u.symtab.data, rec.u.symtab.size) == (ssize_t)rec.u.symtab.size ? 0 : 1;
				break;
			}
		close(fd);
		if (rc)
			fprintf(stderr, "test-tool: %s: no kallsyms table for %s\n", argv[2], argv[3]);
		dp_reader_free(r);
		return rc;
	}
	char *text;
	size_t len;
	if (file_read_all(argv[4], 1u << 30, &text, &len) < 0) {
		fprintf(stderr, "test-tool: cannot read %s\n", argv[4]);
		close(fd);
		dp_reader_free(r);
		return 1;
	}
	struct dp_header h = *dp_reader_header(r);
	struct dp_writer_opts o = { .zstd_level = 3 };
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	rc = w ? 0 : err;
	unsigned replaced = 0;
	while (!rc && dp_reader_next(r, &rec) == 1) {
		if (is_table(&rec, id)) {
			struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
						.data = (const uint8_t *)text, .size = len };
			rc = dp_write_symtab(w, id, &st);
			replaced++;
		} else {
			rc = dp_write_raw(w, rec.domain, rec.raw, rec.raw_len);
		}
	}
	if (w) {
		int fr = dp_writer_finish(w);
		rc = rc ? rc : fr;
	}
	free(text);
	dp_reader_free(r);
	if (rc || !replaced) {
		fprintf(stderr, "test-tool: %s: %s\n", out, rc ? strerror(-rc) : "no kallsyms table to replace");
		return 1;
	}
	return 0;
}
