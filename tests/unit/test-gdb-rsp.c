// SPDX-License-Identifier: MIT
/*
 * GDB remote serial protocol pieces without a VM: packet framing and
 * decoding (checksums, run-length encoding, escapes, bad and overlong
 * packets), QEMU 7.2's real target description (tests/fixtures/gdb/,
 * saved from a running qemu-system-x86_64 stub) into register offsets,
 * stop replies and thread lists, domain spec parsing and the loopback
 * rule, and the KASLR search over a synthetic guest address space.
 */
#include <errno.h>
#include <stdlib.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_source.h"
#include "collect/kaslr.h"
#include "unit.h"

static int parse_str(const char *in, char *out, size_t cap, size_t *outlen, size_t *used)
{
	return rsp_parse((const uint8_t *)in, strlen(in), used, (uint8_t *)out, cap, outlen);
}

static void test_packets(void)
{
	char out[256], f[64];
	size_t ol, used;

	/* Frame and parse back, with every character that needs escaping. */
	int n = rsp_frame("a$b#c}d*e", 9, f, sizeof(f));
	CHECK(n > 0);
	f[n > 0 ? n : 0] = 0;
	CHECK_STR(f, "$a}\x04" "b}\x03" "c}]d}\x0a" "e#" "51");
	/* that checksum is computed, not copied: recompute */
	unsigned sum = 0;
	for (int i = 1; i < n - 3; i++)
		sum += (uint8_t)f[i];
	char ck[3];
	snprintf(ck, sizeof(ck), "%02x", sum & 0xff);
	CHECK(n > 3 && !memcmp(f + n - 2, ck, 2));
	CHECK_EQ_U64(parse_str(f, out, sizeof(out), &ol, &used), 1);
	CHECK_EQ_U64(ol, 9);
	CHECK(!memcmp(out, "a$b#c}d*e", 9));
	CHECK_EQ_U64(used, (size_t)n);

	/* Known packets. */
	CHECK_EQ_U64(parse_str("$OK#9a", out, sizeof(out), &ol, &used), 1);
	CHECK(ol == 2 && !memcmp(out, "OK", 2));
	CHECK_EQ_U64(parse_str("+++$OK#9a+", out, sizeof(out), &ol, &used), 1);
	CHECK_EQ_U64(used, 9);
	CHECK_EQ_U64(parse_str("$#00", out, sizeof(out), &ol, &used), 1);
	CHECK_EQ_U64(ol, 0);
	/* Uppercase checksum digits are fine. */
	CHECK_EQ_U64(parse_str("$T05thread:01;#07", out, sizeof(out), &ol, &used), 1);

	/* Run-length: "0* " is 0 followed by 3 more = "0000". */
	char pk[64];
	const char *body = "0* 1*!";
	sum = 0;
	for (const char *p = body; *p; p++)
		sum += (uint8_t)*p;
	snprintf(pk, sizeof(pk), "$%s#%02x", body, sum & 0xff);
	CHECK_EQ_U64(parse_str(pk, out, sizeof(out), &ol, &used), 1);
	CHECK_EQ_U64(ol, 9);
	CHECK(!memcmp(out, "000011111", 9));
	/* RLE at the start has nothing to repeat. */
	CHECK_EQ_U64(parse_str("$* #4a", out, sizeof(out), &ol, &used), -EPROTO);
	/* RLE count outside the printable range. */
	snprintf(pk, sizeof(pk), "$0*\x01#%02x", ('0' + '*' + 1) & 0xff);
	CHECK_EQ_U64(parse_str(pk, out, sizeof(out), &ol, &used), -EPROTO);
	/* RLE past the output buffer. */
	snprintf(pk, sizeof(pk), "$0*~#%02x", ('0' + '*' + '~') & 0xff);
	CHECK_EQ_U64(parse_str(pk, out, 10, &ol, &used), -EMSGSIZE);

	/* Escapes: "}]" is '}' (0x5d ^ 0x20 = 0x7d). */
	snprintf(pk, sizeof(pk), "$x}]#%02x", ('x' + '}' + ']') & 0xff);
	CHECK_EQ_U64(parse_str(pk, out, sizeof(out), &ol, &used), 1);
	CHECK(ol == 2 && out[1] == '}');
	/* An escape with nothing after it. */
	snprintf(pk, sizeof(pk), "$x}#%02x", ('x' + '}') & 0xff);
	CHECK(parse_str(pk, out, sizeof(out), &ol, &used) < 0 || ol != 1);

	/* Bad checksum, bad checksum digits, junk, NAK. */
	CHECK_EQ_U64(parse_str("$OK#9b", out, sizeof(out), &ol, &used), -EBADMSG);
	CHECK_EQ_U64(parse_str("$OK#zz", out, sizeof(out), &ol, &used), -EPROTO);
	CHECK_EQ_U64(parse_str("hello", out, sizeof(out), &ol, &used), -EPROTO);
	CHECK_EQ_U64(parse_str("-", out, sizeof(out), &ol, &used), -EPROTO);
	CHECK_EQ_U64(parse_str("$O$K#9a", out, sizeof(out), &ol, &used), -EPROTO);

	/* Incomplete: more bytes needed, never an error. */
	CHECK_EQ_U64(parse_str("$OK", out, sizeof(out), &ol, &used), 0);
	CHECK_EQ_U64(parse_str("$OK#9", out, sizeof(out), &ol, &used), 0);
	CHECK_EQ_U64(parse_str("$0*", out, sizeof(out), &ol, &used), 0);
	CHECK_EQ_U64(parse_str("++", out, sizeof(out), &ol, &used), 0);
	CHECK_EQ_U64(used, 2);

	/* Overlong: payload bigger than the output buffer, and a packet
	 * whose end never comes. */
	size_t big = RSP_MAX_RAW + 100;
	char *b = malloc(big + 1);
	memset(b, 'a', big);
	b[0] = '$';
	b[big] = 0;
	CHECK_EQ_U64(parse_str(b, out, sizeof(out), &ol, &used), -EMSGSIZE);
	uint8_t *o2 = malloc(RSP_MAX_PAYLOAD);
	CHECK_EQ_U64(rsp_parse((uint8_t *)b, big, &used, o2, RSP_MAX_PAYLOAD, &ol), -EMSGSIZE);
	free(o2);
	free(b);

	/* Frame into a too-small buffer. */
	CHECK_EQ_U64(rsp_frame("abcdef", 6, f, 8), -EMSGSIZE);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

static const char *fixture_dir(void)
{
	const char *top = getenv("DOMPROF_TOP");
	static char d[4096];
	snprintf(d, sizeof(d), "%s/tests/fixtures/gdb", top ? top : ".");
	return d;
}

static int fetch_fixture(void *ctx, const char *annex, char **data, size_t *len)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/%s", fixture_dir(), annex);
	(*(int *)ctx)++;
	*data = slurp(p, len);
	return *data ? 0 : -ENOENT;
}

