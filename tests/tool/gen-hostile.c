// SPDX-License-Identifier: MIT
/*
 * test-tool gen-hostile KIND OUT ARGS...: hostile recordings for the
 * report-side bounds tests (tests/e2e/hostile-*.sh), written with the
 * real format writer. The kinds:
 *
 *   bomb OUT NDOM MIB     host domain 0 with a small, honest kallsyms
 *                         ("legit_func") and kernel samples; NDOM active
 *                         domains, each with a zstd kallsyms (delta form)
 *                         and an ELF for its binary's build-id, each
 *                         decompressing to MIB MiB, and kernel and user
 *                         samples hitting both. The frames are made once by
 *                         streaming compression of a repeated pattern, so
 *                         the file stays small (a decompression bomb).
 *   domains OUT NDOM NSAMPLES
 *                         NDOM active domains (DOMAIN, TASK and MMAP
 *                         records each) and NSAMPLES samples dealt round
 *                         robin, so every sample follows a DOMAIN_SWITCH.
 *   forks OUT NMAPS NFORKS [remap]
 *                         one process with NMAPS mappings forked NFORKS
 *                         times (children of children), a sample in each;
 *                         with "remap" each child maps one more page.
 *   tables OUT N          one active domain with N small embedded ELF
 *                         tables (not valid ELF) named by build-id and N
 *                         mappings of binaries with those build-ids, each
 *                         hit by a sample: every image looks up its table.
 *   fifo OUT PATH...      host samples in a mapping of each PATH (a FIFO,
 *                         a device in the test) and kernel samples named
 *                         by an embedded kallsyms ("legit_func").
 *   names OUT PID [perfmap]
 *                         terminal escapes in every name a text output
 *                         prints (tests/e2e/report-escapes.sh): host pid
 *                         PID named "\x1b]0;PWNED-TITLE" with samples in
 *                         anonymous memory (its JIT perf map's), in a
 *                         library whose path holds a CSI and in a kernel
 *                         symbol ending in an OSC 52; an active domain
 *                         named with a CSI whose process name holds one.
 *                         With "perfmap" the pid's perf map is embedded,
 *                         one symbol "jit_evil\x1b]0;TERMTITLE\x07";
 *                         without, the report looks for /tmp/perf-PID.map
 *                         (tests/e2e/report-perfmap-owner.sh).
 *
 * The writer has no call for an already compressed table, so the bomb's
 * SYMTAB records are laid out here as docs/file-format.md describes and
 * appended with dp_write_raw.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "format/format.h"
#include "../unit/fixture.h"
#include "test-tool.h"

#define KBASE 0xffffffff81000000ull

static void die(const char *what)
{
	fprintf(stderr, "gen-hostile: %s\n", what);
	exit(1);
}

/* One zstd frame of `raw` bytes made of `pat` repeated. */
static uint8_t *bomb_frame(const char *pat, size_t patlen, uint64_t raw, size_t *zlen)
{
	size_t unit = 65536 / patlen * patlen;
	char *in = malloc(unit);
	for (size_t i = 0; i < unit; i += patlen)
		memcpy(in + i, pat, patlen);
	size_t cap = 1 << 20, n = 0;
	uint8_t *out = malloc(cap);
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setPledgedSrcSize(cc, raw);
	uint64_t left = raw;
	for (;;) {
		size_t take = left < unit ? (size_t)left : unit;
		ZSTD_inBuffer ib = { in, take, 0 };
		ZSTD_EndDirective end = take == left ? ZSTD_e_end : ZSTD_e_continue;
		size_t r;
		do {
			if (cap - n < 65536)
				out = realloc(out, cap *= 2);
			ZSTD_outBuffer ob = { out, cap, n };
			r = ZSTD_compressStream2(cc, &ob, &ib, end);
			if (ZSTD_isError(r))
				die(ZSTD_getErrorName(r));
			n = ob.pos;
		} while (ib.pos < ib.size || (end == ZSTD_e_end && r));
		left -= take;
		if (end == ZSTD_e_end)
			break;
	}
	ZSTD_freeCCtx(cc);
	free(in);
	*zlen = n;
	return out;
}

static void put(uint8_t *p, const void *v, size_t n) { memcpy(p, v, n); }

