/* SPDX-License-Identifier: MIT */
/*
 * Private to the passive (gdb) domain source: the state of one source and
 * the functions its files share. gdb_source.c is the domain_source glue;
 * gdb_spec.c, gdb_target.c, gdb_sampler.c and gdb_symbols.c are its parts
 * (each file's first paragraph says what it holds). Nothing outside
 * those files includes this header: the public contract is gdb_source.h.
 *
 * Threads: after gdb_source_start, the connection and the fields above
 * `thread` belong to the sampler thread (gdb_sampler_main); the queue
 * and stop request are under `lock`; counters are atomics.
 */
#ifndef DOMPROF_COLLECT_GDB_INTERNAL_H
#define DOMPROF_COLLECT_GDB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_source.h"
#include "collect/kaslr.h"
#include "guest/mem.h"
#include "guest/orc.h"

#define GDB_TIMEOUT_MS 1000
/* How long a stub that stopped answering is still waited for once the
 * recording is asked to stop (see recover_vm). */
#define GDB_STOP_GRACE_MS 2000
/* How long after the stop was asked the end's reads of guest memory
 * (the last task walk, the hottest code pages) may go on: a slow stub
 * cannot hold the recording's end with them. */
#define GDB_FINAL_MS 500
/* Appended to an end message when we cannot know the VM was resumed. */
#define MAY_BE_PAUSED "; the VM may be left paused (run `cont` in its QEMU monitor)"
#define GDB_MAX_SYMFILE (1024ull << 20)
/* Samples drain takes out of the queue at once. */
#define GDB_DRAIN_BATCH 512u

struct reginfo {
	bool present;
	bool in_g;              /* else read with `p regnum` */
	size_t offset;          /* bytes into the g reply */
	unsigned size;          /* bytes */
	unsigned regnum;
};

struct gdb_source {
	struct gdb_spec spec;
	uint32_t domain_id;
	unsigned hz;
	bool use_p;             /* regs=p: read rip/cs/cr3 with p packets */
	bool pipeline;          /* 0x03 and register requests in one write */
	bool want_chains;       /* record -g */
	char address[300];
	char symsrc[4200];
	char info[512];
	char message[512];
	uint64_t kaslr;
	size_t mem_chunk;       /* largest `m` read the stub answers (bytes) */
	struct gdb_guest *guest; /* gdb_guest.c; NULL: no symbols from memory */

	struct rsp_conn *conn;
	struct rsp_tdesc td;
	struct reginfo rip, cs, cr3;
	struct reginfo gs_base, k_gs_base;  /* in g only; for the current task */
	struct reginfo cr4;     /* its LA57 bit (12) tells the paging mode */
	/* The guest's paging mode (enum guest_paging) once known (spec
	 * paging=, cr4, the kernel: gdb_guest.c); every struct guest_mem
	 * of gdb_guest_mem checks its reads against it. */
	unsigned paging;
	size_t gbytes;          /* bytes of the stub's g reply */
	char (*tids)[RSP_MAX_TID];
	size_t nvcpu;
	char *batch;            /* pipelined per-tick requests */
	size_t batchlen;
	unsigned replies;       /* replies the batch produces */
	char detach[40];        /* "D", or "D;PID" for multiprocess thread ids */
	/* The guest's current task, read at every tick (gdb_guest.c decides;
	 * sampler thread only): cur_off is the per-CPU offset of the task
	 * pointer (0: off); each vCPU's per-CPU base is learned from its
	 * gs_base / k_gs_base, and once known the batch carries one
	 * `m BASE+cur_off,8` per vCPU after its registers. */
	uint64_t cur_off;
	uint64_t *pcpu_base;    /* [nvcpu]; 0 unknown */
	bool *batch_m;          /* [nvcpu]: the batch reads that vCPU's task */
	uint64_t *cur_task;     /* [nvcpu]: task pointer read this tick, 0 none */
	bool rebuild;           /* a per-CPU base changed: rebuild the batch */
	/* Call chains (-g; gdb_chains.c), NULL: none. chain_depth frames
	 * at most a sample; each queue slot has that room in qchain, and
	 * drain copies a batch out into dchain before writing it. */
	struct gdb_chains *chains;
	unsigned chain_depth;
	bool *batch_pre;        /* [nvcpu]: the batch reads a stack window ahead */
	uint64_t *qchain;       /* [qcap * chain_depth], under lock */
	uint64_t *dchain;       /* [GDB_DRAIN_BATCH * chain_depth], drain only */
	bool counters_written;  /* drain only */
	/* Code bytes of the hottest guest kernel pages (gdb_code.c): pages
	 * counted per kernel-mode sample (sampler thread), read at the end
	 * while the VM is stopped, written by the final drain. */
	struct gdb_code *code;

