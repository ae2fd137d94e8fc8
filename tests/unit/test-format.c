// SPDX-License-Identifier: MIT
/*
 * File format tests: random record streams round-trip exactly (including
 * the seed's adversarial values: ip 0 and ~0, domain ids 0 and ~0, empty
 * and maximal call chains, long paths); the domain-switch state machine
 * for every transition; a small file cut at every byte and with bits
 * flipped everywhere reads a prefix or reports damage and never crashes
 * (this binary runs under ASan/UBSan).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "format/wire.h"
#include "unit.h"
#include "util/crc32c.h"
#include "util/xalloc.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Values chosen to collide with every "special" value a decoder might have. */
static uint64_t adv64(void)
{
	static const uint64_t v[] = { 0, ~0ull, 1, 0x8000000000000000ull, 0xffffffff,
				      0xffff800000000000ull, 3, 2 };
	return rnd() % 3 ? v[rnd() % 8] : rnd();
}
static uint32_t adv32(void) { return (uint32_t)adv64(); }

struct expect {
	uint16_t type;
	uint32_t domain;
	struct dp_sample s;
	uint64_t chain[DP_MAX_CALLCHAIN];
	struct dp_mmap m;
	char path[5000];
	struct dp_task t;
	char comm[64];
};

static char tmpdir[] = "/tmp/domprof-test-XXXXXX";

static char *tmpfile_path(const char *name)
{
	char *p = xmalloc(strlen(tmpdir) + strlen(name) + 2);
	sprintf(p, "%s/%s", tmpdir, name);
	return p;
}

static struct dp_writer *open_writer(const char *path, size_t chunk, int zlevel)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct dp_header h;
	char *argv[] = { "domprof", "test" };
	dp_header_fill_local(&h, 2, argv);
	struct dp_writer_opts o = { .chunk_bytes = chunk, .zstd_level = zlevel };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	CHECK(w != NULL);
	return w;
}

