// SPDX-License-Identifier: MIT
/*
 * Unit tests of analysis/profile.c on a recording written with the real
 * writer: a host and a passive guest, each with its own embedded kallsyms
 * whose function names differ, kernel samples with call chains (one with
 * recursion), adversarial ips (0 and ~0), a LOST record. Checks exact
 * self/total counts, call-graph edges (a pair repeated in one stack counts
 * once), root-first unique stacks, domains kept apart, the filters, the
 * sort keys, and the threshold; hostile LOST counts saturate, and a file
 * without STATS is warned about once. annotate's narrowed load
 * (opts.hits_only) gives a full load's rows and hits of the name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "symbols/kcache.h"
#include "output/report.h"
#include "fixture.h"
#include "unit.h"

#define K(off) (0xffffffff81000000ull + (off))

static const char host_ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T k_leaf\n"
	"ffffffff81002000 T k_mid\n"
	"ffffffff81003000 T k_top\n"
	"ffffffff81004000 T _etext\n";
static const char guest_ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T g_leaf\n"
	"ffffffff81002000 T g_mid\n"
	"ffffffff81003000 T g_top\n"
	"ffffffff81004000 T _etext\n";

static void sample(struct dp_writer *w, uint32_t dom, uint32_t pid, uint8_t mode, uint64_t ip,
		   const uint64_t *chain, uint32_t n)
{
	CHECK(fixture_sample(w, dom, pid, mode, ip, chain, n) == 0);
}

static char path[] = "/tmp/test-profile-XXXXXX";

static void write_file(void)
{
	char *argv[] = { "test-profile", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(path, 1, argv, NULL, &err);
	CHECK(w != NULL);
	struct dp_event ev = { .id = 0, .type = 1, .config = 0, .period = 1000, .freq = true, .name = "cpu-clock" };
	CHECK(dp_write_event(w, &ev) == 0);
	struct dp_domain d0 = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "embedded" };
	struct dp_domain d1 = { .id = 7, .kind = DP_DOMAIN_PASSIVE, .name = "vm1", .address = "gdb:unix:/x",
				.symsrc = "kallsyms=/k" };
	CHECK(dp_write_domain(w, &d0) == 0);
	CHECK(dp_write_domain(w, &d1) == 0);
	struct dp_symtab st0 = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				 .data = (const uint8_t *)host_ksyms, .size = strlen(host_ksyms) };
	struct dp_symtab st1 = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				 .data = (const uint8_t *)guest_ksyms, .size = strlen(guest_ksyms) };
	CHECK(dp_write_symtab(w, 0, &st0) == 0);
	CHECK(dp_write_symtab(w, 7, &st1) == 0);
	struct dp_task t = { .kind = DP_TASK_COMM, .pid = 100, .tid = 100, .comm = "proc" };
	CHECK(dp_write_task(w, 0, &t) == 0);
	struct dp_task t2 = { .kind = DP_TASK_COMM, .pid = 200, .tid = 200, .comm = "other" };
	CHECK(dp_write_task(w, 0, &t2) == 0);

	/* host pid 100: top -> mid -> leaf, 6 samples (leaf ip first in chain) */
	uint64_t c1[] = { K(0x1010), K(0x2020), K(0x3030) };
	for (int i = 0; i < 6; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x1010), c1, 3);
	/* host pid 100: top -> mid, 3 samples, same leaf at another offset */
	uint64_t c2[] = { K(0x2100), K(0x3030) };
	for (int i = 0; i < 3; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x2100), c2, 2);
	/* recursion: top -> mid -> mid -> leaf; mid->mid and mid->leaf edges */
	uint64_t c3[] = { K(0x1010), K(0x2020), K(0x2020), K(0x3030) };
	for (int i = 0; i < 2; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x1010), c3, 4);
	/* pid 200, no chain, mid */
	sample(w, 0, 200, DP_MODE_KERNEL, K(0x2004), NULL, 0);
	/* adversarial ips: still counted */
	sample(w, 0, 200, DP_MODE_USER, 0, NULL, 0);
	sample(w, 0, 200, DP_MODE_USER, ~0ull, NULL, 0);
	/* guest: 4 samples in g_leaf, 1 in g_top, same addresses as the host's */
	for (int i = 0; i < 4; i++)
		sample(w, 7, 0, DP_MODE_GUEST_KERNEL, K(0x1010), NULL, 0);
	sample(w, 7, 0, DP_MODE_GUEST_KERNEL, K(0x3000), NULL, 0);
	struct dp_lost l = { .count = 2, .source = DP_LOST_RING, .where = 0 };
	CHECK(dp_write_lost(w, &l) == 0);
	CHECK(dp_writer_finish(w) == 0);
}

