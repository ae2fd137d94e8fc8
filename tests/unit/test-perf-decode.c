// SPDX-License-Identifier: MIT
/*
 * Unit test of perf_source's record decoding, with synthetic bytes laid
 * out as the kernel writes them for the sample_type perf_source opens
 * (IDENTIFIER|IP|TID|TIME|CPU|PERIOD[|CALLCHAIN], sample_id_all): the
 * ring reader (perf_ring_next: LOST, THROTTLE, bad sizes, a record that
 * wraps around the ring's end) and the decoder (perf_decode_record:
 * SAMPLE with and without callchain, MMAP2 with a build-id, COMM, FORK,
 * EXIT, truncated and oversized records), and the user registers and
 * stack of --call-graph dwarf (REGS_USER | STACK_USER after the chain):
 * only dyn_size bytes kept, none for ABI NONE, none when a part does not
 * fit or the chain before them was cut; perf_ring_copy_sample, which
 * leaves a stack's unused tail out of the queue's copy.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "collect/perf_source.h"
#include "unit.h"

#define TRAILER 32

static uint8_t buf[4096];
static size_t blen;

static void put(size_t off, const void *v, size_t n) { memcpy(buf + off, v, n); }
static void put64(size_t off, uint64_t v) { put(off, &v, 8); }
static void put32(size_t off, uint32_t v) { put(off, &v, 4); }

static void header(uint32_t type, uint16_t misc, uint16_t size)
{
	memset(buf, 0, sizeof(buf));
	struct perf_event_header h = { type, misc, size };
	put(0, &h, sizeof(h));
	blen = size;
}

/* the sample_id_all trailer: pid tid, time, cpu res, id */
static void trailer(uint64_t time)
{
	put32(blen - TRAILER, 7);
	put32(blen - TRAILER + 4, 8);
	put64(blen - TRAILER + 8, time);
}

static uint16_t ev_of(const void *ctx, uint64_t id)
{
	(void)ctx;
	return id == 0xabc ? 2 : 0;
}

static void sample(uint64_t nr, uint16_t size)
{
	header(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, size);
	put64(8, 0xabc);        /* identifier */
	put64(16, 0x401000);    /* ip */
	put32(24, 100);         /* pid */
	put32(28, 101);         /* tid */
	put64(32, 5555);        /* time */
	put32(40, 3);           /* cpu */
	put64(48, 250000);      /* period */
	if (size >= 64)
		put64(56, nr);
	for (uint64_t k = 0; 64 + 8 * k + 8 <= size && k < nr; k++)
		put64(64 + 8 * k, k == 0 ? (uint64_t)PERF_CONTEXT_USER : 0x402000 + k);
}

static struct perf_decode_buf dbuf;

static int decode(uint64_t time, struct perf_item *it)
{
	memset(it, 0, sizeof(*it));
	return perf_decode_record(buf, blen, time, NULL, ev_of, NULL, &dbuf, it);
}

static void test_sample(void)
{
	struct perf_item it;
	/* without callchain: 56 bytes */
	sample(0, 56);
	CHECK(decode(5555, &it) == 1);
	CHECK(it.kind == PERF_ITEM_SAMPLE);
	CHECK_EQ_U64(it.u.sample.event, 2);
	CHECK_EQ_U64(it.u.sample.ip, 0x401000);
	CHECK_EQ_U64(it.u.sample.pid, 100);
	CHECK_EQ_U64(it.u.sample.tid, 101);
	CHECK_EQ_U64(it.u.sample.time, 5555);
	CHECK_EQ_U64(it.u.sample.cpu, 3);
	CHECK_EQ_U64(it.u.sample.period, 250000);
	CHECK_EQ_U64(it.u.sample.mode, DP_MODE_USER);
	CHECK_EQ_U64(it.u.sample.nr_callchain, 0);
	CHECK(it.u.sample.callchain == NULL);
	/* with a callchain of 4 entries, the first a context marker */
	sample(4, 64 + 4 * 8);
	CHECK(decode(5555, &it) == 1);
	CHECK_EQ_U64(it.u.sample.nr_callchain, 3);
	CHECK(it.u.sample.callchain == dbuf.chain);
	CHECK_EQ_U64(it.u.sample.callchain[0], 0x402001);
	CHECK_EQ_U64(it.u.sample.callchain[2], 0x402003);
	/* nr claims more entries than the record holds: cut at its end */
	sample(1000, 64 + 2 * 8);
	put64(56, 1000);
	CHECK(decode(5555, &it) == 1);
	CHECK_EQ_U64(it.u.sample.nr_callchain, 1);
	/* an unknown identifier is event 0 */
	sample(0, 56);
	put64(8, 0x999);
	CHECK(decode(1, &it) == 1);
	CHECK_EQ_U64(it.u.sample.event, 0);
	/* truncated: below the fixed part */
	sample(0, 56);
	blen = 55;
	CHECK(decode(1, &it) == 0);
	blen = 4; /* shorter than a header */
	CHECK(decode(1, &it) == 0);
}

