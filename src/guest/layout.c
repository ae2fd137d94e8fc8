// SPDX-License-Identifier: MIT
/*
 * The guest kernel's structure layouts from its embedded BTF (layout.h).
 *
 * libbpf parses and validates the blob (btf__new checks the header, the
 * string section and that every type's member list fits the type
 * section); this file only looks members up by name. The blob is still
 * hostile after that: type ids may point anywhere (btf__type_by_id
 * bounds them), anonymous members may nest without end or refer to
 * themselves, offsets and sizes may be absurd. So every lookup has a
 * depth and a work bound, every field's size is checked against what
 * the kernel's C type has, and every offset must lie inside its struct.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "guest/layout.h"
#include "util/le.h"
#include "util/xalloc.h"

/* Anonymous struct/union nesting followed (the kernel's deepest for
 * these fields: 2) and members visited per lookup (task_struct has ~250;
 * a crafted BTF of anonymous members nesting into each other stops here). */
#define MAX_ANON_DEPTH 8
#define MAX_VISITS     100000u
#define MAX_MODS       32     /* typedef/const/volatile chain */

struct bctx {
	const struct btf *btf;
	char *why;
	size_t whylen;
};

static int fail(struct bctx *c, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (c->why && c->whylen)
		vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return err;
}

/* The type id behind typedefs and qualifiers; NULL for a bad id or a
 * chain longer than MAX_MODS. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 id, __u32 *out_id)
{
	for (int i = 0; i < MAX_MODS; i++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t)
			return NULL;
		if (!btf_is_typedef(t) && !btf_is_mod(t)) {
			if (out_id)
				*out_id = id;
			return t;
		}
		id = t->type;
	}
	return NULL;
}

/* Member `name` of composite t, also inside anonymous struct/union
 * members: its byte offset from t's start and type id. -ENOENT, or
 * -EBADMSG (a bitfield, an unaligned offset, a lookup over its bounds). */
static int find_member(const struct btf *btf, const struct btf_type *t, const char *name,
		       unsigned depth, unsigned *visits, uint32_t *off, __u32 *type)
{
	const struct btf_member *m = btf_members(t);
	unsigned n = btf_vlen(t);
	for (unsigned i = 0; i < n; i++) {
		if (++*visits > MAX_VISITS)
			return -EBADMSG;
		const char *mn = btf__name_by_offset(btf, m[i].name_off);
		__u32 bits = btf_member_bit_offset(t, i);
		if (mn && *mn) {
			if (strcmp(mn, name))
				continue;
			if (btf_member_bitfield_size(t, i) || bits % 8)
				return -EBADMSG;
			*off = bits / 8;
			*type = m[i].type;
			return 0;
		}
		if (depth >= MAX_ANON_DEPTH)
			continue;
		const struct btf_type *sub = skip_mods(btf, m[i].type, NULL);
		if (!sub || !btf_is_composite(sub))
			continue;
		uint32_t o;
		int r = find_member(btf, sub, name, depth + 1, visits, &o, type);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		if (bits % 8 || o > UINT32_MAX - bits / 8)
			return -EBADMSG;
		*off = bits / 8 + o;
		return 0;
	}
	return -ENOENT;
}

/* The struct (or union) called name. */
static const struct btf_type *find_struct(struct bctx *c, const char *name, __u32 *id)
{
	__s32 i = btf__find_by_name_kind(c->btf, name, BTF_KIND_STRUCT);
	if (i <= 0)
		return NULL;
	const struct btf_type *t = btf__type_by_id(c->btf, (__u32)i);
	if (id)
		*id = (__u32)i;
	return t && btf_is_composite(t) ? t : NULL;
}

/*
 * A field of struct sname at a dotted path ("core_layout.base"): offset
 * from the struct's start into *off. Its size must be in [minsz, maxsz]
 * (*size gets it, may be NULL) and it must end inside the outer struct.
 * Returns 0, -ENOENT or -EBADMSG with *why set.
 */
