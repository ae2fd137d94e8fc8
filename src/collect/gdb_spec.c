// SPDX-License-Identifier: MIT
/*
 * Passive domains, the spec: `--domain NAME=gdb:HOST:PORT[,OPTS]` or
 * `NAME=gdb:unix:PATH[,OPTS]` parsed into a struct gdb_spec, and the
 * loopback policy (a stub gives full control of its VM, so one that is
 * not on this machine needs --allow-remote-stub). Part of the gdb
 * source (collect/gdb_source.c, shared declarations in gdb_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_internal.h"
#include "collect/kaslr.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

/* ---- Spec --------------------------------------------------------------- */

/* One OPTION=VALUE of the spec into *out. 0 or -EINVAL (err set). */
static int spec_option(const char *name, const char *opt, const char *val, struct gdb_spec *out,
		       char *err, size_t errlen)
{
	enum gdb_symsrc ss = GDB_SYM_NONE;
	if (!strcmp(opt, "kallsyms"))
		ss = GDB_SYM_KALLSYMS;
	else if (!strcmp(opt, "sysmap"))
		ss = GDB_SYM_SYSMAP;
	else if (!strcmp(opt, "vmlinux"))
		ss = GDB_SYM_VMLINUX;
	if (ss) {
		if (out->symsrc) {
			snprintf(err, errlen, "%s: give only one of kallsyms=, sysmap=, vmlinux=", name);
			return -EINVAL;
		}
		if (strlen(val) >= sizeof(out->symfile)) {
			snprintf(err, errlen, "%s: symbol file path too long", name);
			return -EINVAL;
		}
		out->symsrc = ss;
		strcpy(out->symfile, val);
		if (ss == GDB_SYM_KALLSYMS && !strcmp(val, "guest")) {
			out->symsrc = GDB_SYM_GUEST;
			out->symfile[0] = 0;
		}
	} else if (!strcmp(opt, "kaslr")) {
		out->kaslr_given = true;
		if (!strcmp(val, "auto")) {
			out->kaslr_auto = true;
		} else {
			char *e;
			errno = 0;
			out->kaslr = strtoull(val, &e, 0);
			if (*e || errno || val[0] == '-') {
				snprintf(err, errlen, "%s: bad kaslr= value '%s' (auto or an offset like 0x1e000000)", name, val);
				return -EINVAL;
			}
		}
	} else if (!strcmp(opt, "pipeline")) {
		if (strcmp(val, "0") && strcmp(val, "1")) {
			snprintf(err, errlen, "%s: pipeline= must be 0 or 1", name);
			return -EINVAL;
		}
		out->no_pipeline = val[0] == '0';
	} else if (!strcmp(opt, "current")) {
		if (strcmp(val, "0") && strcmp(val, "1")) {
			snprintf(err, errlen, "%s: current= must be 0 or 1", name);
			return -EINVAL;
		}
		out->no_current = val[0] == '0';
	} else if (!strcmp(opt, "unwind-window") || !strcmp(opt, "unwind-max") || !strcmp(opt, "unwind-depth")) {
		/* Bounds: a window of at least one frame and at most a page
		 * (reads stop at a page end anyway); the unwinder's caps. */
		bool depth = !strcmp(opt, "unwind-depth"), window = !strcmp(opt, "unwind-window");
		unsigned long lo = depth ? 1 : window ? 64 : 512;
		unsigned long hi = depth ? GUEST_ORC_MAX_DEPTH : window ? 4096 : GUEST_ORC_MAX_STACK;
		char *e;
		errno = 0;
		unsigned long v = strtoul(val, &e, 10);
		if (!val[0] || *e || errno || v < lo || v > hi) {
			snprintf(err, errlen, "%s: %s= must be a number from %lu to %lu", name, opt, lo, hi);
			return -EINVAL;
		}
		if (depth)
			out->unwind.depth = (unsigned)v;
		else if (window)
			out->unwind.window = v;
		else
			out->unwind.max_bytes = v;
	} else if (!strcmp(opt, "start-time") || !strcmp(opt, "start-mb") || !strcmp(opt, "walk-ms")) {
		/* The start-up budget (gdb_source.h): whole seconds and MiB,
		 * from a blink to what a 65,536-task guest would cost; a
		 * walk's during the recording in ms (the VM is held for it). */
		bool time = !strcmp(opt, "start-time"), walk = !strcmp(opt, "walk-ms");
		unsigned long hi = walk ? 10000 : time ? 600 : 1024;
		char *e;
		errno = 0;
		unsigned long v = strtoul(val, &e, 10);
		if (!val[0] || *e || errno || v < 1 || v > hi || val[0] == '-') {
			snprintf(err, errlen, "%s: %s= must be a number from 1 to %lu (%s)", name, opt, hi,
				 walk ? "ms" : time ? "seconds" : "MiB");
			return -EINVAL;
		}
		if (walk)
			out->walk_ms = (unsigned)v;
		else if (time)
			out->start_s = (unsigned)v;
		else
			out->start_mb = (unsigned)v;
	} else if (!strcmp(opt, "paging")) {
		if (strcmp(val, "4") && strcmp(val, "5")) {
			snprintf(err, errlen, "%s: paging= must be 4 or 5 (levels of the guest's page tables)", name);
			return -EINVAL;
		}
		out->paging = val[0] == '5' ? GUEST_PAGING_5 : GUEST_PAGING_4;
	} else if (!strcmp(opt, "regs")) {
		if (strcmp(val, "g") && strcmp(val, "p")) {
			snprintf(err, errlen, "%s: regs= must be g or p", name);
			return -EINVAL;
		}
		out->regs_p = val[0] == 'p';
	} else {
		snprintf(err, errlen, "%s: unknown option '%s' (kallsyms=, sysmap=, vmlinux=, kaslr=, regs=, pipeline=, current=, unwind-window=, unwind-max=, unwind-depth=, start-time=, start-mb=, walk-ms=, paging=)", name, opt);
		return -EINVAL;
	}
	return 0;
}

