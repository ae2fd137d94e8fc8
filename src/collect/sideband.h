/* SPDX-License-Identifier: MIT */
/*
 * Host side band that the perf rings do not carry by themselves:
 *  - a snapshot of processes that already run when recording starts (for
 *    -a and -p): one TASK COMM per thread and one MMAP per executable
 *    mapping in /proc/PID/maps;
 *  - build-ids of mapped files, read from the ELF once per path and
 *    cached, for mappings the kernel gave without one;
 *  - the host kernel: /proc/kallsyms and /proc/modules embedded as SYMTAB
 *    records (the writer compresses them), plus MMAP records (pid -1) for
 *    [kernel.kallsyms] and each module, so a report made on another
 *    machine still names kernel functions.
 * Everything is written to the host domain (DP_HOST_DOMAIN). Functions
 * return 0 or the writer's negative errno; nothing here prints.
 */
#ifndef DOMPROF_COLLECT_SIDEBAND_H
#define DOMPROF_COLLECT_SIDEBAND_H

#include <stdint.h>
#include <sys/types.h>

#include "format/format.h"

struct sideband;

struct sideband *sideband_new(void);
void sideband_free(struct sideband *sb);

/* Fill m->buildid from the mapped file when m->buildid_len is 0 and the
 * path names a file (not "[vdso]", "//anon", "... (deleted)"). */
void sideband_fill_buildid(struct sideband *sb, struct dp_mmap *m);

/* Fill m's identity (has_ident, dev, ino, size, mtime_ns) from the mapped
 * file itself, /proc/PID/map_files/START-END, while the process still
 * has the mapping (needs root; otherwise has_ident stays false). The
 * agent ships a file only if it still has this identity. */
void sideband_fill_ident(struct dp_mmap *m);

/* Snapshot one process (pid > 0) or every process (pid == -1). time is
 * the CLOCK_MONOTONIC time stamped on the records. *nproc (if not NULL)
 * is increased by the number of processes written. */
int sideband_snapshot(struct sideband *sb, struct dp_writer *w, pid_t pid,
		      uint64_t time, unsigned *nproc);

/* Snapshot root (> 0) and every process descending from it now (by
 * the parent pids in /proc/PID/stat; at most SIDEBAND_TREE_MAX processes
 * of /proc are looked at), as sideband_snapshot does for one. For a new
 * file of `record --switch-output` of a command: its processes' names
 * and mappings, which the earlier file received as they happened. */
#define SIDEBAND_TREE_MAX (1u << 22)
int sideband_snapshot_tree(struct sideband *sb, struct dp_writer *w, pid_t root,
			   uint64_t time, unsigned *nproc);

/* SYMTAB kallsyms + modules and the kernel MMAP records. A missing or
 * unreadable /proc file is skipped (modules do not exist on kernels
 * built without module support), and so is a kallsyms whose addresses
 * all read 0 (no right to see them). *bytes gets the raw bytes embedded. */
int sideband_write_kernel(struct sideband *sb, struct dp_writer *w, uint64_t time,
			  size_t *bytes);

/* kallsyms text [ks, ks+len) as a kernel symbol index (SYMTAB kind
 * DP_SYMTAB_KSYMIDX, format/ksymidx.h): every line with an address, type
 * and name, sorted by address (equal addresses in the text's order),
 * module names numbered in the order they first appear. Returns a
 * malloc'd payload of *outlen bytes, or NULL. */
uint8_t *sideband_kallsyms_index(const char *ks, size_t len, size_t *outlen);

/* Number of files whose build-id was read (for tests and -v). */
unsigned sideband_buildid_reads(const struct sideband *sb);

#endif
