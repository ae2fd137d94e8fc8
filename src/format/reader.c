// SPDX-License-Identifier: MIT
/*
 * The format reader: maps a file, walks its chunks, verifies each one's
 * header CRC and payload CRC, decompresses, and decodes records with the
 * current domain as explicit state (host at every chunk start, changed
 * only by DOMAIN_SWITCH). Every length is checked before use because
 * files are crafted input; damage is recorded and skipped, never fatal
 * once the header is valid. From format 1.1 it also follows the chunk
 * sequence numbers (a chunk cut out, repeated or moved keeps valid CRCs)
 * and compares the STATS record's totals with what it read, so nothing
 * goes missing or counts twice silently. See docs/file-format.md.
 */
#include "format/format.h"
#include "format/prefetch.h"
#include "format/counts.h"
#include "format/digest.h"
#include "format/ustack.h"
#include "format/reader_internal.h"
#include "format/wire.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static struct dp_reader *open_common(struct dp_reader *r, int *err, char *msg, size_t msglen)
{
	r->track = true;
	r->counts_off = cnt_off();
	static const struct rd_foreign *const formats[] = { &rd_perfdata };
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (r->size < 8 || !formats[i]->is(r->map, r->size))
			continue;
		r->fctx = formats[i]->open(r->map, r->size, r->mtime_ns, r->mapped, err, msg, msglen);
		if (!r->fctx) {
			dp_reader_free(r);
			return NULL;
		}
		r->fx = formats[i];
		r->hdr = *r->fx->header(r->fctx);
		return r;
	}
	if (rd_parse_header(r, err, msg, msglen) < 0) {
		dp_reader_free(r);
		return NULL;
	}
	r->dctx = ZSTD_createDCtx();
	return r;
}

struct dp_reader *dp_reader_open(const char *path, int *err, char *msg, size_t msglen)
{
	/* a FIFO or device named here must not block or be read forever */
	uint64_t fsize = 0;
	int fd = file_open_regular(path, &fsize);
	if (fd < 0) {
		dp_open_fail(err, msg, msglen, fd == FILE_ERR_NOT_REGULAR ? -EINVAL : fd, "cannot %s '%s': %s",
		     fd == FILE_ERR_NOT_REGULAR ? "read" : "open", path, file_strerror(fd));
		return NULL;
	}
	struct dp_reader *r = xcalloc(1, sizeof(*r));
	r->size = (size_t)fsize;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			free(r);
			dp_open_fail(err, msg, msglen, -e, "cannot map '%s': %s", path, strerror(e));
			return NULL;
		}
		madvise(m, r->size, MADV_SEQUENTIAL);
		r->map = m;
		r->mapped = true;
	} else {
		r->map = (const uint8_t *)"";
	}
	struct stat st;
	if (fstat(fd, &st) == 0)
		r->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	close(fd);
	return open_common(r, err, msg, msglen);
}

struct dp_reader *dp_reader_open_mem(const void *buf, size_t len, int *err, char *msg,
				     size_t msglen)
{
	struct dp_reader *r = xcalloc(1, sizeof(*r));
	/* An aligned private copy: records are 8-aligned relative to it. */
	r->owned = xmalloc(len ? len : 1);
	memcpy(r->owned, buf, len);
	r->map = r->owned;
	r->size = len;
	return open_common(r, err, msg, msglen);
}

void dp_reader_free(struct dp_reader *r)
{
	if (!r)
		return;
	pf_free(r->pf);  /* its workers read the mapping */
	if (r->fx)
		r->fx->free(r->fctx);
	if (r->mapped)
		munmap((void *)r->map, r->size);
	free(r->owned);
	for (int i = 0; i < 5; i++)
		free(r->hstr[i]);
	ZSTD_freeDCtx(r->dctx);
	free(r->zbuf);
	free(r->sbuf);
	free(r->chain);
	free(r->ctr);
	free(r->ctr_names);
	free(r->damage);
	free(r->runs);
	usd_free(&r->usd);
	dg_release(&r->own_dg);
	dg_release(&r->vpart);
	dg_release(&r->vrecs);
	free(r->vbuf);
	free(r);
}

void dp_reader_set_flags(struct dp_reader *r, unsigned flags) { r->flags = flags; }

