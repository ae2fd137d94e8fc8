// SPDX-License-Identifier: MIT
/*
 * File format tests: random record streams round-trip exactly (including
 * the seed's adversarial values: ip 0 and ~0, domain ids 0 and ~0, empty
 * and maximal call chains, long paths); the domain-switch state machine
 * for every transition; a small file cut at every byte and with bits
 * flipped everywhere reads a prefix or reports damage and never crashes
 * (this binary runs under ASan/UBSan); chunks removed, repeated, swapped
 * or cut at the end are reported (format 1.1), STATS totals are checked,
 * and a 1.0 file reads as it always did. COUNTERS records (1.3) round-trip
 * in any domain and across chunks, the writer refuses bad names and
 * counts, and a malformed one (truncated, count over the limit, a name
 * past the record or of bad length or bytes) is one damaged record.
 * SAMPLE's user registers and stack (1.4) round-trip (random ones in the
 * random stream; the maximal stack and all 64 registers), the writer
 * refuses inconsistent ones, a block cut or running past its record is
 * one damaged record, a reader that ignores the block (as 1.3 readers
 * do) still reads the sample, and a file of such samples cut anywhere
 * reads a prefix. User stacks in delta form (1.5) read back byte for
 * byte as the same stream written whole, on 1 and 3 reader threads, and
 * hostile references are cut and counted or refused (controls: the
 * whole encoding, the unchanged file).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/counts.h"
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
	uint64_t uregs[64];
	uint8_t ustack[600];
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
			s->has_uregs = rnd() % 4 == 0; /* 1.4 user registers and stack */
			if (s->has_uregs) {
				s->uregs_abi = adv32();
				s->uregs_mask = rnd() % 2 ? 0xff0fffull : adv64();
				for (uint32_t k = 0; k < dp_uregs_count(s->uregs_mask); k++)
					e->uregs[k] = adv64();
				s->uregs = e->uregs;
				s->ustack_size = (uint32_t)(rnd() % sizeof(e->ustack));
				s->ustack_len = s->ustack_size ? (uint32_t)(rnd() % (s->ustack_size + 1)) : 0;
				for (uint32_t k = 0; k < s->ustack_len; k++)
					e->ustack[k] = (uint8_t)rnd();
				s->ustack = e->ustack;
			}
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
			t->has_asid = rnd() % 2; /* 1.2 address-space block, or the 1.0 layout */
			t->asid = t->has_asid ? adv64() : 0;
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
			else if (a->has_uregs != b->has_uregs ||
				 (b->has_uregs &&
				  (a->uregs_abi != b->uregs_abi || a->uregs_mask != b->uregs_mask ||
				   a->ustack_size != b->ustack_size || a->ustack_len != b->ustack_len ||
				   memcmp(a->uregs, b->uregs, 8 * dp_uregs_count(b->uregs_mask)) ||
				   (b->ustack_len && memcmp(a->ustack, b->ustack, b->ustack_len)))))
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
			    strcmp(a->comm, b->comm) || a->has_asid != b->has_asid || a->asid != b->asid)
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

/* ---- chunk sequence and completeness (format 1.1) ---- */

/* The chunks of a file as written: offsets and lengths (header + padded payload). */
struct chunks {
	size_t hdr, n;
	size_t off[64], len[64];
};

static void split_chunks(const uint8_t *b, size_t len, struct chunks *c)
{
	c->hdr = align8(get32(b + 16));
	c->n = 0;
	for (size_t o = c->hdr; o + DP_CHUNK_HDR <= len && c->n < 64; c->n++) {
		c->off[c->n] = o;
		c->len[c->n] = DP_CHUNK_HDR + align8(get32(b + o + 8));
		o += c->len[c->n];
	}
}

/* w finished with a STATS record of `samples`, its file read back (a new
 * buffer of *len bytes) and split into chunks */
static uint8_t *finish_split(struct dp_writer *w, const char *path, uint64_t samples, size_t *len,
			     struct chunks *c)
{
	struct dp_stats st = { .samples = samples };
	dp_write_stats(w, &st);
	CHECK(dp_writer_finish(w) == 0);
	uint8_t *b = slurp(path, len);
	split_chunks(b, *len, c);
	return b;
}

/* A new file: the header, then the chunks idx[0..n) in that order. */
static uint8_t *rebuild(const uint8_t *b, const struct chunks *c, const int *idx, size_t n,
			size_t *outlen)
{
	size_t len = c->hdr;
	for (size_t i = 0; i < n; i++)
		len += c->len[idx[i]];
	uint8_t *o = xmalloc(len);
	memcpy(o, b, c->hdr);
	size_t at = c->hdr;
	for (size_t i = 0; i < n; i++) {
		memcpy(o + at, b + c->off[idx[i]], c->len[idx[i]]);
		at += c->len[idx[i]];
	}
	*outlen = len;
	return o;
}

struct readout {
	size_t samples, ndamage;
	char damage[4096];       /* every damage line, '\n'-separated */
	bool incomplete;
	bool stats_totals;
};

static void read_out(const uint8_t *b, size_t len, struct readout *o)
{
	memset(o, 0, sizeof(*o));
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, NULL, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	struct dp_record rec;
	while (dp_reader_next(r, &rec) > 0) {
		o->samples += rec.type == DP_REC_SAMPLE;
		if (rec.type == DP_REC_STATS)
			o->stats_totals = rec.u.stats.has_totals;
	}
	const struct dp_damage *d;
	o->ndamage = dp_reader_damage(r, &d);
	size_t at = 0;
	for (size_t i = 0; i < o->ndamage && at < sizeof(o->damage); i++)
		at += (size_t)snprintf(o->damage + at, sizeof(o->damage) - at, "%s\n", d[i].what);
	o->incomplete = dp_reader_incomplete(r) != NULL;
	dp_reader_free(r);
}

/* 40 samples in small uncompressed chunks; STATS alone in the last one
 * (as a recorder's end: its last chunk is flushed by time, then STATS).
 * stats_raw: write a 56-byte STATS of format 1.0 instead. */
static uint8_t *seq_file(size_t *len, bool with_stats, bool stats_raw)
{
	char *path = tmpfile_path("seq.data");
	struct dp_writer *w = open_writer(path, 160, 0);
	for (int i = 0; i < 40; i++) {
		struct dp_sample s = { .ip = (uint64_t)i, .pid = 7 };
		CHECK(dp_write_sample(w, (uint32_t)(i % 3 == 0), &s) == 0);
	}
	CHECK(dp_writer_flush(w) == 0);
	if (with_stats && stats_raw) {
		uint8_t st[56] = { 0 };
		put16(st, DP_REC_STATS);
		put32(st + 4, 56);
		put64(st + 8, 40);
		CHECK(dp_write_raw(w, 0, st, sizeof(st)) == 0);
	} else if (with_stats) {
		struct dp_stats st = { .samples = 40, .records = 12345 /* ignored */ };
		CHECK(dp_write_stats(w, &st) == 0);
	}
	CHECK(dp_writer_finish(w) == 0);
	uint8_t *b = slurp(path, len);
	unlink(path);
	free(path);
	return b;
}

static void sequence(void)
{
	size_t len, n2;
	uint8_t *b = seq_file(&len, true, false);
	struct chunks c;
	split_chunks(b, len, &c);
	CHECK(c.n >= 10);
	CHECK_EQ_U64(get16(b + 10), DP_VERSION_MINOR);   /* the sequence is checked from 1.1 on */
	struct readout o;
	char want[160];

	/* intact: no damage, complete, STATS totals present and matching */
	read_out(b, len, &o);
	CHECK(o.samples == 40 && o.ndamage == 0 && !o.incomplete && o.stats_totals);

	/* one chunk removed from the middle */
	int idx[70];
	size_t n = 0;
	for (size_t i = 0; i < c.n; i++)
		if (i != 4)
			idx[n++] = (int)i;
	uint8_t *x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	snprintf(want, sizeof(want), "chunk 4 missing at offset %zu\n", c.off[4]);
	CHECK(o.samples < 40 && !o.incomplete);
	CHECK(strstr(o.damage, want) != NULL);
	CHECK(strstr(o.damage, "STATS counts") != NULL);   /* totals do not match */
	if (!strstr(o.damage, want))
		fprintf(stderr, "damage was:\n%s", o.damage);
	free(x);

	/* two in a row */
	n = 0;
	for (size_t i = 0; i < c.n; i++)
		if (i != 2 && i != 3)
			idx[n++] = (int)i;
	x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	snprintf(want, sizeof(want), "chunks 2..3 missing at offset %zu\n", c.off[2]);
	CHECK(strstr(o.damage, want) != NULL);
	free(x);

	/* the first chunk removed */
	n = 0;
	for (size_t i = 1; i < c.n; i++)
		idx[n++] = (int)i;
	x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	snprintf(want, sizeof(want), "chunk 0 missing at offset %zu\n", c.off[0]);
	CHECK(strstr(o.damage, want) != NULL);
	free(x);

	/* a chunk duplicated: read once, the copy skipped and reported */
	n = 0;
	for (size_t i = 0; i < c.n; i++) {
		idx[n++] = (int)i;
		if (i == 5)
			idx[n++] = (int)i;
	}
	x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	snprintf(want, sizeof(want), "chunk 5 repeated at offset %zu; skipped\n", c.off[6]);
	CHECK_EQ_U64(o.samples, 40);
	CHECK(o.ndamage == 1 && strstr(o.damage, want) != NULL);
	free(x);

	/* two chunks swapped: all read, the late one reported, no gap */
	n = 0;
	for (size_t i = 0; i < c.n; i++)
		idx[n++] = (int)(i == 3 ? 4 : i == 4 ? 3 : i);
	x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	CHECK_EQ_U64(o.samples, 40);
	CHECK(o.ndamage == 1 && strstr(o.damage, "chunk 3 out of order at offset") != NULL);
	CHECK(!strstr(o.damage, "missing"));
	free(x);

	/* the last chunk, holding STATS, cut (a recorder killed): no damage
	 * anyone can see in the bytes, but the recording is incomplete */
	n = 0;
	for (size_t i = 0; i + 1 < c.n; i++)
		idx[n++] = (int)i;
	x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	CHECK(o.samples == 40 && o.ndamage == 0 && o.incomplete);
	free(x);

	/* A rewind, even after a partial pass, reports each gap once. */
	n = 0;
	for (size_t i = 0; i < c.n; i++)
		if (i != 6)
			idx[n++] = (int)i;
	x = rebuild(b, &c, idx, n, &n2);
	int err;
	struct dp_reader *r = dp_reader_open_mem(x, n2, &err, NULL, 0);
	struct dp_record rec;
	for (int i = 0; i < 5; i++)
		dp_reader_next(r, &rec);
	CHECK(dp_reader_incomplete(r) == NULL);   /* not known before the end */
	for (int pass = 0; pass < 2; pass++) {
		dp_reader_rewind(r);
		while (dp_reader_next(r, &rec) > 0)
			;
	}
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d), gaps = 0;
	for (size_t i = 0; i < nd; i++)
		gaps += strstr(d[i].what, "chunk 6 missing") != NULL;
	CHECK_EQ_U64(gaps, 1);
	CHECK(dp_reader_incomplete(r) == NULL);
	dp_reader_free(r);
	free(x);
	free(b);

	/* Written without STATS at all: incomplete, not damaged. */
	b = seq_file(&len, false, false);
	read_out(b, len, &o);
	CHECK(o.samples == 40 && o.ndamage == 0 && o.incomplete);
	free(b);
}

