// SPDX-License-Identifier: MIT
/*
 * A tiny JIT: copies a counting loop (x86-64 machine code) into
 * anonymous executable memory, writes its perf map (/tmp/perf-PID.map,
 * "START SIZE jit_hot_loop", as JIT runtimes do) and calls the loop for
 * SECONDS, so nearly every sample of the process lies in that memory and
 * is named only by the map.
 *
 * usage: jitwork SECONDS [PIDFILE [NAME]]
 * PIDFILE gets the pid once the code is mapped; NAME, when given, is set
 * as the process name (prctl PR_SET_NAME: any bytes, control bytes too).
 * With JITWORK_WAIT=FILE in the environment, the map is written only
 * once FILE exists (at most 20 s), into the map file as it then is
 * (opened "w": a file planted there keeps its owner), so that a test can
 * plant it first. Exits 77 on other architectures.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	if (argc > 3)
		prctl(PR_SET_NAME, argv[3], 0, 0, 0);
	/* mov ecx, 100000; 1: dec ecx; jnz 1b; ret */
	static const uint8_t code[] = { 0xb9, 0xa0, 0x86, 0x01, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	if (argc > 2) {
		FILE *p = fopen(argv[2], "w");
		if (!p) {
			perror(argv[2]);
			return 1;
		}
		fprintf(p, "%d\n", (int)getpid());
		fclose(p);
	}
	const char *wait = getenv("JITWORK_WAIT");
	for (int i = 0; wait && i < 2000 && access(wait, F_OK) != 0; i++)
		usleep(10000);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fclose(f);
	void (*loop)(void) = (void (*)(void))(uintptr_t)mem;
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 100; i++)
			loop();
	printf("jitwork: pid %d done\n", (int)getpid());
	return 0;
#else
	(void)argc;
	(void)argv;
	(void)now;
	fprintf(stderr, "jitwork: x86-64 only\n");
	return 77;
#endif
}
