// SPDX-License-Identifier: MIT
/*
 * guest_modules_read on a fake guest memory (a few mapped regions, guest
 * address -> bytes) holding a hand-built `modules` list of two modules
 * laid out as Debian's 6.1 kernel lays them out (struct module: list at 8,
 * name[56] at 24, core_layout at 320, kallsyms at 544; core_kallsyms's
 * symtab, strtab and typetab back to back). The intact list gives known
 * lines; each hostile variant (a loop, a non-kernel pointer, num_symtab
 * 2^31, a name offset past the string table, names without NUL, a list
 * longer than the bound, a small read budget) is bounded, and the valid
 * module is still named, while the intact list is the control that names
 * both.
 */
#include <errno.h>
#include <stdlib.h>

#include "guest/modules.h"
#include "unit.h"
#include "util/le.h"

/* ---- fake guest memory: writable regions, read through guest_image ---- */
struct fakemem { struct guest_image im; uint8_t *b[GUEST_IMAGE_REGIONS]; size_t n; };

static uint8_t *fm_map(struct fakemem *f, uint64_t addr, size_t len)
{
	uint8_t *b = f->b[f->n++] = calloc(1, len);
	f->im.r[f->im.n].addr = addr;
	f->im.r[f->im.n].len = len;
	f->im.r[f->im.n++].b = b;
	return b;
}

static uint8_t *fm_at(struct fakemem *f, uint64_t addr)
{
	for (size_t i = 0; i < f->n; i++)
		if (addr >= f->im.r[i].addr && addr - f->im.r[i].addr < f->im.r[i].len)
			return f->b[i] + (addr - f->im.r[i].addr);
	return NULL;
}

static void fm_free(struct fakemem *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->b[i]);
	f->n = f->im.n = 0;
}

/* ---- a 6.1-like layout and module builder ---- */
#define HEAD   0xffffffff82b292a0ull
#define MOD_A  0xffffffffc0010000ull
#define MOD_B  0xffffffffc0030000ull
#define MODSZ  0x10000u
#define KS_OFF 0x400u   /* the module's mod_kallsyms, inside its region */
#define TAB_OFF 0x440u  /* symtab, then strtab, then typetab */

static struct guest_layout layout61(void)
{
	struct guest_layout l;
	memset(&l, 0xff, sizeof(l));
	l.mod_list = 8;
	l.mod_name = 24;
	l.mod_name_len = 56;
	l.mod_core_base = 320;
	l.mod_core_size = 328;
	l.mod_kallsyms = 544;
	l.mks_symtab = 0;
	l.mks_num_symtab = 8;
	l.mks_strtab = 16;
	l.mks_typetab = 24;
	l.modules = HEAD;
	return l;
}

struct sym { uint64_t value; const char *name; char type; };

/* Lays out module `name` at mod with symbol 0 (null) + syms; its core
 * text is [text, text + 0x4000). Returns the address of its symtab. */
static uint64_t build_module(struct fakemem *f, uint64_t mod, const char *name, uint64_t text,
			     const struct sym *syms, uint32_t n)
{
	uint8_t *b = fm_map(f, mod, MODSZ);
	strcpy((char *)b + 24, name);
	put64(b + 320, text);
	put32(b + 328, 0x4000);
	put64(b + 544, mod + KS_OFF);
	uint64_t symtab = mod + TAB_OFF, strtab = symtab + (uint64_t)(n + 1) * 24;
	uint8_t *st = b + TAB_OFF, *str = b + (strtab - mod);
	uint32_t off = 1;   /* strtab[0] = "" */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = st + (size_t)(i + 1) * 24;
		put32(e, off);
		e[4] = 0x12;   /* STB_GLOBAL | STT_FUNC: not read */
		put64(e + 8, syms[i].value);
		put64(e + 16, 16);
		strcpy((char *)str + off, syms[i].name);
		off += (uint32_t)strlen(syms[i].name) + 1;
	}
	uint64_t typetab = strtab + off;
	uint8_t *tt = b + (typetab - mod);
	tt[0] = 'U';   /* never shown: symbol 0 has value 0 */
	for (uint32_t i = 0; i < n; i++)
		tt[i + 1] = syms[i].type;
	uint8_t *ks = b + KS_OFF;
	put64(ks, symtab);
	put32(ks + 8, n + 1);
	put64(ks + 16, strtab);
	put64(ks + 24, typetab);
	return symtab;
}