/* STATS whose totals disagree with the records before it. */
static void stats_totals(void)
{
	char *path = tmpfile_path("tot.data");
	struct dp_writer *w = open_writer(path, 0, 1);
	for (int i = 0; i < 10; i++) {
		struct dp_sample s = { .ip = (uint64_t)i };
		CHECK(dp_write_sample(w, 0, &s) == 0);
	}
	/* a STATS record copied from elsewhere: 11 records, 11 samples */
	uint8_t st[72] = { 0 };
	put16(st, DP_REC_STATS);
	put32(st + 4, 72);
	put64(st + 56, 11);
	put64(st + 64, 11);
	CHECK(dp_write_raw(w, 0, st, sizeof(st)) == 0);
	CHECK(dp_writer_finish(w) == 0);
	size_t len;
	uint8_t *b = slurp(path, &len);
	struct readout o;
	read_out(b, len, &o);
	CHECK(o.samples == 10 && o.ndamage == 1 && !o.incomplete);
	CHECK(strstr(o.damage, "STATS counts 11 records (11 samples), 10 (10) read") != NULL);
	free(b);

	/* the writer's own STATS always agrees, whatever the caller says */
	w = open_writer(path, 0, 1);
	for (int i = 0; i < 10; i++) {
		struct dp_sample s = { .ip = (uint64_t)i };
		CHECK(dp_write_sample(w, 5, &s) == 0);  /* and a DOMAIN_SWITCH */
	}
	struct dp_stats sts = { .samples = 99, .records = 1, .sample_records = 2 };
	CHECK(dp_write_stats(w, &sts) == 0);
	CHECK(dp_writer_finish(w) == 0);
	b = slurp(path, &len);
	read_out(b, len, &o);
	CHECK(o.samples == 10 && o.ndamage == 0 && o.stats_totals);
	free(b);
	unlink(path);
	free(path);
}

/* A file of format 1.0 (STATS of 56 bytes, no sequence check) still reads
 * without false damage; its chunk seq is not trusted (a duplicate is read
 * as before, twice). */
static void old_minor0(void)
{
	size_t len, n2;
	uint8_t *b = seq_file(&len, true, true);
	put16(b + 10, 0);                  /* minor 0 (not covered by the header CRC) */
	struct chunks c;
	split_chunks(b, len, &c);
	struct readout o;
	read_out(b, len, &o);
	CHECK(o.samples == 40 && o.ndamage == 0 && !o.incomplete && !o.stats_totals);
	/* every seq zero, as a writer that never filled it would leave it */
	for (size_t i = 0; i < c.n; i++) {
		put32(b + c.off[i] + 24, 0);
		put32(b + c.off[i] + 28, crc32c(0, b + c.off[i], 28));
	}
	read_out(b, len, &o);
	CHECK(o.samples == 40 && o.ndamage == 0 && !o.incomplete);
	int idx[70];
	size_t n = 0;
	for (size_t i = 0; i < c.n; i++) {
		idx[n++] = (int)i;
		if (i == 2)
			idx[n++] = (int)i;
	}
	uint8_t *x = rebuild(b, &c, idx, n, &n2);
	read_out(x, n2, &o);
	CHECK(o.samples > 40 && o.ndamage == 0);
	free(x);
	free(b);
}

/* ---- COUNTERS (format 1.3) ---- */

#define N64 "abcdefghijklmnopqrstuvwxyz0123456789._-abcdefghijklmnopqrstuvwxy"

static void counters_roundtrip(int zlevel)
{
	char *path = tmpfile_path("ctr.data");
	/* small chunks: records land in several, the switch is repeated */
	struct dp_writer *w = open_writer(path, 256, zlevel);
	struct dp_counter a[] = { { "unwind.chains", 5 }, { "unwind.stop.end", 3 }, { N64, UINT64_MAX } };
	struct dp_counters ca = { 3, a };
	static struct dp_counter many[DP_MAX_COUNTERS];
	static char names[DP_MAX_COUNTERS][16];
	for (uint32_t i = 0; i < DP_MAX_COUNTERS; i++) {
		snprintf(names[i], sizeof(names[i]), "c.%03u", i);
		many[i] = (struct dp_counter){ names[i], (uint64_t)i * 1000003u };
	}
	struct dp_counters cm = { DP_MAX_COUNTERS, many };
	struct dp_counter h[] = { { "x", 0 } };
	struct dp_counters ch = { 1, h };
	struct dp_sample s = { .ip = 1 };
	CHECK(strlen(N64) == DP_MAX_COUNTER_NAME);
	CHECK(dp_write_sample(w, 0, &s) == 0);
	CHECK(dp_write_counters(w, 5, &ca) == 0);
	CHECK(dp_write_sample(w, 5, &s) == 0);
	CHECK(dp_write_counters(w, DP_HOST_DOMAIN, &ch) == 0);
	CHECK(dp_write_counters(w, 0xffffffff, &cm) == 0);
	CHECK(dp_write_sample(w, 5, &s) == 0);
	CHECK(dp_write_counters(w, 5, &ca) == 0);
	struct dp_stats st = { .samples = 3 };
	CHECK(dp_write_stats(w, &st) == 0);
	CHECK(dp_writer_finish(w) == 0);

	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(dp_reader_header(r)->minor >= 3);
	struct dp_record rec;
	int nctr = 0, nsamp = 0;
	while (dp_reader_next(r, &rec) > 0) {
		if (rec.type == DP_REC_SAMPLE)
			CHECK_EQ_U64(rec.domain, nsamp++ ? 5 : 0);
		if (rec.type != DP_REC_COUNTERS)
			continue;
		CHECK(dp_record_check(rec.raw, rec.raw_len));
		const struct dp_counters *c = &rec.u.counters;
		switch (nctr++) {
		case 0:
		case 3:
			CHECK_EQ_U64(rec.domain, 5);
			CHECK_EQ_U64(c->n, 3);
			for (uint32_t i = 0; i < 3 && c->n == 3; i++) {
				CHECK_STR(c->c[i].name, a[i].name);
				CHECK_EQ_U64(c->c[i].value, a[i].value);
			}
			break;
		case 1:
			CHECK_EQ_U64(rec.domain, DP_HOST_DOMAIN);
			CHECK(c->n == 1 && !strcmp(c->c[0].name, "x") && c->c[0].value == 0);
			break;
		case 2: {
			CHECK_EQ_U64(rec.domain, 0xffffffff);
			CHECK_EQ_U64(c->n, DP_MAX_COUNTERS);
			uint32_t bad = 0;
			for (uint32_t i = 0; i < c->n; i++)
				bad += strcmp(c->c[i].name, names[i]) || c->c[i].value != many[i].value;
			CHECK_EQ_U64(bad, 0);
			break;
		}
		}
	}
	CHECK_EQ_U64(nctr, 4);
	CHECK_EQ_U64(nsamp, 3);
	const struct dp_damage *d;
	CHECK_EQ_U64(dp_reader_damage(r, &d), 0);
	CHECK(dp_reader_incomplete(r) == NULL);
	dp_reader_free(r);
	unlink(path);
	free(path);
}

/* What the writer refuses, with -EINVAL and nothing written; what it
 * accepts at the limits (the controls). */
static void counters_refused(void)
{
	char *path = tmpfile_path("ctr-ref.data");
	struct dp_writer *w = open_writer(path, 0, 0);
	static const char *const bad[] = { "", "Unwind.chains", "a b", "a/b", "a\n", "x\x80",
					   N64 "z", "unwind,chains", "a=b" };
	uint64_t before = dp_writer_records(w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dp_counter c[] = { { "ok", 1 }, { bad[i], 2 } };
		struct dp_counters cs = { 2, c };
		CHECK(dp_write_counters(w, 1, &cs) == -EINVAL);
	}
	struct dp_counter cnull[] = { { NULL, 1 } };
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ 1, cnull }) == -EINVAL);
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ 1, NULL }) == -EINVAL);
	CHECK(dp_write_counters(w, 1, NULL) == -EINVAL);
	static struct dp_counter many[DP_MAX_COUNTERS + 1];
	for (uint32_t i = 0; i <= DP_MAX_COUNTERS; i++)
		many[i] = (struct dp_counter){ "same.name", 1 };
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ DP_MAX_COUNTERS + 1, many }) == -EINVAL);
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ 0, NULL }) == 0);  /* nothing */
	CHECK_EQ_U64(dp_writer_records(w), before);
	/* controls: the same calls at the limits are written */
	struct dp_counter good[] = { { N64, 1 }, { "a", 2 }, { "0-9._", 3 } };
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ 3, good }) == 0);
	CHECK(dp_write_counters(w, 1, &(struct dp_counters){ DP_MAX_COUNTERS, many }) == 0);
	CHECK(dp_writer_records(w) > before);
	CHECK(dp_writer_finish(w) == 0);  /* the refusals did not poison it */
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	struct dp_record rec;
	int n = 0;
	uint64_t same = 0;
	while (r && dp_reader_next(r, &rec) > 0)
		if (rec.type == DP_REC_COUNTERS) {
			n++;
			for (uint32_t i = 0; i < rec.u.counters.n; i++)
				if (!strcmp(rec.u.counters.c[i].name, "same.name"))
					same += rec.u.counters.c[i].value;
		}
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(same, DP_MAX_COUNTERS);  /* a name repeated in a record is kept */
	const struct dp_damage *d;
	CHECK(r && dp_reader_damage(r, &d) == 0);
	dp_reader_free(r);
	unlink(path);
	free(path);
}

/* A COUNTERS body built by hand: n entries (value i+1) named by names[],
 * each entry's name length field taken from lens[] (the real length when
 * lens is NULL), n_field in the count field, the record cut to `cut`
 * bytes when nonzero (the length field follows). Returns the length. */
