// SPDX-License-Identifier: MIT
/*
 * test-tool: internals the shell tests need, in one binary (git's
 * t/helper/test-tool pattern) instead of scattered generators. One
 * source file per subcommand in tests/tool/, declared in test-tool.h;
 * this file only dispatches.
 *
 *   test-tool embed-elf IN OUT
 *       embed the host's ELF files and vDSO in a copy of a recording
 *       (the golden fixtures, tests/fixtures/golden/)
 *   test-tool mkseed DIR
 *       a few small valid recordings: the fuzzers' seed corpus
 *   test-tool gen-profile OUT SAMPLES
 *       a synthetic two-domain recording with many distinct stacks (the
 *       flame graph and export tests)
 *   test-tool gen-counters OUT DOMAIN:NAME=VALUE[,...]...
 *       a small recording with the given COUNTERS records (format 1.3;
 *       tests/e2e/counters.sh)
 *   test-tool gen-hostile KIND OUT ARGS...
 *       hostile recordings for the report-side bounds tests
 *       (tests/e2e/hostile-*.sh)
 *   test-tool symtab get|set ...
 *       a domain's embedded kallsyms table out of / into a recording
 *       (two views of one recording, tests/vm/test-guest-kernels.sh)
 *   test-tool guest-cache-kallsyms ENTRY TEXT-ADDR
 *       the table a host cache kallsyms entry holds, moved to TEXT-ADDR
 *       (guest/cache.h), without any check against a guest
 *   test-tool guest-ksyms MEMSPEC [--buildid] [--rip A] [--flip A] [--reuse [SPEC2]]
 *       the guest kernel's kallsyms (or build id) decoded from guest
 *       memory: a vmlinux file or a live gdbstub (tests/e2e/guest-ksyms-matrix.sh)
 *   test-tool guest-tasks [OPTIONS] MEMSPEC KALLSYMS
 *       the guest's layout from its BTF, its processes and the current
 *       task of each vCPU (tests/vm/test-guest-tasks.sh)
 *   test-tool guest-layout [--truncate=N] [--flip=OFF] VMLINUX
 *       the structure layouts of the passive domain resolved from a
 *       kernel ELF's .BTF (tests/e2e/guest-ksyms-matrix.sh)
 *   test-tool gen-perfdata OUT [pipe] [compress] [guest]
 *       a perf.data written from perf's documented format (perf kvm
 *       files, fuzz seeds; tests/unit/perfgen.h)
 *   test-tool guest-orc [OPTIONS] MEMSPEC KALLSYMS
 *       the guest kernel's ORC tables read and checked, and with a live
 *       gdbstub its stacks unwound at a few stops (tests/e2e/guest-ksyms-matrix.sh)
 *   test-tool kcache CACHE KALLSYMS OUT [zero-key]
 *       a kernel symbol cache file forged from a kallsyms text with
 *       CACHE's key (tests/e2e/perfdata-kcache.sh)
 *   test-tool lcache IN OUT OLD NEW [zero-key]
 *       a source line cache file forged from IN: line OLD said as NEW
 *       (tests/e2e/srcline-cache.sh)
 *
 * Exit 0 on success, 1 on a runtime failure, 2 on usage errors; one line
 * on stderr for each failure.
 */
#include <stdio.h>
#include <string.h>

#include "test-tool.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
} cmds[] = {
	{ "embed-elf", cmd_embed_elf, "IN OUT" },
	{ "mkseed", cmd_mkseed, "DIR" },
	{ "gen-profile", cmd_gen_profile, "OUT SAMPLES" },
	{ "gen-counters", cmd_gen_counters, "OUT DOMAIN:NAME=VALUE[,...]..." },
	{ "gen-hostile", cmd_gen_hostile, "bomb|domains|forks|tables|fifo OUT ARGS..." },
	{ "symtab", cmd_symtab, "get IN DOMAIN OUT | set IN DOMAIN FILE OUT" },
	{ "guest-modules", cmd_guest_modules, "[--shift-kallsyms N] vmlinux:PATH|gdb:SOCKET KALLSYMS" },
	{ "guest-ksyms", cmd_guest_ksyms, "vmlinux:PATH[,shift=0x..]|gdb:SOCKET [--buildid] [--rip A] [--flip A] [--reuse [SPEC2]]" },
	{ "guest-cache-kallsyms", cmd_guest_cache_kallsyms, "ENTRY TEXT-ADDR" },
	{ "guest-tasks", cmd_guest_tasks, "[--shift=N [--shift-only=SYM]] [--pob=ADDR] [--samples=N] MEMSPEC KALLSYMS" },
	{ "guest-layout", cmd_guest_layout, "[--truncate=N] [--flip=OFF] VMLINUX" },
	{ "guest-orc", cmd_guest_orc, "[--layout=v1|v3] [--version=V] [--shift=N] [--stops=N] MEMSPEC KALLSYMS" },
	{ "guest-read", cmd_guest_read, "MEMSPEC ADDR LEN OUT" },
	{ "gen-perfdata", cmd_gen_perfdata, "OUT [pipe] [compress] [guest] [samples=N] | --kallsyms" },
	{ "kcache", cmd_kcache, "CACHE KALLSYMS OUT [zero-key]" },
	{ "lcache", cmd_lcache, "IN OUT OLD NEW [zero-key]" },
};

int main(int argc, char **argv)
{
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "usage: test-tool COMMAND ARGS... (%s%s)\n", argc >= 2 ? "unknown command: " : "no command",
		argc >= 2 ? argv[1] : "");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  test-tool %s %s\n", cmds[i].name, cmds[i].args);
	return 2;
}
