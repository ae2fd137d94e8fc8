// SPDX-License-Identifier: MIT
/*
 * Parallel chunk decoding for the reader (see prefetch.h): a ring of
 * slots in file order, each a queued chunk and, once decoded, its result.
 * Workers take the first queued slot; the reader takes the slot of the
 * chunk it enters from the head of the ring, dropping slots of chunks it
 * skipped, and decodes a slot no worker has started itself rather than
 * wait. One mutex guards the ring; decoding runs outside it.
 */
#include "format/prefetch.h"
#include "format/counts.h"
#include "format/digest.h"
#include "format/wire.h"
#include "util/crc32c.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

enum { SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

struct slot {
	uint64_t off, end;
	const uint8_t *pl;
	uint32_t stored, raw, flags, crc, nrec;
	unsigned digest;        /* pf_submit's: PF_DIGEST | DG_*, or 0 */
	uint64_t cost;          /* its share of pf->bytes */
	int state;
	struct pf_result res;
	uint8_t *buf;           /* kept across uses (at most PF_MAX_RAW) */
	size_t cap;
	struct dp_digest dg;    /* kept across uses */
};

struct dp_prefetch {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct slot slots[PF_SLOTS_MAX];
	unsigned nslots;        /* ring size in use */
	unsigned head, count;   /* the ring: slots[head .. head + count) */
	bool held;              /* the head slot's result is the reader's */
	size_t bytes;           /* raw bytes (and digests' payloads) of the slots in the ring */
	uint64_t queued_end;
	bool stop;
	pthread_t th[PF_THREADS_MAX];
	unsigned nth;
	ZSTD_DCtx *dctx;        /* for slots the reader decodes itself */
};

static struct slot *at(struct dp_prefetch *pf, unsigned i)
{
	return &pf->slots[(pf->head + i) % pf->nslots];
}

/* What reader.c's next_chunk computes for the chunk (outside the lock),
 * and on a worker (worker true) the digest asked for. Not on the
 * reader's own thread: next_chunk makes the digest there, into the
 * reader's own. */
static void decode_slot(struct slot *s, ZSTD_DCtx *dctx, bool worker)
{
	s->res.crc_ok = crc32c(0, s->pl, s->stored) == s->crc;
	s->res.dec_ok = false;
	s->res.data = NULL;
	s->res.len = 0;
	s->res.dg = NULL;
	s->res.counts = false;
	if (!s->res.crc_ok)
		return;
	if (!(s->flags & DP_CHUNK_ZSTD)) {
		if (worker && s->digest) {
			dg_build(&s->dg, s->pl, s->stored, s->digest & ~(PF_DIGEST | PF_COUNTS));
			s->res.dg = &s->dg;
		}
		return;
	}
	if (s->raw > s->cap) {
		free(s->buf);
		s->buf = xmalloc(s->raw);
		s->cap = s->raw;
	}
	const uint8_t *recs;
	size_t rlen;
	if ((s->digest & PF_COUNTS) && (s->flags & DP_CHUNK_COUNTS) &&
	    cnt_decode(dctx, s->pl, s->stored, s->raw, s->nrec, s->buf, &s->dg, &recs, &rlen)) {
		s->res.dec_ok = s->res.counts = true;
		s->res.data = recs;
		s->res.len = rlen;
		s->res.dg = &s->dg;
		return;
	}
	size_t n = ZSTD_decompressDCtx(dctx, s->buf, s->raw, s->pl, s->stored);
	s->res.dec_ok = !ZSTD_isError(n) && n == s->raw;
	s->res.data = s->buf;
	s->res.len = s->raw;
	if (worker && s->digest && s->res.dec_ok) {
		dg_build(&s->dg, s->buf, s->raw, s->digest & ~(PF_DIGEST | PF_COUNTS));
		s->res.dg = &s->dg;
	}
}

/* The first queued slot of the ring from index from on, NULL when none
 * (lock held) */
static struct slot *first_queued(struct dp_prefetch *pf, unsigned from)
{
	for (unsigned i = from; i < pf->count; i++)
		if (at(pf, i)->state == SLOT_QUEUED)
			return at(pf, i);
	return NULL;
}

static void *worker(void *arg)
{
	struct dp_prefetch *pf = arg;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	pthread_mutex_lock(&pf->mu);
	for (;;) {
		struct slot *s = first_queued(pf, 0);
		if (pf->stop)
			break;
		if (!s || !dctx) {
			pthread_cond_wait(&pf->work, &pf->mu);
			continue;
		}
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&pf->mu);
		decode_slot(s, dctx, true);
		pthread_mutex_lock(&pf->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&pf->done);
	}
	pthread_mutex_unlock(&pf->mu);
	ZSTD_freeDCtx(dctx);
	return NULL;
}

struct dp_prefetch *pf_new(unsigned threads)
{
	if (threads < 1)
		return NULL;
	if (threads > PF_THREADS_MAX)
		threads = PF_THREADS_MAX;
	struct dp_prefetch *pf = xcalloc(1, sizeof(*pf));
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->work, NULL);
	pthread_cond_init(&pf->done, NULL);
	/* A chunk for each worker and the reader to decode at once, plus the
	 * one the reader holds: enough to keep them all busy. More slots
	 * only hold more decoded chunks (4 * (threads + 1) held 8 MiB of
	 * 1 MiB chunks on 2 CPUs: a third of a small report's peak memory,
	 * for no speed; docs/dwarf-notes.md, "Report time and memory"). */
	pf->nslots = threads + 2;
	if (pf->nslots > PF_SLOTS_MAX)
		pf->nslots = PF_SLOTS_MAX;
	pf->dctx = ZSTD_createDCtx();
	for (unsigned i = 0; i < threads && pf->dctx; i++) {
		if (pthread_create(&pf->th[pf->nth], NULL, worker, pf))
			break;
		pf->nth++;
	}
	if (!pf->nth) {
		pf_free(pf);
		return NULL;
	}
	return pf;
}

