// SPDX-License-Identifier: MIT
/*
 * Option parsing shared by the profile-reading commands (see options.h):
 * one place for the filter options and their description, percentages,
 * and the wording of a failed profile_load().
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/inputs.h"
#include "analysis/options.h"
#include "util/file.h"

/* Append "KEY=VALUE" to the description, space-separated, truncating
 * (never overflowing) when someone passes very long names. */
static void desc_add(struct filter_args *fa, const char *key, const char *val)
{
	fa->len += (size_t)snprintf(fa->desc + fa->len, sizeof(fa->desc) - fa->len, "%s%s=%s",
				    fa->len ? " " : "", key, val);
	if (fa->len >= sizeof(fa->desc))
		fa->len = sizeof(fa->desc) - 1;
}

int filter_args_set(struct filter_args *fa, const char *name, const char *arg,
		    char *err, size_t errlen)
{
	struct profile_filter *flt = &fa->flt;
	if (!strcmp(name, "domain")) {
		flt->domain = arg;
	} else if (!strcmp(name, "comm")) {
		flt->comm = arg;
	} else if (!strcmp(name, "image")) {
		flt->image = arg;
	} else if (!strcmp(name, "pid")) {
		char *end, num[24];
		errno = 0;
		unsigned long pid = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || pid > UINT32_MAX) {
			snprintf(err, errlen, "pid '%s' is not a number", arg);
			return -EINVAL;
		}
		flt->has_pid = true;
		flt->pid = (uint32_t)pid;
		/* the number as parsed: "--pid 007" is described as pid=7 */
		snprintf(num, sizeof(num), "%lu", pid);
		desc_add(fa, name, num);
		return 0;
	} else if (!strcmp(name, "time")) {
		if (window_parse_time(arg, &flt->time_from, &flt->time_to, &flt->time_pct, err, errlen))
			return -EINVAL;
		flt->has_time = true;
	} else if (!strcmp(name, "cpu")) {
		if (window_parse_cpus(arg, fa->cpu_bits, err, errlen))
			return -EINVAL;
		flt->cpus = fa->cpu_bits;
	} else if (!strcmp(name, "mode")) {
		if (!strcmp(arg, "user")) {
			flt->mode = PROFILE_MODE_USER;
		} else if (!strcmp(arg, "kernel")) {
			flt->mode = PROFILE_MODE_KERNEL;
		} else if (!strcmp(arg, "all")) {
			return 0;  /* the default, no filter: diff has always taken it */
		} else {
			snprintf(err, errlen, "--mode takes user, kernel or all, not '%s'", arg);
			return -EINVAL;
		}
	} else {
		snprintf(err, errlen, "unknown filter option '--%s'", name);
		return -EINVAL;
	}
	desc_add(fa, name, arg);
	return 0;
}

const char *filter_args_desc(const struct filter_args *fa)
{
	return fa->len ? fa->desc : NULL;
}

int parse_vmlinux(char *arg, struct profile_vmlinux *v, size_t *n, char *err, size_t errlen)
{
	if (*n >= PROFILE_MAX_VMLINUX) {
		snprintf(err, errlen, "at most %d --vmlinux files", PROFILE_MAX_VMLINUX);
		return -EINVAL;
	}
	char *eq = strchr(arg, '=');
	const char *dom = "host", *path = arg;
	if (eq) {
		*eq = '\0';
		dom = arg;
		path = eq + 1;
	}
	if (!*dom || !*path) {
		snprintf(err, errlen, "--vmlinux wants [DOMAIN=]FILE");
		return -EINVAL;
	}
	v[(*n)++] = (struct profile_vmlinux){ dom, path };
	return 0;
}

int parse_percent(const char *s, double *pct)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 100)
		return -EINVAL;
	*pct = v;
	return 0;
}

int parse_jobs(const char *s, unsigned *jobs)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > (long)DP_READ_THREADS_MAX)
		return -EINVAL;
	*jobs = (unsigned)v;
	return 0;
}

