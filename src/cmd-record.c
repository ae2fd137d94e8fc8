// SPDX-License-Identifier: MIT
/*
 * `domprof record`: sample the host with perf_event (collect/perf_source),
 * and guest domains with --domain (collect/domain_source), into one file
 * through the format writer.
 *
 * This file is the command: option parsing, validation messages, signal
 * installation, the output file, spawning the command, and the summary
 * line. The collector loop (poll and drain the rings and the domains,
 * the stop conditions, the totals) is collect/collector.c; the lines it
 * reports while running reach stderr through its notice callback.
 * Lost samples are never silent: they go to LOST records, the STATS
 * record and the summary line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "collect/collector.h"
#include "collect/domain_source.h"
#include "collect/events.h"
#include "collect/perf_source.h"
#include "collect/sideband.h"
#include "collect/target.h"
#include "commands.h"
#include "format/format.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/xalloc.h"

const char usage_record[] =
	"usage: domprof record [options] [--] COMMAND [ARGS...]\n"
	"       domprof record [options] -a | -p PID[,PID...]\n"
	"       domprof record [options] --domain NAME=SPEC... (guests only)\n"
	"\n"
	"Sample the host (and guests given with --domain) into a domprof file.\n"
	"\n"
	"targets:\n"
	"  COMMAND ARGS        run COMMAND and profile it and its children; stop when it exits\n"
	"  -p, --pid PIDS      attach to running processes (all their threads)\n"
	"  -a, --all-cpus      the whole system\n"
	"  -C, --cpu CPUS      only these CPUs, e.g. 0,2-3 (default: all online CPUs)\n"
	"  -d, --duration SEC  stop after SEC seconds (default: until the command exits or Ctrl-C)\n"
	"events:\n"
	"  -e, --event EVENT   cpu-clock (default), task-clock, page-faults, cycles, instructions,\n"
	"                      cache-misses, branch-misses, ...; modifiers :u (user) :k (kernel);\n"
	"                      repeat -e or separate with commas for several events\n"
	"  -F, --freq HZ       samples per second per CPU (default 1000)\n"
	"  -c, --count PERIOD  one sample every PERIOD events instead of -F\n"
	"  -g, --call-graph    record frame-pointer call chains (kernel and user)\n"
	"  -m, --mmap-pages N  ring buffer data pages per CPU, a power of two up to 1048576\n"
	"                      (default 256)\n"
	"guests:\n"
	"  --domain NAME=gdb:HOST:PORT[,kallsyms=F|sysmap=F|vmlinux=F][,kaslr=auto|OFF]\n"
	"  --domain NAME=agent:ADDRESS[,key=FILE][,max-bytes=SIZE]\n"
	"                      also sample this VM as domain NAME (repeatable; each NAME\n"
	"                      once, not 'host'); key=: the agent's --key-file (docs/active.md)\n"
	"  --allow-remote-stub allow a gdb stub that is not on this machine\n"
	"output:\n"
	"  -o, --output FILE   output file (default domprof.data); an existing file is\n"
	"                      renamed to FILE.old; a symlink is followed; FILE appears\n"
	"                      only once recording started; a FILE another recorder is\n"
	"                      writing is refused\n"
	"  -f, --force         overwrite FILE instead of keeping FILE.old\n"
	"\n"
	"Ctrl-C, SIGTERM, SIGHUP or SIGPIPE stops recording and finishes the file (a\n"
	"command still running gets SIGTERM). At the end one line reports samples\n"
	"written, samples lost, bytes and duration.\n";

#define MAX_EVENTS 16
#define MAX_CPUS 4096
#define MAX_RING_PAGES (1ul << 20)      /* 4 GiB per CPU with 4 KiB pages */
#define MAX_FREQ ((uint64_t)UINT32_MAX) /* perf's sample_freq is a u64, but no clock ticks faster */

static volatile sig_atomic_t g_stop_sig;

