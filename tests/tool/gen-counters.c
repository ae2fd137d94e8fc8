// SPDX-License-Identifier: MIT
/*
 * test-tool gen-counters OUT RECORD...: a small recording with COUNTERS
 * records (format 1.3) for the counters tests (tests/e2e/counters.sh),
 * written with the real format writer. The file holds the host and a
 * passive domain 1 named "vm1" (DOMAIN records, three samples each), then
 * one COUNTERS record per RECORD argument, in order:
 *
 *     DOMAIN:NAME=VALUE[,NAME=VALUE...]     e.g. 1:unwind.chains=10,unwind.stop.end=6
 *
 * DOMAIN is any u32 (ids other than 0 and 1 get no DOMAIN record), VALUE
 * a decimal u64. A name the writer refuses fails the command (exit 1,
 * the writer's reason), so a test can also show the refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "../unit/fixture.h"
#include "test-tool.h"

/* Parse "DOMAIN:NAME=VALUE,..." in place into dom and c[] (names point
 * into spec). Returns the count, or -1 on a malformed spec. */
static int parse(char *spec, uint32_t *dom, struct dp_counter *c, uint32_t cap)
{
	char *colon = strchr(spec, ':'), *end;
	if (!colon)
		return -1;
	*colon = 0;
	errno = 0;
	unsigned long d = strtoul(spec, &end, 10);
	if (errno || *end || end == spec || d > UINT32_MAX)
		return -1;
	*dom = (uint32_t)d;
	uint32_t n = 0;
	for (char *tok = strtok(colon + 1, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strrchr(tok, '=');
		if (!eq || n == cap)
			return -1;
		*eq = 0;
		errno = 0;
		unsigned long long v = strtoull(eq + 1, &end, 10);
		if (errno || *end || end == eq + 1)
			return -1;
		c[n++] = (struct dp_counter){ tok, v };
	}
	return (int)n;
}

int cmd_gen_counters(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-tool gen-counters OUT DOMAIN:NAME=VALUE[,...]...\n");
		return 2;
	}
	int err = 0;
	struct dp_writer *w = fixture_writer(argv[1], argc, argv, NULL, &err);
	if (!w) {
		fprintf(stderr, "test-tool gen-counters: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	struct dp_event ev = { .id = 0, .type = 1, .period = 1000, .freq = true, .name = "cpu-clock" };
	struct dp_domain host = { .id = 0, .kind = DP_DOMAIN_HOST, .name = "host", .address = "", .symsrc = "" };
	struct dp_domain vm1 = { .id = 1, .kind = DP_DOMAIN_PASSIVE, .vcpus = 1, .name = "vm1",
				 .address = "gdb:unix:/nowhere", .symsrc = "" };
	int r = dp_write_event(w, &ev);
	if (!r)
		r = dp_write_domain(w, &host);
	if (!r)
		r = dp_write_domain(w, &vm1);
	for (int i = 0; i < 6 && !r; i++)
		r = fixture_sample(w, i % 2, 10, i % 2 ? DP_MODE_GUEST_KERNEL : DP_MODE_USER,
				   0x1000 + (uint64_t)i, NULL, 0);
	for (int i = 2; i < argc && !r; i++) {
		static struct dp_counter c[DP_MAX_COUNTERS + 1];
		char *spec = strdup(argv[i]);
		uint32_t dom;
		int n = spec ? parse(spec, &dom, c, DP_MAX_COUNTERS + 1) : -1;
		if (n < 0) {
			fprintf(stderr, "test-tool gen-counters: bad record '%s' (DOMAIN:NAME=VALUE,...)\n",
				argv[i]);
			free(spec);
			dp_writer_free(w);
			return 2;
		}
		r = dp_write_counters(w, dom, &(struct dp_counters){ (uint32_t)n, c });
		if (r == -EINVAL)
			fprintf(stderr, "test-tool gen-counters: '%s': refused by the writer\n", argv[i]);
		free(spec);
	}
	struct dp_stats st = { .samples = 6 };
	if (!r)
		r = dp_write_stats(w, &st);
	if (r) {
		if (r != -EINVAL)
			fprintf(stderr, "test-tool gen-counters: %s: %s\n", argv[1], strerror(-r));
		dp_writer_free(w);
		return 1;
	}
	r = dp_writer_finish(w);
	if (r) {
		fprintf(stderr, "test-tool gen-counters: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	return 0;
}
