// SPDX-License-Identifier: MIT
/*
 * Parsers for the text symbol sources: /proc/kallsyms and System.map
 * ("addr type name" with an optional "\t[module]": kallsyms_next, the one
 * line parser of the project, see kallsyms.h), /proc/modules, and
 * perf's JIT maps (/tmp/perf-PID.map, "START SIZE name" in hex). The
 * input is an embedded blob from a recording, i.e. untrusted: every line
 * is bounded by the buffer length (no NUL needed), malformed lines are
 * counted and skipped.
 */
#include "symbols/internal.h"
#include "symbols/kallsyms.h"

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

size_t kallsyms_name_len(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n')
		q++;
	return (size_t)(q - p);
}

/* The fields after a parsed address: "TYPE NAME [MODULE]". False when one
 * is missing. */
static bool parse_fields(const char *q, const char *le, struct kallsyms_line *out)
{
	q = skip_blank(q, le);
	if (q == le)
		return false;
	out->type = *q++;
	if (q == le || (*q != ' ' && *q != '\t'))
		return false;
	q = skip_blank(q, le);
	out->name = q;
	out->namelen = kallsyms_name_len(q, le);
	if (!out->namelen)
		return false;
	q = skip_blank(q + out->namelen, le);
	if (q < le && *q == '[') {
		const char *m = q + 1, *me = memchr(m, ']', (size_t)(le - m));
		if (me && me > m) {
			out->mod = m;
			out->modlen = (size_t)(me - m);
		}
	}
	return true;
}

int kallsyms_next(const char **pp, const char *end, unsigned flags, struct kallsyms_line *out)
{
	const char *p = *pp;
	while (p < end) {
		const char *le = line_end(p, end);
		const char *q = skip_blank(p, le);
		const char *next = le < end ? le + 1 : end;
		if (q == le) {
			p = next;
			continue;
		}
		*pp = next;
		memset(out, 0, sizeof(*out));
		out->line = p;
		out->linelen = (size_t)(le - p);
		out->neg = (flags & KALLSYMS_DELTA) && *q == '-';
		if (out->neg)
			q++;
		if (!parse_hex(&q, le, &out->addr) || q == le || (*q != ' ' && *q != '\t')) {
			out->neg = false;
			out->addr = 0;
			return KALLSYMS_BAD;
		}
		out->addr_end = q;
		return parse_fields(q, le, out) ? KALLSYMS_LINE : KALLSYMS_BAD;
	}
	*pp = end;
	return KALLSYMS_END;
}

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
