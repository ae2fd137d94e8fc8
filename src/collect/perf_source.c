// SPDX-License-Identifier: MIT
/*
 * perf_event host source (see perf_source.h): opens the events, maps one
 * ring per CPU, copies ring records into a time-ordered queue and
 * decodes them into dp_sample / dp_task / dp_mmap for the recorder.
 *
 * Record layouts follow from the one sample_type used for every event:
 * IDENTIFIER | IP | TID | TIME | CPU | PERIOD [| CALLCHAIN [| REGS_USER |
 * STACK_USER]], with sample_id_all, so every non-sample record ends with
 * the 32-byte trailer { pid, tid; time; cpu, res; identifier }. The user
 * registers and stack (--call-graph dwarf) keep the callchain, user part
 * included, as with -g: a report that does not unwind the stack shows
 * what -g shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "collect/perf_source.h"
#include "util/xalloc.h"

#define TRAILER 32u  /* sample_id_all: tid, time, cpu, identifier */

struct ring {
	int fd;                 /* the fd the ring is mapped on */
	int cpu;
	bool polled;            /* false once POLLHUP was seen */
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	uint64_t mask;          /* data size - 1 */
	uint64_t lost, throttled, samples;
};

struct ev_id {
	uint64_t id;
	uint32_t ev;
};

struct qent {
	uint64_t time;
	uint64_t seq;
	uint32_t off, len;
	uint32_t ring;
	uint8_t arena;          /* which of the two arenas holds it */
	uint32_t ustack_size;   /* a sample copied without its stack's unused
				 * tail: the size the kernel stored; else 0 */
};

struct perf_source {
	struct ring *rings;
	size_t nrings;
	int *fds;
	size_t nfds, fdcap;
	struct ev_id *ids;
	size_t nids, idcap;
	struct pollfd *pfd;
	size_t *pfd_ring;
	size_t mmap_bytes;
	/* ordering queue: raw records copied out of the rings, into arena[cur]
	 * (see perf_source_drain on why two arenas, and no copying between) */
	uint8_t *arena[2];
	size_t alen[2], acap[2];
	unsigned cur;
	struct qent *q;
	size_t nq, qcap;
	uint64_t seq;
	uint64_t limit;         /* max time seen by the previous drain */
	struct perf_sample_layout lay;
	struct perf_decode_buf dbuf;  /* what decoded items point into */
};

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void add_fd(struct perf_source *ps, int fd)
{
	xgrow((void **)&ps->fds, &ps->fdcap, ps->nfds + 1, sizeof(int));
	ps->fds[ps->nfds++] = fd;
}

static int cmp_id(const void *a, const void *b)
{
	const struct ev_id *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Thread ids of pid (all of them, or just pid). */
static size_t list_tids(pid_t pid, bool all, pid_t **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	if (all) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
		DIR *d = opendir(p);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d))) {
				if (de->d_name[0] < '0' || de->d_name[0] > '9')
					continue;
				xgrow((void **)out, &cap, n + 1, sizeof(pid_t));
				(*out)[n++] = (pid_t)atoi(de->d_name);
			}
			closedir(d);
		}
	}
	if (!n) {
		xgrow((void **)out, &cap, 1, sizeof(pid_t));
		(*out)[n++] = pid;
	}
	return n;
}

static void fill_attr(struct perf_event_attr *a, const struct perf_source_opts *o,
		      size_t ev, size_t data_bytes, bool buildid)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = o->events[ev].type;
	a->config = o->events[ev].config;
	a->exclude_user = o->events[ev].exclude_user;
	a->exclude_kernel = o->events[ev].exclude_kernel;
	a->exclude_hv = 1;
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->period;
	} else {
		a->sample_period = o->period;
	}
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (o->callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o->ustack_size) {
		/* as perf's --call-graph dwarf, except exclude_callchain_user:
		 * the frame-pointer chain stays (see the top of this file) */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = PERF_UREGS_MASK_X86_64;
		a->sample_stack_user = o->ustack_size;
	}
	a->disabled = 1;
	a->enable_on_exec = o->enable_on_exec;
	a->inherit = o->npids > 0;
	a->sample_id_all = 1;
	/* Same clock as clock_gettime(CLOCK_MONOTONIC), so the snapshot and
	 * STATS times line up with sample times. */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(data_bytes / 4);
	if (ev == 0) {
		/* Side band once per CPU/thread, on the first event only, so
		 * several -e events do not duplicate it. mmap_data stays 0:
		 * the kernel then reports executable mappings only. */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = buildid;
	}
}

