/* SPDX-License-Identifier: MIT */
/*
 * Event names for `domprof record -e`: turns "cpu-clock", "cycles:u",
 * "page-faults:k" into the perf_event_attr type/config and exclusion bits.
 * Pure parsing: nothing here opens an event, prints or exits.
 *
 * Accepted names (perf's spelling, with its common aliases): cpu-clock,
 * task-clock, page-faults (faults), minor-faults, major-faults,
 * context-switches (cs), cpu-migrations (migrations), cycles (cpu-cycles),
 * instructions, cache-references, cache-misses, branches
 * (branch-instructions), branch-misses. Modifiers after ':' are any of
 * 'u' (user only) and 'k' (kernel only); "u" and "k" together mean both.
 */
#ifndef DOMPROF_COLLECT_EVENTS_H
#define DOMPROF_COLLECT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

struct ev_spec {
	uint32_t type;          /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;
	bool exclude_user;
	bool exclude_kernel;
	bool hardware;          /* needs a PMU: missing on VMs/PMU-less CPUs */
	char name[48];          /* canonical name with modifiers, "cycles:u" */
};

/*
 * Parse one event name. Returns 0, -EINVAL for an unknown name and
 * -EBADMSG for an unknown modifier (so the caller can say which).
 */
int ev_parse(const char *text, struct ev_spec *out);

/* The names ev_parse accepts, comma separated, for error hints. */
const char *ev_known_names(void);

#endif