int dp_reader_set_threads(struct dp_reader *r, unsigned n)
{
	if (r->fx)
		return 0;   /* no chunks: read by one thread */
	if (n > DP_READ_THREADS_MAX)
		n = DP_READ_THREADS_MAX;
	if (r->pf && r->payload)
		return -EBUSY;  /* the open chunk's payload is a worker's buffer */
	if (r->pf) {
		pf_free(r->pf);
		r->pf = NULL;
	}
	if (n <= 1)
		return 0;
	/* n - 1 workers: the caller's thread decodes too (pf_take) */
	r->pf = pf_new(n - 1);
	return r->pf ? 0 : -EAGAIN;
}
const struct dp_header *dp_reader_header(const struct dp_reader *r) { return &r->hdr; }
uint64_t dp_reader_pos(const struct dp_reader *r) { return r->fx ? r->fx->pos(r->fctx) : r->pos; }
bool dp_reader_is_perf(const struct dp_reader *r) { return r->fx == &rd_perfdata; }
const char *dp_reader_note(const struct dp_reader *r) { return r->fx ? r->fx->note(r->fctx) : NULL; }

int dp_reader_perf_guest(struct dp_reader *r, const struct dp_perf_guest *g)
{
	return r->fx && r->fx->set_guest ? r->fx->set_guest(r->fctx, g) : -EINVAL;
}
uint64_t dp_reader_size(const struct dp_reader *r) { return r->size; }
uint64_t dp_reader_chunks(const struct dp_reader *r) { return r->chunks; }
uint64_t dp_reader_chunks_counts(const struct dp_reader *r) { return r->chunks_counts; }

size_t dp_reader_damage(const struct dp_reader *r, const struct dp_damage **out)
{
	if (r->fx)
		return r->fx->damage(r->fctx, out);
	*out = r->damage;
	return r->ndamage;
}

void dp_reader_rewind(struct dp_reader *r)
{
	if (r->fx) {
		r->fx->rewind(r->fctx);
		return;
	}
	if (r->pos > r->damage_until)
		r->damage_until = r->pos;
	if (r->at_end)
		r->damage_until = UINT64_MAX;
	r->pos = r->first_chunk;
	r->dropped = 0;
	if (r->pf)
		pf_reset(r->pf);
	r->pf_ahead = 0;
	r->payload = NULL;
	r->dg = NULL;
	r->dg_bo = (struct dg_backoff){ 0 };
	r->plen = r->ppos = 0;
	r->chunks = r->chunks_counts = 0;
	r->at_end = false;
	r->check_seq = r->hdr.minor >= 1;
	r->nruns = 0;
	r->nrec_read = r->nsamples_read = 0;
}

const char *dp_reader_incomplete(const struct dp_reader *r)
{
	if (r->fx)
		return r->fx->incomplete(r->fctx);
	if (!r->ended)
		return NULL;
	if (!r->stats_seen)
		return "recording incomplete (no end-of-recording STATS record; the recorder was "
		       "killed?): up to the last 250 ms may be missing";
	if (r->stats_flags & DP_STATS_INCOMPLETE)
		return "recording incomplete: merged from a recording that had no end-of-recording "
		       "STATS record";
	return NULL;
}

/* A STATS record: compare its totals with the records found before it. */
static void stats_check(struct dp_reader *r, const struct dp_stats *st, uint64_t nrec)
{
	r->stats_seen = true;
	r->stats_flags = st->flags;
	if (!st->has_totals || (st->records == nrec && st->sample_records == r->nsamples_read))
		return;
	rd_damage(r, r->chunk_off, 0,
	       "STATS counts %" PRIu64 " records (%" PRIu64 " samples), %" PRIu64 " (%" PRIu64 ") read",
	       st->records, st->sample_records, nrec, r->nsamples_read);
}

/* String reader over [p, end): u16 n, n bytes ending in NUL. */
static const char *get_str(const uint8_t **p, const uint8_t *end)
{
	if (end - *p < 2)
		return NULL;
	uint16_t n = get16(*p);
	if (n < 1 || end - *p - 2 < n || (*p)[2 + n - 1] != 0)
		return NULL;
	const char *s = (const char *)*p + 2;
	*p += 2 + n;
	return s;
}

/* A SAMPLE's user registers and stack (1.4) at q, the block after the
 * chain: u64 mask, u32 abi, u32 0, u32 size, u32 len, the registers, the
 * stack. Malformed (false) when a part runs past the record or len >
 * size > DP_MAX_USTACK. */
