// SPDX-License-Identifier: MIT
/*
 * `domprof record`: sample the host with perf_event (collect/perf_source),
 * and guest domains with --domain (collect/domain_source), into one file
 * through the format writer.
 *
 * This file is the command: option parsing, validation messages, signal
 * installation and the summary line. The start-up and end of a
 * recording (the output file, spawning the command, the host's events,
 * the file's metadata and guests, the file's end) are collect/recorder.c;
 * its collector loop (poll and drain the rings and the domains, the stop
 * conditions, the totals) is collect/collector.c. The lines they report
 * reach stderr through their notice callback.
 * Lost samples are never silent: they go to LOST records, the STATS
 * record and the summary line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collector.h"
#include "collect/domain_source.h"
#include "collect/events.h"
#include "collect/perf_source.h"
#include "collect/recorder.h"
#include "collect/target.h"
#include "analysis/profile.h"
#include "analysis/rates.h"
#include "commands.h"
#include "output/escape.h"
#include "format/format.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define MAX_EVENTS 16
#define MAX_CPUS 4096
#define MAX_RING_PAGES (1ul << 20)      /* 4 GiB per CPU with 4 KiB pages */
#define MAX_FREQ ((uint64_t)UINT32_MAX) /* perf's sample_freq is a u64, but no clock ticks faster */

static volatile sig_atomic_t g_stop_sig;
static volatile sig_atomic_t g_switch;   /* SIGUSR2 with --switch-output=signal */

static void on_stop(int sig)
{
	g_stop_sig = sig;
}

static void on_switch(int sig)
{
	g_switch = sig;
}

static void on_chld(int sig)
{
	(void)sig; /* only here to interrupt poll() */
}

struct rec {
	/* options */
	const char *output;
	bool force, all, callchain, allow_remote, no_buildid_mmap, no_lines;
	uint32_t ustack_size;   /* --call-graph dwarf[,SIZE]; 0: frame pointers only */
	const char *pidlist, *cpulist;
	double duration;
	struct ev_spec ev[MAX_EVENTS];
	size_t nev;
	uint64_t hz, period;
	size_t ring_pages;
	const char **domains;
	size_t ndomains;
	char **cmd;
	bool switching, switch_signal;  /* --switch-output */
	uint64_t switch_ns, switch_bytes;
	unsigned max_files;
	/* what the options say, checked against the system */
	int cpus[MAX_CPUS];
	size_t ncpus;
	pid_t *pids;
	size_t npids;
	/* the source lines embedded at the end (embed_lines) */
	bool lines_ran, lines_done;
	struct sym_lines_stats lines;
	uint64_t lines_ns;
	char lines_why[256];
};

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
		cli_say("record", "cannot map the ring buffer of CPU %d (-m %zu = %zu KiB per CPU): %s; "
			"it is over the locked-memory limit (kernel.perf_event_mlock_kb is %ld per CPU, "
			"ulimit -l is %s): use a smaller -m, raise a limit, or run with CAP_IPC_LOCK",
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
		cli_say("record", "not permitted to open event '%s' (%s): kernel.perf_event_paranoid is %ld; "
			"set it to -1 (sysctl -w kernel.perf_event_paranoid=-1) or run with CAP_PERFMON%s%s",
			ev, strerror(err), p, user_only_ok ? ", or sample user space only with -e " : "",
			user_only_ok ? uev : "");
	} else if (r->ev[e->event].hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
		cli_say("record", "event '%s' is not supported: this machine has no hardware PMU event "
			"for it (no performance counters, as in many VMs); use -e cpu-clock", ev);
	} else if (r->ustack_size && (err == EINVAL || err == ENOSYS || err == EOPNOTSUPP)) {
		cli_say("record", "perf_event_open for event '%s' with user registers and "
			"%u bytes of user stack (--call-graph dwarf) failed: %s; the kernel may not "
			"support them for this event: use -g", ev, r->ustack_size, strerror(err));
	} else if (err == ESRCH) {
		cli_say("record", "no such process: %d", (int)e->pid);
	} else if (err == EMFILE || err == ENFILE) {
		cli_say("record", "too many open files opening '%s' on CPU %d: "
			"raise the limit (ulimit -n) or use fewer CPUs/threads", ev, e->cpu);
	} else {
		cli_say("record", "%s for event '%s' on CPU %d failed: %s",
			e->what, ev, e->cpu, strerror(err));
	}
}