/* Write n random records, keep what we expect, read back and compare. */
static void roundtrip(size_t n, size_t chunk, int zlevel)
{
	char *path = tmpfile_path("rt.data");
	struct dp_writer *w = open_writer(path, chunk, zlevel);
	struct expect *ex = xcalloc(n, sizeof(*ex));
	for (size_t i = 0; i < n; i++) {
		struct expect *e = &ex[i];
		e->domain = rnd() % 2 ? 0 : adv32();
		int kind = (int)(rnd() % 10);
		if (kind < 7) {
			e->type = DP_REC_SAMPLE;
			struct dp_sample *s = &e->s;
			s->time = adv64(); s->ip = adv64(); s->period = adv64();
			s->pid = adv32(); s->tid = adv32(); s->cpu = adv32();
			s->event = (uint16_t)adv32(); s->mode = (uint8_t)(rnd() % 6);
			s->has_asid = rnd() % 2;
			s->asid = s->has_asid ? adv64() : 0;
			uint32_t r = (uint32_t)(rnd() % 8);
			s->nr_callchain = r == 0 ? DP_MAX_CALLCHAIN : r < 4 ? 0 : (uint32_t)(rnd() % 64);
			for (uint32_t k = 0; k < s->nr_callchain; k++)
				e->chain[k] = adv64();
			s->callchain = e->chain;
			CHECK(dp_write_sample(w, e->domain, s) == 0);
		} else if (kind < 9) {
			e->type = DP_REC_MMAP;
			struct dp_mmap *m = &e->m;
			m->pid = adv32(); m->start = adv64(); m->len = adv64(); m->pgoff = adv64();
			m->time = adv64();
			m->buildid_len = (uint8_t)(rnd() % 21);
			for (int k = 0; k < 20; k++)
				m->buildid[k] = k < m->buildid_len ? (uint8_t)rnd() : 0;
			size_t plen = rnd() % 4 == 0 ? 4096 + rnd() % 800 : rnd() % 100;
			for (size_t k = 0; k < plen; k++)
				e->path[k] = (char)('a' + rnd() % 26);
			e->path[plen] = 0;
			m->path = e->path;
			m->has_ident = rnd() % 2; /* 1.1 identity block, or the 1.0 layout */
			m->dev = m->has_ident ? adv64() : 0;
			m->ino = m->has_ident ? adv64() : 0;
			m->size = m->has_ident ? adv64() : 0;
			m->mtime_ns = m->has_ident ? adv64() : 0;
			CHECK(dp_write_mmap(w, e->domain, m) == 0);
		} else {
			e->type = DP_REC_TASK;
			struct dp_task *t = &e->t;
			t->kind = (uint8_t)(rnd() % 3);
			t->pid = adv32(); t->tid = adv32(); t->ppid = adv32(); t->ptid = adv32();
			t->time = adv64();
			snprintf(e->comm, sizeof(e->comm), "comm-%u", (unsigned)(rnd() % 1000));
			t->comm = e->comm;
			CHECK(dp_write_task(w, e->domain, t) == 0);
		}
	}
	CHECK(dp_writer_finish(w) == 0);

	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	CHECK(r != NULL);
	if (!r)
		return;
	struct dp_record rec;
	size_t i = 0, bad = 0;
	uint32_t cur = DP_HOST_DOMAIN;
	while (dp_reader_next(r, &rec) > 0) {
		if (rec.type == DP_REC_DOMAIN_SWITCH) {
			cur = rec.u.switch_to;
			CHECK(rec.domain == cur);
			continue;
		}
		if (i >= n) {
			bad++;
			break;
		}
		struct expect *e = &ex[i++];
		if (rec.type != e->type || rec.domain != e->domain) {
			bad++;
			continue;
		}
		if (e->type == DP_REC_SAMPLE) {
			const struct dp_sample *a = &rec.u.sample, *b = &e->s;
			if (a->time != b->time || a->ip != b->ip || a->period != b->period ||
			    a->pid != b->pid || a->tid != b->tid || a->cpu != b->cpu ||
			    a->event != b->event || a->mode != b->mode || a->has_asid != b->has_asid ||
			    a->asid != b->asid || a->nr_callchain != b->nr_callchain ||
			    (b->nr_callchain && memcmp(a->callchain, b->callchain, 8 * b->nr_callchain)))
				bad++;
		} else if (e->type == DP_REC_MMAP) {
			const struct dp_mmap *a = &rec.u.mmap, *b = &e->m;
			if (a->pid != b->pid || a->start != b->start || a->len != b->len ||
			    a->pgoff != b->pgoff || a->time != b->time ||
			    a->buildid_len != b->buildid_len ||
			    memcmp(a->buildid, b->buildid, b->buildid_len) || strcmp(a->path, b->path) ||
			    a->has_ident != b->has_ident || a->dev != b->dev || a->ino != b->ino ||
			    a->size != b->size || a->mtime_ns != b->mtime_ns)
				bad++;
		} else {
			const struct dp_task *a = &rec.u.task, *b = &e->t;
			if (a->kind != b->kind || a->pid != b->pid || a->tid != b->tid ||
			    a->ppid != b->ppid || a->ptid != b->ptid || a->time != b->time ||
			    strcmp(a->comm, b->comm))
				bad++;
		}
	}
	CHECK_EQ_U64(i, n);
	CHECK_EQ_U64(bad, 0);
	const struct dp_damage *d;
	CHECK_EQ_U64(dp_reader_damage(r, &d), 0);
	dp_reader_free(r);
	free(ex);
	unlink(path);
	free(path);
}

