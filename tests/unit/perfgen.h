/* SPDX-License-Identifier: MIT */
/*
 * A small perf.data writer for tests, from perf's documented format
 * (tools/perf/Documentation/perf.data-file-format.txt and the kernel's
 * perf_event.h record layouts), independent of src/format/perfdata.c: the
 * unit test of the reader (tests/unit/test-perfdata.c), the fuzzer's seeds
 * and `test-tool gen-perfdata` (perf kvm files, which this machine cannot
 * record) use it. Header-only; everything static.
 *
 * pg_build() writes one recording of a known shape into a malloc'd
 * buffer: COMM, FORK, MMAP2 (one with the build-id form, one plain), a
 * kernel MMAP, KSYMBOL, samples of two events (cpu-clock with
 * IDENTIFIER|IP|TID|TIME|ADDR|ID|STREAM_ID|CPU|PERIOD|CALLCHAIN, a
 * tracepoint that adds RAW), LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE,
 * FINISHED_ROUND, one record of an unknown type and EXIT; features
 * hostname, osrelease, version, arch, nrcpus, cpudesc, cmdline,
 * event_desc, build_id, sample_time, and a feature bit of a newer perf.
 * Options: pipe form, zstd-compressed data records, guest samples (perf
 * kvm: cpumode GUEST_KERNEL at guest addresses, pid = the QEMU pid).
 */
#ifndef DOMPROF_TESTS_PERFGEN_H
#define DOMPROF_TESTS_PERFGEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct pg_buf {
	uint8_t *b;
	size_t n, cap;
};

static void pg_put(struct pg_buf *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2 + 4096;
		o->b = realloc(o->b, o->cap);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}
static void pg_u64(struct pg_buf *o, uint64_t v) { pg_put(o, &v, 8); }
static void pg_u32(struct pg_buf *o, uint32_t v) { pg_put(o, &v, 4); }
static void pg_u16(struct pg_buf *o, uint16_t v) { pg_put(o, &v, 2); }
static void pg_pad(struct pg_buf *o, size_t to)
{
	static const uint8_t z[64];
	while (o->n % to)
		pg_put(o, z, (to - o->n % to) > 64 ? 64 : to - o->n % to);
}
static void pg_set64(struct pg_buf *o, size_t at, uint64_t v) { memcpy(o->b + at, &v, 8); }
static void pg_set16(struct pg_buf *o, size_t at, uint16_t v) { memcpy(o->b + at, &v, 2); }

/* sample_type bits and the rest of perf_event.h this writer needs */
enum {
	PG_IP = 1 << 0, PG_TID = 1 << 1, PG_TIME = 1 << 2, PG_ADDR = 1 << 3, PG_CALLCHAIN = 1 << 5,
	PG_ID = 1 << 6, PG_CPU = 1 << 7, PG_PERIOD = 1 << 8, PG_STREAM_ID = 1 << 9, PG_RAW = 1 << 10,
	PG_IDENTIFIER = 1 << 16,
};
#define PG_ST_CLOCK (PG_IDENTIFIER | PG_IP | PG_TID | PG_TIME | PG_ADDR | PG_ID | PG_STREAM_ID | \
		     PG_CPU | PG_PERIOD | PG_CALLCHAIN)
#define PG_ST_TP (PG_ST_CLOCK | PG_RAW)
#define PG_CTX_KERNEL ((uint64_t)-128)
#define PG_CTX_USER ((uint64_t)-512)
#define PG_CTX_GUEST_KERNEL ((uint64_t)-2176)
#define PG_ID_CLOCK 1001u
#define PG_ID_TP 2002u

struct pg_opts {
	int pipe;           /* pipe form (perf record -o -) */
	int compress;       /* data records in PERF_RECORD_COMPRESSED (-z) */
	int guest;          /* perf kvm: guest kernel samples of QEMU pid 4242 */
	unsigned samples;   /* cpu-clock samples (default 6) */
	int leaked_flag;    /* the exec MMAP2 has the build-id flag over device and
			     * inode fields (major 254), as the kernel leaks it */
};

