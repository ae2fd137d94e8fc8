// SPDX-License-Identifier: MIT
/*
 * test-tool mkseed DIR: writes a few small, valid domprof files
 * (DIR/seed-0.data .. seed-4.data) as the fuzzers' seed corpus; the CLI
 * tests read them too. seed-3 holds COUNTERS records (format 1.3) in two
 * domains, across chunks, compressed. seed-4 holds samples with user
 * registers and stacks (format 1.4), some with asid and chain, one with
 * an empty stack, one filling its size, in two domains; small stacks, so
 * the file stays under the fuzzer's max_len. seed-5 holds a kernel
 * symbol index (SYMTAB kind 8) of 600 symbols (three blocks), with
 * __pfx_ references and a module. seed-6 holds user stacks in delta
 * form (format 1.5): three threads in two domains whose sp moves and
 * whose stacks change a word now and then, one sample without sp, across
 * chunks. seed-7 holds 300 samples of a few keys in runs between other
 * records (DP_READ_GROUPS' groups), compressed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdlib.h>

#include "format/format.h"
#include "format/ksymidx.h"
#include "test-tool.h"

int cmd_mkseed(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-tool mkseed DIR\n");
		return 2;
	}
	for (int v = 0; v < 8; v++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/seed-%d.data", argv[1], v);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		struct dp_header h;
		dp_header_fill_local(&h, argc, argv);
		struct dp_writer_opts o = { .chunk_bytes = v == 4 ? 1024 : v == 6 || v == 7 ? 2048 : 256,
					    .zstd_level = v == 1 || v == 3 || v == 7 ? 1 : 0,
					    .ustack_delta = v == 6 };
		int err;
		struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
		struct dp_event ev = { .name = "cpu-clock", .period = 1000, .freq = true };
		dp_write_event(w, &ev);
		struct dp_domain d = { .id = 1, .kind = 1, .name = "vm1", .address = "gdb:unix:/s", .symsrc = "kallsyms" };
		dp_write_domain(w, &d);
		struct dp_task t = { .pid = 7, .tid = 7, .comm = "work" };
		dp_write_task(w, 0, &t);
		struct dp_mmap m = { .pid = 7, .start = 0x400000, .len = 0x1000, .path = "/bin/work" };
		dp_write_mmap(w, 0, &m);
		uint64_t chain[4] = { 1, 2, 3, 4 };
		uint64_t regs[20];
		uint8_t stack[96];
		for (int i = 0; i < 20; i++)
			regs[i] = 0x7ffd0000u + 8u * (uint64_t)i;
		for (int i = 0; i < 96; i++)
			stack[i] = (uint8_t)(i * 13);
		for (int i = 0; i < 12; i++) {
			struct dp_sample s = { .ip = 0x401000u + (uint64_t)i, .pid = 7, .tid = 7,
					       .has_asid = i % 3 == 0, .asid = 0x1000,
					       .nr_callchain = v == 2 || (v == 4 && i % 2) ? 4 : 0,
					       .callchain = chain };
			if (v == 4 && i % 4 != 3) {
				s.has_uregs = true;
				s.uregs_abi = DP_UREGS_ABI_64;
				s.uregs_mask = i == 5 ? 0x1c0 : 0xff0fff;  /* bp, sp, ip only */
				s.uregs = regs;
				s.ustack_size = 96;
				s.ustack_len = i == 2 ? 0 : i == 6 ? 96 : 8u * (uint32_t)i;
				s.ustack = stack;
			}
			dp_write_sample(w, i % 2 ? 1 : 0, &s);
		}
		if (v == 6) {
			static uint8_t mem[3][320];
			for (int th = 0; th < 3; th++)
				for (int k = 0; k < 320; k++)
					mem[th][k] = (uint8_t)(k * 31 + th);
			for (int i = 0; i < 24; i++) {
				int th = i % 3;
				uint32_t depth = 96 + 8u * (uint32_t)((i * 5) % 12);
				mem[th][320 - depth] ^= (uint8_t)i;            /* the top word changes */
				if (i % 7 == 0)
					mem[th][320 - 8 - 8 * (i % 20)] ^= 0xff; /* and an outer one */
				/* bp, sp, ip (mask 0x1c0): sp the second */
				uint64_t r6[3] = { regs[6], 0x7ffd1000u + 0x1000u * (uint64_t)th + 320 - depth,
						   regs[8] };
				struct dp_sample s = { .ip = 0x401000u + (uint64_t)i, .pid = 7,
						       .tid = 7 + (uint32_t)th, .mode = DP_MODE_USER,
						       .has_uregs = true, .uregs_abi = DP_UREGS_ABI_64,
						       .uregs_mask = i == 10 ? 0x100 : 0x1c0,
						       .uregs = r6, .ustack_size = 128,
						       .ustack_len = depth < 128 ? depth : 128,
						       .ustack = &mem[th][320 - depth] };
				dp_write_sample(w, th == 2 ? 1 : 0, &s);
			}
		}
		/* seed-7: runs of samples that repeat (what DP_READ_GROUPS
		 * counts as groups), keys apart by one field at a time */
		for (int i = 0; v == 7 && i < 300; i++) {
			struct dp_sample s = { .ip = 0x401000u + (uint64_t)(i % 3), .pid = 7,
					       .tid = 7 + (uint32_t)(i % 2), .cpu = (uint32_t)(i % 5 == 0),
					       .period = 1000 + (uint64_t)i, .mode = DP_MODE_USER,
					       .has_asid = i % 11 == 0, .asid = 0x1000,
					       .nr_callchain = i % 4 == 0 ? 4 : i % 4 == 1 ? 3 : 0,
					       .callchain = chain };
			dp_write_sample(w, i % 50 == 49 ? 1 : 0, &s);
			if (i % 90 == 89)
				dp_write_mmap(w, 0, &m);
		}
		if (v == 2) {
			const char *k = "ffffffff81000000 T _text\nffffffff81000100 T foo\n";
			struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
						.data = (const uint8_t *)k, .size = strlen(k) };
			dp_write_symtab(w, 1, &st);
		}
		if (v == 3) {
			static const struct dp_counter c[] = {
				{ "unwind.chains", 12 }, { "unwind.frames", 40 }, { "unwind.bytes", 4096 },
				{ "unwind.reads", 9 }, { "unwind.stop.end", 10 }, { "unwind.stop.unreadable", 2 },
			};
			static const struct dp_counter hc[] = { { "x", UINT64_MAX } };
			dp_write_counters(w, 1, &(struct dp_counters){ 6, c });
			dp_write_counters(w, 0, &(struct dp_counters){ 1, hc });
			dp_write_counters(w, 1, &(struct dp_counters){ 2, c });
		}
		if (v == 5) {
			static char names[600][24];
			static struct dp_ksym k[600];
			static const char *mods[] = { "mymod" };
			static const uint32_t modlens[] = { 5 };
			for (unsigned i = 0; i < 600; i++) {
				bool pfx = i % 2 == 0 && i < 590;
				snprintf(names[i], sizeof(names[i]), pfx ? "__pfx_f%u" : "f%u", i | 1);
				k[i] = (struct dp_ksym){ 0xffffffff81000000ull + 16ull * i, names[i],
							 (uint32_t)strlen(names[i]), i >= 590,
							 i % 3 ? 'T' : i % 7 ? 't' : 'D' };
			}
			uint8_t *ix;
			size_t ixlen;
			if (dp_ksymidx_encode(k, 600, mods, modlens, 1, 3, &ix, &ixlen, NULL) == 0) {
				struct dp_symtab st = { .kind = DP_SYMTAB_KSYMIDX, .name = "kallsyms",
							.data = ix, .size = ixlen };
				dp_write_symtab(w, 0, &st);
				free(ix);
			}
		}
		struct dp_lost l = { .count = 2 };
		dp_write_lost(w, &l);
		struct dp_stats st = { .samples = 12, .lost = 2 };
		dp_write_stats(w, &st);
		if (dp_writer_finish(w) < 0)
			return 1;
	}
	return 0;
}
