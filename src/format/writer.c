// SPDX-License-Identifier: MIT
/*
 * The format writer: encodes records into an in-memory chunk and writes
 * each finished chunk (optionally zstd-compressed) with its CRC. Also
 * owns the domain-switch rule: the writer, not its callers, inserts
 * DOMAIN_SWITCH records, so a caller cannot forget one or emit one with
 * a stale value. See docs/file-format.md.
 */
#include "format/counts.h"
#include "format/format.h"
#include "format/ustack.h"
#include "format/wire.h"
#include "util/clock.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/sat.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

struct dp_writer {
	int fd;
	int err;                /* first error, sticky */
	struct dp_writer_opts o;
	uint8_t *buf;           /* raw payload of the open chunk */
	size_t len, cap;
	uint32_t nrec;
	uint32_t cur_domain;    /* decoder state the open chunk has reached */
	uint32_t seq;
	uint64_t chunk_start_ns;
	uint32_t since_clock;   /* records since the last clock check */
	void *zbuf;
	size_t zcap;
	ZSTD_CCtx *zctx;
	uint64_t bytes, records;
	uint64_t samples;       /* SAMPLE records written, for STATS */
	uint64_t lost;          /* sum of LOST counts written (saturating) */
	struct usd_table usd;   /* threads' last user stacks in the open chunk (delta form) */
	bool counts;            /* write counts parts (format/counts.h) */
	struct dg_backoff cbo;  /* chunks to write without trying one */
	struct dp_digest dg;    /* the open chunk's, for its counts part */
	uint8_t *cbuf;          /* a counts part, decompressed */
	size_t ccap;
};

static size_t put_field(uint8_t *p, uint16_t id, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 4096)
		n = 4096;
	put16(p, id);
	put16(p + 2, (uint16_t)n);
	memcpy(p + 4, s ? s : "", n);
	return 4 + n;
}

struct dp_writer *dp_writer_new(int fd, const struct dp_header *h,
				const struct dp_writer_opts *opts, int *err)
{
	uint8_t hdr[DP_FILE_HDR_FIXED + 4 * (4 + 4096) + 8];
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, DP_MAGIC, 8);
	put16(hdr + DP_FH_MAJOR, DP_VERSION_MAJOR);
	put16(hdr + DP_FH_MINOR, DP_VERSION_MINOR);
	hdr[DP_FH_ORDER] = 1;
	put64(hdr + DP_FH_CREATED, h->created_ns);
	put32(hdr + DP_FH_NCPUS, h->ncpus);
	put32(hdr + DP_FH_NFIELDS, 4);
	size_t n = DP_FILE_HDR_FIXED;
	n += put_field(hdr + n, DP_FIELD_HOSTNAME, h->hostname);
	n += put_field(hdr + n, DP_FIELD_RELEASE, h->release);
	n += put_field(hdr + n, DP_FIELD_CPU, h->cpu_desc);
	n += put_field(hdr + n, DP_FIELD_CMDLINE, h->cmdline);
	put32(hdr + DP_FH_LEN, (uint32_t)n);
	put32(hdr + DP_FH_CRC, crc32c(0, hdr + DP_FH_CREATED, n - DP_FH_CREATED));
	size_t padded = align8((uint32_t)n);

	int r = file_write_all(fd, hdr, padded);
	if (r < 0) {
		if (err)
			*err = r;
		return NULL;
	}
	struct dp_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	if (opts)
		w->o = *opts;
	if (!w->o.chunk_bytes)
		w->o.chunk_bytes = 1u << 20;
	if (w->o.chunk_bytes > DP_CHUNK_MAX / 2)
		w->o.chunk_bytes = DP_CHUNK_MAX / 2;
	w->cap = w->o.chunk_bytes + 64 * 1024;
	w->buf = xmalloc(w->cap);
	w->bytes = padded;
	if (w->o.zstd_level > 0)
		w->zctx = ZSTD_createCCtx();
	w->counts = !cnt_off();
	return w;
}

bool dp_ustack_delta_wanted(void)
{
	const char *e = getenv("DOMPROF_USTACK_DELTA");
	return !e || strcmp(e, "0") != 0;
}