/* Known answers of pg_build, for the tests. */
#define PG_PID 100u
#define PG_QEMU_PID 4242u
#define PG_GUEST_IP0 0xffffffff81001010ull  /* in guest_fn_a (guest kallsyms below) */
#define PG_GUEST_IP1 0xffffffff81002020ull  /* in guest_fn_b */
#define PG_GUEST_KALLSYMS \
	"ffffffff81000000 T _stext\n" \
	"ffffffff81001000 T guest_fn_a\n" \
	"ffffffff81002000 T guest_fn_b\n" \
	"ffffffff81003000 T guest_fn_end\n"

/* attr of 128 bytes (PERF_ATTR_SIZE_VER7) */
static void pg_attr(struct pg_buf *o, uint32_t type, uint64_t config, uint64_t st)
{
	size_t at = o->n;
	uint8_t z[128] = { 0 };
	pg_put(o, z, 128);
	uint32_t size = 128;
	memcpy(o->b + at, &type, 4);
	memcpy(o->b + at + 4, &size, 4);
	pg_set64(o, at + 8, config);
	pg_set64(o, at + 16, 4000);          /* sample_freq */
	pg_set64(o, at + 24, st);
	uint64_t flags = 1ull << 10 | 1ull << 18;  /* freq, sample_id_all */
	pg_set64(o, at + 40, flags);
}

static size_t pg_hdr(struct pg_buf *o, uint32_t type, uint16_t misc)
{
	size_t at = o->n;
	pg_u32(o, type);
	pg_u16(o, misc);
	pg_u16(o, 0);
	return at;
}
static void pg_end(struct pg_buf *o, size_t at) { pg_pad(o, 8); pg_set16(o, at + 6, (uint16_t)(o->n - at)); }

/* the sample_id trailer of cpu-clock's layout */
static void pg_trailer(struct pg_buf *o, uint32_t pid, uint64_t t)
{
	pg_u32(o, pid); pg_u32(o, pid);     /* TID */
	pg_u64(o, t);                       /* TIME */
	pg_u64(o, PG_ID_CLOCK);             /* ID */
	pg_u64(o, PG_ID_CLOCK);             /* STREAM_ID */
	pg_u32(o, 0); pg_u32(o, 0);         /* CPU */
	pg_u64(o, PG_ID_CLOCK);             /* IDENTIFIER */
}

static void pg_str(struct pg_buf *o, const char *s)
{
	pg_put(o, s, strlen(s) + 1);
	pg_pad(o, 8);
}

static void pg_sample(struct pg_buf *o, uint64_t id, uint16_t misc, uint32_t pid, uint64_t t,
		      uint64_t ip, const uint64_t *chain, unsigned n, int raw)
{
	size_t h = pg_hdr(o, 9, misc);
	pg_u64(o, id);
	pg_u64(o, ip);
	pg_u32(o, pid); pg_u32(o, pid);
	pg_u64(o, t);
	pg_u64(o, 0);           /* ADDR */
	pg_u64(o, id);          /* ID */
	pg_u64(o, id);          /* STREAM_ID */
	pg_u32(o, 1); pg_u32(o, 0);
	pg_u64(o, 250000);      /* PERIOD */
	pg_u64(o, n);
	for (unsigned i = 0; i < n; i++)
		pg_u64(o, chain[i]);
	if (raw) {
		pg_u32(o, 12);  /* raw size: with the u32, a multiple of 8 */
		uint8_t r[12] = { 1, 2, 3 };
		pg_put(o, r, 12);
	}
	pg_end(o, h);
}