/* A SYMTAB record (docs/file-format.md) holding a compressed frame. */
static void write_zsymtab(struct dp_writer *w, uint32_t dom, uint32_t kind, const char *name,
			  uint64_t raw, const uint8_t *z, size_t zlen)
{
	uint16_t nl = (uint16_t)(strlen(name) + 1);
	size_t head = (8 + 24 + 2 + nl + 7) & ~(size_t)7;
	size_t len = head + ((zlen + 7) & ~(size_t)7);
	uint8_t *p = calloc(1, len);
	uint16_t type = DP_REC_SYMTAB;
	uint32_t l32 = (uint32_t)len, comp = 1;
	uint64_t st = zlen;
	put(p, &type, 2);
	put(p + 4, &l32, 4);
	put(p + 8, &kind, 4);
	put(p + 12, &comp, 4);
	put(p + 16, &raw, 8);
	put(p + 24, &st, 8);
	put(p + 32, &nl, 2);
	put(p + 34, name, nl);
	put(p + head, z, zlen);
	if (dp_write_raw(w, dom, p, len) < 0)
		die("dp_write_raw");
	free(p);
}

static void legit_kallsyms(struct dp_writer *w, uint32_t dom)
{
	const char *k = "ffffffff81000000 T _text\nffffffff81000100 T legit_func\n"
			"ffffffff81000200 T legit_end\n";
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)k, .size = strlen(k) };
	if (dp_write_symtab(w, dom, &st) < 0)
		die("symtab");
}

static void sample(struct dp_writer *w, uint32_t dom, uint8_t mode, uint64_t ip, uint32_t pid)
{
	struct dp_sample s = { .ip = ip, .pid = pid, .tid = pid, .mode = mode, .period = 1000 };
	if (dp_write_sample(w, dom, &s) < 0)
		die("sample");
}

static void domain(struct dp_writer *w, uint32_t id, const char *name)
{
	struct dp_domain d = { .id = id, .kind = id ? DP_DOMAIN_ACTIVE : DP_DOMAIN_HOST,
			       .name = name, .address = "", .symsrc = "embedded" };
	if (dp_write_domain(w, &d) < 0)
		die("domain");
}

static void gen_bomb(struct dp_writer *w, unsigned ndom, uint64_t mib)
{
	uint64_t raw = mib << 20;
	size_t klen, elen;
	/* kallsyms in delta form: every line one symbol 16 bytes further */
	uint8_t *kz = bomb_frame("10 T bomb\n", 10, raw, &klen);
	uint8_t *ez = bomb_frame("\0", 1, raw, &elen);
	domain(w, 0, "host");
	legit_kallsyms(w, 0);
	for (int i = 0; i < 20; i++)
		sample(w, 0, DP_MODE_KERNEL, KBASE + 0x110, 1);
	for (unsigned d = 1; d <= ndom; d++) {
		char name[32];
		snprintf(name, sizeof(name), "bomb%u", d);
		domain(w, d, name);
		write_zsymtab(w, d, DP_SYMTAB_KALLSYMS_DELTA, "kallsyms", raw, kz, klen);
		struct dp_mmap m = { .pid = 7, .start = 0x400000, .len = 0x10000,
				     .buildid_len = 20, .path = "/usr/bin/bomb" };
		memset(m.buildid, 0xb0 + d, 20);
		char hex[41];
		for (int j = 0; j < 20; j++)
			snprintf(hex + 2 * j, 3, "%02x", m.buildid[j]);
		write_zsymtab(w, d, DP_SYMTAB_ELF, hex, raw, ez, elen);
		if (dp_write_mmap(w, d, &m) < 0)
			die("mmap");
		for (int i = 0; i < 10; i++) {
			sample(w, d, DP_MODE_KERNEL, KBASE + 0x1000 * (uint64_t)i, 7);
			sample(w, d, DP_MODE_USER, 0x401000 + (uint64_t)i, 7);
		}
	}
	free(kz);
	free(ez);
}

