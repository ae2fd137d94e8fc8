// SPDX-License-Identifier: MIT
/*
 * Unit tests of src/util/file.c and src/util/hmap.c: the safe open refuses
 * a FIFO (without blocking: a writer-less FIFO would hang a plain open), a
 * directory and a device; whole-file reads are exact, bounded, and read
 * /proc files that report size 0 to their end. The map keeps 100,000 ids
 * apart, and string keys whose hashes collide stay apart; the index form
 * (hidx) keeps values that share a hash apart through the caller's
 * compare while it grows from 16 slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/hmap.h"

static void test_file(void)
{
	char dir[] = "/tmp/domprof-util-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char fifo[256], reg[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(reg, sizeof(reg), "%s/reg", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	alarm(20);    /* a blocking open would hang here */
	CHECK(file_open_regular(fifo, NULL) == FILE_ERR_NOT_REGULAR);
	char *d;
	size_t n;
	CHECK(file_read_all(fifo, 100, &d, &n) == FILE_ERR_NOT_REGULAR && !d);
	CHECK(file_open_regular(dir, NULL) == FILE_ERR_NOT_REGULAR);
	CHECK(file_open_regular("/dev/null", NULL) == FILE_ERR_NOT_REGULAR);
	CHECK(file_open_regular("/nonexistent/x", NULL) == -ENOENT);
	CHECK_STR(file_strerror(FILE_ERR_NOT_REGULAR), "not a regular file");
	alarm(0);

	FILE *f = fopen(reg, "w");
	fputs("0123456789", f);
	fclose(f);
	uint64_t size = 0;
	int fd = file_open_regular(reg, &size);
	CHECK(fd >= 0 && size == 10);
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));   /* reads block as usual */
	if (fd >= 0)
		close(fd);
	CHECK(file_read_all(reg, 10, &d, &n) == 0 && n == 10 && !strcmp(d, "0123456789"));
	free(d);
	CHECK(file_read_all(reg, 9, &d, &n) == -EFBIG && !d);
	/* regular, size 0, content anyway */
	CHECK(file_read_all("/proc/self/status", 1 << 20, &d, &n) == 0 && n > 0 &&
	      strstr(d, "Name:") != NULL);
	free(d);
	CHECK(file_read_all("/proc/self/status", 8, &d, &n) == -EFBIG);
	unlink(fifo);
	unlink(reg);
	rmdir(dir);
}

static void test_hmap(void)
{
	struct hmap m = { 0 };
	static int vals[100000];
	for (uint64_t i = 0; i < 100000; i++)
		u64map_put(&m, i << 32, &vals[i]);     /* ids differing in high bits only */
	int ok = 1;
	for (uint64_t i = 0; i < 100000; i++)
		ok &= u64map_get(&m, i << 32) == &vals[i];
	CHECK(ok);
	CHECK(m.n == 100000 && u64map_get(&m, 7) == NULL);
	u64map_put(&m, 0, &vals[5]);    /* replaces */
	CHECK(m.n == 100000 && u64map_get(&m, 0) == &vals[5]);
	hmap_release(&m);
	CHECK(m.cap == 0 && u64map_get(&m, 0) == NULL);

	/* one hash, two strings: compared on a match, kept apart */
	struct hmap s = { 0 };
	hmap_put(&s, 42, "alpha", &vals[1]);
	hmap_put(&s, 42, "beta", &vals[2]);
	CHECK(hmap_get(&s, 42, "alpha") == &vals[1]);
	CHECK(hmap_get(&s, 42, "beta") == &vals[2]);
	CHECK(hmap_get(&s, 42, "gamma") == NULL);
	strmap_put(&s, "d1", &vals[3]);
	CHECK(strmap_get(&s, "d1") == &vals[3] && strmap_get(&s, "d2") == NULL);
	hmap_release(&s);
}

/* Find-or-add of v in entries ent[] through t, the way profile*.c
 * probes: hidx_find with the caller's compare on a hash match. */
struct hidx_ctx {
	const uint64_t *ent;
	uint64_t v;
};