static void link_list(struct fakemem *f, const uint64_t *mods, size_t n)
{
	uint8_t *h = fm_at(f, HEAD);
	uint64_t prev = HEAD;
	put64(h, n ? mods[0] + 8 : HEAD);
	for (size_t i = 0; i < n; i++) {
		uint8_t *b = fm_at(f, mods[i]);
		put64(b + 8, i + 1 < n ? mods[i + 1] + 8 : HEAD);
		put64(b + 16, prev);
		prev = mods[i] + 8;
	}
	put64(h + 8, prev);
}

static const struct sym syms_a[] = {
	{ 0xffffffffc0100000ull, "alpha_start", 't' },
	{ 0xffffffffc0100040ull, "alpha_xmit", 'T' },         /* upper case in, lower out */
	{ 0xffffffffc0100100ull, "alpha_xmit.cold", 't' },
	{ 0, "alpha_undef", 'U' },                             /* value 0: skipped */
	{ 0xffffffffc0100200ull, "", 't' },                    /* empty name: skipped */
	{ 0xffffffffc0200000ull, "alpha_init", 't' },          /* outside core text: init text */
	{ 0xffffffffc0105000ull, "alpha_table", 'd' },         /* data: shown */
	{ 0xffffffffc0105100ull, "__this_module", 'd' },
};
static const struct sym syms_b[] = {
	{ 0xffffffffc0110000ull, "beta_probe", 't' },
	{ 0xffffffffc0110080ull, "beta_remove", 't' },
};

static const char want_a[] =
	"ffffffffc0100000 t alpha_start\t[alpha]\n"
	"ffffffffc0100040 t alpha_xmit\t[alpha]\n"
	"ffffffffc0100100 t alpha_xmit.cold\t[alpha]\n"
	"ffffffffc0105000 d alpha_table\t[alpha]\n"
	"ffffffffc0105100 d __this_module\t[alpha]\n";
static const char want_b[] =
	"ffffffffc0110000 t beta_probe\t[beta]\n"
	"ffffffffc0110080 t beta_remove\t[beta]\n";

struct world {
	struct fakemem f;
	struct guest_mem m;
	struct guest_layout l;
	uint64_t symtab_a, symtab_b;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	fm_map(&w->f, HEAD, 16);
	w->symtab_a = build_module(&w->f, MOD_A, "alpha", 0xffffffffc0100000ull, syms_a, 8);
	w->symtab_b = build_module(&w->f, MOD_B, "beta", 0xffffffffc0110000ull, syms_b, 2);
	uint64_t mods[] = { MOD_A, MOD_B };
	link_list(&w->f, mods, 2);
	w->m.read = guest_image_read;
	w->m.ctx = &w->f.im;
	w->l = layout61();
}

struct result {
	int rc;
	struct guest_modsyms k;
	size_t skipped;
	char why[256];
};

static void run(struct world *w, struct result *r)
{
	r->rc = guest_modules_read(&w->m, &w->l, &r->k, &r->skipped, r->why, sizeof(r->why));
}

static bool has(const struct result *r, const char *s)
{
	return r->k.text && strstr(r->k.text, s);
}

/* The control of every hostile case: the intact list names both. */
static void test_two_modules(void)
{
	struct world w;
	struct result r;
	world_init(&w);
	run(&w, &r);
	CHECK(r.rc == 0);
	CHECK(r.skipped == 0);
	CHECK_STR(r.why, "");
	CHECK(r.k.nmodules == 2);
	CHECK(r.k.nsyms == 7);
	char want[1024];
	snprintf(want, sizeof(want), "%s%s", want_a, want_b);
	CHECK_STR(r.k.text, want);
	CHECK(r.k.len == strlen(want));
	/* a few reads per module: header, mod_kallsyms, three arrays */
	CHECK(w.m.reads == 1 + 2 * 5);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);

	/* no modules loaded */
	world_init(&w);
	link_list(&w.f, NULL, 0);
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 0 && r.k.len == 0 && r.k.text && r.k.text[0] == 0);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
}

