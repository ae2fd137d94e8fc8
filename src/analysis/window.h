/* SPDX-License-Identifier: MIT */
/*
 * Windows in time and in CPUs (--time, --cpu): which samples of a
 * recording a profile-reading command keeps, by when they were taken and
 * on which CPU (a passive domain's CPU is the vCPU).
 *
 * Time is per domain: a window of seconds counts from the domain's first
 * sample, a window of percentages is of the span from its first to its
 * last sample (perf's --time percentages are of the session's span). Per
 * domain because an agent's samples carry the guest's own clock, which
 * does not share the host's zero; every domain of a recording starts
 * within the recorder's set-up of the others. The spans need one pass
 * over the file before the samples are read (window_spans_scan).
 *
 * Nothing here prints. The window itself lives in struct profile_filter
 * (profile.h); the CPU set is a bitmap the caller owns.
 */
#ifndef DOMPROF_ANALYSIS_WINDOW_H
#define DOMPROF_ANALYSIS_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

#define WINDOW_MAX_CPUS 4096u   /* --cpu numbers 0..4095 */
#define WINDOW_CPU_WORDS (WINDOW_MAX_CPUS / 64)
#define WINDOW_MAX_DOMAINS 65536u /* spans kept; samples of further domains
				   * (a crafted file) are outside every window */

/*
 * Parse --time: "A,B" seconds from each domain's first sample (A or B may
 * be empty: from the start, to the end), or "A%-B%" (also "A%,B%")
 * percentages of each domain's span. Fills *from, *to (to = -1: the end)
 * and *pct. Returns 0, or -EINVAL with a one-line reason in err.
 */
int window_parse_time(const char *arg, double *from, double *to, bool *pct,
		      char *err, size_t errlen);

/*
 * Parse --cpu: "0,2-3,8" into bits (WINDOW_CPU_WORDS words, cleared
 * first). Returns 0, or -EINVAL with a one-line reason in err.
 */
int window_parse_cpus(const char *arg, uint64_t *bits, char *err, size_t errlen);

static inline bool window_cpu_in(const uint64_t *bits, uint32_t cpu)
{
	return cpu < WINDOW_MAX_CPUS && (bits[cpu / 64] >> (cpu % 64) & 1);
}

/* Each domain's first and last sample time. Zero-initialise; release. */
struct window_span {
	uint32_t domain;
	uint64_t first, last;
};
struct window_spans {
	struct window_span *v;
	size_t n, cap;
	void *idx;              /* domain -> index + 1 (an hmap) */
	uint32_t last_dom;      /* one-entry cache of the last lookup */
	const struct window_span *last_hit;
};

/* One pass over r's samples (the reader is rewound before and after).
 * Returns 0, or the scan's error. */
int window_spans_scan(struct dp_reader *r, struct window_spans *out);
void window_spans_release(struct window_spans *s);
/* The span of a domain, NULL when it has no samples (or is past the
 * bound). */
const struct window_span *window_span_of(struct window_spans *s, uint32_t domain);

/*
 * The window [lo, hi) in the domain's clock for the parsed values: the
 * end of the span is inside when to reaches it. Returns false when the
 * domain has no span.
 */
bool window_bounds(const struct window_span *sp, double from, double to, bool pct,
		   uint64_t *lo, uint64_t *hi);

#endif