static size_t raw_counters(uint8_t *b, size_t cap, uint32_t n_field, uint32_t n,
			   const char *const *names, const uint16_t *lens, size_t cut)
{
	memset(b, 0, cap);
	put16(b, DP_REC_COUNTERS);
	put32(b + 8, n_field);
	size_t at = 16;
	for (uint32_t i = 0; i < n; i++) {
		size_t nl = strlen(names[i]);
		put64(b + at, i + 1);
		put16(b + at + 8, lens ? lens[i] : (uint16_t)nl);
		memcpy(b + at + 10, names[i], nl);
		at += 10 + nl;
	}
	size_t len = align8((uint32_t)(cut ? cut : at));
	CHECK(len <= cap);
	put32(b + 4, (uint32_t)len);
	return len;
}

/* Write sample, the raw record (domain 2), sample; read back. Returns the
 * number of damage entries; *what the first one; *got the COUNTERS
 * records returned, *samples the samples. */
static size_t read_raw_counters(const uint8_t *raw, size_t len, char *what, size_t wl, int *got,
				int *samples, uint64_t *v0)
{
	char *path = tmpfile_path("ctr-bad.data");
	struct dp_writer *w = open_writer(path, 0, 0);
	struct dp_sample s = { .ip = 7 };
	CHECK(dp_write_sample(w, 2, &s) == 0);
	CHECK(dp_write_raw(w, 2, raw, len) == 0);  /* copies any body */
	CHECK(dp_write_sample(w, 2, &s) == 0);
	CHECK(dp_writer_finish(w) == 0);
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	struct dp_record rec;
	*got = *samples = 0;
	while (r && dp_reader_next(r, &rec) > 0) {
		*samples += rec.type == DP_REC_SAMPLE && rec.domain == 2;
		if (rec.type == DP_REC_COUNTERS) {
			(*got)++;
			*v0 = rec.u.counters.n ? rec.u.counters.c[0].value : 0;
		}
	}
	const struct dp_damage *d;
	size_t nd = r ? dp_reader_damage(r, &d) : 99;
	snprintf(what, wl, "%s", nd && r ? d[0].what : "");
	dp_reader_free(r);
	unlink(path);
	free(path);
	return nd;
}

static void counters_malformed(void)
{
	static uint8_t b[8192];
	static const char *n257[257];
	for (int i = 0; i < 257; i++)
		n257[i] = "a";
	static const char *const one[] = { "unwind.chains" }, *const two[] = { "a", "b" };
	static const char *const upper[] = { "Abc" }, *const nul[] = { "ab" };
	static const char *const n65[] = { N64 "z" };
	uint16_t len200 = 200, len0 = 0, len3 = 3;
	struct {
		const char *what;
		size_t len;
		bool ok;
	} c[12];
	size_t nc = 0;
	uint8_t *bufs[12];
#define CASE(w, ok_, ...) do { bufs[nc] = xmalloc(sizeof(b)); \
	c[nc].len = raw_counters(bufs[nc], sizeof(b), __VA_ARGS__); c[nc].what = w; c[nc].ok = ok_; nc++; } while (0)
	CASE("control: one counter", true, 1, 1, one, NULL, 0);
	CASE("control: 256 counters", true, 256, 256, n257, NULL, 0);
	CASE("control: no counters", true, 0, 0, NULL, NULL, 0);
	CASE("header only", false, 0, 0, NULL, NULL, 8);
	CASE("count without entries", false, 1, 0, NULL, NULL, 0);
	CASE("count 257", false, 257, 257, n257, NULL, 0);
	CASE("name length past the record", false, 1, 1, one, &len200, 0);
	CASE("name length 0", false, 1, 1, one, &len0, 0);
	CASE("name of 65 bytes", false, 1, 1, n65, NULL, 0);
	CASE("upper-case name", false, 1, 1, upper, NULL, 0);
	CASE("second entry missing", false, 2, 1, two, NULL, 0);
	CASE("NUL inside a name", false, 1, 1, nul, &len3, 0);
#undef CASE
	for (size_t i = 0; i < nc; i++) {
		char what[128];
		int got, samples;
		uint64_t v0 = 0;
		size_t nd = read_raw_counters(bufs[i], c[i].len, what, sizeof(what), &got, &samples, &v0);
		bool checked = dp_record_check(bufs[i], c[i].len);
		if (c[i].ok) {
			CHECK(nd == 0 && got == 1 && checked);
		} else {
			CHECK(nd == 1 && got == 0 && !checked);
			CHECK(strstr(what, "malformed COUNTERS record") != NULL);
		}
		CHECK_EQ_U64(samples, 2);  /* the records around it are read */
		if (nd != (c[i].ok ? 0u : 1u) || samples != 2)
			fprintf(stderr, "  case '%s': %zu damage (%s), %d records, %d samples\n",
				c[i].what, nd, what, got, samples);
		free(bufs[i]);
	}
}

/* ---- user registers and stack in SAMPLE (format 1.4) ---- */

static uint64_t ustack_regs[64];
static uint8_t ustack_bytes[DP_MAX_USTACK];

/* A sample with user registers (mask) and a stack of len of size bytes. */
static struct dp_sample ustack_sample(uint64_t mask, uint32_t size, uint32_t len)
{
	for (unsigned i = 0; i < 64; i++)
		ustack_regs[i] = 0x1000u * (i + 1);
	for (uint32_t i = 0; i < DP_MAX_USTACK; i++)
		ustack_bytes[i] = (uint8_t)(i * 7 + 1);
	return (struct dp_sample){ .ip = 0x401000, .pid = 9, .tid = 9, .mode = DP_MODE_USER,
				   .has_uregs = true, .uregs_abi = DP_UREGS_ABI_64,
				   .uregs_mask = mask, .uregs = ustack_regs, .ustack_size = size,
				   .ustack_len = len, .ustack = ustack_bytes };
}

static void ustack_roundtrip(int zlevel)
{
	char *path = tmpfile_path("us.data");
	struct dp_writer *w = open_writer(path, 4096, zlevel);  /* records over the chunk size */
	uint64_t chain[3] = { 0xffffffff81000000ull, 0x401000, 0x401100 };
	struct dp_sample s[4];
	s[0] = ustack_sample(0xff0fff, 8192, 8000);
	s[0].nr_callchain = 3;
	s[0].callchain = chain;
	s[0].has_asid = true;
	s[0].asid = 77;
	s[1] = ustack_sample(~0ull, DP_MAX_USTACK, DP_MAX_USTACK);  /* the maximal block */
	s[2] = ustack_sample(0, 0, 0);                              /* registers none, no stack */
	s[3] = (struct dp_sample){ .ip = 5, .nr_callchain = 3, .callchain = chain };  /* none */
	for (int i = 0; i < 4; i++)
		CHECK(dp_write_sample(w, (uint32_t)i % 2, &s[i]) == 0);
	CHECK(dp_writer_finish(w) == 0);
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	struct dp_record rec;
	int n = 0;
	while (r && dp_reader_next(r, &rec) > 0) {
		if (rec.type != DP_REC_SAMPLE)
			continue;
		const struct dp_sample *a = &rec.u.sample, *b = &s[n++];
		CHECK(a->has_uregs == b->has_uregs && a->uregs_mask == b->uregs_mask);
		CHECK(a->ustack_size == b->ustack_size && a->ustack_len == b->ustack_len);
		CHECK(a->nr_callchain == b->nr_callchain && a->has_asid == b->has_asid);
		if (!b->has_uregs)
			continue;
		CHECK(a->uregs_abi == DP_UREGS_ABI_64);
		CHECK(!memcmp(a->uregs, b->uregs, 8 * dp_uregs_count(b->uregs_mask)));
		CHECK(!b->ustack_len || !memcmp(a->ustack, b->ustack, b->ustack_len));
		uint64_t v = 0;
		/* bit 8 (ip): the 9th value with the full masks */
		CHECK(dp_sample_ureg(a, DP_X86_REG_IP, &v) == (b->uregs_mask != 0));
		CHECK(!b->uregs_mask || v == 0x9000);
		CHECK(!dp_sample_ureg(a, 64, &v));
	}
	CHECK_EQ_U64(n, 4);
	const struct dp_damage *d;
	CHECK(r && dp_reader_damage(r, &d) == 0);
	dp_reader_free(r);
	unlink(path);
	free(path);
}

/* The writer refuses inconsistent blocks, nothing written, still usable. */
static void ustack_refused(void)
{
	char *path = tmpfile_path("us-ref.data");
	struct dp_writer *w = open_writer(path, 0, 0);
	uint64_t before = dp_writer_records(w);
	struct dp_sample s = ustack_sample(0xff0fff, 64, 72);     /* len > size */
	CHECK(dp_write_sample(w, 0, &s) == -EINVAL);
	s = ustack_sample(0xff0fff, DP_MAX_USTACK + 8, 8);        /* size over the limit */
	CHECK(dp_write_sample(w, 0, &s) == -EINVAL);
	s = ustack_sample(0xff0fff, 64, 64);
	s.uregs = NULL;                                           /* mask without values */
	CHECK(dp_write_sample(w, 0, &s) == -EINVAL);
	s = ustack_sample(0xff0fff, 64, 64);
	s.ustack = NULL;                                          /* length without bytes */
	CHECK(dp_write_sample(w, 0, &s) == -EINVAL);
	CHECK_EQ_U64(dp_writer_records(w), before);
	s = ustack_sample(0, 64, 0);                              /* controls */
	s.uregs = NULL;
	s.ustack = NULL;
	CHECK(dp_write_sample(w, 0, &s) == 0);
	s = ustack_sample(0xff0fff, 64, 64);
	CHECK(dp_write_sample(w, 0, &s) == 0);
	CHECK(dp_writer_finish(w) == 0);
	unlink(path);
	free(path);
}

/* A SAMPLE record with a user block built by hand: nregs registers of
 * mask (any popcount claim), size and len fields, `have` bytes of block
 * after the fixed 24 (the record's end). Returns the record length. */
static size_t raw_ustack(uint8_t *b, uint64_t mask, uint32_t size, uint32_t len, size_t have)
{
	memset(b, 0, 48 + 24 + have + 8);
	put16(b, DP_REC_SAMPLE);
	put16(b + 2, DP_SAMPLE_F_USTACK);
	put64(b + 16, 0x401000);
	put64(b + 48, mask);
	put32(b + 56, DP_UREGS_ABI_64);
	put32(b + 64, size);
	put32(b + 68, len);
	size_t n = align8((uint32_t)(48 + 24 + have));
	put32(b + 4, (uint32_t)n);
	return n;
}