/* Every transition of the domain state machine, across chunk boundaries. */
static void switch_states(void)
{
	char *path = tmpfile_path("sw.data");
	struct dp_writer *w = open_writer(path, 256, 0); /* tiny chunks: ~4 samples each */
	static const uint32_t seq[] = { 0, 0, 7, 7, 0, 0xffffffff, 0xffffffff, 1, 0, 7, 7, 7, 7,
					7, 7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 5 };
	size_t n = sizeof(seq) / sizeof(seq[0]);
	for (size_t i = 0; i < n; i++) {
		struct dp_sample s = { .ip = i, .pid = seq[i] };
		CHECK(dp_write_sample(w, seq[i], &s) == 0);
		if (i == 3) { /* non-scoped records in between do not change the domain */
			struct dp_lost l = { .count = 1 };
			CHECK(dp_write_lost(w, &l) == 0);
		}
	}
	CHECK(dp_writer_finish(w) == 0);
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	struct dp_record rec;
	size_t i = 0, switches = 0;
	while (r && dp_reader_next(r, &rec) > 0) {
		if (rec.type == DP_REC_DOMAIN_SWITCH)
			switches++;
		if (rec.type != DP_REC_SAMPLE)
			continue;
		CHECK(i < n && rec.u.sample.ip == i && rec.domain == seq[i]);
		i++;
	}
	CHECK_EQ_U64(i, n);
	CHECK(switches >= 6);
	CHECK(dp_reader_chunks(r) > 3);
	dp_reader_free(r);
	unlink(path);
	free(path);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	uint8_t *b = xmalloc((size_t)st.st_size);
	*len = (size_t)read(fd, b, (size_t)st.st_size);
	close(fd);
	return b;
}

/* Read a buffer fully; return samples seen, set *damaged when damage reported. */
static size_t read_all(const uint8_t *b, size_t len, bool *opened, bool *damaged)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, msg, sizeof(msg));
	*opened = r != NULL;
	*damaged = false;
	if (!r)
		return 0;
	struct dp_record rec;
	size_t n = 0;
	while (dp_reader_next(r, &rec) > 0)
		if (rec.type == DP_REC_SAMPLE)
			n++;
	const struct dp_damage *d;
	*damaged = dp_reader_damage(r, &d) > 0;
	dp_reader_free(r);
	return n;
}

static void cuts_and_flips(int zlevel)
{
	char *path = tmpfile_path("cut.data");
	struct dp_writer *w = open_writer(path, 200, zlevel);
	struct dp_event ev = { .id = 0, .name = "cpu-clock", .period = 1000, .freq = true };
	dp_write_event(w, &ev);
	uint64_t chain[3] = { 1, 2, 3 };
	for (int i = 0; i < 24; i++) {
		struct dp_sample s = { .ip = (uint64_t)i, .pid = 42, .nr_callchain = i % 2 ? 3 : 0,
				       .callchain = chain };
		dp_write_sample(w, i % 3 == 0 ? 9 : 0, &s);
	}
	struct dp_stats st = { .samples = 24 };
	dp_write_stats(w, &st);
	CHECK(dp_writer_finish(w) == 0);
	size_t len;
	uint8_t *b = slurp(path, &len);
	bool opened, damaged;
	size_t full = read_all(b, len, &opened, &damaged);
	CHECK(opened && !damaged && full == 24);

	/* Cut at every byte: a prefix of the samples, damage unless at a chunk end. */
	size_t prev = 0, monotone = 1;
	for (size_t cut = 0; cut < len; cut++) {
		size_t got = read_all(b, cut, &opened, &damaged);
		if (got < prev)
			monotone = 0;
		prev = got;
		CHECK(got <= full);
	}
	CHECK(monotone);

	/* Flip every bit: never a crash, never more samples than written. */
	uint8_t *c = xmalloc(len);
	size_t detected = 0, flips = 0;
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(c, b, len);
			c[i] ^= (uint8_t)(1u << bit);
			size_t got = read_all(c, len, &opened, &damaged);
			CHECK(got <= full);
			flips++;
			if (!opened || damaged)
				detected++;
		}
	/* Padding bytes and reserved header bytes are not covered by any CRC
	 * only where the format says they are ignored; everything else is. */
	CHECK(detected * 100 >= flips * 90);
	free(c);
	free(b);
	unlink(path);
	free(path);
}

