// SPDX-License-Identifier: MIT
/*
 * Unit test of the perf.data reader (src/format/perfdata.c) through
 * dp_reader, on files written by tests/unit/perfgen.h from perf's
 * documented format: what each perf record becomes (events and their
 * names, tasks, maps with build-ids, samples with their chains stripped
 * of context markers, lost counts, the time order inside a round), the
 * same records from the pipe form and from zstd-compressed records,
 * guest machines of perf kvm as domains (named, with their kallsyms),
 * what is skipped and said in one line; then hostile input: the file cut
 * at every byte and every bit flipped (never a crash, never more than
 * the file holds, a cut in the data is damage), a compression bomb, a
 * chain longer than the bound, sizes that point outside the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "perfgen.h"
#include "unit.h"

struct summary {
	size_t events, domains, tasks, mmaps, samples, lost_recs, symtabs, stats, other;
	uint64_t lost;
	int first_sample_at, first_mmap_at;  /* record index */
	char ev0[64], ev1[64];
	struct dp_sample s0;
	uint64_t s0_chain[4];
	uint8_t mmap_bid_len, mmap_bid0;
	size_t guest_samples;
	size_t unweighted;        /* samples whose weight is not 1 (a perf.data has no groups) */
	char guest_name[64];
	uint8_t guest_mode;
	size_t damage;
	char note[512];
};

/* One pass of r from where it is; returns the records read. */
static int summarize(struct dp_reader *r, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->first_sample_at = s->first_mmap_at = -1;
	struct dp_record rec;
	int i = 0;
	while (dp_reader_next(r, &rec) > 0 && i < 100000) {
		switch (rec.type) {
		case DP_REC_EVENT:
			snprintf(s->events ? s->ev1 : s->ev0, 64, "%s", rec.u.event.name);
			s->events++;
			break;
		case DP_REC_DOMAIN:
			s->domains++;
			if (rec.u.domain.id == 1)
				snprintf(s->guest_name, sizeof(s->guest_name), "%s", rec.u.domain.name);
			break;
		case DP_REC_TASK: s->tasks++; break;
		case DP_REC_MMAP:
			if (s->first_mmap_at < 0 && rec.u.mmap.pid == PG_PID) {
				s->first_mmap_at = i;
				s->mmap_bid_len = rec.u.mmap.buildid_len;
				s->mmap_bid0 = rec.u.mmap.buildid[0];
			}
			s->mmaps++;
			break;
		case DP_REC_SAMPLE:
			s->unweighted += rec.weight != 1;
			if (rec.domain == 1) {
				s->guest_samples++;
				s->guest_mode = rec.u.sample.mode;
				break;
			}
			if (s->first_sample_at < 0) {
				s->first_sample_at = i;
				s->s0 = rec.u.sample;
				for (uint32_t k = 0; k < rec.u.sample.nr_callchain && k < 4; k++)
					s->s0_chain[k] = rec.u.sample.callchain[k];
			}
			s->samples++;
			break;
		case DP_REC_LOST: s->lost_recs++; s->lost += rec.u.lost.count; break;
		case DP_REC_SYMTAB: s->symtabs++; break;
		case DP_REC_STATS: s->stats++; break;
		default: s->other++; break;
		}
		i++;
	}
	const struct dp_damage *d;
	s->damage = dp_reader_damage(r, &d);
	const char *note = dp_reader_note(r);
	snprintf(s->note, sizeof(s->note), "%s", note ? note : "");
	return i;
}

static int read_file(const uint8_t *b, size_t n, struct summary *s, const struct dp_perf_guest *g)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open_mem(b, n, &err, msg, sizeof(msg));
	if (!r) {
		memset(s, 0, sizeof(*s));
		return -1;
	}
	if (g)
		CHECK(dp_reader_perf_guest(r, g) == 0);
	int i = summarize(r, s);
	dp_reader_free(r);
	return i;
}

static bool same_summary(const struct summary *a, const struct summary *b)
{
	return a->samples == b->samples && a->tasks == b->tasks && a->mmaps == b->mmaps &&
	       a->lost == b->lost && a->damage == b->damage && a->s0.ip == b->s0.ip &&
	       a->s0.time == b->s0.time && a->s0_chain[0] == b->s0_chain[0] &&
	       a->first_sample_at == b->first_sample_at && !strcmp(a->note, b->note);
}

/* Bytes b as a file, read through its mapping: two passes with a rewind
 * between into p1, p2. */
static void read_mapped(const uint8_t *b, size_t n, struct summary *p1, struct summary *p2)
{
	char path[] = "/tmp/dp-perfdata-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, b, n) == (ssize_t)n);
	close(fd);
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	CHECK(r != NULL);
	if (r) {
		summarize(r, p1);
		dp_reader_rewind(r);
		summarize(r, p2);
		dp_reader_free(r);
	}
	unlink(path);
}

