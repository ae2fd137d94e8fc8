// SPDX-License-Identifier: MIT
/*
 * gw — guest workload for the VM tests and bench/passive-overhead.
 * Statically linked (the initramfs has no libc) and started by the
 * guest's /init. Each mode keeps the guest busy in a place whose profile
 * is known, so a test can assert which guest kernel functions come on top:
 *
 *   gw urandom   read(/dev/urandom, 4 KiB) in a loop: the guest kernel's
 *                ChaCha20 RNG (chacha_permute, chacha_block_generic, ...),
 *                clearly apart from dd's clear_user path.
 *   gw zero      read(/dev/zero, 4 KiB) in a loop: like dd, without the
 *                write half.
 *   gw spin      a pure user-space loop: samples land in guest user mode.
 *
 * With -r, gw prints "gw count PID N" ten times per second of guest time,
 * N = loop iterations since it started. The host measures throughput in
 * its own wall-clock time from two such lines (bench/passive-overhead):
 * the guest's clock stands still while a debugger holds the VM stopped,
 * so a rate measured inside the guest would hide the sampling cost.
 * -t SECONDS stops gw after that much guest time, -n ROUNDS after that
 * many loop iterations (a known amount of work: the VM tests run two
 * names of gw with counts in a known ratio); -c prints "gw rounds N" as
 * it stops (with -t: the rate of this guest, to size -n).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keeps the spin loop's work observable so the compiler cannot drop it. */
static volatile unsigned long sink;

static int one_round(int fd, char *buf)
{
	if (fd >= 0)
		return read(fd, buf, 4096) == 4096 ? 0 : -1;
	unsigned long x = sink;
	for (int i = 0; i < 10000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	return 0;
}

int main(int argc, char **argv)
{
	int report = 0, count = 0, opt;
	double limit = 0;
	unsigned long rounds = 0;
	while ((opt = getopt(argc, argv, "rt:n:c")) != -1) {
		if (opt == 'r')
			report = 1;
		else if (opt == 't')
			limit = atof(optarg);
		else if (opt == 'n')
			rounds = strtoul(optarg, NULL, 10);
		else if (opt == 'c')
			count = 1;
		else
			goto usage;
	}
	if (optind != argc - 1)
		goto usage;
	const char *mode = argv[optind];
	int fd = -1;
	if (!strcmp(mode, "urandom"))
		fd = open("/dev/urandom", O_RDONLY);
	else if (!strcmp(mode, "zero"))
		fd = open("/dev/zero", O_RDONLY);
	else if (strcmp(mode, "spin"))
		goto usage;
	if (strcmp(mode, "spin") && fd < 0) {
		perror("gw: open");
		return 1;
	}
	static char buf[4096];
	double start = now(), mark = start;
	unsigned long n = 0;
	/* Check the clock every 64 reads (keeps vDSO clock reads out of the
	 * profile) but every round of the slower spin loop. */
	unsigned long mask = fd >= 0 ? 63 : 0;
	int pid = getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		if (one_round(fd, buf) < 0) {
			perror("gw: read");
			return 1;
		}
		n++;
		if (rounds && n >= rounds)
			break;
		if ((n & mask) == 0) {
			double t = now();
			if (report && t - mark >= 0.1) {
				printf("gw count %d %lu\n", pid, n);
				mark = t;
			}
			if (limit > 0 && t - start >= limit)
				break;
		}
	}
	if (count)
		printf("gw rounds %lu\n", n);
	return 0;
usage:
	fprintf(stderr, "usage: gw [-rc] [-t SECONDS] [-n ROUNDS] urandom|zero|spin\n");
	return 2;
}