struct perf_source *perf_source_open(const struct perf_source_opts *o,
				     struct perf_source_error *e)
{
	memset(e, 0, sizeof(*e));
#if !defined(__x86_64__)
	if (o->ustack_size) { /* no register mask known for this architecture */
		*e = (struct perf_source_error){ -EINVAL, 0, -1, -1, "user registers" };
		return NULL;
	}
#endif
	if (o->ustack_size && (!o->callchain || o->ustack_size % 8 || o->ustack_size > DP_MAX_USTACK)) {
		*e = (struct perf_source_error){ -EINVAL, 0, -1, -1, "user stack size" };
		return NULL;
	}
	struct perf_source *ps = xcalloc(1, sizeof(*ps));
	if (o->ustack_size)
		ps->lay = (struct perf_sample_layout){ PERF_UREGS_MASK_X86_64, true };
	long pgsz = sysconf(_SC_PAGESIZE);
	size_t data_bytes = o->ring_pages * (size_t)pgsz;
	bool buildid = !o->no_buildid;
	ps->mmap_bytes = data_bytes + (size_t)pgsz;
	ps->rings = xcalloc(o->ncpus, sizeof(*ps->rings));

	size_t ntargets = o->npids ? o->npids : 1;
	for (size_t ci = 0; ci < o->ncpus; ci++) {
		int cpu = o->cpus[ci];
		struct ring *r = &ps->rings[ps->nrings];
		r->fd = -1;
		r->cpu = cpu;
		for (size_t pi = 0; pi < ntargets; pi++) {
			pid_t pid = o->npids ? o->pids[pi] : -1;
			pid_t *tids;
			size_t ntids = pid < 0 ? 1 : list_tids(pid, o->all_threads, &tids);
			if (pid < 0) {
				tids = xmalloc(sizeof(pid_t));
				tids[0] = -1;
			}
			size_t opened = 0;
			for (size_t ti = 0; ti < ntids; ti++) {
				for (size_t ev = 0; ev < o->nevents; ev++) {
					struct perf_event_attr a;
					fill_attr(&a, o, ev, data_bytes, buildid);
					int fd = sys_perf_event_open(&a, tids[ti], cpu);
					if (fd < 0 && errno == EINVAL && a.build_id) {
						/* kernels before 5.12: no build-id in MMAP2 */
						buildid = false;
						fill_attr(&a, o, ev, data_bytes, buildid);
						fd = sys_perf_event_open(&a, tids[ti], cpu);
					}
					if (fd < 0 && errno == ESRCH && tids[ti] != pid)
						break; /* a thread exited meanwhile */
					if (fd < 0) {
						*e = (struct perf_source_error){ -errno, ev, cpu, pid, "perf_event_open" };
						free(tids);
						goto fail;
					}
					add_fd(ps, fd);
					opened++;
					if (r->fd < 0) {
						void *m = mmap(NULL, ps->mmap_bytes, PROT_READ | PROT_WRITE,
							       MAP_SHARED, fd, 0);
						if (m == MAP_FAILED) {
							*e = (struct perf_source_error){ -errno, ev, cpu, pid, "mmap" };
							free(tids);
							goto fail;
						}
						r->fd = fd;
						r->pg = m;
						r->data = (uint8_t *)m + pgsz;
						r->mask = data_bytes - 1;
						r->polled = true;
						ps->nrings++;
					} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
						*e = (struct perf_source_error){ -errno, ev, cpu, pid, "PERF_EVENT_IOC_SET_OUTPUT" };
						free(tids);
						goto fail;
					}
					uint64_t id;
					if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) {
						xgrow((void **)&ps->ids, &ps->idcap, ps->nids + 1, sizeof(*ps->ids));
						ps->ids[ps->nids++] = (struct ev_id){ id, (uint32_t)ev };
					}
				}
			}
			free(tids);
			if (!opened) {
				*e = (struct perf_source_error){ -ESRCH, 0, cpu, pid, "perf_event_open" };
				goto fail;
			}
		}
	}
	qsort(ps->ids, ps->nids, sizeof(*ps->ids), cmp_id);
	ps->pfd = xcalloc(ps->nrings ? ps->nrings : 1, sizeof(*ps->pfd));
	ps->pfd_ring = xcalloc(ps->nrings ? ps->nrings : 1, sizeof(size_t));
	return ps;
