// SPDX-License-Identifier: MIT
/*
 * Unit test of the HTML report's writer (src/output/html_report.c) on a
 * profile loaded from a recording written with the real writer: a host
 * process whose command name is markup ("</script><b>x"), kernel call
 * chains, one chain of 700 frames (past HTML_REPORT_MAX_DEPTH), and a
 * passive guest domain. Checks what the page's script relies on:
 *  - the page holds exactly its own two <script> elements: no label ends
 *    one early (markup in names is \u-escaped in the data);
 *  - the stack tree, decoded from its base64 varints as report.js does,
 *    is a tree (depth steps in range), has "nodes" nodes, each node's
 *    total is its self plus its children's totals, the domains' totals
 *    add up to the matched samples and self samples to the same;
 *  - the 700-frame stack keeps its 512 innermost frames (depth 513: domain
 *    0, command 1) and is counted in "treeCut";
 *  - the passive domain's application is "[guest]" (as the image summary);
 *  - the flame graph page template is embedded (its data element).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "output/html_report.h"
#include "fixture.h"
#include "unit.h"

#define K(off) (0xffffffff81000000ull + (off))
#define DEEP 700u

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T k_leaf\n"
	"ffffffff81002000 T k_mid\n"
	"ffffffff81003000 T k_top\n"
	"ffffffff81004000 T _etext\n";
static const char comm[] = "</script><b>x";

static char path[] = "/tmp/test-html-report-XXXXXX";
static uint64_t nsamples;

static void sample(struct dp_writer *w, uint32_t dom, uint32_t pid, uint8_t mode, uint64_t ip,
		   const uint64_t *chain, uint32_t n)
{
	CHECK(fixture_sample(w, dom, pid, mode, ip, chain, n) == 0);
	nsamples++;
}

static void write_file(void)
{
	char *argv[] = { "test-html-report", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(path, 1, argv, NULL, &err);
	CHECK(w != NULL);
	struct dp_event ev = { .id = 0, .type = 1, .period = 1000, .freq = true, .name = "cpu-clock" };
	CHECK(dp_write_event(w, &ev) == 0);
	struct dp_domain d0 = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "embedded" };
	struct dp_domain d1 = { .id = 3, .kind = DP_DOMAIN_PASSIVE, .name = "vm1", .address = "gdb:unix:/x",
				.symsrc = "kallsyms=/k" };
	CHECK(dp_write_domain(w, &d0) == 0);
	CHECK(dp_write_domain(w, &d1) == 0);
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)ksyms, .size = strlen(ksyms) };
	CHECK(dp_write_symtab(w, 0, &st) == 0);
	CHECK(dp_write_symtab(w, 3, &st) == 0);
	struct dp_task t = { .kind = DP_TASK_COMM, .pid = 100, .tid = 100, .comm = comm };
	CHECK(dp_write_task(w, 0, &t) == 0);
	uint64_t c1[] = { K(0x1010), K(0x2020), K(0x3030) };
	for (int i = 0; i < 6; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x1010), c1, 3);
	uint64_t c2[] = { K(0x2100), K(0x3030) };
	for (int i = 0; i < 3; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x2100), c2, 2);
	/* leaf k_leaf, then 699 callers alternating k_mid / k_top */
	static uint64_t deep[DEEP];
	deep[0] = K(0x1010);
	for (unsigned i = 1; i < DEEP; i++)
		deep[i] = K(i % 2 ? 0x2020 : 0x3030);
	for (int i = 0; i < 2; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x1010), deep, DEEP);
	for (int i = 0; i < 4; i++)
		sample(w, 3, 0, DP_MODE_GUEST_KERNEL, K(0x1010), NULL, 0);
	struct dp_stats sts = { .samples = nsamples };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *q = s; (q = strstr(q, needle)); q += strlen(needle))
		n++;
	return n;
}

/* The unsigned number after "KEY": in s, or -1. */
static long long field(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *q = strstr(s, k);
	return q ? strtoll(q + strlen(k), NULL, 10) : -1;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

/* Decodes the base64 after "tree":" into *out; returns its length. */
static size_t tree_bytes(const char *page, unsigned char **out)
{
	const char *q = strstr(page, "\"tree\":\"");
	CHECK(q != NULL);
	if (!q)
		return 0;
	q += 8;
	const char *e = strchr(q, '"');
	size_t n = 0, len = (size_t)(e - q);
	unsigned char *b = malloc(len / 4 * 3 + 3);
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len; i++) {
		int v = b64val(q[i]);
		if (v < 0)
			break;   /* '=' padding */
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b[n++] = (unsigned char)(acc >> bits);
		}
	}
	*out = b;
	return n;
}

