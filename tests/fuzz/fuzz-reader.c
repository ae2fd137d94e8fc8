// SPDX-License-Identifier: MIT
/* libFuzzer target: the file reader must survive any bytes (also the
 * pointers it returns: chains, user registers and stacks, counter names,
 * table data are read). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