static void on_stop(int sig)
{
	g_stop_sig = sig;
}

static void on_chld(int sig)
{
	(void)sig; /* only here to interrupt poll() */
}

struct rec {
	/* options */
	const char *output;
	bool force, all, callchain, allow_remote;
	const char *pidlist, *cpulist;
	double duration;
	struct ev_spec ev[MAX_EVENTS];
	size_t nev;
	uint64_t hz, period;
	size_t ring_pages;
	const char **domains;
	size_t ndomains;
	char **cmd;
	/* state */
	int cpus[MAX_CPUS];
	size_t ncpus;
	pid_t *pids;
	size_t npids;
	struct outfile of;      /* the output (util/outfile.h): temp file until committed */
	struct perf_source *ps;
	struct sideband *sb;
	struct dp_writer *w;
	struct domain_source **ds;
	pid_t child;
	int child_status;
	bool child_done;
};

/* Undo the output file when recording never started: nothing is left
 * behind, a FILE.old moved aside is put back, a device is left alone. */
static void discard_output(struct rec *r)
{
	if (r->w) {
		dp_writer_free(r->w);
		r->w = NULL;
	}
	outfile_discard(&r->of);
}

static void report_outfile(const struct rec *r, int err)
{
	char msg[PATH_MAX * 2 + 256];
	fprintf(stderr, "domprof record: %s\n", outfile_strerror(&r->of, r->output, err, msg, sizeof(msg)));
}

/*
 * Create the output by the rule of util/outfile.h: a temporary file made
 * with O_EXCL|O_NOFOLLOW and renamed into place (never writing through a
 * name someone else planted: root records into /tmp, and so does the
 * agent), a symbolic link followed only when it is ours or root's, a
 * device or fifo (-o /dev/null) written as it is.
 */
static int open_output(struct rec *r)
{
	int flags = OUTFILE_IN_PLACE | (r->force ? OUTFILE_FORCE : 0);
	int err = outfile_open(&r->of, r->output, (unsigned)flags);
	if (err < 0) {
		report_outfile(r, err);
		return -1;
	}
	return 0;
}

/* One line naming why perf_event_open failed, with the fix when known. */
static void report_open_error(const struct rec *r, const struct perf_source_error *e)
{
	const char *ev = r->ev[e->event].name;
	int err = -e->err;
	if (!strcmp(e->what, "mmap") && (err == EPERM || err == ENOMEM)) {
		/* The ring is locked memory: beyond perf_event_mlock_kb per
		 * CPU it is charged to RLIMIT_MEMLOCK, and refused past both
		 * (EPERM) unless CAP_IPC_LOCK. Not a paranoid matter. */
		struct rlimit rl;
		char lim[32] = "unlimited";
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
		long kb = target_read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", -1);
		size_t ring_kb = r->ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 1024;
		fprintf(stderr,
			"domprof record: cannot map the ring buffer of CPU %d (-m %zu = %zu KiB per CPU): %s; "
			"it is over the locked-memory limit (kernel.perf_event_mlock_kb is %ld per CPU, "
			"ulimit -l is %s): use a smaller -m, raise a limit, or run with CAP_IPC_LOCK\n",
			e->cpu, r->ring_pages, ring_kb, strerror(err), kb, lim);
	} else if (err == EACCES || err == EPERM) {
		long p = target_read_sysctl("/proc/sys/kernel/perf_event_paranoid", 99);
		/* User-space sampling of one's own processes may still be
		 * allowed: ask the kernel rather than guess from the number
		 * (3 means "nothing" on some kernels, the same as 2 on others). */
		bool user_only_ok = !r->all && !r->ev[e->event].exclude_kernel &&
				    perf_source_probe_user(&r->ev[e->event]) == 0;
		char uev[64];
		snprintf(uev, sizeof(uev), "%.*s:u", (int)strcspn(ev, ":"), ev);
		fprintf(stderr,
			"domprof record: not permitted to open event '%s' (%s): kernel.perf_event_paranoid is %ld; "
			"set it to -1 (sysctl -w kernel.perf_event_paranoid=-1) or run with CAP_PERFMON%s%s\n",
			ev, strerror(err), p, user_only_ok ? ", or sample user space only with -e " : "",
			user_only_ok ? uev : "");
	} else if (r->ev[e->event].hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
		fprintf(stderr,
			"domprof record: event '%s' is not supported: this machine has no hardware PMU event "
			"for it (no performance counters, as in many VMs); use -e cpu-clock\n", ev);
	} else if (err == ESRCH) {
		fprintf(stderr, "domprof record: no such process: %d\n", (int)e->pid);
	} else if (err == EMFILE || err == ENFILE) {
		fprintf(stderr, "domprof record: too many open files opening '%s' on CPU %d: "
			"raise the limit (ulimit -n) or use fewer CPUs/threads\n", ev, e->cpu);
	} else {
		fprintf(stderr, "domprof record: %s for event '%s' on CPU %d failed: %s\n",
			e->what, ev, e->cpu, strerror(err));
	}
}