static void damaged_middle(void)
{
	char *path = tmpfile_path("mid.data");
	struct dp_writer *w = open_writer(path, 128, 0);
	for (int i = 0; i < 40; i++) {
		struct dp_sample s = { .ip = (uint64_t)i };
		dp_write_sample(w, 0, &s);
	}
	CHECK(dp_writer_finish(w) == 0);
	size_t len;
	uint8_t *b = slurp(path, &len);
	/* Corrupt one payload byte of the second chunk. */
	size_t first = align8(get32(b + 16));
	size_t second = first + DP_CHUNK_HDR + align8(get32(b + first + 8));
	b[second + DP_CHUNK_HDR + 20] ^= 0x55;
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, NULL, 0);
	struct dp_record rec;
	size_t n = 0;
	while (dp_reader_next(r, &rec) > 0)
		n++;
	const struct dp_damage *d;
	CHECK_EQ_U64(dp_reader_damage(r, &d), 1);
	CHECK(d[0].offset == second && strstr(d[0].what, "bad CRC"));
	CHECK(n > 30 && n < 40);
	/* A rewind reads the same and does not duplicate the damage. */
	dp_reader_rewind(r);
	size_t n2 = 0;
	while (dp_reader_next(r, &rec) > 0)
		n2++;
	CHECK_EQ_U64(n2, n);
	CHECK_EQ_U64(dp_reader_damage(r, &d), 1);
	dp_reader_free(r);

	/* Damaged chunk header: resync on the next chunk. */
	b[second + 9] ^= 0xff;
	r = dp_reader_open_mem(b, len, &err, NULL, 0);
	n2 = 0;
	while (dp_reader_next(r, &rec) > 0)
		n2++;
	CHECK(n2 == n);
	CHECK(dp_reader_damage(r, &d) >= 1 && strstr(d[0].what, "chunk header"));
	dp_reader_free(r);

	/* Not a domprof file; newer major version. */
	char msg[256];
	r = dp_reader_open_mem("hello world, this is not a profile at all....................", 60, &err, msg, sizeof(msg));
	CHECK(!r && err == DP_ERR_NOT_DOMPROF && strstr(msg, "not a domprof file"));
	put16(b + 8, 2);
	r = dp_reader_open_mem(b, len, &err, msg, sizeof(msg));
	CHECK(!r && err == DP_ERR_VERSION && strstr(msg, "newer"));
	free(b);
	unlink(path);
	free(path);
}

static void unknown_and_meta(void)
{
	char *path = tmpfile_path("meta.data");
	struct dp_writer *w = open_writer(path, 0, 3);
	struct dp_domain d = { .id = 0xffffffff, .kind = DP_DOMAIN_PASSIVE, .vcpus = 2,
			       .kaslr_offset = 0x1e000000, .name = "vm1",
			       .address = "gdb:unix:/tmp/x", .symsrc = "kallsyms=/k" };
	CHECK(dp_write_domain(w, &d) == 0);
	/* A record with a tag from the future, copied raw. */
	uint8_t raw[24] = { 0 };
	put16(raw, 200);
	put32(raw + 4, 24);
	raw[8] = 0xab;
	CHECK(dp_write_raw(w, 3, raw, sizeof(raw)) == 0);
	char *text = xmalloc(200000);
	for (int i = 0; i < 199999; i++)
		text[i] = (char)('a' + i % 26);
	text[199999] = 0;
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
				.data = (const uint8_t *)text, .size = 200000 };
	CHECK(dp_write_symtab(w, 0xffffffff, &st) == 0);
	struct dp_stats stats = { .samples = 5, .lost = 1, .wall_ns = 99, .exit_status = 3 };
	CHECK(dp_write_stats(w, &stats) == 0);
	CHECK(dp_writer_finish(w) == 0);
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	struct dp_record rec;
	int seen = 0;
	while (dp_reader_next(r, &rec) > 0) {
		switch (rec.type) {
		case DP_REC_DOMAIN:
			CHECK(rec.u.domain.id == 0xffffffff && !strcmp(rec.u.domain.name, "vm1") &&
			      rec.u.domain.kaslr_offset == 0x1e000000 && rec.u.domain.vcpus == 2 &&
			      !strcmp(rec.u.domain.symsrc, "kallsyms=/k"));
			seen |= 1;
			break;
		case 200:
			CHECK(rec.domain == 3 && rec.raw_len == 24 && ((const uint8_t *)rec.raw)[8] == 0xab);
			seen |= 2;
			break;
		case DP_REC_SYMTAB:
			CHECK(rec.domain == 0xffffffff && rec.u.symtab.size == 200000 &&
			      !memcmp(rec.u.symtab.data, text, 200000));
			seen |= 4;
			break;
		case DP_REC_STATS:
			CHECK(rec.u.stats.samples == 5 && rec.u.stats.exit_status == 3);
			seen |= 8;
			break;
		}
	}
	CHECK_EQ_U64(seen, 15);
	CHECK_STR(dp_reader_header(r)->cmdline, "domprof test");
	dp_reader_free(r);
	free(text);
	unlink(path);
	free(path);
}