	/* What the stub owes the sampler (sampler thread only): the stop
	 * reply to our 0x03 and the replies to requests already sent. If it
	 * stops answering with something owed, it will stop the VM for us
	 * once it catches up (see recover_vm). */
	bool stop_owed;
	unsigned owed;
	bool unsure;            /* a packet write failed midway: state unknown */

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go;                /* under lock: gdb_source_begin was called */
	bool stop_req;          /* under lock */
	uint64_t stop_req_ns;   /* under lock: when stop_req was set */
	bool stopped;           /* stop() done */
	atomic_bool ended;
	/* mono_ns() when stop was asked, 0 before: read by the memory
	 * reader (struct mem_ctx) without the lock */
	atomic_uint_fast64_t stop_at_ns;
	/* The start-up from guest memory runs on the sampler thread
	 * (gdb_source.h): `late` says so; `ready` is set (release) when it
	 * is over, and info, symsrc, the guest state and the queue are
	 * the sampler's until then. info_said: info was taken (once);
	 * meta_written: the file being written has this source's DOMAIN
	 * record (collector thread). */
	bool late;
	bool starting;          /* sampler thread: in the late start-up */
	atomic_bool ready;
	atomic_bool info_said;
	bool meta_written;

	/* Queue, under lock. */
	struct dp_sample *q;
	size_t qcap, qhead, qcount;
	uint64_t lost_pending;

	atomic_uint_fast64_t samples;   /* vCPU samples taken */
	atomic_uint_fast64_t ticks;     /* VM stops */
	atomic_uint_fast64_t stop_ns;   /* total time the VM was held stopped */
	atomic_uint_fast64_t intr_ns;   /* of which: 0x03 until the stop reply */
	atomic_uint_fast64_t lost_total;
	/* The sampler's span and cost (domain_source_rate): mono_ns() at
	 * its first tick's start and when it ended, its thread's CPU time
	 * at the end (set once, before it returns). */
	atomic_uint_fast64_t t_begin, t_end, cpu_ns;
	/* the ticks the sampler thread slept for, and how late it woke for
	 * them, summed: its own starvation, apart from the stub's latency
	 * (held time) and catch-up ticks */
	atomic_uint_fast64_t wakes, late_ns;
};

/* gdb_source.c */
/* Sampler thread, VM stopped since connect: the start-up from guest
 * memory (gdb_guest_start within the budget), info and symsrc filled,
 * the queue made, ready set. 0, or the stub's negative errno (the
 * source then ends; info says nothing). */
int gdb_source_late_start(struct gdb_source *s);
/* The spec key of a symbol source ("kallsyms", "sysmap", "vmlinux"). */
const char *gdb_symsrc_key(enum gdb_symsrc s);
/* Describe an errno from the protocol layer. */
const char *gdb_rsp_strerror(int e);

/* True once the source was asked to stop more than GDB_FINAL_MS ago. */
bool gdb_final_over(const struct gdb_source *s);

/* gdb_code.c: count a tick's guest kernel samples per page; at the end
 * (VM stopped by us, sampler thread) read the hottest pages; the final
 * drain writes them as one SYMTAB record (DP_SYMTAB_CODE). */
void gdb_code_tick(struct gdb_source *s, const struct dp_sample *v, size_t n);
void gdb_code_final(struct gdb_source *s);
int gdb_code_drain(struct gdb_source *s, struct dp_writer *w);
void gdb_code_free(struct gdb_source *s);

