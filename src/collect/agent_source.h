/* SPDX-License-Identifier: MIT */
/*
 * Active domain source: the host's side of
 * `--domain NAME=agent:ADDRESS[,key=FILE][,max-bytes=SIZE]`. It connects
 * to a `domprof agent` running inside the guest (ADDRESS is
 * tcp:HOST:PORT, HOST:PORT or unix:PATH; HOST must be loopback unless
 * --allow-remote-stub), proves it holds the agent's key and has the agent
 * prove it too (with key=FILE; the agent's --key-file), checks the
 * protocol version, and asks the agent
 * to START recording the whole guest at the host's -F (and -g; with
 * --call-graph dwarf also the user stacks, when the agent offers
 * AP_FEAT_DWARF, else -g chains and the info line says so). When the
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
 * What an agent claims is bounded (it can only change its own domain):
 * its lost count is summed saturating and clamped to what its CPUs could
 * have sampled at the requested rate in the time it recorded (the clamp is
 * said in the domain's message); symbol blobs are limited in size, number
 * and total bytes (AGENT_SYMTAB_*; those refused are counted and said);
 * all it sends after STOP is limited to max-bytes (default
 * AGENT_MAX_BYTES), past which its domain ends.
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

/* Parsed "NAME=agent:ADDRESS[,key=FILE][,max-bytes=SIZE]". */
struct agent_spec {
	char name[64];
	bool is_unix;
	char host[256];         /* TCP host, or unix socket path */
	char port[16];
	char address[300];      /* "agent:ADDRESS" as written in the DOMAIN record (no options) */
	char key_file[4096];    /* "" without key= */
	uint64_t max_bytes;     /* AGENT_MAX_BYTES unless max-bytes= */
};

/* Returns 0 or -EINVAL with a reason in err. */
int agent_spec_parse(const char *spec, struct agent_spec *out, char *err, size_t errlen);

struct agent_source *agent_source_start(const char *spec, uint32_t domain_id,
					const struct domain_source_opts *o,
					char *err, size_t errlen);
int agent_source_write_meta(struct agent_source *s, struct dp_writer *w);
/* Start the guest's recording: start connects and says HELLO only, and
 * START is sent (by the receiver thread) once this is called, so the
 * guest records the recording's window, not from its connect. Until then
 * a stop ends the source without a recording, and so does a stop before
 * STARTED arrived. A START the agent refuses, or no STARTED within
 * AGENT_START_TIMEOUT_MS, ends the source (ended(), with the reason). */
void agent_source_begin(struct agent_source *s);
/* True once STARTED arrived after begin, or the source finished. */
bool agent_source_started(const struct agent_source *s);
int agent_source_drain(struct agent_source *s, struct dp_writer *w);
bool agent_source_ended(const struct agent_source *s);
const char *agent_source_message(const struct agent_source *s);
const char *agent_source_info(const struct agent_source *s);
const char *agent_source_name(const struct agent_source *s);
uint64_t agent_source_samples(const struct agent_source *s);
/* The sampling rate and cost (domain_source.h's struct, filled): the
 * guest's CPUs at the requested rate from STARTED to STOP; cpu_ns is the
 * host side's receiver thread (the agent's own CPU is the guest's). */
void agent_source_rate(const struct agent_source *s, struct domain_source_rate *r);
uint64_t agent_source_lost(const struct agent_source *s);
/* Ask the agent to stop and send its records; waits until they arrived
 * (or the agent failed, or AGENT_COLLECT_TIMEOUT_MS passed; the
 * environment variable DOMPROF_AGENT_COLLECT_TIMEOUT_MS can only shorten
 * it, for tests; or *o->interrupt, given at start, became non-zero: then
 * the domain ends within a few tens of ms, "collection interrupted").
 * Records whose tag the host does not relay or whose body the reader
 * would not decode end the domain. Safe twice. */
void agent_source_stop(struct agent_source *s);
/* Ask for the stop without waiting: the receiver sends STOP at once. The
 * recorder asks every agent first, then waits for each with
 * agent_source_stop, so one guest's collection does not keep the next
 * one recording. */
void agent_source_request_stop(struct agent_source *s);
void agent_source_free(struct agent_source *s);

#define AGENT_COLLECT_TIMEOUT_MS 300000
/* How long an agent may take from START to STARTED before its domain
 * ends (the recorder waits DOMAIN_START_WAIT_MS of it, domain_source.h) */
#define AGENT_START_TIMEOUT_MS 300000
/* Per agent domain. Real guests send one kallsyms (a few MB, inside a
 * RECORD) and the ELF files samples hit (the agent skips any over 256 MiB);
 * these limits are far beyond that and only stop a hostile agent. */
#define AGENT_SYMTAB_MAX_BLOB (256ull << 20)   /* one SYMTAB frame's data */
#define AGENT_SYMTAB_MAX_TOTAL (1ull << 30)    /* all symbol data of a domain */
#define AGENT_SYMTAB_MAX_COUNT 4096u           /* SYMTAB frames of a domain */
#define AGENT_MAX_BYTES (16ull << 30)          /* all it sends, decompressed */
#define AGENT_QUEUE_MAX_BYTES (512ull << 20)   /* held in memory; beyond, dropped as lost */

#endif