/* A dwarf-mode sample: chain of 2 (a marker and one ip), abi, 20
 * registers (reg i = 0x100 + i), stack of ssize bytes (byte k = k ^ 0x5a)
 * and dyn. Returns the offset of the stack data. */
static size_t dwarf_sample(uint64_t abi, uint64_t ssize, uint64_t dyn)
{
	size_t regs = abi ? 20 : 0;
	size_t size = 64 + 16 + 8 + 8 * regs + 8 + (ssize ? ssize + 8 : 0);
	sample(2, (uint16_t)size);
	size_t off = 80;
	put64(off, abi);
	off += 8;
	for (size_t i = 0; i < regs; i++, off += 8)
		put64(off, 0x100 + i);
	put64(off, ssize);
	off += 8;
	for (uint64_t k = 0; k < ssize; k++)
		buf[off + k] = (uint8_t)(k ^ 0x5a);
	if (ssize)
		put64(off + ssize, dyn);
	return off;
}

static void test_dwarf(void)
{
	static const struct perf_sample_layout lay = { PERF_UREGS_MASK_X86_64, true };
	struct perf_item it;
	CHECK_EQ_U64(__builtin_popcountll(PERF_UREGS_MASK_X86_64), 20);
	size_t at = dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 200);
	memset(&it, 0, sizeof(it));
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	const struct dp_sample *s = &it.u.sample;
	CHECK_EQ_U64(s->nr_callchain, 1);
	CHECK(s->has_uregs);
	CHECK_EQ_U64(s->uregs_abi, DP_UREGS_ABI_64);
	CHECK_EQ_U64(s->uregs_mask, PERF_UREGS_MASK_X86_64);
	uint64_t v = 0;
	CHECK(dp_sample_ureg(s, DP_X86_REG_IP, &v) && v == 0x108);  /* 9th register */
	CHECK(dp_sample_ureg(s, 16, &v) && v == 0x100 + 12);        /* r8: after the 4 segment bits */
	CHECK(!dp_sample_ureg(s, 12, &v));                          /* ds: not asked for */
	CHECK_EQ_U64(s->ustack_size, 256);
	CHECK_EQ_U64(s->ustack_len, 200);                           /* dyn_size, not size */
	CHECK(s->ustack == buf + at && s->ustack[199] == (uint8_t)(199 ^ 0x5a));
	/* layout NULL (fp mode): the same bytes give no user parts */
	memset(&it, 0, sizeof(it));
	CHECK(perf_decode_record(buf, blen, 1, NULL, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs && it.u.sample.nr_callchain == 1);
	/* dyn_size over size is cut to size */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 64, 1000);
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(it.u.sample.has_uregs && it.u.sample.ustack_len == 64);
	/* stack size 0: registers, no stack */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 0, 0);
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(it.u.sample.has_uregs && it.u.sample.ustack_len == 0 && !it.u.sample.ustack);
	/* a kernel thread: ABI NONE, no registers */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs);
	/* the record ends inside the stack, or inside the registers: sample
	 * passed on, without them */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 256);
	blen -= 16;
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs && it.u.sample.ip == 0x401000);
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 0, 0);
	blen = 80 + 8 + 8 * 10;
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs);
	/* a chain that claims more than the record holds: the parts after it
	 * are not where they would be, so none */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 64, 64);
	put64(56, 5000);
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs);
	/* a stack size over the kernel's limit */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 64, 64);
	put64(80 + 8 + 160, DP_MAX_USTACK + 8);
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK(!it.u.sample.has_uregs);
}

/* Decode the record of n bytes at p and compare it with what the original
 * in buf decodes to (ustack_size restored from the copy's word). */
