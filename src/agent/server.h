/* SPDX-License-Identifier: MIT */
/*
 * The agent's protocol server: serves one controller on one connection
 * (collect/agent_proto.h). With a key, the challenge-response comes
 * first and nothing else is accepted before it. Then HELLO (version
 * check; answered with HELLO_OK: hostname, release, CPUs), START (runs
 * the recorder), STOP, COLLECT; anything else is answered with ERROR and
 * the connection is closed. A second controller that connects to the
 * listening socket meanwhile is refused ("busy"). A controller that sends
 * nothing for idle_ms while no recording runs is closed: it would hold
 * the agent forever.
 *
 * What START/STOP/COLLECT do is behind agent_server_ops, so the server
 * can be driven without a real recorder (tests/unit/test-agent-server.c);
 * agent_recorder_ops is the real one (agent/child.h, agent/collect.h).
 * Nothing here prints: lines go to cfg->log.
 */
#ifndef DOMPROF_AGENT_SERVER_H
#define DOMPROF_AGENT_SERVER_H

#include <signal.h>
#include <stdbool.h>

#include "agent/log.h"
#include "collect/agent_proto.h"

struct agent_server_ops {
	/* Start recording; 0, or -1 with a reason in why. */
	int (*start)(void *ctx, const struct ap_start *st, char *why, size_t whylen);
	/* Stop it; msg gets its summary. 0: there is a recording to collect. */
	int (*stop)(void *ctx, char *msg, size_t msglen);
	/* True while the recorder runs. */
	bool (*running)(void *ctx);
	/* 1 and its wait status when the recorder ended by itself (reaped). */
	int (*ended)(void *ctx, int *status);
	/* COLLECT onto fd: 0, AGENT_COLLECT_FAILED or AGENT_COLLECT_GONE (agent/collect.h). */
	int (*collect)(void *ctx, int fd, const struct agent_log *log, char *why, size_t whylen);
	/* Remove the recording. */
	void (*discard)(void *ctx);
};

/* The real recorder: ctx is a struct agent_child * (agent/child.h). */
extern const struct agent_server_ops agent_recorder_ops;

struct agent_server_cfg {
	const struct ap_key *key;        /* NULL: no authentication; borrowed */
	int idle_ms;                     /* 0: no idle timeout */
	bool device;                     /* fd is a character device: nobody may be there yet,
					  * frames are resynchronised, EOF means "wait" */
	int lfd;                         /* listening socket whose newcomers are refused, or -1 */
	volatile sig_atomic_t *quit;     /* non-zero: stop serving (a signal); may be NULL */
	struct agent_log log;
	const struct agent_server_ops *ops;
	void *ctx;                       /* for ops */
};

/*
 * Serve requests on fd until the controller leaves, breaks the protocol,
 * idles, or *quit is set. A recording still running then is stopped and
 * discarded: nothing of a session outlives it. Does not close fd.
 */
void agent_serve(const struct agent_server_cfg *cfg, int fd);

#endif
