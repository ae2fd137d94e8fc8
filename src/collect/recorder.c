// SPDX-License-Identifier: MIT
/*
 * A recording's start-up and end (see recorder.h), moved out of
 * cmd-record.c with their comments: the output file, the command
 * spawned and released, the host's events, the file's metadata and
 * guests, the collector run and the file's end, and what each step
 * undoes when a later one fails. Every line it reports goes through the
 * configuration's notice callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/recorder.h"
#include "collect/target.h"
#include "util/clock.h"
#include "util/xalloc.h"

static void say(const struct recorder *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct recorder *r, const char *fmt, ...)
{
	if (!r->cfg->notice)
		return;
	char msg[PATH_MAX * 2 + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->cfg->notice(r->cfg->notice_ctx, msg);
}

const char *recorder_file_name(const struct recorder *r)
{
	return r->name ? r->name : r->cfg->output;
}

/*
 * --switch-output: the next file's name, OUTPUT.YYYY-MM-DDTHH:MM:SS.mmmZ
 * (UTC, now). Names sort in time order in a shell glob; one later than
 * the last is taken when the clock gives the same millisecond again or
 * goes back, so no file replaces another of the same recording.
 */
static void next_name(struct recorder *r)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (ms <= r->last_ms)
		ms = r->last_ms + 1;
	r->last_ms = ms;
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char stamp[64];
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	size_t n = strlen(r->cfg->output) + sizeof(stamp) + 16;
	free(r->name);
	r->name = xmalloc(n);
	snprintf(r->name, n, "%s.%s.%03uZ", r->cfg->output, stamp, (unsigned)(ms % 1000));
}

void recorder_init(struct recorder *r, const struct recorder_config *cfg)
{
	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->of.fd = -1;
	r->go_fd = r->err_fd = -1;
	r->sb = sideband_new();
}

static void report_outfile(const struct recorder *r, int err)
{
	char msg[PATH_MAX * 2 + 256];
	say(r, "%s", outfile_strerror(&r->of, recorder_file_name(r), err, msg, sizeof(msg)));
}

/*
 * Create the output by the rule of util/outfile.h: a temporary file made
 * with O_EXCL|O_NOFOLLOW and renamed into place (never writing through a
 * name someone else planted: root records into /tmp, and so does the
 * agent), a symbolic link followed only when it is ours or root's, a
 * device or fifo (-o /dev/null) written as it is.
 */
int recorder_open_output(struct recorder *r)
{
	int flags = OUTFILE_IN_PLACE | (r->cfg->force ? OUTFILE_FORCE : 0);
	if (r->cfg->switching)
		next_name(r);
	int err = outfile_open(&r->of, recorder_file_name(r), (unsigned)flags);
	if (err < 0) {
		report_outfile(r, err);
		return -1;
	}
	return 0;
}

/* Undo the output file when recording never started: nothing is left
 * behind, a FILE.old moved aside is put back, a device is left alone. */
static void discard_output(struct recorder *r)
{
	if (r->w) {
		dp_writer_free(r->w);
		r->w = NULL;
	}
	outfile_discard(&r->of);
}

int recorder_spawn(struct recorder *r)
{
	int err = target_spawn(r->cfg->cmd, &r->child, &r->go_fd, &r->err_fd);
	if (err < 0) {
		say(r, "cannot start the command: %s", strerror(-err));
		return -1;
	}
	return 0;
}

static void reap_child(struct recorder *r, bool kill_it)
{
	if (r->child <= 0 || r->child_done)
		return;
	collector_reap(r->child, kill_it, &r->child_status);
	r->child_done = true;
}

static void stop_domains(struct recorder *r)
{
	if (!r->ds)
		return; /* the file failed before the guests were started */
	collector_stop_domains(r->ds, r->cfg->ndomains, r->cfg->stop_flag);
}

/* Open the host's events; on failure the command (not started) is
 * reaped. */
int recorder_open_host(struct recorder *r, struct perf_source_error *pe)
{
	const struct recorder_config *c = r->cfg;
	pid_t target = r->child;
	struct perf_source_opts po = {
		.events = c->ev, .nevents = c->nev,
		.period = c->hz ? c->hz : c->period, .freq = c->hz != 0,
		.callchain = c->callchain, .ustack_size = c->ustack_size,
		.cpus = c->cpus, .ncpus = c->ncpus,
		.pids = r->child ? &target : c->pids, .npids = r->child ? 1 : c->npids,
		.all_threads = !r->child, .enable_on_exec = r->child > 0,
		.ring_pages = c->ring_pages, .no_buildid = c->no_buildid_mmap,
	};
	r->ps = perf_source_open(&po, pe);
	if (r->ps)
		return 0;
	if (r->go_fd >= 0) {
		close(r->go_fd); /* the child exits without running anything */
		r->go_fd = -1;
	}
	reap_child(r, false);
	return -1;
}