static void test_tdesc(void)
{
	struct rsp_tdesc td = { 0 };
	size_t len;
	char p[4400];
	int fetched = 0;

	snprintf(p, sizeof(p), "%s/target.xml", fixture_dir());
	char *xml = slurp(p, &len);
	CHECK(xml != NULL);
	if (!xml)
		return;
	CHECK_EQ_U64(rsp_tdesc_parse(&td, xml, len, fetch_fixture, &fetched), 0);
	CHECK_EQ_U64(fetched, 1);
	CHECK_EQ_U64(rsp_tdesc_finish(&td), 0);
	CHECK_STR(td.arch, "i386:x86-64");
	/* QEMU 7.2's layout, as a `g` reply of 1216 hex chars shows: 608 bytes.
	 * The commented-out cs_base..es_base must not count. */
	CHECK_EQ_U64(td.gbytes, 608);
	CHECK(rsp_tdesc_find(&td, "cs_base") == NULL);
	const struct rsp_reg *r = rsp_tdesc_find(&td, "rip");
	CHECK(r && r->offset == 128 && r->bitsize == 64 && r->regnum == 16);
	r = rsp_tdesc_find(&td, "cs");
	CHECK(r && r->offset == 140 && r->bitsize == 32 && r->regnum == 18);
	r = rsp_tdesc_find(&td, "cr3");
	CHECK(r && r->offset == 204 && r->bitsize == 64 && r->regnum == 29);
	r = rsp_tdesc_find(&td, "mxcsr");
	CHECK(r && r->offset == 604);
	rsp_tdesc_release(&td);
	free(xml);

	/* regnum= jumps; registers sorted by number for offsets. */
	const char *x2 = "<target><architecture>i386:x86-64</architecture>"
			 "<feature><reg name=\"b\" bitsize=\"32\" regnum=\"5\"/>"
			 "<reg name=\"c\" bitsize=\"64\"/>"
			 "<!-- <reg name=\"hidden\" bitsize=\"8\"/> -->"
			 "<reg name='a' bitsize='16' regnum='0'/></feature></target>";
	memset(&td, 0, sizeof(td));
	CHECK_EQ_U64(rsp_tdesc_parse(&td, x2, strlen(x2), NULL, NULL), 0);
	CHECK_EQ_U64(rsp_tdesc_finish(&td), 0);
	CHECK_EQ_U64(td.nregs, 3);
	r = rsp_tdesc_find(&td, "c");
	CHECK(r && r->regnum == 6 && r->offset == 6);
	CHECK(rsp_tdesc_find(&td, "hidden") == NULL);
	rsp_tdesc_release(&td);

	/* Hostile descriptions. */
	const char *bad[] = {
		"<reg name=\"a\" bitsize=\"7\"/>",                  /* not whole bytes */
		"<reg name=\"a\" bitsize=\"99999\"/>",
		"<reg name=\"a\"/>",
		"<reg name=\"a\" bitsize=\"8\"",                    /* no '>' */
		"<!-- never closed",
		"<xi:include href=\"../../etc/passwd\"/>",         /* odd annex name */
		"<xi:include href=\"a.xml\"/>",                     /* no fetch */
		"<architecture>never closed",
		"<reg name=\"a\" bitsize=\"8\" regnum=\"1\"/><reg name=\"b\" bitsize=\"8\" regnum=\"1\"/>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&td, 0, sizeof(td));
		int rc = rsp_tdesc_parse(&td, bad[i], strlen(bad[i]), NULL, NULL);
		if (rc == 0)
			rc = rsp_tdesc_finish(&td);
		CHECK(rc < 0);
		rsp_tdesc_release(&td);
	}
	/* An include that includes itself stops at the depth limit. */
	memset(&td, 0, sizeof(td));
	fetched = 0;
	CHECK(rsp_tdesc_parse(&td, "<xi:include href=\"self.xml\"/>", 29, NULL, NULL) < 0);
	rsp_tdesc_release(&td);
	/* No architecture: parsed, but arch stays empty (caller refuses). */
	memset(&td, 0, sizeof(td));
	const char *noarch = "<reg name=\"pc\" bitsize=\"32\"/>";
	CHECK_EQ_U64(rsp_tdesc_parse(&td, noarch, strlen(noarch), NULL, NULL), 0);
	CHECK(td.arch[0] == 0);
	rsp_tdesc_release(&td);
}