/* The data records (time order mixed inside a round, as perf writes). */
static void pg_records(struct pg_buf *o, const struct pg_opts *op)
{
	unsigned ns = op->samples ? op->samples : 6;
	size_t h;
	/* COMM exec, FORK */
	h = pg_hdr(o, 3, 0x2000);
	pg_u32(o, PG_PID); pg_u32(o, PG_PID);
	pg_str(o, "workload");
	pg_trailer(o, PG_PID, 100);
	pg_end(o, h);
	h = pg_hdr(o, 7, 0);
	pg_u32(o, PG_PID + 1); pg_u32(o, PG_PID); pg_u32(o, PG_PID + 1); pg_u32(o, PG_PID);
	pg_u64(o, 110);
	pg_trailer(o, PG_PID, 110);
	pg_end(o, h);
	/* a sample from another CPU's ring before the MMAP it needs (time
	 * 300 after the MMAP's 200): the reader must order them */
	uint64_t uchain[] = { PG_CTX_USER, 0x401010, 0x401100 };
	pg_sample(o, PG_ID_CLOCK, 2 /* user */, PG_PID, 300, 0x401010, uchain, 3, 0);
	/* MMAP2 with build-id form, exec; MMAP2 of data (skipped); MMAP v1 */
	h = pg_hdr(o, 10, 1u << 14 | 2);
	pg_u32(o, PG_PID); pg_u32(o, PG_PID);
	pg_u64(o, 0x400000); pg_u64(o, 0x10000); pg_u64(o, 0);
	uint8_t bid[24] = { 20, 0, 0, 0, 0xab, 0xcd, 0xef };
	if (op->leaked_flag)
		bid[0] = 254;   /* u32 major 254, minor 0xefcdab, inode ... */
	pg_put(o, bid, 24);
	pg_u32(o, 5); pg_u32(o, 2);    /* prot r-x, flags private */
	pg_str(o, "/nonexistent/workload");
	pg_trailer(o, PG_PID, 200);
	pg_end(o, h);
	h = pg_hdr(o, 10, 2);
	pg_u32(o, PG_PID); pg_u32(o, PG_PID);
	pg_u64(o, 0x600000); pg_u64(o, 0x1000); pg_u64(o, 0);
	uint8_t dev[24] = { 0 };
	pg_put(o, dev, 24);
	pg_u32(o, 3); pg_u32(o, 2);    /* rw-: data */
	pg_str(o, "/nonexistent/data");
	pg_trailer(o, PG_PID, 201);
	pg_end(o, h);
	h = pg_hdr(o, 1, 1 /* kernel */);
	pg_u32(o, (uint32_t)-1); pg_u32(o, 0);
	pg_u64(o, 0xffffffff81000000ull); pg_u64(o, 0x1000000); pg_u64(o, 0xffffffff81000000ull);
	pg_str(o, "[kernel.kallsyms]_text");
	pg_trailer(o, (uint32_t)-1, 0);
	pg_end(o, h);
	/* KSYMBOL */
	h = pg_hdr(o, 17, 1);
	pg_u64(o, 0xffffffffa0000000ull); pg_u32(o, 0x100); pg_u16(o, 1); pg_u16(o, 0);
	pg_str(o, "bpf_prog_test");
	pg_trailer(o, (uint32_t)-1, 210);
	pg_end(o, h);
	h = pg_hdr(o, 68, 0);  /* FINISHED_ROUND */
	pg_end(o, h);
	/* samples: user ones with a chain, kernel ones, a tracepoint one */
	for (unsigned i = 0; i < ns; i++) {
		uint64_t kchain[] = { PG_CTX_KERNEL, 0xffffffff81000100ull + i, PG_CTX_USER, 0x401020 };
		if (i % 2)
			pg_sample(o, PG_ID_CLOCK, 1, PG_PID, 400 + i, kchain[1], kchain, 4, 0);
		else
			pg_sample(o, PG_ID_CLOCK, 2, PG_PID, 400 + i, 0x401020 + i, uchain, 3, 0);
	}
	pg_sample(o, PG_ID_TP, 1, PG_PID, 450, 0xffffffff81000200ull, NULL, 0, 1);
	if (op->guest) {
		uint64_t g0[] = { PG_CTX_GUEST_KERNEL, PG_GUEST_IP0 };
		uint64_t g1[] = { PG_CTX_GUEST_KERNEL, PG_GUEST_IP1, PG_GUEST_IP0 + 4 };
		for (unsigned i = 0; i < 3; i++)
			pg_sample(o, PG_ID_CLOCK, 4 /* guest kernel */, PG_QEMU_PID, 460 + i, PG_GUEST_IP0, g0, 2, 0);
		pg_sample(o, PG_ID_CLOCK, 4, PG_QEMU_PID, 470, PG_GUEST_IP1, g1, 3, 0);
	}
	/* LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE */
	h = pg_hdr(o, 2, 0);
	pg_u64(o, PG_ID_CLOCK); pg_u64(o, 3);
	pg_trailer(o, PG_PID, 480);
	pg_end(o, h);
	h = pg_hdr(o, 13, 0);
	pg_u64(o, 2);
	pg_trailer(o, PG_PID, 481);
	pg_end(o, h);
	for (uint32_t t = 5; t <= 6; t++) {
		h = pg_hdr(o, t, 0);
		pg_u64(o, 482); pg_u64(o, PG_ID_CLOCK); pg_u64(o, PG_ID_CLOCK);
		pg_trailer(o, PG_PID, 482);
		pg_end(o, h);
	}
	/* a record type no perf here writes: skipped and counted */
	h = pg_hdr(o, 99, 0);
	pg_u64(o, 0x1234);
	pg_end(o, h);
	h = pg_hdr(o, 4, 0);  /* EXIT */
	pg_u32(o, PG_PID); pg_u32(o, 1); pg_u32(o, PG_PID); pg_u32(o, 1);
	pg_u64(o, 500);
	pg_trailer(o, PG_PID, 500);
	pg_end(o, h);
	h = pg_hdr(o, 68, 0);
	pg_end(o, h);
}

