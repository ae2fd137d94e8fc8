// SPDX-License-Identifier: MIT
/*
 * Parsers for the text symbol sources: /proc/kallsyms and System.map
 * ("addr type name" with an optional "\t[module]"), /proc/modules, and
 * perf's JIT maps (/tmp/perf-PID.map, "START SIZE name" in hex). The
 * input is an embedded blob from a recording, i.e. untrusted: every line
 * is bounded by the buffer length (no NUL needed), malformed lines are
 * counted and skipped.
 */
#include "symbols/internal.h"

#include <string.h>

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

static bool parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t v = 0;
	int digits = 0;
	for (; p < end; p++) {
		int d;
		if (*p >= '0' && *p <= '9') d = *p - '0';
		else if (*p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
		else break;
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

void ksyms_parse(const char *text, size_t len, uint64_t bias, struct ksym_sink *sink)
{
	const char *p = text, *end = text + len;
	struct sym_table *last_mod = NULL;
	const char *last_name = NULL;
	size_t last_len = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		const char *q = skip_blank(p, le);
		const char *next = le < end ? le + 1 : end;
		if (q == le) {
			p = next;
			continue;
		}
		sink->lines++;
		uint64_t addr;
		bool neg = sink->delta && *q == '-';
		if (neg)
			q++;
		if (!parse_hex(&q, le, &addr) || q == le || (*q != ' ' && *q != '\t')) {
			sink->bad_lines++;
			p = next;
			continue;
		}
		if (sink->delta) {
			addr = neg ? sink->prev - addr : sink->prev + addr;
			sink->prev = addr;
		}
		q = skip_blank(q, le);
		if (q == le) {
			sink->bad_lines++;
			p = next;
			continue;
		}
		char type = *q++;
		if (q == le || (*q != ' ' && *q != '\t')) {
			sink->bad_lines++;
			p = next;
			continue;
		}
		q = skip_blank(q, le);
		const char *name = q;
		while (q < le && *q != ' ' && *q != '\t' && *q != '\r')
			q++;
		size_t nlen = (size_t)(q - name);
		if (!nlen) {
			sink->bad_lines++;
			p = next;
			continue;
		}
		const char *mod = NULL;
		size_t modlen = 0;
		q = skip_blank(q, le);
		if (q < le && *q == '[') {
			const char *m = q + 1, *me = memchr(m, ']', (size_t)(le - m));
			if (me && me > m) {
				mod = m;
				modlen = (size_t)(me - m);
			}
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W') {
			p = next;
			continue;
		}
		if (addr == 0) {
			/* kptr_restrict hides addresses as zeros: useless, not malformed */
			sink->zero_addrs++;
			p = next;
			continue;
		}
		unsigned prio = type == 'T' ? 3 : type == 'W' || type == 'w' ? 2 : 1;
		if (!mod && sink->core) {
			ktab_add(sink->core, addr + bias, sink->base + (uint64_t)(name - text),
				 name, nlen, prio);
			p = next;
			continue;
		}
		struct sym_table *t = sink->kernel;
		if (mod) {
			if (!(last_mod && last_len == modlen && !memcmp(last_name, mod, modlen))) {
				last_mod = sink->module ? sink->module(sink->ctx, mod, modlen) : NULL;
				last_name = mod;
				last_len = modlen;
			}
			t = last_mod;
		}
		if (t)
			symtab_add(t, addr + bias, 0, 0, name, nlen, prio);
		p = next;
	}
}

void kmodules_parse(const char *text, size_t len,
		    void (*cb)(void *ctx, const struct kmod_range *r), void *ctx)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *le = line_end(p, end);
		const char *next = le < end ? le + 1 : end;
		/* name size refcount deps state address [taint] */
		const char *f[6];
		size_t fl[6];
		int nf = 0;
		const char *q = p;
		while (nf < 6) {
			q = skip_blank(q, le);
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
			if (ok && parse_hex(&a, f[5] + fl[5], &addr) && a == f[5] + fl[5] && addr && size) {
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
		const char *le = line_end(p, end);
		const char *next = le < end ? le + 1 : end;
		const char *q = skip_blank(p, le);
		uint64_t start, size;
		if (parse_hex(&q, le, &start) && q < le && (*q == ' ' || *q == '\t')) {
			q = skip_blank(q, le);
			if (parse_hex(&q, le, &size) && q < le && (*q == ' ' || *q == '\t')) {
				q = skip_blank(q, le);
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
