/* SPDX-License-Identifier: MIT */
/*
 * Active domain source: the host's side of `--domain NAME=agent:ADDRESS`.
 * It connects to a `domprof agent` running inside the guest (ADDRESS is
 * tcp:HOST:PORT, HOST:PORT or unix:PATH; HOST must be loopback unless
 * --allow-remote-stub), checks the protocol version, and asks the agent
 * to START recording the whole guest at the host's -F (and -g). When the
 * host's recording stops, agent_source_stop() asks STOP and COLLECT and
 * waits until the agent has sent everything: the guest's raw records
 * (tasks, maps, samples, its kallsyms), the ELF files of the guest
 * binaries that samples hit (SYMTAB, DP_SYMTAB_ELF, named by build-id)
 * and its lost count. agent_source_drain() writes them under the
 * domain's id. One receiver thread per agent; drain never blocks.
 *
 * Records from the guest are checked before they are relayed: only TASK,
 * MMAP, SAMPLE and SYMTAB records pass (collect/agent_proto.h), so an
 * agent can neither switch to another domain nor write DOMAIN or STATS
 * records. A guest that disconnects ends only its own domain, with a
 * message; the rest of the recording goes on.
 *
 * collect/domain_source.c dispatches "NAME=agent:..." specs here; the
 * functions mirror domain_source.h one for one.
 */
#ifndef DOMPROF_COLLECT_AGENT_SOURCE_H
#define DOMPROF_COLLECT_AGENT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/domain_source.h"
#include "format/format.h"

struct agent_source;

/* Parsed "NAME=agent:ADDRESS". */
struct agent_spec {
	char name[64];
	bool is_unix;
	char host[256];         /* TCP host, or unix socket path */
	char port[16];
	char address[300];      /* "agent:..." as written in the DOMAIN record */
};

/* Returns 0 or -EINVAL with a reason in err. */
int agent_spec_parse(const char *spec, struct agent_spec *out, char *err, size_t errlen);

struct agent_source *agent_source_start(const char *spec, uint32_t domain_id,
					const struct domain_source_opts *o,
					char *err, size_t errlen);
int agent_source_write_meta(struct agent_source *s, struct dp_writer *w);
int agent_source_drain(struct agent_source *s, struct dp_writer *w);
bool agent_source_ended(const struct agent_source *s);
const char *agent_source_message(const struct agent_source *s);
const char *agent_source_info(const struct agent_source *s);
const char *agent_source_name(const struct agent_source *s);
uint64_t agent_source_samples(const struct agent_source *s);
uint64_t agent_source_lost(const struct agent_source *s);
/* Ask the agent to stop and send its records; waits until they arrived
 * (or the agent failed, or AGENT_COLLECT_TIMEOUT_MS passed; the
 * environment variable DOMPROF_AGENT_COLLECT_TIMEOUT_MS can only shorten
 * it, for tests). Records whose tag the host does not relay or whose body
 * the reader would not decode end the domain. Safe twice. */
void agent_source_stop(struct agent_source *s);
void agent_source_free(struct agent_source *s);

#define AGENT_COLLECT_TIMEOUT_MS 300000

#endif