static bool dec_ustack(struct dp_reader *r, struct dp_sample *s, uint16_t flags,
		       const uint8_t *q, const uint8_t *end)
{
	s->has_uregs = false;
	s->uregs_abi = 0;
	s->uregs_mask = 0;
	s->uregs = NULL;
	s->ustack_size = s->ustack_len = s->ustack_ref = 0;
	s->ustack = NULL;
	bool delta = flags & DP_SAMPLE_F_USTACK_DELTA;
	if (!(flags & DP_SAMPLE_F_USTACK) && !delta)
		return true;
	if ((flags & DP_SAMPLE_F_USTACK) && delta)
		return false;
	if (end - q < DP_USTACK_FIXED)
		return false;
	uint64_t mask = get64(q);
	uint32_t size = get32(q + 16), len = get32(q + 20);
	uint32_t nregs = dp_uregs_count(mask);  /* <= 64 */
	q += DP_USTACK_FIXED;
	if (size > DP_MAX_USTACK || len > size || (size_t)(end - q) / 8 < nregs)
		return false;
	const uint8_t *regs = q;
	q += 8 * (size_t)nregs;
	/* delta form: u32 head, u32 run, then the len - run literal bytes */
	uint32_t head = 0, run = 0, lit = len;
	if (delta) {
		if (end - q < 8)
			return false;
		head = get32(q);
		run = get32(q + 4);
		q += 8;
		if (head > len || run > len - head)
			return false;
		lit = len - run;
	}
	if ((size_t)(end - q) < lit)
		return false;
	s->has_uregs = true;
	s->uregs_mask = mask;
	s->uregs_abi = get32(regs - DP_USTACK_FIXED + 8);
	if (((uintptr_t)regs & 7) == 0) {
		s->uregs = (const uint64_t *)(const void *)regs;
	} else {
		memcpy(r->uregs, regs, 8 * (size_t)nregs);
		s->uregs = r->uregs;
	}
	s->ustack_size = size;
	s->ustack_len = len;
	s->ustack = len ? q : NULL;
	uint64_t sp;
	bool has_sp = dp_sample_ureg(s, DP_X86_REG_SP, &sp);
	if (!r->track)
		return !delta;
	if (delta && !has_sp)
		return false;   /* no address to align the stacks by */
	/* every sample with a stack is its thread's previous one for the
	 * next, as the writer keeps them (format/ustack.h) */
	struct usd_thread *th = usd_get(&r->usd, r->cur_domain, s->tid, true);
	if (!delta) {
		if (th && has_sp)
			usd_full(&r->usd, th, sp, len, q, false);
		else if (th)
			th->has_prev = false;
		return true;
	}
	const uint8_t *st = th ? usd_apply(&r->usd, th, sp, len, head, run, q, q + head) : NULL;
	if (st) {
		s->ustack = st;
		s->ustack_ref = run;
		return true;
	}
	/* a reference to a stack the chunk does not hold (or past the
	 * bounds): the stack ends where its own bytes do */
	rd_damage(r, r->chunk_off, 0,
	       "SAMPLE in chunk at offset %" PRIu64 " refers to a missing earlier user stack; "
	       "stack cut at %u of %u bytes", r->chunk_off, head, len);
	s->ustack_len = head;
	s->ustack = head ? q : NULL;
	if (th)
		usd_full(&r->usd, th, sp, head, q, false);
	return true;
}

/* A sample's fixed part at b (time, ip, period, pid, tid, cpu, event,
 * mode), copied as it is on disk (little-endian hosts, util/le.h): the
 * head of struct dp_sample has the same layout. The record's last fixed
 * byte is padding, where has_asid goes; it and the optional fields after
 * it start out absent. */
static inline __attribute__((always_inline)) void sample_fixed(struct dp_sample *s,
								const uint8_t *b)
{
	_Static_assert(offsetof(struct dp_sample, has_asid) == DP_SAMPLE_FIXED - 1 &&
		       offsetof(struct dp_sample, asid) == DP_SAMPLE_FIXED &&
		       offsetof(struct dp_sample, mode) == 38 && offsetof(struct dp_sample, pid) == 24,
		       "dp_sample's head is the SAMPLE record's fixed part");
	memcpy(s, b, DP_SAMPLE_FIXED);
	s->has_asid = false;
	memset(&s->asid, 0, sizeof(*s) - offsetof(struct dp_sample, asid));
}

