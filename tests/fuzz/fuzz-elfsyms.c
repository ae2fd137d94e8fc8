// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an ELF image's symbols are hostile (src/symbols/elf.c;
 * a recording embeds ELF copies, and any file on the machine can be
 * crafted). The input is a whole file, read from memory: elf_load reads
 * its notes and its .symtab/.dynsym (ELF64 tables in place, names from
 * the string table's bytes; others through libelf), elf_load_probe looks
 * for a name in its string tables, and the table is finished and looked
 * up at every symbol's start and end; the same bytes are also read as a
 * perf map (perfmap_parse) and that table checked alike. Any crash or sanitizer report is a
 * bug, and so is a finished table that is not sorted, has an entry that
 * ends before it starts or whose name is not a NUL-terminated string of
 * its arena, a lookup at a sized entry's start that finds no entry
 * covering it, or a probe that does not find a name the table holds
 * (abort).
 *
 * With FUZZ_ELFSYMS_VERBOSE set, each input prints "fuzz-elfsyms: N
 * symbols, probe P" and its first 8 "sym START NAME" on stderr
 * (tests/e2e/fuzz-elfsyms.sh checks its seeds' known answers with it).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

/* elf_load_debug's, which this target does not reach (elf.c links it):
 * debuginfod is a session's, and its answers are files, not input here */
const char *sym_debuginfod(struct sym_session *s, const uint8_t *bid, uint8_t len)
{
	(void)s;
	(void)bid;
	(void)len;
	abort();
}

/* the kallsyms and modules loaders' (textsyms.c links them), which this
 * target does not reach: perfmap_parse warns nobody */
void sym_warn(struct sym_session *s, const char *fmt, ...)
{
	(void)s;
	(void)fmt;
	abort();
}

/* The invariants of a finished table (see the header); returns a short
 * name it holds, or NULL. */
static const char *check_table(const struct sym_table *t, bool verbose)
{
	const char *first = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct sym_entry *e = &t->v[i];
		const char *name = e->u.name;
		if ((i && e->start < t->v[i - 1].start) || e->end < e->start)
			abort();
		if (!name || name < t->arena || name >= t->arena + t->alen ||
		    !memchr(name, '\0', (size_t)(t->arena + t->alen - name)))
			abort();
		/* a sized entry's start is found, inside what is found */
		const struct sym_entry *f = symtab_find(t, e->start);
		if (e->end > e->start && (!f || f->start > e->start || e->start >= f->end))
			abort();
		(void)symtab_find(t, e->end);
		if (!first && *name && strlen(name) < 64)
			first = name;
		if (verbose && i < 8)
			fprintf(stderr, "sym 0x%llx %s\n", (unsigned long long)e->start, name);
	}
	return first;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool verbose = getenv("FUZZ_ELFSYMS_VERBOSE") != NULL;
	uint8_t *buf = malloc(size ? size : 1);   /* exactly its size for ASan */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct elf_info info;
	struct sym_table t;
	symtab_init(&t);
	int n = elf_load(NULL, buf, size, &info, &t, 0);
	elf_info_release(&info);
	symtab_finish(&t, 0);
	const char *first = check_table(&t, verbose);
	int probe = -1;
	if (first) {
		/* a name the table holds is in one of the string tables */
		char name[64];
		snprintf(name, sizeof(name), "%s", first);
		struct elf_info pi;
		elf_load_probe(NULL, buf, size, &pi, name);
		probe = pi.probed && pi.probe_hit;
		elf_info_release(&pi);
		if (pi.probed && !pi.probe_hit)
			abort();
	}
	if (verbose)
		fprintf(stderr, "fuzz-elfsyms: %zu symbols (load %d), probe %d\n", t.n, n, probe);
	symtab_release(&t);
	/* the same bytes as a perf map ("START SIZE name" lines): recordings
	 * embed them and /tmp holds them, both hostile */
	struct sym_table pm;
	symtab_init(&pm);
	perfmap_parse((const char *)buf, size, &pm);
	symtab_finish(&pm, 0);
	(void)check_table(&pm, false);
	symtab_release(&pm);
	free(buf);
	return 0;
}