/* One feature's bytes. */
static void pg_hstring(struct pg_buf *o, const char *s)
{
	uint32_t n = (uint32_t)((strlen(s) + 1 + 7) / 8 * 8);
	pg_u32(o, n);
	size_t at = o->n;
	uint8_t z[256] = { 0 };
	pg_put(o, z, n);
	memcpy(o->b + at, s, strlen(s));
}

static void pg_feature(struct pg_buf *o, unsigned id)
{
	switch (id) {
	case 2: {   /* BUILD_ID: one build_id_event */
		size_t h = pg_hdr(o, 0, 2);
		pg_u32(o, PG_PID);
		uint8_t bid[24] = { 0x11, 0x22, 0x33 };
		pg_put(o, bid, 24);
		pg_str(o, "/nonexistent/workload-old");
		pg_set16(o, h + 6, (uint16_t)(o->n - h));
		break;
	}
	case 3: pg_hstring(o, "pg-host"); break;
	case 4: pg_hstring(o, "6.1.0-pg"); break;
	case 5: pg_hstring(o, "6.1.pg"); break;
	case 6: pg_hstring(o, "x86_64"); break;
	case 7: pg_u32(o, 4); pg_u32(o, 4); break;
	case 8: pg_hstring(o, "Test CPU"); break;
	case 11: pg_u32(o, 3); pg_hstring(o, "perf"); pg_hstring(o, "record"); pg_hstring(o, "-g"); break;
	case 12: {  /* EVENT_DESC */
		pg_u32(o, 2); pg_u32(o, 128);
		pg_attr(o, 1, 0, PG_ST_CLOCK);
		pg_u32(o, 1); pg_hstring(o, "cpu-clock"); pg_u64(o, PG_ID_CLOCK);
		pg_attr(o, 2, 77, PG_ST_TP);
		pg_u32(o, 1); pg_hstring(o, "sched:sched_test"); pg_u64(o, PG_ID_TP);
		break;
	}
	case 21: pg_u64(o, 300); pg_u64(o, 500); break;
	case 40: pg_u64(o, 0xfeedfeed); break;  /* a newer perf's feature */
	}
}

static const unsigned pg_features[] = { 2, 3, 4, 5, 6, 7, 8, 11, 12, 21, 40 };
#define PG_NFEATURES (sizeof(pg_features) / sizeof(pg_features[0]))

/* Records in COMPRESSED records of at most 512 bytes of input each, one
 * zstd stream across them (as perf -z writes). */
