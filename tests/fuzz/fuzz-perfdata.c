// SPDX-License-Identifier: MIT
/* libFuzzer target: the perf.data reader (src/format/perfdata.c, behind
 * dp_reader) must survive any bytes that start with perf's magic, in the
 * file and the pipe form, with a guest machine named and given its
 * kallsyms; the pointers it returns (chains, user registers and stacks,
 * strings, the guest's table) are read. FUZZ_PERFDATA_VERBOSE=1 prints
 * what one input held (the known answer of tests/e2e/fuzz-perfdata.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int err;
	char msg[128];
	struct dp_reader *r = dp_reader_open_mem(data, size, &err, msg, sizeof(msg));
	if (!r)
		return 0;
	static const char ks[] = "ffffffff81001000 T guest_fn_a\n";
	struct dp_perf_guest g = { .pid = 4242, .name = "vm1", .symtab_kind = DP_SYMTAB_KALLSYMS,
				   .syms = (const uint8_t *)ks, .syms_len = sizeof(ks) - 1 };
	dp_reader_perf_guest(r, &g);
	struct dp_record rec;
	volatile uint64_t sink = 0;
	uint64_t samples = 0, guest = 0;
	for (int pass = 0; pass < 2; pass++) {
		samples = guest = 0;
		while (dp_reader_next(r, &rec) > 0) {
			sink += rec.type + rec.domain;
			switch (rec.type) {
			case DP_REC_SAMPLE: {
				const struct dp_sample *s = &rec.u.sample;
				samples++;
				guest += rec.domain != 0;
				for (uint32_t i = 0; i < s->nr_callchain; i++)
					sink += s->callchain[i];
				if (s->has_uregs) {
					for (uint32_t i = 0; i < dp_uregs_count(s->uregs_mask); i++)
						sink += s->uregs[i];
					if (s->ustack_len)
						sink += s->ustack[0] + s->ustack[s->ustack_len - 1];
				}
				break;
			}
			case DP_REC_MMAP: sink += strlen(rec.u.mmap.path) + rec.u.mmap.buildid[19]; break;
			case DP_REC_TASK: sink += strlen(rec.u.task.comm); break;
			case DP_REC_EVENT: sink += strlen(rec.u.event.name); break;
			case DP_REC_DOMAIN: sink += strlen(rec.u.domain.name) + strlen(rec.u.domain.symsrc); break;
			case DP_REC_SYMTAB:
				if (rec.u.symtab.size)
					sink += rec.u.symtab.data[rec.u.symtab.size - 1];
				break;
			}
		}
		const char *note = dp_reader_note(r);
		if (note)
			sink += strlen(note);
		dp_reader_rewind(r);
	}
	if (getenv("FUZZ_PERFDATA_VERBOSE"))
		printf("fuzz-perfdata: %llu samples, %llu in guests\n", (unsigned long long)samples,
		       (unsigned long long)guest);
	dp_reader_free(r);
	return 0;
}
