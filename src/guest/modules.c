// SPDX-License-Identifier: MIT
/*
 * The guest's modules and their symbols (see modules.h).
 *
 * For each entry of the `modules` list this reads the struct module fields
 * the layout names (list.next, name, kallsyms, the core text's base and
 * size) in one transfer when they lie close together, then the module's
 * struct mod_kallsyms and its three arrays, each in one bulk read. After a
 * module's init has run, mod->kallsyms points at core_kallsyms, which the
 * kernel lays out as symtab, strtab, typetab back to back
 * (kernel/module/kallsyms.c: "add_kallsyms() computes strtab_size as
 * core_typeoffs - stroffs"), so the string table's end is typetab: a table
 * not laid out so (a module still loading, or a lie) does not validate.
 *
 * A module's table is used whole or not at all: a name offset past the
 * string table, a name without its NUL within KSYM_NAME_LEN, a name with
 * blanks or control bytes, a type that is not a letter or '?' make the
 * module skipped. Symbols with value 0 or an empty name (symbol 0 is the
 * null symbol) are left out, as /proc/kallsyms leaves them out; so are
 * text symbols outside the module's core text (freed init text), when the
 * layout knows the core text. Types are written in lower case: the export
 * table (which /proc/kallsyms upper-cases by) is not read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/modules.h"
#include "util/le.h"
#include "util/xalloc.h"

#define MOD_NAME_MAX  256u        /* layout's name size bound (MODULE_NAME_LEN: 56) */
#define SPAN_MAX      4096u       /* fields this close are read in one transfer */
#define SYM_NAME_MAX  512u        /* KSYM_NAME_LEN (6.1+), with the NUL */
#define CORE_SIZE_MAX (1u << 30)  /* x86_64's module area is 1 GiB */
#define ELF64_SYM     24u

struct walk {
	struct guest_mem *m;
	const struct guest_layout *l;
	struct guest_modsyms *out;
	size_t cap;
	size_t skipped;
	bool have_core;
	char *why;
	size_t whylen;
};

/* One field of a guest struct: size bytes at off, copied to dst. */
struct field {
	uint32_t off, size;
	void *dst;
};

static void say(struct walk *w, bool overwrite, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct walk *w, bool overwrite, const char *fmt, ...)
{
	if (!w->whylen || (w->why[0] && !overwrite))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->why, w->whylen, fmt, ap);
	va_end(ap);
}

static uint64_t budget_left(const struct guest_mem *m)
{
	uint64_t b = m->budget ? m->budget : GUEST_MEM_BUDGET;
	return m->bytes < b ? b - m->bytes : 0;
}

/* Reads the fields of the struct at base: one transfer when they span at
 * most SPAN_MAX bytes, else one each. Field sizes are at most
 * MOD_NAME_MAX, offsets anything the layout says (an address that wraps
 * fails in guest_mem_read). */
static int read_fields(struct guest_mem *m, uint64_t base, const struct field *f, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (f[i].off < lo)
			lo = f[i].off;
		if ((uint64_t)f[i].off + f[i].size > hi)
			hi = (uint64_t)f[i].off + f[i].size;
	}
	if (base + hi < base)
		return -EFAULT;   /* wraps: the layout's offsets are data too */
	if (hi - lo <= SPAN_MAX) {
		uint8_t buf[SPAN_MAX];
		int r = guest_mem_read(m, base + lo, buf, (size_t)(hi - lo));
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++)
			memcpy(f[i].dst, buf + (f[i].off - lo), f[i].size);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int r = guest_mem_read(m, base + f[i].off, f[i].dst, f[i].size);
		if (r < 0)
			return r;
	}
	return 0;
}

struct modhdr {
	uint8_t next[8], kallsyms[8], core_base[8], core_size[4];
	char name[MOD_NAME_MAX + 1];
};

