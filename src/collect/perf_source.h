/* SPDX-License-Identifier: MIT */
/*
 * The host's sample source: perf_event_open on every selected CPU, one
 * mmap ring per CPU (every other event of that CPU is redirected into it
 * with PERF_EVENT_IOC_SET_OUTPUT), and a drain that hands the records to
 * the caller in time order, already decoded into the format's structs.
 *
 * Threading: none of its own. The recorder's collector thread calls
 * perf_source_poll() and perf_source_drain() in a loop; nothing here
 * blocks except poll. Nothing here prints or exits.
 *
 * Ordering: each CPU's ring is in time order, but rings are read one
 * after another, so a record read now from CPU 1 may be older than one
 * read a moment ago from CPU 0. drain() therefore keeps what it read in
 * a queue and passes on only records not newer than the newest time seen
 * in the previous drain (perf's "finished round" rule); the final drain
 * passes on everything. So an MMAP or COMM always reaches the file
 * before the samples that depend on it.
 */
#ifndef DOMPROF_COLLECT_PERF_SOURCE_H
#define DOMPROF_COLLECT_PERF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/events.h"
#include "format/format.h"

struct perf_source;

struct perf_source_opts {
	const struct ev_spec *events;  /* events[i] gets dp_event id i */
	size_t nevents;
	uint64_t period;               /* sample period, or Hz when freq */
	bool freq;
	bool callchain;                /* -g: PERF_SAMPLE_CALLCHAIN */
	/* --call-graph dwarf: > 0 adds PERF_SAMPLE_REGS_USER (PERF_UREGS_MASK)
	 * and PERF_SAMPLE_STACK_USER of this many bytes (a multiple of 8, at
	 * most DP_MAX_USTACK) to every event; needs callchain (perf_source_open
	 * fails with -EINVAL without it, or on an architecture other than
	 * x86-64, where no register mask is known). */
	uint32_t ustack_size;
	const int *cpus;               /* CPUs to open (online ones) */
	size_t ncpus;
	const pid_t *pids;             /* NULL/0: system wide (-a) */
	size_t npids;
	bool all_threads;              /* open every thread of each pid (-p) */
	bool enable_on_exec;           /* start counting at the pid's exec */
	size_t ring_pages;             /* data pages per ring, power of two */
	/* Do not ask the kernel for build-ids in MMAP2 records (the sideband
	 * reads them from the files instead), so that other tools' records
	 * made meanwhile do not get the flag the kernel leaks
	 * (dp_perf_mmap2_buildid in format/format.h says how). */
	bool no_buildid;
};

/* Where opening failed, so the recorder can name it. */
struct perf_source_error {
	int err;                       /* negative errno */
	size_t event;                  /* index into opts.events */
	int cpu;
	pid_t pid;                     /* -1 for system wide */
	const char *what;              /* "perf_event_open", "mmap", ... */
};

/*
 * Open all events (disabled unless enable_on_exec) and map the rings.
 * Threads of a pid that vanish while opening are skipped; a pid with no
 * thread left fails with -ESRCH. Returns NULL and fills *e on failure.
 */
struct perf_source *perf_source_open(const struct perf_source_opts *o,
				     struct perf_source_error *e);
void perf_source_free(struct perf_source *ps);

/*
 * Would the kernel let this process open `ev` on itself with the kernel
 * excluded (the event's ":u" form)? Opens and closes one disabled event
 * on the calling thread. Returns 0 or the negative errno of the open.
 * For error hints: the answer depends on the kernel's reading of
 * perf_event_paranoid (3 forbids everything on some distributions'
 * kernels, and means the same as 2 on others).
 */
int perf_source_probe_user(const struct ev_spec *ev);

int perf_source_enable(struct perf_source *ps);
int perf_source_disable(struct perf_source *ps);

/* Wait up to timeout_ms for a ring to reach its wakeup watermark.
 * Returns 0 (also on EINTR) or a negative errno. Rings whose task is
 * gone (POLLHUP) stop being polled but are still drained. */
int perf_source_poll(struct perf_source *ps, int timeout_ms);

/* One decoded record, valid during the callback only. */
enum perf_item_kind { PERF_ITEM_SAMPLE, PERF_ITEM_TASK, PERF_ITEM_MMAP };
struct perf_item {
	enum perf_item_kind kind;
	union {
		struct dp_sample sample;
		struct dp_task task;
		struct dp_mmap mmap;   /* buildid_len 0 when the kernel gave none */
	} u;
};
typedef int (*perf_item_fn)(void *ctx, const struct perf_item *it);

/*
 * Read every ring and pass records to fn in time order (see the header
 * paragraph; `final` passes everything still queued). Stops at and
 * returns the first negative value fn returns; else 0.
 */
int perf_source_drain(struct perf_source *ps, bool final, perf_item_fn fn, void *ctx);

/* ---- Record decoding: drain's parts, exposed for their unit test --- */