uint64_t dp_writer_bytes(const struct dp_writer *w) { return w->bytes; }
uint64_t dp_writer_records(const struct dp_writer *w) { return w->records; }
uint64_t dp_writer_lost(const struct dp_writer *w) { return w->lost; }
uint64_t dp_writer_samples(const struct dp_writer *w) { return w->samples; }

/*
 * The open chunk's counts part (format/counts.h) after its records'
 * frame (zbuf[0..*stored)), as a zstd skippable frame: u32 magic, u32
 * size, u32 the part's decompressed length, u32 0, the part's zstd
 * frame. false (nothing added) when the chunk is better without one.
 * The cost, on the recorder's thread: one digest of the payload and the
 * part's compression, measured in bench/record-overhead and bench/format.
 */
static bool add_counts(struct dp_writer *w, size_t *stored)
{
	/* the digest is most of the cost (a third of bench/format's zstd
	 * write): after chunks that were better without a part, the next
	 * do not try (digest.h) */
	if (dg_backoff_skip(&w->cbo))
		return false;
	dg_build(&w->dg, w->buf, w->len, DG_BY_TID | DG_BY_CPU);
	size_t n = cnt_encode(&w->dg, w->buf, w->len, &w->cbuf, &w->ccap);
	dg_trim(&w->dg);
	dg_backoff_paid(&w->cbo, n != 0);
	if (!n)
		return false;
	/* zbuf has room for it (dp_writer_flush): n is at most half the payload */
	uint8_t *s = (uint8_t *)w->zbuf + *stored;
	size_t z = ZSTD_compressCCtx(w->zctx, s + 16, w->zcap - *stored - 16, w->cbuf, n, w->o.zstd_level);
	if (ZSTD_isError(z) || *stored + 16 + z > DP_CHUNK_MAX)
		return false;
	put32(s, CNT_SKIPPABLE);
	put32(s + 4, (uint32_t)(8 + z));
	put32(s + 8, (uint32_t)n);
	put32(s + 12, 0);
	*stored += 16 + z;
	return true;
}

int dp_writer_flush(struct dp_writer *w)
{
	if (w->err)
		return w->err;
	if (!w->len)
		return 0;
	const void *payload = w->buf;
	size_t stored = w->len;
	uint32_t flags = 0;
	if (w->zctx) {
		/* the records' frame, and room for a counts part after it */
		size_t bound = ZSTD_compressBound(w->len) +
			       (w->counts ? 16 + ZSTD_compressBound(w->len / 2) : 0);
		if (bound > w->zcap) {
			free(w->zbuf);
			w->zbuf = xmalloc(bound);
			w->zcap = bound;
		}
		size_t z = ZSTD_compressCCtx(w->zctx, w->zbuf, w->zcap, w->buf, w->len,
					     w->o.zstd_level);
		/* Store raw when compression does not pay: reading is
		 * cheaper. "Pays" is a sixteenth saved: a chunk of symbol
		 * tables that are zstd already (the kernel symbol index)
		 * saved 2% (701127 of 715320 bytes), and decompressing it
		 * cost a report 715 KB of fresh buffer, ~175 page faults
		 * (~0.4 ms of a 10 ms report), where a raw chunk is read in
		 * place from the mapped file. */
		if (!ZSTD_isError(z) && z < w->len - w->len / 16) {
			payload = w->zbuf;
			stored = z;
			flags |= DP_CHUNK_ZSTD;
			if (w->counts && add_counts(w, &stored))
				flags |= DP_CHUNK_COUNTS;
		}
	}
	uint8_t h[DP_CHUNK_HDR];
	put32(h + DP_CH_MAGIC, DP_CHUNK_MAGIC);
	put32(h + DP_CH_FLAGS, flags);
	put32(h + DP_CH_STORED, (uint32_t)stored);
	put32(h + DP_CH_RAW, (uint32_t)w->len);
	put32(h + DP_CH_NREC, w->nrec);
	put32(h + DP_CH_PAYLOAD_CRC, crc32c(0, payload, stored));
	put32(h + DP_CH_SEQ, w->seq);
	put32(h + DP_CH_HDR_CRC, crc32c(0, h, DP_CH_HDR_CRC));
	static const uint8_t zero[8];
	size_t pad = align8((uint32_t)stored) - stored;
	int r = file_write_all(w->fd, h, sizeof(h));
	if (!r)
		r = file_write_all(w->fd, payload, stored);
	if (!r && pad)
		r = file_write_all(w->fd, zero, pad);
	if (r < 0) {
		w->err = r;
		return r;
	}
	w->bytes += sizeof(h) + stored + pad;
	w->seq++;
	w->len = 0;
	w->nrec = 0;
	w->cur_domain = DP_HOST_DOMAIN;
	usd_reset(&w->usd);
	return 0;
}