fail:
	perf_source_free(ps);
	return NULL;
}

int perf_source_probe_user(const struct ev_spec *ev)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev->type;
	a.config = ev->config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	int fd = sys_perf_event_open(&a, 0, -1);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

void perf_source_free(struct perf_source *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->nrings; i++)
		if (ps->rings[i].pg)
			munmap(ps->rings[i].pg, ps->mmap_bytes);
	for (size_t i = 0; i < ps->nfds; i++)
		close(ps->fds[i]);
	free(ps->rings);
	free(ps->fds);
	free(ps->ids);
	free(ps->pfd);
	free(ps->pfd_ring);
	free(ps->arena[0]);
	free(ps->arena[1]);
	free(ps->q);
	free(ps);
}

static int ioctl_all(struct perf_source *ps, unsigned long req)
{
	int ret = 0;
	for (size_t i = 0; i < ps->nfds; i++)
		if (ioctl(ps->fds[i], req, 0) < 0 && !ret)
			ret = -errno;
	return ret;
}

int perf_source_enable(struct perf_source *ps)
{
	return ioctl_all(ps, PERF_EVENT_IOC_ENABLE);
}

int perf_source_disable(struct perf_source *ps)
{
	return ioctl_all(ps, PERF_EVENT_IOC_DISABLE);
}