static void pg_compress(struct pg_buf *o, const struct pg_buf *in)
{
	ZSTD_CStream *cs = ZSTD_createCStream();
	ZSTD_initCStream(cs, 3);
	uint8_t out[4096];
	for (size_t off = 0; off < in->n;) {
		size_t n = in->n - off > 512 ? 512 : in->n - off;
		/* whole records only */
		size_t take = 0;
		while (take < n) {
			uint16_t sz;
			memcpy(&sz, in->b + off + take + 6, 2);
			if (take && take + sz > n)
				break;
			take += sz;
		}
		ZSTD_inBuffer ib = { in->b + off, take, 0 };
		ZSTD_outBuffer ob = { out, sizeof(out), 0 };
		while (ib.pos < ib.size)
			ZSTD_compressStream(cs, &ob, &ib);
		ZSTD_flushStream(cs, &ob);
		/* perf 6.1's COMPRESSED records are not padded: the size is
		 * the header's and the compressed bytes' */
		size_t h = pg_hdr(o, 81, 0);
		pg_put(o, out, ob.pos);
		pg_set16(o, h + 6, (uint16_t)(o->n - h));
		off += take;
	}
	ZSTD_freeCStream(cs);
}

static void pg_data(struct pg_buf *o, const struct pg_opts *op)
{
	if (!op->compress) {
		pg_records(o, op);
		return;
	}
	struct pg_buf raw = { 0 };
	pg_records(&raw, op);
	pg_compress(o, &raw);
	free(raw.b);
}

/* The whole file into *out (malloc'd); returns its size. */
static size_t pg_build(const struct pg_opts *op, uint8_t **out)
{
	struct pg_buf o = { 0 };
	if (op->pipe) {
		pg_put(&o, "PERFILE2", 8);
		pg_u64(&o, 16);
		/* HEADER_ATTR records with their ids, then features */
		uint64_t ids[2] = { PG_ID_CLOCK, PG_ID_TP };
		for (int i = 0; i < 2; i++) {
			size_t h = pg_hdr(&o, 64, 0);
			pg_attr(&o, i ? 2 : 1, i ? 77 : 0, i ? PG_ST_TP : PG_ST_CLOCK);
			pg_u64(&o, ids[i]);
			pg_end(&o, h);
		}
		for (size_t i = 0; i < PG_NFEATURES; i++) {
			if (pg_features[i] == 12)
				continue;  /* a pipe names its events with EVENT_UPDATE */
			size_t h = pg_hdr(&o, 80, 0);
			pg_u64(&o, pg_features[i]);
			pg_feature(&o, pg_features[i]);
			pg_end(&o, h);
		}
		size_t h = pg_hdr(&o, 78, 0);  /* EVENT_UPDATE name */
		pg_u64(&o, 2); pg_u64(&o, PG_ID_CLOCK);
		pg_str(&o, "cpu-clock");
		pg_end(&o, h);
		pg_data(&o, op);
		*out = o.b;
		return o.n;
	}
	/* file form: header, ids, attrs (with their id sections), data,
	 * feature section table, feature bytes */
	uint8_t hdr[104] = { 0 };
	pg_put(&o, hdr, sizeof(hdr));
	memcpy(o.b, "PERFILE2", 8);
	pg_set64(&o, 8, 104);
	pg_set64(&o, 16, 128 + 16);
	size_t ids_at = o.n;
	pg_u64(&o, PG_ID_CLOCK);
	pg_u64(&o, PG_ID_TP);
	size_t attrs_at = o.n;
	for (int i = 0; i < 2; i++) {
		pg_attr(&o, i ? 2 : 1, i ? 77 : 0, i ? PG_ST_TP : PG_ST_CLOCK);
		pg_u64(&o, ids_at + 8 * (size_t)i);
		pg_u64(&o, 8);
	}
	pg_set64(&o, 24, attrs_at);
	pg_set64(&o, 32, o.n - attrs_at);
	size_t data_at = o.n;
	pg_data(&o, op);
	pg_set64(&o, 40, data_at);
	pg_set64(&o, 48, o.n - data_at);
	size_t table = o.n;
	for (size_t i = 0; i < PG_NFEATURES; i++) {
		pg_u64(&o, 0);
		pg_u64(&o, 0);
	}
	for (size_t i = 0; i < PG_NFEATURES; i++) {
		size_t at = o.n;
		pg_feature(&o, pg_features[i]);
		pg_set64(&o, table + 16 * i, at);
		pg_set64(&o, table + 16 * i + 8, o.n - at);
		o.b[72 + pg_features[i] / 8] |= (uint8_t)(1u << (pg_features[i] % 8));
	}
	*out = o.b;
	return o.n;
}

#endif
