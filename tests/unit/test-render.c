// SPDX-License-Identifier: MIT
/*
 * Unit tests of the renderers (src/output/) on one profile loaded from a
 * recording written with the real writer: a host process with kernel call
 * chains, a guest domain, and hostile labels (a command name holding ';',
 * '"', '<' and a newline; a symbol named "tmpl<int>&"). Each renderer's
 * output is checked for what its format promises, not byte for byte (the
 * golden check, tests/e2e/golden.sh, does that): every JSON output parses
 * (a small strict parser below), counts add up to the samples, folded
 * lines are one per stack with no stray separators, SVG and HTML escape
 * markup and name no network resource, pprof is gzip that inflates to a
 * protobuf holding the symbol names. A second recording with COUNTERS
 * records: the profile sums them per domain, the text header gives the
 * unwind summary line exactly (only for domains with unwind.chains > 0),
 * the JSON report a "counters" object (and none without counters).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/profile.h"
#include "output/flamegraph.h"
#include "output/report.h"
#include "fixture.h"
#include "unit.h"

#define K(off) (0xffffffff81000000ull + (off))
#define NHOST 9
#define NGUEST 4

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T k_leaf\n"
	"ffffffff81002000 T tmpl<int>&\n"
	"ffffffff81003000 T k_top\n"
	"ffffffff81004000 T _etext\n";
static const char comm[] = "we;ird\"<c>\nname";

static char path[] = "/tmp/test-render-XXXXXX";

static void sample(struct dp_writer *w, uint32_t dom, uint32_t pid, uint8_t mode, uint64_t ip,
		   const uint64_t *chain, uint32_t n)
{
	CHECK(fixture_sample(w, dom, pid, mode, ip, chain, n) == 0);
}

static void write_file(void)
{
	char *argv[] = { "test-render", NULL };
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
	/* host: top -> tmpl -> leaf (6), top -> tmpl (3) */
	uint64_t c1[] = { K(0x1010), K(0x2020), K(0x3030) };
	for (int i = 0; i < 6; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x1010), c1, 3);
	uint64_t c2[] = { K(0x2100), K(0x3030) };
	for (int i = 0; i < 3; i++)
		sample(w, 0, 100, DP_MODE_KERNEL, K(0x2100), c2, 2);
	for (int i = 0; i < NGUEST; i++)
		sample(w, 3, 0, DP_MODE_GUEST_KERNEL, K(0x1010), NULL, 0);
	struct dp_stats sts = { .samples = NHOST + NGUEST };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);
}

/* ---- a strict JSON syntax check (RFC 8259 grammar, no semantics) ---- */

struct js { const char *p, *end; int depth; };

static void js_ws(struct js *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p))
		j->p++;
}

static bool js_value(struct js *j);

static bool js_string(struct js *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;   /* a raw control character: not escaped */
		if (c == '\\') {
			if (++j->p >= j->end || !strchr("\"\\/bfnrtu", *j->p))
				return false;
			if (*j->p == 'u')
				for (int i = 0; i < 4; i++)
					if (++j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p))
						return false;
		}
	}
	return false;
}

static bool js_number(struct js *j)
{
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	while (j->p < j->end && strchr("0123456789.eE+-", *j->p))
		j->p++;
	return j->p > s && (s[0] != '-' || j->p > s + 1);
}

static bool js_seq(struct js *j, char close, bool object)
{
	j->p++;
	js_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		if (object) {
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return false;
		}
		if (!js_value(j))
			return false;
		js_ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
		js_ws(j);
	}
}

static bool js_value(struct js *j)
{
	js_ws(j);
	if (j->p >= j->end || ++j->depth > 256)
		return false;
	bool ok;
	if (*j->p == '{')
		ok = js_seq(j, '}', true);
	else if (*j->p == '[')
		ok = js_seq(j, ']', false);
	else if (*j->p == '"')
		ok = js_string(j);
	else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4))
		j->p += 4, ok = true;
	else if (!strncmp(j->p, "false", 5))
		j->p += 5, ok = true;
	else
		ok = js_number(j);
	j->depth--;
	return ok;
}

