/* SPDX-License-Identifier: MIT */
/*
 * Guest domain sources for `domprof record --domain NAME=KIND:ADDRESS[,OPTS]`.
 *
 * A source samples one VM on its own thread(s) and queues what it found;
 * it never writes the file. The recorder's collector calls
 * domain_source_drain() from its loop, which writes the queued records
 * under the source's domain id through the format writer. A stalled or
 * dead VM only stops its own source: drain never blocks.
 *
 * Kinds: "gdb" (passive, GDB remote serial protocol; collect/gdb_source.c)
 * and "agent" (active, an in-guest domprof agent; collect/agent_source.c).
 */
#ifndef DOMPROF_COLLECT_DOMAIN_SOURCE_H
#define DOMPROF_COLLECT_DOMAIN_SOURCE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct domain_source;

struct domain_source_opts {
	unsigned hz;            /* sampling frequency, from -F */
	bool allow_remote;      /* --allow-remote-stub */
	bool callchains;        /* -g (agents only) */
	uint32_t ustack_size;   /* --call-graph dwarf,SIZE (agents only); 0: fp */
	/* agents only: while it is non-zero, a stop that waits for the
	 * guest's records gives up at once (a second Ctrl-C); NULL: never */
	const volatile sig_atomic_t *interrupt;
};

/*
 * Parse `spec` ("vm1=gdb:unix:/tmp/s,kallsyms=/f,kaslr=auto"), connect,
 * validate the target (x86_64, registers found), load the symbol source,
 * and start sampling. A passive domain that reads its symbols from guest
 * memory does that on its own thread afterwards, while the recording
 * runs (gdb_source.h): a failure there ends the source (ended(),
 * message()), never this call. domain_id is the id the recorder assigned.
 * Returns NULL on failure with a one-line reason in err that names the
 * domain ("vm1: cannot connect to 127.0.0.1:1234: Connection refused").
 */
struct domain_source *domain_source_start(const char *spec, uint32_t domain_id,
					  const struct domain_source_opts *o,
					  char *err, size_t errlen);

/* Write the DOMAIN record and embedded SYMTAB records (call once, right
 * after start; a passive source still reading guest memory writes
 * nothing here, and its drain writes them when that is over, before its
 * first samples). Returns 0 or a negative errno from the writer. */
int domain_source_write_meta(struct domain_source *s, struct dp_writer *w);

/* The same for the next file of `record --switch-output`: the DOMAIN
 * record and tables again, and a passive source's known guest processes
 * (TASK records) queued again for the next drains. An agent's records
 * arrive when the agent sends them (at its end): they go to the file
 * open then. Returns 0 or a negative errno from the writer. */
int domain_source_write_next_meta(struct domain_source *s, struct dp_writer *w);

/* Start sampling (the collector calls it for every source at once when
 * its loop starts). A passive source keeps the VM running but takes no
 * sample before it; an agent is sent its START at the first call. Safe
 * to call twice. An agent's guest takes seconds to start its recorder,
 * so the recorder begins agents first and waits for started() before
 * the host and the passive domains begin. */
void domain_source_begin(struct domain_source *s);
/* True once the source samples after begin or has ended: a passive or
 * custom source at once, an agent when its STARTED arrived. */
bool domain_source_started(const struct domain_source *s);
/* How long the recorder waits for started() before it begins the others
 * without the sources still starting (they join when they start). */
#define DOMAIN_START_WAIT_MS 60000
/* Write everything queued so far (samples, lost counts). Never blocks on
 * the VM. Returns records written, or a negative errno from the writer. */
int domain_source_drain(struct domain_source *s, struct dp_writer *w);

/* True once the source has ended by itself (VM gone, protocol error);
 * message() then says why, e.g. "vm1: stub closed the connection after
 * 5123 samples". NULL while running. */
bool domain_source_ended(const struct domain_source *s);
const char *domain_source_message(const struct domain_source *s);

/* The source's info line, e.g. "vm1: KASLR offset 0x1e000000 found from
 * IDT". NULL if none, or not yet: a passive domain reading guest memory
 * knows it when its start-up ends (gdb_source.h), while the recording
 * samples. */
const char *domain_source_info(const struct domain_source *s);
/* The info line once (the recorder at start, the collector while it
 * runs: whichever sees it first prints it); NULL otherwise. */