static int add_events(struct rec *r, const char *arg)
{
	char *copy = xstrdup(arg), *rest = copy;
	int ret = 0;
	/* strsep, not strtok: an empty item ("-e ''", "-e a,,b") is an
	 * error, not something to skip silently. */
	for (char *t; !ret && (t = strsep(&rest, ",")) != NULL;) {
		if (!*t) {
			ret = usage_error("record", "empty event name in -e '%s'", arg);
			break;
		}
		if (r->nev >= MAX_EVENTS) {
			ret = usage_error("record", "too many events (at most %d)", MAX_EVENTS);
			break;
		}
		int e = ev_parse(t, &r->ev[r->nev]);
		if (e == -EBADMSG) {
			ret = usage_error("record", "unknown modifier in event '%s' (use :u or :k)", t);
			break;
		}
		if (e < 0) {
			ret = usage_error("record", "unknown event '%s' (known: %s)", t, ev_known_names());
			break;
		}
		r->nev++;
	}
	free(copy);
	return ret;
}

static int parse_pids(struct rec *r)
{
	char *copy = xstrdup(r->pidlist), *save = NULL;
	size_t cap = 0;
	int ret = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(t, &end, 10);
		if (*end || end == t || v <= 0 || v > 0x7fffffff) {
			ret = usage_error("record", "bad pid '%s'", t);
			break;
		}
		xgrow((void **)&r->pids, &cap, r->npids + 1, sizeof(pid_t));
		r->pids[r->npids++] = (pid_t)v;
	}
	free(copy);
	if (!ret && !r->npids)
		ret = usage_error("record", "-p needs at least one pid");
	return ret;
}

/* A decimal number in 1..max; -1 for anything else (sign, junk,
 * overflow), so the caller's message echoes what the user typed. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !v || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Domain names must be unique and not "host" (domain 0's name): report
 * --domain picks a domain by name. */
static int check_domain_name(const struct rec *r, const char *spec)
{
	size_t n = (size_t)(strchr(spec, '=') - spec);
	if (n == 4 && !strncmp(spec, "host", 4))
		return usage_error("record", "bad --domain '%s': the name 'host' is the host's own domain "
				   "(choose another NAME)", spec);
	for (size_t i = 0; i < r->ndomains; i++)
		if (!strncmp(r->domains[i], spec, n) && r->domains[i][n] == '=')
			return usage_error("record", "bad --domain '%s': domain name '%.*s' is given twice",
					   spec, (int)n, spec);
	return 0;
}