static void gen_domains(struct dp_writer *w, unsigned ndom, unsigned long nsamples)
{
	domain(w, 0, "host");
	for (unsigned d = 1; d <= ndom; d++) {
		char name[32];
		snprintf(name, sizeof(name), "d%u", d);
		domain(w, d, name);
	}
	for (unsigned d = 1; d <= ndom; d++) {
		struct dp_task t = { .pid = 5, .tid = 5, .comm = "app" };
		struct dp_mmap m = { .pid = 5, .start = 0x400000, .len = 0x10000, .path = "/nonexistent/app" };
		if (dp_write_task(w, d, &t) < 0 || dp_write_mmap(w, d, &m) < 0)
			die("task/mmap");
	}
	for (unsigned long i = 0; i < nsamples; i++) {
		uint32_t d = 1 + (uint32_t)(i % ndom);
		if (i & 1)
			sample(w, d, DP_MODE_USER, 0x401000 + (i / ndom) % 16, 5);
		else
			sample(w, d, DP_MODE_KERNEL, KBASE + 0x100 * ((i / ndom) % 16), 5);
	}
}

static void gen_forks(struct dp_writer *w, unsigned nmaps, unsigned nforks, bool remap)
{
	domain(w, 0, "host");
	struct dp_task t = { .pid = 100, .tid = 100, .comm = "forker" };
	if (dp_write_task(w, 0, &t) < 0)
		die("task");
	for (unsigned i = 0; i < nmaps; i++) {
		struct dp_mmap m = { .pid = 100, .start = 0x400000 + 0x2000 * (uint64_t)i, .len = 0x1000,
				     .path = "[forkmap]" };
		if (dp_write_mmap(w, 0, &m) < 0)
			die("mmap");
	}
	for (unsigned i = 0; i < nforks; i++) {
		struct dp_task f = { .kind = DP_TASK_FORK, .pid = 101 + i, .tid = 101 + i,
				     .ppid = 100 + i, .ptid = 100 + i };
		if (dp_write_task(w, 0, &f) < 0)
			die("fork");
		struct dp_mmap m = { .pid = 101 + i, .start = 0x100000, .len = 0x1000, .path = "[child]" };
		if (remap && dp_write_mmap(w, 0, &m) < 0)
			die("mmap");
		sample(w, 0, DP_MODE_USER, 0x400010, 101 + i);
	}
}

static void gen_tables(struct dp_writer *w, unsigned n)
{
	domain(w, 0, "host");
	domain(w, 1, "guest");
	for (unsigned i = 0; i < n; i++) {
		struct dp_mmap m = { .pid = 5, .start = 0x400000 + 0x2000 * (uint64_t)i, .len = 0x1000,
				     .buildid_len = 20 };
		char path[64], hex[41];
		snprintf(path, sizeof(path), "/usr/lib/t%u.so", i);
		m.path = path;
		memset(m.buildid, 0x5a, 20);
		memcpy(m.buildid, &i, sizeof(i));
		for (int j = 0; j < 20; j++)
			snprintf(hex + 2 * j, 3, "%02x", m.buildid[j]);
		struct dp_symtab st = { .kind = DP_SYMTAB_ELF, .name = hex,
					.data = (const uint8_t *)"not an ELF", .size = 10 };
		if (dp_write_symtab(w, 1, &st) < 0 || dp_write_mmap(w, 1, &m) < 0)
			die("table/mmap");
		sample(w, 1, DP_MODE_USER, m.start + 0x10, 5);
	}
}

static void gen_fifo(struct dp_writer *w, int n, char **paths)
{
	domain(w, 0, "host");
	legit_kallsyms(w, 0);
	struct dp_task t = { .pid = 9, .tid = 9, .comm = "fifoapp" };
	if (dp_write_task(w, 0, &t) < 0)
		die("task");
	for (int k = 0; k < n; k++) {
		uint64_t base = 0x400000 + 0x100000 * (uint64_t)k;
		struct dp_mmap m = { .pid = 9, .start = base, .len = 0x10000, .path = paths[k] };
		if (dp_write_mmap(w, 0, &m) < 0)
			die("mmap");
		for (int i = 0; i < 10; i++)
			sample(w, 0, DP_MODE_USER, base + 0x1000 + (uint64_t)i, 9);
	}
	for (int i = 0; i < 10; i++)
		sample(w, 0, DP_MODE_KERNEL, KBASE + 0x110, 9);
}

