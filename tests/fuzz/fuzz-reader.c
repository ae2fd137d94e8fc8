// SPDX-License-Identifier: MIT
/* libFuzzer target: the file reader must survive any bytes (also the
 * pointers it returns: chains, user registers and stacks, counter names,
 * table data are read), and a read on 2 threads (dp_reader_set_threads)
 * must return the same records and damage as the read on one: any
 * difference traps. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/format.h"

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Records (type, domain, bytes) and damage of one pass on `threads`. */
static uint64_t digest(const uint8_t *data, size_t size, unsigned threads)
{
	int err;
	struct dp_reader *r = dp_reader_open_mem(data, size, &err, NULL, 0);
	if (!r)
		return 0;
	if (dp_reader_set_threads(r, threads))
		__builtin_trap();
	struct dp_record rec;
	uint64_t h = 0xcbf29ce484222325ull;
	while (dp_reader_next(r, &rec) > 0) {
		h = fold(h, &rec.type, sizeof(rec.type));
		h = fold(h, &rec.domain, sizeof(rec.domain));
		h = fold(h, rec.raw, rec.raw_len);
	}
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	for (size_t i = 0; i < nd; i++)
		h = fold(h, d[i].what, strlen(d[i].what));
	dp_reader_free(r);
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (digest(data, size, 1) != digest(data, size, 2))
		__builtin_trap();
	int err;
	char msg[128];
	struct dp_reader *r = dp_reader_open_mem(data, size, &err, msg, sizeof(msg));
	if (!r)
		return 0;
	struct dp_record rec;
	volatile uint64_t sink = 0;
	for (int pass = 0; pass < 2; pass++) {
		while (dp_reader_next(r, &rec) > 0) {
			sink += rec.type + rec.domain;
			if (rec.type == DP_REC_SAMPLE)
				for (uint32_t i = 0; i < rec.u.sample.nr_callchain; i++)
					sink += rec.u.sample.callchain[i];
			if (rec.type == DP_REC_SAMPLE && rec.u.sample.has_uregs) {
				const struct dp_sample *s = &rec.u.sample;
				for (uint32_t i = 0; i < dp_uregs_count(s->uregs_mask); i++)
					sink += s->uregs[i];
				if (s->ustack_len)  /* both ends of the stack */
					sink += s->ustack[0] + s->ustack[s->ustack_len - 1];
				sink += s->ustack_len <= s->ustack_size && s->ustack_size <= DP_MAX_USTACK;
			}
			if (rec.type == DP_REC_COUNTERS)
				for (uint32_t i = 0; i < rec.u.counters.n; i++)
					sink += rec.u.counters.c[i].value +
						(uint8_t)rec.u.counters.c[i].name[strlen(rec.u.counters.c[i].name)];
			if (rec.type == DP_REC_SYMTAB && rec.u.symtab.size)
				sink += rec.u.symtab.data[rec.u.symtab.size - 1];
		}
		dp_reader_rewind(r);
	}
	dp_reader_free(r);
	return 0;
}
