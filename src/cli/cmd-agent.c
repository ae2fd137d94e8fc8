// SPDX-License-Identifier: MIT
/*
 * `domprof agent`: the in-guest half of an active domain. It listens
 * only where told (--listen), serves one controller (a host's `domprof
 * record --domain NAME=agent:ADDRESS`) at a time, and understands only
 * the requests of collect/agent_proto.h: HELLO, START, STOP, COLLECT.
 *
 * START runs this very binary as `record -a -F HZ [-g | --call-graph
 * dwarf,SIZE] -o PRIV/agent.data` (the whole guest, cpu-clock; PRIV is
 * the 0700 directory the agent made under --dir, agent/workdir.h); STOP
 * sends it SIGINT, so the recorder finishes its file as after Ctrl-C;
 * COLLECT reads that file and sends the ELF files of the guest binaries
 * that samples hit (ips, call chains, user stack words) and that pass
 * agent/ship.h's identity checks, as SYMTAB blobs named by build-id, then
 * the guest's records (tasks, maps, samples, its kallsyms) as raw
 * records. The agent never runs anything else and
 * no request carries a path or a command (see docs/active.md).
 *
 * This file parses the options, loads the key and prints; the parts are
 * modules: agent/listen.h (transports), agent/server.h (the protocol
 * server), agent/child.h (the recorder child), agent/collect.h (COLLECT),
 * agent/ship.h and agent/workdir.h.
 */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/child.h"
#include "agent/listen.h"
#include "agent/server.h"
#include "agent/workdir.h"
#include "collect/agent_proto.h"
#include "commands.h"
#include "output/escape.h"


static volatile sig_atomic_t g_quit;
static void on_quit(int sig) { g_quit = sig; }

/* A line may quote a controller's request or a file's name: terminal-safe. */
static void say_line(void *ctx, const char *text)
{
	cli_error_text("agent", NULL, text);
}

struct agent_args {
	const char *listen_at, *dir, *key_file;
	bool once, insecure;
	int idle_ms;
};

static int set_idle(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	char *end;
	long v = strtol(value, &end, 10);
	if (end == value || *end || v < 0 || v > 86400) {
		snprintf(err, n, "bad --idle-timeout '%s' (seconds, 0..86400; 0: none)", value);
		return -1;
	}
	*(int *)ctx = (int)v * 1000;
	return 0;
}

static const struct opt agent_opts[] = {
	OPT_STR(0, "listen", "ADDRESS", struct agent_args, listen_at,
		"where to wait for the host (required; nothing is opened otherwise):\n"
		"  tcp:HOST:PORT  a TCP port, e.g. tcp:10.0.2.15:7000\n"
		"                 behind QEMU's hostfwd=...\n"
		"  unix:PATH      a unix socket\n"
		"  /dev/PATH      a character device: a virtio-serial\n"
		"                 port (/dev/vport0p1) or a serial line\n"
		"                 (/dev/ttyS1)"),
	{ .kind = OPT_STRING, .letter = 'l', .arg = "ADDRESS", .off = offsetof(struct agent_args, listen_at),
	  .flags = OPT_ALIAS, .alias_of = "--listen", .help = "" },
	OPT_STR(0, "key-file", "FILE", struct agent_args, key_file,
		"demand that the host proves it holds this shared key (and prove it in turn) before any "
		"request; created (random, mode 0600) if absent. The host gives it as "
		"--domain NAME=agent:ADDRESS,key=FILE"),
	OPT_BOOL(0, "insecure", struct agent_args, insecure,
		 "allow a TCP address that is not loopback without a key (anyone who reaches it controls the agent)"),
	OPT_STR(0, "dir", "DIR", struct agent_args, dir,
		"where the agent makes its private directory (mode 0700) for the recording (default /tmp); "
		"refused when it or a directory above it is writable by other users and not sticky, or "
		"owned by another user"),
	{ .kind = OPT_STRING, .letter = 'D', .arg = "DIR", .off = offsetof(struct agent_args, dir),
	  .flags = OPT_ALIAS, .alias_of = "--dir", .help = "" },
	OPT_FN_AT(0, "idle-timeout", "SEC", struct agent_args, idle_ms, set_idle,
		  "close a controller that sends nothing for SEC seconds while no recording runs (default 30)"),
	OPT_BOOL(0, "once", struct agent_args, once, "exit after the first controller disconnects"),
	OPT_TABLE_END,
};

