// SPDX-License-Identifier: MIT
/*
 * Guest domain sources: a `--domain NAME=KIND:...` spec started by its
 * kind's entry in `kinds` and driven through that kind's ops table:
 * "gdb" is the passive gdbstub sampler (collect/gdb_source.c), "agent"
 * the active in-guest agent (collect/agent_source.c); tests plug in
 * their own with domain_source_custom. Nothing here knows a kind but
 * through its table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/agent_source.h"
#include "collect/domain_source.h"
#include "collect/gdb_source.h"
#include "util/xalloc.h"

struct domain_source {
	const struct domain_source_ops *ops;
	void *impl;
	bool info_said;         /* info() taken once, for kinds without take_info */
};

/* ---- gdb: the passive sampler ------------------------------------------ */

static void *gdb_start(const char *spec, uint32_t id, const struct domain_source_opts *o, char *err,
		       size_t errlen)
{
	return gdb_source_start(spec, id, o, err, errlen);
}
static int gdb_write_meta(void *i, struct dp_writer *w) { return gdb_source_write_meta(i, w); }
static int gdb_write_next_meta(void *i, struct dp_writer *w) { return gdb_source_write_next_meta(i, w); }
static void gdb_begin(void *i) { gdb_source_begin(i); }
static int gdb_drain(void *i, struct dp_writer *w) { return gdb_source_drain(i, w); }
static bool gdb_ended(const void *i) { return gdb_source_ended(i); }
static const char *gdb_message(const void *i) { return gdb_source_message(i); }
static const char *gdb_info(const void *i) { return gdb_source_info(i); }
static const char *gdb_take_info(void *i) { return gdb_source_take_info(i); }
static const char *gdb_name(const void *i) { return gdb_source_name(i); }
static uint64_t gdb_samples(const void *i) { return gdb_source_samples(i); }
static void gdb_rate(const void *i, struct domain_source_rate *r) { gdb_source_rate(i, r); }
static void gdb_request_stop(void *i) { gdb_source_request_stop(i); }
static void gdb_stop(void *i) { gdb_source_stop(i); }
static void gdb_free(void *i) { gdb_source_free(i); }

static uint64_t gdb_lost(const void *i)
{
	struct gdb_source_stats st;
	gdb_source_get_stats(i, &st);
	return st.lost;
}

/* What sampling cost the VM, and its chains: ", held 0.412 ms a tick,
 * 3100 chains 98.2% complete, ..." */
static void gdb_summary(const void *i, char *buf, size_t len)
{
	struct gdb_source_stats st;
	gdb_source_get_stats(i, &st);
	size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	buf[0] = 0;
	if (st.ticks)
		ADD(", held %.3f ms a tick", (double)st.stop_ns / 1e6 / (double)st.ticks);
	if (st.chains)
		ADD(", %" PRIu64 " chains %.1f%% complete", st.chains,
		    100.0 * (double)st.chains_complete / (double)st.chains);
	if (st.task_checks && st.ticks)
		ADD(", %.2f task checks a tick (%.3f ms each), %" PRIu64 " changed",
		    (double)st.task_checks / (double)st.ticks,
		    (double)st.task_check_ns / 1e6 / (double)st.task_checks, st.task_changes);
	if (st.walks_cut)
		ADD(", %" PRIu64 " task-list walk%s cut by the walk budget", st.walks_cut,
		    st.walks_cut == 1 ? "" : "s");
#undef ADD
}

static const struct domain_source_ops gdb_ops = {
	.passive = true,
	.write_meta = gdb_write_meta, .write_next_meta = gdb_write_next_meta, .begin = gdb_begin,
	.drain = gdb_drain, .ended = gdb_ended, .message = gdb_message, .info = gdb_info,
	.take_info = gdb_take_info, .name = gdb_name, .samples = gdb_samples, .lost = gdb_lost,
	.rate = gdb_rate, .summary = gdb_summary, .request_stop = gdb_request_stop, .stop = gdb_stop,
	.free = gdb_free,
};

/* ---- agent: the active in-guest agent ---------------------------------- */

static void *agent_start(const char *spec, uint32_t id, const struct domain_source_opts *o, char *err,
			 size_t errlen)
{
	return agent_source_start(spec, id, o, err, errlen);
}
/* the next file's meta is the first's: its records come when it sends them */
static int agent_write_meta(void *i, struct dp_writer *w) { return agent_source_write_meta(i, w); }
static void agent_begin(void *i) { agent_source_begin(i); }
static bool agent_started(const void *i) { return agent_source_started(i); }
static int agent_drain(void *i, struct dp_writer *w) { return agent_source_drain(i, w); }
static bool agent_ended(const void *i) { return agent_source_ended(i); }
static const char *agent_message(const void *i) { return agent_source_message(i); }
static const char *agent_info(const void *i) { return agent_source_info(i); }
static const char *agent_name(const void *i) { return agent_source_name(i); }
static uint64_t agent_samples(const void *i) { return agent_source_samples(i); }
static uint64_t agent_lost(const void *i) { return agent_source_lost(i); }
static void agent_rate(const void *i, struct domain_source_rate *r) { agent_source_rate(i, r); }
static void agent_request_stop(void *i) { agent_source_request_stop(i); }
static void agent_stop(void *i) { agent_source_stop(i); }
static void agent_free(void *i) { agent_source_free(i); }