/* Per-tag decoders of a record body at p (len bytes, header included):
 * false when it is too short or malformed. dec_sample is inlined into
 * dp_reader_next (most records are samples; see docs/file-format.md on
 * the decoder's speed), the others go through decode()'s switch. */
static inline __attribute__((always_inline)) bool
dec_sample(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	uint16_t flags = get16(p + 2);
	struct dp_sample *s = &rec->u.sample;
	if (len < DP_REC_HDR + DP_SAMPLE_FIXED)
		return false;
	sample_fixed(s, p + DP_REC_HDR);
	if (__builtin_expect(!(flags & DP_SAMPLE_F_PARTS), 1))
		return true;
	struct sample_parts sp;
	if (!sample_parts(p, len, flags, &sp))
		return false;
	if (flags & DP_SAMPLE_F_ASID) {
		s->has_asid = true;
		s->asid = sp.asid;
	}
	uint32_t nr = sp.nr;
	if (r->flags & DP_READ_NO_CHAINS) {
		s->chain_omitted = nr != 0;
	} else if (!(flags & DP_SAMPLE_F_CHAIN)) {
		/* none */
	} else if (((uintptr_t)sp.chain & 7) == 0) {
		s->nr_callchain = nr;
		s->callchain = (const uint64_t *)(const void *)sp.chain;
	} else {
		s->nr_callchain = nr;
		xgrow((void **)&r->chain, &r->chain_cap, nr, 8);
		memcpy(r->chain, sp.chain, 8 * (size_t)nr);
		s->callchain = r->chain;
	}
	return dec_ustack(r, s, flags, sp.rest, p + len);
}

static bool dec_switch(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	if (len < DP_SWITCH_LEN)
		return false;
	rec->u.switch_to = get32(b);
	return true;
}

static bool dec_event(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_event *e = &rec->u.event;
	if (len < DP_REC_HDR + 32)
		return false;
	e->id = get32(b);
	e->type = get32(b + 4);
	e->config = get64(b + 8);
	e->period = get64(b + 16);
	e->freq = get32(b + 24) & 1;
	q = b + 32;
	return (e->name = get_str(&q, end)) != NULL;
}

static bool dec_domain(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_domain *d = &rec->u.domain;
	if (len < DP_REC_HDR + 24)
		return false;
	d->id = get32(b);
	d->kind = b[4];
	d->vcpus = get32(b + 8);
	d->kaslr_offset = get64(b + 16);
	q = b + 24;
	return (d->name = get_str(&q, end)) && (d->address = get_str(&q, end)) &&
	       (d->symsrc = get_str(&q, end));
}

static bool dec_task(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_task *t = &rec->u.task;
	if (len < DP_REC_HDR + 32)
		return false;
	t->kind = b[0];
	t->pid = get32(b + 4);
	t->tid = get32(b + 8);
	t->ppid = get32(b + 12);
	t->ptid = get32(b + 16);
	t->time = get64(b + 24);
	q = b + 32;
	if (!(t->comm = get_str(&q, end)))
		return false;
	/* 1.2 address-space block at the next 8-byte boundary, if there */
	size_t at = align8((uint32_t)(q - p));
	t->has_asid = len >= at + DP_TASK_ASID && (get32(p + at) & 1);
	t->asid = t->has_asid ? get64(p + at + 8) : 0;
	return true;
}

static bool dec_mmap(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_mmap *m = &rec->u.mmap;
	if (len < DP_REC_HDR + 64)
		return false;
	m->pid = get32(b);
	m->buildid_len = b[4] > 20 ? 20 : b[4];
	m->start = get64(b + 8);
	m->len = get64(b + 16);
	m->pgoff = get64(b + 24);
	m->time = get64(b + 32);
	memcpy(m->buildid, b + 40, 20);
	q = b + 64;
	if (!(m->path = get_str(&q, end)))
		return false;
	/* 1.1 identity block at the next 8-byte boundary, if there */
	size_t at = align8((uint32_t)(q - p));
	m->has_ident = len >= at + DP_MMAP_IDENT && (get32(p + at) & 1);
	m->dev = m->has_ident ? get64(p + at + 8) : 0;
	m->ino = m->has_ident ? get64(p + at + 16) : 0;
	m->size = m->has_ident ? get64(p + at + 24) : 0;
	m->mtime_ns = m->has_ident ? get64(p + at + 32) : 0;
	return true;
}