static int parse_args(struct rec *r, int argc, char **argv)
{
	enum { OPT_DOMAIN = 256, OPT_ALLOW_REMOTE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "domain", required_argument, NULL, OPT_DOMAIN },
		{ "allow-remote-stub", no_argument, NULL, OPT_ALLOW_REMOTE },
		{ NULL, 0, NULL, 0 },
	};
	size_t dcap = 0;
	int c, ret;
	char *end;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:fap:C:d:e:F:c:gm:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': r->output = optarg; break;
		case 'f': r->force = true; break;
		case 'a': r->all = true; break;
		case 'p': r->pidlist = optarg; break;
		case 'C': r->cpulist = optarg; break;
		case 'g': r->callchain = true; break;
		case OPT_ALLOW_REMOTE: r->allow_remote = true; break;
		case OPT_DOMAIN:
			if (!strchr(optarg, '='))
				return usage_error("record", "bad --domain '%s': expected NAME=SPEC", optarg);
			if ((ret = check_domain_name(r, optarg)))
				return ret;
			xgrow((void **)&r->domains, &dcap, r->ndomains + 1, sizeof(char *));
			r->domains[r->ndomains++] = optarg;
			break;
		case 'd':
			r->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(r->duration > 0) || r->duration > 1e7)
				return usage_error("record", "bad duration '%s' (seconds, > 0)", optarg);
			break;
		case 'e':
			if ((ret = add_events(r, optarg)))
				return ret;
			break;
		case 'F':
			if (parse_u64(optarg, MAX_FREQ, &r->hz) < 0)
				return usage_error("record", "bad frequency '%s' (Hz, 1 to %llu)", optarg,
						   (unsigned long long)MAX_FREQ);
			break;
		case 'c':
			/* The kernel refuses a period with bit 63 set (EINVAL). */
			if (parse_u64(optarg, INT64_MAX, &r->period) < 0)
				return usage_error("record", "bad period '%s' (1 to %lld)", optarg,
						   (long long)INT64_MAX);
			break;
		case 'm': {
			uint64_t v;
			if (parse_u64(optarg, UINT64_MAX, &v) < 0 || (v & (v - 1)))
				return usage_error("record", "bad --mmap-pages '%s' (a power of two)", optarg);
			if (v > MAX_RING_PAGES)
				return usage_error("record", "bad --mmap-pages '%s': at most %lu pages per CPU",
						   optarg, (unsigned long)MAX_RING_PAGES);
			r->ring_pages = (size_t)v;
			break;
		}
		case ':':
			return usage_error("record", "option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	r->cmd = argv + optind;
	bool has_cmd = optind < argc;
	if (r->hz && r->period)
		return usage_error("record", "-F and -c exclude each other");
	if (r->all + !!r->pidlist + has_cmd > 1)
		return usage_error("record", "give one target: a command, -p PID or -a");
	if (!r->all && !r->pidlist && !has_cmd && !r->ndomains)
		return usage_error("record", "nothing to record: give a command, -p PID, -a or --domain");
	if (r->pidlist && (ret = parse_pids(r)))
		return ret;
	if (!r->nev)
		ev_parse("cpu-clock", &r->ev[r->nev++]);
	if (!r->hz && !r->period)
		r->hz = 1000;
	if (!r->ring_pages)
		r->ring_pages = 256;
	return 0;
}

static int select_cpus(struct rec *r)
{
	int online[MAX_CPUS];
	int n = target_online_cpus(online, MAX_CPUS);
	if (!r->cpulist) {
		memcpy(r->cpus, online, (size_t)n * sizeof(int));
		r->ncpus = (size_t)n;
		return 0;
	}
	int want[MAX_CPUS];
	int m = target_parse_cpulist(r->cpulist, want, MAX_CPUS);
	if (m <= 0)
		return usage_error("record", "bad CPU list '%s' (e.g. 0,2-3)", r->cpulist);
	for (int i = 0; i < m; i++) {
		bool ok = false;
		for (int k = 0; k < n && !ok; k++)
			ok = online[k] == want[i];
		if (!ok) {
			fprintf(stderr, "domprof record: CPU %d is not online\n", want[i]);
			return 1;
		}
		r->cpus[r->ncpus++] = want[i];
	}
	return 0;
}