static size_t read_raw_sample(const uint8_t *raw, size_t len, char *what, size_t wl, int *samples,
			      int *with_regs)
{
	char *path = tmpfile_path("us-bad.data");
	struct dp_writer *w = open_writer(path, 0, 0);
	struct dp_sample s = { .ip = 7 };
	CHECK(dp_write_sample(w, 2, &s) == 0);
	CHECK(dp_write_raw(w, 2, raw, len) == 0);
	CHECK(dp_write_sample(w, 2, &s) == 0);
	CHECK(dp_writer_finish(w) == 0);
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	struct dp_record rec;
	*samples = *with_regs = 0;
	while (r && dp_reader_next(r, &rec) > 0)
		if (rec.type == DP_REC_SAMPLE) {
			(*samples)++;
			*with_regs += rec.u.sample.has_uregs;
		}
	const struct dp_damage *d;
	size_t nd = r ? dp_reader_damage(r, &d) : 99;
	snprintf(what, wl, "%s", nd && r ? d[0].what : "");
	dp_reader_free(r);
	unlink(path);
	free(path);
	return nd;
}

static void ustack_malformed(void)
{
	static uint8_t b[48 + 24 + 8 * 64 + DP_MAX_USTACK + 64];
	struct {
		const char *what;
		uint64_t mask;
		uint32_t size, len;
		size_t have;
		bool ok;
	} c[] = {
		{ "control: 2 registers, 16 of 16 bytes", 3, 16, 16, 16 + 16, true },
		{ "control: 64 registers, maximal stack", ~0ull, DP_MAX_USTACK, DP_MAX_USTACK,
		  512 + DP_MAX_USTACK, true },
		{ "control: nothing but the block", 0, 0, 0, 0, true },
		{ "block cut", 3, 16, 16, (size_t)-16, false },
		{ "registers past the record", ~0ull, 0, 0, 8 * 63, false },
		{ "stack past the record", 3, 64, 64, 16 + 56, false },
		{ "len over size", 3, 16, 24, 16 + 24, false },
		{ "size over the limit", 3, DP_MAX_USTACK + 8, 8, 16 + 8, false },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t len;
		if (c[i].have == (size_t)-16) {  /* the record ends inside the 24 fixed bytes */
			len = raw_ustack(b, c[i].mask, c[i].size, c[i].len, 0) - 8;
			put32(b + 4, (uint32_t)len);
		} else {
			len = raw_ustack(b, c[i].mask, c[i].size, c[i].len, c[i].have);
		}
		char what[128];
		int samples, regs;
		size_t nd = read_raw_sample(b, len, what, sizeof(what), &samples, &regs);
		bool checked = dp_record_check(b, len);
		if (c[i].ok) {
			CHECK(nd == 0 && samples == 3 && regs == 1 && checked);
		} else {
			CHECK(nd == 1 && samples == 2 && regs == 0 && !checked);
			CHECK(strstr(what, "malformed SAMPLE record") != NULL);
		}
		if (nd != (c[i].ok ? 0u : 1u))
			fprintf(stderr, "  case '%s': %zu damage (%s), %d samples\n", c[i].what, nd,
				what, samples);
	}
	/* A reader that does not know the block (1.3: it ignores the flag and
	 * the bytes after the chain) reads the rest of the sample: here, the
	 * same record with the flag cleared decodes with its chain. */
	size_t len = raw_ustack(b, 3, 16, 16, 8 + 16 + 16);
	memmove(b + 48 + 16, b + 48, 24 + 16 + 16);   /* make room for a chain of 1 */
	put16(b + 2, DP_SAMPLE_F_CHAIN);
	put32(b + 48, 1);
	put64(b + 56, 0x401234);
	put32(b + 4, (uint32_t)(len = align8((uint32_t)(len + 8))));
	char what[128];
	int samples, regs;
	CHECK(read_raw_sample(b, len, what, sizeof(what), &samples, &regs) == 0 && samples == 3 &&
	      regs == 0);
	put16(b + 2, DP_SAMPLE_F_CHAIN | DP_SAMPLE_F_USTACK);  /* control: 1.4 reads the block */
	CHECK(read_raw_sample(b, len, what, sizeof(what), &samples, &regs) == 0 && regs == 1);
}

/* Samples with a chain and nothing else (the reader's inline path for
 * -g recordings) are checked as the general path checks them: a chain
 * past the record or over the limit, or a record too short for the
 * chain's count, is damage; the controls read. */
static void chain_malformed(void)
{
	static uint8_t b[48 + 8 + 8 * (DP_MAX_CALLCHAIN + 2)];
	struct { const char *what; uint32_t nr; size_t frames; bool ok; } c[] = {
		{ "control: 3 frames", 3, 3, true },
		{ "control: no frames", 0, 0, true },
		{ "control: the maximum", DP_MAX_CALLCHAIN, DP_MAX_CALLCHAIN, true },
		{ "count past the record", 4, 3, false },
		{ "count over the limit", DP_MAX_CALLCHAIN + 1, DP_MAX_CALLCHAIN + 1, false },
		{ "no room for the count", 0, (size_t)-1, false },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(b, 0, sizeof(b));
		put16(b, DP_REC_SAMPLE);
		put16(b + 2, DP_SAMPLE_F_CHAIN);
		put64(b + 16, 0x401000);
		size_t len = 48;
		if (c[i].frames != (size_t)-1) {
			put32(b + 48, c[i].nr);
			for (size_t k = 0; k < c[i].frames; k++)
				put64(b + 56 + 8 * k, 0x401000 + k);
			len = 56 + 8 * c[i].frames;
		}
		put32(b + 4, (uint32_t)len);
		char what[128];
		int samples, regs;
		size_t nd = read_raw_sample(b, len, what, sizeof(what), &samples, &regs);
		if (c[i].ok) {
			CHECK(nd == 0 && samples == 3);
		} else {
			CHECK(nd == 1 && samples == 2);
			CHECK(strstr(what, "malformed SAMPLE record") != NULL);
		}
		if (nd != (c[i].ok ? 0u : 1u))
			fprintf(stderr, "  case '%s': %zu damage (%s), %d samples\n", c[i].what, nd, what,
				samples);
	}
}

/* DP_READ_NO_CHAINS: every sample comes without its chain, on the inline
 * path (chain only) and the general one (chain and asid), and says it had
 * one; a sample without a chain says it had none; a read without the flag
 * gives the chains. Control: the same file read without the flag. */
static void no_chains(void)
{
	char *path = tmpfile_path("nochains.data");
	struct dp_writer *w = open_writer(path, 4096, 0);
	uint64_t chain[3] = { 0xffffffff81000000ull, 0x401000, 0x401100 };
	struct dp_sample s[3] = {
		{ .ip = 1, .nr_callchain = 3, .callchain = chain },
		{ .ip = 2, .nr_callchain = 3, .callchain = chain, .has_asid = true, .asid = 7 },
		{ .ip = 3 },
	};
	for (int i = 0; i < 3; i++)
		CHECK(dp_write_sample(w, 0, &s[i]) == 0);
	CHECK(dp_writer_finish(w) == 0);
	for (int flag = 0; flag < 2; flag++) {
		int err = 0;
		struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
		CHECK(r != NULL);
		if (!r)
			continue;
		dp_reader_set_flags(r, flag ? DP_READ_NO_CHAINS : 0);
		struct dp_record rec;
		int n = 0;
		while (dp_reader_next(r, &rec) == 1) {
			if (rec.type != DP_REC_SAMPLE || n >= 3)
				continue;
			const struct dp_sample *a = &rec.u.sample, *b = &s[n++];
			CHECK(a->ip == b->ip && a->has_asid == b->has_asid);
			if (flag) {
				CHECK(a->nr_callchain == 0 && a->callchain == NULL);
				CHECK(a->chain_omitted == (b->nr_callchain != 0));
			} else {
				CHECK(a->nr_callchain == b->nr_callchain && !a->chain_omitted);
				CHECK(!b->nr_callchain || !memcmp(a->callchain, chain, sizeof(chain)));
			}
		}
		CHECK(n == 3);
		const struct dp_damage *d;
		CHECK(dp_reader_damage(r, &d) == 0);
		dp_reader_free(r);
	}
	free(path);
}

/* A file of user-stack samples cut at many places reads a prefix, never
 * crashes, and reports the cut. */
static void ustack_cuts(void)
{
	char *path = tmpfile_path("us-cut.data");
	struct dp_writer *w = open_writer(path, 8192, 0);
	for (int i = 0; i < 6; i++) {
		struct dp_sample s = ustack_sample(0xff0fff, 8192, 4096 + 512 * (uint32_t)i);
		CHECK(dp_write_sample(w, 0, &s) == 0);
	}
	CHECK(dp_writer_finish(w) == 0);
	size_t len = 0;
	uint8_t *b = NULL;
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (f) {
		b = xmalloc(1 << 16);
		len = fread(b, 1, 1 << 16, f);
		fclose(f);
	}
	unsigned whole = 0, cuts = 0;
	for (size_t cut = 0; cut <= len; cut += cut < len && len - cut < 64 ? 1 : 61) {
		int err;
		struct dp_reader *r = dp_reader_open_mem(b, cut, &err, NULL, 0);
		struct dp_record rec;
		int n = 0;
		while (r && dp_reader_next(r, &rec) > 0)
			if (rec.type == DP_REC_SAMPLE && rec.u.sample.has_uregs)
				n += rec.u.sample.ustack_len >= 4096 && rec.u.sample.ustack[100] == (uint8_t)701;
		const struct dp_damage *d;
		whole += r && n == 6 && dp_reader_damage(r, &d) == 0;
		cuts += r && n < 6 && dp_reader_damage(r, &d) > 0;
		dp_reader_free(r);
	}
	CHECK_EQ_U64(whole, 1);  /* only the whole file */
	CHECK(cuts > 100);
	free(b);
	unlink(path);
	free(path);
}

/* ---- user stacks in delta form (1.5) ------------------------------- */

/* A stream of stacks as a recorder sees them: threads in two domains
 * whose sp moves by a few words, whose outer bytes mostly stay and now
 * and then change a word, some cut at their size, one thread without sp
 * among its registers, one with an empty stack. Kept to compare. */
#define DS_N 600
#define DS_COPY (1ull << 40)   /* time of the raw copies */
struct ds_sample {
	struct dp_sample s;
	uint32_t domain;
	uint64_t regs[24];
	uint8_t *stack;
};
static struct ds_sample ds[DS_N];