const char *domain_source_take_info(struct domain_source *s);

const char *domain_source_name(const struct domain_source *s);
/* True for a passive (gdb) source: its stop returns at once, while an
 * agent's stop waits for the guest's recording to arrive. */
bool domain_source_is_passive(const struct domain_source *s);
uint64_t domain_source_samples(const struct domain_source *s);
/* Samples this source knows it lost so far (missed ticks, a guest's own
 * lost samples); also written as LOST records by drain. */
uint64_t domain_source_lost(const struct domain_source *s);

/*
 * How a source sampled, for the per-domain rate report (requested
 * against achieved) and its COUNTERS (docs/file-format.md, rate.*).
 * hz 0: the source does not know (a custom source): nothing reported.
 */
struct domain_source_rate {
	uint32_t domain;        /* the source's domain id */
	unsigned hz;            /* requested samples a second per unit */
	uint32_t units;         /* vCPUs (passive) or guest CPUs (agent) */
	uint64_t begin_ns;      /* mono_ns() when sampling began */
	uint64_t end_ns;        /* when it ended (stop, or the VM's end); 0: not yet */
	uint64_t span_ns;       /* non-zero: the span the samples' own times
	                         * cover (an agent's guest clock, whose start
	                         * the host does not see), used instead of
	                         * end_ns - begin_ns */
	uint64_t samples;       /* samples written (as domain_source_samples) */
	uint64_t missed;        /* samples lost or missed (as domain_source_lost) */
	uint64_t cpu_ns;        /* the source's own threads' CPU time on this host */
	/* a passive sampler's ticks (VM stops), the time it held the VM
	 * stopped, the ticks its thread slept for and how late it woke for
	 * them, summed; 0 for an agent */
	uint64_t ticks, held_ns, wakes, late_ns;
};
/* Fill *r (zeroed first). Exact after stop; while running, end_ns and
 * cpu_ns are 0. */
void domain_source_rate(const struct domain_source *s, struct domain_source_rate *r);

/* Stop sampling (resume the VM, close the connection), then a final drain
 * may still be done. Safe to call twice. */
void domain_source_stop(struct domain_source *s);
/* Ask the source to stop without waiting (a later domain_source_stop
 * waits): an agent for its records, a passive source for its thread, so
 * that several stalled stubs' graces (GDB_STOP_GRACE_MS) run at once.
 * Custom sources: no-op. */
void domain_source_request_stop(struct domain_source *s);
void domain_source_free(struct domain_source *s);

/* What sampling cost, for the recorder's end line: ", held 0.412 ms a
 * tick, 3100 chains 98.2% complete, ..." into buf (each part after ", ";
 * "" when the kind says nothing). */
void domain_source_summary(const struct domain_source *s, char *buf, size_t len);

/*
 * What a kind of source is: its calls on `impl`, mirroring the ones
 * above. The kinds domain_source_start knows (gdb, agent) are tables in
 * domain_source.c; domain_source_custom makes a source of any other (the
 * collector's unit test drives the loop with such fakes). The source owns
 * impl: free() is called on it by domain_source_free. drain, ended,
 * message, name, samples, lost, stop and free must be set; the others
 * may be NULL (write_meta, write_next_meta: nothing to write; begin,
 * request_stop: nothing to do; started: started at once; info: none;
 * take_info: info once; rate: no rate reported; summary: nothing said).
 */
struct domain_source_ops {
	bool passive;           /* stopped at once (domain_source_is_passive) */
	int (*write_meta)(void *impl, struct dp_writer *w);
	int (*write_next_meta)(void *impl, struct dp_writer *w);
	void (*begin)(void *impl);
	bool (*started)(const void *impl);
	int (*drain)(void *impl, struct dp_writer *w);
	bool (*ended)(const void *impl);
	const char *(*message)(const void *impl);
	const char *(*info)(const void *impl);
	const char *(*take_info)(void *impl);
	const char *(*name)(const void *impl);
	uint64_t (*samples)(const void *impl);
	uint64_t (*lost)(const void *impl);
	void (*rate)(const void *impl, struct domain_source_rate *r);
	void (*summary)(const void *impl, char *buf, size_t len);
	void (*request_stop)(void *impl);
	void (*stop)(void *impl);
	void (*free)(void *impl);
};
struct domain_source *domain_source_custom(const struct domain_source_ops *ops, void *impl);

#endif
