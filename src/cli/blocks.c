// SPDX-License-Identifier: MIT
/* The shared option blocks (src/cli/blocks.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/blocks.h"
#include "symbols/debuginfod.h"

static int set_filter(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	return filter_args_set(ctx, name, value, err, n);
}

const struct opt opts_filter[] = {
	{ .kind = OPT_CALL, .name = "domain", .arg = "NAME", .fn = set_filter, .values = "host",
	  .help = "only samples of this domain (host, or a VM's name)" },
	OPT_FN(0, "pid", "PID", set_filter, "only samples of this process"),
	OPT_FN(0, "comm", "NAME", set_filter,
	       "only samples taken while their process had this command name (an exec renames it, as in perf)"),
	OPT_FN(0, "image", "NAME", set_filter, "only samples in this image (short name or path; the leaf's image)"),
	{ .kind = OPT_CALL, .name = "mode", .arg = "user|kernel|all", .fn = set_filter, .help = HELP_MODE,
	  .values = "user kernel all" },
	OPT_FN(0, "time", "START,END", set_filter, HELP_TIME),
	OPT_FN(0, "cpu", "LIST", set_filter, HELP_CPU),
	OPT_TABLE_END,
};

int opt_jobs(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	if (!parse_jobs(value, ctx))
		return 0;
	snprintf(err, n, JOBS_ERROR, value);
	return -EINVAL;
}

const struct opt opts_jobs[] = {
	OPT_FN('j', "jobs", "N", opt_jobs,
	       "decode the recording on N threads (default: one below 4 MiB of file, else the CPUs this "
	       "process may use; the output is the same)"),
	OPT_TABLE_END,
};

static int set_guest(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	return perf_guest_args_set(ctx, name, value, err, n);
}

const struct opt opts_perf_guest[] = {
	OPT_FN(0, "guest-name", "PID=NAME", set_guest,
	       "perf.data of perf kvm: name the guest machine of QEMU pid PID (default perf's \"[guest/PID]\")"),
	OPT_FN(0, "guest-kallsyms", "[PID=]FILE", set_guest,
	       "its kernel symbols from a copy of its /proc/kallsyms; without PID for every guest "
	       "(perf kvm's --guestkallsyms)"),
	OPT_FN(0, "guest-sysmap", "[PID=]FILE", set_guest, "as --guest-kallsyms, from a System.map"),
	OPT_TABLE_END,
};

static int no_debuginfod(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	dbgfd_turn_off();   /* for libdwfl too: docs/symbols.md */
	return 0;
}

const struct opt opts_debuginfod[] = {
	OPT_FN(0, "no-debuginfod", NULL, no_debuginfod,
	       "no debug files from debuginfod servers (DEBUGINFOD_URLS)"),
	OPT_TABLE_END,
};

int opt_add_input(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct input_args *in = ctx;
	in->v[in->n++] = value;   /* v has room for every argument */
	return 0;
}

const struct opt opts_inputs[] = {
	OPT_FN('i', "input", "FILE", opt_add_input,
	       "recording to read (default: domprof.data) or a perf.data (docs/perfdata.md); several -i, "
	       "FILE arguments, a quoted glob or A,B: read as one"),
	OPT_TABLE_END,
};

static int add_vmlinux(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct vmlinux_args *v = ctx;
	return parse_vmlinux((char *)value, v->v, &v->n, err, n) < 0 ? -EINVAL : 0;
}

const struct opt opts_vmlinux[] = {
	OPT_FN(0, "vmlinux", "[DOMAIN=]FILE", add_vmlinux,
	       "source lines of DOMAIN's kernel (default: host) from FILE, the kernel's debug file "
	       "(linux-image-*-dbg)"),
	OPT_TABLE_END,
};

static int set_root(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	struct fg_root_args *r = ctx;
	return fg_root_option(&r->root, &r->given, name, err, n);
}

const struct opt opts_fg_root[] = {
	OPT_FN(0, "by-comm", NULL, set_root,
	       "one frame per command name under its domain, COMM, merged across pids, as FlameGraph's "
	       "stackcollapse (the default)"),
	OPT_FN(0, "by-pid", NULL, set_root, "one frame per process, COMM-PID"),
	OPT_FN(0, "by-tid", NULL, set_root, "one frame per thread, COMM-PID/TID"),
	OPT_FN(0, "no-comm", NULL, set_root, "no process frame: the call chains right on the domain"),
	OPT_TABLE_END,
};

int opt_percent(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	if (!parse_percent(value, ctx))
		return 0;
	snprintf(err, n, "%s '%s' is not a percentage (0..100)", name, value);
	return -EINVAL;
}

static int set_min_width(void *ctx, const char *name, const char *value, char *err, size_t n)
{
	double pct;
	if (parse_percent(value, &pct) || pct <= 0) {
		snprintf(err, n, "--min-width '%s' is not a percentage (0..100]", value);
		return -EINVAL;
	}
	((struct fg_picture_args *)ctx)->min_pct = pct;
	return 0;
}

const struct opt opts_fg_picture[] = {
	OPT_STR(0, "title", "T", struct fg_picture_args, title,
		"the picture's title (default: \"Flame graph: FILE\"; diff: \"Differential flame graph: A -> B\")"),
	OPT_FN(0, "min-width", "PCT", set_min_width,
	       "merge frames narrower than PCT percent of all samples into their parent (default 0.01 "
	       "for HTML, 0.1 for SVG)"),
	OPT_TABLE_END,
};