static int write_meta(struct recorder *r)
{
	const struct recorder_config *c = r->cfg;
	int ret = 0;
	if (!r->ps)
		return 0;
	struct dp_domain host = {
		.id = DP_HOST_DOMAIN, .kind = DP_DOMAIN_HOST, .vcpus = (uint32_t)c->ncpus,
		.name = "host", .address = "", .symsrc = "embedded",
	};
	ret = dp_write_domain(r->w, &host);
	for (size_t i = 0; !ret && i < c->nev; i++) {
		struct dp_event ev = {
			.id = (uint32_t)i, .type = c->ev[i].type, .config = c->ev[i].config,
			.period = c->hz ? c->hz : c->period, .freq = c->hz != 0,
			.name = c->ev[i].name,
		};
		ret = dp_write_event(r->w, &ev);
	}
	size_t kbytes;
	if (!ret)
		ret = sideband_write_kernel(r->sb, r->w, mono_ns(), &kbytes);
	return ret;
}

/* One domain's connect and set-up, on its own thread. */
struct domain_start {
	const char *spec;
	uint32_t id;
	const struct domain_source_opts *o;
	struct domain_source *ds;
	char err[512];
};

static void *start_one(void *arg)
{
	struct domain_start *j = arg;
	j->ds = domain_source_start(j->spec, j->id, j->o, j->err, sizeof(j->err));
	return NULL;
}

/* The agents' recordings start first, all at once, and the host and the
 * passive domains begin when every agent said STARTED: a guest's recorder
 * takes seconds to start (more while a passive sampler stops the same
 * guest), and every domain should cover one window. An agent that
 * refuses START fails the recording as a connect failure does: nothing
 * has been recorded yet. One still starting after DOMAIN_START_WAIT_MS
 * (a heavily loaded host) is said, and the others begin without it. */
static int start_agents(struct recorder *r)
{
	const struct recorder_config *c = r->cfg;
	for (size_t i = 0; i < c->ndomains; i++)
		if (!domain_source_is_passive(r->ds[i]))
			domain_source_begin(r->ds[i]);
	for (int t = 0; t < DOMAIN_START_WAIT_MS / 10; t++) {
		bool all = true;
		for (size_t i = 0; all && i < c->ndomains; i++)
			all = domain_source_started(r->ds[i]);
		if (all || (c->stop_flag && *c->stop_flag))
			break;
		usleep(10000);
	}
	int ret = 0;
	for (size_t i = 0; i < c->ndomains; i++) {
		const char *m = domain_source_message(r->ds[i]);
		/* A passive domain ended already (its start-up runs on its
		 * own thread): only that domain ends; the collector says it. */
		if (domain_source_is_passive(r->ds[i]))
			continue;
		/* An agent that died after it was connected (START refused
		 * or its connection lost) ends only its own domain, as a
		 * passive guest dying in its start-up does. */
		if (domain_source_ended(r->ds[i])) {
			say(r, "%s; the recording goes on without this domain", m ? m : domain_source_name(r->ds[i]));
			continue;
		}
		if (domain_source_started(r->ds[i]))
			continue;
		else if (c->stop_flag && *c->stop_flag)
			say(r, "%s: the agent had not started its recording when the recording was stopped",
			    domain_source_name(r->ds[i]));
		else {
			say(r, "%s: the agent has not started its recording after %d s; the others begin, "
			    "it joins when it starts", domain_source_name(r->ds[i]), DOMAIN_START_WAIT_MS / 1000);
			continue;
		}
		ret = 1;
	}
	return ret;
}

/* Domains connect at the same time: each start is mostly waiting on its
 * VM (a passive guest's symbols and ORC tables read through the stub, an
 * agent's HELLO), and ten guests one after another took 143 s. At most
 * this many threads at once; a thread that cannot be made runs here. */
#define START_THREADS 16