static void ds_make(void)
{
	enum { TH = 5 };
	static uint8_t img[TH][16384];  /* each thread's stack memory, by address */
	uint64_t top[TH];
	for (int t = 0; t < TH; t++) {
		top[t] = 0x7ffd00000000ull + 0x100000ull * (uint64_t)t + 16384;
		for (size_t i = 0; i < sizeof(img[t]); i++)
			img[t][i] = (uint8_t)rnd();
	}
	for (int i = 0; i < DS_N; i++) {
		int t = (int)(rnd() % (2 * TH - 1)) / 2;  /* thread 4 half as often */
		struct ds_sample *e = &ds[i];
		free(e->stack);
		/* sp: 1-12 KiB below the top, moving by up to 256 bytes */
		static uint32_t dep[TH];
		if (!dep[t])
			dep[t] = 4096;
		dep[t] += 8 * (uint32_t)(rnd() % 65) - 256;
		dep[t] = dep[t] < 1024 ? 1024 : dep[t] > 12288 ? 12288 : dep[t];
		uint32_t depth = dep[t];
		uint64_t sp = top[t] - depth;
		/* the innermost 256 bytes change every sample, a word
		 * further out every eighth */
		for (uint32_t k = 0; k < 256 && k < depth; k++)
			img[t][16384 - depth + k] = (uint8_t)rnd();
		if (rnd() % 8 == 0)
			img[t][16384 - 8 - 8 * (rnd() % (depth / 8))] ^= 0x5a;
		uint32_t size = 8192, len = depth < size ? depth : size;
		if (t == 3 && rnd() % 3 == 0)
			len = 0;
		e->stack = xmalloc(len ? len : 1);
		memcpy(e->stack, &img[t][16384 - depth], len);
		for (int r = 0; r < 24; r++)
			e->regs[r] = 0x1000u * (uint64_t)(r + 1);
		uint64_t mask = t == 4 ? 0x100 : 0xff0fff;  /* thread 4: no sp */
		/* sp is bit 7: the 8th value of 0xff0fff */
		if (mask == 0xff0fff)
			e->regs[7] = sp;
		e->domain = t == 2 ? 1 : 0;
		/* every other sample with a (kernel) chain as well, as record
		 * --call-graph dwarf -a writes them: the reader's fast path for
		 * chain-only samples must leave these to the general one */
		static const uint64_t chain[3] = { 0xffffffff81000100ull, 0xffffffff81000200ull, 0x401000 };
		e->s = (struct dp_sample){ .time = (uint64_t)i, .ip = 0x401000 + (uint64_t)i,
					   .nr_callchain = i % 2 ? 3 : 0, .callchain = chain,
					   .pid = 100 + (uint32_t)t, .tid = 100 + (uint32_t)t % 4,
					   .mode = DP_MODE_USER, .has_uregs = true,
					   .uregs_abi = DP_UREGS_ABI_64, .uregs_mask = mask,
					   .uregs = e->regs, .ustack_size = size, .ustack_len = len,
					   .ustack = e->stack };
	}
}

struct ds_read {
	size_t samples, seen, copies, same, ref_bytes, no_raw, damage;
	uint64_t file_bytes, stack_bytes;
};

/* Read a file of the ds stream and compare every sample with ds[]. */
static void ds_read(const char *path, unsigned threads, struct ds_read *o)
{
	memset(o, 0, sizeof(*o));
	struct stat st;
	o->file_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	int err;
	struct dp_reader *r = dp_reader_open(path, &err, NULL, 0);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(dp_reader_set_threads(r, threads) == 0);
	struct dp_record rec;
	while (dp_reader_next(r, &rec) > 0) {
		if (rec.type != DP_REC_SAMPLE)
			continue;
		const struct dp_sample *a = &rec.u.sample;
		o->samples++;
		if (a->time & DS_COPY) {
			o->copies++;
			continue;
		}
		size_t i = o->seen++;
		if (i >= DS_N)
			continue;
		const struct dp_sample *b = &ds[i].s;
		o->same += a->time == b->time && rec.domain == ds[i].domain && a->tid == b->tid &&
			   a->has_uregs && a->uregs_mask == b->uregs_mask &&
			   !memcmp(a->uregs, b->uregs, 8 * dp_uregs_count(b->uregs_mask)) &&
			   a->ustack_size == b->ustack_size && a->ustack_len == b->ustack_len &&
			   (!b->ustack_len || !memcmp(a->ustack, b->ustack, b->ustack_len)) &&
			   a->nr_callchain == b->nr_callchain &&
			   (!b->nr_callchain || !memcmp(a->callchain, b->callchain, 8 * b->nr_callchain));
		CHECK(a->ustack_ref <= a->ustack_len);
		o->ref_bytes += a->ustack_ref;
		o->stack_bytes += a->ustack_len;
		o->no_raw += rec.raw == NULL;
		CHECK((rec.raw == NULL) == (a->ustack_ref != 0));
	}
	const struct dp_damage *d;
	o->damage = dp_reader_damage(r, &d);
	dp_reader_free(r);
}

static void ds_write(const char *path, bool delta, size_t chunk, int zlevel)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct dp_header h;
	char *argv[] = { "domprof", "test" };
	dp_header_fill_local(&h, 2, argv);
	struct dp_writer_opts o = { .chunk_bytes = chunk, .zstd_level = zlevel, .ustack_delta = delta };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	CHECK(w != NULL);
	for (int i = 0; i < DS_N; i++) {
		CHECK(dp_write_sample(w, ds[i].domain, &ds[i].s) == 0);
		/* a sample of another thread copied raw (whole): the writer
		 * must not take it for anyone's previous stack */
		if (i % 97 == 5) {
			uint8_t b[16384];
			struct dp_sample c = ds[i].s;
			c.time |= DS_COPY;
			size_t n = dp_sample_encode(&c, b, sizeof(b));
			CHECK(n > 0 && n <= sizeof(b) && dp_record_check(b, n));
			CHECK(dp_write_raw(w, ds[i].domain, b, n) == 0);
		}
	}
	CHECK(dp_writer_finish(w) == 0);
}

/*
 * The same stream written whole (1.4 encoding) and in delta form reads
 * back the same, sample for sample and byte for byte, with one reader
 * thread and with three, at chunk sizes that reset the threads' table
 * often and rarely, raw and compressed. The delta form must be in use:
 * most stack bytes are references and the file is smaller; the control,
 * the whole encoding, has no reference and no raw-less sample (so the
 * "in use" checks fail on it).
 */
static void ustack_delta_same(void)
{
	ds_make();
	char *pw = tmpfile_path("ds-whole.data"), *pd = tmpfile_path("ds-delta.data");
	static const size_t chunks[] = { 4096, 1u << 20 };
	for (int c = 0; c < 2; c++)
		for (int z = 0; z < 2; z++) {
			ds_write(pw, false, chunks[c], z);
			ds_write(pd, true, chunks[c], z);
			struct ds_read w, d, d3;
			ds_read(pw, 1, &w);
			ds_read(pd, 1, &d);
			ds_read(pd, 3, &d3);
			size_t want = DS_N + (DS_N + 91) / 97;  /* with the raw copies */
			CHECK_EQ_U64(w.samples, want);
			CHECK_EQ_U64(d.samples, want);
			CHECK_EQ_U64(d.copies, want - DS_N);
			CHECK_EQ_U64(w.same, DS_N);
			CHECK_EQ_U64(d.same, DS_N);
			CHECK_EQ_U64(d3.same, DS_N);
			CHECK_EQ_U64(d3.ref_bytes, d.ref_bytes);
			CHECK(w.damage == 0 && d.damage == 0 && d3.damage == 0);
			/* in use (the control: the whole encoding); in chunks
			 * of 4 KiB most stacks are their thread's first */
			CHECK(w.ref_bytes == 0 && w.no_raw == 0);
			if (chunks[c] > 4096) {
				if (!(d.ref_bytes > d.stack_bytes / 2 && d.no_raw > DS_N / 2))
					fprintf(stderr, "delta: %zu of %" PRIu64 " bytes referenced, %zu samples\n",
						d.ref_bytes, d.stack_bytes, d.no_raw);
				CHECK(d.ref_bytes > d.stack_bytes / 2 && d.no_raw > DS_N / 2);
				/* stored bytes: half when raw, fewer compressed */
				if (!(d.file_bytes < (z ? w.file_bytes : w.file_bytes / 2)))
					fprintf(stderr, "zstd %d: %" PRIu64 " bytes in delta form, %" PRIu64 " whole\n",
						z, d.file_bytes, w.file_bytes);
				CHECK(d.file_bytes < (z ? w.file_bytes : w.file_bytes / 2));
			}
		}
	unlink(pw);
	unlink(pd);
	free(pw);
	free(pd);
}

/* Find the idx-th SAMPLE with a user block in an uncompressed file of
 * one chunk; returns its offset (0: none). */
static size_t find_sample(const uint8_t *b, size_t len, int idx, size_t *chunk)
{
	size_t pos = align8(get32(b + 16));
	*chunk = pos;
	size_t q = pos + DP_CHUNK_HDR, end = pos + DP_CHUNK_HDR + get32(b + pos + 8);
	for (int k = 0; q + 8 <= end && q + get32(b + q + 4) <= len; q += get32(b + q + 4)) {
		if (get32(b + q + 4) < 8)
			break;
		if (get16(b + q) == DP_REC_SAMPLE &&
		    (get16(b + q + 2) & (DP_SAMPLE_F_USTACK | DP_SAMPLE_F_USTACK_DELTA)) && k++ == idx)
			return q;
	}
	return 0;
}

static void fix_crc(uint8_t *b, size_t chunk)
{
	put32(b + chunk + 20, crc32c(0, b + chunk + DP_CHUNK_HDR, get32(b + chunk + 8)));
	put32(b + chunk + 28, crc32c(0, b + chunk, 28));
}

/* Read bytes; the stack length of the second sample (the delta one)
 * and the damage count with the first damage's text. */
static void read_second(const uint8_t *b, size_t len, uint32_t *slen, uint32_t *ref, size_t *nd,
			char *what, size_t wl)
{
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, NULL, 0);
	CHECK(r != NULL);
	*slen = *ref = UINT32_MAX;
	struct dp_record rec;
	int k = 0;
	while (r && dp_reader_next(r, &rec) > 0)
		if (rec.type == DP_REC_SAMPLE && rec.u.sample.has_uregs && k++ == 1) {
			*slen = rec.u.sample.ustack_len;
			*ref = rec.u.sample.ustack_ref;
			/* every byte readable (ASan) */
			volatile uint8_t x = 0;
			for (uint32_t i = 0; i < rec.u.sample.ustack_len; i++)
				x ^= rec.u.sample.ustack[i];
			(void)x;
		}
	const struct dp_damage *d;
	*nd = r ? dp_reader_damage(r, &d) : 99;
	snprintf(what, wl, "%s", *nd && r ? d[0].what : "");
	dp_reader_free(r);
}

/*
 * Hostile delta samples: a reference to a stack the chunk does not hold
 * (the thread's first stack given to another thread), a run past the
 * previous stack, an sp moved so the run leaves it, a head or run past
 * the stack, both forms' flags at once, a delta sample without sp. The
 * first three cut the stack at its literal head and are counted as
 * damage, the others are malformed records; none crashes (ASan/UBSan).
 * dp_record_check and dp_write_raw refuse a delta record. Control: the
 * file unchanged reads the whole stack, no damage.
 */