static void reap_child(struct rec *r, bool kill_it)
{
	if (r->child <= 0 || r->child_done)
		return;
	collector_reap(r->child, kill_it, &r->child_status);
	r->child_done = true;
}

static void stop_domains(struct rec *r)
{
	collector_stop_domains(r->ds, r->ndomains, &g_stop_sig);
}

static void free_all(struct rec *r)
{
	for (size_t i = 0; i < r->ndomains; i++)
		domain_source_free(r->ds ? r->ds[i] : NULL);
	free(r->ds);
	free(r->domains);
	free(r->pids);
	perf_source_free(r->ps);
	sideband_free(r->sb);
}

static int write_meta(struct rec *r)
{
	int ret = 0;
	if (!r->ps)
		return 0;
	struct dp_domain host = {
		.id = DP_HOST_DOMAIN, .kind = DP_DOMAIN_HOST, .vcpus = (uint32_t)r->ncpus,
		.name = "host", .address = "", .symsrc = "embedded",
	};
	ret = dp_write_domain(r->w, &host);
	for (size_t i = 0; !ret && i < r->nev; i++) {
		struct dp_event ev = {
			.id = (uint32_t)i, .type = r->ev[i].type, .config = r->ev[i].config,
			.period = r->hz ? r->hz : r->period, .freq = r->hz != 0,
			.name = r->ev[i].name,
		};
		ret = dp_write_event(r->w, &ev);
	}
	size_t kbytes;
	if (!ret)
		ret = sideband_write_kernel(r->sb, r->w, mono_ns(), &kbytes);
	return ret;
}

static int start_domains(struct rec *r)
{
	r->ds = xcalloc(r->ndomains ? r->ndomains : 1, sizeof(*r->ds));
	struct domain_source_opts o = {
		.hz = r->hz ? (unsigned)r->hz : 1000, .allow_remote = r->allow_remote,
		.callchains = r->callchain, .interrupt = &g_stop_sig,
	};
	for (size_t i = 0; i < r->ndomains; i++) {
		char err[512] = "";
		r->ds[i] = domain_source_start(r->domains[i], (uint32_t)(i + 1), &o, err, sizeof(err));
		if (!r->ds[i]) {
			fprintf(stderr, "domprof record: %s\n", err[0] ? err : r->domains[i]);
			return 1;
		}
		const char *info = domain_source_info(r->ds[i]);
		if (info)
			fprintf(stderr, "domprof record: %s\n", info);
		int ret = domain_source_write_meta(r->ds[i], r->w);
		if (ret < 0) {
			fprintf(stderr, "domprof record: writing '%s': %s\n", r->output, strerror(-ret));
			return 1;
		}
	}
	return 0;
}

/*
 * SIGINT, SIGTERM, SIGHUP (the terminal went away) and SIGPIPE (whoever
 * read our stderr went away, `2>&1 | head`) all stop the recording and
 * finish the file. A handler rather than SIG_IGN for SIGPIPE: an ignored
 * signal would be inherited by the profiled command across exec, a
 * caught one is reset to its default there. Once caught, later writes
 * to the closed stderr just fail with EPIPE and are not checked.
 */
static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART; /* poll() is interrupted anyway */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

/*
 * DOMPROF_READY_FD=N (set by `domprof agent` for its own recorder): one
 * byte is written on N once sampling runs. The agent used to guess that
 * from the file's growth, which the temporary output file (renamed into
 * place only after start-up) no longer shows early. Only a pipe is
 * accepted, so a stray variable cannot make us write into another file;
 * it is taken out of the environment and closed on exec, so a profiled
 * command never sees it. Returns the fd or -1.
 */
static int take_ready_fd(void)
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