static void test_replies(void)
{
	char tid[RSP_MAX_TID];
	uint64_t v;

	CHECK_EQ_U64(rsp_parse_stop("T05thread:p01.01;", 17, tid, sizeof(tid)), RSP_STOP_SIGNAL);
	CHECK_STR(tid, "p01.01");
	CHECK_EQ_U64(rsp_parse_stop("T02thread:02;", 13, tid, sizeof(tid)), RSP_STOP_SIGNAL);
	CHECK_STR(tid, "02");
	CHECK_EQ_U64(rsp_parse_stop("S05", 3, tid, sizeof(tid)), RSP_STOP_SIGNAL);
	CHECK_STR(tid, "");
	CHECK_EQ_U64(rsp_parse_stop("W00", 3, tid, sizeof(tid)), RSP_STOP_EXITED);
	CHECK_EQ_U64(rsp_parse_stop("X09", 3, tid, sizeof(tid)), RSP_STOP_EXITED);
	CHECK_EQ_U64(rsp_parse_stop("O414243", 7, tid, sizeof(tid)), RSP_STOP_OUTPUT);
	CHECK(rsp_parse_stop("OK", 2, tid, sizeof(tid)) < 0);
	CHECK(rsp_parse_stop("", 0, tid, sizeof(tid)) < 0);
	CHECK(rsp_parse_stop("T05thread:zz;", 13, tid, sizeof(tid)) < 0);
	CHECK(rsp_parse_stop("T05thread:0123456789012345678901234567890123456789;", 51, tid, sizeof(tid)) < 0);

	char (*tids)[RSP_MAX_TID] = calloc(4, RSP_MAX_TID);
	size_t n = 0;
	CHECK_EQ_U64(rsp_parse_threads("m01,02", 6, tids, &n, 4), 1);
	CHECK_EQ_U64(rsp_parse_threads("mp01.03", 7, tids, &n, 4), 1);
	CHECK_EQ_U64(rsp_parse_threads("l", 1, tids, &n, 4), 0);
	CHECK_EQ_U64(n, 3);
	CHECK_STR(tids[1], "02");
	CHECK_STR(tids[2], "p01.03");
	CHECK(rsp_parse_threads("m01,02", 6, tids, &n, 4) == -E2BIG);
	n = 0;
	CHECK(rsp_parse_threads("m01,,02", 7, tids, &n, 4) < 0);
	CHECK(rsp_parse_threads("x", 1, tids, &n, 4) < 0);
	CHECK(rsp_parse_threads("", 0, tids, &n, 4) < 0);
	free(tids);

	CHECK_EQ_U64(rsp_hex_le("f0ff000000000000", 16, 8, &v), 0);
	CHECK_EQ_U64(v, 0xfff0);
	CHECK_EQ_U64(rsp_hex_le("00f00000", 8, 4, &v), 0);
	CHECK_EQ_U64(v, 0xf000);
	CHECK_EQ_U64(rsp_hex_le("00f0", 4, 4, &v), -EINVAL);
	CHECK_EQ_U64(rsp_hex_le("xxxxxxxx", 8, 4, &v), -ENODATA);
	CHECK_EQ_U64(rsp_hex_le("0g000000", 8, 4, &v), -EINVAL);
	uint8_t b[4];
	CHECK_EQ_U64(rsp_hex_bytes("0102ff", 6, b, 4), 3);
	CHECK(b[2] == 0xff);
	CHECK(rsp_hex_bytes("E14", 3, b, 4) < 0);
	CHECK(rsp_hex_bytes("0102030405", 10, b, 4) < 0);
}