static void test_loops(void)
{
	struct world w;
	struct result r;
	/* beta -> alpha: a cycle that misses the head */
	world_init(&w);
	put64(fm_at(&w.f, MOD_B) + 8, MOD_A + 8);
	run(&w, &r);
	CHECK(r.rc == 0);
	CHECK(r.k.nmodules == 2);
	CHECK(strstr(r.why, "loops") != NULL);
	CHECK(has(&r, "alpha_xmit\t[alpha]") && has(&r, "beta_probe\t[beta]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* alpha -> alpha: nothing else is ever read */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A) + 8, MOD_A + 8);
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 1 && has(&r, "[alpha]") && !has(&r, "[beta]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
}

static void test_bad_pointers(void)
{
	struct world w;
	struct result r;
	/* the list leaves the kernel half after alpha */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A) + 8, 0x7fff00001000ull);
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 1 && has(&r, "[alpha]") && !has(&r, "[beta]"));
	CHECK(strstr(r.why, "not a kernel address") != NULL);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* ... or before anything: nothing named, -EBADMSG */
	world_init(&w);
	put64(fm_at(&w.f, HEAD), 0x1000);
	run(&w, &r);
	CHECK(r.rc == -EBADMSG && r.k.text == NULL && r.why[0]);
	fm_free(&w.f);
	/* a kernel pointer to nothing mapped */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A) + 8, 0xffffffffd0000008ull);
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 1 && strstr(r.why, "cannot read the module") != NULL);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* alpha's kallsyms pointer is not a kernel address: alpha skipped, beta named */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A) + 544, 0x4000);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1);
	CHECK(!has(&r, "[alpha]") && has(&r, "beta_remove\t[beta]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* alpha's symtab unmapped: skipped after a failed read */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A + KS_OFF), 0xffffffffd0000000ull);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1 && has(&r, "[beta]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* the head unreadable */
	world_init(&w);
	w.l.modules = 0xffffffffd0000000ull;
	run(&w, &r);
	CHECK(r.rc == -EFAULT && r.why[0]);
	fm_free(&w.f);
}

static void test_counts(void)
{
	struct world w;
	struct result r;
	/* num_symtab = 2^31: alpha skipped without reading 48 GiB */
	world_init(&w);
	put32(fm_at(&w.f, MOD_A + KS_OFF) + 8, 1u << 31);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1 && has(&r, "[beta]") && !has(&r, "[alpha]"));
	CHECK(strstr(r.why, "alpha") != NULL);
	CHECK(w.m.bytes < 4096);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* num_symtab = 0: no null symbol, not a kernel table */
	world_init(&w);
	put32(fm_at(&w.f, MOD_A + KS_OFF) + 8, 0);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* typetab before strtab, or 1 GiB after it: no string table end */
	world_init(&w);
	put64(fm_at(&w.f, MOD_A + KS_OFF) + 24, MOD_A);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && has(&r, "[beta]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	world_init(&w);
	put64(fm_at(&w.f, MOD_A + KS_OFF) + 24, MOD_A + (1ull << 30));
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && has(&r, "[beta]") && w.m.bytes < 4096);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* a list longer than GUEST_MODULES_MAX, of unnamed modules: the walk
	 * stops at the bound */
	memset(&w, 0, sizeof(w));
	fm_map(&w.f, HEAD, 16);
	size_t n = GUEST_MODULES_MAX + 8;
	uint8_t *b = fm_map(&w.f, 0xffffffffc1000000ull, n * 1024);
	for (size_t i = 0; i < n; i++)
		put64(b + i * 1024 + 8, 0xffffffffc1000000ull + (i + 1) * 1024 + 8);
	put64(fm_at(&w.f, HEAD), 0xffffffffc1000000ull + 8);
	w.m.read = guest_image_read;
	w.m.ctx = &w.f.im;
	w.l = layout61();
	run(&w, &r);
	CHECK(r.rc == -EBADMSG && r.skipped == GUEST_MODULES_MAX && strstr(r.why, "longer") != NULL);
	fm_free(&w.f);
}