static int find(const struct profile *p, const char *dom, const char *sym)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (!strcmp(p->syms[i].domain_name, dom) && !strcmp(p->syms[i].symbol, sym))
			return (int)i;
	return -1;
}

static uint64_t edge(const struct profile *p, int a, int b)
{
	for (size_t i = 0; i < p->nedges; i++)
		if ((int)p->edges[i].caller == a && (int)p->edges[i].callee == b)
			return p->edges[i].count;
	return 0;
}

static void test_all(void)
{
	struct profile_opts o = { .callgraph = true, .stacks = true };
	char msg[200];
	int err = 0;
	struct profile *p = profile_load(path, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "load: %d %s\n", err, msg);
		return;
	}
	CHECK_EQ_U64(p->total_samples, 19);
	CHECK_EQ_U64(p->matched, 19);
	CHECK_EQ_U64(p->lost, 2);
	CHECK_EQ_U64(p->nevents, 1);
	CHECK_STR(p->events[0].name, "cpu-clock");
	CHECK(p->has_callchains);
	const struct profile_domain *d = profile_domain_by_id(p, 7);
	CHECK(d && !strcmp(d->name, "vm1") && d->kind == DP_DOMAIN_PASSIVE && d->samples == 5);
	CHECK(d && !strcmp(d->address, "gdb:unix:/x") && !strcmp(d->symsrc, "kallsyms=/k"));
	CHECK(profile_domain_by_id(p, 0)->samples == 14);

	int leaf = find(p, "host", "k_leaf"), mid = find(p, "host", "k_mid"), top = find(p, "host", "k_top");
	CHECK(leaf >= 0 && mid >= 0 && top >= 0);
	if (leaf < 0 || mid < 0 || top < 0)
		goto out;
	CHECK_EQ_U64(p->syms[leaf].self, 8);
	CHECK_EQ_U64(p->syms[mid].self, 4);     /* 3 chained + 1 of pid 200 */
	CHECK_EQ_U64(p->syms[top].self, 0);
	CHECK_EQ_U64(p->syms[leaf].total, 8);
	CHECK_EQ_U64(p->syms[mid].total, 12);   /* recursion counted once per sample */
	CHECK_EQ_U64(p->syms[top].total, 11);
	CHECK_STR(p->syms[leaf].image, "[kernel.kallsyms]");
	CHECK(p->syms[leaf].kernel);
	CHECK_EQ_U64(edge(p, top, mid), 11);
	CHECK_EQ_U64(edge(p, mid, leaf), 8);
	CHECK_EQ_U64(edge(p, mid, mid), 2);
	CHECK_EQ_U64(edge(p, top, leaf), 0);

	/* guest names from the guest's table, never the host's */
	int gl = find(p, "vm1", "g_leaf"), gt = find(p, "vm1", "g_top");
	CHECK(gl >= 0 && gt >= 0);
	if (gl >= 0)
		CHECK_EQ_U64(p->syms[gl].self, 4);
	if (gt >= 0)
		CHECK_EQ_U64(p->syms[gt].self, 1);
	CHECK(find(p, "vm1", "k_leaf") < 0 && find(p, "host", "g_leaf") < 0);

	/* callers/callees views */
	const struct profile_edge *const *e;
	size_t n = profile_callers(p, (uint32_t)mid, &e);
	CHECK(n == 2 && e[0]->caller == (uint32_t)top && e[0]->count == 11);
	n = profile_callees(p, (uint32_t)mid, &e);
	CHECK(n == 2 && e[0]->callee == (uint32_t)leaf && e[0]->count == 8);

	/* unique stacks: root first, counts sum to matched */
	uint64_t sum = 0;
	bool seen_main = false;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		sum += s->count;
		if (s->count == 6) {
			CHECK(s->nframes == 3 && s->frames[0] == (uint32_t)top &&
			      s->frames[1] == (uint32_t)mid && s->frames[2] == (uint32_t)leaf);
			CHECK_STR(s->comm, "proc");
			CHECK(s->pid == 100 && s->domain == 0);
			seen_main = true;
		}
		if (i)
			CHECK(p->stacks[i - 1].count >= s->count);
	}
	CHECK(seen_main);
	CHECK_EQ_U64(sum, 19);

	/* rows: self > 0, sorted by samples desc; threshold */
	size_t nr;
	uint32_t *rows = profile_rows(p, NULL, 0, 0.0, &nr);
	CHECK(nr >= 5);
	CHECK(rows[0] == (uint32_t)leaf);
	for (size_t i = 1; i < nr; i++)
		CHECK(p->syms[rows[i - 1]].self >= p->syms[rows[i]].self);
	free(rows);
	rows = profile_rows(p, NULL, 0, 30.0, &nr);
	CHECK(nr == 1 && rows[0] == (uint32_t)leaf);  /* 8/19 = 42% */
	free(rows);
	enum profile_sort_key keys[PROFILE_MAX_SORT];
	const char *bad = NULL;
	CHECK(profile_parse_sort("domain,symbol", keys, &bad) == 2);
	CHECK(profile_parse_sort("sample,bogus", keys, &bad) == -1 && bad && !strcmp(bad, "bogus"));
	CHECK(profile_parse_sort("symbol", keys, &bad) == 1);
	rows = profile_rows(p, keys, 1, 0.0, &nr);
	for (size_t i = 1; i < nr; i++)
		CHECK(strcmp(p->syms[rows[i - 1]].symbol, p->syms[rows[i]].symbol) <= 0);
	free(rows);

	/* image summary: proc's kernel samples in one app group */
	bool proc_kernel = false;
	for (size_t i = 0; i < p->nimages; i++)
		if (!strcmp(p->images[i].app, "proc") && !strcmp(p->images[i].image, "[kernel.kallsyms]"))
			proc_kernel = p->images[i].samples == 11;
	CHECK(proc_kernel);
