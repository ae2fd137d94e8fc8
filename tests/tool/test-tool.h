// SPDX-License-Identifier: MIT
/*
 * The subcommands of test-tool (tests/tool/test-tool.c), one source file
 * each. Each takes its own argv (argv[0] is the subcommand's name) and
 * returns the process's exit status: 0 success, 1 runtime failure, 2
 * usage error, with one line on stderr for each failure.
 */
#ifndef DOMPROF_TEST_TOOL_H
#define DOMPROF_TEST_TOOL_H

int cmd_embed_elf(int argc, char **argv);   /* embed-elf.c */
int cmd_mkseed(int argc, char **argv);      /* mkseed.c */
int cmd_gen_profile(int argc, char **argv); /* gen-profile.c */
int cmd_gen_hostile(int argc, char **argv); /* gen-hostile.c */
int cmd_gen_counters(int argc, char **argv); /* gen-counters.c */
int cmd_symtab(int argc, char **argv);      /* symtab.c */
int cmd_guest_modules(int argc, char **argv); /* guest-modules.c */
int cmd_guest_ksyms(int argc, char **argv); /* guest-ksyms.c */
int cmd_guest_cache_kallsyms(int argc, char **argv); /* guest-ksyms.c */
int cmd_guest_tasks(int argc, char **argv); /* guest-tasks.c */
int cmd_guest_orc(int argc, char **argv); /* guest-orc.c */
int cmd_guest_layout(int argc, char **argv); /* guest-layout.c */
int cmd_guest_read(int argc, char **argv); /* guest-read.c */
int cmd_gen_perfdata(int argc, char **argv); /* gen-perfdata.c */
int cmd_kcache(int argc, char **argv);      /* kcache.c */
int cmd_lcache(int argc, char **argv);      /* lcache.c */

#endif