static int read_header(struct walk *w, uint64_t mod, struct modhdr *h)
{
	const struct guest_layout *l = w->l;
	struct field f[5] = {
		{ l->mod_list, 8, h->next },
		{ l->mod_name, l->mod_name_len, h->name },
		{ l->mod_kallsyms, 8, h->kallsyms },
		{ l->mod_core_base, 8, h->core_base },
		{ l->mod_core_size, 4, h->core_size },
	};
	memset(h, 0, sizeof(*h));
	return read_fields(w->m, mod, f, w->have_core ? 5 : 3);
}

/* A module name: NUL-terminated within its field, [A-Za-z0-9_-]+. */
static bool name_ok(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	if (n == 0 || n == max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static void append(struct walk *w, const char *s, size_t n)
{
	xgrow((void **)&w->out->text, &w->cap, w->out->len + n + 1, 1);
	memcpy(w->out->text + w->out->len, s, n);
	w->out->len += n;
	w->out->text[w->out->len] = 0;
}

/* The module's table as read: symtab[n], strtab[strlen], typetab[n]. */
struct table {
	uint8_t *sym;
	char *str, *type;
	uint32_t n, strlen;
};

/* Appends the lines of one validated table. Returns the number of lines,
 * -EBADMSG (does not validate: nothing appended, *why says why) or
 * -E2BIG (GUEST_MODULES_MAX_TEXT). */
static long emit(struct walk *w, const struct table *t, const char *mod, uint64_t cbase, uint64_t csize)
{
	size_t start = w->out->len;
	long lines = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		const uint8_t *s = t->sym + (size_t)i * ELF64_SYM;
		uint32_t st_name = get32(s);
		uint64_t value = get64(s + 8);
		if (value == 0)
			continue;
		const char *why = NULL;
		char type = t->type[i];
		if (st_name >= t->strlen)
			why = "name offset past the string table";
		size_t left = why ? 0 : t->strlen - st_name;
		const char *name = t->str + st_name;
		size_t len = why ? 0 : strnlen(name, left < SYM_NAME_MAX ? left : SYM_NAME_MAX);
		if (!why && len == (left < SYM_NAME_MAX ? left : SYM_NAME_MAX))
			why = "name without NUL";
		for (size_t k = 0; !why && k < len; k++)
			if ((unsigned char)name[k] <= ' ' || (unsigned char)name[k] >= 0x7f)
				why = "name with a blank or non-ASCII byte";
		if (!why && !((type >= 'a' && type <= 'z') || (type >= 'A' && type <= 'Z') || type == '?'))
			why = "type is not a letter";
		if (why) {
			w->out->len = start;
			w->out->text[start] = 0;
			say(w, false, "module %s: symbol %" PRIu32 ": %s", mod, i, why);
			return -EBADMSG;
		}
		if (len == 0)
			continue;
		if (type >= 'A' && type <= 'Z')
			type = (char)(type - 'A' + 'a');
		if (type == 't' && w->have_core && (value < cbase || value - cbase >= csize))
			continue;   /* init text, freed after the module's init */
		char line[16 + 3 + SYM_NAME_MAX + 3 + MOD_NAME_MAX + 2];
		int n = snprintf(line, sizeof(line), "%016" PRIx64 " %c %.*s\t[%s]\n", value, type, (int)len, name, mod);
		if (w->out->len + (size_t)n > GUEST_MODULES_MAX_TEXT) {
			w->out->len = start;
			w->out->text[start] = 0;
			return -E2BIG;
		}
		append(w, line, (size_t)n);
		lines++;
	}
	return lines;
}

/* Reads and appends one module's symbols. Returns 0, -EBADMSG (does not
 * validate), -E2BIG (budget or text bound), or a read error; *why names
 * the cause. */
static int read_symbols(struct walk *w, const struct modhdr *h, const char *mod)
{
	const struct guest_layout *l = w->l;
	uint64_t ks = get64(h->kallsyms), cbase = get64(h->core_base), csize = get32(h->core_size);
	if (!guest_kptr(ks)) {
		say(w, false, "module %s: kallsyms pointer 0x%" PRIx64 " is not a kernel address", mod, ks);
		return -EBADMSG;
	}
	if (w->have_core && (!guest_kptr(cbase) || csize == 0 || csize > CORE_SIZE_MAX)) {
		say(w, false, "module %s: core text 0x%" PRIx64 "+0x%" PRIx64 " out of range", mod, cbase, csize);
		return -EBADMSG;
	}
	uint8_t symtab[8], num[4], strtab[8], typetab[8];
	struct field f[4] = {
		{ l->mks_symtab, 8, symtab }, { l->mks_num_symtab, 4, num },
		{ l->mks_strtab, 8, strtab }, { l->mks_typetab, 8, typetab },
	};
	int r = read_fields(w->m, ks, f, 4);
	if (r < 0) {
		say(w, false, "module %s: cannot read its mod_kallsyms at 0x%" PRIx64 ": %s", mod, ks, strerror(-r));
		return r;
	}
	uint64_t sym = get64(symtab), str = get64(strtab), type = get64(typetab);
	uint32_t n = get32(num);
	if (n == 0 || n > GUEST_MODULE_MAX_SYMS) {
		/* the kernel always keeps symbol 0, the null symbol */
		say(w, false, "module %s: %" PRIu32 " symbols (bound 1..%u)", mod, n, GUEST_MODULE_MAX_SYMS);
		return -EBADMSG;
	}
	if (!guest_kptr(sym) || !guest_kptr(str) || !guest_kptr(type)) {
		say(w, false, "module %s: symtab/strtab/typetab pointer not a kernel address", mod);
		return -EBADMSG;
	}
	if (type <= str || type - str > GUEST_MODULE_MAX_STRTAB) {
		say(w, false, "module %s: typetab does not follow strtab within %u bytes", mod, GUEST_MODULE_MAX_STRTAB);
		return -EBADMSG;
	}
	struct table t = { .n = n, .strlen = (uint32_t)(type - str) };
	uint64_t need = (uint64_t)n * ELF64_SYM + t.strlen + n;
	if (need > budget_left(w->m)) {
		say(w, true, "module %s: its table (%" PRIu64 " bytes) passes the read budget", mod, need);
		return -E2BIG;
	}
	t.sym = xmalloc((size_t)n * ELF64_SYM);
	t.str = xmalloc(t.strlen);
	t.type = xmalloc(n);
	if ((r = guest_mem_read(w->m, sym, t.sym, (size_t)n * ELF64_SYM)) < 0 ||
	    (r = guest_mem_read(w->m, str, t.str, t.strlen)) < 0 ||
	    (r = guest_mem_read(w->m, type, t.type, n)) < 0) {
		say(w, r == -E2BIG, "module %s: cannot read its symbol table: %s", mod, strerror(-r));
	} else {
		long k = emit(w, &t, mod, cbase, csize);
		if (k == -E2BIG)
			say(w, true, "module %s: the symbol text passes %u bytes", mod, GUEST_MODULES_MAX_TEXT);
		r = k < 0 ? (int)k : 0;
		if (k > 0)
			w->out->nsyms += (size_t)k;
	}
	free(t.sym);
	free(t.str);
	free(t.type);
	return r;
}

static int check_layout(const struct guest_layout *l, bool *have_core, char *why, size_t whylen)
{
	static const struct { size_t off; const char *name; } need[] = {
		{ offsetof(struct guest_layout, mod_list), "module.list" },
		{ offsetof(struct guest_layout, mod_name), "module.name" },
		{ offsetof(struct guest_layout, mod_kallsyms), "module.kallsyms" },
		{ offsetof(struct guest_layout, mks_symtab), "mod_kallsyms.symtab" },
		{ offsetof(struct guest_layout, mks_num_symtab), "mod_kallsyms.num_symtab" },
		{ offsetof(struct guest_layout, mks_strtab), "mod_kallsyms.strtab" },
		{ offsetof(struct guest_layout, mks_typetab), "mod_kallsyms.typetab" },
	};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		uint32_t v;
		memcpy(&v, (const char *)l + need[i].off, sizeof(v));
		if (v == GUEST_NO_OFFSET) {
			snprintf(why, whylen, "the guest's BTF has no %s", need[i].name);
			return -ENOENT;
		}
	}
	if (l->modules == 0) {
		snprintf(why, whylen, "no `modules` symbol in the guest's symbol table");
		return -ENOENT;
	}
	if (!guest_kptr(l->modules)) {
		snprintf(why, whylen, "`modules` at 0x%" PRIx64 " is not a kernel address", l->modules);
		return -EINVAL;
	}
	if (l->mod_name_len == 0 || l->mod_name_len > MOD_NAME_MAX) {
		snprintf(why, whylen, "module.name is %" PRIu32 " bytes (bound 1..%u)", l->mod_name_len, MOD_NAME_MAX);
		return -EINVAL;
	}
	*have_core = l->mod_core_base != GUEST_NO_OFFSET && l->mod_core_size != GUEST_NO_OFFSET;
	return 0;
}