static void test_names(void)
{
	struct world w;
	struct result r;
	/* a name offset past the string table's end (typetab) */
	world_init(&w);
	uint8_t *sym2 = fm_at(&w.f, w.symtab_a + 2 * 24);
	uint64_t ks_str = get64(fm_at(&w.f, MOD_A + KS_OFF) + 16), ks_type = get64(fm_at(&w.f, MOD_A + KS_OFF) + 24);
	put32(sym2, (uint32_t)(ks_type - ks_str) + 5);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1 && !has(&r, "[alpha]") && has(&r, "[beta]"));
	CHECK(strstr(r.why, "past the string table") != NULL);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* the last symbol name runs into typetab without its NUL */
	world_init(&w);
	ks_str = get64(fm_at(&w.f, MOD_B + KS_OFF) + 16);
	ks_type = get64(fm_at(&w.f, MOD_B + KS_OFF) + 24);
	*fm_at(&w.f, ks_type - 1) = 'x';
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1 && has(&r, "[alpha]") && !has(&r, "[beta]"));
	CHECK(strstr(r.why, "without NUL") != NULL);
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* a module name filling name[56] without NUL */
	world_init(&w);
	memset(fm_at(&w.f, MOD_A + 24), 'a', 56);
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && r.k.nmodules == 1 && has(&r, "[beta]"));
	CHECK(!has(&r, "aaaaaaaa"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	/* a symbol name with a blank, a type that is not a letter */
	world_init(&w);
	*fm_at(&w.f, ks_str = get64(fm_at(&w.f, MOD_A + KS_OFF) + 16) + 2) = ' ';
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && !has(&r, "[alpha]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
	world_init(&w);
	*fm_at(&w.f, get64(fm_at(&w.f, MOD_B + KS_OFF) + 24) + 1) = '\n';
	run(&w, &r);
	CHECK(r.rc == 0 && r.skipped == 1 && !has(&r, "[beta]") && has(&r, "[alpha]"));
	guest_modsyms_free(&r.k);
	fm_free(&w.f);
}

static void test_layout_and_budget(void)
{
	struct world w;
	struct result r;
	world_init(&w);
	w.l.mks_typetab = GUEST_NO_OFFSET;
	run(&w, &r);
	CHECK(r.rc == -ENOENT && strstr(r.why, "typetab") != NULL);
	w.l = layout61();
	w.l.modules = 0;
	run(&w, &r);
	CHECK(r.rc == -ENOENT);
	w.l = layout61();
	w.l.mod_name_len = 100000;
	run(&w, &r);
	CHECK(r.rc == -EINVAL);
	/* offsets that wrap the address space */
	w.l = layout61();
	w.l.mod_kallsyms = 0xfffffff0u;
	run(&w, &r);
	CHECK(r.rc == -EBADMSG);
	/* no core text fields: the range check is off, alpha_init shows */
	w.l = layout61();
	w.l.mod_core_base = w.l.mod_core_size = GUEST_NO_OFFSET;
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 2 && has(&r, "ffffffffc0200000 t alpha_init\t[alpha]\n"));
	guest_modsyms_free(&r.k);
	/* a shifted mod_kallsyms offset (core_kallsyms, whose symbol 0 is
	 * null) validates nothing: the VM test's control */
	w.l = layout61();
	w.l.mod_kallsyms = 552;
	run(&w, &r);
	CHECK(r.rc == 0 && r.k.nmodules == 0 && r.skipped == 2);
	guest_modsyms_free(&r.k);
	/* a budget that ends inside alpha's table: the walk stops */
	w.l = layout61();
	w.m.bytes = 0;
	w.m.budget = 700;
	run(&w, &r);
	CHECK(r.rc == -EBADMSG && r.skipped == 1 && strstr(r.why, "budget") != NULL);
	CHECK(w.m.bytes <= 700);
	fm_free(&w.f);
}

int main(void)
{
	test_two_modules();
	test_loops();
	test_bad_pointers();
	test_counts();
	test_names();
	test_layout_and_budget();
	return unit_done();
}