out:
	profile_free(p);
}

static void test_filters(void)
{
	char msg[200];
	int err = 0;
	struct profile_filter f = { .domain = "vm1" };
	struct profile *p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(p && p->matched == 5 && p->total_samples == 19);
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.domain = "nosuch";
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(!p && err == -ENOENT && strstr(msg, "nosuch"));
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.comm = "other";
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(p && p->matched == 3);
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.has_pid = true;
	f.pid = 100;
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(p && p->matched == 11);
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.mode = PROFILE_MODE_USER;
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(p && p->matched == 2);
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.mode = PROFILE_MODE_KERNEL;
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	CHECK(p && p->matched == 17);
	profile_free(p);

	memset(&f, 0, sizeof(f));
	f.image = "[kernel.kallsyms]";
	f.domain = "host";
	p = profile_load(path, &f, NULL, &err, msg, sizeof(msg));
	/* 12 kernel samples, plus the user sample at ip ~0: an unmapped
	 * kernel-half address is named under the kernel image (symbols.h) */
	CHECK(p && p->matched == 13);
	profile_free(p);

	/* per-process rows */
	struct profile_opts o = { .by_process = true };
	p = profile_load(path, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (p) {
		int n = 0;
		for (size_t i = 0; i < p->nsyms; i++)
			if (!strcmp(p->syms[i].symbol, "k_mid") && p->syms[i].self) {
				n++;
				CHECK((p->syms[i].pid == 100 && p->syms[i].self == 3 && !strcmp(p->syms[i].comm, "proc")) ||
				      (p->syms[i].pid == 200 && p->syms[i].self == 1 && !strcmp(p->syms[i].comm, "other")));
			}
		CHECK(n == 2);
	}
	profile_free(p);

	p = profile_load("/nonexistent/x.data", NULL, NULL, &err, msg, sizeof(msg));
	CHECK(!p && err < 0);
}

static size_t count_warnings(const struct profile *p, const char *what)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nwarnings; i++)
		n += strstr(p->warnings[i], what) != NULL;
	return n;
}

/* Counts from the file are hostile: LOST counts of 2^63 saturate the
 * totals instead of wrapping to a small number, and say so; a file
 * without its STATS record gets one "incomplete" warning, among the
 * warnings about the file itself. */