static bool json_ok(const char *s, size_t n)
{
	struct js j = { s, s + n, 0 };
	if (!js_value(&j))
		return false;
	js_ws(&j);
	return j.p == j.end;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- the renderers ---- */

typedef int (*render_fn)(FILE *f, const struct profile *p, const void *arg);

static char *render(const struct profile *p, render_fn fn, const void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(fn(f, p, arg) == 0);
	fclose(f);
	return buf;
}

/* a: NULL or the enum fg_root to use */
static enum fg_root root_of(const void *a) { return a ? *(const enum fg_root *)a : FG_ROOT_COMM; }
static int r_folded(FILE *f, const struct profile *p, const void *a) { return export_folded(f, p, root_of(a)); }
static int r_speedscope(FILE *f, const struct profile *p, const void *a) { return export_speedscope(f, p, a, FG_ROOT_COMM); }
static int r_json(FILE *f, const struct profile *p, const void *a) { return export_json(f, p, a, FG_ROOT_COMM); }
static int r_pprof(FILE *f, const struct profile *p, const void *a) { return export_pprof(f, p, NULL, root_of(a)); }
static int r_html(FILE *f, const struct profile *p, const void *a) { return flamegraph_html(f, p, a); }
static int r_svg(FILE *f, const struct profile *p, const void *a) { return flamegraph_svg(f, p, a); }
static int r_report(FILE *f, const struct profile *p, const void *a)
{
	const struct report_view *v = a;
	struct report_view w = *v;
	w.p = p;
	return !strcmp(w.path, "csv") ? report_csv(f, &w) : !strcmp(w.path, "json") ? report_json(f, &w)
										       : report_text(f, &w);
}

static void test_folded(const struct profile *p)
{
	size_t len;
	char *s = render(p, r_folded, NULL, &len);
	uint64_t total = 0;
	size_t lines = 0;
	for (char *line = s, *nl; (nl = memchr(line, '\n', len - (size_t)(line - s))); line = nl + 1) {
		*nl = 0;
		lines++;
		char *sp = strrchr(line, ' ');
		CHECK(sp != NULL);
		if (sp)
			total += strtoull(sp + 1, NULL, 10);
		CHECK(strncmp(line, "host;", 5) == 0 || strncmp(line, "vm1;", 4) == 0);
	}
	CHECK_EQ_U64(lines, 3);                 /* two host stacks, one guest stack */
	CHECK_EQ_U64(total, NHOST + NGUEST);
	/* the comm's ';' and newline must not split frames or lines */
	char *again = render(p, r_folded, NULL, &len);
	CHECK(strstr(again, "we:ird") != NULL);
	CHECK(strstr(again, "k_top_[k];tmpl<int>&_[k];k_leaf_[k] 6\n") != NULL);
	free(again);
	free(s);
}

/* pprof inflated into out (n bytes); returns its length */
static size_t pprof_plain(const struct profile *p, const void *arg, unsigned char *out, size_t n)
{
	size_t len;
	char *s = render(p, r_pprof, arg, &len);
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
	z.next_in = (unsigned char *)s;
	z.avail_in = (unsigned)len;
	z.next_out = out;
	z.avail_out = (unsigned)n;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	inflateEnd(&z);
	free(s);
	return n - z.avail_out;
}

/*
 * The process level of folded stacks and the flame graph's tree (enum
 * fg_root): two runs of "prog" (pids 200 and 201, the second with two
 * threads) doing the same thing. By command name they are one line and
 * one frame; --by-pid splits them into two, --by-tid into three, and
 * --no-comm leaves the frames right on the domain.
 */
static char rpath[] = "/tmp/test-render-roots-XXXXXX";

static void write_roots(void)
{
	char *argv[] = { "test-render", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(rpath, 1, argv, NULL, &err);
	CHECK(w != NULL);
	struct dp_event ev = { .id = 0, .type = 1, .period = 1000, .freq = true, .name = "cpu-clock" };
	CHECK(dp_write_event(w, &ev) == 0);
	struct dp_domain d0 = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "embedded" };
	CHECK(dp_write_domain(w, &d0) == 0);
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)ksyms, .size = strlen(ksyms) };
	CHECK(dp_write_symtab(w, 0, &st) == 0);
	for (uint32_t pid = 200; pid <= 201; pid++) {
		struct dp_task t = { .kind = DP_TASK_COMM, .pid = pid, .tid = pid, .comm = "prog" };
		CHECK(dp_write_task(w, 0, &t) == 0);
	}
	uint64_t c1[] = { K(0x1010), K(0x3030) };
	/* (pid, tid, samples) */
	static const uint32_t runs[][3] = { { 200, 200, 5 }, { 201, 201, 3 }, { 201, 202, 2 } };
	for (size_t r = 0; r < 3; r++)
		for (uint32_t i = 0; i < runs[r][2]; i++) {
			struct dp_sample s = { .time = 1, .ip = K(0x1010), .period = 1, .pid = runs[r][0],
					       .tid = runs[r][1], .mode = DP_MODE_KERNEL, .nr_callchain = 2,
					       .callchain = c1 };
			CHECK(dp_write_sample(w, 0, &s) == 0);
		}
	struct dp_stats sts = { .samples = 10 };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);
}