static void signal_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "r", 1) < 0) {
		/* the agent gave up waiting: nothing to tell */
	}
	close(fd);
}

/* With fd 0-2 closed (`2>&-`), the output file, a perf fd or an agent
 * socket would get number 2 and receive our messages: hold them on
 * /dev/null instead. */
static void keep_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);
			if (n >= 0 && n != fd)
				close(n); /* a lower one was free after all */
		}
}

/* Checks after parsing that need the system: CPUs, the sample-rate
 * limit, the -p pids. 0 or the exit code. */
static int check_targets(struct rec *r, bool host)
{
	int ret;
	if (host && (ret = select_cpus(r)))
		return ret;
	long maxrate = target_read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	if (host && r->hz && maxrate > 0 && r->hz > (uint64_t)maxrate) {
		fprintf(stderr, "domprof record: -F %" PRIu64 " is above kernel.perf_event_max_sample_rate "
			"(%ld): use a lower -F or raise the sysctl\n", r->hz, maxrate);
		return 1;
	}
	for (size_t i = 0; i < r->npids; i++)
		if (!collector_pid_alive(r->pids[i])) {
			fprintf(stderr, "domprof record: no such process: %d\n", (int)r->pids[i]);
			return 1;
		}
	return 0;
}

/* The writer on the output, with the header naming this command line. */
static int open_writer(struct rec *r, int argc, char **argv)
{
	size_t hargc = (size_t)argc + 1;
	char **hargv = xcalloc(hargc + 1, sizeof(char *));
	hargv[0] = "domprof";
	memcpy(hargv + 1, argv, (size_t)argc * sizeof(char *));
	struct dp_header hdr;
	dp_header_fill_local(&hdr, (int)hargc, hargv);
	free(hargv);
	struct dp_writer_opts wo = { .chunk_bytes = 0, .chunk_ns = 250000000ull, .zstd_level = 3 };
	int werr = 0;
	/* The writer gets its own descriptor: r->of keeps one for the lock
	 * and the final size. */
	int wfd = fcntl(r->of.fd, F_DUPFD_CLOEXEC, 3);
	r->w = wfd < 0 ? NULL : dp_writer_new(wfd, &hdr, &wo, &werr);
	if (!r->w) {
		if (wfd < 0)
			werr = -errno;
		fprintf(stderr, "domprof record: writing '%s': %s\n", r->output, strerror(-werr));
		return -1;
	}
	return 0;
}

/* The file: header, metadata, guests; flushed and put in place. */
static int start_file(struct rec *r, int argc, char **argv)
{
	if (open_writer(r, argc, argv) < 0)
		return -1;
	int werr = write_meta(r);
	if (werr < 0) {
		fprintf(stderr, "domprof record: writing '%s': %s\n", r->output, strerror(-werr));
		return -1;
	}
	if (start_domains(r))
		return -1;
	/* The metadata chunk reaches the disk before the file is put in
	 * place, so a disk already full fails here and leaves nothing. */
	if ((werr = dp_writer_flush(r->w)) < 0) {
		fprintf(stderr, "domprof record: writing '%s': %s\n", r->output, strerror(-werr));
		return -1;
	}
	if ((werr = outfile_commit(&r->of)) < 0) {
		report_outfile(r, werr);
		return -1;
	}
	return 0;
}

/* Open the host's events; on failure the command (not started) is
 * reaped. 0 or -1 (reported). */
static int open_host(struct rec *r, int *go_fd)
{
	pid_t target = r->child;
	struct perf_source_opts po = {
		.events = r->ev, .nevents = r->nev,
		.period = r->hz ? r->hz : r->period, .freq = r->hz != 0,
		.callchain = r->callchain, .cpus = r->cpus, .ncpus = r->ncpus,
		.pids = r->child ? &target : r->pids, .npids = r->child ? 1 : r->npids,
		.all_threads = !r->child, .enable_on_exec = r->child > 0,
		.ring_pages = r->ring_pages,
	};
	struct perf_source_error pe;
	r->ps = perf_source_open(&po, &pe);
	if (r->ps)
		return 0;
	report_open_error(r, &pe);
	if (*go_fd >= 0) {
		close(*go_fd); /* the child exits without running anything */
		*go_fd = -1;
	}
	reap_child(r, false);
	return -1;
}