static void test_hostile_counts(void)
{
	char hpath[] = "/tmp/test-profile-lost-XXXXXX";
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(hpath, 0, NULL, NULL, &err);
	CHECK(w != NULL);
	for (int i = 0; i < 10; i++)
		sample(w, 0, 100, DP_MODE_USER, 0x1000, NULL, 0);
	struct dp_lost big = { .count = 1ull << 63, .source = DP_LOST_AGENT, .where = 1 };
	struct dp_lost small = { .count = 5, .source = DP_LOST_RING };
	CHECK(dp_write_lost(w, &big) == 0);
	CHECK(dp_write_lost(w, &big) == 0);   /* 2^64: wraps to 0 unless saturated */
	CHECK(dp_write_lost(w, &small) == 0);
	CHECK(dp_writer_finish(w) == 0);      /* no STATS: incomplete */
	char msg[256];
	struct profile *p = profile_load(hpath, NULL, NULL, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(p->lost, UINT64_MAX);
		CHECK_EQ_U64(p->lost_by_source[DP_LOST_AGENT], UINT64_MAX);
		CHECK_EQ_U64(p->lost_by_source[DP_LOST_RING], 5);
		CHECK_EQ_U64(p->total_samples, 10);
		CHECK(report_lost_pct(p) >= 0.0 && report_lost_pct(p) <= 100.0);
		CHECK_EQ_U64(count_warnings(p, "add up past 2^64"), 1);
		CHECK_EQ_U64(count_warnings(p, "recording incomplete"), 1);
		CHECK(p->nfile_warnings >= 2 && p->nfile_warnings <= p->nwarnings);
		profile_free(p);
	}
	unlink(hpath);
}

/*
 * Many processes of one binary: addresses are resolved once per (image,
 * image address), not once per process, and a flat profile counts the
 * samples of an image without symbols ([anon]) under one key per
 * process. Three cc1 processes map one library at three bases (samples
 * at image addresses 0x100, 0x100, 0x200) and one of them runs 5 samples
 * of [anon] code, each at its own address (its chain the leaf alone). Control: keyed by (map, ip)
 * there were 8 addresses and 8 keys.
 */
static void test_shared_images(void)
{
	char tmpl[] = "/tmp/test-profile-shared-XXXXXX";
	char *argv[] = { "test-profile", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(tmpl, 1, argv, NULL, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	for (uint32_t i = 0; i < 3; i++) {
		struct dp_task t = { .kind = DP_TASK_COMM, .pid = 300 + i, .tid = 300 + i, .comm = "cc1" };
		CHECK(dp_write_task(w, 0, &t) == 0);
		struct dp_mmap m = { .pid = 300 + i, .start = 0x10000 * (i + 1), .len = 0x1000,
				     .path = "/nonexistent/libshared.so" };
		CHECK(dp_write_mmap(w, 0, &m) == 0);
		sample(w, 0, 300 + i, DP_MODE_USER, 0x10000 * (i + 1) + (i == 2 ? 0x200 : 0x100), NULL, 0);
	}
	struct dp_mmap an = { .pid = 300, .start = 0x7000000, .len = 0x10000, .path = "//anon" };
	CHECK(dp_write_mmap(w, 0, &an) == 0);
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t c[] = { 0x7000000 + 0x40 * i };   /* a chain of the leaf alone */
		sample(w, 0, 300, DP_MODE_USER, c[0], c, 1);
	}
	CHECK(dp_writer_finish(w) == 0);

	struct profile_opts o = { 0 };
	char msg[200];
	struct profile *p = profile_load(tmpl, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(p->matched, 8);
		CHECK_EQ_U64(p->unique_addrs, 3);  /* lib 0x100, lib 0x200, [anon] */
		CHECK_EQ_U64(p->unique_keys, 4);   /* 3 lib samples, one [anon] key */
		uint64_t anon = 0, lib = 0;
		for (size_t i = 0; i < p->nsyms; i++) {
			if (!strcmp(p->syms[i].image, "[anon]"))
				anon += p->syms[i].self;
			if (!strcmp(p->syms[i].image, "libshared.so"))
				lib += p->syms[i].self;
		}
		CHECK_EQ_U64(anon, 5);
		CHECK_EQ_U64(lib, 3);
		profile_free(p);
	}
	/* with call chains the keys keep their addresses (chains are raw) */
	struct profile_opts og = { .callgraph = true };
	p = profile_load(tmpl, NULL, &og, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(p->unique_keys, 8);
		CHECK_EQ_U64(p->unique_addrs, 3);
		profile_free(p);
	}
	unlink(tmpl);
}

/*
 * annotate NAME (opts.hits_only): only the leaves that may be NAME are
 * resolved, and NAME's rows, samples and hits are a full load's. "work"
 * is in two images (the JIT perf maps of pids 400 and 401; 401's names
 * it mangled, _ZL4work, at the address that is "work" in 400's), in the
 * host kernel and in a passive guest's kernel (kernel tables cannot say
 * where a name is: their leaves are resolved); the same images have
 * samples in other functions and outside any. Control: the rows of the
 * other user functions, made by a full load, are not made (the filter
 * ran; a filter that kept nothing would fail the known answers).
 */
static const char hits_hk[] =
	"ffffffff81000000 T _stext\nffffffff81001000 T work\nffffffff81002000 T k_other\n"
	"ffffffff81003000 T _etext\n";
static const char hits_gk[] =
	"ffffffff81000000 T _stext\nffffffff81001000 T work\nffffffff81002000 T g_other\n"
	"ffffffff81003000 T _etext\n";
static const char map400[] = "7000000 100 work\n7000100 100 other\n";
static const char map401[] = "7000000 80 x_first\n7000080 80 _ZL4work\n";

static int find_in(const struct profile *p, const char *dom, const char *img, const char *sym)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (p->syms[i].self && !strcmp(p->syms[i].domain_name, dom) && !strcmp(p->syms[i].image, img) &&
		    !strcmp(p->syms[i].symbol, sym))
			return (int)i;
	return -1;
}