static bool dec_lost(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	if (len < 24)
		return false;
	rec->u.lost.count = get64(b);
	rec->u.lost.source = get32(b + 8);
	rec->u.lost.where = get32(b + 12);
	return true;
}

static bool dec_stats(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *b = p + DP_REC_HDR;
	struct dp_stats *s = &rec->u.stats;
	if (len < 56)
		return false;
	s->samples = get64(b);
	s->lost = get64(b + 8);
	s->start_time = get64(b + 16);
	s->end_time = get64(b + 24);
	s->wall_ns = get64(b + 32);
	s->exit_status = get32(b + 40);
	s->flags = get32(b + 44);
	s->has_totals = len >= 72;  /* format 1.1 */
	s->records = s->has_totals ? get64(b + 48) : 0;
	s->sample_records = s->has_totals ? get64(b + 56) : 0;
	return true;
}

static bool dec_symtab(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *b = p + DP_REC_HDR, *q;
	struct dp_symtab *st = &rec->u.symtab;
	if (len < DP_REC_HDR + 24)
		return false;
	st->kind = get32(b);
	uint32_t comp = get32(b + 4);
	uint64_t raw = get64(b + 8), stored = get64(b + 16);
	q = b + 24;
	if (!(st->name = get_str(&q, end)))
		return false;
	size_t head = align8((uint32_t)(q - p));
	if (head > len || stored > len - head || raw > DP_SYMTAB_MAX_RAW)
		return false;
	const uint8_t *data = p + head;
	rec->symtab_compression = comp;
	rec->symtab_stored = data;
	rec->symtab_stored_size = stored;
	if (comp == 0) {
		if (raw != stored)
			return false;
		st->data = data;
		st->size = raw;
	} else if (comp == 1) {
		unsigned long long fs = ZSTD_getFrameContentSize(data, stored);
		if (fs != raw)
			return false;
		if (r->flags & DP_READ_SYMTAB_STORED) {
			/* the caller decompresses (and checks) it when needed */
			st->data = NULL;
			st->size = raw;
			return true;
		}
		if (raw + 1 > r->scap) {
			free(r->sbuf);
			r->sbuf = xmalloc(raw + 1);
			r->scap = raw + 1;
		}
		size_t n = ZSTD_decompressDCtx(r->dctx, r->sbuf, raw, data, stored);
		if (ZSTD_isError(n) || n != raw)
			return false;
		r->sbuf[raw] = 0;
		st->data = r->sbuf;
		st->size = raw;
	} else {
		return false;
	}
	return true;
}

/* COUNTERS (1.3): u32 n, u32 reserved, then n entries of u64 value,
 * u16 len, len name bytes (no NUL), packed; bytes after the last entry
 * are padding or fields of a later version. Names are copied out with a
 * NUL into buffers of the maximal record's size, allocated once. */
static bool dec_counters(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len, *q = p + DP_REC_HDR + DP_COUNTERS_FIXED;
	if (len < DP_REC_HDR + DP_COUNTERS_FIXED)
		return false;
	uint32_t n = get32(p + DP_REC_HDR);
	if (n > DP_MAX_COUNTERS)
		return false;
	if (n && !r->ctr) {
		r->ctr = xcalloc(DP_MAX_COUNTERS, sizeof(*r->ctr));
		r->ctr_names = xmalloc(DP_MAX_COUNTERS * (DP_MAX_COUNTER_NAME + 1));
	}
	for (uint32_t i = 0; i < n; i++) {
		if (end - q < DP_COUNTER_ENTRY)
			return false;
		uint16_t nl = get16(q + 8);
		const char *name = (const char *)q + DP_COUNTER_ENTRY;
		if (end - q - DP_COUNTER_ENTRY < nl || !dp_counter_name_ok(name, nl))
			return false;
		char *to = r->ctr_names + (size_t)i * (DP_MAX_COUNTER_NAME + 1);
		memcpy(to, name, nl);
		to[nl] = 0;
		r->ctr[i].name = to;
		r->ctr[i].value = get64(q);
		q += DP_COUNTER_ENTRY + nl;
	}
	rec->u.counters.n = n;
	rec->u.counters.c = n ? r->ctr : NULL;
	return true;
}

