// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: DWARF line tables and scopes are hostile
 * (src/symbols/lines.c: the CU range table, the per-CU inline segment
 * tables, the path cache; src/symbols/dwsect.c: compressed sections
 * rebuilt into a file for libdw). The input is a whole ELF file (seeds:
 * a small -g program, its copy with zlib-compressed debug sections, one
 * without .debug_aranges so lookups take the CU range table), copied to
 * a buffer of exactly its size and opened from memory as an embedded
 * image is; then every 4th byte of each executable section (at most
 * 4096 lookups), each section's end, and 8 addresses taken from the
 * input's last 64 bytes are looked up, twice (the second time through
 * the tables the first built).
 * Any crash, sanitizer report or hang is a bug, and so is an answer
 * that differs between the two passes, a line without a file, or a
 * file name that is not its path's tail (abort).
 *
 * With FUZZ_LINES_VERBOSE set, each input prints "fuzz-lines: N
 * lookups, M lines, K inlined" and the first 8 answers (and the first
 * 4 in inlined code) as "ADDR FILE:LINE [INLINED CALL_FILE:CALL_LINE]"
 * on stderr
 * (tests/e2e/fuzz-lines.sh checks its seeds' known answers with it).
 */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "symbols/symbols.h"

#define MAX_LOOKUPS 4096

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check(const struct sym_srcline *x, const struct sym_srcline *y)
{
	if (!same(x->file, y->file) || !same(x->path, y->path) || x->line != y->line ||
	    !same(x->inlined, y->inlined) || !same(x->call_file, y->call_file) ||
	    x->call_line != y->call_line || x->has_table != y->has_table)
		abort();
	if (x->file && (!x->path || strlen(x->file) > strlen(x->path) ||
			strcmp(x->path + strlen(x->path) - strlen(x->file), x->file)))
		abort();
}

/* the addresses to look up: through every executable section */
static size_t addresses(const uint8_t *buf, size_t len, uint64_t *a, size_t max)
{
	size_t n = 0;
	Elf *e = elf_memory((char *)buf, len);
	if (!e)
		return 0;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 256 && n < max && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		uint64_t step = sh.sh_size / 4 + 1 > max ? sh.sh_size / max + 1 : 4;
		for (uint64_t o = 0; o < sh.sh_size && n < max; o += step)
			a[n++] = sh.sh_addr + o;
		if (n < max)
			a[n++] = sh.sh_addr + sh.sh_size;
	}
	elf_end(e);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t a[MAX_LOOKUPS + 8];
	elf_version(EV_CURRENT);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	size_t n = addresses(buf, size, a, MAX_LOOKUPS);
	for (size_t k = 0; k < 8 && size >= 64; k++) {
		uint64_t v = 0;
		memcpy(&v, data + size - 64 + 8 * k, 8);
		a[n++] = v;
	}
	void *L = lines_open_buffer(buf, size);
	bool verbose = getenv("FUZZ_LINES_VERBOSE") != NULL;
	size_t found = 0, inl = 0, shown = 0, shown_inl = 0;
	struct sym_srcline *first = calloc(n ? n : 1, sizeof(*first));
	for (int pass = 0; pass < 2 && first; pass++)
		for (size_t i = 0; i < n; i++) {
			struct sym_srcline r;
			bool ok = lines_lookup(L, a[i], &r);
			if (ok && !r.file)
				abort();
			if (pass) {
				check(&first[i], &r);
				continue;
			}
			first[i] = r;
			found += ok;
			inl += ok && r.inlined;
			if (verbose && ok && (shown < 8 || (r.inlined && shown_inl < 4))) {
				shown++;
				shown_inl += r.inlined != NULL;
				fprintf(stderr, "%#llx %s:%u", (unsigned long long)a[i], r.file, r.line);
				if (r.inlined)
					fprintf(stderr, " [%s %s:%u]", r.inlined, r.call_file ? r.call_file : "?",
						r.call_line);
				fputc('\n', stderr);
			}
		}
	if (verbose)
		fprintf(stderr, "fuzz-lines: %zu lookups, %zu lines, %zu inlined%s\n", n, found, inl,
			L ? "" : ", no line tables");
	free(first);
	lines_free(L);
	free(buf);
	return 0;
}
