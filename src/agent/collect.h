/* SPDX-License-Identifier: MIT */
/*
 * COLLECT: read the guest's finished recording and send it to the
 * controller. The guest's records (tasks, maps, samples, its kallsyms)
 * go as raw records in AP_RECORD batches of at most AGENT_BATCH bytes,
 * LOST records are summed into one AP_LOST, then the ELF files that
 * samples hit and that pass agent/ship.h's identity checks go as SYMTAB
 * blobs named by build-id (the vDSO by "[vdso]"), and AP_END closes the
 * collection with the counts. DOMAIN, EVENT and STATS records are not
 * sent: the host writes its own.
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
