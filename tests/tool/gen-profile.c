// SPDX-License-Identifier: MIT
/*
 * Synthetic recordings for the flame graph and export tests, written with
 * the real format writer (format/format.h): a host and a passive guest
 * "vm1", each with an embedded kallsyms of NSYM made-up functions
 * (host: hsym_N, guest: gsym_N), and N samples with call chains drawn by
 * a skewed random walk (a few hot paths, a long tail of distinct stacks),
 * so the profile has realistic depth and many unique stacks. A tenth of
 * the guest samples are guest user mode (no symbols: kept per cr3).
 * The walk is seeded, so the file is the same on every run.
 *
 * usage: test-tool gen-profile OUT SAMPLES   (SAMPLES 0 = a valid empty recording)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "../unit/fixture.h"
#include "test-tool.h"

#define NSYM 4000
#define KBASE 0xffffffff81000000ull
#define SYM_SIZE 0x100ull

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* 0 with probability 1/2, 1 with 1/4, ...: hot paths dominate */
static uint32_t skew(uint32_t max)
{
	uint32_t k = 0;
	while (k + 1 < max && (rnd() & 1))
		k++;
	return k;
}

static char *kallsyms(const char *prefix, size_t *len)
{
	size_t cap = NSYM * 48, n = 0;
	char *b = malloc(cap);
	for (unsigned i = 0; i < NSYM; i++)
		n += (size_t)snprintf(b + n, cap - n, "%016llx T %s_%u\n",
				      (unsigned long long)(KBASE + i * SYM_SIZE), prefix, i);
	*len = n;
	return b;
}

int cmd_gen_profile(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-tool gen-profile OUT SAMPLES\n");
		return 2;
	}
	long nsamples = atol(argv[2]);
	struct dp_writer_opts o = { .chunk_bytes = 1 << 20, .zstd_level = 1 };
	int err = 0;
	struct dp_writer *w = fixture_writer(argv[1], argc, argv, &o, &err);
	if (!w) {
		errno = -err;
		perror(argv[1]);
		return 1;
	}
	struct dp_event ev = { .id = 0, .type = 1, .config = 0, .name = "cpu-clock", .period = 1000, .freq = true };
	dp_write_event(w, &ev);
	struct dp_domain host = { .id = 0, .kind = DP_DOMAIN_HOST, .vcpus = 2, .name = "host", .address = "", .symsrc = "embedded" };
	struct dp_domain vm = { .id = 1, .kind = DP_DOMAIN_PASSIVE, .vcpus = 1, .name = "vm1",
				.address = "gdb:unix:/synthetic", .symsrc = "kallsyms=synthetic" };
	dp_write_domain(w, &host);
	dp_write_domain(w, &vm);
	size_t len;
	char *ks = kallsyms("hsym", &len);
	struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms", .data = (const uint8_t *)ks, .size = len };
	dp_write_symtab(w, 0, &st);
	free(ks);
	ks = kallsyms("gsym", &len);
	st.data = (const uint8_t *)ks;
	st.size = len;
	dp_write_symtab(w, 1, &st);
	free(ks);
	static const char *const comms[] = { "synth-a", "synth-b", "synth-c", "synth-d" };
	for (uint32_t i = 0; i < 4; i++) {
		struct dp_task t = { .kind = DP_TASK_COMM, .pid = 100 + i, .tid = 100 + i, .comm = comms[i] };
		dp_write_task(w, 0, &t);
	}

	uint64_t chain[32];
	for (long s = 0; s < nsamples; s++) {
		uint32_t domain = (rnd() % 10) < 7 ? 0 : 1;
		struct dp_sample smp = { .time = (uint64_t)s * 1000000, .period = 1000000, .cpu = (uint32_t)s & 1 };
		smp.mode = DP_MODE_KERNEL;
		if (domain == 0) {
			smp.pid = smp.tid = 100 + skew(4);
		} else if (rnd() % 10 == 0) {
			/* guest user: an address space, no symbols */
			smp.mode = DP_MODE_USER;
			smp.has_asid = true;
			smp.asid = 0x1000ull * (1 + skew(3));
			smp.ip = 0x400000 + (rnd() % 4096);
			dp_write_sample(w, domain, &smp);
			continue;
		}
		/* random walk root -> leaf, leaf first on disk */
		uint32_t depth = 4 + skew(8) * 2 + rnd() % 3;
		uint32_t f = skew(6), path[32];
		for (uint32_t d = 0; d < depth; d++) {
			path[d] = f % NSYM;
			f = (f * 131 + 17 + skew(12) * 7919 + d) % NSYM;
		}
		for (uint32_t d = 0; d < depth; d++)
			chain[d] = KBASE + path[depth - 1 - d] * SYM_SIZE + 0x10 + (d ? 5 : 0);
		smp.ip = chain[0];
		smp.nr_callchain = depth;
		smp.callchain = chain;
		int r = dp_write_sample(w, domain, &smp);
		if (r < 0) {
			fprintf(stderr, "gen-profile: write: %d\n", r);
			return 1;
		}
	}
	struct dp_stats stats = { .samples = (uint64_t)nsamples, .wall_ns = (uint64_t)nsamples * 1000000 };
	dp_write_stats(w, &stats);
	if (dp_writer_finish(w) < 0) {
		fprintf(stderr, "gen-profile: finish failed\n");
		return 1;
	}
	return 0;
}