/* Copy len bytes at ring position pos (wrapping at mask + 1, a power of
 * two) of the ring's data to dst. */
void perf_ring_copy(const uint8_t *data, uint64_t mask, uint64_t pos, void *dst, size_t len);

/* What the ring reader does with one record. */
struct perf_ring_rec {
	uint32_t size;              /* bytes to advance */
	uint16_t type;              /* PERF_RECORD_* */
	enum { PERF_RR_QUEUE, PERF_RR_LOST, PERF_RR_THROTTLE, PERF_RR_SKIP } what;
	uint64_t time;              /* QUEUE: its time (sample or trailer), 0 if too short */
	uint64_t lost;              /* LOST: samples the kernel dropped */
};

/*
 * Look at the record at ring position tail, with data up to head
 * (positions grow without wrapping; the data wraps at mask + 1).
 * Returns 1 with *o filled, 0 when tail >= head, -1 for a header whose
 * size is below 8 or beyond head (the reader stops there: never spin).
 */
int perf_ring_next(const uint8_t *data, uint64_t mask, uint64_t tail, uint64_t head,
		   struct perf_ring_rec *o);

/* perf's PERF_REGS_MASK for x86-64 user registers (tools/perf/arch/x86):
 * every general register, ip, flags, cs and ss; not ds, es, fs, gs (the
 * kernel has no user value for them). 20 registers, what perf asks for
 * and libdwfl's x86-64 unwinder reads (DWARF numbers 0-16 map to them). */
#define PERF_UREGS_MASK_X86_64 0xff0fffull

/* The optional parts of a sample, as perf_source_open asks for them: with
 * regs_user or stack_user, a CALLCHAIN part always comes before them. */
struct perf_sample_layout {
	uint64_t regs_user;         /* sample_regs_user; 0: no REGS_USER part */
	bool stack_user;            /* a STACK_USER part */
};

/*
 * Copy the SAMPLE record of size bytes at ring position pos (as
 * perf_ring_copy) to dst, which has room for size bytes, leaving out the
 * part of its user stack the kernel did not fill (beyond dyn_size,
 * rounded up to 8): in dwarf mode most of the ring's bytes, for stacks
 * shallower than the size asked for. The copy is a record of the same
 * layout whose stack size field says what was kept, so
 * perf_decode_record gives the same sample except ustack_size, which the
 * caller restores from *ustack_size (the size the kernel stored, set
 * only when something was left out; else 0). Anything the decoder would
 * not find a stack in (lay NULL or without a stack, a short or cut
 * record, ABI NONE) is copied whole. Returns the bytes written.
 */
size_t perf_ring_copy_sample(const uint8_t *data, uint64_t mask, uint64_t pos, size_t size,
			     const struct perf_sample_layout *lay, uint8_t *dst, uint32_t *ustack_size);

/* Storage the pointers of a decoded item borrow (callchain, path, comm). */
struct perf_decode_buf {
	uint64_t chain[DP_MAX_CALLCHAIN];
	uint64_t uregs[64];
	char path[4096];
	char comm[64];
};
/* The event index (dp_event id) of a sample's identifier; 0 if unknown. */
typedef uint16_t (*perf_event_of_fn)(const void *ctx, uint64_t id);

/*
 * Decode one whole record (size bytes at p, header included, laid out as
 * this source opens its events: see perf_source.c; lay NULL: no user
 * registers or stack) into *it; `time` is the one perf_ring_next found.
 * Pointers in *it point into buf, the user stack into p. Returns 1
 * when *it was filled, 0 for a record that is not passed on: too short
 * for its kind, an MMAP2 that is not executable, a kind the ring reader
 * counts instead (LOST, THROTTLE) or ignores. Callchain context markers
 * are dropped, the chain is cut at DP_MAX_CALLCHAIN and at the record's
 * end, strings at their field's end and at buf's size. A sample's user
 * registers come with has_uregs only when their ABI is not NONE (a
 * kernel thread has none) and the registers and stack parts fit in the
 * record (else the sample is passed on without them); only the stack
 * bytes the kernel copied (dyn_size, at most the size it reserved) are
 * kept.
 */
int perf_decode_record(const uint8_t *p, size_t size, uint64_t time,
		       const struct perf_sample_layout *lay,
		       perf_event_of_fn event_of_id, const void *ev_ctx,
		       struct perf_decode_buf *buf, struct perf_item *it);

/* Counters (totals over all CPUs when cpu < 0, else for CPU index i of
 * opts.cpus). lost: samples the kernel dropped (PERF_RECORD_LOST and
 * LOST_SAMPLES); throttled: PERF_RECORD_THROTTLE events. */
size_t perf_source_ncpus(const struct perf_source *ps);
int perf_source_cpu(const struct perf_source *ps, size_t i);
uint64_t perf_source_lost(const struct perf_source *ps, int i);
uint64_t perf_source_throttled(const struct perf_source *ps, int i);
uint64_t perf_source_samples(const struct perf_source *ps, int i);

#endif
