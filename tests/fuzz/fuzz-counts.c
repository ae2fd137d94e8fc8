// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a chunk's counts part (src/format/counts.h, format
 * 1.6) is hostile input. The input is u32 nrec (the chunk header's
 * record count), u32 raw (its decompressed size, bounded here to 1 MiB
 * as the reader bounds it to PF_MAX_RAW), then the chunk's stored
 * payload: cnt_decode finds, decompresses and checks the part; the same
 * bytes are also given to cnt_read as a part already decompressed, so
 * the checks are reached without zstd in the way. What either accepts
 * must keep its promises, or the fuzzer traps: every item's record
 * framed inside the records, a group's record a plain sample of at
 * least one sample, groups and single records adding up to nrec.
 *
 * A part that decodes is also compared with the chunk's records frame
 * (cnt_agrees, what info and report --verify do), and one read as
 * decompressed with its own records and with the whole input as the
 * records (hostile records): whatever they hold, no crash.
 *
 * With FUZZ_COUNTS_VERBOSE set, the decode's result is printed on stderr
 * ("fuzz-counts: ok N items, G groups, S samples" or "fuzz-counts:
 * refused", then "fuzz-counts: agrees with its records" or
 * "fuzz-counts: disagrees: WHY" when the records frame decodes too;
 * tests/e2e/fuzz-counts.sh checks its seeds and a control).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/counts.h"
#include "format/wire.h"

#define RAW_MAX (1u << 20)

/* what an accepted part promises the reader (reader.c next_item) */
static void promises(const struct dp_digest *d, const uint8_t *recs, size_t rlen, uint32_t nrec)
{
	uint64_t total = 0, samples = 0;
	size_t pos = 0;
	for (size_t i = 0; i < d->nitems; i++) {
		uint32_t it = d->items[i];
		size_t off = it & DG_GROUP ? d->groups[it & ~DG_GROUP].off : it;
		if (off != pos || rlen - pos < DP_REC_HDR)
			__builtin_trap();
		uint32_t len = get32(recs + off + 4);
		if (len < DP_REC_HDR || len > rlen - off)
			__builtin_trap();
		if (it & DG_GROUP) {
			const struct dg_group *g = &d->groups[it & ~DG_GROUP];
			if ((it & ~DG_GROUP) >= d->ngroups || !g->count || !dg_plain(recs + off, len))
				__builtin_trap();
			total += g->count;
			samples += g->count;
		} else {
			total++;
		}
		pos += len;
	}
	if (pos != rlen || total != nrec || samples != d->nsamples)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ZSTD_DCtx *dctx;
	if (!dctx)
		dctx = ZSTD_createDCtx();
	if (size < 8)
		return 0;
	uint32_t nrec = get32(data), raw = get32(data + 4);
	const uint8_t *pl = data + 8;
	size_t stored = size - 8;
	if (raw > RAW_MAX)
		raw = RAW_MAX;
	static struct dp_digest mine;   /* cnt_agrees' digest of the records, kept */
	struct dp_digest d = { 0 };
	const uint8_t *recs;
	size_t rlen;
	uint8_t *buf = malloc(raw ? raw : 1);
	bool ok = cnt_decode(dctx, pl, (uint32_t)stored, raw, nrec, buf, &d, &recs, &rlen);
	int agrees = -1;   /* the part against the chunk's records frame, when both decode */
	char why[256];
	if (ok) {
		if (recs < buf || recs + rlen > buf + raw)
			__builtin_trap();
		promises(&d, recs, rlen, nrec);
		uint8_t *rbuf = malloc(raw ? raw : 1);
		size_t n = ZSTD_decompressDCtx(dctx, rbuf, raw, pl, stored);
		if (!ZSTD_isError(n) && n == raw)
			agrees = cnt_agrees(&d, recs, rlen, rbuf, raw, &mine, why, sizeof(why));
		free(rbuf);
	}
	if (getenv("FUZZ_COUNTS_VERBOSE")) {
		if (ok)
			fprintf(stderr, "fuzz-counts: ok %zu items, %zu groups, %zu samples\n", d.nitems, d.ngroups,
				d.nsamples);
		else
			fprintf(stderr, "fuzz-counts: refused\n");
		if (agrees >= 0)
			fprintf(stderr, "fuzz-counts: %s%s\n", agrees ? "agrees with its records" : "disagrees: ",
				agrees ? "" : why);
	}
	free(buf);
	/* the same bytes as a decompressed part (8-aligned, as reader buffers are) */
	uint8_t *copy = malloc(stored ? stored : 1);
	memcpy(copy, pl, stored);
	if (cnt_read(copy, stored, nrec, &d, &recs, &rlen)) {
		if (recs < copy || recs + rlen > copy + stored)
			__builtin_trap();
		promises(&d, recs, rlen, nrec);
		/* against hostile records: the part's own, and the whole input */
		if (!cnt_agrees(&d, recs, rlen, recs, rlen, &mine, why, sizeof(why)) && !memchr(why, 0, sizeof(why)))
			__builtin_trap();
		(void)cnt_agrees(&d, recs, rlen, copy, stored, &mine, why, sizeof(why));
	}
	free(copy);
	dg_release(&d);
	return 0;
}
