// SPDX-License-Identifier: MIT
/*
 * bench/format: write then read a synthetic file of N samples (default
 * 10 million), with and without chunk compression, and print records per
 * second for each side. Targets (issue 2, issue 18 on an AMD EPYC):
 * read+decode >= 50 M records/s raw and >= 30 M/s zstd on one core,
 * write >= 20 M/s. "read rec/s" is wall time, as the targets are stated;
 * "read cpu" is the same read over the process's CPU time, which other
 * programs on the machine disturb less (the CPUs here are shared: pin
 * with taskset -c and take the best of several runs). "read -j2" is
 * the read with dp_reader_set_threads(2) (wall time; needs 2 free CPUs).
 *
 * Where the zstd read goes (issue 18, measured 2026-12-02 on the shared
 * 2-CPU machine, load 5-15, pinned, CPU time): the reader already
 * decompresses each chunk with one reused ZSTD_DCtx (ZSTD_decompressDCtx)
 * into one reused buffer sized to the chunk, and walks the records there
 * (no second copy); the writer writes no zstd frame checksum (the chunk
 * CRC-32C covers the stored, compressed bytes and the header has its own),
 * so ZSTD_d_forceIgnoreChecksum has nothing to skip. Of ~31 ns a record
 * (30-33 M/s "read cpu"), Debian's libzstd 1.5.4 alone takes ~22 ns
 * (decompressing this stream, level 1, 1 MiB chunks: 44-46 M rec/s, 2.0
 * GB/s out) and the record walk the rest. Writer options measured with
 * the same records (decompress only, M rec/s; compressed bytes a record):
 * level 1: 44.6, 3.45 B; level 3: ~same; level -1: 51.0, 3.73 B; literals
 * left uncompressed (ZSTD_c_literalCompressionMode): 53.1, 3.73 B; 4 MiB
 * chunks: 46.9, 3.02 B; 256 KiB chunks: 37.4, 5.24 B (a smaller window
 * finds fewer long matches: slower and larger). On a real -a -g
 * recording (level 3, ~90 raw bytes a sample) uncompressed literals gave
 * only +4% speed for +3% size, so the writer is unchanged. The raw read
 * (45-59 M/s, ~2.7 GB/s of records) stands at about half of one core's
 * measured read bandwidth here (5.9 GB/s, a 1 GB array summed): a 50-byte
 * record at that rate would be ~118 M/s, at 10 GB/s 200 M/s; the zstd
 * read is bound by zstd's sequence decoding, not by memory.
 *
 * Again on 2026-12-03 (idle, pinned, format 1.6): read raw 42.1-48.3 M/s,
 * zstd-1 15.5-24.0 M/s; zstd -b on this benchmark's raw records (1 MiB
 * blocks, 44 bytes a record): level 1 1218 MB/s = 27.7 M rec/s, level -1
 * 1272 MB/s = 28.9 M, --fast=4 2008 MB/s but 3.4x instead of 12.9x.
 * zstd alone stays under 30 M records/s at any level that compresses.
 * A chunk's counts part (format 1.6) spares counting reads most of
 * this, but this benchmark reads every record, and its scattered
 * samples get no parts; the writer's attempt at one is skipped after
 * chunks without (zstd write 6.0 M/s when every chunk tried, 8.5-9.8
 * M/s as written, 8.8-9.1 M/s with DOMPROF_CHUNK_COUNTS=0).
 *
 * A columnar chunk layout, measured 2026-12-03 (prototype outside the
 * tree, these records, 1 MiB blocks, level 1, pinned, CPU time): the
 * sample fixed parts moved into one column per field (time as deltas)
 * after the other bytes compress 2.0x smaller and libzstd decompresses
 * them in 25 ns a record instead of 34-54; rebuilding the rows (which
 * every in-place decoder of the reader needs) and walking them brings
 * it to 32 ns (31 M/s) against 41-45 ns for today's rows, 1.3x, before
 * the reader's own ~10 ns of CRC and record decoding: ~24 M/s, still
 * under 30. At level -1 the columns gain nothing (35-40 ns vs 31-37).
 * So the one-core zstd target is not reached by a layout either; the
 * format is unchanged.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }

/* Read every record of path on `threads` threads: wall and CPU seconds.
 * Returns the samples read, or -1. */
static long read_file(const char *path, unsigned threads, double *wall, double *cpu)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	dp_reader_set_threads(r, threads);
	double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	struct dp_record rec;
	long got = 0;
	uint64_t sum = 0;
	while (dp_reader_next(r, &rec) > 0)
		if (rec.type == DP_REC_SAMPLE) {
			got++;
			sum += rec.u.sample.ip + rec.domain;
		}
	*wall = now() - t0;
	*cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	dp_reader_free(r);
	return sum == 42 ? got + 1 : got;  /* the sum keeps the loop from being dropped */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	/* tmpfs by default: the encoder is measured, not the disk (dirty-page
	 * throttling made /tmp runs vary from 5 to 20 M/s). */
	const char *path = argc > 2 ? argv[2] : "/dev/shm/domprof-bench-format.data";
	printf("%-10s %12s %12s %10s %14s %14s %14s %14s %9s\n", "chunks", "samples", "bytes",
	       "B/sample", "write rec/s", "read rec/s", "read cpu", "read -j2", "fsync s");
	for (int z = 0; z <= 1; z++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		struct dp_header h;
		dp_header_fill_local(&h, argc, argv);
		struct dp_writer_opts o = { .zstd_level = z };
		int err;
		struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
		struct dp_sample s = { .period = 1000000, .event = 0, .mode = DP_MODE_USER };
		double t0 = now();
		for (long i = 0; i < n; i++) {
			/* A realistic mix: a few pids, ips clustered in hot functions. */
			s.time = 1000000000ull + (uint64_t)i * 100000;
			s.cpu = (uint32_t)(i & 1);
			s.pid = s.tid = 1000 + (uint32_t)(i % 7);
			s.ip = 0x555555554000ull + (uint64_t)((i * 2654435761u) % 4096);
			if (dp_write_sample(w, (i % 16) == 15 ? 1 : 0, &s) < 0)
				return 1;
		}
		uint64_t bytes = dp_writer_bytes(w);
		double tw = now() - t0; /* encode + write(2); the final fsync is reported apart */
		double t1 = now();
		if (dp_writer_finish(w) < 0)
			return 1;
		double tsync = now() - t1;
		double tr, cr, tr2, cr2;
		long got = read_file(path, 1, &tr, &cr);
		long got2 = read_file(path, 2, &tr2, &cr2);
		if (got != n || got2 != n) {
			fprintf(stderr, "read %ld (%ld on 2 threads) of %ld samples\n", got, got2, n);
			return 1;
		}
		printf("%-10s %12ld %12llu %10.1f %14.0f %14.0f %14.0f %14.0f %9.2f\n", z ? "zstd-1" : "raw",
		       n, (unsigned long long)bytes, (double)bytes / (double)n, (double)n / tw,
		       (double)n / tr, (double)n / cr, (double)n / tr2, tsync);
	}
	unlink(path);
	printf("targets: write >= 20000000 rec/s, read >= 50000000 rec/s raw, >= 30000000 zstd (one core)\n");
	return 0;
}
