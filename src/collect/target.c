// SPDX-License-Identifier: MIT
/* What a host recording targets: CPUs, sysctls, the command (see target.h). */
#include "collect/target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long target_read_sysctl(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

int target_parse_cpulist(const char *s, int *out, int max)
{
	int n = 0;
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -1;
			out[n++] = (int)c;
		}
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return n;
}

int target_online_cpus(int *out, int max)
{
	char buf[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	int n = buf[0] ? target_parse_cpulist(buf, out, max) : -1;
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		for (n = 0; n < c && n < max; n++)
			out[n] = n;
	}
	return n;
}

int target_spawn(char *const argv[], pid_t *pid, int *go_fd, int *err_fd)
{
	int go[2], er[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(er, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	fflush(NULL);
	pid_t p = fork();
	if (p < 0) {
		int e = errno;
		close(go[0]), close(go[1]), close(er[0]), close(er[1]);
		return -e;
	}
	if (p == 0) {
		char c;
		close(go[1]);
		close(er[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up before starting us */
		execvp(argv[0], argv);
		int e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	*pid = p;
	*go_fd = go[1];
	*err_fd = er[0];
	return 0;
}
