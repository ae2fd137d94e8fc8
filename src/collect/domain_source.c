// SPDX-License-Identifier: MIT
/*
 * Guest domain sources: dispatch a `--domain NAME=KIND:...` spec to the
 * implementation of its kind: "gdb" is the passive gdbstub sampler
 * (collect/gdb_source.c), "agent" the active in-guest agent
 * (collect/agent_source.c). Both mirror domain_source.h one for one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/agent_source.h"
#include "collect/domain_source.h"
#include "collect/gdb_source.h"
#include "util/xalloc.h"

enum ds_kind { DS_GDB = 1, DS_AGENT = 2, DS_CUSTOM = 3 };

struct domain_source {
	enum ds_kind kind;
	struct gdb_source *gdb;
	struct agent_source *agent;
	const struct domain_source_ops *ops;  /* DS_CUSTOM */
	void *impl;
	bool info_said;                       /* an agent's info was taken */
};

struct domain_source *domain_source_custom(const struct domain_source_ops *ops, void *impl)
{
	struct domain_source *s = xcalloc(1, sizeof(*s));
	s->kind = DS_CUSTOM;
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
	struct domain_source *s = xcalloc(1, sizeof(*s));
	if (klen == 3 && !strncmp(kind, "gdb", 3)) {
		s->kind = DS_GDB;
		s->gdb = gdb_source_start(spec, domain_id, o, err, errlen);
		if (s->gdb)
			return s;
	} else if (klen == 5 && !strncmp(kind, "agent", 5)) {
		s->kind = DS_AGENT;
		s->agent = agent_source_start(spec, domain_id, o, err, errlen);
		if (s->agent)
			return s;
	} else {
		snprintf(err, errlen, "%.*s: unknown domain kind '%.*s' (expected gdb or agent)",
			 nlen, spec, (int)klen, kind);
	}
	free(s);
	return NULL;
}

#define DISPATCH(s, gdbcall, agentcall, dflt) \
	(!(s) ? (dflt) : (s)->kind == DS_GDB ? (gdbcall) : (s)->kind == DS_CUSTOM ? (dflt) : (agentcall))
/* The custom kind's call, else the DISPATCH of the others. */
#define DISPATCH3(s, op, gdbcall, agentcall, dflt) \
	((s) && (s)->kind == DS_CUSTOM ? (s)->ops->op((s)->impl) : DISPATCH(s, gdbcall, agentcall, dflt))

void domain_source_begin(struct domain_source *s)
{
	if (s && s->gdb)
		gdb_source_begin(s->gdb);
	else if (s && s->agent)
		agent_source_begin(s->agent);
}

bool domain_source_started(const struct domain_source *s)
{
	return !s || !s->agent || agent_source_started(s->agent);
}

int domain_source_write_meta(struct domain_source *s, struct dp_writer *w)
{
	return DISPATCH(s, gdb_source_write_meta(s->gdb, w), agent_source_write_meta(s->agent, w), -EINVAL);
}

int domain_source_write_next_meta(struct domain_source *s, struct dp_writer *w)
{
	if (s && s->kind == DS_CUSTOM)
		return 0;
	return DISPATCH(s, gdb_source_write_next_meta(s->gdb, w), agent_source_write_meta(s->agent, w), -EINVAL);
}

int domain_source_drain(struct domain_source *s, struct dp_writer *w)
{
	if (s && s->kind == DS_CUSTOM)
		return s->ops->drain(s->impl, w);
	return DISPATCH(s, gdb_source_drain(s->gdb, w), agent_source_drain(s->agent, w), -EINVAL);
}

bool domain_source_ended(const struct domain_source *s)
{
	return DISPATCH3(s, ended, gdb_source_ended(s->gdb), agent_source_ended(s->agent), true);
}

const char *domain_source_message(const struct domain_source *s)
{
	return DISPATCH3(s, message, gdb_source_message(s->gdb), agent_source_message(s->agent), NULL);
}

const char *domain_source_info(const struct domain_source *s)
{
	return DISPATCH(s, gdb_source_info(s->gdb), agent_source_info(s->agent), NULL);
}

const char *domain_source_take_info(struct domain_source *s)
{
	if (s && s->kind == DS_AGENT)
		return s->info_said ? NULL : (s->info_said = true, agent_source_info(s->agent));
	return s && s->kind == DS_GDB ? gdb_source_take_info(s->gdb) : NULL;
}

const char *domain_source_name(const struct domain_source *s)
{
	return DISPATCH3(s, name, gdb_source_name(s->gdb), agent_source_name(s->agent), NULL);
}

uint64_t domain_source_samples(const struct domain_source *s)
{
	return DISPATCH3(s, samples, gdb_source_samples(s->gdb), agent_source_samples(s->agent), 0);
}

static uint64_t gdb_lost(const struct gdb_source *g)
{
	struct gdb_source_stats st;
	gdb_source_get_stats(g, &st);
	return st.lost;
}

uint64_t domain_source_lost(const struct domain_source *s)
{
	return DISPATCH3(s, lost, gdb_lost(s->gdb), agent_source_lost(s->agent), 0);
}

void domain_source_rate(const struct domain_source *s, struct domain_source_rate *r)
{
	memset(r, 0, sizeof(*r));
	if (s && s->kind == DS_GDB)
		gdb_source_rate(s->gdb, r);
	else if (s && s->kind == DS_AGENT)
		agent_source_rate(s->agent, r);
	else if (s && s->kind == DS_CUSTOM && s->ops->rate)
		s->ops->rate(s->impl, r);
}

bool domain_source_is_passive(const struct domain_source *s)
{
	return s && s->kind == DS_GDB;
}

struct gdb_source *domain_source_gdb(struct domain_source *s)
{
	return s && s->kind == DS_GDB ? s->gdb : NULL;
}

void domain_source_request_stop(struct domain_source *s)
{
	if (s && s->kind == DS_AGENT)
		agent_source_request_stop(s->agent);
	else if (s && s->kind == DS_GDB)
		gdb_source_request_stop(s->gdb);
}

void domain_source_stop(struct domain_source *s)
{
	if (!s)
		return;
	if (s->kind == DS_CUSTOM)
		s->ops->stop(s->impl);
	else if (s->kind == DS_GDB)
		gdb_source_stop(s->gdb);
	else
		agent_source_stop(s->agent);
}

void domain_source_free(struct domain_source *s)
{
	if (!s)
		return;
	if (s->kind == DS_CUSTOM)
		s->ops->free(s->impl);
	else if (s->kind == DS_GDB)
		gdb_source_free(s->gdb);
	else
		agent_source_free(s->agent);
	free(s);
}