/* process-level frames (depth 2) of the tree, and their labels joined by ' ' */
static size_t level_frames(const struct profile *p, enum fg_root root, char *labels, size_t n)
{
	struct fg_tree *t = fg_tree_build_root(p, false, root);
	size_t k = 0, off = 0;
	labels[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->nodes[i].kind != FG_PROCESS)
			continue;
		char buf[128];
		off += (size_t)snprintf(labels + off, off < n ? n - off : 0, "%s%s", k ? " " : "",
					fg_node_label(t, (uint32_t)i, buf, sizeof(buf)));
		k++;
	}
	fg_tree_free(t);
	return k;
}

static void test_roots(void)
{
	write_roots();
	char msg[200], labels[256];
	int err = 0;
	struct profile_opts o = { .stacks = true };
	struct profile *p = profile_load(rpath, NULL, &o, &err, msg, sizeof(msg));
	o.by_tid = true;
	struct profile *pt = profile_load(rpath, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p && pt);
	if (!p || !pt)
		goto out;
	size_t len;
	char *s = render(p, r_folded, NULL, &len);
	CHECK_STR(s, "host;prog;k_top_[k];k_leaf_[k] 10\n");
	free(s);
	enum fg_root r = FG_ROOT_PID;
	s = render(p, r_folded, &r, &len);
	CHECK_STR(s, "host;prog-200;k_top_[k];k_leaf_[k] 5\nhost;prog-201;k_top_[k];k_leaf_[k] 5\n");
	free(s);
	r = FG_ROOT_TID;
	s = render(pt, r_folded, &r, &len);
	CHECK_STR(s, "host;prog-200/200;k_top_[k];k_leaf_[k] 5\nhost;prog-201/201;k_top_[k];k_leaf_[k] 3\n"
			"host;prog-201/202;k_top_[k];k_leaf_[k] 2\n");
	free(s);
	r = FG_ROOT_NONE;
	s = render(p, r_folded, &r, &len);
	CHECK_STR(s, "host;k_top_[k];k_leaf_[k] 10\n");
	free(s);
	CHECK_EQ_U64(level_frames(p, FG_ROOT_COMM, labels, sizeof(labels)), 1);
	CHECK_STR(labels, "prog");
	CHECK_EQ_U64(level_frames(p, FG_ROOT_PID, labels, sizeof(labels)), 2);
	CHECK_STR(labels, "prog-200 prog-201");
	CHECK_EQ_U64(level_frames(pt, FG_ROOT_TID, labels, sizeof(labels)), 3);
	CHECK_EQ_U64(level_frames(p, FG_ROOT_NONE, labels, sizeof(labels)), 0);
	/* without opts.by_tid the stacks carry no tids: the control that the
	 * split above comes from the profile, not from the renderer */
	CHECK_EQ_U64(p->nstacks, 2);
	CHECK_EQ_U64(pt->nstacks, 3);
	/* pprof: pid and comm labels whatever the level, a tid label with
	 * --by-tid only (the control: none without it) */
	static unsigned char plain[1 << 16];
	size_t pn = pprof_plain(pt, &r, plain, sizeof(plain));   /* r == FG_ROOT_NONE here */
	CHECK(memmem(plain, pn, "pid", 3) && memmem(plain, pn, "comm", 4) && memmem(plain, pn, "prog", 4));
	CHECK(memmem(plain, pn, "tid", 3) == NULL);
	r = FG_ROOT_TID;
	pn = pprof_plain(pt, &r, plain, sizeof(plain));
	CHECK(memmem(plain, pn, "tid", 3) != NULL);
	int given = 0;
	enum fg_root root = FG_ROOT_COMM;
	CHECK(fg_root_option(&root, &given, "by-tid", msg, sizeof(msg)) == 0 && root == FG_ROOT_TID);
	CHECK(fg_root_option(&root, &given, "by-tid", msg, sizeof(msg)) == 0);
	CHECK(fg_root_option(&root, &given, "no-comm", msg, sizeof(msg)) == -EINVAL);
out:
	profile_free(p);
	profile_free(pt);
	unlink(rpath);
}