/* A file read through its mapping: the reader drops the mapped pages
 * behind what it still needs (MADV_DONTNEED, pd_set_mapped) so a pass
 * does not keep the file resident; the pages must fault back in from the
 * file, so both passes read what the bytes in memory read. Control: the
 * same file with its data zeroed from the middle on (what dropping pages
 * of memory that is not a file mapping would leave) reads otherwise. */
static void mapped_file(void)
{
	uint8_t *b;
	size_t n = pg_build(&(struct pg_opts){ .samples = 8000 }, &b);
	struct summary mem, p1, p2, c1, c2;
	read_file(b, n, &mem, NULL);
	read_mapped(b, n, &p1, &p2);
	fprintf(stderr, "mapped file: %zu bytes, %zu samples (memory), %zu and %zu (mapped, two passes)\n",
		n, mem.samples, p1.samples, p2.samples);
	CHECK(mem.samples == 8000 + 1 + 1 && mem.damage == 0);
	CHECK_EQ_U64(mem.unweighted, 0);   /* control: weight set before pd_next clears it */
	CHECK(same_summary(&p1, &mem));
	CHECK(same_summary(&p2, &mem));
	memset(b + n / 2, 0, n - n / 2 - 4096);  /* the feature sections at the end stay */
	read_mapped(b, n, &c1, &c2);
	fprintf(stderr, "mapped file, control (data zeroed from the middle): %zu samples, %zu damage\n",
		c1.samples, c1.damage);
	CHECK(!same_summary(&c1, &mem));
	CHECK(!same_summary(&c2, &mem));
	free(b);
}

static void known_answers(const struct pg_opts *o, const char *what)
{
	uint8_t *b;
	size_t n = pg_build(o, &b);
	struct summary s;
	int nrec = read_file(b, n, &s, NULL);
	fprintf(stderr, "%s: %zu bytes, %d records, note: %s\n", what, n, nrec, s.note);
	CHECK(nrec > 0);
	CHECK(s.events == 2);
	CHECK_STR(s.ev0, "cpu-clock");
	if (!o->pipe)
		CHECK_STR(s.ev1, "sched:sched_test");
	CHECK(s.domains == 1 + (o->guest ? 1 : 0));
	CHECK(s.tasks == 3);                /* COMM, FORK, EXIT */
	CHECK(s.mmaps == 3);                /* exec MMAP2, kernel MMAP, KSYMBOL; not the data MMAP2 */
	CHECK(s.samples == 6 + 1 + 1);
	CHECK_EQ_U64(s.unweighted, 0);
	CHECK(s.guest_samples == (o->guest ? 4u : 0u));
	CHECK(s.lost_recs == 3 && s.lost == 3 + 2 + 1);
	CHECK(s.stats == 1);
	CHECK(s.damage == 0);
	/* the sample from the other ring comes after the mapping it needs */
	CHECK(s.first_mmap_at >= 0 && s.first_mmap_at < s.first_sample_at);
	CHECK(s.mmap_bid_len == 20 && s.mmap_bid0 == 0xab);
	CHECK_EQ_U64(s.s0.ip, 0x401010);
	CHECK(s.s0.pid == PG_PID && s.s0.tid == PG_PID && s.s0.cpu == 1 && s.s0.event == 0);
	CHECK_EQ_U64(s.s0.period, 250000);
	CHECK_EQ_U64(s.s0.time, 300);
	CHECK(s.s0.mode == DP_MODE_USER);
	CHECK(s.s0.nr_callchain == 2);      /* the context marker is not a frame */
	CHECK_EQ_U64(s.s0_chain[0], 0x401010);
	CHECK_EQ_U64(s.s0_chain[1], 0x401100);
	CHECK(strstr(s.note, "type 99 x1") != NULL);
	if (!o->pipe)
		CHECK(strstr(s.note, "newer perf") != NULL);
	free(b);
}

/* An MMAP2 flagged as carrying a build-id whose size byte is a device
 * number (the kernel's leaked flag, perfdata.c): no build-id, the map
 * kept. Control: the same file with a real build-id has one. */
static void leaked_buildid_flag(void)
{
	uint8_t *b;
	struct summary s;
	size_t n = pg_build(&(struct pg_opts){ .leaked_flag = 1 }, &b);
	CHECK(read_file(b, n, &s, NULL) > 0);
	CHECK(s.first_mmap_at >= 0 && s.mmap_bid_len == 0);
	CHECK(s.mmaps == 3 && s.damage == 0);
	free(b);
	n = pg_build(&(struct pg_opts){ 0 }, &b);
	CHECK(read_file(b, n, &s, NULL) > 0 && s.mmap_bid_len == 20);
	free(b);
}