unsigned jobs_for_size(uint64_t bytes)
{
	if (bytes < JOBS_AUTO_BYTES)
		return 1;
	/* the CPUs this process may run on (taskset, cgroup cpusets), not
	 * every CPU of the machine */
	cpu_set_t set;
	long n = 0;
	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	if (n < 1)
		n = 1;
	return n > (long)DP_READ_THREADS_MAX ? DP_READ_THREADS_MAX : (unsigned)n;
}

const char *profile_load_reason(char *buf, size_t n, const char *path, int err,
				const char *msg)
{
	if (msg && *msg)
		snprintf(buf, n, "%s", msg);
	else
		snprintf(buf, n, "cannot read '%s': %s", path,
			 err > -1000 ? strerror(-err) : "not a domprof file");
	return buf;
}

/* ---- perf kvm guests ---- */

static struct dp_perf_guest *guest_slot(struct perf_guest_args *ga, uint32_t pid)
{
	for (size_t i = 0; i < ga->n; i++)
		if (ga->g[i].pid == pid)
			return &ga->g[i];
	if (ga->n >= PERF_GUEST_MAX)
		return NULL;
	struct dp_perf_guest *g = &ga->g[ga->n++];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	return g;
}

int perf_guest_args_set(struct perf_guest_args *ga, const char *name, const char *arg,
			char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	bool is_name = !strcmp(name, "guest-name");
	uint32_t pid = PERF_GUEST_ANY;
	const char *val = arg;
	if (eq || is_name) {
		char *end;
		unsigned long v = eq ? strtoul(arg, &end, 10) : 0;
		if (!eq || end != eq || eq == arg || v >= UINT32_MAX || !eq[1]) {
			snprintf(err, errlen, "--%s needs PID=%s, not '%s'", name,
				 is_name ? "NAME" : "FILE", arg);
			return -EINVAL;
		}
		pid = (uint32_t)v;
		val = eq + 1;
	}
	struct dp_perf_guest *g = guest_slot(ga, pid);
	if (!g) {
		snprintf(err, errlen, "at most %u guest options", PERF_GUEST_MAX);
		return -EINVAL;
	}
	if (is_name) {
		g->name = val;
		return 0;
	}
	char *buf;
	size_t len;
	int r = file_read_all(val, 256u << 20, &buf, &len);
	if (r < 0) {
		snprintf(err, errlen, "--%s: cannot read '%s': %s", name, val, file_strerror(r));
		return -EINVAL;
	}
	ga->bufs[g - ga->g] = buf;
	g->syms = (const uint8_t *)buf;
	g->syms_len = len;
	g->symtab_kind = !strcmp(name, "guest-sysmap") ? DP_SYMTAB_SYSMAP : DP_SYMTAB_KALLSYMS;
	return 0;
}

void perf_guest_args_apply(const struct perf_guest_args *ga, struct dp_reader *r)
{
	if (!ga || !dp_reader_is_perf(r))
		return;
	for (size_t i = 0; i < ga->n; i++)
		dp_reader_perf_guest(r, &ga->g[i]);
}

void perf_guest_args_release(struct perf_guest_args *ga)
{
	for (size_t i = 0; i < ga->n; i++)
		free(ga->bufs[i]);
	memset(ga, 0, sizeof(*ga));
}

struct profile *profile_load_inputs(const char *const *iargs, size_t ni, char *const *operands,
				    size_t nops, const struct profile_filter *flt,
				    struct profile_opts *o, struct perf_guest_args *guests,
				    char *desc, size_t desclen, char *why, size_t whylen)
{
	struct inputs in = { 0 };
	desc[0] = 0;
	if (inputs_collect(&in, iargs, ni, operands, nops, why, whylen)) {
		perf_guest_args_release(guests);
		return NULL;
	}
	inputs_desc(&in, desc, desclen);
	o->perf_guests = guests;
	int err = 0;
	char msg[256] = "";
	struct profile *p = profile_load_files((const char *const *)in.paths, in.n, flt, o, &err, msg, sizeof(msg));
	inputs_free(&in);
	perf_guest_args_release(guests);
	o->perf_guests = NULL;
	if (!p)
		profile_load_reason(why, whylen, desc, err, msg);
	return p;
}
