// SPDX-License-Identifier: MIT
/*
 * Folded stacks (`domprof export --format folded`): the text format of
 * Brendan Gregg's stackcollapse scripts, read by flamegraph.pl,
 * speedscope, inferno and most flame graph tools. One line per unique
 * stack: frames root-first joined by ';', one space, the sample count.
 * The first two frames are the domain and the process (COMM-PID), so a
 * multi-domain profile folds into one file without mixing domains.
 * Kernel frames carry stackcollapse-perf's "_[k]" suffix, which
 * flamegraph.pl colours as kernel code. Labels are made safe for the
 * line format: ';' becomes ':', control characters become ' '.
 */
#include <errno.h>
#include <inttypes.h>

#include "output/flamegraph.h"

static void frame(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c == ';' ? ':' : c < 0x20 ? ' ' : c, f);
	}
}

int export_folded(FILE *f, const struct profile *p)
{
	char buf[512];
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		frame(f, st->domain_name ? st->domain_name : "host");
		fputc(';', f);
		frame(f, fg_process_label(st->comm, st->pid, buf, sizeof(buf)));
		for (uint32_t j = 0; j < st->nframes; j++) {
			uint32_t sym = st->frames[j];
			fputc(';', f);
			frame(f, fg_symbol_label(p, sym, buf, sizeof(buf)));
			if (p->syms[sym].kernel)
				fputs("_[k]", f);
		}
		fprintf(f, " %" PRIu64 "\n", st->count);
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