static void header_fields(void)
{
	struct pg_opts o = { 0 };
	uint8_t *b;
	size_t n = pg_build(&o, &b);
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, n, &err, NULL, 0);
	CHECK(r != NULL);
	if (r) {
		const struct dp_header *h = dp_reader_header(r);
		CHECK_STR(h->hostname, "pg-host");
		CHECK_STR(h->release, "6.1.0-pg");
		CHECK_STR(h->cpu_desc, "Test CPU");
		CHECK_STR(h->cmdline, "perf record -g");
		CHECK(h->ncpus == 4);
		CHECK(h->source && strstr(h->source, "perf 6.1.pg, x86_64"));
		CHECK(dp_reader_is_perf(r));
		dp_reader_free(r);
	}
	free(b);
}

static void guests(void)
{
	struct pg_opts o = { .guest = 1 };
	uint8_t *b;
	size_t n = pg_build(&o, &b);
	struct summary s;
	CHECK(read_file(b, n, &s, NULL) > 0);
	CHECK_STR(s.guest_name, "[guest/4242]");
	CHECK(s.guest_mode == DP_MODE_GUEST_KERNEL);
	CHECK(s.symtabs == 0);
	const char *ks = PG_GUEST_KALLSYMS;
	struct dp_perf_guest g = { .pid = PG_QEMU_PID, .name = "vm1", .symtab_kind = DP_SYMTAB_KALLSYMS,
				   .syms = (const uint8_t *)ks, .syms_len = strlen(ks) };
	CHECK(read_file(b, n, &s, &g) > 0);
	CHECK_STR(s.guest_name, "vm1");
	CHECK(s.symtabs == 1 && s.guest_samples == 4);
	/* a domprof file refuses guest options */
	g.symtab_kind = 77;
	int err;
	struct dp_reader *r = dp_reader_open_mem(b, n, &err, NULL, 0);
	CHECK(r && dp_reader_perf_guest(r, &g) == -EINVAL);
	dp_reader_free(r);
	free(b);
}

/* Cut everywhere, flip every bit: no crash (ASan/UBSan), no more
 * samples than the file holds, two passes agree, and a cut anywhere in
 * the data or the features is either refused or reported. */
static void cuts_and_flips(const struct pg_opts *o, const char *what, unsigned bits)
{
	uint8_t *b;
	size_t n = pg_build(o, &b);
	struct summary full, s;
	read_file(b, n, &full, NULL);
	size_t unreported = 0;
	/* Under valgrind (make check-valgrind sets UNIT_VALGRIND) every 5th
	 * offset: it looks for memory errors, which the sanitized run (every
	 * offset) looks for as well; 35 s of valgrind-unit's 91 otherwise. */
	const size_t step = getenv("UNIT_VALGRIND") ? 5 : 1;
	for (size_t cut = 0; cut < n; cut += step) {
		int r = read_file(b, cut, &s, NULL);
		CHECK(s.samples <= full.samples && s.guest_samples <= full.guest_samples);
		if (r >= 0 && !s.damage)
			unreported++;
	}
	fprintf(stderr, "%s: %zu cuts, %zu read without damage\n", what, n, unreported);
	/* the pipe form has no sizes to check a cut against: only a cut
	 * inside a record is seen (one between records is a shorter pipe) */
	if (!o->pipe)
		CHECK(unreported == 0);
	/* compressed records hold more bytes than they take */
	struct pg_opts plain = *o;
	plain.compress = 0;
	uint8_t *pb;
	size_t bound = pg_build(&plain, &pb);
	free(pb);
	if (bound < n)
		bound = n;
	uint8_t *c = malloc(n);
	for (size_t i = 0; i < n; i += step)
		for (int bit = 0; bit < 8; bit++) {
			if (!(bits >> bit & 1))
				continue;
			memcpy(c, b, n);
			c[i] ^= (uint8_t)(1u << bit);
			read_file(c, n, &s, NULL);
			/* a flipped size or layout may make more records of
			 * the bytes, never more than they hold */
			CHECK((s.samples + s.guest_samples) * 8 <= bound);
		}
	free(c);
	free(b);
}

static void append_record(uint8_t **b, size_t *n, const uint8_t *rec, size_t len, bool in_data)
{
	/* file form: put it at the end of the data section (before the
	 * feature table) and move the features along */
	uint64_t doff, dsz;
	memcpy(&doff, *b + 40, 8);
	memcpy(&dsz, *b + 48, 8);
	size_t at = in_data ? doff + dsz : *n;
	uint8_t *c = malloc(*n + len);
	memcpy(c, *b, at);
	memcpy(c + at, rec, len);
	memcpy(c + at + len, *b + at, *n - at);
	dsz += len;
	memcpy(c + 48, &dsz, 8);
	/* the feature table's offsets move by len */
	for (size_t i = 0; i < PG_NFEATURES; i++) {
		uint64_t off;
		memcpy(&off, c + at + len + 16 * i, 8);
		off += len;
		memcpy(c + at + len + 16 * i, &off, 8);
	}
	free(*b);
	*b = c;
	*n += len;
}

