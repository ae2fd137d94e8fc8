/* SPDX-License-Identifier: MIT */
/*
 * Per-domain sampling rates: what a source was asked for against what it
 * achieved, what it lost, and what it cost the recorder. `record` prints
 * them at its end from the collector's counts, `info` from the rate.*
 * and recorder.cpu_ns COUNTERS a recording carries (docs/file-format.md);
 * both go through rate_format so the two lines read alike.
 */
#ifndef DOMPROF_ANALYSIS_RATES_H
#define DOMPROF_ANALYSIS_RATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/scan.h"

/* Totals of one source (additive, like the counters they come from). */
struct rate_sums {
	uint64_t requested;     /* samples the requested rate asks for over the span */
	uint64_t samples;       /* samples written */
	uint64_t missed;        /* samples lost or missed */
	uint64_t span_ns;       /* how long it sampled */
	uint64_t unit_ns;       /* span x units (CPUs, vCPUs) */
	uint64_t cpu_ns;        /* the recorder's CPU time for it */
	/* a passive sampler's: VM stops, time held, ticks slept for, how
	 * late it woke for them (0 for other sources) */
	uint64_t ticks, held_ns, wakes, late_ns;
};

/* True for the names rate_from_counters reads and the recorder's other
 * rate counters (rate.*, recorder.*, sampler.*). */
bool rate_counter(const char *name);

/* Domain `domain`'s rate counters out of m's COUNTERS totals. False (and
 * *r zeroed) when the recording has none for it (older files, a domain
 * that never sampled). */
bool rate_from_counters(const struct dp_meta *m, uint32_t domain, struct rate_sums *r);

/* One line (no newline) into buf: "requested 1000 Hz, achieved 987.4 Hz
 * (98.7%) x 2 vCPUs over 60.00 s, 118488 samples, 13 lost, recorder
 * CPU 0.412 s (0.69% of a CPU)", and for a passive sampler "; held
 * 1.907 ms a tick, woke 0.648 ms late (1809 of 20912 ticks slept for)".
 * unit names the units ("CPU", "vCPU"). Rates per unit; a span of 0
 * prints "no span sampled", one under RATE_MIN_SPAN_NS "ended at its
 * start (sampled 0.004 s)" with the counts but no rate nor share of a
 * CPU. */
#define RATE_MIN_SPAN_NS 100000000ull
void rate_format(const struct rate_sums *r, const char *unit, char *buf, size_t len);

#endif
