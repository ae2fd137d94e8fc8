// SPDX-License-Identifier: MIT
/* Unit tests of collect/target.c: CPU lists (good, bad, over the bound),
 * the online CPUs, and a command started stopped before exec (runs on the
 * go byte; a missing program reports its errno; a recorder that gives up
 * makes the child exit 127 without running anything). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/target.h"
#include "unit.h"

static void test_cpulist(void)
{
	int c[8];
	CHECK(target_parse_cpulist("0,2-3", c, 8) == 3 && c[0] == 0 && c[1] == 2 && c[2] == 3);
	CHECK(target_parse_cpulist("1\n", c, 8) == 1 && c[0] == 1);
	CHECK(target_parse_cpulist("3-1", c, 8) == -1);
	CHECK(target_parse_cpulist("a", c, 8) == -1);
	CHECK(target_parse_cpulist("0-", c, 8) == -1);
	CHECK(target_parse_cpulist("1;2", c, 8) == -1);
	CHECK(target_parse_cpulist("0-100000000", c, 8) == -1);  /* bounded by max */
	CHECK(target_online_cpus(c, 8) >= 1);
	CHECK(target_read_sysctl("/nonexistent", 42) == 42);
}

static int run(char *const argv[], bool go, int *exec_errno)
{
	pid_t pid;
	int g, e, st = -1;
	CHECK(target_spawn(argv, &pid, &g, &e) == 0);
	if (go)
		CHECK(write(g, "g", 1) == 1);
	close(g);
	*exec_errno = 0;
	if (read(e, exec_errno, sizeof(*exec_errno)) != sizeof(*exec_errno))
		*exec_errno = 0;
	close(e);
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	test_cpulist();
	int xe;
	char *ok[] = { "sh", "-c", "exit 3", NULL };
	CHECK(run(ok, true, &xe) == 3 && xe == 0);
	char *missing[] = { "/nonexistent/prog", NULL };
	CHECK(run(missing, true, &xe) == 127 && xe == ENOENT);
	char *never[] = { "sh", "-c", "exit 3", NULL };
	CHECK(run(never, false, &xe) == 127 && xe == 0);   /* no go byte: nothing ran */
	return unit_done();
}