static int start_domains(struct recorder *r)
{
	const struct recorder_config *c = r->cfg;
	r->ds = xcalloc(c->ndomains ? c->ndomains : 1, sizeof(*r->ds));
	struct domain_source_opts o = {
		.hz = c->hz ? (unsigned)c->hz : 1000, .allow_remote = c->allow_remote,
		.callchains = c->callchain, .ustack_size = c->ustack_size, .interrupt = c->stop_flag,
	};
	struct domain_start *j = xcalloc(c->ndomains ? c->ndomains : 1, sizeof(*j));
	pthread_t th[START_THREADS];
	bool made[START_THREADS];
	for (size_t b = 0; b < c->ndomains; b += START_THREADS) {
		size_t n = c->ndomains - b < START_THREADS ? c->ndomains - b : START_THREADS;
		for (size_t i = 0; i < n; i++) {
			j[b + i] = (struct domain_start){ .spec = c->domains[b + i], .id = (uint32_t)(b + i + 1), .o = &o };
			made[i] = n > 1 && !pthread_create(&th[i], NULL, start_one, &j[b + i]);
			if (!made[i])
				start_one(&j[b + i]);
		}
		for (size_t i = 0; i < n; i++)
			if (made[i])
				pthread_join(th[i], NULL);
	}
	/* every failure said, in the order given; the sources that did start
	 * are freed with the recorder */
	int ret = 0;
	for (size_t i = 0; i < c->ndomains; i++) {
		r->ds[i] = j[i].ds;
		if (!r->ds[i]) {
			say(r, "%s", j[i].err[0] ? j[i].err : c->domains[i]);
			ret = 1;
		}
	}
	free(j);
	for (size_t i = 0; !ret && i < c->ndomains; i++) {
		const char *info = domain_source_take_info(r->ds[i]);
		if (info)
			say(r, "%s", info);
		int werr = domain_source_write_meta(r->ds[i], r->w);
		if (werr < 0) {
			say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
			ret = 1;
		}
	}
	return ret ? ret : start_agents(r);
}

/* The writer on the output, with the header naming this command line. */
static int open_writer(struct recorder *r, int argc, char **argv)
{
	size_t hargc = (size_t)argc + 1;
	char **hargv = xcalloc(hargc + 1, sizeof(char *));
	hargv[0] = "domprof";
	memcpy(hargv + 1, argv, (size_t)argc * sizeof(char *));
	struct dp_header hdr;
	dp_header_fill_local(&hdr, (int)hargc, hargv);
	free(hargv);
	/* zstd level 1, not 3: in dwarf mode the chunks are mostly user stack
	 * bytes, which level 1 compresses ~25% faster for 1-3% more bytes
	 * (docs/dwarf-notes.md, "Recorder CPU"); -g chunks barely change */
	struct dp_writer_opts wo = { .chunk_bytes = 0, .chunk_ns = 250000000ull, .zstd_level = 1,
				     .ustack_delta = dp_ustack_delta_wanted() };
	int werr = 0;
	/* The writer gets its own descriptor: r->of keeps one for the lock
	 * and the final size. */
	int wfd = fcntl(r->of.fd, F_DUPFD_CLOEXEC, 3);
	r->w = wfd < 0 ? NULL : dp_writer_new(wfd, &hdr, &wo, &werr);
	if (!r->w) {
		if (wfd < 0)
			werr = -errno;
		say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
		return -1;
	}
	return 0;
}

/* The file: header, metadata, guests; flushed and put in place. */
int recorder_start_file(struct recorder *r, int argc, char **argv)
{
	r->argc = argc;
	r->argv = argv;
	if (open_writer(r, argc, argv) < 0)
		return -1;
	int werr = write_meta(r);
	if (werr < 0) {
		say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
		return -1;
	}
	if (start_domains(r))
		return -1;
	/* The metadata chunk reaches the disk before the file is put in
	 * place, so a disk already full fails here and leaves nothing. */
	if ((werr = dp_writer_flush(r->w)) < 0) {
		say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
		return -1;
	}
	if ((werr = outfile_commit(&r->of)) < 0) {
		report_outfile(r, werr);
		return -1;
	}
	return 0;
}