/* dp_record_check agrees with the reader on single records. */
static void record_check(void)
{
	uint8_t r[64 + 8 * 1100];
	memset(r, 0, sizeof(r));
	put16(r, DP_REC_SAMPLE);
	put32(r + 4, 48);
	CHECK(dp_record_check(r, 48));
	CHECK(!dp_record_check(r, 40));          /* len field says 48 */
	put32(r + 4, 44);
	CHECK(!dp_record_check(r, 44));          /* not a multiple of 8 */
	put16(r + 2, DP_SAMPLE_F_CHAIN);          /* chain of 3 frames */
	put32(r + 4, 48 + 8 + 24);
	put32(r + 48, 3);
	CHECK(dp_record_check(r, 80));
	put32(r + 48, 4);                         /* runs past the record */
	CHECK(!dp_record_check(r, 80));
	size_t big = 48 + 8 + 8 * (DP_MAX_CALLCHAIN + 1);
	put32(r + 4, (uint32_t)big);
	put32(r + 48, DP_MAX_CALLCHAIN + 1);      /* over the limit */
	CHECK(!dp_record_check(r, big));
	memset(r, 0, 16);
	put16(r, 300);                            /* unknown tag: passes */
	put32(r + 4, 16);
	CHECK(dp_record_check(r, 16));
	put16(r, DP_REC_TASK);                    /* too short for a TASK */
	CHECK(!dp_record_check(r, 16));
}

static void crc(void)
{
	CHECK_EQ_U64(crc32c(0, "123456789", 9), 0xe3069283);
	CHECK_EQ_U64(crc32c_sw(0, "123456789", 9), 0xe3069283);
	uint8_t buf[1000];
	for (int i = 0; i < 1000; i++)
		buf[i] = (uint8_t)rnd();
	for (size_t n = 0; n < 1000; n += 37)
		CHECK_EQ_U64(crc32c(0, buf + 1, n), crc32c_sw(0, buf + 1, n));
}

static void enospc(void)
{
	/* /dev/full: every write fails with ENOSPC; the writer reports it. */
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		return;
	struct dp_header h;
	dp_header_fill_local(&h, 0, NULL);
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, NULL, &err);
	CHECK(w == NULL && err == -ENOSPC);
	close(fd);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	crc();
	record_check();
	roundtrip(5000, 0, 0);
	roundtrip(5000, 4096, 1);
	roundtrip(300, 64, 0); /* records larger than the chunk target */
	switch_states();
	damaged_middle();
	unknown_and_meta();
	cuts_and_flips(0);
	cuts_and_flips(1);
	enospc();
	rmdir(tmpdir);
	return unit_done();
}