/* Append room for one record of n bytes (a multiple of 8), growing the
 * buffer; never flushes, so a switch and its record stay together. */
static uint8_t *reserve_raw(struct dp_writer *w, size_t n)
{
	if (!w->len && w->o.chunk_ns)
		w->chunk_start_ns = mono_ns(); /* once per chunk */
	if (w->len + n > w->cap) {
		w->cap = w->len + n;
		w->buf = xrealloc(w->buf, w->cap);
	}
	uint8_t *p = w->buf + w->len;
	w->len += n;
	w->nrec++;
	w->records++;
	return p;
}

/* Reserve n bytes, flushing the open chunk first when it would overflow.
 * Returns NULL on a write error. */
static uint8_t *reserve(struct dp_writer *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->len && w->len + n > w->o.chunk_bytes && dp_writer_flush(w) < 0)
		return NULL;
	return reserve_raw(w, n);
}

/* After a record: flush by time, checking the clock every 256 records. */
static int after_record(struct dp_writer *w)
{
	if (w->err)
		return w->err;
	if (w->len >= w->o.chunk_bytes)
		return dp_writer_flush(w);
	if (w->o.chunk_ns && ++w->since_clock >= 256) {
		w->since_clock = 0;
		return dp_writer_tick(w);
	}
	return 0;
}

int dp_writer_tick(struct dp_writer *w)
{
	if (w->err)
		return w->err;
	if (w->len && w->o.chunk_ns && mono_ns() - w->chunk_start_ns >= w->o.chunk_ns)
		return dp_writer_flush(w);
	return 0;
}

static void rec_hdr(uint8_t *p, uint16_t type, uint16_t flags, size_t len)
{
	put16(p, type);
	put16(p + 2, flags);
	put32(p + 4, (uint32_t)len);
}

static size_t str_size(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 65534)
		n = 65534;
	return 2 + n + 1;
}

static uint8_t *put_str(uint8_t *p, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 65534)
		n = 65534;
	put16(p, (uint16_t)(n + 1));
	memcpy(p + 2, s ? s : "", n);
	p[2 + n] = 0;
	return p + 3 + n;
}

/*
 * Reserve a domain-scoped record of n bytes, preceded by a DOMAIN_SWITCH
 * when `domain` is not current. A flush (chunk full) resets the current
 * domain to the host, so the switch is decided after flushing, and the
 * switch and the record are then appended without another flush.
 */
static uint8_t *reserve_in(struct dp_writer *w, uint32_t domain, size_t n)
{
	if (w->err)
		return NULL;
	size_t need = n + (w->cur_domain == domain ? 0 : 16);
	if (w->len && w->len + need > w->o.chunk_bytes && dp_writer_flush(w) < 0)
		return NULL;
	if (w->cur_domain != domain) {
		uint8_t *p = reserve_raw(w, 16);
		rec_hdr(p, DP_REC_DOMAIN_SWITCH, 0, 16);
		put32(p + 8, domain);
		put32(p + 12, 0);
		w->cur_domain = domain;
	}
	return reserve_raw(w, n);
}

/* A sample's user registers and stack (1.4) as the header says the
 * writer takes them; false for what it refuses. */
