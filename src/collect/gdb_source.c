// SPDX-License-Identifier: MIT
/*
 * Passive domain sampler: one thread per VM talks to the VM's gdbstub,
 * stops it at the sampling rate, reads rip/cs/cr3 of every vCPU, and
 * resumes it. Samples go to a bounded queue under a mutex that the
 * recorder's collector empties with gdb_source_drain(); the sampler never
 * touches the writer, so a stalled VM cannot block the recording.
 *
 * Only reading packets are sent (?, g, p, Hg, qfThreadInfo, qsThreadInfo,
 * qSupported, qXfer:features:read, QStartNoAckMode, m, c, 0x03, D): the
 * stub gives full control of the VM, and we never write its memory or
 * registers.
 *
 * QEMU (softmmu) stops a running VM on *any* byte it receives, so in ack
 * mode every '+' we owe is sent before the `c` that resumes the VM, in the
 * same write.
 *
 * This file is the domain_source glue (start, metadata, drain, stop,
 * free); the parts are gdb_spec.c (spec, loopback policy), gdb_target.c
 * (connection, target description, registers), gdb_sampler.c (sampler
 * thread, queue, stall and recover/detach), gdb_symbols.c (symbol file,
 * KASLR); their shared declarations are in gdb_internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_internal.h"
#include "collect/kaslr.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

/* ---- Helpers ---------------------------------------------------------- */

const char *gdb_symsrc_key(enum gdb_symsrc s)
{
	switch (s) {
	case GDB_SYM_KALLSYMS: return "kallsyms";
	case GDB_SYM_SYSMAP: return "sysmap";
	case GDB_SYM_VMLINUX: return "vmlinux";
	case GDB_SYM_GUEST: return "kallsyms";
	default: return "";
	}
}

/* Describe an errno from the protocol layer. */
const char *gdb_rsp_strerror(int e)
{
	switch (e) {
	case -ETIMEDOUT: return "stub did not answer within 1 s";
	case -EPIPE: return "stub closed the connection";
	case -EBADMSG: return "packet with a bad checksum";
	case -EMSGSIZE: return "overlong packet";
	case -EPROTO: return "malformed packet";
	default: return strerror(-e);
	}
}

/* The sample queue, sized for the rate, the vCPUs and the chains. */
static void alloc_queue(struct gdb_source *s)
{
	size_t cap = (size_t)s->hz * s->nvcpu * 2;
	/* with chains, each slot holds one: at most ~64 MiB of them */
	size_t most = s->chain_depth ? (64u << 20) / (s->chain_depth * sizeof(uint64_t)) : (1u << 20);
	s->qcap = cap < 4096 ? 4096 : cap > most ? most : cap;
	s->q = xcalloc(s->qcap, sizeof(*s->q));
	if (s->chain_depth) {
		s->qchain = xcalloc(s->qcap * s->chain_depth, sizeof(*s->qchain));
		s->dchain = xcalloc(GDB_DRAIN_BATCH * s->chain_depth, sizeof(*s->dchain));
	}
}

int gdb_source_late_start(struct gdb_source *s)
{
	/* The table read from memory holds this boot's addresses: the
	 * DOMAIN record's offset stays 0, as for a kallsyms copy of the
	 * same boot; the note says the offset found. */
	char note[512];
	int r = gdb_guest_start(s, note, sizeof(note));
	size_t glen;
	if (gdb_guest_symtab(s, &glen))
		snprintf(s->symsrc, sizeof(s->symsrc), "kallsyms=guest");
	size_t il = strlen(s->info);
	if (r == 0)
		snprintf(s->info + il, sizeof(s->info) - il, "; %s", note);
	else
		s->info[0] = 0;   /* the end message says it */
	pthread_mutex_lock(&s->lock);
	alloc_queue(s);
	pthread_mutex_unlock(&s->lock);
	atomic_store(&s->ready, true);
	return r;
}