static int field(struct bctx *c, const struct btf_type *st, const char *sname, const char *path,
		 uint64_t minsz, uint64_t maxsz, uint32_t *off, uint32_t *size)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", path);
	const struct btf_type *t = st;
	uint64_t total = 0;
	__u32 type = 0;
	for (char *save = NULL, *part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		if (!t || !btf_is_composite(t))
			return fail(c, -EBADMSG, "BTF: %s.%s: '%s' is not inside a struct", sname, path, part);
		unsigned visits = 0;
		uint32_t o;
		int r = find_member(c->btf, t, part, 0, &visits, &o, &type);
		if (r == -ENOENT)
			return fail(c, r, "BTF: struct %s has no member %s", sname, path);
		if (r < 0)
			return fail(c, r, "BTF: %s.%s is a bitfield, unaligned, or nested beyond bounds", sname, path);
		total += o;
		t = skip_mods(c->btf, type, NULL);
	}
	__s64 sz = btf__resolve_size(c->btf, type);
	if (sz < 0 || (uint64_t)sz < minsz || (uint64_t)sz > maxsz)
		return fail(c, -EBADMSG, "BTF: %s.%s has size %lld, expected %llu..%llu", sname, path,
			    (long long)sz, (unsigned long long)minsz, (unsigned long long)maxsz);
	if (total + (uint64_t)sz > st->size)
		return fail(c, -EBADMSG, "BTF: %s.%s (offset %llu) ends past the struct's %u bytes", sname, path,
			    (unsigned long long)total, st->size);
	*off = (uint32_t)total;
	if (size)
		*size = (uint32_t)sz;
	return 0;
}

static int task_fields(struct bctx *c, struct guest_layout *l)
{
	const struct btf_type *t = find_struct(c, "task_struct", NULL);
	if (!t)
		return fail(c, -ENOENT, "BTF has no struct task_struct");
	int r;
	if ((r = field(c, t, "task_struct", "tasks", 16, 16, &l->task_tasks, NULL)) < 0 ||
	    (r = field(c, t, "task_struct", "pid", 4, 4, &l->task_pid, NULL)) < 0 ||
	    (r = field(c, t, "task_struct", "tgid", 4, 4, &l->task_tgid, NULL)) < 0 ||
	    (r = field(c, t, "task_struct", "comm", 8, 64, &l->task_comm, &l->task_comm_len)) < 0 ||
	    (r = field(c, t, "task_struct", "mm", 8, 8, &l->task_mm, NULL)) < 0 ||
	    (r = field(c, t, "task_struct", "real_parent", 8, 8, &l->task_real_parent, NULL)) < 0 ||
	    (r = field(c, t, "task_struct", "flags", 4, 4, &l->task_flags, NULL)) < 0)
		return r;
	/* optional: a task's identity is then its address, pid and mm */
	if (field(c, t, "task_struct", "start_time", 8, 8, &l->task_start_time, NULL) < 0) {
		l->task_start_time = GUEST_NO_OFFSET;
		if (c->why && c->whylen)
			c->why[0] = 0;
	}
	t = find_struct(c, "mm_struct", NULL);
	if (!t)
		return fail(c, -ENOENT, "BTF has no struct mm_struct");
	return field(c, t, "mm_struct", "pgd", 8, 8, &l->mm_pgd, NULL);
}

