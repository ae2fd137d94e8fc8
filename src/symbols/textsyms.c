// SPDX-License-Identifier: MIT
/*
 * Loaders of the text symbol sources into tables: /proc/kallsyms and
 * System.map (lines read by kallsyms_next, kallsyms.c), /proc/modules,
 * and perf's JIT maps (/tmp/perf-PID.map, "START SIZE name" in hex). The
 * input is an embedded blob from a recording, i.e. untrusted: every line
 * is bounded by the buffer length (no NUL needed), malformed lines are
 * counted and skipped. Also the one reader of a perf map file in /tmp
 * (sym_perfmap_read), which decides whose files are believed.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "symbols/kallsyms.h"
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ksyms_parse(const char *text, size_t len, uint64_t bias, struct ksym_sink *sink)
{
	const char *p = text, *end = text + len;
	struct sym_table *last_mod = NULL;
	const char *last_name = NULL;
	size_t last_len = 0;
	struct kallsyms_line l;
	int r;
	while ((r = kallsyms_next(&p, end, sink->delta ? KALLSYMS_DELTA : 0, &l)) != KALLSYMS_END) {
		sink->lines++;
		if (!l.addr_end) {
			sink->bad_lines++;
			continue;
		}
		uint64_t addr = l.addr;
		if (sink->delta) {
			/* a malformed line after its address still moves the base:
			 * the writer took its address too */
			addr = l.neg ? sink->prev - addr : sink->prev + addr;
			sink->prev = addr;
		}
		if (r == KALLSYMS_BAD) {
			sink->bad_lines++;
			continue;
		}
		char type = l.type;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0) {
			/* kptr_restrict hides addresses as zeros: useless, not malformed */
			sink->zero_addrs++;
			continue;
		}
		unsigned prio = type == 'T' ? 3 : type == 'W' || type == 'w' ? 2 : 1;
		if (!l.mod && sink->core) {
			ktab_add(sink->core, addr + bias, sink->base + (uint64_t)(l.name - text),
				 l.name, l.namelen, prio);
			continue;
		}
		struct sym_table *t = sink->kernel;
		if (l.mod) {
			if (!(last_mod && last_len == l.modlen && !memcmp(last_name, l.mod, l.modlen))) {
				last_mod = sink->module ? sink->module(sink->ctx, l.mod, l.modlen) : NULL;
				last_name = l.mod;
				last_len = l.modlen;
			}
			t = last_mod;
		}
		if (t)
			symtab_add(t, addr + bias, 0, 0, l.name, l.namelen, prio);
	}
}

void kmodules_parse(const char *text, size_t len,
		    void (*cb)(void *ctx, const struct kmod_range *r), void *ctx)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *le = text_line_end(p, end);
		const char *next = le < end ? le + 1 : end;
		/* name size refcount deps state address [taint] */
		const char *f[6];
		size_t fl[6];
		int nf = 0;
		const char *q = p;
		while (nf < 6) {
			q = text_skip_blank(q, le);
			if (q == le)
				break;
			f[nf] = q;
			while (q < le && *q != ' ' && *q != '\t' && *q != '\r')
				q++;
			fl[nf] = (size_t)(q - f[nf]);
			nf++;
		}
		if (nf == 6) {
			uint64_t size = 0, addr;
			const char *s = f[1];
			bool ok = fl[1] > 0 && fl[1] < 20;
			for (size_t i = 0; ok && i < fl[1]; i++) {
				if (s[i] < '0' || s[i] > '9')
					ok = false;
				else
					size = size * 10 + (uint64_t)(s[i] - '0');
			}
			const char *a = f[5];
			if (ok && text_parse_hex(&a, f[5] + fl[5], &addr) && a == f[5] + fl[5] && addr && size) {
				struct kmod_range r = { f[0], fl[0], addr, size };
				cb(ctx, &r);
			}
		}
		p = next;
	}
}

void perfmap_parse(const char *text, size_t len, struct sym_table *t)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *le = text_line_end(p, end);
		const char *next = le < end ? le + 1 : end;
		const char *q = text_skip_blank(p, le);
		uint64_t start, size;
		if (text_parse_hex(&q, le, &start) && q < le && (*q == ' ' || *q == '\t')) {
			q = text_skip_blank(q, le);
			if (text_parse_hex(&q, le, &size) && q < le && (*q == ' ' || *q == '\t')) {
				q = text_skip_blank(q, le);
				const char *ne = le;
				while (ne > q && (ne[-1] == '\r' || ne[-1] == ' '))
					ne--;
				/* names may contain spaces: the rest of the line */
				if (ne > q && size)
					symtab_add(t, start, size, 0, q, (size_t)(ne - q), 3);
			}
		}
		p = next;
	}
}

/*
 * Any local user can create /tmp/perf-PID.map for any pid before or after
 * the recording, and its names would then name another user's samples
 * (perf ignores such files for that reason). Believed only when the file
 * itself, checked on the opened fd so that it cannot be swapped after the
 * check, is a regular file owned by the reader, root or the process's own
 * user (when the caller knows it) and writable by nobody else; a symbolic
 * link is never followed (O_NOFOLLOW: the link is the planted part).
 */
int sym_perfmap_read(uint32_t pid, uint32_t owner, char **data, size_t *len, char *why, size_t whylen)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
	if (data) {
		*data = NULL;
		*len = 0;
	}
	if (whylen)
		why[0] = '\0';
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			snprintf(why, whylen, "%s: a symbolic link, not used", path);
		else if (e != ENOENT)
			snprintf(why, whylen, "%s: %s, not used", path, strerror(e));
		return e == ELOOP ? SYM_PERFMAP_UNTRUSTED : -e;
	}
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s: %s, not used", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = SYM_PERFMAP_UNTRUSTED;
		snprintf(why, whylen, "%s: not a regular file, not used", path);
	} else if (st.st_uid != geteuid() && st.st_uid != 0 &&
		   (owner == SYM_NO_OWNER || st.st_uid != owner)) {
		ret = SYM_PERFMAP_UNTRUSTED;
		snprintf(why, whylen, "%s: owned by uid %u, neither this user%s nor root, not used",
			 path, (unsigned)st.st_uid, owner == SYM_NO_OWNER ? "" : ", the process's");
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = SYM_PERFMAP_UNTRUSTED;
		snprintf(why, whylen, "%s: writable by group or others (mode %03o), not used",
			 path, (unsigned)(st.st_mode & 0777));
	} else if (data) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		ret = file_read_fd(fd, st.st_size > 0 ? (uint64_t)st.st_size : 0, LOCAL_TEXT_MAX,
				   data, len);
		if (ret < 0)
			snprintf(why, whylen, "%s: %s, not used", path, file_strerror(ret));
	}
	close(fd);
	return ret;
}
