/* SPDX-License-Identifier: MIT */
/*
 * Passive domain source: samples one QEMU (or other) VM through its GDB
 * remote serial protocol stub. One sampler thread per VM stops the VM at
 * opts->hz, reads rip/cs/cr3 of every vCPU, resumes it, and queues the
 * samples in a bounded queue that gdb_source_drain() empties into the
 * writer. Only read-only packets are ever sent (see docs/passive.md).
 *
 * collect/domain_source.c dispatches "NAME=gdb:..." specs here; the
 * functions mirror domain_source.h one for one.
 */
#ifndef DOMPROF_COLLECT_GDB_SOURCE_H
#define DOMPROF_COLLECT_GDB_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/domain_source.h"
#include "format/format.h"
#include "guest/orc.h"

struct gdb_source;

/* Parsed "gdb:..." part of a domain spec (after "NAME=gdb:"). */
/* GDB_SYM_GUEST (kallsyms=guest, and the default when no symbol file is
 * given): read from guest memory (collect/gdb_guest.c). */
enum gdb_symsrc { GDB_SYM_NONE = 0, GDB_SYM_KALLSYMS, GDB_SYM_SYSMAP, GDB_SYM_VMLINUX, GDB_SYM_GUEST };

struct gdb_spec {
	char name[64];
	bool is_unix;
	char host[256];         /* TCP host, or unix socket path */
	char port[16];
	enum gdb_symsrc symsrc;
	char symfile[4096];
	bool kaslr_auto;
	bool kaslr_given;       /* kaslr= appeared in the spec */
	uint64_t kaslr;
	bool regs_p;            /* regs=p: read registers with p, not g */
	bool no_pipeline;       /* pipeline=0: wait for the stop reply before reading */
	bool no_current;        /* current=0: do not read the guest's current task per tick */
	/* With -g: unwind-window=, unwind-max=, unwind-depth= (0: the
	 * defaults of guest/orc.h) */
	struct guest_orc_opts unwind;
	/* start-time=SECONDS, start-mb=MIB: the start-up budget (0: the
	 * defaults below) */
	unsigned start_s, start_mb;
	/* walk-ms=MS: the time budget of a task-list walk during the
	 * recording (0: GUEST_REWALK_BUDGET_MS of gdb_guest.c) */
	unsigned walk_ms;
	/* paging=4|5: the guest's paging mode, over what its vCPU's cr4 and
	 * its kernel say (0: found from them; enum guest_paging) */
	unsigned paging;
};

/*
 * The start-up of a domain whose symbols and processes are read from
 * guest memory (no symbol file) runs on the source's own thread while
 * the recording samples, and is bounded: at most GDB_START_S seconds
 * and GDB_START_MB MiB of guest memory (start-time=, start-mb=). The VM
 * is paused meanwhile; past the budget, or when the recording ends
 * first, the source goes on with what it read (a task list cut short,
 * no modules...) and its info line says what was skipped. Connecting
 * and learning the target (registers, vCPUs) and a symbol file's KASLR
 * search stay in gdb_source_start: a failure there is the user's
 * address or file, and fails the recording before it begins. The
 * defaults leave three times what a first `-g` start of a 6.1 kernel
 * takes on a loaded 2-CPU host (10.8 MB in 3.3 s); a task list at the
 * 65,536-task bound (59 MB) is cut by either.
 */
#define GDB_START_S 10u
#define GDB_START_MB 32u

/* Parse a whole spec "NAME=gdb:HOST:PORT[,OPTS]" / "NAME=gdb:unix:PATH[,OPTS]".
 * Returns 0 or -EINVAL with a reason in err. */
int gdb_spec_parse(const char *spec, struct gdb_spec *out, char *err, size_t errlen);

/* 0 if host resolves only to loopback addresses (127/8, ::1);
 * -EPERM if any address is not loopback; -ENOENT/-EINVAL if it does not
 * resolve (reason in err). */
int gdb_check_loopback(const char *host, const char *port, char *err, size_t errlen);

struct gdb_source *gdb_source_start(const char *spec, uint32_t domain_id,
				    const struct domain_source_opts *o,
				    char *err, size_t errlen);
int gdb_source_write_meta(struct gdb_source *s, struct dp_writer *w);
void gdb_source_begin(struct gdb_source *s);
/* The metadata again for a new file (--switch-output): write_meta, and
 * the guest's known processes queued again for the next drains. */
int gdb_source_write_next_meta(struct gdb_source *s, struct dp_writer *w);
int gdb_source_drain(struct gdb_source *s, struct dp_writer *w);
bool gdb_source_ended(const struct gdb_source *s);
const char *gdb_source_message(const struct gdb_source *s);
const char *gdb_source_info(const struct gdb_source *s);
const char *gdb_source_take_info(struct gdb_source *s);
/* Ask the sampler to stop without waiting for it (gdb_source_stop waits). */
void gdb_source_request_stop(struct gdb_source *s);
const char *gdb_source_name(const struct gdb_source *s);
uint64_t gdb_source_samples(const struct gdb_source *s);
/* The sampling rate and cost (domain_source.h's struct, filled). */
void gdb_source_rate(const struct gdb_source *s, struct domain_source_rate *r);
void gdb_source_stop(struct gdb_source *s);

/* Counters for tests and benchmarks (consistent enough while running). */
struct gdb_source_stats {
	uint64_t samples;       /* vCPU samples taken */
	uint64_t ticks;         /* times the VM was stopped */
	uint64_t lost;          /* vCPU samples lost to missed ticks */
	uint64_t stop_ns;       /* total time the VM was held stopped */
	uint64_t intr_ns;       /* of which: from 0x03 to the stop reply */
	uint64_t kaslr_offset;
	size_t vcpus;
	/* With -g: chains unwound, of which complete (ended at the end of a
	 * stack or the user boundary), stack bytes and `m` reads for them */
	uint64_t chains, chains_complete, unwind_bytes, unwind_reads;
	/* Current tasks checked again (their identity read: a task switch,
	 * a new cr3, a task that just changed) and of those read whole (a
	 * new process or an exec), see gdb_guest.c */
	uint64_t task_checks, task_changes, task_check_ns;  /* ns: the VM held for them */
	uint64_t walks_cut;     /* task-list walks during the recording cut by their budget */
};
void gdb_source_get_stats(const struct gdb_source *s, struct gdb_source_stats *st);

/* The gdb source behind a domain source, or NULL if it is another kind
 * (implemented in collect/domain_source.c; for tests and benchmarks). */
struct gdb_source *domain_source_gdb(struct domain_source *s);
void gdb_source_free(struct gdb_source *s);

#endif
