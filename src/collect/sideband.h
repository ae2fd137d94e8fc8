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

/*
 * JIT perf maps, embedded so that a report never reads /tmp.
 * sideband_note_mmap notes the pid of every host mapping of anonymous
 * memory (JIT code) with the uid the process has then (the owner its
 * /tmp/perf-PID.map may have), and writes its map at once when there is
 * one (before the samples that follow the mapping); at most
 * SIDEBAND_JIT_MAX pids (a report reads the maps of later ones from
 * /tmp, checked). Every map is read
 * with sym_perfmap_read's checks (owned by root, the recorder's user or
 * that process's, not writable by others, no link followed) and written
 * as a SYMTAB DP_SYMTAB_PERFMAP named /tmp/perf-PID.map, twice:
 *  - at the mapping, or by sideband_poll_perfmaps (every 0.1 s) as
 *    soon as it exists: so that the file holds one before most of the
 *    samples it names (a report decides at a sample whether the pid
 *    has a map; the last map of the pid names them);
 *  - sideband_write_perfmaps, at the end: every noted pid's map as it is
 *    then (a JIT appends to it). A map refused by the checks is counted
 *    in *refused and the first refusal's reason put in why (why[0] stays
 *    0 when none was refused); *embedded counts the maps written.
 * sideband_perfmaps_new_file: a new file (--switch-output) gets its own
 * first copies. At most SIDEBAND_PERFMAP_BYTES of maps per file. Both
 * return 0 or the writer's negative errno.
 */
#define SIDEBAND_JIT_MAX 65536u
#define SIDEBAND_PERFMAP_BYTES (256ull << 20)
int sideband_note_mmap(struct sideband *sb, struct dp_writer *w, const struct dp_mmap *m);
int sideband_poll_perfmaps(struct sideband *sb, struct dp_writer *w);
int sideband_write_perfmaps(struct sideband *sb, struct dp_writer *w, unsigned *embedded,
			    unsigned *refused, char *why, size_t whylen);
void sideband_perfmaps_new_file(struct sideband *sb);

/* Number of files whose build-id was read (for tests and -v). */
unsigned sideband_buildid_reads(const struct sideband *sb);

#endif