static void same_sample(const uint8_t *p, size_t n, uint32_t ustack_size)
{
	static const struct perf_sample_layout lay = { PERF_UREGS_MASK_X86_64, true };
	static struct perf_decode_buf b1, b2;
	struct perf_item a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(perf_decode_record(buf, blen, 1, &lay, ev_of, NULL, &b1, &a) == 1);
	CHECK(perf_decode_record(p, n, 1, &lay, ev_of, NULL, &b2, &b) == 1);
	if (ustack_size && b.u.sample.has_uregs)
		b.u.sample.ustack_size = ustack_size;
	const struct dp_sample *x = &a.u.sample, *y = &b.u.sample;
	CHECK(x->ip == y->ip && x->time == y->time && x->pid == y->pid && x->cpu == y->cpu);
	CHECK(x->nr_callchain == y->nr_callchain &&
	      !memcmp(x->callchain, y->callchain, 8 * (size_t)x->nr_callchain));
	CHECK(x->has_uregs == y->has_uregs);
	if (!x->has_uregs)
		return;
	CHECK(x->uregs_abi == y->uregs_abi && x->uregs_mask == y->uregs_mask &&
	      !memcmp(x->uregs, y->uregs, 8 * (size_t)dp_uregs_count(x->uregs_mask)));
	CHECK_EQ_U64(y->ustack_size, x->ustack_size);
	CHECK_EQ_U64(y->ustack_len, x->ustack_len);
	CHECK(!x->ustack_len || !memcmp(x->ustack, y->ustack, x->ustack_len));
}

/* perf_ring_copy_sample: the copy leaves out the stack's unused tail and
 * decodes to the same sample, also when the record wraps the ring. */
static void test_copy_sample(void)
{
	static const struct perf_sample_layout lay = { PERF_UREGS_MASK_X86_64, true };
	static uint8_t ring[1024], out[4096];
	uint32_t us;
	/* 200 of 256 bytes filled: 56 - 8 (rounded up to 200) left out */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 200);
	size_t n = perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us);
	CHECK_EQ_U64(n, blen - 56);
	CHECK_EQ_U64(us, 256);
	uint16_t hs;
	memcpy(&hs, out + 6, 2);
	CHECK_EQ_U64(hs, n);
	same_sample(out, n, us);
	/* the control: without restoring the size the copy says 200 */
	struct perf_item it;
	CHECK(perf_decode_record(out, n, 1, &lay, ev_of, NULL, &dbuf, &it) == 1);
	CHECK_EQ_U64(it.u.sample.ustack_size, 200);
	/* dyn 197: kept rounded up to 200, dyn_size still 197 */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 197);
	n = perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us);
	CHECK_EQ_U64(n, blen - 56);
	same_sample(out, n, us);
	/* nothing filled: the stack's bytes all left out */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 0);
	n = perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us);
	CHECK_EQ_U64(n, blen - 256);
	same_sample(out, n, us);
	/* wrapping the ring's end at every offset of the record */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 512, 104);
	for (size_t at = 1024 - blen; at < 1024; at += 8) {
		for (size_t k = 0; k < blen; k++)
			ring[(at + k) & 1023] = buf[k];
		memset(out, 0xee, sizeof(out));
		n = perf_ring_copy_sample(ring, 1023, 1024 + at, blen, &lay, out, &us);
		CHECK_EQ_U64(n, blen - 512 + 104);
		same_sample(out, n, us);
	}
	/* copied whole: filled stack, ABI NONE, no stack, a stack part that
	 * does not fit, a cut chain, no layout */
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 256);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	CHECK(us == 0 && !memcmp(out, buf, blen));
	dwarf_sample(PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	CHECK(us == 0);
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 0, 0);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 8);
	blen -= 16;
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	CHECK(us == 0);
	same_sample(out, blen, us);
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 8);
	put64(56, 5000);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	dwarf_sample(PERF_SAMPLE_REGS_ABI_64, 256, 8);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, NULL, out, &us), blen);
	CHECK(us == 0);
	/* an fp-mode sample (no layout parts) and a short one: whole */
	sample(3, 64 + 24);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
	sample(0, 56);
	CHECK_EQ_U64(perf_ring_copy_sample(buf, 4095, 0, blen, &lay, out, &us), blen);
}