/*
 * The differential flame graph's merged tree on two small recordings of
 * "prog" (kernel frames k_top -> k_leaf / tmpl):
 *   A: k_top;k_leaf 6, k_top;tmpl 4        (10 samples)
 *   B: k_top;k_leaf 2, k_top 3             (5 samples)
 * k_leaf is in both (A 6, B 2), tmpl only in A (drawn 4 * 5/10 = 2 wide,
 * 4 raw with absolute), k_top has self 3 in B only, and the root is B's 5
 * plus tmpl's 2.
 */
static char dpath_a[] = "/tmp/test-render-da-XXXXXX", dpath_b[] = "/tmp/test-render-db-XXXXXX",
	    dpath_c[] = "/tmp/test-render-dc-XXXXXX";

static void write_diff_side(char *p, uint32_t n_leaf, uint32_t n_tmpl, uint32_t n_top, bool user_part)
{
	char *argv[] = { "test-render", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(p, 1, argv, NULL, &err);
	CHECK(w != NULL);
	struct dp_event ev = { .id = 0, .type = 1, .period = 1000, .freq = true, .name = "cpu-clock" };
	CHECK(dp_write_event(w, &ev) == 0);
	struct dp_domain d0 = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "embedded" };
	CHECK(dp_write_domain(w, &d0) == 0);
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)ksyms, .size = strlen(ksyms) };
	CHECK(dp_write_symtab(w, 0, &st) == 0);
	struct dp_task t = { .kind = DP_TASK_COMM, .pid = 300, .tid = 300, .comm = "prog" };
	CHECK(dp_write_task(w, 0, &t) == 0);
	uint64_t cl[] = { K(0x1010), K(0x3030) }, ct[] = { K(0x2100), K(0x3030) };
	/* an active view's kernel stack: its user part under the kernel one
	 * (perf's context marker, then a user return address) */
	uint64_t cu[] = { K(0x1010), K(0x3030), (uint64_t)-512, 0x401000 };
	for (uint32_t i = 0; i < n_leaf; i++)
		sample(w, 0, 300, DP_MODE_KERNEL, K(0x1010), user_part ? cu : cl, user_part ? 4 : 2);
	for (uint32_t i = 0; i < n_tmpl; i++)
		sample(w, 0, 300, DP_MODE_KERNEL, K(0x2100), ct, 2);
	for (uint32_t i = 0; i < n_top; i++)
		sample(w, 0, 300, DP_MODE_KERNEL, K(0x3030), NULL, 0);
	struct dp_stats sts = { .samples = n_leaf + n_tmpl + n_top };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);
}

struct diff_arg { const struct profile *a; struct fg_diff_opts o; };
static int r_diff(FILE *f, const struct profile *b, const void *arg)
{
	const struct diff_arg *d = arg;
	return flamegraph_diff_data(f, d->a, b, &d->o);
}