static bool ustack_ok(const struct dp_sample *s)
{
	return !s->has_uregs ||
	       (s->ustack_size <= DP_MAX_USTACK && s->ustack_len <= s->ustack_size &&
		(s->uregs || !s->uregs_mask) && (s->ustack || !s->ustack_len));
}

/* The size of a sample's record, header included; with `lit` (delta
 * form, 1.5) the user stack takes 8 bytes and lit literal bytes instead
 * of its whole length. */
static size_t sample_size(const struct dp_sample *s, uint32_t nr, uint16_t *flags, bool delta,
			  uint32_t lit)
{
	size_t n = DP_REC_HDR + DP_SAMPLE_FIXED;
	*flags = 0;
	if (s->has_asid) {
		*flags |= DP_SAMPLE_F_ASID;
		n += 8;
	}
	if (nr) {
		*flags |= DP_SAMPLE_F_CHAIN;
		n += 8 + 8 * (size_t)nr;
	}
	if (s->has_uregs) {
		*flags |= delta ? DP_SAMPLE_F_USTACK_DELTA : DP_SAMPLE_F_USTACK;
		n += DP_USTACK_FIXED + 8 * (size_t)dp_uregs_count(s->uregs_mask) +
		     (delta ? 8 + align8(lit) : align8(s->ustack_len));
	}
	return n;
}

/* Encode a sample of n bytes (sample_size) at p; with `delta`, its user
 * stack as head bytes, a run of `run` bytes from the thread's previous
 * stack, and the rest. */
static void sample_encode(uint8_t *p, const struct dp_sample *s, uint32_t nr, uint16_t flags,
			  size_t n, bool delta, uint32_t head, uint32_t run)
{
	rec_hdr(p, DP_REC_SAMPLE, flags, n);
	put64(p + 8, s->time);
	put64(p + 16, s->ip);
	put64(p + 24, s->period);
	put32(p + 32, s->pid);
	put32(p + 36, s->tid);
	put32(p + 40, s->cpu);
	put16(p + 44, s->event);
	p[46] = s->mode;
	p[47] = 0;
	uint8_t *q = p + 48;
	if (s->has_asid) {
		put64(q, s->asid);
		q += 8;
	}
	if (nr) {
		put32(q, nr);
		put32(q + 4, 0);
		memcpy(q + 8, s->callchain, 8 * (size_t)nr);
		q += 8 + 8 * (size_t)nr;
	}
	if (s->has_uregs) {
		uint32_t nregs = dp_uregs_count(s->uregs_mask);
		put64(q, s->uregs_mask);
		put32(q + 8, s->uregs_abi);
		put32(q + 12, 0);
		put32(q + 16, s->ustack_size);
		put32(q + 20, s->ustack_len);
		q += DP_USTACK_FIXED;
		for (uint32_t i = 0; i < nregs; i++, q += 8)
			put64(q, s->uregs[i]);
		uint32_t lit = s->ustack_len;
		if (delta) {
			put32(q, head);
			put32(q + 4, run);
			q += 8;
			lit = s->ustack_len - run;
			if (head)
				memcpy(q, s->ustack, head);
			if (lit - head)
				memcpy(q + head, s->ustack + head + run, lit - head);
		} else if (lit) {
			memcpy(q, s->ustack, lit);
		}
		memset(q + lit, 0, align8(lit) - lit);
	}
}

size_t dp_sample_encode(const struct dp_sample *s, void *buf, size_t cap)
{
	uint32_t nr = s->nr_callchain;
	if (nr > DP_MAX_CALLCHAIN)
		nr = DP_MAX_CALLCHAIN;
	if (!ustack_ok(s))
		return 0;
	uint16_t flags;
	size_t n = sample_size(s, nr, &flags, false, 0);
	if (n <= cap)
		sample_encode(buf, s, nr, flags, n, false, 0, 0);
	return n;
}