static bool hidx_ent_eq(const void *ctx, uint32_t e)
{
	const struct hidx_ctx *c = ctx;
	return c->ent[e] == c->v;
}

static uint32_t hidx_intern(struct hidx *t, uint64_t *ent, uint32_t *n, uint64_t v, uint64_t h)
{
	size_t i;
	struct hidx_ctx c = { ent, v };
	uint32_t e = hidx_find(t, h, hidx_ent_eq, &c, &i);
	if (e != HIDX_NONE)
		return e;
	ent[*n] = v;
	hidx_fill(t, i, h, *n);
	return (*n)++;
}

static void test_hidx(void)
{
	static uint64_t ent[20000];
	uint32_t n = 0;
	struct hidx t;
	hidx_init(&t, 16);    /* grows many times on the way */
	int ok = 1;
	for (uint64_t v = 0; v < 10000; v++)   /* every hash shared by 4 values */
		ok &= hidx_intern(&t, ent, &n, v, v / 4) == v;
	CHECK(ok && n == 10000 && t.n == 10000 && t.cap >= 10000 * 10 / 7);
	for (uint64_t v = 0; v < 10000; v++)   /* found again, nothing added */
		ok &= hidx_intern(&t, ent, &n, v, v / 4) == v;
	CHECK(ok && n == 10000 && t.n == 10000);
	/* control: a value not in the table under a used hash is added */
	CHECK(hidx_intern(&t, ent, &n, 123456, 7) == 10000 && n == 10001);
	hidx_release(&t);
	CHECK(t.cap == 0 && t.slot == NULL);
	/* hashes alike in their low 32 bits (the bits a slot keeps): they
	 * share a probe and stay apart by the compare, across growth */
	hidx_init(&t, 16);
	n = 0;
	for (uint64_t v = 0; v < 2000; v++)
		ok &= hidx_intern(&t, ent, &n, v, v << 32 | 5) == v;
	for (uint64_t v = 0; v < 2000; v++)
		ok &= hidx_intern(&t, ent, &n, v, v << 32 | 5) == v;
	CHECK(ok && n == 2000 && t.n == 2000);
	hidx_release(&t);
}

/* util/fmt.h: the bytes snprintf gives, ties rounded to even as glibc
 * does; known answers first (the control: a tie that rounds up would be
 * "0.7813"), then a sweep of the report's percentages against snprintf. */
static void test_fmt(void)
{
	char b[FMT_NUM_MAX + 1], c[FMT_NUM_MAX];
	b[fmt_fixed(b, 100.0 / 128, 4)] = 0;   /* 0.78125 exactly: a tie */
	CHECK_STR(b, "0.7812");
	b[fmt_fixed(b, 100.0 * 3 / 128, 4)] = 0;   /* 2.34375: a tie, odd */
	CHECK_STR(b, "2.3438");
	b[fmt_fixed(b, 0.0, 4)] = 0;
	CHECK_STR(b, "0.0000");
	b[fmt_fixed(b, 100.0, 2)] = 0;
	CHECK_STR(b, "100.00");
	b[fmt_fixed(b, 99.999951, 4)] = 0;
	CHECK_STR(b, "100.0000");
	b[fmt_fixed(b, -0.0, 4)] = 0;      /* outside the exact path: snprintf's */
	CHECK_STR(b, "-0.0000");
	b[fmt_u64(b, UINT64_MAX)] = 0;
	CHECK_STR(b, "18446744073709551615");
	b[fmt_u64(b, 0)] = 0;
	CHECK_STR(b, "0");
	int bad = 0;
	for (uint64_t t = 1; t < 700; t++)
		for (uint64_t n = 0; n <= t; n++)
			for (int d = 2; d <= 4; d += 2) {
				double v = 100.0 * (double)n / (double)t;
				b[fmt_fixed(b, v, d)] = 0;
				snprintf(c, sizeof(c), "%.*f", d, v);
				bad += strcmp(b, c) != 0;
			}
	CHECK(bad == 0);
}

int main(void)
{
	test_fmt();
	test_file();
	test_hmap();
	test_hidx();
	return unit_done();
}