static void test_diff_tree(void)
{
	write_diff_side(dpath_a, 6, 4, 0, false);
	write_diff_side(dpath_b, 2, 0, 3, false);
	char msg[200];
	int err = 0;
	struct profile_opts o = { .stacks = true };
	struct profile *a = profile_load(dpath_a, NULL, &o, &err, msg, sizeof(msg));
	struct profile *b = profile_load(dpath_b, NULL, &o, &err, msg, sizeof(msg));
	CHECK(a && b);
	if (!a || !b)
		goto out;
	struct diff_arg d = { a, { .name_a = "A<", .name_b = "B" } };
	size_t len;
	char *s = render(b, r_diff, &d, &len);
	CHECK(json_ok(s, len));
	CHECK(strstr(s, "\"totalA\":10,\"totalB\":5,\"absolute\":false") != NULL);
	CHECK(strstr(s, "\"a\":\"A\\u003c\"") != NULL);          /* escaped for the page */
	/* nodes: depth,name,kind,dom,width,A,B,selfA,selfB in pre-order */
	CHECK(strstr(s, "\"nodes\":[0,0,0,0,7,10,5,0,0,1,1,1,0,7,10,5,0,0,2,2,2,0,7,10,5,0,0,") != NULL);
	CHECK(strstr(s, ",3,3,4,0,7,10,5,0,3,") != NULL);   /* k_top: self 3 in B */
	CHECK(strstr(s, ",4,4,4,0,2,6,2,6,2,") != NULL);    /* k_leaf: both */
	CHECK(strstr(s, ",4,5,4,0,2,4,0,4,0]") != NULL);    /* tmpl: only in A, 4 * 5/10 */
	free(s);
	d.o.absolute = true;
	s = render(b, r_diff, &d, &len);
	CHECK(strstr(s, ",4,4,4,0,4,4,0,4,0,4,5,4,0,2,6,2,6,2]") != NULL);  /* raw A samples: now widest (named first) */
	CHECK(strstr(s, "\"nodes\":[0,0,0,0,9,10,5,") != NULL);
	free(s);
	/* cross-domain: the domain frame is the label of both sides */
	d.o = (struct fg_diff_opts){ .cross_domain = true, .domain_label = "host|vm9" };
	s = render(b, r_diff, &d, &len);
	CHECK(strstr(s, "[\"host|vm9\",-1]") != NULL && strstr(s, "[\"host\",-1]") == NULL);
	free(s);
	/* the control: B against itself changes nothing and draws no A-only frame */
	d.a = b;
	d.o = (struct fg_diff_opts){ 0 };
	s = render(b, r_diff, &d, &len);
	CHECK(strstr(s, "\"nodes\":[0,0,0,0,5,5,5,0,0,") != NULL);
	CHECK(strstr(s, "tmpl") == NULL);
	free(s);
	s = NULL;
	FILE *f = open_memstream(&s, &len);
	CHECK(flamegraph_diff_svg(f, a, b, NULL) == 0);
	fclose(f);
	CHECK(strstr(s, "<title>tmpl&lt;int&gt;&amp; (A 4 samples 40.00%, B 0 samples 0.00%, change -40.00 points, only in A)</title>") != NULL);
	free(s);
	/* kernel_frames (diff -k): B's k_leaf samples now stand on a user
	 * frame; left out, k_top meets A's (k_leaf A 6, B 2 as before); the
	 * control: with the user frame kept, B's k_top is another path */
	profile_free(b);
	write_diff_side(dpath_c, 2, 0, 3, true);
	b = profile_load(dpath_c, NULL, &o, &err, msg, sizeof(msg));
	CHECK(b != NULL);
	if (!b)
		goto out;
	d = (struct diff_arg){ a, { .kernel_frames = true } };
	s = render(b, r_diff, &d, &len);
	CHECK(strstr(s, ",4,4,4,0,2,6,2,6,2,") != NULL);
	CHECK(strstr(s, "[unknown]") == NULL);
	free(s);
	d.o.kernel_frames = false;
	s = render(b, r_diff, &d, &len);
	CHECK(strstr(s, ",4,4,4,0,2,6,2,6,2,") == NULL);
	CHECK(strstr(s, "[unknown]") != NULL);
	free(s);
out:
	profile_free(a);
	profile_free(b);
	unlink(dpath_a);
	unlink(dpath_b);
	unlink(dpath_c);
}

static void test_json_outputs(const struct profile *p)
{
	size_t len;
	char *s = render(p, r_speedscope, "t.data", &len);
	CHECK(json_ok(s, len));
	CHECK(strstr(s, "speedscope.app/file-format-schema.json") != NULL);
	CHECK_EQ_U64(count(s, "\"sampled\""), 2);          /* one profile per domain */
	free(s);
	s = render(p, r_json, "t.data", &len);
	CHECK(json_ok(s, len));
	CHECK(strstr(s, "\"domprof-profile\"") != NULL);
	/* escaped, not raw (markup characters as \u, safe inside a page) */
	CHECK(strstr(s, "we;ird\\\"\\u003cc\\u003e\\u000aname") != NULL);
	free(s);
	enum profile_sort_key keys[] = { PROFILE_SORT_SAMPLE };
	struct report_view v = { .path = "json", .keys = keys, .nkeys = 1, .symbols = true, .callgraph = true };
	s = render(p, r_report, &v, &len);
	CHECK(json_ok(s, len));
	CHECK(strstr(s, "\"tmpl<int>&\"") != NULL);
	free(s);
	/* the control: the checker refuses what is not JSON */
	CHECK(!json_ok("{\"a\": 1,}", 9));
	CHECK(!json_ok("{\"a\": \"x\ny\"}", 12));
	CHECK(!json_ok("[1] [2]", 7));
}

