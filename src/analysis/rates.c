// SPDX-License-Identifier: MIT
/*
 * Per-domain sampling rates (contract in rates.h): read from a
 * recording's COUNTERS, formatted for `record` and `info` alike. The
 * counts are crafted input: every ratio checks its divisor, and nothing
 * here trusts two counters to agree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/rates.h"

bool rate_counter(const char *name)
{
	return !strncmp(name, "rate.", 5) || !strncmp(name, "recorder.", 9) || !strncmp(name, "sampler.", 8);
}

bool rate_from_counters(const struct dp_meta *m, uint32_t domain, struct rate_sums *r)
{
	const struct dp_counter_sums *s = &m->counters;
	memset(r, 0, sizeof(*r));
	r->requested = dp_counter_sums_get(s, domain, "rate.requested");
	r->samples = dp_counter_sums_get(s, domain, "rate.samples");
	r->missed = dp_counter_sums_get(s, domain, "rate.missed");
	r->span_ns = dp_counter_sums_get(s, domain, "rate.span_ns");
	r->unit_ns = dp_counter_sums_get(s, domain, "rate.unit_ns");
	r->cpu_ns = dp_counter_sums_get(s, domain, "recorder.cpu_ns");
	r->ticks = dp_counter_sums_get(s, domain, "sampler.ticks");
	r->held_ns = dp_counter_sums_get(s, domain, "sampler.held_ns");
	r->wakes = dp_counter_sums_get(s, domain, "sampler.wakes");
	r->late_ns = dp_counter_sums_get(s, domain, "sampler.wake_late_ns");
	return r->requested || r->samples || r->span_ns || r->unit_ns;
}

void rate_format(const struct rate_sums *r, const char *unit, char *buf, size_t len)
{
	if (!r->unit_ns || !r->span_ns) {
		snprintf(buf, len, "no span sampled, %" PRIu64 " samples, %" PRIu64 " lost, recorder CPU %.3f s",
			 r->samples, r->missed, (double)r->cpu_ns / 1e9);
		return;
	}
	/* A source that ended at its start (a guest gone during start-up):
	 * a rate or a share of a CPU over a few ms says nothing true. */
	if (r->span_ns < RATE_MIN_SPAN_NS) {
		snprintf(buf, len, "ended at its start (sampled %.3f s), %" PRIu64 " samples, %" PRIu64
			 " lost, recorder CPU %.3f s", (double)r->span_ns / 1e9, r->samples, r->missed,
			 (double)r->cpu_ns / 1e9);
		return;
	}
	double us = (double)r->unit_ns / 1e9, span = (double)r->span_ns / 1e9;
	double want = (double)r->requested / us, got = (double)r->samples / us;
	double units = (double)r->unit_ns / (double)r->span_ns;
	int n = snprintf(buf, len, "requested %.0f Hz, achieved %.1f Hz", want, got);
	if (n > 0 && (size_t)n < len && r->requested)
		n += snprintf(buf + n, len - (size_t)n, " (%.1f%%)", 100.0 * (double)r->samples / (double)r->requested);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " x %.0f %s%s over %.2f s, %" PRIu64 " samples, %" PRIu64
			 " lost, recorder CPU %.3f s (%.2f%% of a CPU)", units, unit, units < 1.5 ? "" : "s", span,
			 r->samples, r->missed, (double)r->cpu_ns / 1e9, 100.0 * (double)r->cpu_ns / (double)r->span_ns);
	/* a passive domain: the stub's answer time against the thread's
	 * own lateness (what bounds its rate) */
	if (n > 0 && (size_t)n < len && r->ticks)
		n += snprintf(buf + n, len - (size_t)n, "; held %.3f ms a tick", (double)r->held_ns / 1e6 / (double)r->ticks);
	if (n > 0 && (size_t)n < len && r->ticks && r->wakes)
		snprintf(buf + n, len - (size_t)n, ", woke %.3f ms late (%" PRIu64 " of %" PRIu64 " ticks slept for)",
			 (double)r->late_ns / 1e6 / (double)r->wakes, r->wakes, r->ticks);
}