static void ustack_delta_hostile(void)
{
	char *path = tmpfile_path("ds-bad.data");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct dp_header h;
	char *argv[] = { "domprof", "test" };
	dp_header_fill_local(&h, 2, argv);
	struct dp_writer_opts o = { .ustack_delta = true };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	CHECK(w != NULL);
	struct dp_sample s1 = ustack_sample(0xff0fff, 8192, 4096), s2;
	ustack_regs[7] = 0x7ffd0000f000ull;                 /* sp */
	CHECK(dp_write_sample(w, 0, &s1) == 0);
	ustack_regs[7] -= 64;                               /* 64 bytes deeper */
	memmove(ustack_bytes + 64, ustack_bytes, 4096);
	memset(ustack_bytes, 0xee, 64);
	s2 = s1;
	s2.ustack_len = 4096 + 64;
	static uint8_t want[4160];
	memcpy(want, ustack_bytes, sizeof(want));
	CHECK(dp_write_sample(w, 0, &s2) == 0);
	CHECK(dp_writer_finish(w) == 0);
	size_t len;
	uint8_t *orig = slurp(path, &len), *b = xmalloc(len);
	size_t chunk, q = find_sample(orig, len, 1, &chunk);
	CHECK(q > 0 && (get16(orig + q + 2) & DP_SAMPLE_F_USTACK_DELTA));
	size_t blk = q + 48, hr = blk + DP_USTACK_FIXED + 8 * 20;  /* head, run */
	uint32_t head = get32(orig + hr), run = get32(orig + hr + 4);
	CHECK(head == 64 && run == 4096);
	char what[160];
	uint32_t slen, ref;
	size_t nd;
	/* control */
	read_second(orig, len, &slen, &ref, &nd, what, sizeof(what));
	CHECK(slen == 4160 && ref == 4096 && nd == 0);
	CHECK(dp_record_check(orig + q, get32(orig + q + 4)) == false);
	CHECK(dp_record_check(orig + find_sample(orig, len, 0, &chunk),
			      get32(orig + find_sample(orig, len, 0, &chunk) + 4)));
	{
		char *p2 = tmpfile_path("ds-raw.data");
		struct dp_writer *w2 = open_writer(p2, 0, 0);
		CHECK(dp_write_raw(w2, 0, orig + q, get32(orig + q + 4)) == -EINVAL);
		CHECK(dp_writer_finish(w2) == 0);
		unlink(p2);
		free(p2);
	}
	/* the stack it gave is the one written */
	{
		int e2;
		struct dp_reader *r = dp_reader_open_mem(orig, len, &e2, NULL, 0);
		struct dp_record rec;
		int k = 0;
		bool same = false;
		while (r && dp_reader_next(r, &rec) > 0)
			if (rec.type == DP_REC_SAMPLE && k++ == 1)
				same = rec.u.sample.ustack_len == 4160 &&
				       !memcmp(rec.u.sample.ustack, want, 4160);
		CHECK(same);
		dp_reader_free(r);
	}
	size_t q0 = find_sample(orig, len, 0, &chunk);
	/* cut: the stack ends at its head (64 bytes; 0 where head is set 0) */
	struct { const char *what; size_t at; uint64_t val; int width; size_t at2; uint64_t val2; bool cut; } c[] = {
		{ "first stack of another thread", q0 + 36, 55, 4, 0, 0, true },
		{ "run starting before the previous stack", hr, 0, 4, hr + 4, 4160, true },
		{ "sp moved", blk + DP_USTACK_FIXED + 8 * 7, 0x7ffd0000f000ull - 64 + 4096, 8, 0, 0, true },
		{ "head past the stack", hr, 4161, 4, 0, 0, false },
		{ "run past the stack", hr + 4, 4097, 4, 0, 0, false },
		{ "both flags", q + 2, DP_SAMPLE_F_USTACK | DP_SAMPLE_F_USTACK_DELTA, 2, 0, 0, false },
		{ "no sp", blk, 0xff0f7f, 8, 0, 0, false },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memcpy(b, orig, len);
		for (int k = 0; k < 2; k++) {
			size_t at = k ? c[i].at2 : c[i].at;
			uint64_t v = k ? c[i].val2 : c[i].val;
			if (!at)
				continue;
			if (c[i].width == 2)
				put16(b + at, (uint16_t)v);
			else if (c[i].width == 8 && !k)
				put64(b + at, v);
			else
				put32(b + at, (uint32_t)v);
		}
		fix_crc(b, chunk);
		read_second(b, len, &slen, &ref, &nd, what, sizeof(what));
		if (c[i].cut) {
			/* cut at its own head, counted */
			uint32_t cut = c[i].at == hr ? 0 : 64;
			if (!(slen == cut && ref == 0 && nd == 1 && strstr(what, "missing earlier user stack")))
				fprintf(stderr, "case '%s': len %u ref %u damage %zu '%s'\n", c[i].what,
					slen, ref, nd, what);
			CHECK(slen == cut && ref == 0 && nd == 1);
			CHECK(strstr(what, "missing earlier user stack") != NULL);
		} else {
			/* malformed: skipped as damage (the second user sample
			 * seen is then none) */
			if (!(nd == 1 && strstr(what, "malformed SAMPLE")))
				fprintf(stderr, "case '%s': damage %zu '%s'\n", c[i].what, nd, what);
			CHECK(nd == 1 && strstr(what, "malformed SAMPLE") != NULL);
		}
	}
	free(b);
	free(orig);
	unlink(path);
	free(path);
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
	/* around the interleaved blocks' sizes (3 x 256, 3 x 8192 bytes),
	 * unaligned, and continued from a CRC */
	size_t big = 3 * 8192 * 2 + 3 * 256 * 3 + 64;
	uint8_t *b = malloc(big + 1);
	for (size_t i = 0; i < big + 1; i++)
		b[i] = (uint8_t)rnd();
	static const size_t lens[] = { 767, 768, 769, 775, 776, 1536, 24575, 24576, 24577,
				       24583, 24576 + 768, 49152 + 2304 + 63 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		CHECK(lens[i] <= big);
		CHECK_EQ_U64(crc32c(0, b + 1, lens[i]), crc32c_sw(0, b + 1, lens[i]));
		CHECK_EQ_U64(crc32c(0x12345678, b, lens[i]), crc32c_sw(0x12345678, b, lens[i]));
		size_t h = lens[i] / 3;
		CHECK_EQ_U64(crc32c(crc32c(0, b, h), b + h, lens[i] - h), crc32c_sw(0, b, lens[i]));
	}
	free(b);
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

/* ---- parallel decoding (dp_reader_set_threads) ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Everything a read returns, folded into one number: each record (type,
 * domain, chunk, bytes; a chain and a symtab's data as decoded), over two
 * passes (a rewind between), then the damage lines and completeness. */
static uint64_t read_digest(const uint8_t *b, size_t len, unsigned threads, size_t *nrec,
			    const char *path)
{
	int err;
	*nrec = 0;
	/* path: the same bytes from a file (mapped) */
	struct dp_reader *r = path ? dp_reader_open(path, &err, NULL, 0)
				   : dp_reader_open_mem(b, len, &err, NULL, 0);
	if (!r)
		return 1;
	CHECK(dp_reader_set_threads(r, threads) == 0);
	uint64_t h = 0xcbf29ce484222325ull;
	*nrec = 0;
	for (int pass = 0; pass < 2; pass++) {
		struct dp_record rec;
		while (dp_reader_next(r, &rec) > 0) {
			h = fnv(h, &rec.type, sizeof(rec.type));
			h = fnv(h, &rec.domain, sizeof(rec.domain));
			h = fnv(h, &rec.chunk_offset, sizeof(rec.chunk_offset));
			h = fnv(h, rec.raw, rec.raw_len);
			if (rec.type == DP_REC_SAMPLE)
				h = fnv(h, rec.u.sample.callchain, 8 * (size_t)rec.u.sample.nr_callchain);
			if (rec.type == DP_REC_SYMTAB && rec.u.symtab.data)
				h = fnv(h, rec.u.symtab.data, rec.u.symtab.size);
			++*nrec;
		}
		dp_reader_rewind(r);
	}
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	for (size_t i = 0; i < nd; i++) {
		h = fnv(h, d[i].what, strlen(d[i].what));
		h = fnv(h, &d[i].offset, sizeof(d[i].offset));
		h = fnv(h, &d[i].bytes_lost, sizeof(d[i].bytes_lost));
	}
	const char *inc = dp_reader_incomplete(r);
	h = fnv(h, inc ? inc : "-", strlen(inc ? inc : "-"));
	dp_reader_free(r);
	return h;
}

/* The same read on 1 and 3 threads; returns the 1-thread digest.
 * file: also from a file, on 1 and 2 threads. */
static uint64_t same_on_threads_f(const uint8_t *b, size_t len, bool file)
{
	size_t n1, n;
	uint64_t h1 = read_digest(b, len, 1, &n1, NULL);
	static const unsigned th[] = { 3 };
	for (size_t i = 0; i < sizeof(th) / sizeof(th[0]); i++) {
		CHECK_EQ_U64(read_digest(b, len, th[i], &n, NULL), h1);
		CHECK_EQ_U64(n, n1);
	}
	if (file) {
		char *path = tmpfile_path("threads-file.data");
		FILE *f = fopen(path, "wb");
		CHECK(f && fwrite(b, 1, len, f) == len);
		if (f)
			fclose(f);
		for (unsigned t = 1; t <= 2; t++) {
			CHECK_EQ_U64(read_digest(b, len, t, &n, path), h1);
			CHECK_EQ_U64(n, n1);
		}
		unlink(path);
		free(path);
	}
	return h1;
}

static uint64_t same_on_threads(const uint8_t *b, size_t len)
{
	return same_on_threads_f(b, len, false);
}

/* A sample's key as a counting reader sees it (DP_READ_GROUPS): its
 * domain, chunk and the fields a group keeps apart; tid and cpu when
 * `by` has DP_READ_GROUP_TID / _CPU. */
static uint64_t sample_key(const struct dp_record *rec, unsigned by)
{
	const struct dp_sample *s = &rec->u.sample;
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv(h, &rec->domain, sizeof(rec->domain));
	h = fnv(h, &rec->chunk_offset, sizeof(rec->chunk_offset));
	h = fnv(h, &s->ip, sizeof(s->ip));
	h = fnv(h, &s->pid, sizeof(s->pid));
	h = fnv(h, &s->mode, sizeof(s->mode));
	h = fnv(h, &s->event, sizeof(s->event));
	h = fnv(h, &s->has_asid, sizeof(s->has_asid));
	h = fnv(h, &s->asid, sizeof(s->asid));
	h = fnv(h, &s->chain_omitted, sizeof(s->chain_omitted));
	h = fnv(h, &s->nr_callchain, sizeof(s->nr_callchain));
	h = fnv(h, s->callchain, 8 * (size_t)s->nr_callchain);
	if (by & DP_READ_GROUP_TID)
		h = fnv(h, &s->tid, sizeof(s->tid));
	if (by & DP_READ_GROUP_CPU)
		h = fnv(h, &s->cpu, sizeof(s->cpu));
	return h;
}

/*
 * A read as a counter sees it, folded into one number: records other
 * than plain samples (no user stack) and domain switches (they show in
 * the keys' domains) in order, each stretch of plain
 * samples between them as the order-free sums of its samples' keys
 * (times weight) and periods, then the damage. flags: the reader's
 * (DP_READ_GROUPS or not, and the keys); key: the fields the sums keep
 * apart. *grouped: records of weight > 1 seen.
 */
static uint64_t counted_read(const uint8_t *b, size_t len, unsigned threads, unsigned flags,
			     unsigned key, uint64_t *samples, size_t *grouped)
{
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, NULL, 0);
	*samples = 0;
	*grouped = 0;
	if (!r)
		return 1;
	dp_reader_set_flags(r, flags);
	CHECK(dp_reader_set_threads(r, threads) == 0);
	uint64_t h = 0xcbf29ce484222325ull, ksum = 0, psum = 0, n = 0;
	struct dp_record rec;
	for (;;) {
		int got = dp_reader_next(r, &rec);
		bool plain = got > 0 && rec.type == DP_REC_SAMPLE && !rec.u.sample.has_uregs;
		/* a domain switch shows in the samples' keys after it */
		if (got > 0 && rec.type == DP_REC_DOMAIN_SWITCH)
			continue;
		if (!plain && n) {   /* a stretch ends */
			h = fnv(h, &ksum, sizeof(ksum));
			h = fnv(h, &psum, sizeof(psum));
			h = fnv(h, &n, sizeof(n));
			ksum = psum = n = 0;
		}
		if (got <= 0)
			break;
		if (plain) {
			ksum += sample_key(&rec, key) * rec.weight;
			psum += rec.u.sample.period;
			n += rec.weight;
			*samples += rec.weight;
			*grouped += rec.weight > 1;
			continue;
		}
		CHECK_EQ_U64(rec.weight, 1);
		if (rec.type == DP_REC_SAMPLE)
			*samples += 1;
		h = fnv(h, &rec.type, sizeof(rec.type));
		h = fnv(h, &rec.domain, sizeof(rec.domain));
		h = fnv(h, rec.raw, rec.raw_len);
	}
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	for (size_t i = 0; i < nd; i++)
		h = fnv(h, d[i].what, strlen(d[i].what));
	dp_reader_free(r);
	return h;
}