int dp_write_sample(struct dp_writer *w, uint32_t domain, const struct dp_sample *s)
{
	uint32_t nr = s->nr_callchain;
	if (nr > DP_MAX_CALLCHAIN)
		nr = DP_MAX_CALLCHAIN;
	if (!ustack_ok(s))
		return -EINVAL; /* the caller's bug: the writer stays usable */
	uint16_t flags;
	size_t n = sample_size(s, nr, &flags, false, 0);
	bool delta = false;
	uint32_t head = 0, run = 0;
	if (w->o.ustack_delta && s->has_uregs) {
		if (w->err)
			return w->err;
		/* A flush resets the thread table: flush first if the whole
		 * record (and a switch) might not fit, so the table the delta
		 * is taken from is the chunk's it goes into (reserve_in then
		 * does not flush). */
		if (w->len && w->len + n + 16 > w->o.chunk_bytes && dp_writer_flush(w) < 0)
			return w->err;
		struct usd_thread *th = usd_get(&w->usd, domain, s->tid, true);
		uint64_t sp;
		bool has_sp = dp_sample_ureg(s, DP_X86_REG_SP, &sp);
		if (th && has_sp && usd_diff(th, sp, s->ustack_len, s->ustack, &head, &run) &&
		    usd_apply(&w->usd, th, sp, s->ustack_len, head, run, s->ustack,
			      s->ustack + head + run))
			delta = true;
		else if (th && has_sp)
			usd_full(&w->usd, th, sp, s->ustack_len, s->ustack, true);
		else if (th)
			th->has_prev = false;
		if (delta)
			n = sample_size(s, nr, &flags, true, s->ustack_len - run);
	}
	uint8_t *p = reserve_in(w, domain, n);
	if (!p)
		return w->err;
	w->samples++;
	sample_encode(p, s, nr, flags, n, delta, head, run);
	return after_record(w);
}

int dp_write_event(struct dp_writer *w, const struct dp_event *ev)
{
	size_t n = align8((uint32_t)(DP_REC_HDR + 32 + str_size(ev->name)));
	uint8_t *p = reserve(w, n);
	if (!p)
		return w->err;
	memset(p, 0, n);
	rec_hdr(p, DP_REC_EVENT, 0, n);
	put32(p + 8, ev->id);
	put32(p + 12, ev->type);
	put64(p + 16, ev->config);
	put64(p + 24, ev->period);
	put32(p + 32, ev->freq ? 1 : 0);
	put_str(p + 40, ev->name);
	return after_record(w);
}

int dp_write_domain(struct dp_writer *w, const struct dp_domain *d)
{
	size_t n = align8((uint32_t)(DP_REC_HDR + 24 + str_size(d->name) +
				     str_size(d->address) + str_size(d->symsrc)));
	uint8_t *p = reserve(w, n);
	if (!p)
		return w->err;
	memset(p, 0, n);
	rec_hdr(p, DP_REC_DOMAIN, 0, n);
	put32(p + 8, d->id);
	p[12] = d->kind;
	put32(p + 16, d->vcpus);
	put64(p + 24, d->kaslr_offset);
	uint8_t *q = put_str(p + 32, d->name);
	q = put_str(q, d->address);
	put_str(q, d->symsrc);
	return after_record(w);
}

int dp_write_task(struct dp_writer *w, uint32_t domain, const struct dp_task *t)
{
	size_t head = align8((uint32_t)(DP_REC_HDR + 32 + str_size(t->comm)));
	size_t n = head + (t->has_asid ? DP_TASK_ASID : 0);
	uint8_t *p = reserve_in(w, domain, n);
	if (!p)
		return w->err;
	memset(p, 0, n);
	rec_hdr(p, DP_REC_TASK, 0, n);
	p[8] = t->kind;
	put32(p + 12, t->pid);
	put32(p + 16, t->tid);
	put32(p + 20, t->ppid);
	put32(p + 24, t->ptid);
	put64(p + 32, t->time);
	put_str(p + 40, t->comm);
	if (t->has_asid) {
		put32(p + head, 1);
		put64(p + head + 8, t->asid);
	}
	return after_record(w);
}