static uint64_t varint(const unsigned char *b, size_t n, size_t *pos)
{
	uint64_t x = 0;
	for (int shift = 0; *pos < n && shift < 64; shift += 7) {
		unsigned char c = b[(*pos)++];
		x |= (uint64_t)(c & 127) << shift;
		if (!(c & 128))
			break;
	}
	return x;
}

struct node { long depth, parent; uint64_t value, self, total, kids; };

static void test_tree(const char *page, const struct profile *p)
{
	unsigned char *b = NULL;
	size_t n = tree_bytes(page, &b), pos = 0;
	long long want = field(page, "nodes");
	CHECK(want > 0 && want < 100000);
	if (want <= 0 || want >= 100000) {
		free(b);
		return;
	}
	struct node *v = calloc((size_t)want, sizeof(*v));
	long at[1024], prev = -1, maxdepth = 0;
	size_t got = 0;
	bool tree_ok = true;
	uint64_t domains = 0, selfs = 0;
	while (pos < n && got < (size_t)want) {
		uint64_t step = varint(b, n, &pos);
		long d = prev + 1 - (long)step;
		if (d < 0 || d >= 1024) {
			tree_ok = false;
			break;
		}
		struct node *x = &v[got];
		x->depth = d;
		x->parent = d ? at[d - 1] : -1;
		x->value = varint(b, n, &pos);
		x->self = varint(b, n, &pos);
		x->total = varint(b, n, &pos);
		if (x->parent >= 0)
			v[x->parent].kids += x->total;
		else
			domains += x->total;
		selfs += x->self;
		at[d] = (long)got;
		prev = d;
		if (d > maxdepth)
			maxdepth = d;
		got++;
	}
	CHECK(tree_ok);
	CHECK(pos == n);
	CHECK_EQ_U64(got, (uint64_t)want);
	bool sums = true;
	for (size_t i = 0; i < got; i++)
		if (v[i].total != v[i].self + v[i].kids)
			sums = false;
	CHECK(sums);
	CHECK_EQ_U64(domains, p->matched);
	CHECK_EQ_U64(selfs, p->matched);
	/* the 700-frame stack: 512 frames below domain (0) and command (1) */
	CHECK_EQ_U64((uint64_t)maxdepth, HTML_REPORT_MAX_DEPTH + 1);
	CHECK_EQ_U64((uint64_t)field(page, "treeCut"), 1);
	CHECK_EQ_U64((uint64_t)field(page, "treeDropped"), 0);
	free(v);
	free(b);
}

int main(void)
{
	write_file();
	struct profile_opts o = { .stacks = true };
	char msg[200];
	int err = 0;
	struct profile *p = profile_load(path, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "load: %d %s\n", err, msg);
		unlink(path);
		return unit_done();
	}
	CHECK_EQ_U64(p->matched, nsamples);
	struct report_view v = { .p = p, .path = "t<x>.data" };
	char *page = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&page, &len);
	CHECK(f != NULL);
	CHECK(report_html(f, &v) == 0);
	fclose(f);
	/* the page's own two scripts and nothing else: the data and the
	 * flame graph page inside it are escaped */
	CHECK_EQ_U64(count(page, "<script"), 2);
	CHECK_EQ_U64(count(page, "</script"), 2);
	CHECK(strstr(page, "<b>x") == NULL);
	CHECK(strstr(page, "\\u003c/script\\u003e\\u003cb\\u003ex") != NULL);
	CHECK(strstr(page, "\"t\\u003cx\\u003e.data\"") != NULL);
	CHECK(strstr(page, "\"[guest]\"") != NULL);
	CHECK(strstr(page, "\"fgpage\":\"\\u003c!DOCTYPE html\\u003e") != NULL);
	CHECK(strstr(page, "id=\\\"fgdata\\\"") != NULL);
	test_tree(page, p);
	free(page);
	profile_free(p);
	unlink(path);
	return unit_done();
}