/* Groups count what a read sample by sample counts, for each choice of
 * keys, on 1 and 3 threads (workers make the digests there, or the
 * reader's thread when it gets to a chunk first). Returns whether the
 * reads grouped samples. every: all choices, else one. */
static bool groups_count_same(const uint8_t *b, size_t len, bool every)
{
	static const unsigned keys[] = { DP_READ_GROUP_TID | DP_READ_GROUP_CPU, 0,
					 DP_READ_GROUP_TID, DP_READ_GROUP_CPU };
	bool any = false;
	/* !every: the first choice of keys, with chains (damaged copies) */
	for (size_t k = 0; k < (every ? sizeof(keys) / sizeof(keys[0]) : 1); k++) {
		for (unsigned nc = 0; nc <= (every ? DP_READ_NO_CHAINS : 0); nc += DP_READ_NO_CHAINS) {
			uint64_t n1, n3;
			size_t g1, g3;
			uint64_t h1 = counted_read(b, len, 1, nc, keys[k], &n1, &g1);
			CHECK_EQ_U64(g1, 0);
			for (unsigned t = 1; t <= 3; t += 2) {
				uint64_t h = counted_read(b, len, t, nc | DP_READ_GROUPS | keys[k],
							  keys[k], &n3, &g3);
				CHECK_EQ_U64(h, h1);
				CHECK_EQ_U64(n3, n1);
				any |= g3 > 0;
			}
		}
	}
	return any;
}

static void threads_same(int zlevel)
{
	char *path = tmpfile_path("threads.data");
	struct dp_writer *w = open_writer(path, 2048, zlevel);
	struct dp_event ev = { .id = 0, .name = "cpu-clock", .period = 1000, .freq = true };
	dp_write_event(w, &ev);
	uint64_t chain[5] = { 1, 2, 3, 4, 5 };
	static const uint8_t blob[] = "ffffffff81000000 T _stext\n";
	for (int i = 0; i < 1500; i++) {
		/* ip: from a few, so that a run's samples repeat (groups) */
		struct dp_sample s = { .ip = 0x1000 + rnd() % 4, .pid = (uint32_t)(i % 5),
				       .tid = (uint32_t)(i % 3), .cpu = (uint32_t)(i % 2),
				       .time = (uint64_t)i, .period = (uint64_t)i * 1000003,
				       .nr_callchain = (uint32_t)(i % 6 < 3 ? 0 : 5), .callchain = chain,
				       .has_asid = i % 7 == 0, .asid = (uint64_t)(i % 14) };
		CHECK(dp_write_sample(w, (uint32_t)(i % 97 == 0), &s) == 0);
		if (i % 200 == 0) {
			struct dp_mmap m = { .pid = 1, .start = (uint64_t)i << 12, .len = 4096,
					     .path = "/bin/x" };
			CHECK(dp_write_mmap(w, 0, &m) == 0);
			struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
						.data = blob, .size = sizeof(blob) - 1 };
			CHECK(dp_write_symtab(w, 0, &st) == 0);
		}
	}
	size_t len;
	struct chunks c;
	uint8_t *b = finish_split(w, path, 1500, &len, &c);
	CHECK(c.n >= 20);

	uint64_t intact = same_on_threads_f(b, len, true);
	CHECK(groups_count_same(b, len, true));
	{	/* control: the same keys apart, groups that keep no tid */
		uint64_t n1, n3;
		size_t g1, g3;
		uint64_t h1 = counted_read(b, len, 1, 0, DP_READ_GROUP_TID, &n1, &g1);
		CHECK(counted_read(b, len, 1, DP_READ_GROUPS, DP_READ_GROUP_TID, &n3, &g3) != h1);
		CHECK(counted_read(b, len, 3, DP_READ_GROUPS, DP_READ_GROUP_TID, &n3, &g3) != h1);
	}
	/* a byte changed every 2999 bytes (every 661st with zstd), in turn:
	 * headers, payloads, padding (few: the test also runs under valgrind,
	 * where each read's threads are slow to start) */
	size_t step = zlevel ? 661 : 2999;
	uint8_t *f = xmalloc(len);
	size_t changed = 0, tried = 0;
	for (size_t i = 0; i < len; i += step) {
		memcpy(f, b, len);
		f[i] ^= 0x5a;
		tried++;
		changed += same_on_threads(f, len) != intact;  /* control: damage shows */
		if (tried % 4 == 0)
			(void)groups_count_same(f, len, false);
	}
	CHECK(changed * 10 >= tried * 8);
	/* a bad CRC, from a file as well */
	memcpy(f, b, len);
	f[c.off[6] + DP_CHUNK_HDR + 5] ^= 0x21;
	CHECK(same_on_threads_f(f, len, true) != intact);
	/* cut at chunk boundaries and inside chunks */
	for (size_t i = 1; i < c.n; i += 7) {
		CHECK(same_on_threads(b, c.off[i]) != intact);
		CHECK(same_on_threads(b, c.off[i] + 40) != intact);
	}
	/* chunks repeated, missing, out of order (CRCs all valid) */
	int idx[80] = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < c.n; i++) {
		idx[n++] = (int)i;
		if (i == 3 || i == 9)
			idx[n++] = (int)i;             /* repeated */
	}
	size_t rl;
	uint8_t *rb = rebuild(b, &c, idx, n, &rl);
	CHECK(same_on_threads_f(rb, rl, true) != intact);
	free(rb);
	n = 0;
	for (size_t i = 0; i < c.n; i++)
		if (i != 5)
			idx[n++] = (int)(i == 7 ? 8 : i == 8 ? 7 : i);  /* 5 missing, 7 and 8 swapped */
	rb = rebuild(b, &c, idx, n, &rl);
	CHECK(same_on_threads_f(rb, rl, true) != intact);
	free(rb);
	if (zlevel) {
		/* a frame that does not decompress, under a valid CRC */
		memcpy(f, b, len);
		size_t o = c.off[4];
		uint32_t stored = get32(f + o + 8);
		CHECK(get32(f + o + 4) & DP_CHUNK_ZSTD);
		memset(f + o + DP_CHUNK_HDR, 0, 4);  /* the frame's magic */
		put32(f + o + 20, crc32c(0, f + o + DP_CHUNK_HDR, stored));
		put32(f + o + 28, crc32c(0, f + o, 28));
		struct readout ro;
		read_out(f, len, &ro);
		CHECK(strstr(ro.damage, "does not decompress") != NULL);
		CHECK(same_on_threads_f(f, len, true) != intact);
	}
	free(f);
	free(b);
	unlink(path);
	free(path);
}

/* ---- counts parts (1.6) ------------------------------------------- */

/* The file b with chunk i's counts part (decompressed: *part, n bytes)
 * replaced by part[0..n), recompressed, its CRCs made valid again; a
 * new buffer of *outlen bytes. */
static uint8_t *recount(const uint8_t *b, size_t len, const struct chunks *c, size_t i, const uint8_t *part,
			size_t n, size_t *outlen)
{
	size_t o = c->off[i];
	uint32_t stored = get32(b + o + 8);
	size_t m = ZSTD_findFrameCompressedSize(b + o + DP_CHUNK_HDR, stored);
	CHECK(!ZSTD_isError(m));
	size_t bound = ZSTD_compressBound(n);
	uint8_t *z = xmalloc(bound);
	size_t zl = ZSTD_compress(z, bound, part, n, 3);
	size_t ns = m + 16 + zl, nlen = o + DP_CHUNK_HDR + align8((uint32_t)ns);
	size_t rest = len - (o + c->len[i]);
	uint8_t *f = xcalloc(1, nlen + rest);
	memcpy(f, b, o + DP_CHUNK_HDR + m);
	uint8_t *sk = f + o + DP_CHUNK_HDR + m;
	put32(sk, CNT_SKIPPABLE);
	put32(sk + 4, (uint32_t)(8 + zl));
	put32(sk + 8, (uint32_t)n);
	memcpy(sk + 16, z, zl);
	put32(f + o + 8, (uint32_t)ns);
	fix_crc(f, o);
	memcpy(f + nlen, b + o + c->len[i], rest);
	free(z);
	*outlen = nlen + rest;
	return f;
}