int gdb_spec_parse(const char *spec, struct gdb_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *eq = strchr(spec, '=');
	size_t nl = eq ? (size_t)(eq - spec) : 0;
	if (!eq || nl == 0 || nl >= sizeof(out->name)) {
		snprintf(err, errlen, "%s: bad domain spec (expected NAME=gdb:HOST:PORT or NAME=gdb:unix:PATH)", spec);
		return -EINVAL;
	}
	for (size_t i = 0; i < nl; i++) {
		char c = spec[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.')) {
			snprintf(err, errlen, "%.*s: bad domain name (use letters, digits, '_', '-', '.')", (int)nl, spec);
			return -EINVAL;
		}
	}
	memcpy(out->name, spec, nl);
	const char *name = out->name;
	const char *k = eq + 1;
	if (strncmp(k, "gdb:", 4)) {
		snprintf(err, errlen, "%s: not a gdb domain spec", name);
		return -EINVAL;
	}
	k += 4;
	size_t al = strcspn(k, ",");
	char addr[4400];
	if (al == 0 || al >= sizeof(addr)) {
		snprintf(err, errlen, "%s: missing address after gdb: (HOST:PORT or unix:PATH)", name);
		return -EINVAL;
	}
	memcpy(addr, k, al);
	addr[al] = 0;
	if (!strncmp(addr, "unix:", 5)) {
		out->is_unix = true;
		if (!addr[5] || strlen(addr + 5) >= sizeof(out->host) || strlen(addr + 5) >= 108) {
			snprintf(err, errlen, "%s: bad unix socket path '%s'", name, addr + 5);
			return -EINVAL;
		}
		strcpy(out->host, addr + 5);
	} else {
		char *colon = strrchr(addr, ':');
		if (!colon || colon == addr || !colon[1] || strlen(colon + 1) >= sizeof(out->port)) {
			snprintf(err, errlen, "%s: bad address '%s' (expected HOST:PORT or unix:PATH)", name, addr);
			return -EINVAL;
		}
		*colon = 0;
		char *h = addr;
		size_t hl = strlen(h);
		if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
			h[hl - 1] = 0;
			h++;
		}
		char *pe;
		unsigned long port = strtoul(colon + 1, &pe, 10);
		if (*pe || port == 0 || port > 65535 || !*h || strlen(h) >= sizeof(out->host)) {
			snprintf(err, errlen, "%s: bad address '%s:%s'", name, addr, colon + 1);
			return -EINVAL;
		}
		strcpy(out->host, h);
		snprintf(out->port, sizeof(out->port), "%lu", port);
	}
	const char *o = k + al;
	while (*o == ',') {
		o++;
		size_t ol = strcspn(o, ",");
		char opt[4200];
		if (ol == 0 || ol >= sizeof(opt)) {
			snprintf(err, errlen, "%s: empty or too long option", name);
			return -EINVAL;
		}
		memcpy(opt, o, ol);
		opt[ol] = 0;
		o += ol;
		char *val = strchr(opt, '=');
		if (!val || !val[1]) {
			snprintf(err, errlen, "%s: option '%s' needs a value", name, opt);
			return -EINVAL;
		}
		*val++ = 0;
		if (spec_option(name, opt, val, out, err, errlen) < 0)
			return -EINVAL;
	}
	if (!out->kaslr_given)
		out->kaslr_auto = out->symsrc == GDB_SYM_SYSMAP || out->symsrc == GDB_SYM_VMLINUX;
	if (out->kaslr_auto && (!out->symsrc || out->symsrc == GDB_SYM_GUEST)) {
		snprintf(err, errlen, "%s: kaslr=auto needs a symbol file (kallsyms=FILE, sysmap= or vmlinux=); "
			 "symbols read from guest memory find the offset themselves", name);
		return -EINVAL;
	}
	if (out->kaslr_given && (!out->symsrc || out->symsrc == GDB_SYM_GUEST)) {
		snprintf(err, errlen, "%s: kaslr= needs a symbol file (kallsyms=FILE, sysmap= or vmlinux=); "
			 "symbols read from guest memory find the offset themselves", name);
		return -EINVAL;
	}
	return 0;
}

static bool addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return true;
		/* ::ffff:127.x.y.z */
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

int gdb_check_loopback(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int r = getaddrinfo(host, port, &hints, &res);
	if (r) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(r));
		return -ENOENT;
	}
	int ret = 0;
	for (ai = res; ai; ai = ai->ai_next) {
		if (!addr_is_loopback(ai->ai_addr)) {
			snprintf(err, errlen, "%s is not a loopback address; a gdb stub gives full control "
				 "of the VM, use a unix socket or 127.0.0.1, or pass --allow-remote-stub", host);
			ret = -EPERM;
			break;
		}
	}
	freeaddrinfo(res);
	return ret;
}
