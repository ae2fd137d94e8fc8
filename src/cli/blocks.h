/* SPDX-License-Identifier: MIT */
/*
 * The option blocks that several commands share (src/cli/opt.h): each
 * defined once, with its help line, and included by the commands' tables
 * with OPT_INCLUDE(block, CTX, member) where member has the block's type.
 */
#ifndef DOMPROF_CLI_BLOCKS_H
#define DOMPROF_CLI_BLOCKS_H

#include "analysis/options.h"
#include "cli/opt.h"
#include "output/flamegraph.h"

/* --domain --pid --comm --image --mode --time --cpu: a struct filter_args */
extern const struct opt opts_filter[];

/* -j/--jobs N: an unsigned (0 when not given: jobs_for_size) */
extern const struct opt opts_jobs[];

/* --guest-name, --guest-kallsyms, --guest-sysmap: a struct perf_guest_args */
extern const struct opt opts_perf_guest[];

/* --no-debuginfod (acts on the process: any member) */
extern const struct opt opts_debuginfod[];

/* -i/--input FILE, repeatable: a struct input_args whose v has room for
 * every argument (the command sets v before parsing) */
struct input_args {
	const char **v;
	size_t n;
};
extern const struct opt opts_inputs[];
/* its handler, for a -i with a help of its own (info) */
int opt_add_input(void *ctx, const char *name, const char *value, char *err, size_t n);

/* --vmlinux [DOMAIN=]FILE, repeatable: a struct vmlinux_args */
struct vmlinux_args {
	struct profile_vmlinux v[PROFILE_MAX_VMLINUX];
	size_t n;
};
extern const struct opt opts_vmlinux[];

/* --by-comm --by-pid --by-tid --no-comm: the flame graph's process level */
struct fg_root_args {
	enum fg_root root;
	int given;
};
extern const struct opt opts_fg_root[];

/* --title T, --min-width PCT of a flame graph */
struct fg_picture_args {
	const char *title;
	double min_pct;   /* 0: the default */
};
extern const struct opt opts_fg_picture[];

/* The help of --time and --cpu, for commands that apply them their way (diff). */
#define HELP_TIME "only samples taken START to END seconds after their domain's first sample " \
	"(either may be empty), or START%-END% of its span (as perf's --time)"
#define HELP_CPU "only samples taken on these CPUs (0,2-3; a passive domain's vCPUs)"
#define HELP_MODE "only user-mode or only kernel-mode samples (all: both, the default)"

/* The handler of -j (for a -j with its own help: annotate's default differs). */
int opt_jobs(void *ctx, const char *name, const char *value, char *err, size_t n);

/* A handler for a percentage 0..100 into a double (--threshold). */
int opt_percent(void *ctx, const char *name, const char *value, char *err, size_t n);

#endif