const struct cmd_spec spec_agent = {
	.name = "agent",
	.summary = "run inside a guest and record on request of a host",
	.synopsis = "--listen ADDRESS [--key-file FILE | --insecure] [--dir DIR]\n"
		    " [--idle-timeout SEC] [--once]",
	.description =
		"Run inside a guest: wait for a host's `domprof record --domain NAME=agent:ADDRESS`,\n"
		"record the whole guest while the host records, and send the guest's samples,\n"
		"tasks, maps, kallsyms and the symbol tables of the binaries that were hit.\n"
		"The host's -g records call chains here too, its --call-graph dwarf[,SIZE] also\n"
		"user registers and stacks (x86-64; the binaries their return addresses fall\n"
		"in are sent as well, for the host to unwind against).\n",
	.epilog =
		"One controller at a time; others are refused. Only the requests hello, start,\n"
		"stop and collect are understood; anything else closes the connection.\n"
		"Without --key-file a TCP address must be loopback (or --insecure); a unix\n"
		"socket is created mode 0600 (only this user connects). See docs/active.md.\n",
	.opts = agent_opts,
};

int cmd_agent(int argc, char **argv)
{
	struct agent_args aa = { .dir = "/tmp", .idle_ms = 30000 };
	char *ops[argc + 1];
	int nops, prc = opt_parse(&spec_agent, argc, argv, &aa, ops, &nops);
	if (prc != OPT_CONTINUE)
		return prc;
	if (nops)
		return usage_error("agent", "unexpected argument '%s'", ops[0]);
	const char *listen_at = aa.listen_at, *dir = aa.dir, *key_file = aa.key_file;
	bool once = aa.once, insecure = aa.insecure;
	int idle_ms = aa.idle_ms;
	if (!listen_at)
		return usage_error("agent", "--listen ADDRESS is required (the agent opens nothing by default)");
	char err[4600], warn[600];
	if (key_file && insecure)
		return usage_error("agent", "--insecure and --key-file contradict each other");
	struct ap_key key;
	struct agent_log log = { .line = say_line };
	memset(&key, 0, sizeof(key));
	if (key_file) {
		bool created;
		if (ap_key_load(key_file, true, &key, &created, err, sizeof(err)) < 0) {
			cli_say("agent", "%s", err);
			return 1;
		}
		if (created)
			agent_logf(&log, "created key file %s; give the host a copy (mode 0600) as "
				   "--domain NAME=agent:ADDRESS,key=FILE", key_file);
	}
	/* Every file the agent creates is in a directory of its own. */
	struct workdir wd;
	if (workdir_create(&wd, dir, err, sizeof(err)) < 0) {
		cli_say("agent", "%s", err);
		return 1;
	}
	struct agent_child child;
	agent_child_init(&child, &wd);
	struct agent_listener l;
	if (agent_listen_open(&l, listen_at, key_file != NULL, insecure, err, sizeof(err), warn,
			      sizeof(warn)) < 0) {
		cli_say("agent", "%s", err);
		workdir_remove(&wd);
		return 1;
	}
	if (warn[0])
		agent_logf(&log, "%s", warn);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	agent_logf(&log, "listening on %s%s (files in %s)", listen_at, key_file ? " (key required)" : "", wd.path);

	struct agent_server_cfg cfg = {
		.key = key_file ? &key : NULL, .idle_ms = idle_ms, .device = l.kind == AGENT_L_DEV,
		.lfd = l.lfd, .quit = &g_quit, .log = log, .ops = &agent_recorder_ops, .ctx = &child,
	};
	while (!g_quit) {
		int fd = agent_listen_next(&l, 500);
		if (fd == -EAGAIN)
			continue;
		if (fd < 0) {
			cli_say("agent", "cannot open %s: %s", listen_at, strerror(-fd));
			break;
		}
		agent_serve(&cfg, fd);
		close(fd);
		if (once)
			break;
	}
	agent_listen_close(&l);
	memset(&key, 0, sizeof(key));
	workdir_remove(&wd);
	agent_logf(&log, "exiting");
	return 0;
}