/* Decode a known record body; false when it is too short or malformed. */
static bool decode(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, uint32_t len)
{
	switch (rec->type) {
	case DP_REC_SAMPLE: return dec_sample(r, rec, p, len);
	case DP_REC_DOMAIN_SWITCH: return dec_switch(r, rec, p, len);
	case DP_REC_EVENT: return dec_event(r, rec, p, len);
	case DP_REC_DOMAIN: return dec_domain(r, rec, p, len);
	case DP_REC_TASK: return dec_task(r, rec, p, len);
	case DP_REC_MMAP: return dec_mmap(r, rec, p, len);
	case DP_REC_LOST: return dec_lost(r, rec, p, len);
	case DP_REC_STATS: return dec_stats(r, rec, p, len);
	case DP_REC_SYMTAB: return dec_symtab(r, rec, p, len);
	case DP_REC_COUNTERS: return dec_counters(r, rec, p, len);
	default:
		return true; /* unknown tag: raw only */
	}
}

static inline bool flags_delta(const uint8_t *p)
{
	return get16(p + 2) & DP_SAMPLE_F_USTACK_DELTA;
}

/* The record at ppos of the open chunk (ppos < plen): returns 1 with
 * *rec filled, or 0 when it was malformed (damage recorded, skipped;
 * after a bad length the rest of the chunk). */
static inline __attribute__((always_inline)) int record_at(struct dp_reader *r, struct dp_record *rec)
{
	const uint8_t *p = r->payload + r->ppos;
	size_t left = r->plen - r->ppos;
	uint32_t len = left >= DP_REC_HDR ? get32(p + 4) : 0;
	if (left < DP_REC_HDR || len < DP_REC_HDR || len % 8 || len > left) {
		rd_damage(r, r->chunk_off, left,
		       "bad record length in chunk at offset %" PRIu64 "; rest of chunk skipped",
		       r->chunk_off);
		r->ppos = r->plen;
		return 0;
	}
	r->ppos += len;
	r->nrec_seen++;
	uint64_t nrec_before = r->nrec_read++;
	uint16_t type = get16(p);
	rec->type = type;
	rec->raw = p;
	rec->raw_len = len;
	rec->chunk_offset = r->chunk_off;
	rec->weight = 1;
	if (__builtin_expect(type == DP_REC_SAMPLE, 1)) {
		r->nsamples_read++;
		if (__builtin_expect(dec_sample(r, rec, p, len), 1)) {
			rec->domain = r->cur_domain;
			if (flags_delta(p)) {
				rec->raw = NULL;
				rec->raw_len = 0;
			}
			return 1;
		}
	} else if (decode(r, rec, p, len)) {
		if (type == DP_REC_DOMAIN_SWITCH)
			r->cur_domain = rec->u.switch_to;
		if (type == DP_REC_STATS)
			stats_check(r, &rec->u.stats, nrec_before);
		rec->domain = r->cur_domain;
		return 1;
	}
	rd_damage(r, r->chunk_off, len, "malformed %s record in chunk at offset %" PRIu64 " skipped",
	       dp_rec_type_name(type), r->chunk_off);
	return 0;
}

/* The open digest's next item: 1 with *rec filled (a record, or a group
 * as one SAMPLE of weight count), 0 when the item was a record skipped
 * as damage, -1 when the digest is done (closed; the chunk ends with
 * it). A group's first sample is decoded again for its fields; it was
 * found plain (digest.h), so it decodes. */
static int next_item(struct dp_reader *r, struct dp_record *rec)
{
	const struct dp_digest *d = r->dg;
	if (r->dg_i >= d->nitems) {
		r->dg = NULL;
		r->ppos = r->plen = r->dg_plen;
		return -1;
	}
	uint32_t it = d->items[r->dg_i++];
	r->plen = r->dg_plen;
	if (!(it & DG_GROUP)) {
		r->ppos = it;
		int got = record_at(r, rec);
		r->ppos = r->plen;  /* the items say where the next record is */
		return got;
	}
	const struct dg_group *g = &d->groups[it & ~DG_GROUP];
	const uint8_t *p = r->payload + g->off;
	uint32_t len = get32(p + 4);
	rec->type = DP_REC_SAMPLE;
	rec->raw = NULL;  /* it stands for several records: none of them */
	rec->raw_len = 0;
	rec->chunk_offset = r->chunk_off;
	rec->domain = r->cur_domain;
	rec->weight = g->count;
	(void)dec_sample(r, rec, p, len);
	rec->u.sample.period = g->period;
	r->ppos = r->plen;
	r->nrec_seen += g->count;
	r->nrec_read += g->count;
	r->nsamples_read += g->count;
	return 1;
}

