// SPDX-License-Identifier: MIT
/* Event name parsing (collect/events.c): names, aliases, modifiers, errors. */
#include <errno.h>

#include <linux/perf_event.h>

#include "collect/events.h"
#include "unit.h"

int main(void)
{
	struct ev_spec e;
	CHECK(ev_parse("cpu-clock", &e) == 0);
	CHECK(e.type == PERF_TYPE_SOFTWARE && e.config == PERF_COUNT_SW_CPU_CLOCK);
	CHECK(!e.exclude_user && !e.exclude_kernel && !e.hardware);
	CHECK_STR(e.name, "cpu-clock");

	CHECK(ev_parse("cycles:u", &e) == 0);
	CHECK(e.type == PERF_TYPE_HARDWARE && e.config == PERF_COUNT_HW_CPU_CYCLES && e.hardware);
	CHECK(e.exclude_kernel && !e.exclude_user);
	CHECK_STR(e.name, "cycles:u");

	CHECK(ev_parse("page-faults:k", &e) == 0);
	CHECK(e.config == PERF_COUNT_SW_PAGE_FAULTS && e.exclude_user && !e.exclude_kernel);
	CHECK_STR(e.name, "page-faults:k");

	CHECK(ev_parse("task-clock:uk", &e) == 0);
	CHECK(!e.exclude_user && !e.exclude_kernel);
	CHECK_STR(e.name, "task-clock");

	CHECK(ev_parse("instructions", &e) == 0 && e.config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(ev_parse("cache-misses", &e) == 0 && e.config == PERF_COUNT_HW_CACHE_MISSES);
	CHECK(ev_parse("branch-misses", &e) == 0 && e.config == PERF_COUNT_HW_BRANCH_MISSES);
	CHECK(ev_parse("cpu-cycles", &e) == 0 && e.config == PERF_COUNT_HW_CPU_CYCLES);
	CHECK(ev_parse("faults", &e) == 0 && e.config == PERF_COUNT_SW_PAGE_FAULTS);

	CHECK(ev_parse("bogus", &e) == -EINVAL);
	CHECK(ev_parse("", &e) == -EINVAL);
	CHECK(ev_parse("cpu-clock2", &e) == -EINVAL);
	CHECK(ev_parse("cpu", &e) == -EINVAL);
	CHECK(ev_parse("cpu-clock:", &e) == -EBADMSG);
	CHECK(ev_parse("cpu-clock:p", &e) == -EBADMSG);
	CHECK(ev_parse("cycles:ux", &e) == -EBADMSG);
	return unit_done();
}