/* The value of enumerator name (in any enum), or -1. */
static long long enum_value(struct bctx *c, const char *ename, const char *name)
{
	__s32 id = btf__find_by_name_kind(c->btf, ename, BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(c->btf, (__u32)id) : NULL;
	if (!t || !btf_is_enum(t))
		return -1;
	const struct btf_enum *e = btf_enum(t);
	for (unsigned i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(c->btf, e[i].name_off);
		if (n && !strcmp(n, name))
			return e[i].val;
	}
	return -1;
}

/* Core text of a module: mem[MOD_TEXT] (6.4+) or core_layout (<6.4). */
static void module_core(struct bctx *c, const struct btf_type *mod, struct guest_layout *l)
{
	uint32_t off;
	if (field(c, mod, "module", "core_layout.base", 8, 8, &l->mod_core_base, NULL) == 0) {
		if (field(c, mod, "module", "core_layout.size", 4, 4, &l->mod_core_size, NULL) < 0)
			l->mod_core_base = GUEST_NO_OFFSET;
		return;
	}
	/* 6.4+: struct module_memory mem[MOD_MEM_NUM_TYPES], indexed by enum mod_mem_type. */
	uint32_t memsz;
	if (field(c, mod, "module", "mem", 1, UINT32_MAX, &off, &memsz) < 0)
		return;
	const struct btf_type *mm = find_struct(c, "module_memory", NULL);
	long long idx = enum_value(c, "mod_mem_type", "MOD_TEXT");
	if (!mm || idx < 0 || mm->size == 0 || (uint64_t)(idx + 1) * mm->size > memsz)
		return;
	uint32_t b, s;
	if (field(c, mm, "module_memory", "base", 8, 8, &b, NULL) < 0 ||
	    field(c, mm, "module_memory", "size", 4, 4, &s, NULL) < 0)
		return;
	uint64_t elem = (uint64_t)off + (uint64_t)idx * mm->size;
	l->mod_core_base = (uint32_t)(elem + b);
	l->mod_core_size = (uint32_t)(elem + s);
}

/* Module fields: each one missing stays GUEST_NO_OFFSET. */
static void module_fields(struct bctx *c, struct guest_layout *l)
{
	const struct btf_type *t = find_struct(c, "module", NULL);
	if (t) {
		field(c, t, "module", "list", 16, 16, &l->mod_list, NULL);
		uint32_t o, n;
		if (field(c, t, "module", "name", 1, 256, &o, &n) == 0) {
			l->mod_name = o;
			l->mod_name_len = n;
		}
		field(c, t, "module", "kallsyms", 8, 8, &l->mod_kallsyms, NULL);
		module_core(c, t, l);
	}
	t = find_struct(c, "mod_kallsyms", NULL);
	if (t) {
		field(c, t, "mod_kallsyms", "symtab", 8, 8, &l->mks_symtab, NULL);
		field(c, t, "mod_kallsyms", "num_symtab", 4, 4, &l->mks_num_symtab, NULL);
		field(c, t, "mod_kallsyms", "strtab", 8, 8, &l->mks_strtab, NULL);
		field(c, t, "mod_kallsyms", "typetab", 8, 8, &l->mks_typetab, NULL);
	}
}

/* Which per-CPU symbol holds the current task (see layout.h). */
static void percpu_fields(struct bctx *c, struct guest_layout *l)
{
	const struct btf_type *t = find_struct(c, "pcpu_hot", NULL);
	uint32_t off;
	if (t && field(c, t, "pcpu_hot", "current_task", 8, 8, &off, NULL) == 0) {
		snprintf(l->percpu_sym, sizeof(l->percpu_sym), "pcpu_hot");
		l->percpu_current = off;
		return;
	}
	/* 6.1 (and again 6.15+): DEFINE_PER_CPU(struct task_struct *, current_task). */
	snprintf(l->percpu_sym, sizeof(l->percpu_sym), "current_task");
	l->percpu_current = 0;
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void layout_clear(struct guest_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->task_tasks = l->task_pid = l->task_tgid = l->task_comm = GUEST_NO_OFFSET;
	l->task_mm = l->task_real_parent = l->task_flags = l->mm_pgd = GUEST_NO_OFFSET;
	l->task_start_time = GUEST_NO_OFFSET;
	l->mod_list = l->mod_name = l->mod_kallsyms = GUEST_NO_OFFSET;
	l->mod_core_base = l->mod_core_size = GUEST_NO_OFFSET;
	l->mks_symtab = l->mks_num_symtab = l->mks_strtab = l->mks_typetab = GUEST_NO_OFFSET;
}

int guest_layout_from_btf(const void *blob, size_t len, struct guest_layout *l, char *why, size_t whylen)
{
	struct bctx c = { NULL, why, whylen };
	layout_clear(l);
	if (why && whylen)
		why[0] = 0;
	if (len > GUEST_BTF_MAX)
		return fail(&c, -E2BIG, "BTF is %zu bytes, more than the %u MiB accepted", len, GUEST_BTF_MAX >> 20);
	/* The kernel's own BTF check refuses a type section that is not
	 * 4-byte aligned; libbpf does not, and then reads its types (and so
	 * do we) at misaligned addresses. hdr_len at 4, type_off at 8. */
	if (len >= 12) {
		const uint8_t *h = blob;
		uint32_t hdr_len = get32(h + 4), type_off = get32(h + 8);
		if ((hdr_len | type_off) & 3)
			return fail(&c, -EINVAL, "not BTF a kernel accepts: its type section is not 4-byte aligned "
				    "(header %u bytes, types at +%u)", hdr_len, type_off);
	}
	libbpf_print_fn_t old = libbpf_set_print(silent);
	struct btf *btf = btf__new(blob, (__u32)len);
	libbpf_set_print(old);
	if (!btf || libbpf_get_error(btf))
		return fail(&c, -EINVAL, "not BTF (libbpf refused the %zu-byte blob)", len);
	c.btf = btf;
	int r = task_fields(&c, l);
	if (r == 0) {
		module_fields(&c, l);
		percpu_fields(&c, l);
		if (why && whylen)   /* a missing module field is not an error here */
			why[0] = 0;
	} else {
		layout_clear(l);
	}
	btf__free(btf);
	return r;
}

/* The direct map's base without KASLR (CONFIG_RANDOMIZE_MEMORY=n):
 * __PAGE_OFFSET_BASE_L4 / _L5. */
#define PAGE_OFFSET_L4 0xffff888000000000ull
#define PAGE_OFFSET_L5 0xff11000000000000ull
/* __START_KERNEL_map: the kernel image's virtual base, in both modes;
 * __pa_symbol(x) = x - KIMAGE_MAP + phys_base. */
#define KIMAGE_MAP     0xffffffff80000000ull
/* Physical addresses have at most 52 bits on x86-64. */
#define PHYS_MAX       (1ull << 52)
#define ALIAS_BYTES    64u

/* The paging mode when the caller did not give it (see layout.h): the
 * kernel's __pgtable_l5_enabled (an int that is 0 or 1), else the half
 * page_offset_base's value is in. */
static unsigned paging_of(struct guest_mem *m, guest_sym_fn sym, void *symctx, bool have_pob, uint64_t pob,
			  const char **how)
{
	uint64_t a = sym(symctx, "__pgtable_l5_enabled");
	uint32_t v;
	if (guest_kptr(a) && guest_mem_u32(m, a, &v) == 0 && v <= 1) {
		*how = "__pgtable_l5_enabled";
		return v ? GUEST_PAGING_5 : GUEST_PAGING_4;
	}
	if (have_pob) {
		*how = "the half page_offset_base is in";
		return pob >= KERNEL_ADDR_START ? GUEST_PAGING_4 : GUEST_PAGING_5;
	}
	*how = "no page_offset_base";
	return GUEST_PAGING_4;
}

/* Whether the direct map at pob maps the kernel image: a symbol's bytes
 * read through it are the symbol's own (layout.h). 0 (also when the
 * kernel has no phys_base to check with) or -EBADMSG / a read error
 * with *why set. */
static int direct_map_check(struct guest_mem *m, guest_sym_fn sym, void *symctx, uint64_t pob,
			    uint64_t init_task, struct bctx *c)
{
	uint64_t pbs = sym(symctx, "phys_base"), pb;
	if (!guest_kptr(pbs))
		return 0;
	int r = guest_mem_u64(m, pbs, &pb);
	if (r < 0)
		return fail(c, r, "cannot read phys_base at 0x%llx: %s", (unsigned long long)pbs, strerror(-r));
	/* phys_base is the image's physical minus its virtual offset: it
	 * wraps below 0 when KASLR moved the image further virtually */
	if (pb & 0xfff)
		return fail(c, -EBADMSG, "phys_base is 0x%llx: not page-aligned", (unsigned long long)pb);
	const char *name = "linux_banner";
	uint64_t a = sym(symctx, name);
	if (a < KIMAGE_MAP) {
		name = "init_task";
		a = init_task;
	}
	uint64_t phys = a - KIMAGE_MAP + pb;
	if (a < KIMAGE_MAP || phys >= PHYS_MAX || pob > UINT64_MAX - phys - ALIAS_BYTES)
		return fail(c, -EBADMSG, "%s 0x%llx has no direct-map alias to check page_offset_base with", name,
			    (unsigned long long)a);
	uint8_t own[ALIAS_BYTES], alias[ALIAS_BYTES];
	if ((r = guest_mem_read(m, a, own, sizeof(own))) < 0)
		return fail(c, r, "cannot read %s at 0x%llx: %s", name, (unsigned long long)a, strerror(-r));
	r = guest_mem_read(m, pob + phys, alias, sizeof(alias));
	if (r < 0 || memcmp(own, alias, sizeof(own)))
		return fail(c, r < 0 ? r : -EBADMSG, "page_offset_base 0x%llx (5-level paging) does not map the kernel: "
			    "%s through it at 0x%llx %s", (unsigned long long)pob, name,
			    (unsigned long long)(pob + phys), r < 0 ? "cannot be read" : "differs");
	return 0;
}

/* Runtime addresses: what guest_layout_read needs from the symbol table. */
static int read_addresses(struct guest_mem *m, guest_sym_fn sym, void *symctx, struct guest_layout *l,
			  struct bctx *c)
{
	l->init_task = sym(symctx, "init_task");
	if (!guest_kptr(l->init_task))
		return fail(c, -ENOENT, "no init_task symbol in the guest's kallsyms");
	l->modules = sym(symctx, "modules");
	if (l->modules && !guest_kptr(l->modules))
		l->modules = 0;
	l->per_cpu_offset = sym(symctx, "__per_cpu_offset");
	uint64_t pob = sym(symctx, "page_offset_base");
	if (pob) {
		int r = guest_mem_u64(m, pob, &l->page_offset_base);
		if (r < 0)
			return fail(c, r, "cannot read page_offset_base at 0x%llx: %s", (unsigned long long)pob,
				    strerror(-r));
	}
	l->paging = m->paging;
	l->paging_how = "as given";
	if (l->paging != GUEST_PAGING_4 && l->paging != GUEST_PAGING_5)
		l->paging = paging_of(m, sym, symctx, pob != 0, l->page_offset_base, &l->paging_how);
	if (pob) {
		/* KASLR places the direct map on a 1 GiB (PUD) boundary. */
		if (l->page_offset_base < guest_kernel_start(l->paging) || (l->page_offset_base & ((1ull << 30) - 1)))
			return fail(c, -EBADMSG, "page_offset_base is 0x%llx: not a kernel direct-map base "
				    "with %u-level paging (%s)", (unsigned long long)l->page_offset_base,
				    l->paging, l->paging_how);
	} else {
		/* CONFIG_RANDOMIZE_MEMORY=n: the fixed base. */
		l->page_offset_base = l->paging == GUEST_PAGING_5 ? PAGE_OFFSET_L5 : PAGE_OFFSET_L4;
	}
	if (l->paging == GUEST_PAGING_5) {
		int r = direct_map_check(m, sym, symctx, l->page_offset_base, l->init_task, c);
		if (r < 0)
			return r;
	}
	uint64_t pc = l->percpu_sym[0] ? sym(symctx, l->percpu_sym) : 0;
	if (pc && pc <= UINT64_MAX - l->percpu_current) {
		l->percpu_current += pc;
		l->has_current = true;
	}
	m->paging = (uint8_t)l->paging;
	return 0;
}

int guest_layout_fetch_btf(struct guest_mem *m, guest_sym_fn sym, void *symctx, void **btf, size_t *len,
			   char *why, size_t whylen)
{
	struct bctx c = { NULL, why, whylen };
	*btf = NULL;
	*len = 0;
	if (why && whylen)
		why[0] = 0;
	uint64_t start = sym(symctx, "__start_BTF"), stop = sym(symctx, "__stop_BTF");
	if (!start)
		return fail(&c, -ENOENT, "no __start_BTF symbol: kernel built without BTF (CONFIG_DEBUG_INFO_BTF)");
	if (!guest_kptr(start) || stop <= start)
		return fail(&c, -EBADMSG, "__start_BTF 0x%llx and __stop_BTF 0x%llx do not bound a BTF section",
			    (unsigned long long)start, (unsigned long long)stop);
	if (stop - start > GUEST_BTF_MAX)
		return fail(&c, -E2BIG, "the guest's BTF is %llu bytes, more than the %u MiB accepted",
			    (unsigned long long)(stop - start), GUEST_BTF_MAX >> 20);
	size_t n = (size_t)(stop - start);
	void *buf = xmalloc(n);
	int r = guest_mem_read(m, start, buf, n);
	if (r < 0) {
		free(buf);
		return fail(&c, r, "cannot read the guest's BTF (%zu bytes at 0x%llx): %s", n,
			    (unsigned long long)start, strerror(-r));
	}
	*btf = buf;
	*len = n;
	return 0;
}

int guest_layout_resolve(struct guest_mem *m, guest_sym_fn sym, void *symctx, struct guest_layout *l,
			 char *why, size_t whylen)
{
	struct bctx c = { NULL, why, whylen };
	int r = read_addresses(m, sym, symctx, l, &c);
	if (r < 0) {
		char keep[256];
		snprintf(keep, sizeof(keep), "%s", why ? why : "");
		layout_clear(l);
		if (why && whylen)
			snprintf(why, whylen, "%s", keep);
	}
	return r;
}

int guest_layout_read(struct guest_mem *m, guest_sym_fn sym, void *symctx, struct guest_layout *l,
		      char *why, size_t whylen)
{
	void *buf;
	size_t len;
	layout_clear(l);
	int r = guest_layout_fetch_btf(m, sym, symctx, &buf, &len, why, whylen);
	if (r < 0)
		return r;
	r = guest_layout_from_btf(buf, len, l, why, whylen);
	free(buf);
	return r < 0 ? r : guest_layout_resolve(m, sym, symctx, l, why, whylen);
}