/* A handler's failure: the reason in err, -1 (src/cli/opt.h). */
#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -1)

static int add_events(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	struct rec *r = ctx;
	char *copy = xstrdup(arg), *rest = copy;
	int ret = 0;
	/* strsep, not strtok: an empty item ("-e ''", "-e a,,b") is an
	 * error, not something to skip silently. */
	for (char *t; !ret && (t = strsep(&rest, ",")) != NULL;) {
		if (!*t) {
			ret = FAIL("empty event name in -e '%s'", arg);
			break;
		}
		if (r->nev >= MAX_EVENTS) {
			ret = FAIL("too many events (at most %d)", MAX_EVENTS);
			break;
		}
		int e = ev_parse(t, &r->ev[r->nev]);
		if (e == -EBADMSG) {
			ret = FAIL("unknown modifier in event '%s' (use :u or :k)", t);
			break;
		}
		if (e < 0) {
			ret = FAIL("unknown event '%s' (known: %s)", t, ev_known_names());
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

/*
 * --call-graph MODE as perf spells it: "fp", or "dwarf[,SIZE]" with SIZE
 * read as perf does (decimal, 0x hex or 0 octal; rounded up to a multiple
 * of 8; 8..65528). -g keeps an earlier dwarf (as perf's -g). 0 or the
 * usage error's exit code.
 */
#define DEFAULT_USTACK 8192u
static int parse_call_graph(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	struct rec *r = ctx;
	r->callchain = true;
	if (!strcmp(arg, "fp")) {
		r->ustack_size = 0;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return FAIL("bad --call-graph '%s' (fp or dwarf[,SIZE])", arg);
#if !defined(__x86_64__)
	return FAIL("--call-graph dwarf: user registers are only known on x86-64");
#endif
	if (!arg[5]) {
		r->ustack_size = DEFAULT_USTACK;
		return 0;
	}
	const char *sz = arg + 6;
	char *end;
	errno = 0;
	unsigned long long v = *sz >= '0' && *sz <= '9' ? strtoull(sz, &end, 0) : 0;
	if (*sz < '0' || *sz > '9' || errno || *end || !v || v > DP_MAX_USTACK)
		return FAIL("bad --call-graph '%s': SIZE is the bytes of user stack "
			    "to keep, 1 to %u (rounded up to a multiple of 8)", arg, DP_MAX_USTACK);
	r->ustack_size = (uint32_t)((v + 7) & ~7ull);
	return 0;
}

/*
 * --switch-output[=MODE] as perf spells it: "signal" (also no MODE), a
 * time N followed by s, m, h or d, or a size N followed by B, K, M or G
 * (K, G also lower case; m is minutes). 0 or the usage error's code.
 */
#define SWITCH_MIN_BYTES (1ull << 20)
static int parse_switch(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	struct rec *r = ctx;
	r->switching = true;
	r->switch_signal = false;
	r->switch_ns = r->switch_bytes = 0;
	if (!arg || !strcmp(arg, "signal")) {
		r->switch_signal = true;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = *arg >= '0' && *arg <= '9' ? strtoull(arg, &end, 10) : 0;
	uint64_t ns = 0, bytes = 0;
	if (v && !errno && end[0] && !end[1]) {
		switch (end[0]) {
		case 's': ns = 1000000000ull; break;
		case 'm': ns = 60000000000ull; break;
		case 'h': ns = 3600000000000ull; break;
		case 'd': ns = 86400000000000ull; break;
		case 'B': bytes = 1; break;
		case 'K': case 'k': bytes = 1ull << 10; break;
		case 'M': bytes = 1ull << 20; break;
		case 'G': case 'g': bytes = 1ull << 30; break;
		}
	}
	/* at most ~100 days or 1 PiB: the products stay far from 2^64 */
	if ((ns && v <= 100 * 86400000000000ull / ns) || (bytes && v <= (1ull << 50) / bytes)) {
		r->switch_ns = ns * v;
		r->switch_bytes = bytes * v;
		if (bytes && r->switch_bytes < SWITCH_MIN_BYTES)
			return FAIL("bad --switch-output '%s': a SIZE is at least 1M "
				    "(each file starts with the kernel's symbol tables)", arg);
		return 0;
	}
	return FAIL("bad --switch-output '%s' (signal, a TIME such as 30s, 10m, 1h, "
		    "1d, or a SIZE such as 100M, 1G)", arg);
}

/* Domain names must be unique and not "host" (domain 0's name): report
 * --domain picks a domain by name. */
static int add_domain(void *ctx, const char *name, const char *spec, char *err, size_t errlen)
{
	struct rec *r = ctx;
	if (!strchr(spec, '='))
		return FAIL("bad --domain '%s': expected NAME=SPEC", spec);
	size_t n = (size_t)(strchr(spec, '=') - spec);
	if (n == 4 && !strncmp(spec, "host", 4))
		return FAIL("bad --domain '%s': the name 'host' is the host's own domain "
			    "(choose another NAME)", spec);
	for (size_t i = 0; i < r->ndomains; i++)
		if (!strncmp(r->domains[i], spec, n) && r->domains[i][n] == '=')
			return FAIL("bad --domain '%s': domain name '%.*s' is given twice", spec, (int)n, spec);
	/* the handler's growth: ndomains + 1 entries, each time (a few) */
	r->domains = xrealloc(r->domains, (r->ndomains + 1) * sizeof(char *));
	r->domains[r->ndomains++] = spec;
	return 0;
}

static int set_duration(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	struct rec *r = ctx;
	char *end;
	r->duration = strtod(arg, &end);
	if (*end || end == arg || !(r->duration > 0) || r->duration > 1e7)
		return FAIL("bad duration '%s' (seconds, > 0)", arg);
	return 0;
}

static int set_freq(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	if (parse_u64(arg, MAX_FREQ, &((struct rec *)ctx)->hz) < 0)
		return FAIL("bad frequency '%s' (Hz, 1 to %llu)", arg, (unsigned long long)MAX_FREQ);
	return 0;
}

static int set_count(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	/* The kernel refuses a period with bit 63 set (EINVAL). */
	if (parse_u64(arg, INT64_MAX, &((struct rec *)ctx)->period) < 0)
		return FAIL("bad period '%s' (1 to %lld)", arg, (long long)INT64_MAX);
	return 0;
}

static int set_mmap_pages(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	uint64_t v;
	if (parse_u64(arg, UINT64_MAX, &v) < 0 || (v & (v - 1)))
		return FAIL("bad --mmap-pages '%s' (a power of two)", arg);
	if (v > MAX_RING_PAGES)
		return FAIL("bad --mmap-pages '%s': at most %lu pages per CPU", arg, (unsigned long)MAX_RING_PAGES);
	((struct rec *)ctx)->ring_pages = (size_t)v;
	return 0;
}

static int set_max_files(void *ctx, const char *name, const char *arg, char *err, size_t errlen)
{
	uint64_t v;
	if (parse_u64(arg, 1000000, &v) < 0)
		return FAIL("bad --switch-max-files '%s' (1 to 1000000)", arg);
	((struct rec *)ctx)->max_files = (unsigned)v;
	return 0;
}

static const struct opt record_opts[] = {
	OPT_HEADING("targets:"),
	OPT_STR('p', "pid", "PIDS", struct rec, pidlist, "attach to running processes (all their threads)"),
	OPT_BOOL('a', "all-cpus", struct rec, all, "the whole system"),
	OPT_STR('C', "cpu", "CPUS", struct rec, cpulist, "only these CPUs, e.g. 0,2-3 (default: all online CPUs)"),
	OPT_FN('d', "duration", "SEC", set_duration,
	       "stop after SEC seconds (default: until the command exits or Ctrl-C)"),
	OPT_HEADING("events:"),
	OPT_FN('e', "event", "EVENT", add_events,
	       "cpu-clock (default), task-clock, page-faults, cycles, instructions, cache-misses, "
	       "branch-misses, ...; modifiers :u (user) :k (kernel); repeat -e or separate with commas for "
	       "several events"),
	OPT_FN('F', "freq", "HZ", set_freq, "samples per second per CPU (default 1000)"),
	OPT_FN('c', "count", "PERIOD", set_count, "one sample every PERIOD events instead of -F"),
	{ .kind = OPT_FLAG, .letter = 'g', .off = offsetof(struct rec, callchain), .val = 1,
	  .alias_of = "--call-graph fp",
	  .help = "record call chains: frame pointers on the host and in an agent's guest; a passive "
		  "domain's guest kernel unwound from outside with the guest's own ORC tables" },
	OPT_FN(0, "call-graph", "fp|dwarf[,SIZE]", parse_call_graph,
	       "fp: the same as -g. dwarf: as -g, and with each host sample the task's user registers and "
	       "up to SIZE bytes of its user stack from sp up (default 8192, rounded up to a multiple of 8, "
	       "at most 65528; only what the kernel could copy is stored), as perf's --call-graph dwarf "
	       "records them (x86-64); report -g, flamegraph and export unwind them with the programs' "
	       "DWARF call-frame information. An agent's guest records them too (an older agent: -g chains)"),
	OPT_FN('m', "mmap-pages", "N", set_mmap_pages,
	       "ring buffer data pages per CPU, a power of two up to 1048576 (default 256)"),
	OPT_HEADING("guests:"),
	{ .kind = OPT_CALL, .name = "domain", .arg = "NAME=SPEC", .fn = add_domain, .values = "gdb: agent:",
	  .help = "also sample this VM as domain NAME (repeatable; each NAME once, not 'host'):\n"
		  "  NAME=gdb:HOST:PORT[,kallsyms=F|sysmap=F|vmlinux=F]\n"
		  "           [,kaslr=auto|OFF][,current=0]\n"
		  "  NAME=agent:ADDRESS[,key=FILE][,max-bytes=SIZE]\n"
		  "key=: the agent's --key-file (docs/active.md); gdb: with no symbol file, the guest "
		  "kernel's symbols and processes are read from guest memory (docs/passive.md); with -g its "
		  "kernel's call chains too, unwound with its ORC tables "
		  "(unwind-window=BYTES, unwind-max=BYTES, unwind-depth=N); that start-up runs while the others "
		  "sample, at most start-time=SECONDS (default 10) and start-mb=MIB (32) of guest memory; past "
		  "them the domain goes on with what it read, and a guest that fails during it ends only "
		  "itself; a task-list walk while recording holds the VM at most walk-ms=MS (default 100); "
		  "paging=4|5 sets the guest's paging mode (default: from its cr4 and kernel)" },
	OPT_BOOL(0, "allow-remote-stub", struct rec, allow_remote, "allow a gdb stub that is not on this machine"),
	OPT_HEADING("output:"),
	OPT_STR('o', "output", "FILE", struct rec, output,
		"output file (default domprof.data); an existing file is renamed to FILE.old; a symlink is "
		"followed; FILE appears only once recording started; a FILE another recorder is writing is refused"),
	OPT_BOOL('f', "force", struct rec, force, "overwrite FILE instead of keeping FILE.old"),
	{ .kind = OPT_CALL, .name = "switch-output", .arg = "signal|TIME|SIZE", .flags = OPT_VALUE_OPTIONAL,
	  .fn = parse_switch,
	  .help = "write a series of files FILE.YYYY-MM-DDTHH:MM:SS.mmmZ (UTC, when each began), each "
		  "complete and readable alone, none lost in between: a new one on SIGUSR2 (signal, the "
		  "default), every TIME (30s, 10m, 1h, 1d) or when a file reaches SIZE (100M, 1G; B, K, M, G; "
		  "at least 1M)" },
	OPT_FN(0, "switch-max-files", "N", set_max_files, "with --switch-output, keep only the newest N files"),
	OPT_BOOL(0, "no-buildid-mmap", struct rec, no_buildid_mmap,
		 "read build-ids from the mapped files instead of asking the kernel for them; use it when perf "
		 "records at the same time (since Linux 5.12 the kernel then marks perf's mappings as carrying "
		 "build-ids, and perf's report aborts on them)"),
	OPT_BOOL(0, "no-lines", struct rec, no_lines,
		 "do not embed the source lines of the sampled addresses: by default the end of the recording "
		 "looks them up (DWARF, debug files, the line cache) and stores them in the file, so that "
		 "report -s srcline needs no DWARF (docs/record.md; not for the files --switch-output ends "
		 "before the last)"),
	OPT_TABLE_END,
};

const struct cmd_spec spec_record = {
	.name = "record",
	.summary = "record samples from the host and from VMs into a file",
	.synopsis = "[options] [--] COMMAND [ARGS...]\n"
		    "[options] -a | -p PID[,PID...]\n"
		    "[options] --domain NAME=SPEC... (guests only)",
	.description =
		"Sample the host (and guests given with --domain) into a domprof file.\n"
		"record's options come before COMMAND: what follows it, -h and --help\n"
		"too, is the command's. COMMAND ARGS: run COMMAND and profile it and its\n"
		"children; stop when it exits.\n",
	.epilog =
		"Ctrl-C, SIGTERM, SIGHUP or SIGPIPE stops recording and finishes the file (a\n"
		"command still running gets SIGTERM). At the end one line reports samples\n"
		"written, samples lost, bytes and duration; with --domain, then one line per\n"
		"source: requested and achieved samples a second per CPU or vCPU, samples,\n"
		"lost, and the recorder's CPU time for it (also in `domprof info`).\n",
	.opts = record_opts,
	.flags = CMD_OPERAND_STOPS,
};

/* 0; 2 after a usage error (said); -1 after --help (printed). */
static int parse_args(struct rec *r, int argc, char **argv)
{
	char *ops[argc + 1];
	int nops, ret = opt_parse(&spec_record, argc, argv, r, ops, &nops);
	if (ret != OPT_CONTINUE)
		return ret ? ret : -1;
	/* the first operand stopped the options: COMMAND and its arguments
	 * are argv's tail */
	r->cmd = argv + (argc - nops);
	bool has_cmd = nops > 0;
	if (r->hz && r->period)
		return usage_error("record", "-F and -c exclude each other");
	if (r->max_files && !r->switching)
		return usage_error("record", "--switch-max-files needs --switch-output");
	struct stat st;
	if (r->switching && stat(r->output, &st) == 0 && !S_ISREG(st.st_mode))
		return usage_error("record", "--switch-output writes files named '%s.TIME': -o must name "
				   "a file, not a device, fifo or directory", r->output);
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
			cli_say("record", "CPU %d is not online", want[i]);
			return 1;
		}
		r->cpus[r->ncpus++] = want[i];
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
		cli_say("record", "-F %" PRIu64 " is above kernel.perf_event_max_sample_rate "
			"(%ld): use a lower -F or raise the sysctl", r->hz, maxrate);
		return 1;
	}
	for (size_t i = 0; i < r->npids; i++)
		if (!collector_pid_alive(r->pids[i])) {
			cli_say("record", "no such process: %d", (int)r->pids[i]);
			return 1;
		}
	return 0;
}

/* A notice may quote what a guest or its stub sent: terminal-safe. */
static void print_notice(void *ctx, const char *msg)
{
	(void)ctx;
	cli_error_text("record", NULL, msg);
}

/* One line: samples written, lost, bytes, duration, and per source. */
static void print_summary(const struct recorder *r, const struct collector_result *res,
			  uint64_t t_start, uint64_t bytes)
{
	uint64_t total = res->samples + res->lost;
	fprintf(stderr, "domprof record: %" PRIu64 " samples written, %" PRIu64 " lost (%.2f%%), %"
		PRIu64 " bytes, %.2f s", res->samples, res->lost,
		total ? 100.0 * (double)res->lost / (double)total : 0.0,
		bytes, (double)(res->t_end - t_start) / 1e9);
	if (r->cfg->switching)
		fprintf(stderr, " in %u files %s.*", res->files, r->cfg->output);
	if (res->child_done) {
		if (WIFEXITED(res->child_status))
			fprintf(stderr, "; command exited with status %d", WEXITSTATUS(res->child_status));
		else
			fprintf(stderr, "; command killed by signal %d (%s)", WTERMSIG(res->child_status),
				strsignal(WTERMSIG(res->child_status)));
	}
	if (r->cfg->ndomains) {
		const char *sep = "; ";
		if (r->ps) {
			fprintf(stderr, "; host: %" PRIu64 " samples", res->host_samples);
			sep = ", ";
		}
		for (size_t i = 0; i < r->cfg->ndomains; i++, sep = ", ")
		{
			fprintf(stderr, "%s%s: %" PRIu64 " samples", sep, domain_source_name(r->ds[i]),
				domain_source_samples(r->ds[i]));
			uint64_t dl = domain_source_lost(r->ds[i]);
			/* a passive domain: what it cost the VM, and its chains */
			char sum[400];
			domain_source_summary(r->ds[i], sum, sizeof(sum));
			size_t n = strlen(sum);
			if (dl)
				snprintf(sum + n, sizeof(sum) - n, ", %" PRIu64 " lost", dl);
			if (sum[0])
				fprintf(stderr, " (%s)", sum + 2);
		}
	}
	int sig = res->stop_sig;
	if (sig)
		fprintf(stderr, " (%s)", sig == SIGINT ? "interrupted" : sig == SIGHUP ? "hangup"
			: sig == SIGPIPE ? "broken pipe" : "terminated");
	fputc('\n', stderr);
	/* With guests, one line per source: requested against achieved
	 * rate, lost, and what it cost the recorder (also in `info`). */
	for (size_t i = 0; r->cfg->ndomains && i < res->nrates; i++) {
		const struct collector_rate *c = &res->rates[i];
		uint64_t unit_ns;
		if (__builtin_mul_overflow(c->span_ns, (uint64_t)c->units, &unit_ns))
			unit_ns = UINT64_MAX;
		struct rate_sums rs = {
			.requested = (uint64_t)((double)c->hz * (double)unit_ns / 1e9 + 0.5),
			.samples = c->samples, .missed = c->missed, .span_ns = c->span_ns,
			.unit_ns = unit_ns, .cpu_ns = c->cpu_ns,
			.ticks = c->ticks, .held_ns = c->held_ns, .wakes = c->wakes, .late_ns = c->late_ns,
		};
		char line[400];
		rate_format(&rs, c->unit, line, sizeof(line));
		cli_say("record", "rate %s: %s", c->name, line);
	}
}

static int put_lines(void *ctx, uint32_t domain, const char *bid, const uint8_t *data, size_t len)
{
	struct dp_symtab st = { DP_SYMTAB_LINES, bid, data, len };
	int werr = dp_write_symtab(ctx, domain, &st);
	return werr == -EFBIG ? 0 : werr;   /* over a record's size: that image's lines from DWARF */
}

/*
 * The recorder's end_file: the file read back as `report -s srcline`
 * reads it, on this machine while its files and debug files are here,
 * and every line looked up written into it as SYMTAB kind 10 tables (one
 * per image with a build-id and line tables). A report of the file then
 * answers its lines from them: none of the DWARF inflating (libc's debug
 * file alone is 10-14 ms of it) that made a cold srcline report 2-3x a
 * flat one, and lines on a machine without the debug files. What it
 * costs is measured and printed (print_lines). A file that does not
 * read back gets no tables, which is said; the recording is unharmed.
 */
static int embed_lines(void *ctx, struct dp_writer *w, const void *file, size_t len)
{
	struct rec *r = ctx;
	uint64_t t0 = mono_ns();
	int err = 0;
	r->lines_ran = true;
	struct dp_reader *rd = dp_reader_open_mem(file, len, &err, r->lines_why, sizeof(r->lines_why));
	struct profile_opts o = { .srcline = true, .collect_lines = true };
	struct profile *p = rd ? profile_load_reader(rd, NULL, &o, &err, r->lines_why, sizeof(r->lines_why)) : NULL;
	int werr = p ? profile_lines_export(p, put_lines, w, &r->lines) : 0;
	profile_free(p);
	dp_reader_free(rd);
	r->lines_ns = mono_ns() - t0;
	r->lines_done = p != NULL;
	return werr;
}

static void print_lines(const struct rec *r)
{
	if (!r->lines_ran)
		return;   /* --no-lines, or no regular file to read back */
	if (!r->lines_done) {
		cli_error_text("record", "source lines not embedded", r->lines_why[0] ? r->lines_why : "the file could not be read back");
		return;
	}
	if (!r->lines.addrs && !r->lines.refused) {
		cli_say("record", "no source lines embedded: no sampled image has line tables here "
			"(%.1f ms)", (double)r->lines_ns / 1e6);
		return;
	}
	fprintf(stderr, "domprof record: source lines of %zu address%s in %zu image%s embedded (%zu KiB "
		"before compression, %.1f ms)", r->lines.addrs, r->lines.addrs == 1 ? "" : "es",
		r->lines.images, r->lines.images == 1 ? "" : "s", (r->lines.bytes + 1023) / 1024,
		(double)r->lines_ns / 1e6);
	if (r->lines.refused)
		fprintf(stderr, "; %zu image%s over a table's limits left to their DWARF", r->lines.refused,
			r->lines.refused == 1 ? "" : "s");
	fputc('\n', stderr);
}

/* What the recorder needs of the options (borrowed from r). */
static void fill_config(struct rec *r, struct recorder_config *c)
{
	*c = (struct recorder_config){
		.output = r->output, .force = r->force, .all = r->all, .callchain = r->callchain,
		.ustack_size = r->ustack_size, .no_buildid_mmap = r->no_buildid_mmap, .allow_remote = r->allow_remote, .ev = r->ev, .nev = r->nev, .hz = r->hz,
		.period = r->period, .ring_pages = r->ring_pages, .cpus = r->cpus, .ncpus = r->ncpus,
		.pids = r->pids, .npids = r->npids, .domains = r->domains, .ndomains = r->ndomains,
		.cmd = r->cmd, .duration = r->duration, .stop_flag = &g_stop_sig,
		.switching = r->switching, .switch_ns = r->switch_ns, .switch_bytes = r->switch_bytes,
		.switch_flag = r->switch_signal ? &g_switch : NULL, .max_files = r->max_files,
		.notice = print_notice,
		.end_file = r->no_lines ? NULL : embed_lines, .end_ctx = r,
	};
}

/* The command spawned (stopped), the host's events, the file started.
 * 0, or -1 (reported; the caller aborts). */
static int start_recording(const struct rec *r, struct recorder *rc, bool host, int argc, char **argv)
{
	if (r->cmd[0] && recorder_spawn(rc) < 0)
		return -1;
	struct perf_source_error pe;
	if (host && recorder_open_host(rc, &pe) < 0) {
		report_open_error(r, &pe);
		return -1;
	}
	return recorder_start_file(rc, argc, argv);
}

int cmd_record(int argc, char **argv)
{
	struct rec rr, *r = &rr;
	memset(r, 0, sizeof(*r));
	r->output = "domprof.data";
	keep_std_fds();
	/* First: even a start-up message to a closed stderr pipe must not
	 * kill us, and a Ctrl-C during start-up still finishes the file. */
	install_signals();
	int ready_fd = recorder_take_ready_fd();
	int ret = parse_args(r, argc, argv);
	bool host = !ret && (r->all || r->npids || r->cmd[0]);
	if (!ret && r->switch_signal) {
		/* only then: SIGUSR2 otherwise keeps its default (it ends us) */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_switch;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR2, &sa, NULL);
	}
	if (ret || (ret = check_targets(r, host))) {
		free(r->domains);
		free(r->pids);
		return ret < 0 ? 0 : ret;   /* -1: --help printed */
	}
	struct recorder_config cfg;
	struct recorder rc;
	fill_config(r, &cfg);
	recorder_init(&rc, &cfg);

	if (recorder_open_output(&rc) < 0)
		ret = 1;
	else if (start_recording(r, &rc, host, argc, argv) < 0) {
		recorder_abort(&rc);
		ret = 1;
	} else {
		uint64_t t_start, bytes;
		struct collector_result res;
		if ((ret = recorder_start(&rc, &t_start))) {
			recorder_abort(&rc); /* 127: the command could not run */
		} else {
			recorder_signal_ready(ready_fd);
			ret = recorder_run(&rc, t_start, &res, &bytes);
			if (!ret) {
				print_summary(&rc, &res, t_start, bytes);
				print_lines(r);
			}
			collector_result_release(&res);
		}
	}
	recorder_free(&rc);
	free(r->domains);
	free(r->pids);
	return ret;
}