/* dp_reader_next for everything but the next record being a well-formed
 * SAMPLE of the open chunk without optional parts: chunk changes, other
 * tags, damage, digests. */
static __attribute__((noinline)) int next_slow(struct dp_reader *r, struct dp_record *rec)
{
	if (r->fx) {
		int rc = r->fx->next(r->fctx, rec);
		rec->weight = 1;   /* after: next clears the record */
		return rc;
	}
	/* A DOMAIN_SWITCH, before the general loop: a file of several
	 * domains switches every few samples */
	if (r->payload && r->plen - r->ppos >= DP_SWITCH_LEN) {
		const uint8_t *p = r->payload + r->ppos;
		uint32_t len = get32(p + 4);
		if (get16(p) == DP_REC_DOMAIN_SWITCH && len >= DP_SWITCH_LEN && len % 8 == 0 &&
		    len <= r->plen - r->ppos) {
			r->ppos += len;
			r->nrec_seen++;
			r->nrec_read++;
			rec->type = DP_REC_DOMAIN_SWITCH;
			rec->raw = p;
			rec->raw_len = len;
			rec->chunk_offset = r->chunk_off;
			rec->weight = 1;
			rec->u.switch_to = get32(p + DP_REC_HDR);
			r->cur_domain = rec->u.switch_to;
			rec->domain = r->cur_domain;
			return 1;
		}
	}
	for (;;) {
		if (r->dg) {
			/* 0: a record skipped as damage; -1: the digest
			 * is done, the chunk too (ppos == plen) */
			if (next_item(r, rec) > 0)
				return 1;
			continue;
		}
		if (!r->payload || r->ppos >= r->plen) {
			if (!rd_next_chunk(r))
				return 0;
			continue;
		}
		if (record_at(r, rec))
			return 1;
	}
}

/*
 * The common cases inline, in a function small enough to need no stack
 * frame: the next record is a SAMPLE with no asid, chain or user stack,
 * or one with only a chain, and its length is valid (what next_slow
 * would check, so both give the same record). Everything else goes to
 * next_slow.
 */
/* A fast path's record: the sample at p (pos in the payload, len checked)
 * taken, its fixed part decoded; the optional parts are the caller's. */
static inline __attribute__((always_inline)) struct dp_sample *
fast_sample(struct dp_reader *r, struct dp_record *rec, const uint8_t *p, size_t pos, uint32_t len)
{
	r->ppos = pos + len;
	r->nrec_seen++;
	r->nrec_read++;
	r->nsamples_read++;
	rec->type = DP_REC_SAMPLE;
	rec->raw = p;
	rec->raw_len = len;
	rec->chunk_offset = r->chunk_off;
	rec->domain = r->cur_domain;
	rec->weight = 1;
	sample_fixed(&rec->u.sample, p + DP_REC_HDR);
	return &rec->u.sample;
}

int dp_reader_next(struct dp_reader *r, struct dp_record *rec)
{
	const uint8_t *pl = r->payload;
	size_t pos = r->ppos, left = r->plen - pos;  /* ppos <= plen always */
	if (__builtin_expect(pl != NULL && left >= DP_REC_HDR + DP_SAMPLE_FIXED, 1)) {
		const uint8_t *p = pl + pos;
		uint32_t len = get32(p + 4);
		uint16_t flags = get16(p + 2);
		if (__builtin_expect(get16(p) == DP_REC_SAMPLE && !(flags & DP_SAMPLE_F_PARTS) &&
				     len >= DP_REC_HDR + DP_SAMPLE_FIXED && len % 8 == 0 && len <= left, 1)) {
			fast_sample(r, rec, p, pos, len);
			return 1;
		}
		/* A sample with a call chain and nothing else optional (every
		 * sample of a -g recording), its chain aligned in the payload:
		 * the checks dec_sample makes, without next_slow's frame. */
		const uint8_t *q = p + DP_REC_HDR + DP_SAMPLE_FIXED;
		if (get16(p) == DP_REC_SAMPLE &&
		    (flags & DP_SAMPLE_F_PARTS) == DP_SAMPLE_F_CHAIN &&
		    len >= DP_REC_HDR + DP_SAMPLE_FIXED + 8 && len % 8 == 0 && len <= left &&
		    ((uintptr_t)q & 7) == 0) {
			uint32_t nr = get32(q);
			if (nr <= DP_MAX_CALLCHAIN &&
			    (len - (DP_REC_HDR + DP_SAMPLE_FIXED + 8)) / 8 >= nr) {
				struct dp_sample *sm = fast_sample(r, rec, p, pos, len);
				if (__builtin_expect(r->flags & DP_READ_NO_CHAINS, 0)) {
					sm->chain_omitted = nr != 0;
					return 1;
				}
				sm->nr_callchain = nr;
				sm->callchain = (const uint64_t *)(const void *)(q + 8);
				return 1;
			}
		}
	}
	return next_slow(r, rec);
}

