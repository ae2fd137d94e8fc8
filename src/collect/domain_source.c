// SPDX-License-Identifier: MIT
/*
 * Guest domain sources: dispatch a `--domain NAME=KIND:...` spec to the
 * implementation of its kind. "gdb" is the passive gdbstub sampler
 * (collect/gdb_source.c); "agent" (active domains) is not part of this
 * build yet and is refused with a clear message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/domain_source.h"
#include "collect/gdb_source.h"
#include "util/xalloc.h"

enum ds_kind { DS_GDB = 1 };

struct domain_source {
	enum ds_kind kind;
	struct gdb_source *gdb;
};

/* "NAME=KIND:..." -> pointer to KIND, or NULL. */
static const char *spec_kind(const char *spec, size_t *kindlen)
{
	const char *eq = strchr(spec, '=');
	if (!eq)
		return NULL;
	const char *k = eq + 1;
	const char *colon = strchr(k, ':');
	*kindlen = colon ? (size_t)(colon - k) : strlen(k);
	return k;
}

struct domain_source *domain_source_start(const char *spec, uint32_t domain_id,
					  const struct domain_source_opts *o,
					  char *err, size_t errlen)
{
	size_t klen = 0;
	const char *kind = spec ? spec_kind(spec, &klen) : NULL;
	const char *eq = spec ? strchr(spec, '=') : NULL;
	int nlen = eq ? (int)(eq - spec) : 0;

	if (!kind || nlen == 0) {
		snprintf(err, errlen, "%s: bad domain spec, expected NAME=gdb:HOST:PORT or NAME=gdb:unix:PATH",
			 spec ? spec : "(null)");
		return NULL;
	}
	if (klen == 3 && !strncmp(kind, "gdb", 3)) {
		struct gdb_source *g = gdb_source_start(spec, domain_id, o, err, errlen);
		if (!g)
			return NULL;
		struct domain_source *s = xcalloc(1, sizeof(*s));
		s->kind = DS_GDB;
		s->gdb = g;
		return s;
	}
	if (klen == 5 && !strncmp(kind, "agent", 5)) {
		snprintf(err, errlen, "%.*s: agent domains are not supported by this build", nlen, spec);
		return NULL;
	}
	snprintf(err, errlen, "%.*s: unknown domain kind '%.*s' (expected gdb or agent)",
		 nlen, spec, (int)klen, kind);
	return NULL;
}

int domain_source_write_meta(struct domain_source *s, struct dp_writer *w)
{
	return s ? gdb_source_write_meta(s->gdb, w) : -EINVAL;
}

int domain_source_drain(struct domain_source *s, struct dp_writer *w)
{
	return s ? gdb_source_drain(s->gdb, w) : -EINVAL;
}

bool domain_source_ended(const struct domain_source *s)
{
	return s ? gdb_source_ended(s->gdb) : true;
}

const char *domain_source_message(const struct domain_source *s)
{
	return s ? gdb_source_message(s->gdb) : NULL;
}

const char *domain_source_info(const struct domain_source *s)
{
	return s ? gdb_source_info(s->gdb) : NULL;
}

const char *domain_source_name(const struct domain_source *s)
{
	return s ? gdb_source_name(s->gdb) : NULL;
}

uint64_t domain_source_samples(const struct domain_source *s)
{
	return s ? gdb_source_samples(s->gdb) : 0;
}

void domain_source_stop(struct domain_source *s)
{
	if (s)
		gdb_source_stop(s->gdb);
}

void domain_source_free(struct domain_source *s)
{
	if (!s)
		return;
	gdb_source_free(s->gdb);
	free(s);
}