/* gdb_target.c */
/* Connect and learn the target. Fills err on failure. The VM is left
 * stopped (QEMU stops it when a debugger connects). */
int gdb_setup_target(struct gdb_source *s, char *err, size_t errlen);

/* gdb_sampler.c */
/* The per-tick request batch, from the register layout and vCPUs. */
void gdb_build_batch(struct gdb_source *s);
/* Read rip/cs/cr3 of every vCPU of the stopped VM into out[nvcpu]
 * (send: also send the batch). 0 or a negative errno. */
int gdb_read_vcpus(struct gdb_source *s, struct dp_sample *out, uint64_t t, bool send);
/* One register of the vCPU selected (Hg) on the stopped VM: from a g
 * reply, or a p packet when it is not in g (or regs=p). 0, -ENOENT (the
 * stub has no such register) or a negative errno. */
int gdb_read_reg(struct gdb_source *s, const struct reginfo *ri, uint64_t *v);
/* Stop the VM (0x03) and wait for the stop reply; batch: pipeline the
 * register requests. 0 or a negative errno. */
int gdb_interrupt_vm(struct gdb_source *s, bool batch);
/* Resume the VM, sending the acks owed first. 0 or a negative errno. */
int gdb_resume_vm(struct gdb_source *s, unsigned acks);
/* Detach from the stub (the VM runs on). 0 or a negative errno. */
int gdb_detach_vm(struct gdb_source *s);
/* The sampler thread (arg: the struct gdb_source). */
void *gdb_sampler_main(void *arg);

/* gdb_symbols.c */
/* A symbol file the user named: bounded, and never a FIFO or device. */
int gdb_read_symfile(const char *path, uint8_t **data, size_t *len);
/* kaslr_find's memory reader on the stub (vctx: a struct mem_ctx).
 * With s set, a stop of the source ends the reads: at once during the
 * start-up, else GDB_FINAL_MS after it was asked (the final task walk
 * still runs, but a huge one cannot hold the recording's end).
 * The reads stop at deadline_ns and past max_bytes where those are set
 * (the start-up's budget, a task-list walk's during the recording);
 * with startup set also after the stub's first fatal error; over says
 * why (-ETIME, -E2BIG, -ECANCELED for the stop, or the stub's error). */
struct mem_ctx {
	struct rsp_conn *c;
	struct gdb_source *s;
	bool startup;
	uint64_t deadline_ns, max_bytes, bytes;
	int over;
};
int gdb_mem_read(void *vctx, uint64_t addr, void *buf, size_t len);
/* Guest memory through the stub (src/guest/'s reader), in reads of at
 * most the stub's largest `m`; mc holds the context. */
void gdb_guest_mem(struct gdb_source *s, struct guest_mem *m, struct mem_ctx *mc);
/* Kernel-mode rips of the stopped VM's vCPUs into rips[] (RSP_MAX_THREADS
 * room), *kcpu the first vCPU in kernel mode; when all are in user mode
 * the VM runs a little and is looked at again (bounded). 0, -EAGAIN (no
 * vCPU in the kernel), or another negative errno. */
int gdb_kernel_vcpus(struct gdb_source *s, uint64_t *rips, size_t *nrips, int *kcpu);
/* Find the KASLR offset of the stopped VM's kernel into s->kaslr; how
 * says how it was found. 0, -EAGAIN (no vCPU in the kernel), or another
 * negative errno. */
int gdb_find_kaslr(struct gdb_source *s, const struct kaslr_image *img, char *how, size_t howlen);
/* Load the symbol source of the spec (and the KASLR offset). Fills err. */
int gdb_load_symbols(struct gdb_source *s, struct kaslr_image *img, char *err, size_t errlen);
/* The user's symbol file as kallsyms text of this boot's core-kernel
 * addresses (file address + s->kaslr; a vmlinux's .symtab, module lines
 * left out), for what is read from guest memory by name with a symbol
 * file (the ORC tables, BTF, the task list). *text malloc'd. Returns 0,
 * -ENOENT (no symbol) or the file's errno. */