static void gen_names(struct dp_writer *w, uint32_t pid, bool perfmap)
{
	domain(w, 0, "host");
	const char *k = "ffffffff81000000 T _text\nffffffff81000100 T legit_func\n"
			"ffffffff81000200 T kevil\x1b]52;c;UFdORUQ=\x07\n"
			"ffffffff81000300 T legit_end\n";
	struct dp_symtab ks = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)k, .size = strlen(k) };
	if (dp_write_symtab(w, 0, &ks) < 0)
		die("symtab");
	if (perfmap) {
		char name[64], map[128];
		snprintf(name, sizeof(name), "/tmp/perf-%u.map", pid);
		snprintf(map, sizeof(map), "7f0000000000 100 jit_evil\x1b]0;TERMTITLE\x07\n");
		struct dp_symtab st = { .kind = DP_SYMTAB_PERFMAP, .name = name,
					.data = (const uint8_t *)map, .size = strlen(map) };
		if (dp_write_symtab(w, 0, &st) < 0)
			die("perfmap");
	}
	struct dp_task t = { .pid = pid, .tid = pid, .comm = "\x1b]0;PWNED-TITLE" };
	struct dp_mmap anon = { .pid = pid, .start = 0x7f0000000000ull, .len = 0x10000, .path = "//anon" };
	struct dp_mmap lib = { .pid = pid, .start = 0x400000, .len = 0x10000,
			       .path = "/nonexistent/lib\x1b[31mred.so" };
	if (dp_write_task(w, 0, &t) < 0 || dp_write_mmap(w, 0, &anon) < 0 || dp_write_mmap(w, 0, &lib) < 0)
		die("task/mmap");
	for (int i = 0; i < 20; i++)
		sample(w, 0, DP_MODE_USER, 0x7f0000000010ull + (uint64_t)i, pid);
	for (int i = 0; i < 5; i++) {
		sample(w, 0, DP_MODE_USER, 0x401000 + (uint64_t)i, pid);
		sample(w, 0, DP_MODE_KERNEL, KBASE + 0x210, pid);
	}
	domain(w, 1, "g\x1b[5mblink");
	struct dp_task gt = { .pid = 42, .tid = 42, .comm = "gproc\x1b[2J" };
	struct dp_mmap gm = { .pid = 42, .start = 0x400000, .len = 0x10000, .path = "/bin/g\x1b[7mapp" };
	if (dp_write_task(w, 1, &gt) < 0 || dp_write_mmap(w, 1, &gm) < 0)
		die("guest task/mmap");
	for (int i = 0; i < 5; i++)
		sample(w, 1, DP_MODE_USER, 0x401000 + (uint64_t)i, 42);
}

int cmd_gen_hostile(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test-tool gen-hostile bomb OUT NDOM MIB | domains OUT NDOM NSAMPLES | "
			"forks OUT NMAPS NFORKS [remap] | tables OUT N | fifo OUT PATH... | "
			"names OUT PID [perfmap]\n");
		return 2;
	}
	struct dp_writer_opts o = { .chunk_bytes = 1 << 20, .zstd_level = 1 };
	int err = 0;
	struct dp_writer *w = fixture_writer(argv[2], argc, argv, &o, &err);
	if (!w) {
		errno = -err;
		perror(argv[2]);
		return 1;
	}
	struct dp_event ev = { .name = "cpu-clock", .period = 1000, .freq = true };
	dp_write_event(w, &ev);
	if (!strcmp(argv[1], "bomb") && argc == 5)
		gen_bomb(w, (unsigned)atoi(argv[3]), strtoull(argv[4], NULL, 10));
	else if (!strcmp(argv[1], "domains") && argc == 5)
		gen_domains(w, (unsigned)atoi(argv[3]), strtoul(argv[4], NULL, 10));
	else if (!strcmp(argv[1], "forks") && (argc == 5 || argc == 6))
		gen_forks(w, (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
			  argc == 6 && !strcmp(argv[5], "remap"));
	else if (!strcmp(argv[1], "tables") && argc == 4)
		gen_tables(w, (unsigned)atoi(argv[3]));
	else if (!strcmp(argv[1], "names") && (argc == 4 || argc == 5))
		gen_names(w, (uint32_t)strtoul(argv[3], NULL, 10),
			  argc == 5 && !strcmp(argv[4], "perfmap"));
	else if (!strcmp(argv[1], "fifo"))
		gen_fifo(w, argc - 3, argv + 3);
	else
		die("bad arguments");
	struct dp_stats st = { 0 };
	dp_write_stats(w, &st);
	if (dp_writer_finish(w) < 0)
		die("finish");
	return 0;
}