int dp_write_mmap(struct dp_writer *w, uint32_t domain, const struct dp_mmap *m)
{
	size_t head = align8((uint32_t)(DP_REC_HDR + 64 + str_size(m->path)));
	size_t n = head + (m->has_ident ? DP_MMAP_IDENT : 0);
	uint8_t *p = reserve_in(w, domain, n);
	if (!p)
		return w->err;
	memset(p, 0, n);
	rec_hdr(p, DP_REC_MMAP, 0, n);
	uint8_t bl = m->buildid_len > 20 ? 20 : m->buildid_len;
	put32(p + 8, m->pid);
	p[12] = bl;
	put64(p + 16, m->start);
	put64(p + 24, m->len);
	put64(p + 32, m->pgoff);
	put64(p + 40, m->time);
	memcpy(p + 48, m->buildid, bl);
	put_str(p + 72, m->path);
	if (m->has_ident) { /* 1.1: appended at the next 8-byte boundary */
		put32(p + head, 1);
		put64(p + head + 8, m->dev);
		put64(p + head + 16, m->ino);
		put64(p + head + 24, m->size);
		put64(p + head + 32, m->mtime_ns);
	}
	return after_record(w);
}

int dp_write_lost(struct dp_writer *w, const struct dp_lost *l)
{
	uint8_t *p = reserve(w, 24);
	if (!p)
		return w->err;
	rec_hdr(p, DP_REC_LOST, 0, 24);
	put64(p + 8, l->count);
	put32(p + 16, l->source);
	put32(p + 20, l->where);
	w->lost = sat_add64(w->lost, l->count);
	return after_record(w);
}

int dp_write_stats(struct dp_writer *w, const struct dp_stats *st)
{
	/* the totals of format 1.1: what this writer wrote before the record */
	uint64_t records = w->records, samples = w->samples;
	uint8_t *p = reserve(w, 72);
	if (!p)
		return w->err;
	rec_hdr(p, DP_REC_STATS, 0, 72);
	put64(p + 8, st->samples);
	put64(p + 16, st->lost);
	put64(p + 24, st->start_time);
	put64(p + 32, st->end_time);
	put64(p + 40, st->wall_ns);
	put32(p + 48, st->exit_status);
	put32(p + 52, st->flags);
	put64(p + 56, records);
	put64(p + 64, samples);
	return after_record(w);
}

int dp_write_counters(struct dp_writer *w, uint32_t domain, const struct dp_counters *c)
{
	/* refused before anything is reserved: a bad name is the caller's
	 * bug, not a write error, and must not poison the writer */
	if (!c || c->n > DP_MAX_COUNTERS || (c->n && !c->c))
		return -EINVAL;
	size_t n = DP_REC_HDR + DP_COUNTERS_FIXED;
	for (uint32_t i = 0; i < c->n; i++) {
		const char *name = c->c[i].name;
		size_t len = name ? strnlen(name, DP_MAX_COUNTER_NAME + 1) : 0;
		if (!name || !dp_counter_name_ok(name, len))
			return -EINVAL;
		n += DP_COUNTER_ENTRY + len;
	}
	if (!c->n)
		return w->err;
	n = align8((uint32_t)n);  /* <= 8 + 8 + 256 * 74: small */
	uint8_t *p = reserve_in(w, domain, n);
	if (!p)
		return w->err;
	memset(p, 0, n);
	rec_hdr(p, DP_REC_COUNTERS, 0, n);
	put32(p + 8, c->n);
	uint8_t *q = p + DP_REC_HDR + DP_COUNTERS_FIXED;
	for (uint32_t i = 0; i < c->n; i++) {
		size_t len = strlen(c->c[i].name);
		put64(q, c->c[i].value);
		put16(q + 8, (uint16_t)len);
		memcpy(q + DP_COUNTER_ENTRY, c->c[i].name, len);
		q += DP_COUNTER_ENTRY + len;
	}
	return after_record(w);
}