struct gdb_source *gdb_source_start(const char *spec, uint32_t domain_id,
				    const struct domain_source_opts *o,
				    char *err, size_t errlen)
{
	struct gdb_source *s = xcalloc(1, sizeof(*s));
	struct kaslr_image img;
	bool sync = false;       /* lock and cond initialized */
	int r;

	if (gdb_spec_parse(spec, &s->spec, err, errlen) < 0)
		goto fail;
	s->domain_id = domain_id;
	s->hz = o && o->hz ? o->hz : 1000;
	if (s->hz > 1000000)
		s->hz = 1000000;
	s->use_p = s->spec.regs_p;
	s->pipeline = !s->spec.no_pipeline;
	s->kaslr = s->spec.kaslr;
	snprintf(s->detach, sizeof(s->detach), "D");
	if (s->spec.is_unix)
		snprintf(s->address, sizeof(s->address), "gdb:unix:%s", s->spec.host);
	else if (strchr(s->spec.host, ':'))
		snprintf(s->address, sizeof(s->address), "gdb:[%s]:%s", s->spec.host, s->spec.port);
	else
		snprintf(s->address, sizeof(s->address), "gdb:%s:%s", s->spec.host, s->spec.port);
	bool from_guest = !s->spec.symsrc || s->spec.symsrc == GDB_SYM_GUEST;
	s->want_chains = o && o->callchains;
	if (!from_guest)
		snprintf(s->symsrc, sizeof(s->symsrc), "%s=%s", gdb_symsrc_key(s->spec.symsrc), s->spec.symfile);

	if (!s->spec.is_unix && !(o && o->allow_remote)) {
		char why[400];
		if (gdb_check_loopback(s->spec.host, s->spec.port, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: %s", s->spec.name, why);
			goto fail;
		}
	}
	if (!from_guest && gdb_load_symbols(s, &img, err, errlen) < 0)
		goto fail;

	/* The lock first: reading guest memory at start already queues TASK
	 * records under it. */
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	sync = true;
	s->conn = xmalloc(sizeof(*s->conn));
	s->conn->fd = -1;
	if (gdb_setup_target(s, err, errlen) < 0)
		goto fail;

	char how[160] = "";
	if (s->spec.kaslr_auto) {
		r = gdb_find_kaslr(s, &img, how, sizeof(how));
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot find the guest's KASLR offset (%s); give kaslr=OFFSET",
				 s->spec.name,
				 r == -EAGAIN ? "no vCPU was in kernel mode" :
				 r == -ENOENT ? "no 2 MiB step of the kernel area matches the symbol file" :
				 r == -EPROTO ? "the vCPUs' kernel rips contradict the match" : gdb_rsp_strerror(r));
			goto fail;
		}
	}
	const char *kwhy = s->spec.kaslr_auto ? how :
			   s->spec.kaslr_given ? "given" :
			   s->spec.symsrc == GDB_SYM_KALLSYMS ? "kallsyms from the running kernel" : "none";
	int il = snprintf(s->info, sizeof(s->info), "%s: %zu vCPU%s at %s, registers by %s%s", s->spec.name,
			  s->nvcpu, s->nvcpu == 1 ? "" : "s", s->address + 4, s->use_p ? "p" : "g",
			  s->conn->noack ? ", no-ack" : "");
	if (!from_guest)
		snprintf(s->info + il, sizeof(s->info) - (size_t)il, "; KASLR offset 0x%" PRIx64 " (%s%s)",
			 s->kaslr, s->spec.kaslr_auto ? "auto, from " : "", kwhy);
	/* Guest memory is read on the sampler thread, while the recording
	 * runs (gdb_source_late_start): with a symbol file too, by its
	 * symbols (processes, call chains). */
	s->late = true;
	if ((r = pthread_create(&s->thread, NULL, gdb_sampler_main, s)) != 0) {
		snprintf(err, errlen, "%s: cannot start the sampler thread: %s", s->spec.name, strerror(r));
		goto fail;
	}
	s->thread_started = true;
	return s;
