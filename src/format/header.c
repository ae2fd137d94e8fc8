// SPDX-License-Identifier: MIT
/* Filling a file header with facts about the recording machine. */
#include "format/format.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

void dp_header_fill_local(struct dp_header *h, int argc, char **argv)
{
	static char host[256], rel[256], cpu[256], cmd[4096];
	struct utsname u;
	memset(h, 0, sizeof(*h));
	h->major = DP_VERSION_MAJOR;
	h->minor = DP_VERSION_MINOR;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->created_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	h->ncpus = n > 0 ? (uint32_t)n : 0;
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = 0;
	if (uname(&u) == 0)
		snprintf(rel, sizeof(rel), "%s", u.release);
	cpu[0] = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');
			if (c && !strncmp(line, "model name", 10)) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				c[strcspn(c, "\n")] = 0;
				snprintf(cpu, sizeof(cpu), "%s", c);
				break;
			}
		}
		fclose(f);
	}
	cmd[0] = 0;
	size_t off = 0;
	for (int i = 0; i < argc && off < sizeof(cmd) - 1; i++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%s%s", i ? " " : "", argv[i]);
	h->hostname = host;
	h->release = rel;
	h->cpu_desc = cpu;
	h->cmdline = cmd;
}