static const struct domain_source_ops agent_ops = {
	.write_meta = agent_write_meta, .write_next_meta = agent_write_meta, .begin = agent_begin,
	.started = agent_started, .drain = agent_drain, .ended = agent_ended, .message = agent_message,
	.info = agent_info, .name = agent_name, .samples = agent_samples, .lost = agent_lost,
	.rate = agent_rate, .request_stop = agent_request_stop, .stop = agent_stop, .free = agent_free,
};

/* ---- the kinds ---------------------------------------------------------- */

static const struct {
	const char *name;
	void *(*start)(const char *spec, uint32_t id, const struct domain_source_opts *o, char *err,
		       size_t errlen);
	const struct domain_source_ops *ops;
} kinds[] = {
	{ "gdb", gdb_start, &gdb_ops },
	{ "agent", agent_start, &agent_ops },
};

struct domain_source *domain_source_custom(const struct domain_source_ops *ops, void *impl)
{
	struct domain_source *s = xcalloc(1, sizeof(*s));
	s->ops = ops;
	s->impl = impl;
	return s;
}

struct domain_source *domain_source_start(const char *spec, uint32_t domain_id,
					  const struct domain_source_opts *o,
					  char *err, size_t errlen)
{
	const char *eq = spec ? strchr(spec, '=') : NULL;
	int nlen = eq ? (int)(eq - spec) : 0;

	if (!eq || nlen == 0) {
		snprintf(err, errlen, "%s: bad domain spec, expected NAME=gdb:HOST:PORT, NAME=gdb:unix:PATH or NAME=agent:ADDRESS",
			 spec ? spec : "(null)");
		return NULL;
	}
	const char *kind = eq + 1;
	size_t klen = strcspn(kind, ":");
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (strlen(kinds[k].name) != klen || strncmp(kind, kinds[k].name, klen))
			continue;
		void *impl = kinds[k].start(spec, domain_id, o, err, errlen);
		return impl ? domain_source_custom(kinds[k].ops, impl) : NULL;
	}
	snprintf(err, errlen, "%.*s: unknown domain kind '%.*s' (expected gdb or agent)", nlen, spec, (int)klen,
		 kind);
	return NULL;
}

void domain_source_begin(struct domain_source *s)
{
	if (s && s->ops->begin)
		s->ops->begin(s->impl);
}

bool domain_source_started(const struct domain_source *s)
{
	return !s || !s->ops->started || s->ops->started(s->impl);
}

int domain_source_write_meta(struct domain_source *s, struct dp_writer *w)
{
	if (!s)
		return -EINVAL;
	return s->ops->write_meta ? s->ops->write_meta(s->impl, w) : 0;
}

int domain_source_write_next_meta(struct domain_source *s, struct dp_writer *w)
{
	if (!s)
		return -EINVAL;
	return s->ops->write_next_meta ? s->ops->write_next_meta(s->impl, w) : 0;
}

int domain_source_drain(struct domain_source *s, struct dp_writer *w)
{
	return s ? s->ops->drain(s->impl, w) : -EINVAL;
}

bool domain_source_ended(const struct domain_source *s)
{
	return !s || s->ops->ended(s->impl);
}

const char *domain_source_message(const struct domain_source *s)
{
	return s ? s->ops->message(s->impl) : NULL;
}

const char *domain_source_info(const struct domain_source *s)
{
	return s && s->ops->info ? s->ops->info(s->impl) : NULL;
}

const char *domain_source_take_info(struct domain_source *s)
{
	if (!s)
		return NULL;
	if (s->ops->take_info)
		return s->ops->take_info(s->impl);
	if (s->info_said || !s->ops->info)
		return NULL;
	s->info_said = true;
	return s->ops->info(s->impl);
}

const char *domain_source_name(const struct domain_source *s)
{
	return s ? s->ops->name(s->impl) : NULL;
}

uint64_t domain_source_samples(const struct domain_source *s)
{
	return s ? s->ops->samples(s->impl) : 0;
}

uint64_t domain_source_lost(const struct domain_source *s)
{
	return s ? s->ops->lost(s->impl) : 0;
}

void domain_source_rate(const struct domain_source *s, struct domain_source_rate *r)
{
	memset(r, 0, sizeof(*r));
	if (s && s->ops->rate)
		s->ops->rate(s->impl, r);
}

void domain_source_summary(const struct domain_source *s, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	if (s && len && s->ops->summary)
		s->ops->summary(s->impl, buf, len);
}

bool domain_source_is_passive(const struct domain_source *s)
{
	return s && s->ops->passive;
}

void domain_source_request_stop(struct domain_source *s)
{
	if (s && s->ops->request_stop)
		s->ops->request_stop(s->impl);
}

void domain_source_stop(struct domain_source *s)
{
	if (s)
		s->ops->stop(s->impl);
}

void domain_source_free(struct domain_source *s)
{
	if (!s)
		return;
	s->ops->free(s->impl);
	free(s);
}

struct gdb_source *domain_source_gdb(struct domain_source *s)
{
	return s && s->ops == &gdb_ops ? s->impl : NULL;
}