/* A read of b[0..len) with DP_READ_VERIFY_COUNTS (and DP_READ_GROUPS
 * when groups) on t threads: its damage count, the first one's text in
 * what[0..wl). */
static size_t verify_damage(const uint8_t *b, size_t len, unsigned t, bool groups, char *what, size_t wl)
{
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, len, &err, NULL, 0);
	CHECK(r != NULL);
	if (!r)
		return 0;
	dp_reader_set_flags(r, DP_READ_VERIFY_COUNTS | (groups ? DP_READ_GROUPS : 0));
	CHECK(dp_reader_set_threads(r, t) == 0);
	struct dp_record rec;
	while (dp_reader_next(r, &rec) > 0)
		;
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	snprintf(what, wl, "%s", nd ? d[0].what : "");
	dp_reader_free(r);
	return nd;
}

/*
 * A recording whose samples repeat gets counts parts (chunk flag 2);
 * counting reads of it (taking them, on 1 and 3 threads, every choice
 * of keys) count what reads sample by sample count, and so do reads
 * with DOMPROF_CHUNK_COUNTS=0 and reads that ask for no groups (the
 * records' frame, as a reader before 1.6 reads it). Forged parts under
 * valid CRCs: a count that does not add up to the chunk's records, a
 * group whose record has a user stack, a wrong record length, a part
 * cut short: each refused (the read is the same as sample by sample);
 * control that must fail: a group's period changed, which holds up, is
 * what the counting read counts. A verifying read
 * (DP_READ_VERIFY_COUNTS) finds no damage in the intact file, calls each
 * refused part damage ("does not hold up"), and each part that holds up
 * but disagrees with its records (that period; a group's ip moved; a
 * sample moved from one group to another; a record of its own changed)
 * damage naming the item and what differs, and reads the records: with
 * groups, on 1 and 3 threads, it counts what the records count.
 */
static void counts_parts(void)
{
	char *path = tmpfile_path("counts.data");
	struct dp_writer *w = open_writer(path, 8192, 3);
	struct dp_event ev = { .id = 0, .name = "cpu-clock", .period = 1000, .freq = true };
	dp_write_event(w, &ev);
	uint64_t chain[3] = { 7, 8, 9 };
	for (int i = 0; i < 3000; i++) {
		struct dp_sample s = { .ip = 0x1000 + (uint64_t)(i % 3 == 0), .pid = 4, .tid = 4 + (uint32_t)(i % 2),
				       .cpu = (uint32_t)(i % 4 == 0), .time = (uint64_t)i, .period = 1000 + (uint64_t)i,
				       .nr_callchain = i % 5 == 0 ? 3 : 0, .callchain = chain };
		CHECK(dp_write_sample(w, (uint32_t)(i / 500 % 2), &s) == 0);
		if (i % 700 == 0) {
			struct dp_mmap mm = { .pid = 4, .start = 0x1000, .len = 4096, .path = "/bin/x" };
			CHECK(dp_write_mmap(w, 0, &mm) == 0);
		}
	}
	size_t len;
	struct chunks c;
	uint8_t *b = finish_split(w, path, 3000, &len, &c);
	size_t with = 0, first = 0;
	for (size_t i = 0; i < c.n; i++)
		if (get32(b + c.off[i] + 4) & DP_CHUNK_COUNTS)
			first = with++ ? first : i;
	CHECK(with >= 10);
	CHECK(groups_count_same(b, len, true));
	uint64_t n1, n2;
	size_t g1, g2;
	(void)counted_read(b, len, 1, 0, DP_READ_GROUP_TID | DP_READ_GROUP_CPU, &n1, &g1);
	CHECK_EQ_U64(n1, 3000);
	setenv("DOMPROF_CHUNK_COUNTS", "0", 1);
	CHECK(groups_count_same(b, len, false));
	unsetenv("DOMPROF_CHUNK_COUNTS");

	/* the first part, decompressed */
	const uint8_t *pl = b + c.off[first] + DP_CHUNK_HDR, *z;
	size_t zl;
	uint32_t raw;
	CHECK(cnt_locate(pl, get32(b + c.off[first] + 8), get32(b + c.off[first] + 12), &z, &zl, &raw));
	uint8_t *part = xmalloc(raw), *mut = xmalloc(raw);
	CHECK_EQ_U64(ZSTD_decompress(part, raw, z, zl), raw);
	uint32_t nitems = get32(part + 4);
	size_t g = 0;   /* the first group's entry */
	while (g < nitems && !get32(part + CNT_HDR + CNT_ENT * g))
		g++;
	CHECK(g < nitems);
	/* its record: after the records of the entries before it; the
	 * next group's entry (gn), the first record of its own that is not
	 * a domain switch (its offset solo) */
	size_t roff = CNT_HDR + CNT_ENT * (size_t)nitems, at = roff, gn = 0, solo = 0;
	for (size_t k = 0; k < nitems; k++) {
		if (k < g)
			roff += get32(part + at + 4);
		if (k > g && !gn && get32(part + CNT_HDR + CNT_ENT * k))
			gn = k;
		if (!solo && !get32(part + CNT_HDR + CNT_ENT * k) && get16(part + at) != DP_REC_DOMAIN_SWITCH)
			solo = at;
		at += get32(part + at + 4);
	}
	CHECK(gn > g && get32(part + CNT_HDR + CNT_ENT * gn) > 1 && solo);   /* kinds 6, 7 */
	char what[sizeof(((struct dp_damage *)0)->what)], want[160];
	for (unsigned t = 1; t <= 3; t += 2) {
		CHECK_EQ_U64(verify_damage(b, len, t, true, what, sizeof(what)), 0);
		CHECK_STR(what, "");
	}
	for (int kind = 0; kind < 8; kind++) {
		memcpy(mut, part, raw);
		size_t mlen = raw;
		if (kind == 0)
			put32(mut + CNT_HDR + CNT_ENT * g, get32(mut + CNT_HDR + CNT_ENT * g) + 1);
		else if (kind == 1) {
			/* not plain, and its ip moved: taken, it would count elsewhere */
			put16(mut + roff + 2, get16(mut + roff + 2) | DP_SAMPLE_F_USTACK);
			put64(mut + roff + DP_REC_HDR + 8, get64(mut + roff + DP_REC_HDR + 8) + 0x100);
		}
		else if (kind == 2)
			put32(mut + roff + 4, get32(mut + roff + 4) + 8);
		else if (kind == 3)
			mlen = raw - 8;
		else if (kind == 4)
			put64(mut + CNT_HDR + CNT_ENT * g + 8, get64(mut + CNT_HDR + CNT_ENT * g + 8) + 1);
		else if (kind == 5)
			put64(mut + roff + DP_REC_HDR + 8, get64(mut + roff + DP_REC_HDR + 8) + 0x100);
		else if (kind == 6) {
			put32(mut + CNT_HDR + CNT_ENT * g, get32(mut + CNT_HDR + CNT_ENT * g) + 1);
			put32(mut + CNT_HDR + CNT_ENT * gn, get32(mut + CNT_HDR + CNT_ENT * gn) - 1);
		} else
			mut[solo + get32(mut + solo + 4) - 1] ^= 0x40;   /* its last byte */
		size_t flen;
		uint8_t *f = recount(b, len, &c, first, mut, mlen, &flen);
		/* sample by sample (the keys hold chunk offsets: this file's) */
		uint64_t fplain = counted_read(f, flen, 1, 0, DP_READ_GROUP_TID | DP_READ_GROUP_CPU, &n2, &g2);
		CHECK_EQ_U64(n2, 3000);
		for (unsigned t = 1; t <= 3; t += 2) {
			uint64_t h = counted_read(f, flen, t, DP_READ_GROUPS | DP_READ_GROUP_TID | DP_READ_GROUP_CPU,
						  DP_READ_GROUP_TID | DP_READ_GROUP_CPU, &n2, &g2);
			if (kind < 4)
				CHECK_EQ_U64(h, fplain);   /* refused: the records' frame */
			else
				CHECK(h != fplain);        /* control: the part is what counts */
			CHECK_EQ_U64(n2, 3000);
		}
		/* verifying: damage, and the records counted */
		uint32_t cg = get32(part + CNT_HDR + CNT_ENT * g);
		if (kind < 4)
			snprintf(want, sizeof(want), "counts part of chunk at offset %zu does not hold up", c.off[first]);
		else if (kind == 4)
			snprintf(want, sizeof(want), "item %zu/%u: %u samples, period sum differs", g, nitems, cg);
		else if (kind == 5)
			snprintf(want, sizeof(want), "item %zu/%u: %u samples, ip differs", g, nitems, cg);
		else if (kind == 6)
			snprintf(want, sizeof(want), "item %zu/%u: %u samples, %u in the records (+1 more)", g, nitems,
				 cg + 1, cg);
		else
			snprintf(want, sizeof(want), "record differs");
		uint64_t hrec = counted_read(f, flen, 1, DP_READ_VERIFY_COUNTS, DP_READ_GROUP_TID | DP_READ_GROUP_CPU,
					     &n2, &g2);
		for (unsigned t = 1; t <= 3; t += 2) {
			CHECK_EQ_U64(verify_damage(f, flen, t, true, what, sizeof(what)), 1);
			if (!strstr(what, want) || (kind >= 4 && !strstr(what, "disagrees with its records: item ")))
				fprintf(stderr, "counts_parts kind %d: \"%s\", want \"%s\"\n", kind, what, want);
			CHECK(strstr(what, want) != NULL);
			uint64_t h = counted_read(f, flen, t, DP_READ_VERIFY_COUNTS | DP_READ_GROUPS | DP_READ_GROUP_TID |
						  DP_READ_GROUP_CPU, DP_READ_GROUP_TID | DP_READ_GROUP_CPU, &n2, &g2);
			CHECK_EQ_U64(h, hrec);    /* the records win */
			CHECK_EQ_U64(n2, 3000);
		}
		free(f);
	}
	free(part);
	free(mut);
	free(b);
	unlink(path);
	free(path);
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
	sequence();
	stats_totals();
	old_minor0();
	counters_roundtrip(0);
	counters_roundtrip(1);
	counters_refused();
	counters_malformed();
	ustack_roundtrip(0);
	ustack_roundtrip(1);
	ustack_refused();
	ustack_malformed();
	chain_malformed();
	no_chains();
	ustack_cuts();
	ustack_delta_same();
	ustack_delta_hostile();
	threads_same(0);
	threads_same(3);
	counts_parts();
	enospc();
	rmdir(tmpdir);
	return unit_done();
}