/* Is node already in seen[0..n)? The list is at most GUEST_MODULES_MAX
 * long, so a linear search is at most 8 M comparisons in all. */
static bool seen_before(const uint64_t *seen, size_t n, uint64_t node)
{
	for (size_t i = 0; i < n; i++)
		if (seen[i] == node)
			return true;
	return false;
}

int guest_modules_read(struct guest_mem *m, const struct guest_layout *l,
		       struct guest_modsyms *out, size_t *skipped,
		       char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	if (skipped)
		*skipped = 0;
	if (whylen)
		why[0] = 0;
	struct walk w = { .m = m, .l = l, .out = out, .why = why, .whylen = whylen };
	int r = check_layout(l, &w.have_core, why, whylen);
	if (r < 0)
		return r;
	uint64_t head = l->modules, node;
	if ((r = guest_mem_u64(m, head, &node)) < 0) {
		snprintf(why, whylen, "cannot read the modules list at 0x%" PRIx64 ": %s", head, strerror(-r));
		return r;
	}
	append(&w, "", 0);
	uint64_t *seen = xmalloc(GUEST_MODULES_MAX * sizeof(*seen));
	size_t nseen = 0;
	bool cut = false;
	while (node != head) {
		if (!guest_kptr(node) || !guest_kptr(node - l->mod_list)) {
			say(&w, true, "module list pointer 0x%" PRIx64 " is not a kernel address", node);
			cut = true;
		} else if (seen_before(seen, nseen, node)) {
			say(&w, true, "module list loops back to 0x%" PRIx64 " after %zu entries", node, nseen);
			cut = true;
		} else if (nseen == GUEST_MODULES_MAX) {
			say(&w, true, "module list longer than %u entries", GUEST_MODULES_MAX);
			cut = true;
		}
		if (cut)
			break;
		seen[nseen++] = node;
		uint64_t mod = node - l->mod_list;
		struct modhdr h;
		if ((r = read_header(&w, mod, &h)) < 0) {
			say(&w, true, "cannot read the module at 0x%" PRIx64 ": %s", mod, strerror(-r));
			cut = true;
			break;
		}
		if (!name_ok(h.name, l->mod_name_len)) {
			say(&w, false, "module at 0x%" PRIx64 ": name not NUL-terminated or not [A-Za-z0-9_-]", mod);
			w.skipped++;
		} else if ((r = read_symbols(&w, &h, h.name)) < 0) {
			w.skipped++;
			if (r == -E2BIG) {
				cut = true;
				break;
			}
		} else {
			out->nmodules++;
		}
		node = get64(h.next);
	}
	free(seen);
	if (skipped)
		*skipped = w.skipped;
	if (cut && out->nmodules == 0) {
		guest_modsyms_free(out);
		return -EBADMSG;
	}
	return 0;
}

void guest_modsyms_free(struct guest_modsyms *k)
{
	if (!k)
		return;
	free(k->text);
	memset(k, 0, sizeof(*k));
}