/* Wait until no worker decodes a slot of the ring (lock held). */
static void quiesce(struct dp_prefetch *pf)
{
	for (;;) {
		bool running = false;
		for (unsigned i = 0; i < pf->count; i++)
			running |= at(pf, i)->state == SLOT_RUNNING;
		if (!running)
			return;
		pthread_cond_wait(&pf->done, &pf->mu);
	}
}

/* Drop the head slot (lock held, the slot not running). Its buffer is
 * kept for the next use of the slot. */
static void pop(struct dp_prefetch *pf)
{
	struct slot *s = at(pf, 0);
	pf->bytes -= s->cost;
	s->state = SLOT_DONE;
	s->pl = NULL;
	if (s->cap > (2u << 20)) {
		/* a large chunk's buffer is not kept: the ring may hold a
		 * PF_MAX_BYTES of them, not a PF_MAX_RAW in every slot */
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
	dg_trim(&s->dg);   /* nor a large digest */
	pf->head = (pf->head + 1) % pf->nslots;
	pf->count--;
	pf->held = false;
	if (!pf->count)
		pf->queued_end = 0;
}

void pf_free(struct dp_prefetch *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->stop = true;
	pthread_cond_broadcast(&pf->work);
	pthread_mutex_unlock(&pf->mu);
	for (unsigned i = 0; i < pf->nth; i++)
		pthread_join(pf->th[i], NULL);
	for (unsigned i = 0; i < PF_SLOTS_MAX; i++) {
		free(pf->slots[i].buf);
		dg_release(&pf->slots[i].dg);
	}
	ZSTD_freeDCtx(pf->dctx);
	pthread_cond_destroy(&pf->work);
	pthread_cond_destroy(&pf->done);
	pthread_mutex_destroy(&pf->mu);
	free(pf);
}

bool pf_submit(struct dp_prefetch *pf, uint64_t off, const uint8_t *pl, uint32_t stored,
	       uint32_t raw, uint32_t flags, uint32_t crc, uint32_t nrec, unsigned digest)
{
	uint32_t need = flags & DP_CHUNK_ZSTD ? raw : 0;
	/* a digest takes up to about as much again as its payload (digest.h):
	 * counted in the bound, and none for a payload over PF_MAX_RAW */
	uint32_t plen = flags & DP_CHUNK_ZSTD ? raw : stored;
	if (plen > PF_MAX_RAW)
		digest = 0;
	uint64_t cost = (uint64_t)need + (digest ? plen : 0);
	pthread_mutex_lock(&pf->mu);
	bool ok = pf->count < pf->nslots && need <= PF_MAX_RAW && pf->bytes + cost <= PF_MAX_BYTES;
	if (ok) {
		struct slot *s = at(pf, pf->count);
		s->off = off;
		s->end = off + DP_CHUNK_HDR + align8(stored);
		s->pl = pl;
		s->stored = stored;
		s->raw = need;
		s->flags = flags;
		s->crc = crc;
		s->nrec = nrec;
		s->digest = digest;
		s->cost = cost;
		s->state = SLOT_QUEUED;
		pf->count++;
		pf->bytes += cost;
		pf->queued_end = s->end;
		pthread_cond_signal(&pf->work);
	}
	pthread_mutex_unlock(&pf->mu);
	return ok;
}

uint64_t pf_queued_end(const struct dp_prefetch *pf)
{
	return pf->queued_end;  /* written only by the reader's thread */
}

const struct pf_result *pf_take(struct dp_prefetch *pf, uint64_t off)
{
	pthread_mutex_lock(&pf->mu);
	if (pf->held)
		pop(pf);
	struct slot *s = NULL;
	while (pf->count) {
		struct slot *h = at(pf, 0);
		if (h->off == off) {
			s = h;
			break;
		}
		if (h->off > off)
			break;
		/* a chunk the reader skipped: drop it once no worker is on it */
		if (h->state == SLOT_RUNNING)
			pthread_cond_wait(&pf->done, &pf->mu);
		else
			pop(pf);
	}
	if (s && s->state == SLOT_QUEUED) {
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&pf->mu);
		decode_slot(s, pf->dctx, false);
		pthread_mutex_lock(&pf->mu);
		s->state = SLOT_DONE;
	}
	while (s && s->state != SLOT_DONE) {
		/* A worker is on this chunk: decode a later one meanwhile, as
		 * a worker would (its digest too). Waiting instead left the
		 * reader idle behind a single worker, whose speed then bounded
		 * the read: -j 2 was no faster than -j 1. */
		struct slot *q = first_queued(pf, 1);
		if (!q) {
			pthread_cond_wait(&pf->done, &pf->mu);
			continue;
		}
		q->state = SLOT_RUNNING;
		pthread_mutex_unlock(&pf->mu);
		decode_slot(q, pf->dctx, true);
		pthread_mutex_lock(&pf->mu);
		q->state = SLOT_DONE;
	}
	if (s)
		pf->held = true;
	pthread_mutex_unlock(&pf->mu);
	return s ? &s->res : NULL;
}

void pf_release(struct dp_prefetch *pf)
{
	pthread_mutex_lock(&pf->mu);
	if (pf->held)
		pop(pf);
	pthread_mutex_unlock(&pf->mu);
}

void pf_reset(struct dp_prefetch *pf)
{
	pthread_mutex_lock(&pf->mu);
	quiesce(pf);
	while (pf->count)
		pop(pf);
	pthread_mutex_unlock(&pf->mu);
}