static void crafted(void)
{
	struct pg_opts o = { 0 };
	uint8_t *b;
	size_t n = pg_build(&o, &b);
	struct summary s;

	/* a compression bomb: 80 MiB of zeros in one COMPRESSED record */
	size_t big = 80u << 20;  /* past the reader's 64 MiB a record */
	uint8_t *zeros = calloc(1, big);
	size_t zb = ZSTD_compressBound(big);
	uint8_t *z = malloc(zb + 8);
	size_t zn = ZSTD_compress(z + 8, zb, zeros, big, 1);
	free(zeros);
	CHECK(!ZSTD_isError(zn) && zn + 8 < 65536);
	size_t rl = (zn + 8 + 7) / 8 * 8;
	uint8_t *rec = calloc(1, rl);
	uint32_t t = 81;
	uint16_t sz = (uint16_t)rl;
	memcpy(rec, &t, 4);
	memcpy(rec + 6, &sz, 2);
	memcpy(rec + 8, z + 8, zn);
	append_record(&b, &n, rec, rl, true);
	free(rec);
	free(z);
	CHECK(read_file(b, n, &s, NULL) > 0);
	CHECK(s.damage == 1 && s.samples == 8);

	/* a chain of 2000 frames: cut at DP_MAX_CALLCHAIN, said in the note */
	struct pg_buf x = { 0 };
	uint64_t *chain = calloc(2000, 8);
	for (int i = 0; i < 2000; i++)
		chain[i] = 0x401000 + (uint64_t)i;
	pg_sample(&x, PG_ID_CLOCK, 2, PG_PID, 499, 0x401000, chain, 2000, 0);
	free(chain);
	append_record(&b, &n, x.b, x.n, true);
	free(x.b);
	CHECK(read_file(b, n, &s, NULL) > 0);
	CHECK(s.samples == 9 && strstr(s.note, "call chains cut at 1024") != NULL);

	/* a chain count past the record: malformed, skipped, damage */
	x = (struct pg_buf){ 0 };
	uint64_t one = 0x401000;
	pg_sample(&x, PG_ID_CLOCK, 2, PG_PID, 499, 0x401000, &one, 1, 0);
	uint64_t huge = (uint64_t)1 << 60;
	memcpy(x.b + 8 + 9 * 8, &huge, 8);    /* the nr field, after 9 u64 fields */
	append_record(&b, &n, x.b, x.n, true);
	free(x.b);
	CHECK(read_file(b, n, &s, NULL) > 0);
	fprintf(stderr, "chain count past the record: %zu samples, %zu damage\n", s.samples, s.damage);
	CHECK(s.samples == 9 && s.damage == 2);

	/* a data section that says it is larger than the file */
	uint64_t dsz = (uint64_t)1 << 40;
	memcpy(b + 48, &dsz, 8);
	CHECK(read_file(b, n, &s, NULL) > 0);
	CHECK(s.damage >= 1);
	/* attributes outside the file: refused with a reason */
	uint64_t aoff = (uint64_t)1 << 50;
	memcpy(b + 24, &aoff, 8);
	int err;
	char msg[256] = "";
	CHECK(dp_reader_open_mem(b, n, &err, msg, sizeof(msg)) == NULL);
	CHECK(strstr(msg, "attribute section") != NULL);
	/* the other byte order */
	memcpy(b, "2ELIFREP", 8);
	CHECK(dp_reader_open_mem(b, n, &err, msg, sizeof(msg)) == NULL);
	CHECK(strstr(msg, "byte order") != NULL);
	free(b);
}

int main(void)
{
	known_answers(&(struct pg_opts){ 0 }, "file");
	known_answers(&(struct pg_opts){ .pipe = 1 }, "pipe");
	known_answers(&(struct pg_opts){ .compress = 1 }, "compressed");
	known_answers(&(struct pg_opts){ .pipe = 1, .compress = 1 }, "pipe+compressed");
	known_answers(&(struct pg_opts){ .guest = 1 }, "guest");
	leaked_buildid_flag();
	mapped_file();
	header_fields();
	guests();
	/* every bit of the file form; bits 0, 4 and 7 of every byte of the others */
	cuts_and_flips(&(struct pg_opts){ 0 }, "file", 0xff);
	cuts_and_flips(&(struct pg_opts){ .compress = 1 }, "compressed", 0x91);
	cuts_and_flips(&(struct pg_opts){ .pipe = 1, .guest = 1 }, "pipe+guest", 0x91);
	crafted();
	return unit_done();
}