int perf_source_poll(struct perf_source *ps, int timeout_ms)
{
	size_t n = 0;
	for (size_t i = 0; i < ps->nrings; i++) {
		if (!ps->rings[i].polled)
			continue;
		ps->pfd[n] = (struct pollfd){ .fd = ps->rings[i].fd, .events = POLLIN };
		ps->pfd_ring[n++] = i;
	}
	int r = poll(n ? ps->pfd : NULL, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (size_t i = 0; i < n; i++)
		if (ps->pfd[i].revents & (POLLHUP | POLLERR))
			ps->rings[ps->pfd_ring[i]].polled = false;
	return 0;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

void perf_ring_copy(const uint8_t *data, uint64_t mask, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & mask, size = mask + 1;
	size_t first = len < size - off ? len : (size_t)(size - off);
	memcpy(dst, data + off, first);
	if (first < len)
		memcpy((uint8_t *)dst + first, data, len - first);
}

size_t perf_ring_copy_sample(const uint8_t *data, uint64_t mask, uint64_t pos, size_t size,
			     const struct perf_sample_layout *lay, uint8_t *dst, uint32_t *ustack_size)
{
	*ustack_size = 0;
	uint32_t nregs = lay ? dp_uregs_count(lay->regs_user) : 0;
	uint8_t w[8];
	/* the offsets decode_sample and decode_user read: where any of them
	 * would not find the stack, the record is copied whole */
	if (!lay || !lay->regs_user || !lay->stack_user || size < 64 + 8)
		goto whole;
	perf_ring_copy(data, mask, pos + 56, w, 8);
	uint64_t nr = rd64(w);
	if (nr > (size - 64) / 8)
		goto whole;
	size_t off = 64 + 8 * (size_t)nr;
	if (size - off < 8)
		goto whole;
	perf_ring_copy(data, mask, pos + off, w, 8);
	off += 8;
	if (rd64(w) == PERF_SAMPLE_REGS_ABI_NONE || (size - off) / 8 < nregs + 1)
		goto whole;
	off += 8 * (size_t)nregs;
	perf_ring_copy(data, mask, pos + off, w, 8);
	uint64_t ssize = rd64(w);
	off += 8;
	if (!ssize || ssize % 8 || ssize > DP_MAX_USTACK || size - off < ssize + 8)
		goto whole;
	perf_ring_copy(data, mask, pos + off + ssize, w, 8);
	uint64_t dyn = rd64(w);
	if (dyn > ssize)
		dyn = ssize;
	uint64_t keep = (dyn + 7) & ~7ull;
	if (keep == ssize)
		goto whole;   /* nothing to leave out */
	/* header .. registers, the stack size said to be `keep`, its first
	 * keep bytes, dyn_size, and whatever followed the stack */
	perf_ring_copy(data, mask, pos, dst, off);
	memcpy(dst + off - 8, &keep, 8);
	perf_ring_copy(data, mask, pos + off, dst + off, (size_t)keep);
	size_t tail = size - off - (size_t)ssize;
	perf_ring_copy(data, mask, pos + off + ssize, dst + off + keep, tail);
	size_t n = off + (size_t)keep + tail;
	uint16_t n16 = (uint16_t)n;   /* below size, which fit the header's u16 */
	memcpy(dst + 6, &n16, 2);
	*ustack_size = (uint32_t)ssize;
	return n;
whole:
	perf_ring_copy(data, mask, pos, dst, size);
	return size;
}

static void queue_add(struct perf_source *ps, uint32_t ring, uint64_t time,
		      const struct ring *r, uint64_t pos, size_t len, bool sample)
{
	unsigned a = ps->cur;
	if (ps->alen[a] + len > ps->acap[a])
		xgrow((void **)&ps->arena[a], &ps->acap[a], ps->alen[a] + len, 1);
	uint8_t *dst = ps->arena[a] + ps->alen[a];
	uint32_t ustack_size = 0;
	size_t n = len;
	if (sample)
		n = perf_ring_copy_sample(r->data, r->mask, pos, len, &ps->lay, dst, &ustack_size);
	else
		perf_ring_copy(r->data, r->mask, pos, dst, len);
	xgrow((void **)&ps->q, &ps->qcap, ps->nq + 1, sizeof(*ps->q));
	ps->q[ps->nq++] = (struct qent){ time, ps->seq++, (uint32_t)ps->alen[a], (uint32_t)n, ring,
					 (uint8_t)a, ustack_size };
	ps->alen[a] += n;
}

int perf_ring_next(const uint8_t *data, uint64_t mask, uint64_t tail, uint64_t head,
		   struct perf_ring_rec *o)
{
	struct perf_event_header h;
	memset(o, 0, sizeof(*o));
	if (tail >= head)
		return 0;
	perf_ring_copy(data, mask, tail, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size > head - tail)
		return -1; /* cannot happen with a sane kernel; do not spin */
	o->size = h.size;
	o->type = h.type;
	uint8_t tr[TRAILER];
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		if (h.size >= 8 + 40) {
			uint8_t t[8];
			perf_ring_copy(data, mask, tail + 8 + 24, t, 8);
			o->time = rd64(t);
		}
		o->what = PERF_RR_QUEUE;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		uint8_t b[16];
		o->what = PERF_RR_LOST;
		if (h.size >= 8 + 16) {
			perf_ring_copy(data, mask, tail + 8, b, 16);
			/* LOST: { id, lost }; LOST_SAMPLES: { lost } */
			o->lost = rd64(h.type == PERF_RECORD_LOST ? b + 8 : b);
		}
		break;
	}
	case PERF_RECORD_THROTTLE:
		o->what = PERF_RR_THROTTLE;
		break;
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (h.size >= 8 + TRAILER) {
			perf_ring_copy(data, mask, tail + h.size - TRAILER, tr, TRAILER);
			o->time = rd64(tr + 8);
		}
		o->what = PERF_RR_QUEUE;
		break;
	default:
		o->what = PERF_RR_SKIP; /* UNTHROTTLE and anything not asked for */
		break;
	}
	return 1;
}