/* The host kernel's table of test_hits_only: kmode 0 the kallsyms text,
 * 1 the symbol index (kind 8) with its name filter (kind 9), 2 the index
 * with a forged filter that says no name is anywhere. */
static void write_hits_kernel(struct dp_writer *w, int kmode)
{
	if (!kmode) {
		struct dp_symtab t = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				       .data = (const uint8_t *)hits_hk, .size = strlen(hits_hk) };
		CHECK(dp_write_symtab(w, 0, &t) == 0);
		return;
	}
	size_t ixlen = 0, nflen = 0;
	uint8_t *ix = ksyms_index_build(hits_hk, strlen(hits_hk), 1, &ixlen, NULL), *nf = NULL;
	struct dp_ksymidx *x = NULL;
	CHECK(ix && dp_ksymidx_open(ix, ixlen, &x, NULL, 0) == 0);
	CHECK(x && dp_ksymnf_build(x, &nf, &nflen, NULL, 0) == 0);
	if (nf && kmode == 2)
		memset(nf + nflen - DP_KSYMNF_BYTES * dp_ksymidx_nblocks(x), 0,
		       DP_KSYMNF_BYTES * dp_ksymidx_nblocks(x));
	struct dp_symtab t8 = { .kind = DP_SYMTAB_KSYMIDX, .name = "kallsyms", .data = ix, .size = ixlen };
	struct dp_symtab t9 = { .kind = DP_SYMTAB_KSYMNF, .name = "kallsyms", .data = nf, .size = nflen };
	CHECK(dp_write_symtab(w, 0, &t8) == 0);
	CHECK(dp_write_symtab(w, 0, &t9) == 0);
	if (x)
		dp_ksymidx_free(x);
	free(ix);
	free(nf);
}

/* The annotate tests' recording at tmpl: the host domain and `other`
 * declared. NULL when it could not be made (a failed check). */
static struct dp_writer *hits_writer(char *tmpl, const struct dp_domain *other)
{
	char *argv[] = { "test-profile", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(tmpl, 1, argv, NULL, &err);
	CHECK(w != NULL);
	if (!w)
		return NULL;
	struct dp_domain d0 = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "embedded" };
	CHECK(dp_write_domain(w, &d0) == 0);
	CHECK(dp_write_domain(w, other) == 0);
	return w;
}