static void test_csv_text(const struct profile *p)
{
	size_t len;
	enum profile_sort_key keys[] = { PROFILE_SORT_SAMPLE };
	struct report_view v = { .path = "csv", .keys = keys, .nkeys = 1, .symbols = true };
	char *s = render(p, r_report, &v, &len);
	CHECK(strncmp(s, "samples,", 8) == 0);
	uint64_t total = 0;
	for (char *line = strchr(s, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
		total += strtoull(line + 1, NULL, 10);
	CHECK_EQ_U64(total, NHOST + NGUEST);
	CHECK(strstr(s, "tmpl<int>&") != NULL);
	free(s);
	v.path = "text";
	s = render(p, r_report, &v, &len);
	CHECK(strstr(s, "samples  %") != NULL);
	CHECK(strstr(s, "k_leaf") != NULL && strstr(s, "vm1") != NULL);
	free(s);
}

static void test_markup(const struct profile *p)
{
	struct fg_opts o = { .title = "t<&>" };
	size_t len;
	char *s = render(p, r_svg, &o, &len);
	CHECK(strstr(s, "<svg") != NULL && strstr(s, "</svg>") != NULL);
	CHECK(strstr(s, "tmpl&lt;int&gt;&amp;") != NULL);
	CHECK(strstr(s, "tmpl<int>") == NULL);
	CHECK(strstr(s, "t&lt;&amp;&gt;") != NULL);
	free(s);
	s = render(p, r_html, &o, &len);
	CHECK(strncmp(s, "<!DOCTYPE html>", 15) == 0);
	CHECK(strstr(s, "src=\"http") == NULL && strstr(s, "href=\"http") == NULL);  /* self-contained */
	CHECK(strstr(s, "<title>t&lt;&amp;&gt;</title>") != NULL);
	CHECK(strstr(s, "</script>") != NULL);
	CHECK_EQ_U64(count(s, "</script>"), count(s, "<script"));  /* no label ends the script early */
	free(s);
}

static void test_pprof(const struct profile *p)
{
	size_t len;
	char *s = render(p, r_pprof, NULL, &len);
	CHECK(len > 20 && (unsigned char)s[0] == 0x1f && (unsigned char)s[1] == 0x8b);
	static unsigned char out[1 << 16];
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
	z.next_in = (unsigned char *)s;
	z.avail_in = (unsigned)len;
	z.next_out = out;
	z.avail_out = sizeof(out) - 1;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	size_t n = sizeof(out) - 1 - z.avail_out;
	inflateEnd(&z);
	CHECK(memmem(out, n, "k_leaf", 6) != NULL);
	CHECK(memmem(out, n, "tmpl<int>&", 10) != NULL);
	CHECK(memmem(out, n, "cpu", 3) != NULL);
	free(s);
}

/* ---- counters (format 1.3) ---- */

static char cpath[] = "/tmp/test-render-ctr-XXXXXX";

static void counters(struct dp_writer *w, uint32_t dom, const struct dp_counter *c, uint32_t n)
{
	CHECK(dp_write_counters(w, dom, &(struct dp_counters){ n, c }) == 0);
}

static void test_counters(void)
{
	char *argv[] = { "test-render", NULL };
	int err = 0;
	struct dp_writer *w = fixture_writer_tmp(cpath, 1, argv, NULL, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	struct dp_domain d[] = {
		{ .id = 3, .kind = DP_DOMAIN_PASSIVE, .name = "vm1", .address = "", .symsrc = "" },
		{ .id = 4, .kind = DP_DOMAIN_PASSIVE, .name = "vm2", .address = "", .symsrc = "" },
		{ .id = 5, .kind = DP_DOMAIN_PASSIVE, .name = "vm3", .address = "", .symsrc = "" },
	};
	for (int i = 0; i < 3; i++)
		CHECK(dp_write_domain(w, &d[i]) == 0);
	/* vm1 in two records that add up to 1000 chains: end 610, user 361,
	 * undefined 19, unreadable 10 */
	const struct dp_counter a[] = { { "unwind.chains", 600 }, { "unwind.stop.end", 400 },
					{ "unwind.stop.user", 180 }, { "unwind.stop.unreadable", 10 },
					{ "unwind.stop.fp-end", 0 }, { "unwind.bytes", 123456 } };
	const struct dp_counter b[] = { { "unwind.chains", 400 }, { "unwind.stop.end", 210 },
					{ "unwind.stop.user", 181 }, { "unwind.stop.undefined", 19 },
					{ "unwind.stop.loop", 0 } };
	counters(w, 3, a, 6);
	sample(w, 3, 0, DP_MODE_GUEST_KERNEL, K(0x1010), NULL, 0);
	counters(w, 3, b, 5);
	const struct dp_counter h[] = { { "other.thing", 9 } };      /* no unwind line */
	const struct dp_counter z[] = { { "unwind.chains", 0 }, { "unwind.stop.end", 0 } };
	const struct dp_counter o[] = { { "unwind.chains", 5 } };    /* none complete */
	counters(w, 0, h, 1);
	counters(w, 4, z, 2);
	counters(w, 5, o, 1);
	CHECK(dp_writer_finish(w) == 0);

	char msg[200];
	struct profile *p = profile_load(cpath, NULL, NULL, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	unlink(cpath);
	if (!p)
		return;
	const struct profile_counter *c;
	CHECK_EQ_U64(profile_counters(p, 3, &c), 8);
	CHECK(c && !strcmp(c[0].name, "unwind.bytes") && !strcmp(c[1].name, "unwind.chains"));
	CHECK_EQ_U64(profile_counter(p, 3, "unwind.chains"), 1000);
	CHECK_EQ_U64(profile_counter(p, 3, "unwind.stop.user"), 361);
	CHECK_EQ_U64(profile_counter(p, 0, "other.thing"), 9);
	CHECK_EQ_U64(profile_counter(p, 0, "unwind.chains"), 0);
	CHECK_EQ_U64(profile_counters(p, 7, &c), 0);

	size_t len;
	enum profile_sort_key keys[] = { PROFILE_SORT_SAMPLE };
	struct report_view v = { .path = "text", .keys = keys, .nkeys = 1, .symbols = true };
	char *s = render(p, r_report, &v, &len);
	CHECK(strstr(s, "\n# vm1: 1000 call chains unwound from outside, 97.1% complete (end 61.0%, "
		       "user 36.1%); cut: undefined 1.9%, unreadable 1.0%\n") != NULL);
	CHECK(strstr(s, "\n# vm3: 5 call chains unwound from outside, 0.0% complete\n") != NULL);
	CHECK_EQ_U64(count(s, "call chains unwound"), 2);  /* not host, not vm2 (0 chains) */
	/* the control: the check above can fail on a wrong share */
	CHECK(strstr(s, "unreadable 1.9%") == NULL);
	free(s);
	v.path = "json";
	s = render(p, r_report, &v, &len);
	CHECK(json_ok(s, len));
	CHECK(strstr(s, "\"name\":\"vm1\"") != NULL);
	CHECK(strstr(s, ",\"counters\":{\"unwind.bytes\":123456,\"unwind.chains\":1000,"
		       "\"unwind.stop.end\":610,\"unwind.stop.fp-end\":0,\"unwind.stop.loop\":0,"
		       "\"unwind.stop.undefined\":19,\"unwind.stop.unreadable\":10,"
		       "\"unwind.stop.user\":361}}") != NULL);
	CHECK(strstr(s, "\"counters\":{\"other.thing\":9}}") != NULL);
	CHECK_EQ_U64(count(s, "\"counters\""), 4);
	free(s);
	profile_free(p);
}

int main(void)
{
	test_counters();
	test_roots();
	test_diff_tree();
	write_file();
	struct profile_opts o = { .callgraph = true, .stacks = true };
	char msg[200];
	int err = 0;
	struct profile *p = profile_load(path, NULL, &o, &err, msg, sizeof(msg));
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(p->total_samples, NHOST + NGUEST);
		test_folded(p);
		test_json_outputs(p);
		test_csv_text(p);
		test_markup(p);
		test_pprof(p);
		/* a recording without COUNTERS: no counters anywhere */
		enum profile_sort_key keys[] = { PROFILE_SORT_SAMPLE };
		struct report_view v = { .path = "json", .keys = keys, .nkeys = 1 };
		size_t len;
		char *s = render(p, r_report, &v, &len);
		CHECK(strstr(s, "counters") == NULL);
		free(s);
		v.path = "text";
		s = render(p, r_report, &v, &len);
		CHECK(strstr(s, "call chains unwound") == NULL);
		free(s);
		profile_free(p);
	} else {
		fprintf(stderr, "load: %d %s\n", err, msg);
	}
	unlink(path);
	return unit_done();
}
