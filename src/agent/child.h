/* SPDX-License-Identifier: MIT */
/*
 * The agent's recorder child: this very binary run as
 * `record -a -F HZ [-g | --call-graph dwarf,SIZE] -f -o PRIV/agent.data`, its output in
 * PRIV/agent-record.log (PRIV: the private directory, agent/workdir.h).
 * The child gets PR_SET_PDEATHSIG(SIGINT), so an agent that dies does not
 * leave a recorder running; it is stopped as Ctrl-C would (SIGINT), so it
 * finishes its file. Every wait is bounded: a child that does not end in
 * time is killed.
 *
 * The struct is owned by the caller; it holds the child's pid while one
 * runs and borrows the workdir. Nothing here prints.
 */
#ifndef DOMPROF_AGENT_CHILD_H
#define DOMPROF_AGENT_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/workdir.h"

struct agent_child {
	const struct workdir *wd;  /* borrowed */
	char data[4200];           /* PRIV/agent.data */
	char log[4200];            /* PRIV/agent-record.log */
	pid_t pid;                 /* the running recorder, or 0 */
};

/* Fill c's paths from the workdir; no child runs. */
void agent_child_init(struct agent_child *c, const struct workdir *wd);

/*
 * Start the recorder and wait (up to 60 s: a TCG guest is slow) until it
 * samples: it writes one byte on DOMPROF_READY_FD once its events are
 * enabled. stack_size (a multiple of 8 in 8..DP_MAX_USTACK, checked by
 * ap_start_decode; 0: none) records user stacks as `--call-graph
 * dwarf,SIZE` does, with call chains. Returns 0, or -1 with a one-line
 * reason in why (the child's last log line when it failed; no child is
 * left running).
 */
int agent_child_start(struct agent_child *c, unsigned hz, bool callchain, uint32_t stack_size,
		      char *why, size_t whylen);

/*
 * Stop the recorder (SIGINT, then SIGKILL after 120 s) and reap it. msg
 * gets its last log line (its summary) or why it ended abnormally.
 * Returns 0 when there is a recording to collect, -1 when there is none.
 */
int agent_child_stop(struct agent_child *c, char *msg, size_t msglen);

/* True while a recorder runs (started and not reaped). */
bool agent_child_running(const struct agent_child *c);

/* Reap a recorder that ended by itself: 1 and its wait status when it
 * did (c->pid is then 0), 0 while it runs or when there is none. */
int agent_child_ended(struct agent_child *c, int *status);

/* Remove the recording. */
void agent_child_discard(struct agent_child *c);

#endif