static void test_mmap2(void)
{
	struct perf_item it;
	uint16_t size = 8 + 72 + 16 + TRAILER;
	header(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, size);
	put32(8, 100);
	put64(16, 0x400000);
	put64(24, 0x2000);
	put64(32, 0x1000);
	buf[40] = 20;            /* build-id size */
	for (int i = 0; i < 20; i++)
		buf[44 + i] = (uint8_t)(0xa0 + i);
	put32(64, PROT_READ | PROT_EXEC);
	memcpy(buf + 72, "/bin/true", 10);
	trailer(777);
	CHECK(decode(777, &it) == 1);
	CHECK(it.kind == PERF_ITEM_MMAP);
	CHECK_EQ_U64(it.u.mmap.pid, 100);
	CHECK_EQ_U64(it.u.mmap.start, 0x400000);
	CHECK_EQ_U64(it.u.mmap.len, 0x2000);
	CHECK_EQ_U64(it.u.mmap.pgoff, 0x1000);
	CHECK_EQ_U64(it.u.mmap.time, 777);
	CHECK_EQ_U64(it.u.mmap.buildid_len, 20);
	CHECK(it.u.mmap.buildid[0] == 0xa0 && it.u.mmap.buildid[19] == 0xb3);
	CHECK_STR(it.u.mmap.path, "/bin/true");
	/* a build-id size above 20 is no build-id: device and inode fields
	 * under the flag the kernel leaks from another tool's event */
	buf[40] = 200;
	CHECK(decode(777, &it) == 1);
	CHECK_EQ_U64(it.u.mmap.buildid_len, 0);
	/* without the build-id flag: none */
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, size };
	put(0, &h, sizeof(h));
	CHECK(decode(777, &it) == 1);
	CHECK_EQ_U64(it.u.mmap.buildid_len, 0);
	/* not executable: not passed on */
	put32(64, PROT_READ);
	CHECK(decode(777, &it) == 0);
	/* a name without NUL ends at the field's end (the trailer) */
	put32(64, PROT_EXEC);
	memset(buf + 72, 'x', 16);
	CHECK(decode(777, &it) == 1);
	CHECK_EQ_U64(strlen(it.u.mmap.path), 16);
	/* truncated */
	blen = 8 + 72 + TRAILER - 1;
	CHECK(decode(777, &it) == 0);
}

static void test_tasks(void)
{
	struct perf_item it;
	header(PERF_RECORD_COMM, 0, 8 + 8 + 16 + TRAILER);
	put32(8, 200);
	put32(12, 201);
	memcpy(buf + 16, "worker", 7);
	trailer(42);
	CHECK(decode(42, &it) == 1);
	CHECK(it.kind == PERF_ITEM_TASK);
	CHECK(it.u.task.kind == DP_TASK_COMM);
	CHECK_EQ_U64(it.u.task.pid, 200);
	CHECK_EQ_U64(it.u.task.tid, 201);
	CHECK_EQ_U64(it.u.task.time, 42);
	CHECK_STR(it.u.task.comm, "worker");
	blen = 8 + 8 + TRAILER - 1;
	CHECK(decode(42, &it) == 0);

	for (int k = 0; k < 2; k++) {
		uint32_t type = k ? PERF_RECORD_EXIT : PERF_RECORD_FORK;
		header(type, 0, 8 + 24 + TRAILER);
		put32(8, 300);
		put32(12, 299);
		put32(16, 301);
		put32(20, 298);
		put64(24, 9999);
		trailer(9999);
		CHECK(decode(9999, &it) == 1);
		CHECK(it.u.task.kind == (k ? DP_TASK_EXIT : DP_TASK_FORK));
		CHECK_EQ_U64(it.u.task.pid, 300);
		CHECK_EQ_U64(it.u.task.ppid, 299);
		CHECK_EQ_U64(it.u.task.tid, 301);
		CHECK_EQ_U64(it.u.task.ptid, 298);
		CHECK_EQ_U64(it.u.task.time, 9999);
		blen = 8 + 24 + TRAILER - 1;
		CHECK(decode(9999, &it) == 0);
	}
	/* LOST and THROTTLE are counted by the ring reader, not decoded */
	header(PERF_RECORD_LOST, 0, 8 + 16 + TRAILER);
	CHECK(decode(0, &it) == 0);
	header(PERF_RECORD_THROTTLE, 0, 8 + 24 + TRAILER);
	CHECK(decode(0, &it) == 0);
}

