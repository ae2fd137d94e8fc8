// SPDX-License-Identifier: MIT
/*
 * perf.data behind dp_reader (reader_internal.h's rd_foreign): the calls
 * of perfdata.h, typed for the reader's table.
 */
#include "format/perfdata.h"
#include "format/reader_internal.h"

static void *perf_open(const uint8_t *map, size_t size, uint64_t mtime_ns, bool mapped, int *err, char *msg,
		       size_t msglen)
{
	struct pd_reader *p = pd_open(map, size, mtime_ns, err, msg, msglen);
	if (p && mapped)
		pd_set_mapped(p);
	return p;
}

static const struct dp_header *perf_header(const void *c) { return pd_header(c); }
static int perf_next(void *c, struct dp_record *rec) { return pd_next(c, rec); }
static void perf_rewind(void *c) { pd_rewind(c); }
static uint64_t perf_pos(const void *c) { return pd_pos(c); }
static size_t perf_damage(const void *c, const struct dp_damage **out) { return pd_damage(c, out); }
static const char *perf_incomplete(const void *c) { return pd_incomplete(c); }
static const char *perf_note(const void *c) { return pd_note(c); }
static int perf_set_guest(void *c, const struct dp_perf_guest *g) { return pd_set_guest(c, g); }
static void perf_free(void *c) { pd_free(c); }

const struct rd_foreign rd_perfdata = {
	.name = "perf.data",
	.is = pd_is_perf,
	.open = perf_open,
	.header = perf_header,
	.next = perf_next,
	.rewind = perf_rewind,
	.pos = perf_pos,
	.damage = perf_damage,
	.incomplete = perf_incomplete,
	.note = perf_note,
	.set_guest = perf_set_guest,
	.free = perf_free,
};
