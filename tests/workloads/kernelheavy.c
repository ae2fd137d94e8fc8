// SPDX-License-Identifier: MIT
/*
 * A workload that spends most of its time in the kernel: it reads
 * /dev/zero into a 1 MiB buffer in a loop (the kernel's clear_user /
 * read_zero path does the work) for a given time.
 *
 * usage: kernelheavy [SECONDS]   (default 2)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("kernelheavy: /dev/zero");
		return 1;
	}
	double end = now() + secs;
	unsigned long total = 0;
	while (now() < end) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		total += (unsigned long)n;
	}
	close(fd);
	printf("kernelheavy: pid %d read %lu MiB\n", (int)getpid(), total >> 20);
	return 0;
}