fail:
	if (s->conn) {
		/* Leave the VM running as we found it. */
		if (s->conn->fd >= 0)
			(void)gdb_detach_vm(s);
		rsp_close(s->conn);
		free(s->conn);
	}
	gdb_guest_free(s);
	if (sync) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
	}
	rsp_tdesc_release(&s->td);
	free(s->tids);
	free(s->batch);
	free(s->q);
	free(s);
	return NULL;
}

/* ---- Output ------------------------------------------------------------- */

int gdb_source_write_meta(struct gdb_source *s, struct dp_writer *w)
{
	/* a start-up still reading guest memory: its drain writes them */
	if (!atomic_load(&s->ready))
		return 0;
	s->meta_written = true;
	struct dp_domain d = {
		.id = s->domain_id,
		.kind = DP_DOMAIN_PASSIVE,
		.vcpus = (uint32_t)s->nvcpu,
		.kaslr_offset = s->kaslr,
		.name = s->spec.name,
		.address = s->address,
		.symsrc = s->symsrc,
	};
	int r = dp_write_domain(w, &d);
	size_t glen;
	const char *gtab = gdb_guest_symtab(s, &glen);
	if (r < 0 || gtab) {
		struct dp_symtab gst = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms", .data = (const uint8_t *)gtab, .size = glen };
		return r < 0 ? r : dp_write_symtab(w, s->domain_id, &gst);
	}
	if (!s->spec.symsrc || s->spec.symsrc == GDB_SYM_GUEST)
		return r;
	uint8_t *data;
	size_t len;
	r = gdb_read_symfile(s->spec.symfile, &data, &len);
	if (r < 0)
		return r;
	struct dp_symtab st = {
		.kind = s->spec.symsrc == GDB_SYM_KALLSYMS ? DP_SYMTAB_KALLSYMS :
			s->spec.symsrc == GDB_SYM_SYSMAP ? DP_SYMTAB_SYSMAP : DP_SYMTAB_ELF,
		.name = s->spec.symsrc == GDB_SYM_KALLSYMS ? "kallsyms" :
			s->spec.symsrc == GDB_SYM_SYSMAP ? "System.map" : "vmlinux",
		.data = data,
		.size = len,
	};
	r = dp_write_symtab(w, s->domain_id, &st);
	free(data);
	return r;
}

int gdb_source_write_next_meta(struct gdb_source *s, struct dp_writer *w)
{
	s->meta_written = false;
	int r = gdb_source_write_meta(s, w);
	if (r >= 0 && s->meta_written)
		gdb_guest_replay(s);
	return r;
}

