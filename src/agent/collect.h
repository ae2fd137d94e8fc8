/* SPDX-License-Identifier: MIT */
/*
 * COLLECT: read the guest's finished recording and send it to the
 * controller, in two passes over the file. First the ELF files that
 * samples hit (their ips, the user addresses of their call chains, the
 * words of their stored user stacks: agent/ship.h) and that pass
 * ship.h's identity checks go as SYMTAB blobs named by build-id (the
 * vDSO by "[vdso]"); then the guest's records (tasks, maps, samples with
 * their user registers and stacks, its kallsyms) as raw records in
 * AP_RECORD batches of at most AGENT_BATCH bytes; LOST records summed
 * into one AP_LOST; and AP_END closes the collection with the counts.
 * The binaries come first so that the host's file holds each before the
 * samples whose stacks are unwound against it. DOMAIN, EVENT and STATS
 * records are not sent: the host writes its own.
 *
 * Nothing here prints: progress and refusals go to `log`.
 */
#ifndef DOMPROF_AGENT_COLLECT_H
#define DOMPROF_AGENT_COLLECT_H

#include <stddef.h>

#include "agent/log.h"

#define AGENT_BATCH (256u << 10)     /* raw records per RECORD frame */

/* agent_collect's results beside 0 */
#define AGENT_COLLECT_FAILED (-1)    /* nothing sent; answer ERROR with why */
#define AGENT_COLLECT_GONE   (-2)    /* sending failed: the connection is gone */

/* Collect the recording at `data` onto fd. Returns 0 (END sent),
 * AGENT_COLLECT_FAILED or AGENT_COLLECT_GONE, with a reason in why. */
int agent_collect(const char *data, int fd, const struct agent_log *log, char *why, size_t whylen);

#endif