/* Move records from ring i into the queue; count LOST/THROTTLE there. */
static uint64_t read_ring(struct perf_source *ps, uint32_t i)
{
	struct ring *r = &ps->rings[i];
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pg->data_tail, maxt = 0;
	struct perf_ring_rec rr;
	while (tail < head && perf_ring_next(r->data, r->mask, tail, head, &rr) > 0) {
		switch (rr.what) {
		case PERF_RR_QUEUE:
			queue_add(ps, i, rr.time, r, tail, rr.size, rr.type == PERF_RECORD_SAMPLE);
			break;
		case PERF_RR_LOST:
			r->lost += rr.lost;
			break;
		case PERF_RR_THROTTLE:
			r->throttled++;
			break;
		case PERF_RR_SKIP:
			break;
		}
		if (rr.time > maxt)
			maxt = rr.time;
		tail += rr.size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	return maxt;
}

static int cmp_qent(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint16_t event_of(const void *ctx, uint64_t id)
{
	const struct perf_source *ps = ctx;
	size_t lo = 0, hi = ps->nids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ps->ids[mid].id == id)
			return (uint16_t)ps->ids[mid].ev;
		if (ps->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Copy a NUL-padded string field of at most n bytes into dst. */
static const char *str_field(const uint8_t *p, size_t n, char *dst, size_t dstlen)
{
	size_t l = strnlen((const char *)p, n);
	if (l >= dstlen)
		l = dstlen - 1;
	memcpy(dst, p, l);
	dst[l] = 0;
	return dst;
}

/*
 * The REGS_USER and STACK_USER parts at p[off..size): { u64 abi; u64
 * regs[popcount(mask)] if abi } and { u64 size; u8 data[size]; u64
 * dyn_size if size }. Filled into s only when the ABI is not NONE and
 * both parts fit; dyn_size is cut at size (the kernel never says more).
 */
static void decode_user(const uint8_t *p, size_t size, size_t off,
			const struct perf_sample_layout *lay, struct perf_decode_buf *buf,
			struct dp_sample *s)
{
	uint32_t nregs = dp_uregs_count(lay->regs_user);
	if (!lay->regs_user || !lay->stack_user || size - off < 8)
		return;
	uint64_t abi = rd64(p + off);
	off += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || (size - off) / 8 < nregs + 1)
		return;
	for (uint32_t i = 0; i < nregs; i++)
		buf->uregs[i] = rd64(p + off + 8 * i);
	off += 8 * (size_t)nregs;
	uint64_t ssize = rd64(p + off), dyn = 0;
	off += 8;
	if (ssize > DP_MAX_USTACK)
		return;
	if (ssize) {
		if (size - off < ssize + 8)
			return;
		dyn = rd64(p + off + ssize);
		if (dyn > ssize)
			dyn = ssize;
	}
	s->has_uregs = true;
	s->uregs_abi = (uint32_t)abi;
	s->uregs_mask = lay->regs_user;
	s->uregs = buf->uregs;
	s->ustack_size = (uint32_t)ssize;
	s->ustack_len = (uint32_t)dyn;
	s->ustack = dyn ? p + off : NULL;
}

/* A SAMPLE record (see perf_decode_record); false when too short. */
static bool decode_sample(const uint8_t *p, size_t size, const struct perf_sample_layout *lay,
			  perf_event_of_fn event_of_id, const void *ev_ctx,
			  struct perf_decode_buf *buf, struct perf_item *it)
{
	if (size < 8 + 48)
		return false;
	struct perf_event_header h;
	memcpy(&h, p, sizeof(h));
	struct dp_sample *s = &it->u.sample;
	it->kind = PERF_ITEM_SAMPLE;
	s->event = event_of_id ? event_of_id(ev_ctx, rd64(p + 8)) : 0;
	s->ip = rd64(p + 16);
	s->pid = rd32(p + 24);
	s->tid = rd32(p + 28);
	s->time = rd64(p + 32);
	s->cpu = rd32(p + 40);
	s->period = rd64(p + 48);
	s->mode = dp_mode_of_perf_misc(h.misc);
	if (size < 8 + 56)
		return true;
	uint64_t nr = rd64(p + 56);
	bool whole = nr <= (size - 64) / 8;
	if (!whole)
		nr = (size - 64) / 8;
	uint32_t n = 0;
	for (uint64_t k = 0; k < nr && n < DP_MAX_CALLCHAIN; k++) {
		uint64_t ip = rd64(p + 64 + 8 * k);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* context marker, not an address */
		buf->chain[n++] = ip;
	}
	s->nr_callchain = n;
	s->callchain = n ? buf->chain : NULL;
	/* the user parts follow the whole chain; a cut one leaves them unknown */
	if (lay && whole)
		decode_user(p, size, 64 + 8 * (size_t)nr, lay, buf, s);
	return true;
}

int perf_decode_record(const uint8_t *p, size_t size, uint64_t time,
		       const struct perf_sample_layout *lay,
		       perf_event_of_fn event_of_id, const void *ev_ctx,
		       struct perf_decode_buf *buf, struct perf_item *out)
{
	struct perf_event_header hdr;
	const struct perf_event_header *h = &hdr;
	struct perf_item it;
	memset(&it, 0, sizeof(it));
	if (size < sizeof(hdr))
		return 0;
	memcpy(&hdr, p, sizeof(hdr));
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (!decode_sample(p, size, lay, event_of_id, ev_ctx, buf, &it))
			return 0;
		break;
	case PERF_RECORD_COMM: {
		if (size < 8 + 8 + TRAILER)
			return 0;
		it.kind = PERF_ITEM_TASK;
		it.u.task.kind = DP_TASK_COMM;
		it.u.task.pid = rd32(p + 8);
		it.u.task.tid = rd32(p + 12);
		it.u.task.time = time;
		it.u.task.comm = str_field(p + 16, size - 16 - TRAILER, buf->comm, sizeof(buf->comm));
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		if (size < 8 + 24 + TRAILER)
			return 0;
		it.kind = PERF_ITEM_TASK;
		it.u.task.kind = h->type == PERF_RECORD_FORK ? DP_TASK_FORK : DP_TASK_EXIT;
		it.u.task.pid = rd32(p + 8);
		it.u.task.ppid = rd32(p + 12);
		it.u.task.tid = rd32(p + 16);
		it.u.task.ptid = rd32(p + 20);
		it.u.task.time = rd64(p + 24);
		it.u.task.comm = "";
		break;
	}
	case PERF_RECORD_MMAP: {
		if (size < 8 + 32 + TRAILER)
			return 0;
		it.kind = PERF_ITEM_MMAP;
		it.u.mmap.pid = rd32(p + 8);
		it.u.mmap.start = rd64(p + 16);
		it.u.mmap.len = rd64(p + 24);
		it.u.mmap.pgoff = rd64(p + 32);
		it.u.mmap.time = time;
		it.u.mmap.path = str_field(p + 40, size - 40 - TRAILER, buf->path, sizeof(buf->path));
		break;
	}
	case PERF_RECORD_MMAP2: {
		/* pid tid addr len pgoff {maj min ino ino_gen | bid} prot flags name */
		if (size < 8 + 72 + TRAILER)
			return 0;
		uint32_t prot = rd32(p + 64);
		if (!(prot & PROT_EXEC))
			return 0;
		it.kind = PERF_ITEM_MMAP;
		struct dp_mmap *m = &it.u.mmap;
		m->pid = rd32(p + 8);
		m->start = rd64(p + 16);
		m->len = rd64(p + 24);
		m->pgoff = rd64(p + 32);
		m->time = time;
		/* none: the sideband then reads the build-id from the file */
		m->buildid_len = dp_perf_mmap2_buildid(p, h->misc, m->buildid);
		m->path = str_field(p + 72, size - 72 - TRAILER, buf->path, sizeof(buf->path));
		break;
	}
	default:
		return 0;
	}
	*out = it;
	return 1;
}

/* Decode one queued record and hand it to fn; *was_sample when it was
 * a sample. */
static int emit(struct perf_source *ps, const struct qent *qe, perf_item_fn fn, void *ctx,
		bool *was_sample)
{
	struct perf_item it;
	*was_sample = false;
	if (perf_decode_record(ps->arena[qe->arena] + qe->off, qe->len, qe->time, &ps->lay, event_of,
			       ps, &ps->dbuf, &it) <= 0)
		return 0;
	*was_sample = it.kind == PERF_ITEM_SAMPLE;
	if (*was_sample && it.u.sample.has_uregs && qe->ustack_size)
		it.u.sample.ustack_size = qe->ustack_size;   /* copied without its tail */
	return fn(ctx, &it);
}

int perf_source_drain(struct perf_source *ps, bool final, perf_item_fn fn, void *ctx)
{
	uint64_t maxt = 0;
	for (uint32_t i = 0; i < ps->nrings; i++) {
		uint64_t t = read_ring(ps, i);
		if (t > maxt)
			maxt = t;
	}
	if (ps->nrings > 1 && ps->nq > 1) /* q is NULL until the first record */
		qsort(ps->q, ps->nq, sizeof(*ps->q), cmp_qent);
	uint64_t limit = final ? UINT64_MAX : ps->limit;
	size_t i = 0;
	int ret = 0;
	for (; i < ps->nq && ps->q[i].time <= limit; i++) {
		bool was_sample;
		ret = emit(ps, &ps->q[i], fn, ctx, &was_sample);
		if (was_sample && ret >= 0)
			ps->rings[ps->q[i].ring].samples++;
		if (ret < 0) {
			i++;
			break;
		}
	}
	if (maxt > ps->limit)
		ps->limit = maxt;
	/* Keep the records not yet passed on. Every record read by the
	 * previous drain is older than the limit this drain used (the newest
	 * time it saw), so normally all that is kept was read now, into
	 * arena[cur]: the other arena is then free for the next drain's
	 * reads, and nothing is copied. Only a drain stopped by fn's error
	 * keeps older records: those move to arena[cur]. */
	size_t keep = ps->nq - i;
	unsigned cur = ps->cur, old = cur ^ 1u;
	for (size_t k = i; k < ps->nq; k++) {
		struct qent *qe = &ps->q[k];
		if (qe->arena == cur)
			continue;
		if (ps->alen[cur] + qe->len > ps->acap[cur])
			xgrow((void **)&ps->arena[cur], &ps->acap[cur], ps->alen[cur] + qe->len, 1);
		memcpy(ps->arena[cur] + ps->alen[cur], ps->arena[old] + qe->off, qe->len);
		qe->off = (uint32_t)ps->alen[cur];
		qe->arena = (uint8_t)cur;
		ps->alen[cur] += qe->len;
	}
	if (keep && i)
		memmove(ps->q, ps->q + i, keep * sizeof(*ps->q));
	ps->nq = keep;
	if (!keep)
		ps->alen[cur] = 0;
	ps->alen[old] = 0;
	ps->cur = old;
	return ret < 0 ? ret : 0;
}

size_t perf_source_ncpus(const struct perf_source *ps)
{
	return ps->nrings;
}

int perf_source_cpu(const struct perf_source *ps, size_t i)
{
	return ps->rings[i].cpu;
}

#define SUM(field)                                                   \
	do {                                                         \
		if (i >= 0)                                          \
			return (size_t)i < ps->nrings ? ps->rings[i].field : 0; \
		uint64_t t = 0;                                      \
		for (size_t k = 0; k < ps->nrings; k++)              \
			t += ps->rings[k].field;                     \
		return t;                                            \
	} while (0)

uint64_t perf_source_lost(const struct perf_source *ps, int i) { SUM(lost); }
uint64_t perf_source_throttled(const struct perf_source *ps, int i) { SUM(throttled); }
uint64_t perf_source_samples(const struct perf_source *ps, int i) { SUM(samples); }
