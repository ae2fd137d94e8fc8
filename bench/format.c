// SPDX-License-Identifier: MIT
/*
 * bench/format: write then read a synthetic file of N samples (default
 * 10 million), with and without chunk compression, and print records per
 * second for each side, then the targets: read+decode >= 50 M records/s
 * raw and >= 30 M/s zstd on one core, write >= 20 M/s. "read rec/s" is
 * wall time, as the targets are stated; "read cpu" is the same read over
 * the process's CPU time, which other programs on the machine disturb
 * less (pin with taskset -c and take the best of several runs). "read
 * -j2" is the read with dp_reader_set_threads(2) (wall time; needs 2 free
 * CPUs). Past numbers: docs/benchmarks.md.
 *
 * usage: bench/format [SAMPLES [PATH]]   (PATH default on /dev/shm)
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
	/* tmpfs by default: the encoder is measured, not the disk's
	 * dirty-page throttling. */
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
