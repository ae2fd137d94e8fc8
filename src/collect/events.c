// SPDX-License-Identifier: MIT
/*
 * Event name table and the ':u'/':k' modifier parser (see events.h).
 * A table rather than a string switch so the error hint lists exactly
 * what is accepted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>

#include "collect/events.h"

struct ev_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct ev_name names[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

int ev_parse(const char *text, struct ev_spec *out)
{
	memset(out, 0, sizeof(*out));
	const char *colon = strchr(text, ':');
	size_t n = colon ? (size_t)(colon - text) : strlen(text);
	const struct ev_name *e = NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n && !strncmp(names[i].name, text, n)) {
			e = &names[i];
			break;
		}
	if (!e)
		return -EINVAL;
	bool u = false, k = false;
	if (colon) {
		if (!colon[1])
			return -EBADMSG;
		for (const char *m = colon + 1; *m; m++) {
			if (*m == 'u')
				u = true;
			else if (*m == 'k')
				k = true;
			else
				return -EBADMSG;
		}
	}
	out->type = e->type;
	out->config = e->config;
	out->hardware = e->type == PERF_TYPE_HARDWARE;
	/* ":u" alone excludes the kernel, ":k" alone excludes user space. */
	out->exclude_kernel = u && !k;
	out->exclude_user = k && !u;
	snprintf(out->name, sizeof(out->name), "%s%s%s", e->name,
		 (u != k) ? ":" : "", (u && !k) ? "u" : (k && !u) ? "k" : "");
	return 0;
}

const char *ev_known_names(void)
{
	return "cpu-clock, task-clock, page-faults, minor-faults, major-faults, "
	       "context-switches, cpu-migrations, cycles, instructions, "
	       "cache-references, cache-misses, branches, branch-misses";
}