static void test_hits_only(int kmode)
{
	char tmpl[] = "/tmp/test-profile-hits-XXXXXX";
	struct dp_domain d1 = { .id = 7, .kind = DP_DOMAIN_PASSIVE, .name = "vm1", .address = "gdb:unix:/x",
				.symsrc = "kallsyms=/k" };
	struct dp_writer *w = hits_writer(tmpl, &d1);
	if (!w)
		return;
	int err = 0;
	struct dp_symtab tabs[] = {
		{ 0 },
		{ .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms", .data = (const uint8_t *)hits_gk, .size = strlen(hits_gk) },
		{ .kind = DP_SYMTAB_PERFMAP, .name = "/tmp/perf-400.map", .data = (const uint8_t *)map400, .size = strlen(map400) },
		{ .kind = DP_SYMTAB_PERFMAP, .name = "/tmp/perf-401.map", .data = (const uint8_t *)map401, .size = strlen(map401) },
	};
	write_hits_kernel(w, kmode);
	CHECK(dp_write_symtab(w, 7, &tabs[1]) == 0);
	CHECK(dp_write_symtab(w, 0, &tabs[2]) == 0);
	CHECK(dp_write_symtab(w, 0, &tabs[3]) == 0);
	for (uint32_t pid = 400; pid <= 401; pid++) {
		struct dp_task t = { .kind = DP_TASK_COMM, .pid = pid, .tid = pid, .comm = pid == 400 ? "jit" : "jit2" };
		CHECK(dp_write_task(w, 0, &t) == 0);
		struct dp_mmap an = { .pid = pid, .start = 0x7000000, .len = 0x10000, .path = "//anon" };
		CHECK(dp_write_mmap(w, 0, &an) == 0);
	}
	static const struct { uint32_t dom, pid; uint8_t mode; uint64_t ip; int n; } v[] = {
		{ 0, 400, DP_MODE_USER, 0x7000010, 3 },          /* work (400) */
		{ 0, 400, DP_MODE_USER, 0x7000020, 1 },          /* work (400) */
		{ 0, 400, DP_MODE_USER, 0x7000150, 2 },          /* other */
		{ 0, 400, DP_MODE_USER, 0x7000500, 1 },          /* no symbol */
		{ 0, 401, DP_MODE_USER, 0x7000090, 4 },          /* _ZL4work: work (401) */
		{ 0, 401, DP_MODE_USER, 0x7000010, 2 },          /* x_first */
		{ 0, 400, DP_MODE_KERNEL, K(0x1010), 2 },        /* the host kernel's work */
		{ 0, 400, DP_MODE_KERNEL, K(0x2010), 1 },        /* k_other */
		{ 7, 0, DP_MODE_GUEST_KERNEL, K(0x1020), 5 },    /* the guest's work */
		{ 7, 0, DP_MODE_GUEST_KERNEL, K(0x2000), 1 },    /* g_other */
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (int j = 0; j < v[i].n; j++)
			sample(w, v[i].dom, v[i].pid, v[i].mode, v[i].ip, NULL, 0);
	CHECK(dp_writer_finish(w) == 0);

	char msg[200];
	if (kmode == 2) {
		/* control: a filter that says "no" is what the narrowed load
		 * follows: the host kernel's "work" goes missing from it */
		struct profile_opts of = { .hits = true, .hits_symbol = "work" };
		struct profile_opts on = of;
		on.hits_only = true;
		struct profile *full = profile_load(tmpl, NULL, &of, &err, msg, sizeof(msg));
		struct profile *p = profile_load(tmpl, NULL, &on, &err, msg, sizeof(msg));
		CHECK(full && find_in(full, "host", "[kernel.kallsyms]", "work") >= 0);
		CHECK(p && find_in(p, "host", "[kernel.kallsyms]", "work") < 0);
		CHECK(p && find_in(p, "vm1", "[guest.kernel]", "work") >= 0);
		profile_free(full);
		profile_free(p);
		unlink(tmpl);
		return;
	}
	struct profile_filter none = { 0 }, jit = { .comm = "jit" };
	const struct profile_filter *filters[] = { &none, &jit };
	for (int fi = 0; fi < 2; fi++) {
		struct profile_opts of = { .hits = true, .hits_symbol = "work" };
		struct profile_opts on = of;
		on.hits_only = true;
		struct profile *full = profile_load(tmpl, filters[fi], &of, &err, msg, sizeof(msg));
		struct profile *p = profile_load(tmpl, filters[fi], &on, &err, msg, sizeof(msg));
		CHECK(full != NULL && p != NULL);
		if (!full || !p) {
			profile_free(full);
			profile_free(p);
			break;
		}
		CHECK_EQ_U64(full->matched, fi ? 10 : 22);
		CHECK_EQ_U64(p->matched, full->matched);
		for (size_t d = 0; d < p->ndomains && d < full->ndomains; d++)
			CHECK_EQ_U64(p->domains[d].samples, full->domains[d].samples);
		/* the known answers, the same in both loads */
		static const struct { const char *dom, *img; uint64_t self, nhits, jit; } want[] = {
			{ "host", "perf-400.map", 4, 2, 1 },
			{ "host", "perf-401.map", 4, 1, 0 },
			{ "host", "[kernel.kallsyms]", 2, 1, 1 },
			{ "vm1", "[guest.kernel]", 5, 1, 0 },
		};
		const struct profile *both[] = { full, p };
		for (int b = 0; b < 2; b++) {
			size_t rows = 0;
			for (size_t i = 0; i < both[b]->nsyms; i++)
				rows += both[b]->syms[i].self && !strcmp(both[b]->syms[i].symbol, "work");
			CHECK_EQ_U64(rows, fi ? 2 : 4);
			for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
				if (fi && !want[k].jit)
					continue;
				int y = find_in(both[b], want[k].dom, want[k].img, "work");
				CHECK(y >= 0);
				if (y < 0)
					continue;
				CHECK_EQ_U64(both[b]->syms[y].self, want[k].self);
				const struct profile_hit *h = NULL;
				uint64_t s = 0, e = 0;
				CHECK_EQ_U64(profile_symbol_hits(both[b], (uint32_t)y, &h, &s, &e), want[k].nhits);
			}
		}
		/* every hit of every "work" row: address, count, range */
		for (size_t i = 0; i < full->nsyms; i++) {
			const struct profile_symbol *y = &full->syms[i];
			if (!y->self || strcmp(y->symbol, "work"))
				continue;
			int j = find_in(p, y->domain_name, y->image, "work");
			CHECK(j >= 0);
			if (j < 0)
				continue;
			const struct profile_hit *a = NULL, *b = NULL;
			uint64_t sa = 0, ea = 0, sb = 0, eb = 0;
			size_t na = profile_symbol_hits(full, (uint32_t)i, &a, &sa, &ea);
			size_t nb = profile_symbol_hits(p, (uint32_t)j, &b, &sb, &eb);
			CHECK_EQ_U64(nb, na);
			CHECK_EQ_U64(sb, sa);
			CHECK_EQ_U64(eb, ea);
			for (size_t k = 0; k < na && k < nb; k++) {
				CHECK_EQ_U64(b[k].addr, a[k].addr);
				CHECK_EQ_U64(b[k].count, a[k].count);
			}
		}
		/* the name filter: the host kernel's other function is not
		 * resolved either (its block is decoded, as it holds "work") */
		if (kmode == 1) {
			CHECK(find_in(full, "host", "[kernel.kallsyms]", "k_other") >= 0);
			CHECK(find_in(p, "host", "[kernel.kallsyms]", "k_other") < 0);
		}
		/* control: the full load made the other user functions' rows,
		 * the filtered one did not resolve them */
		CHECK(find_in(full, "host", "perf-400.map", "other") >= 0);
		CHECK(find_in(p, "host", "perf-400.map", "other") < 0);
		if (!fi) {
			CHECK(find_in(full, "host", "perf-401.map", "x_first") >= 0);
			CHECK(find_in(p, "host", "perf-401.map", "x_first") < 0);
		}
		profile_free(full);
		profile_free(p);
	}
	unlink(tmpl);
}

/*
 * annotate NAME narrows while reading (analysis/hits.c, hits_early_in)
 * where an image's answer is final, the rest at the end; its warnings
 * stay in the order of a full load's (each image's at its first
 * sample), and a record after the samples that changes an answer given
 * (a host image's embedded ELF, here not a valid one) makes the load
 * read the file again. Host images at missing paths (one warning each,
 * "No such file"), between them one of an active domain (answered only
 * at the end); the first host image's build-id gets its embedded copy
 * at the end of the file when `late`. Controls: without the re-read the
 * narrowed load warns "No such file" for it; without the ordering the
 * active domain's warning comes first; a group counted as one sample
 * on a key made while reading loses 5 of each image's samples.
 */
static void test_hits_early(bool late)
{
	char tmpl[] = "/tmp/test-profile-early-XXXXXX";
	struct dp_domain d3 = { .id = 3, .kind = DP_DOMAIN_ACTIVE, .name = "vm3", .address = "tcp:x",
				.symsrc = "agent" };
	struct dp_writer *w = hits_writer(tmpl, &d3);
	if (!w)
		return;
	int err = 0;
	static const struct { uint32_t dom, pid; const char *path; } img[] = {
		{ 0, 500, "/nonexistent/domprof-test/h1.so" },
		{ 3, 600, "/nonexistent/domprof-test/a1.so" },
		{ 0, 501, "/nonexistent/domprof-test/h2.so" },
	};
	for (size_t i = 0; i < 3; i++) {
		struct dp_task t = { .kind = DP_TASK_COMM, .pid = img[i].pid, .tid = img[i].pid, .comm = "p" };
		CHECK(dp_write_task(w, img[i].dom, &t) == 0);
		struct dp_mmap m = { .pid = img[i].pid, .start = 0x400000, .len = 0x10000, .path = img[i].path,
				     .buildid_len = 20 };
		memset(m.buildid, 0xa0 + (int)i, sizeof(m.buildid));
		CHECK(dp_write_mmap(w, img[i].dom, &m) == 0);
	}
	/* 20 at distinct addresses (the queue made the key by then), then 6
	 * alike: a group of weight 6 (DP_READ_GROUPS) counted on that key */
	for (size_t i = 0; i < 3; i++)
		for (int j = 0; j < 26; j++)
			sample(w, img[i].dom, img[i].pid, DP_MODE_USER, 0x401000 + 16 * (uint64_t)(j < 20 ? j : 20),
			       NULL, 0);
	if (late) {
		static const char junk[] = "not an ELF file";
		char hex[41];
		for (int i = 0; i < 20; i++)
			snprintf(hex + 2 * i, 3, "%02x", 0xa0);
		struct dp_symtab t = { .kind = DP_SYMTAB_ELF, .name = hex, .data = (const uint8_t *)junk,
				       .size = sizeof(junk) };
		CHECK(dp_write_symtab(w, 0, &t) == 0);
	}
	CHECK(dp_writer_finish(w) == 0);

	char msg[200];
	struct profile_opts of = { .hits = true, .hits_symbol = "work" };
	struct profile_opts on = of;
	on.hits_only = true;
	struct profile *full = profile_load(tmpl, NULL, &of, &err, msg, sizeof(msg));
	struct profile *p = profile_load(tmpl, NULL, &on, &err, msg, sizeof(msg));
	CHECK(full && p);
	if (full && p) {
		CHECK_EQ_U64(p->matched, 78);
		CHECK_EQ_U64(full->matched, 78);
		/* after the file's own (no STATS record: incomplete) */
		const char *const *wv = (const char *const *)p->warnings + p->nfile_warnings;
		size_t nw = p->nwarnings - p->nfile_warnings;
		CHECK_EQ_U64(nw, 3);
		CHECK_EQ_U64(full->nwarnings, p->nwarnings);
		for (size_t i = 0; i < p->nwarnings && i < full->nwarnings; i++)
			CHECK_STR(p->warnings[i], full->warnings[i]);
		CHECK(nw == 3 && strstr(wv[0], "h1.so") && strstr(wv[1], "a1.so") && strstr(wv[2], "h2.so"));
		CHECK(nw == 3 && !!strstr(wv[0], "embedded ELF") == late);
		for (size_t d = 0; d < p->ndomains && d < full->ndomains; d++)
			CHECK_EQ_U64(p->domains[d].samples, full->domains[d].samples);
	}
	profile_free(full);
	profile_free(p);
	unlink(tmpl);
}

int main(void)
{
	write_file();
	test_all();
	test_filters();
	test_hostile_counts();
	test_shared_images();
	test_hits_only(0);
	test_hits_only(1);
	test_hits_early(false);
	test_hits_early(true);
	test_hits_only(2);
	unlink(path);
	return unit_done();
}