static void test_spec(void)
{
	struct gdb_spec sp;
	char err[512];

	CHECK_EQ_U64(gdb_spec_parse("vm1=gdb:unix:/tmp/s", &sp, err, sizeof(err)), 0);
	CHECK_STR(sp.name, "vm1");
	CHECK(sp.is_unix);
	CHECK_STR(sp.host, "/tmp/s");
	CHECK(!sp.kaslr_auto && sp.kaslr == 0 && sp.symsrc == GDB_SYM_NONE);

	CHECK_EQ_U64(gdb_spec_parse("a=gdb:127.0.0.1:1234,sysmap=/x/System.map", &sp, err, sizeof(err)), 0);
	CHECK(!sp.is_unix);
	CHECK_STR(sp.host, "127.0.0.1");
	CHECK_STR(sp.port, "1234");
	CHECK(sp.symsrc == GDB_SYM_SYSMAP && sp.kaslr_auto);   /* auto by default */
	CHECK_STR(sp.symfile, "/x/System.map");

	CHECK_EQ_U64(gdb_spec_parse("a=gdb:localhost:1,vmlinux=/v,kaslr=0x1e000000", &sp, err, sizeof(err)), 0);
	CHECK(sp.symsrc == GDB_SYM_VMLINUX && !sp.kaslr_auto && sp.kaslr == 0x1e000000);
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:[::1]:99,kallsyms=/k", &sp, err, sizeof(err)), 0);
	CHECK_STR(sp.host, "::1");
	CHECK(sp.symsrc == GDB_SYM_KALLSYMS && !sp.kaslr_auto);   /* 0 for kallsyms */
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,kallsyms=/k,kaslr=auto,regs=p", &sp, err, sizeof(err)), 0);
	CHECK(sp.kaslr_auto && sp.regs_p);
	CHECK(!sp.no_current);
	/* symbols from guest memory: explicit, and the current-task switch */
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,kallsyms=guest,current=0", &sp, err, sizeof(err)), 0);
	CHECK(sp.symsrc == GDB_SYM_GUEST && sp.symfile[0] == 0 && sp.no_current && !sp.kaslr_auto);
	/* the -g unwinder's options, at their bounds */
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,unwind-window=64,unwind-max=32768,unwind-depth=128", &sp, err,
				    sizeof(err)), 0);
	CHECK(sp.unwind.window == 64 && sp.unwind.max_bytes == 32768 && sp.unwind.depth == 128);
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,unwind-window=4096,unwind-max=512,unwind-depth=1", &sp, err,
				    sizeof(err)), 0);
	CHECK(sp.unwind.window == 4096 && sp.unwind.max_bytes == 512 && sp.unwind.depth == 1);
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s", &sp, err, sizeof(err)), 0);
	CHECK(!sp.unwind.window && !sp.unwind.max_bytes && !sp.unwind.depth);   /* the defaults */
	CHECK(sp.paging == GUEST_PAGING_UNKNOWN);   /* paging: found from the guest */
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,paging=5", &sp, err, sizeof(err)), 0);
	CHECK(sp.paging == GUEST_PAGING_5);
	CHECK_EQ_U64(gdb_spec_parse("a=gdb:unix:/s,paging=4", &sp, err, sizeof(err)), 0);
	CHECK(sp.paging == GUEST_PAGING_4);

	const char *bad[] = {
		"a=gdb:unix:/s,kallsyms=guest,kaslr=auto", "a=gdb:unix:/s,kaslr=0x200000",
		"a=gdb:unix:/s,current=2", "a=gdb:unix:/s,kallsyms=guest,vmlinux=/v",
		"gdb:unix:/s", "=gdb:unix:/s", "a b=gdb:unix:/s", "a=gdb:", "a=gdb:unix:",
		"a=gdb:host", "a=gdb:host:0", "a=gdb:host:99999", "a=gdb:host:12x",
		"a=gdb:unix:/s,kaslr=zz", "a=gdb:unix:/s,kaslr=-1", "a=gdb:unix:/s,foo=1",
		"a=gdb:unix:/s,kallsyms=/a,sysmap=/b", "a=gdb:unix:/s,kaslr=auto",
		"a=gdb:unix:/s,", "a=gdb:unix:/s,kallsyms", "a=agent:x:1", "a=gdb:unix:/s,regs=q",
		"a=gdb:unix:/s,unwind-window=63", "a=gdb:unix:/s,unwind-window=4097", "a=gdb:unix:/s,unwind-max=511",
		"a=gdb:unix:/s,unwind-max=32769", "a=gdb:unix:/s,unwind-depth=0", "a=gdb:unix:/s,unwind-depth=129",
		"a=gdb:unix:/s,unwind-depth=", "a=gdb:unix:/s,unwind-depth=8x", "a=gdb:unix:/s,unwind-depth=-1",
		"a=gdb:unix:/s,paging=3", "a=gdb:unix:/s,paging=", "a=gdb:unix:/s,paging=57",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int r = gdb_spec_parse(bad[i], &sp, err, sizeof(err));
		CHECK_EQ_U64(r, -EINVAL);
		CHECK(err[0] != 0);
		if (r == 0)
			fprintf(stderr, "accepted: %s\n", bad[i]);
	}

	CHECK_EQ_U64(gdb_check_loopback("127.0.0.1", "1234", err, sizeof(err)), 0);
	CHECK_EQ_U64(gdb_check_loopback("127.1.2.3", "1234", err, sizeof(err)), 0);
	CHECK_EQ_U64(gdb_check_loopback("::1", "1234", err, sizeof(err)), 0);
	CHECK_EQ_U64(gdb_check_loopback("localhost", "1234", err, sizeof(err)), 0);
	CHECK_EQ_U64(gdb_check_loopback("192.0.2.1", "1234", err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "--allow-remote-stub") != NULL);
	CHECK_EQ_U64(gdb_check_loopback("10.0.0.1", "1234", err, sizeof(err)), -EPERM);
	CHECK_EQ_U64(gdb_check_loopback("::ffff:10.0.0.1", "1234", err, sizeof(err)), -EPERM);
	CHECK_EQ_U64(gdb_check_loopback("2001:db8::1", "1234", err, sizeof(err)), -EPERM);
	CHECK_EQ_U64(gdb_check_loopback("0.0.0.0", "1234", err, sizeof(err)), -EPERM);
	CHECK(gdb_check_loopback("no-such-host.invalid", "1234", err, sizeof(err)) < 0);
}