/* The ring reader on a 256-byte ring. */
static void test_ring(void)
{
	uint8_t ring[256];
	const uint64_t mask = sizeof(ring) - 1;
	struct perf_ring_rec rr;

	/* LOST { id, lost } and LOST_SAMPLES { lost } */
	memset(ring, 0, sizeof(ring));
	struct perf_event_header h = { PERF_RECORD_LOST, 0, 8 + 16 + TRAILER };
	memcpy(ring, &h, 8);
	uint64_t v = 17;
	memcpy(ring + 16, &v, 8);
	CHECK(perf_ring_next(ring, mask, 0, h.size, &rr) == 1);
	CHECK(rr.what == PERF_RR_LOST);
	CHECK_EQ_U64(rr.lost, 17);
	CHECK_EQ_U64(rr.size, h.size);
	h.type = PERF_RECORD_LOST_SAMPLES;
	memcpy(ring, &h, 8);
	memcpy(ring + 8, &v, 8);
	CHECK(perf_ring_next(ring, mask, 0, h.size, &rr) == 1);
	CHECK(rr.what == PERF_RR_LOST);
	CHECK_EQ_U64(rr.lost, 17);

	h = (struct perf_event_header){ PERF_RECORD_THROTTLE, 0, 8 + 24 + TRAILER };
	memcpy(ring, &h, 8);
	CHECK(perf_ring_next(ring, mask, 0, h.size, &rr) == 1);
	CHECK(rr.what == PERF_RR_THROTTLE);
	h.type = PERF_RECORD_UNTHROTTLE;
	memcpy(ring, &h, 8);
	CHECK(perf_ring_next(ring, mask, 0, h.size, &rr) == 1);
	CHECK(rr.what == PERF_RR_SKIP);

	/* empty, a size below a header, a size beyond head: stop */
	CHECK(perf_ring_next(ring, mask, 64, 64, &rr) == 0);
	h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 4 };
	memcpy(ring, &h, 8);
	CHECK(perf_ring_next(ring, mask, 0, 200, &rr) == -1);
	h.size = 201;
	memcpy(ring, &h, 8);
	CHECK(perf_ring_next(ring, mask, 0, 200, &rr) == -1);
	h.size = 0;
	memcpy(ring, &h, 8);
	CHECK(perf_ring_next(ring, mask, 0, 200, &rr) == -1);

	/* A sample that wraps around the ring's end: it starts 24 bytes
	 * before the end (at position 256 + 232), so its time field is
	 * past the wrap; copied out it decodes whole. */
	sample(2, 64 + 2 * 8);
	uint64_t pos = 256 + 232;
	for (size_t i = 0; i < blen; i++)
		ring[(pos + i) & mask] = buf[i];
	CHECK(perf_ring_next(ring, mask, pos, pos + blen, &rr) == 1);
	CHECK(rr.what == PERF_RR_QUEUE);
	CHECK_EQ_U64(rr.time, 5555);
	CHECK_EQ_U64(rr.size, blen);
	uint8_t lin[128];
	perf_ring_copy(ring, mask, pos, lin, blen);
	CHECK(!memcmp(lin, buf, blen));
	struct perf_item it;
	CHECK(perf_decode_record(lin, blen, rr.time, NULL, ev_of, NULL, &dbuf, &it) == 1);
	CHECK_EQ_U64(it.u.sample.ip, 0x401000);
	CHECK_EQ_U64(it.u.sample.nr_callchain, 1);
	/* a wrapped header itself (4 bytes before the end) */
	pos = 256 + 252;
	for (size_t i = 0; i < blen; i++)
		ring[(pos + i) & mask] = buf[i];
	CHECK(perf_ring_next(ring, mask, pos, pos + blen, &rr) == 1);
	CHECK_EQ_U64(rr.size, blen);
	CHECK_EQ_U64(rr.time, 5555);

	/* a COMM's time comes from its trailer */
	header(PERF_RECORD_COMM, 0, 8 + 8 + 16 + TRAILER);
	trailer(4242);
	memcpy(ring, buf, blen);
	CHECK(perf_ring_next(ring, mask, 0, blen, &rr) == 1);
	CHECK(rr.what == PERF_RR_QUEUE);
	CHECK_EQ_U64(rr.time, 4242);
}

int main(void)
{
	test_sample();
	test_dwarf();
	test_copy_sample();
	test_mmap2();
	test_tasks();
	test_ring();
	return unit_done();
}