/* A zstd frame decompresses to exactly `raw` bytes, checked in a small
 * window so a hostile size cannot make us allocate it. */
static bool zstd_exact(const uint8_t *p, size_t n, uint64_t raw)
{
	if (ZSTD_getFrameContentSize(p, n) != raw)
		return false;
	ZSTD_DStream *ds = ZSTD_createDStream();
	size_t cap = 1 << 16;
	uint8_t *out = xmalloc(cap);
	ZSTD_inBuffer in = { p, n, 0 };
	uint64_t total = 0;
	bool ok = false;
	for (;;) {
		ZSTD_outBuffer o = { out, cap, 0 };
		size_t r = ZSTD_decompressStream(ds, &o, &in);
		if (ZSTD_isError(r) || (total += o.pos) > raw)
			break;
		if (r == 0 && in.pos == in.size) {
			ok = total == raw;
			break;
		}
		if (o.pos == 0 && in.pos == in.size)
			break; /* truncated */
	}
	free(out);
	ZSTD_freeDStream(ds);
	return ok;
}

bool dp_record_check(const void *raw, size_t len)
{
	if (len < DP_REC_HDR || len % 8 || len > UINT32_MAX || get32((const uint8_t *)raw + 4) != len)
		return false;
	if (get16(raw) == DP_REC_SAMPLE && (get16((const uint8_t *)raw + 2) & DP_SAMPLE_F_USTACK_DELTA))
		return false;   /* refers to earlier records of its chunk */
	/* decode() as the reader runs it, keeping SYMTAB blobs stored */
	struct dp_reader r = { .flags = DP_READ_SYMTAB_STORED };
	struct dp_record rec = { .type = get16(raw) };
	bool ok = decode(&r, &rec, raw, (uint32_t)len);
	free(r.chain);
	free(r.ctr);
	free(r.ctr_names);
	if (ok && rec.type == DP_REC_SYMTAB && rec.symtab_compression == 1)
		ok = zstd_exact(rec.symtab_stored, rec.symtab_stored_size, rec.u.symtab.size);
	return ok;
}

const char *dp_rec_type_name(uint16_t type)
{
	static const char *const names[] = {
		[DP_REC_EVENT] = "EVENT", [DP_REC_DOMAIN] = "DOMAIN",
		[DP_REC_DOMAIN_SWITCH] = "DOMAIN_SWITCH", [DP_REC_TASK] = "TASK",
		[DP_REC_MMAP] = "MMAP", [DP_REC_SAMPLE] = "SAMPLE", [DP_REC_LOST] = "LOST",
		[DP_REC_SYMTAB] = "SYMTAB", [DP_REC_STATS] = "STATS",
		[DP_REC_COUNTERS] = "COUNTERS",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "UNKNOWN";
}

const char *dp_mode_name(uint8_t mode)
{
	static const char *const names[] = { "unknown", "user", "kernel", "guest-kernel",
					     "guest-user", "hypervisor" };
	return mode < 6 ? names[mode] : "invalid";
}

const char *dp_domain_kind_name(uint8_t kind)
{
	static const char *const names[] = { "host", "passive", "active" };
	return kind < 3 ? names[kind] : "invalid";
}

const char *dp_lost_source_name(uint32_t src)
{
	static const char *const names[] = { "ring-overflow", "throttled", "vm-sampler",
					     "agent", "writer" };
	return src < DP_LOST_SOURCES ? names[src] : "other";
}