/* Let the command exec; 0, or 127 when it could not run (reported). */
static int release_child(struct rec *r, int *go_fd, int *err_fd)
{
	int e = 0;
	if (write(*go_fd, "g", 1) != 1)
		e = errno;
	close(*go_fd);
	*go_fd = -1;
	ssize_t n;
	while ((n = read(*err_fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(*err_fd);
	*err_fd = -1;
	if (n == sizeof(e) || e) {
		fprintf(stderr, "domprof record: cannot run '%s': %s\n", r->cmd[0],
			e == ENOENT ? "command not found" : strerror(e));
		return 127;
	}
	return 0;
}

/* -p / -a: enable the events and describe the processes already running. */
static int start_attached(struct rec *r)
{
	int werr = perf_source_enable(r->ps);
	if (werr < 0) {
		fprintf(stderr, "domprof record: enabling events: %s\n", strerror(-werr));
		return -1;
	}
	unsigned nproc = 0;
	if (r->all)
		werr = sideband_snapshot(r->sb, r->w, -1, mono_ns(), &nproc);
	for (size_t i = 0; !werr && i < r->npids; i++)
		werr = sideband_snapshot(r->sb, r->w, r->pids[i], mono_ns(), &nproc);
	if (werr < 0) {
		fprintf(stderr, "domprof record: writing '%s': %s\n", r->output, strerror(-werr));
		return -1;
	}
	return 0;
}

static void print_notice(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "domprof record: %s\n", msg);
}

/* One line: samples written, lost, bytes, duration, and per source. */
static void print_summary(const struct rec *r, const struct collector_result *res,
			  uint64_t t_start, uint64_t bytes)
{
	uint64_t total = res->samples + res->lost;
	fprintf(stderr, "domprof record: %" PRIu64 " samples written, %" PRIu64 " lost (%.2f%%), %"
		PRIu64 " bytes, %.2f s", res->samples, res->lost,
		total ? 100.0 * (double)res->lost / (double)total : 0.0,
		bytes, (double)(res->t_end - t_start) / 1e9);
	if (res->child_done) {
		if (WIFEXITED(res->child_status))
			fprintf(stderr, "; command exited with status %d", WEXITSTATUS(res->child_status));
		else
			fprintf(stderr, "; command killed by signal %d (%s)", WTERMSIG(res->child_status),
				strsignal(WTERMSIG(res->child_status)));
	}
	if (r->ndomains) {
		const char *sep = "; ";
		if (r->ps) {
			fprintf(stderr, "; host: %" PRIu64 " samples", res->host_samples);
			sep = ", ";
		}
		for (size_t i = 0; i < r->ndomains; i++, sep = ", ")
		{
			fprintf(stderr, "%s%s: %" PRIu64 " samples", sep, domain_source_name(r->ds[i]),
				domain_source_samples(r->ds[i]));
			uint64_t dl = domain_source_lost(r->ds[i]);
			if (dl)
				fprintf(stderr, " (%" PRIu64 " lost)", dl);
		}
	}
	int sig = res->stop_sig;
	if (sig)
		fprintf(stderr, " (%s)", sig == SIGINT ? "interrupted" : sig == SIGHUP ? "hangup"
			: sig == SIGPIPE ? "broken pipe" : "terminated");
	fputc('\n', stderr);
}

/* Sampling runs: the collector loop, then the file's end. Exit code. */
static int run_and_finish(struct rec *r, uint64_t t_start)
{
	struct collector_config cc = {
		.w = r->w, .ps = r->ps, .sb = r->sb, .ds = r->ds, .nds = r->ndomains,
		.stop_flag = &g_stop_sig, .t_start = t_start,
		.duration_ns = r->duration > 0 ? (uint64_t)(r->duration * 1e9) : 0,
		.child = r->child, .pids = r->pids, .npids = r->npids,
		.notice = print_notice,
	};
	struct collector_result res;
	int werr = collector_run(&cc, &res);
	if (res.child_done) {
		r->child_done = true;
		r->child_status = res.child_status;
	}
	if (werr < 0) {
		/* Chunks already flushed are complete: close without flushing the
		 * open one, so the file stays readable up to the last full chunk. */
		fprintf(stderr, "domprof record: writing '%s' failed: %s; recording stopped, the file is "
			"readable up to the last complete chunk\n", r->output, strerror(-werr));
		if (r->ps)
			perf_source_disable(r->ps);
		reap_child(r, true);
		stop_domains(r);
		uint64_t good = dp_writer_bytes(r->w);
		dp_writer_free(r->w);
		r->w = NULL;
		/* Drop the partly written chunk too, so readers see a clean end. */
		if (!r->of.in_place && ftruncate(r->of.fd, (off_t)good) < 0)
			fprintf(stderr, "domprof record: could not trim '%s' to its last complete chunk: %s\n",
				r->output, strerror(errno));
		outfile_release(&r->of);
		return 1;
	}
	werr = dp_writer_finish(r->w);
	r->w = NULL;
	if (werr < 0) {
		fprintf(stderr, "domprof record: finishing '%s': %s\n", r->output, strerror(-werr));
		outfile_release(&r->of);
		return 1;
	}
	/* Through our descriptor: the size of the file this run wrote. */
	uint64_t bytes = outfile_size(&r->of);
	outfile_release(&r->of);
	print_summary(r, &res, t_start, bytes);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct rec rr, *r = &rr;
	memset(r, 0, sizeof(*r));
	r->output = "domprof.data";
	r->of.fd = -1;
	keep_std_fds();
	/* First: even a start-up message to a closed stderr pipe must not
	 * kill us, and a Ctrl-C during start-up still finishes the file. */
	install_signals();
	int ready_fd = take_ready_fd();
	int ret = parse_args(r, argc, argv);
	bool host = !ret && (r->all || r->npids || r->cmd[0]);
	if (ret || (ret = check_targets(r, host))) {
		free(r->domains);
		free(r->pids);
		return ret;
	}
	r->sb = sideband_new();

	if (open_output(r) < 0) {
		free_all(r);
		return 1;
	}
	int go_fd = -1, err_fd = -1, err;
	if (r->cmd[0] && (err = target_spawn(r->cmd, &r->child, &go_fd, &err_fd)) < 0) {
		fprintf(stderr, "domprof record: cannot start the command: %s\n", strerror(-err));
		discard_output(r);
		free_all(r);
		return 1;
	}
	if (host && open_host(r, &go_fd) < 0) {
		discard_output(r);
		free_all(r);
		return 1;
	}
	if (start_file(r, argc, argv) < 0)
		goto fail_start;

	/* Start sampling. */
	uint64_t t_start = mono_ns();
	if (r->child) {
		if ((ret = release_child(r, &go_fd, &err_fd))) {
			reap_child(r, false);
			stop_domains(r);
			discard_output(r);
			free_all(r);
			return ret;
		}
	} else if (r->ps && start_attached(r) < 0) {
		goto fail_start;
	}
	signal_ready(ready_fd);
	ret = run_and_finish(r, t_start);
	free_all(r);
	return ret;

fail_start:
	if (go_fd >= 0)
		close(go_fd);
	if (err_fd >= 0)
		close(err_fd);
	reap_child(r, false);
	stop_domains(r);
	discard_output(r);
	free_all(r);
	return 1;
}