/* Let the command exec; 0, or 127 when it could not run (reported). */
static int release_child(struct recorder *r)
{
	int e = 0;
	if (write(r->go_fd, "g", 1) != 1)
		e = errno;
	close(r->go_fd);
	r->go_fd = -1;
	ssize_t n;
	while ((n = read(r->err_fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(r->err_fd);
	r->err_fd = -1;
	if (n == sizeof(e) || e) {
		say(r, "cannot run '%s': %s", r->cfg->cmd[0],
		    e == ENOENT ? "command not found" : strerror(e));
		return 127;
	}
	return 0;
}

/* -p / -a: enable the events and describe the processes already running. */
static int start_attached(struct recorder *r)
{
	int werr = perf_source_enable(r->ps);
	if (werr < 0) {
		say(r, "enabling events: %s", strerror(-werr));
		return -1;
	}
	unsigned nproc = 0;
	if (r->cfg->all)
		werr = sideband_snapshot(r->sb, r->w, -1, mono_ns(), &nproc);
	for (size_t i = 0; !werr && i < r->cfg->npids; i++)
		werr = sideband_snapshot(r->sb, r->w, r->cfg->pids[i], mono_ns(), &nproc);
	if (werr < 0) {
		say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
		return -1;
	}
	return 0;
}

int recorder_start(struct recorder *r, uint64_t *t_start)
{
	*t_start = mono_ns();
	if (r->child)
		return release_child(r);
	if (r->ps && start_attached(r) < 0)
		return 1;
	return 0;
}

/*
 * The start of a --switch-output file after the first: what the first
 * one got at its start, written again, so each file reads alone (header,
 * host domain, events, kernel tables, each guest's DOMAIN and tables),
 * and the processes as they are now (their names and mappings came to
 * the earlier file as they happened): every process for -a, the -p
 * pids, or the command and its descendants. Flushed and put in place.
 * 0, or a negative errno (reported).
 */
static int start_next_file(struct recorder *r)
{
	const struct recorder_config *c = r->cfg;
	if (open_writer(r, r->argc, r->argv) < 0)
		return -EIO;
	int werr = write_meta(r);
	for (size_t i = 0; werr >= 0 && i < c->ndomains; i++)
		werr = domain_source_write_next_meta(r->ds[i], r->w);
	uint64_t now = mono_ns();
	if (werr >= 0 && r->ps) {
		if (c->all)
			werr = sideband_snapshot(r->sb, r->w, -1, now, NULL);
		for (size_t i = 0; werr >= 0 && i < c->npids; i++)
			werr = sideband_snapshot(r->sb, r->w, c->pids[i], now, NULL);
		if (werr >= 0 && r->child > 0 && !r->child_done)
			werr = sideband_snapshot_tree(r->sb, r->w, r->child, now, NULL);
	}
	if (werr >= 0)
		werr = dp_writer_flush(r->w);
	if (werr < 0) {
		say(r, "writing '%s': %s", recorder_file_name(r), strerror(-werr));
		return werr;
	}
	if ((werr = outfile_commit(&r->of)) < 0) {
		report_outfile(r, werr);
		return werr;
	}
	return 0;
}

/* --switch-output keeping max_files: the oldest files beyond it removed. */
static void keep_files(struct recorder *r, const char *done)
{
	unsigned max = r->cfg->max_files;
	if (!max)
		return;
	r->kept = xrealloc(r->kept, (r->nkept + 1) * sizeof(char *));
	r->kept[r->nkept++] = xstrdup(done);
	while (r->nkept > max) {
		if (unlink(r->kept[0]) < 0 && errno != ENOENT)
			say(r, "could not remove '%s' (--switch-max-files): %s", r->kept[0], strerror(errno));
		free(r->kept[0]);
		memmove(r->kept, r->kept + 1, --r->nkept * sizeof(char *));
	}
}

/* The collector's rotate (collector.h): finish this file, start the
 * next. The collector wrote its LOST and STATS records. */
static int rotate(void *ctx, struct dp_writer **w)
{
	struct recorder *r = ctx;
	int werr = dp_writer_finish(r->w);
	r->w = *w = NULL;
	if (werr < 0) {
		say(r, "finishing '%s': %s", recorder_file_name(r), strerror(-werr));
		outfile_release(&r->of);
		return werr;
	}
	r->bytes_done += outfile_size(&r->of);
	outfile_release(&r->of);
	keep_files(r, recorder_file_name(r));
	if (recorder_open_output(r) < 0)
		return -EIO;
	if ((werr = start_next_file(r)) < 0) {
		discard_output(r);
		return werr;
	}
	*w = r->w;
	return 0;
}

/*
 * The collector's end_file: the command's, over the bytes of the file so
 * far. They are read through a mapping of the recorder's own descriptor,
 * not a second open of the file: closing any descriptor of the file
 * would drop the write lock the recorder holds on it (outfile.h).
 */
static int end_file(void *ctx, struct dp_writer *w)
{
	struct recorder *r = ctx;
	struct stat sb;
	if (!r->cfg->end_file || r->of.fd < 0 || fstat(r->of.fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	int werr = dp_writer_flush(w);
	if (werr < 0)
		return werr;
	size_t len = (size_t)dp_writer_bytes(w);
	void *m = len ? mmap(NULL, len, PROT_READ, MAP_SHARED, r->of.fd, 0) : MAP_FAILED;
	if (m == MAP_FAILED)
		return 0;   /* nothing to add to: the file stays as it is */
	werr = r->cfg->end_file(r->cfg->end_ctx, w, m, len);
	munmap(m, len);
	return werr;
}

/* The collector loop, then the file's end. */
int recorder_run(struct recorder *r, uint64_t t_start, struct collector_result *res, uint64_t *bytes)
{
	const struct recorder_config *c = r->cfg;
	struct collector_config cc = {
		.w = r->w, .ps = r->ps, .sb = r->sb, .ds = r->ds, .nds = c->ndomains,
		.stop_flag = c->stop_flag, .t_start = t_start,
		.duration_ns = c->duration > 0 ? (uint64_t)(c->duration * 1e9) : 0,
		.child = r->child, .pids = c->pids, .npids = c->npids,
		.notice = c->notice, .notice_ctx = c->notice_ctx,
		.rotate = c->switching ? rotate : NULL, .rotate_ctx = r,
		.end_file = c->end_file ? end_file : NULL, .end_ctx = r,
		.switch_ns = c->switch_ns, .switch_bytes = c->switch_bytes,
		.switch_flag = c->switch_flag,
		.host_hz = c->all && c->hz ? (unsigned)c->hz : 0,
		.host_units = r->ps ? (uint32_t)(perf_source_ncpus(r->ps) * c->nev) : 0,
	};
	int werr = collector_run(&cc, res);
	r->w = res->w;
	if (res->child_done) {
		r->child_done = true;
		r->child_status = res->child_status;
	}
	if (werr < 0) {
		/* Chunks already flushed are complete: close without flushing the
		 * open one, so the file stays readable up to the last full chunk. */
		/* a new --switch-output file that failed (r->w NULL) was
		 * reported, and the files before it are complete */
		if (r->w)
			say(r, "writing '%s' failed: %s; recording stopped, the file is "
			    "readable up to the last complete chunk", recorder_file_name(r), strerror(-werr));
		else
			say(r, "recording stopped; the files before '%s' are complete", recorder_file_name(r));
		if (r->ps)
			perf_source_disable(r->ps);
		reap_child(r, true);
		stop_domains(r);
		if (!r->w)
			return 1;
		uint64_t good = dp_writer_bytes(r->w);
		dp_writer_free(r->w);
		r->w = NULL;
		/* Drop the partly written chunk too, so readers see a clean end. */
		if (!r->of.in_place && ftruncate(r->of.fd, (off_t)good) < 0)
			say(r, "could not trim '%s' to its last complete chunk: %s", recorder_file_name(r), strerror(errno));
		outfile_release(&r->of);
		return 1;
	}
	werr = dp_writer_finish(r->w);
	r->w = NULL;
	if (werr < 0) {
		say(r, "finishing '%s': %s", recorder_file_name(r), strerror(-werr));
		outfile_release(&r->of);
		return 1;
	}
	/* Through our descriptor: the size of the file this run wrote. */
	*bytes = r->bytes_done + outfile_size(&r->of);
	outfile_release(&r->of);
	keep_files(r, recorder_file_name(r));
	return 0;
}

void recorder_abort(struct recorder *r)
{
	if (r->go_fd >= 0)
		close(r->go_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	r->go_fd = r->err_fd = -1;
	reap_child(r, false);
	stop_domains(r);
	discard_output(r);
}

void recorder_free(struct recorder *r)
{
	for (size_t i = 0; i < r->cfg->ndomains; i++)
		domain_source_free(r->ds ? r->ds[i] : NULL);
	free(r->ds);
	r->ds = NULL;
	perf_source_free(r->ps);
	r->ps = NULL;
	sideband_free(r->sb);
	r->sb = NULL;
	for (size_t i = 0; i < r->nkept; i++)
		free(r->kept[i]);
	free(r->kept);
	r->kept = NULL;
	r->nkept = 0;
	free(r->name);
	r->name = NULL;
}

/*
 * The agent used to guess that sampling runs from the file's growth,
 * which the temporary output file (renamed into place only after
 * start-up) no longer shows early. Only a pipe is accepted, so a stray
 * variable cannot make us write into another file; it is taken out of
 * the environment and closed on exec, so a profiled command never sees
 * it.
 */
int recorder_take_ready_fd(void)
{
	const char *v = getenv("DOMPROF_READY_FD");
	if (!v)
		return -1;
	char *end;
	long fd = strtol(v, &end, 10);
	unsetenv("DOMPROF_READY_FD");
	struct stat st;
	if (*end || end == v || fd < 3 || fd > 65535 || fstat((int)fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return -1;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

void recorder_signal_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "r", 1) < 0) {
		/* the agent gave up waiting: nothing to tell */
	}
	close(fd);
}