int gdb_symfile_text(const struct gdb_source *s, char **text, size_t *len);

/* gdb_chains.c: guest kernel call chains (-g) */
/* With the VM stopped, from gdb_guest_start once the kernel's symbols
 * are read (sym, ctx: their lookup; buildid: the cache key, may be "";
 * m: guest memory, its counters grow): find the registers, read the ORC
 * tables, set s->chains. note gets "; call chains by ORC (...)", or
 * "; no call chains: WHY". 0 or a negative errno (no chains then: a
 * guest's bad tables never fail the recording). */
int gdb_chains_start(struct gdb_source *s, struct guest_mem *m, guest_sym_fn sym, void *ctx,
		     const char *buildid, char *note, size_t notelen);
/* Sampler thread: vCPU i's registers from the g reply in conn. */
void gdb_chains_regs(struct gdb_source *s, const struct rsp_conn *conn, size_t i);
/* Sampler thread, VM stopped, v[n] read (and named): unwind the kernel-
 * mode samples; v[i].callchain points into s->chains until the next
 * tick. Sends the *acks owed before its first request (then *acks = 0). */
void gdb_chains_tick(struct gdb_source *s, struct dp_sample *v, size_t n, unsigned *acks);
/* The stack window the next batch reads ahead for vCPU i (the page end
 * of its last kernel sp, as one `m`): true and *addr, *len, or false. */
bool gdb_chains_guess(const struct gdb_source *s, size_t i, uint64_t *addr, size_t *len);
/* Sampler thread: the reply to that `m` in conn (an error reply: none). */
void gdb_chains_ahead(struct gdb_source *s, const struct rsp_conn *conn, size_t i);
/* Sampler thread, after the tick: the next windows to read ahead (sets
 * s->rebuild when the batch must change). */
void gdb_chains_next(struct gdb_source *s, const struct dp_sample *v, size_t n);
/* The unwinding counters into st (left alone without chains). */
void gdb_chains_stats(const struct gdb_source *s, struct gdb_source_stats *st);
/* After the sampler ended: the COUNTERS record. Records written (0, 1)
 * or the writer's negative errno. */
int gdb_chains_counters(struct gdb_source *s, struct dp_writer *w);
void gdb_chains_free(struct gdb_source *s);

/* gdb_guest.c: symbols and processes from guest memory */
/* With the VM stopped after gdb_setup_target: read the kernel's symbols,
 * modules and processes (s->guest), within the start-up budget and
 * until the source is stopped (gdb_source.h). What was found or not,
 * and what a cut skipped, goes into note (one line, for s->info).
 * Returns 0 (also when nothing could be read: the domain is then
 * recorded by address) or a negative errno when the stub itself failed
 * (s->guest then keeps what was read before). */
int gdb_guest_start(struct gdb_source *s, char *note, size_t notelen);
/* The kallsyms text read (kernel and modules), NULL if none. */
const char *gdb_guest_symtab(const struct gdb_source *s, size_t *len);
/* Sampler thread, VM stopped, v[n] just read (and unwound): sets the pid
 * of user-mode samples, and of kernel-mode ones whose chain reached user mode,
 * from their address space; may walk the task list (rate
 * limited), first sending the *acks owed (then *acks = 0). */
void gdb_guest_tick(struct gdb_source *s, struct dp_sample *v, size_t n, unsigned *acks);
/* Sampler thread, VM stopped at the end: one last walk. */
void gdb_guest_final(struct gdb_source *s);
/* Any thread: the sampler queues a TASK record of every process it knows
 * again at its next tick (they name the samples of a new file). */
void gdb_guest_replay(struct gdb_source *s);
/* Any thread: the task-check counters into st (0 without a guest). */
void gdb_guest_stats(const struct gdb_source *s, struct gdb_source_stats *st);
/* Writes the TASK records queued. Records written or a negative errno. */
int gdb_guest_drain(struct gdb_source *s, struct dp_writer *w);
void gdb_guest_free(struct gdb_source *s);

#endif