/* A synthetic guest: the kernel image [text+off, end+off) is mapped,
 * nothing else in the kernel area; memory there holds a pattern that
 * starts with the "_text bytes". */
struct fake_guest {
	uint64_t text, end, off;
	bool early;             /* still booting: all of the area mapped */
	unsigned reads;
};

static uint8_t fake_byte(uint64_t a)
{
	return (uint8_t)(a * 131 + (a >> 9));
}

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_guest *g = ctx;
	g->reads++;
	uint64_t lo = g->early ? KASLR_MAP_START : g->text + g->off;
	if (addr < lo || addr + len > g->end + g->off)
		return -EFAULT;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = fake_byte(addr - g->off + i);
	return 0;
}

struct real_guest {
	uint64_t at;
	uint8_t bytes[64];
};

static int real_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct real_guest *g = ctx;
	if (addr != g->at || len > 64)
		return -EFAULT;
	memcpy(buf, g->bytes, len);
	return 0;
}

static void test_kaslr(void)
{
	const char *sysmap =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81001000 T _stext\n"
		"ffffffff81e00000 T _etext\n"
		"ffffffff82000000 D some_data\n"
		"ffffffffc0001000 t mod_fn\t[ext4]\n"
		"ffffffff83400000 B _end\n"
		"garbage line\n";
	struct kaslr_image img;
	CHECK_EQ_U64(kaslr_image_from_symtext(sysmap, strlen(sysmap), &img), 0);
	CHECK_EQ_U64(img.text, 0xffffffff81000000ull);
	CHECK_EQ_U64(img.etext, 0xffffffff81e00000ull);
	CHECK_EQ_U64(img.end, 0xffffffff83400000ull);
	CHECK_EQ_U64(img.nbytes, 0);
	CHECK_EQ_U64(kaslr_image_from_symtext("x\n", 2, &img), -EINVAL);
	CHECK_EQ_U64(kaslr_image_from_symtext("ffffffff81000000 T foo\n", 23, &img), -ENOENT);
	CHECK_EQ_U64(kaslr_image_from_symtext(sysmap, strlen(sysmap), &img), 0);

	uint64_t offs[] = { 0, 0x1e000000, 0x200000, 0x3c000000 - 0x2400000 };
	for (size_t i = 0; i < 4; i++) {
		struct fake_guest g = { img.text, img.end, offs[i], false, 0 };
		uint64_t off = 1, rip = img.text + 0x1234 + offs[i];
		char how[160];
		CHECK_EQ_U64(kaslr_find(&img, fake_read, &g, &rip, 1, &off, how, sizeof(how)), 0);
		CHECK_EQ_U64(off, offs[i]);
		CHECK(strstr(how, "first mapped page") != NULL);
		/* A rip outside the image found contradicts it. */
		uint64_t badrip = img.end + offs[i] + 0x400000;
		CHECK_EQ_U64(kaslr_find(&img, fake_read, &g, &badrip, 1, &off, how, sizeof(how)), -EPROTO);
		/* Module rips say nothing. */
		uint64_t modrip = 0xffffffffc0001234ull;
		CHECK_EQ_U64(kaslr_find(&img, fake_read, &g, &modrip, 1, &off, how, sizeof(how)), 0);
	}
	/* A guest still booting (everything mapped) is not guessed at. */
	struct fake_guest early = { img.text, img.end, 0x1e000000, true, 0 };
	uint64_t off;
	char how[160];
	CHECK_EQ_U64(kaslr_find(&img, fake_read, &early, NULL, 0, &off, how, sizeof(how)), -ENOENT);

	/* With the bytes at _text (as from a vmlinux): they decide. */
	img.nbytes = 32;
	for (size_t i = 0; i < img.nbytes; i++)
		img.bytes[i] = fake_byte(img.text + i);
	struct fake_guest g = { img.text, img.end, 0x2a00000, false, 0 };
	CHECK_EQ_U64(kaslr_find(&img, fake_read, &g, NULL, 0, &off, how, sizeof(how)), 0);
	CHECK_EQ_U64(off, 0x2a00000);
	CHECK(strstr(how, "kernel bytes") != NULL);
	img.bytes[3] ^= 1;   /* a different kernel build */
	CHECK_EQ_U64(kaslr_find(&img, fake_read, &g, NULL, 0, &off, how, sizeof(how)), -ENOENT);
	CHECK(g.reads <= 2 * 512);

	/* Real bytes: Debian's 6.1.0-57 kernel, startup_64 in the vmlinux file
	 * and in a guest booted with KASLR (offset 0x36a00000, known from that
	 * boot's kallsyms). `mov $_text, %rdx` was relocated at run time. */
	static const char file_hex[] = "488d25513fa001488d3df2ffffffb9010100c0488b059eb1bf0148c7c200"
				       "0000814829d04801f84889c248c1ea200f3056e8aa0700005e6a10488d05"
				       "03000000";
	static const char guest_hex[] = "488d25513fa001488d3df2ffffffb9010100c0488b059eb1bf0148c7c200"
					"00a0b74829d04801f84889c248c1ea200f3056e8aa0700005e6a10488d05"
					"03000000";
	struct real_guest rg = { .at = 0xffffffff81000000ull + 0x36a00000ull };
	CHECK_EQ_U64(rsp_hex_bytes(guest_hex, 128, rg.bytes, 64), 64);
	img.text = 0xffffffff81000000ull;
	img.nbytes = 64;
	CHECK_EQ_U64(rsp_hex_bytes(file_hex, 128, img.bytes, 64), 64);
	CHECK_EQ_U64(kaslr_find(&img, real_read, &rg, NULL, 0, &off, how, sizeof(how)), 0);
	CHECK_EQ_U64(off, 0x36a00000);
	/* The same bytes at another offset do not pass: the relocated field
	 * would differ by the wrong amount. */
	rg.at = 0xffffffff81000000ull + 0x10000000ull;
	CHECK_EQ_U64(kaslr_find(&img, real_read, &rg, NULL, 0, &off, how, sizeof(how)), -ENOENT);

	CHECK(kaslr_image_from_vmlinux("/nonexistent/vmlinux", &img) < 0);
	CHECK_EQ_U64(kaslr_image_from_vmlinux("/etc/hostname", &img), -ENOEXEC);
}

int main(void)
{
	test_packets();
	test_tdesc();
	test_replies();
	test_spec();
	test_kaslr();
	return unit_done();
}