void gdb_source_begin(struct gdb_source *s)
{
	pthread_mutex_lock(&s->lock);
	s->go = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int gdb_source_drain(struct gdb_source *s, struct dp_writer *w)
{
	struct dp_sample buf[GDB_DRAIN_BATCH];
	if (!atomic_load(&s->ready))
		return 0;   /* starting: nothing is queued yet */
	/* The DOMAIN record and tables of a start-up that ended while the
	 * recording ran, before anything of the domain. */
	int written = 0;
	if (!s->meta_written) {
		int r = gdb_source_write_meta(s, w);
		if (r < 0)
			return r;
		written++;
	}
	/* TASK records first: they name the samples that follow. */
	int wt = gdb_guest_drain(s, w);
	if (wt < 0)
		return wt;
	written += wt;

	for (;;) {
		size_t n = 0;
		uint64_t lost = 0;
		pthread_mutex_lock(&s->lock);
		while (n < GDB_DRAIN_BATCH && s->qcount) {
			buf[n] = s->q[s->qhead];
			if (buf[n].nr_callchain) {
				/* out of the slot, which the sampler reuses */
				uint64_t *to = s->dchain + n * s->chain_depth;
				memcpy(to, buf[n].callchain, buf[n].nr_callchain * sizeof(*to));
				buf[n].callchain = to;
			}
			n++;
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qcount--;
		}
		lost = s->lost_pending;
		s->lost_pending = 0;
		pthread_mutex_unlock(&s->lock);
		for (size_t i = 0; i < n; i++) {
			int r = dp_write_sample(w, s->domain_id, &buf[i]);
			if (r < 0)
				return r;
			written++;
		}
		if (lost) {
			struct dp_lost l = { .count = lost, .source = DP_LOST_DOMAIN, .where = s->domain_id };
			int r = dp_write_lost(w, &l);
			if (r < 0)
				return r;
			written++;
		}
		if (n < GDB_DRAIN_BATCH)
			break;
	}
	/* The counters once the sampler has ended (the final drain). */
	if (s->stopped && !s->thread_started && !s->counters_written) {
		s->counters_written = true;
		int r = gdb_chains_counters(s, w);
		if (r < 0)
			return r;
		written += r;
		if ((r = gdb_code_drain(s, w)) < 0)
			return r;
		written += r;
	}
	return written;
}

bool gdb_source_ended(const struct gdb_source *s)
{
	return atomic_load(&s->ended);
}

const char *gdb_source_message(const struct gdb_source *s)
{
	return atomic_load(&s->ended) ? s->message : NULL;
}

const char *gdb_source_info(const struct gdb_source *s)
{
	return atomic_load(&s->ready) && s->info[0] ? s->info : NULL;
}

const char *gdb_source_take_info(struct gdb_source *s)
{
	const char *info = gdb_source_info(s);
	return info && !atomic_exchange(&s->info_said, true) ? info : NULL;
}

const char *gdb_source_name(const struct gdb_source *s)
{
	return s->spec.name;
}

uint64_t gdb_source_samples(const struct gdb_source *s)
{
	return atomic_load(&s->samples);
}

void gdb_source_rate(const struct gdb_source *s, struct domain_source_rate *r)
{
	r->domain = s->domain_id;
	r->hz = s->hz;
	r->units = (uint32_t)s->nvcpu;
	r->begin_ns = atomic_load(&s->t_begin);
	r->end_ns = atomic_load(&s->t_end);
	r->samples = atomic_load(&s->samples);
	r->missed = atomic_load(&s->lost_total);
	r->cpu_ns = atomic_load(&s->cpu_ns);
	r->ticks = atomic_load(&s->ticks);
	r->held_ns = atomic_load(&s->stop_ns);
	r->late_ns = atomic_load(&s->late_ns);
	r->wakes = atomic_load(&s->wakes);
}

void gdb_source_get_stats(const struct gdb_source *s, struct gdb_source_stats *st)
{
	st->samples = atomic_load(&s->samples);
	st->ticks = atomic_load(&s->ticks);
	st->lost = atomic_load(&s->lost_total);
	st->stop_ns = atomic_load(&s->stop_ns);
	st->intr_ns = atomic_load(&s->intr_ns);
	st->vcpus = s->nvcpu;
	st->kaslr_offset = s->kaslr;
	st->chains = st->chains_complete = st->unwind_bytes = st->unwind_reads = 0;
	st->task_checks = st->task_changes = st->task_check_ns = st->walks_cut = 0;
	if (atomic_load(&s->ready)) {   /* the chains and tasks are the start-up's until then */
		gdb_chains_stats(s, st);
		gdb_guest_stats(s, st);
	}
}

void gdb_source_stop(struct gdb_source *s)
{
	if (!s || s->stopped)
		return;
	s->stopped = true;
	gdb_source_request_stop(s);
	if (s->thread_started)
		pthread_join(s->thread, NULL);
	s->thread_started = false;
}

void gdb_source_request_stop(struct gdb_source *s)
{
	if (!s || atomic_load(&s->stop_at_ns))
		return;
	pthread_mutex_lock(&s->lock);
	s->stop_req = true;
	s->stop_req_ns = mono_ns();
	atomic_store(&s->stop_at_ns, s->stop_req_ns);
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void gdb_source_free(struct gdb_source *s)
{
	if (!s)
		return;
	gdb_source_stop(s);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	gdb_guest_free(s);
	gdb_chains_free(s);
	gdb_code_free(s);
	free(s->qchain);
	free(s->dchain);
	rsp_tdesc_release(&s->td);
	free(s->conn);
	free(s->tids);
	free(s->batch);
	free(s->q);
	free(s);
}
