// SPDX-License-Identifier: MIT
/*
 * netbench — the seed experiment's guest workload (tests/vm/): a TCP
 * stream over the guest's loopback, like the network benchmark of the
 * Xenoprof thread. A child process accepts on 127.0.0.1 and reads; the
 * parent connects and writes 64 KiB buffers, for SECONDS (default 10,
 * 0 = forever). Its kernel profile is dominated by the copy routines
 * (copy_user_generic_* on the write and read sides) and the TCP and
 * scheduler paths between them. Statically linked: the initramfs has no
 * C library.
 *
 * usage: netbench [-t SECONDS] [-p PORT]
 * Prints "netbench: ready" once streaming and "netbench: N MB in S s
 * (R MB/s)" at the end.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = 10;
	int port = 5001, c;
	while ((c = getopt(argc, argv, "t:p:")) != -1) {
		if (c == 't')
			secs = atof(optarg);
		else if (c == 'p')
			port = atoi(optarg);
		else {
			fprintf(stderr, "usage: netbench [-t SECONDS] [-p PORT]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0) {
		perror("netbench: listen");
		return 1;
	}
	static char buf[65536];
	pid_t reader = fork();
	if (reader == 0) {
		int s = accept(ls, NULL, NULL);
		if (s < 0)
			_exit(1);
		while (read(s, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(ls);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("netbench: connect");
		kill(reader, SIGKILL);
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	printf("netbench: ready\n");
	fflush(stdout);
	double t0 = now(), t = t0;
	unsigned long long bytes = 0;
	while (secs <= 0 || (t = now()) - t0 < secs) {
		ssize_t w = write(s, buf, sizeof(buf));
		if (w <= 0)
			break;
		bytes += (unsigned long long)w;
	}
	close(s);
	waitpid(reader, NULL, 0);
	double dt = t - t0 > 0 ? t - t0 : 1e-9;
	printf("netbench: %llu MB in %.1f s (%.1f MB/s)\n", bytes >> 20, dt, (double)bytes / 1048576.0 / dt);
	return 0;
}