int dp_write_symtab(struct dp_writer *w, uint32_t domain, const struct dp_symtab *st)
{
	if (st->size > DP_SYMTAB_MAX_RAW)
		return -EFBIG;
	/* a kernel symbol index is compressed block by block already, and
	 * its name filter is bits that do not compress */
	bool plain = st->kind == DP_SYMTAB_KSYMIDX || st->kind == DP_SYMTAB_KSYMNF;
	size_t bound = plain ? 1 : ZSTD_compressBound(st->size);
	uint8_t *z = xmalloc(bound);
	/* A 128 KiB window instead of level 3's default 2 MiB: a report
	 * streams the table with a decoder whose buffer follows the window,
	 * and the ratio barely changes for symbol text. */
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	/* Symbol text (kallsyms, System.map, modules) is written once per
	 * recording and read by every report: level 6 stores it ~15% smaller
	 * for ~30 ms. ELF files (an agent may send tens of MB) stay at 3. */
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, st->kind == DP_SYMTAB_ELF ? 3 : 6);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 17);
	size_t zn = plain ? 0 : ZSTD_compress2(cc, z, bound, st->data, st->size);
	ZSTD_freeCCtx(cc);
	uint32_t comp = 1;
	const uint8_t *data = z;
	if (plain || ZSTD_isError(zn) || zn >= st->size) {
		comp = 0;
		data = st->data;
		zn = st->size;
	}
	size_t head = align8((uint32_t)(DP_REC_HDR + 24 + str_size(st->name)));
	size_t n = head + align8((uint32_t)zn);
	if (n > DP_CHUNK_MAX / 2) {
		free(z);
		return -EFBIG;
	}
	uint8_t *p = reserve_in(w, domain, n);
	if (!p) {
		free(z);
		return w->err;
	}
	memset(p, 0, n);
	rec_hdr(p, DP_REC_SYMTAB, 0, n);
	put32(p + 8, st->kind);
	put32(p + 12, comp);
	put64(p + 16, st->size);
	put64(p + 24, zn);
	put_str(p + 32, st->name);
	memcpy(p + head, data, zn);
	free(z);
	return after_record(w);
}

int dp_write_raw(struct dp_writer *w, uint32_t domain, const void *raw, size_t len)
{
	if (len < DP_REC_HDR || len % 8 || get32((const uint8_t *)raw + 4) != len)
		return -EINVAL;
	uint16_t type = get16(raw), flags = get16((const uint8_t *)raw + 2);
	if (type == DP_REC_DOMAIN_SWITCH)
		return 0; /* the writer owns switches */
	if (type == DP_REC_SAMPLE && (flags & DP_SAMPLE_F_USTACK_DELTA))
		return -EINVAL; /* refers to its chunk's earlier stacks: not a record alone */
	bool scoped = type == DP_REC_TASK || type == DP_REC_MMAP ||
		      type == DP_REC_SAMPLE || type == DP_REC_SYMTAB || type == DP_REC_COUNTERS ||
		      type > DP_REC_MAX_KNOWN;
	uint8_t *p = scoped ? reserve_in(w, domain, len) : reserve(w, len);
	if (!p)
		return w->err;
	if (type == DP_REC_SAMPLE)
		w->samples++;
	memcpy(p, raw, len);
	if (type == DP_REC_SAMPLE && (flags & DP_SAMPLE_F_USTACK) && w->o.ustack_delta &&
	    len >= DP_REC_HDR + DP_SAMPLE_FIXED) {
		/* the reader takes this stack for the thread's previous one;
		 * the writer, which has not kept it, stores the next whole */
		struct usd_thread *th = usd_get(&w->usd, domain, get32((const uint8_t *)raw + 36), true);
		if (th)
			th->has_prev = false;
	}
	return after_record(w);
}

int dp_writer_finish(struct dp_writer *w)
{
	int r = dp_writer_flush(w);
	if (!r && fsync(w->fd) < 0 && errno != EINVAL && errno != EROFS)
		r = -errno;
	if (close(w->fd) < 0 && !r)
		r = -errno;
	w->fd = -1;
	if (!r)
		r = w->err;
	dp_writer_free(w);
	return r;
}

void dp_writer_free(struct dp_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->zctx);
	dg_release(&w->dg);
	free(w->cbuf);
	usd_free(&w->usd);
	free(w->zbuf);
	free(w->buf);
	free(w);
}
