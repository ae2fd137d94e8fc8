// SPDX-License-Identifier: MIT
/*
 * Unit tests for the kernel and domain side of src/symbols/: kallsyms
 * text with modules and /proc/modules ranges, System.map moved by a
 * KASLR offset (kallsyms too, when the domain carries one), passive guests' per-cr3 user
 * pseudo images, process maps (replacement, fork, comm), the live
 * /proc/kallsyms fallback, and adversarial input: ip 0 and ~0, empty
 * tables, unknown domains, malformed lines and random garbage blobs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"
#include "unit.h"

static const char KALLSYMS[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 t helper_local\n"
	"ffffffff81002000 T do_work\n"
	"ffffffff81002800 W weak_thing\n"
	"ffffffff81003000 D some_data\n"
	"ffffffff81004000 T _etext\n"
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffffc0001000 t ext4_read\t[ext4]\n"
	"ffffffffc0001100 T ext4_write\t[ext4]\n"
	"ffffffffc0003000 d ext4_data\t[ext4]\n"
	"ffffffffc0100000 t nf_hook\t[nf_tables]\n";
static const char MODULES[] =
	"ext4 1003520 2 - Live 0xffffffffc0000000\n"
	"nf_tables 200000 0 - Live 0xffffffffc0100000 (O)\n"
	"nosyms 4096 0 - Live 0xffffffffc0200000\n";

static void add_text(struct sym_session *s, uint32_t dom, uint32_t kind, const char *name, const char *txt)
{
	struct dp_symtab st = { kind, name, (const uint8_t *)txt, strlen(txt) };
	sym_add_symtab(s, dom, &st);
}

static struct sym_result look(struct sym_session *s, uint32_t dom, uint32_t pid, uint8_t mode,
			      bool has_asid, uint64_t asid, uint64_t ip)
{
	struct sym_result r;
	memset(&r, 0xee, sizeof(r));
	const struct sym_map *m = sym_find_map(s, dom, pid, mode, has_asid, asid, ip);
	CHECK(m != NULL);
	sym_resolve(s, m, ip, &r);
	CHECK(r.image && r.image_path && r.symbol);
	CHECK(r.known == (strcmp(r.symbol, "[unknown]") != 0));
	return r;
}

static bool has_warning(struct sym_session *s, const char *needle)
{
	const char *const *w;
	size_t n = sym_warnings(s, &w);
	for (size_t i = 0; i < n; i++)
		if (strstr(w[i], needle))
			return true;
	return false;
}

static void test_kallsyms(void)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 0, DP_DOMAIN_HOST, "host", 0);
	add_text(s, 0, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	add_text(s, 0, DP_SYMTAB_MODULES, "modules", MODULES);
	struct sym_result r = look(s, 0, 1234, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK_STR(r.symbol, "do_work");
	CHECK_STR(r.image, "[kernel.kallsyms]");
	CHECK_EQ_U64(r.offset, 0x10);
	CHECK_EQ_U64(r.sym_start, 0xffffffff81002000ull);
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81000004ull);
	CHECK_STR(r.symbol, "startup_64");   /* the alias without underscores */
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81001fffull);
	CHECK_STR(r.symbol, "helper_local");
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002900ull);
	CHECK_STR(r.symbol, "weak_thing");
	/* modules: their own images, named by /proc/modules ranges too */
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0001050ull);
	CHECK_STR(r.symbol, "ext4_read");
	CHECK_STR(r.image, "[ext4]");
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0001104ull);
	CHECK_STR(r.symbol, "ext4_write");
	CHECK_EQ_U64(r.offset, 4);
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0000010ull);
	CHECK_STR(r.image, "[ext4]");
	CHECK_STR(r.symbol, "[unknown]");
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0100010ull);
	CHECK_STR(r.symbol, "nf_hook");
	CHECK_STR(r.image, "[nf_tables]");
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0200010ull);
	CHECK_STR(r.image, "[nosyms]");
	CHECK_STR(r.symbol, "[unknown]");
	/* kernel-half ip with no user map: the kernel even in user mode */
	r = look(s, 0, 55, DP_MODE_USER, false, 0, 0xffffffff81002000ull);
	CHECK_STR(r.symbol, "do_work");
	/* outside every table */
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff90000000ull);
	CHECK_STR(r.image, "[kernel.kallsyms]");
	CHECK_STR(r.symbol, "[unknown]");
	CHECK(!has_warning(s, "/proc/kallsyms"));
	sym_session_free(s);
}

/* The same table delta-encoded (DP_SYMTAB_KALLSYMS_DELTA, as `record`
 * embeds it): identical answers, negative deltas and modules included. */
static const char KALLSYMS_DELTA[] =
	"ffffffff81000000 T _stext\n"
	"0 T startup_64\n"
	"1000 t helper_local\n"
	"1000 T do_work\n"
	"800 W weak_thing\n"
	"800 D some_data\n"
	"1000 T _etext\n"
	"-ffffffff81004000 A fixed_percpu_data\n"
	"ffffffffc0001000 t ext4_read\t[ext4]\n"
	"100 T ext4_write\t[ext4]\n"
	"1f00 d ext4_data\t[ext4]\n"
	"fd000 t nf_hook\t[nf_tables]\n";

static void test_kallsyms_delta(void)
{
	struct sym_session *a = sym_session_new(), *b = sym_session_new();
	sym_set_domain(a, 0, DP_DOMAIN_HOST, "host", 0);
	sym_set_domain(b, 0, DP_DOMAIN_HOST, "host", 0);
	add_text(a, 0, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	add_text(b, 0, DP_SYMTAB_KALLSYMS_DELTA, "kallsyms", KALLSYMS_DELTA);
	add_text(a, 0, DP_SYMTAB_MODULES, "modules", MODULES);
	add_text(b, 0, DP_SYMTAB_MODULES, "modules", MODULES);
	static const uint64_t ips[] = { 0xffffffff81000004ull, 0xffffffff81001fffull,
					0xffffffff81002010ull, 0xffffffff81002900ull,
					0xffffffffc0001010ull, 0xffffffffc0001180ull,
					0xffffffffc0100004ull, 0xffffffff80000000ull };
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
		struct sym_result ra = look(a, 0, 0, DP_MODE_KERNEL, false, 0, ips[i]);
		struct sym_result rb = look(b, 0, 0, DP_MODE_KERNEL, false, 0, ips[i]);
		CHECK_STR(rb.symbol, ra.symbol);
		CHECK_STR(rb.image, ra.image);
		CHECK_EQ_U64(rb.sym_start, ra.sym_start);
	}
	struct sym_result r = look(b, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK_STR(r.symbol, "do_work");
	r = look(b, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffffc0001180ull);
	CHECK_STR(r.symbol, "ext4_write");
	CHECK_STR(r.image, "[ext4]");
	sym_session_free(a);
	sym_session_free(b);
}

/* A kallsyms from another (nokaslr) boot with the domain's offset: moved. */
static void test_kallsyms_offset(void)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0x1e000000);
	add_text(s, 1, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	struct sym_result r = look(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull + 0x1e000000);
	CHECK_STR(r.symbol, "do_work");
	CHECK_STR(r.image, "[guest.kernel]");
	CHECK_EQ_U64(r.sym_start, 0xffffffff81002000ull + 0x1e000000);
	r = look(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK(strcmp(r.symbol, "do_work") != 0);
	sym_session_free(s);
}

static void test_sysmap_kaslr(void)
{
	const uint64_t off = 0x2a000000;
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", off);
	add_text(s, 1, DP_SYMTAB_SYSMAP, "System.map",
		 "ffffffff81000000 T _text\n"
		 "ffffffff81234000 T guest_func\n"
		 "ffffffff81235000 t guest_other\n"
		 "ffffffff81236000 R guest_rodata\n");
	struct sym_result r = look(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81234008ull + off);
	CHECK_STR(r.symbol, "guest_func");
	CHECK_STR(r.image, "[guest.kernel]");
	CHECK_EQ_U64(r.sym_start, 0xffffffff81234000ull + off);
	CHECK_EQ_U64(r.offset, 8);
	r = look(s, 1, 0, DP_MODE_GUEST_KERNEL, true, 0x1000, 0xffffffff81235000ull + off);
	CHECK_STR(r.symbol, "guest_other");
	/* the unrelocated address is not the function any more */
	r = look(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81234008ull);
	CHECK(strcmp(r.symbol, "guest_func") != 0);
	/* the host's kernel is another table */
	add_text(s, 0, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81234008ull + off);
	CHECK_STR(r.image, "[kernel.kallsyms]");
	CHECK_STR(r.symbol, "[unknown]");
	sym_session_free(s);
}

static void test_passive_guest(void)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 2, DP_DOMAIN_PASSIVE, "vm2", 0);
	add_text(s, 2, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	struct sym_result r = look(s, 2, 0, DP_MODE_GUEST_KERNEL, true, 0xabc000, 0xffffffff81002001ull);
	CHECK_STR(r.symbol, "do_work");
	CHECK_STR(r.image, "[guest.kernel]");
	r = look(s, 2, 0, DP_MODE_KERNEL, true, 0xabc000, 0xffffffffc0001001ull);
	CHECK_STR(r.symbol, "ext4_read");
	CHECK_STR(r.image, "[ext4]");
	/* user samples: one pseudo image per address space, never kernel symbols */
	const struct sym_map *a = sym_find_map(s, 2, 0, DP_MODE_USER, true, 0x1234000, 0x401000);
	const struct sym_map *b = sym_find_map(s, 2, 0, DP_MODE_GUEST_USER, true, 0x1234000, 0x7fff0000);
	const struct sym_map *c = sym_find_map(s, 2, 0, DP_MODE_USER, true, 0x5678000, 0x401000);
	CHECK(a == b);
	CHECK(a != c);
	CHECK(sym_map_image(a) != sym_map_image(c));
	CHECK_STR(sym_image_name(sym_map_image(a)), "[guest user cr3=0x1234000]");
	CHECK_STR(sym_image_name(sym_map_image(c)), "[guest user cr3=0x5678000]");
	r = look(s, 2, 0, DP_MODE_USER, true, 0x1234000, 0xffffffff81002001ull);
	CHECK_STR(r.image, "[guest user cr3=0x1234000]");
	CHECK_STR(r.symbol, "[unknown]");
	r = look(s, 2, 0, DP_MODE_USER, true, 0, 0);
	CHECK_STR(r.image, "[guest user cr3=0x0]");
	r = look(s, 2, 0, DP_MODE_USER, true, UINT64_MAX, UINT64_MAX);
	CHECK_STR(r.image, "[guest user cr3=0xffffffffffffffff]");
	r = look(s, 2, 0, DP_MODE_USER, false, 0, 0x401000);
	CHECK_STR(r.image, "[guest user]");
	/* a named process: its name and pid at the sample, as its kernel
	 * samples are named, whatever cr3 it had before or after: a fork
	 * (named as its parent) execs, and the next process gets the same
	 * page tables (issue 34: both went under the first pid's name) */
	struct dp_task tk = { .kind = DP_TASK_COMM, .pid = 84, .tid = 84, .comm = "init" };
	sym_add_task(s, 2, &tk);
	r = look(s, 2, 84, DP_MODE_USER, true, 0x9000000, 0x401000);
	CHECK_STR(r.image, "[guest user] init (84)");
	tk.comm = "dd";
	sym_add_task(s, 2, &tk);
	r = look(s, 2, 84, DP_MODE_USER, true, 0x9000000, 0x401000);
	CHECK_STR(r.image, "[guest user] dd (84)");
	struct dp_task t85 = { .kind = DP_TASK_COMM, .pid = 85, .tid = 85, .comm = "dd" };
	sym_add_task(s, 2, &t85);
	r = look(s, 2, 85, DP_MODE_USER, true, 0x9000000, 0x401000);
	CHECK_STR(r.image, "[guest user] dd (85)");
	r = look(s, 2, 84, DP_MODE_USER, true, 0x9001000, 0x401000);   /* PTI's user half: one process */
	CHECK_STR(r.image, "[guest user] dd (84)");
	/* controls: a pid with no TASK record, pid 0: by address space */
	r = look(s, 2, 86, DP_MODE_USER, true, 0x9000000, 0x401000);
	CHECK_STR(r.image, "[guest user cr3=0x9000000]");
	r = look(s, 2, 0, DP_MODE_USER, true, 0x9000000, 0x401000);
	CHECK_STR(r.image, "[guest user cr3=0x9000000]");
	/* the same cr3 in another passive domain is another image */
	sym_set_domain(s, 3, DP_DOMAIN_PASSIVE, "vm3", 0);
	CHECK(sym_find_map(s, 3, 0, DP_MODE_USER, true, 0x1234000, 0x401000) != a);
	/* a passive domain with no table: kernel samples still named by image */
	r = look(s, 3, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002001ull);
	CHECK_STR(r.image, "[guest.kernel]");
	CHECK_STR(r.symbol, "[unknown]");
	CHECK(has_warning(s, "vm3"));
	sym_session_free(s);
}

static void test_maps_tasks(void)
{
	struct sym_session *s = sym_session_new();
	struct dp_task t = { .kind = DP_TASK_COMM, .pid = 10, .tid = 10, .comm = "main" };
	sym_add_task(s, 0, &t);
	t.tid = 12;
	t.comm = "worker";
	sym_add_task(s, 0, &t);
	CHECK_STR(sym_comm(s, 0, 10), "main");
	CHECK_STR(sym_comm(s, 0, 99), "[unknown]");
	CHECK_STR(sym_comm(s, 1, 10), "[unknown]");

	struct dp_mmap a = { .pid = 10, .start = 0x1000, .len = 0x4000, .pgoff = 0, .path = "/x/a.so" };
	sym_add_mmap(s, 0, &a);
	const struct sym_map *ma = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x4500);
	CHECK_STR(sym_image_name(sym_map_image(ma)), "a.so");
	CHECK_EQ_U64(sym_map_to_image(ma, 0x4500), 0x3500);
	struct dp_mmap b = { .pid = 10, .start = 0x2000, .len = 0x1000, .pgoff = 0, .path = "/x/b.so" };
	sym_add_mmap(s, 0, &b);
	const struct sym_map *m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x1500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "a.so");
	m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x4500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "a.so");
	CHECK_EQ_U64(sym_map_to_image(m, 0x4500), 0x3500);   /* same placement after the split */
	/* the map handed out before the replacement still works */
	CHECK_STR(sym_image_name(sym_map_image(ma)), "a.so");
	CHECK_EQ_U64(sym_map_to_image(ma, 0x2500), 0x1500);
	struct sym_result r = look(s, 0, 10, DP_MODE_USER, false, 0, 0x5000);
	CHECK_STR(r.image, "[unknown]");

	/* fork copies maps and comm; later changes stay apart */
	struct dp_task f = { .kind = DP_TASK_FORK, .pid = 11, .tid = 11, .ppid = 10, .ptid = 10 };
	sym_add_task(s, 0, &f);
	CHECK_STR(sym_comm(s, 0, 11), "main");
	m = sym_find_map(s, 0, 11, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	struct dp_mmap c = { .pid = 11, .start = 0x1000, .len = 0x8000, .pgoff = 0, .path = "/bin/newexe" };
	sym_add_mmap(s, 0, &c);   /* exec in the child */
	m = sym_find_map(s, 0, 11, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "newexe");
	m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	/* the list a fork shares is copied when the parent changes it too */
	struct dp_task f2 = { .kind = DP_TASK_FORK, .pid = 12, .tid = 12, .ppid = 10, .ptid = 10 };
	sym_add_task(s, 0, &f2);
	struct dp_mmap pb = { .pid = 10, .start = 0x2000, .len = 0x1000, .path = "/x/parent.so" };
	sym_add_mmap(s, 0, &pb);
	m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "parent.so");
	m = sym_find_map(s, 0, 12, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	sym_add_task(s, 0, &f2);    /* pid 12 reused: forked again, now sees parent.so */
	m = sym_find_map(s, 0, 12, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "parent.so");
	sym_add_mmap(s, 0, &b);     /* restore b.so in the parent for what follows */
	/* a thread "fork" does not reset anything */
	struct dp_task th = { .kind = DP_TASK_FORK, .pid = 10, .tid = 13, .ppid = 10, .ptid = 10 };
	sym_add_task(s, 0, &th);
	m = sym_find_map(s, 0, 10, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	/* special mappings */
	struct dp_mmap h = { .pid = 10, .start = 0x100000, .len = 0x1000, .path = "[heap]" };
	sym_add_mmap(s, 0, &h);
	r = look(s, 0, 10, DP_MODE_USER, false, 0, 0x100010);
	CHECK_STR(r.image, "[heap]");
	struct dp_mmap an = { .pid = 10, .start = 0x200000, .len = 0x1000, .path = "//anon" };
	sym_add_mmap(s, 0, &an);
	r = look(s, 0, 10, DP_MODE_USER, false, 0, 0x200010);
	CHECK_STR(r.image, "[anon]");
	/* the same pid in another domain is another process */
	r = look(s, 7, 10, DP_MODE_USER, false, 0, 0x2500);
	CHECK_STR(r.image, "[unknown]");
	/* modes without tables */
	r = look(s, 0, 10, DP_MODE_HYPERVISOR, false, 0, 0x2500);
	CHECK_STR(r.image, "[hypervisor]");
	r = look(s, 0, 10, DP_MODE_GUEST_KERNEL, false, 0, 0xffffffff81000000ull);
	CHECK_STR(r.image, "[guest.kernel]");
	r = look(s, 0, 10, DP_MODE_GUEST_USER, true, 0x42000, 0x400000);
	CHECK_STR(r.image, "[guest user cr3=0x42000]");
	sym_session_free(s);
}

static void test_live_kallsyms(void)
{
	/* find a real text symbol of this machine's kernel */
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	char line[512], name[256] = "";
	unsigned long long addr = 0;
	while (fgets(line, sizeof(line), f)) {
		char type;
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && addr &&
		    (type == 'T') && !strchr(line, '[') && !strcmp(name, "schedule"))
			break;
		addr = 0;
	}
	fclose(f);
	struct sym_session *s = sym_session_new();
	struct sym_result r = look(s, 0, 1, DP_MODE_KERNEL, false, 0, addr ? addr + 1 : 0xffffffff81000000ull);
	CHECK_STR(r.image, "[kernel.kallsyms]");
	CHECK(has_warning(s, "/proc/kallsyms"));
	if (addr) {   /* readable addresses (root, kptr_restrict allows) */
		CHECK_STR(r.symbol, "schedule");
		CHECK_EQ_U64(r.offset, 1);
	}
	/* active domains never fall back to the host's kernel */
	sym_set_domain(s, 4, DP_DOMAIN_ACTIVE, "vm4", 0);
	r = look(s, 4, 1, DP_MODE_KERNEL, false, 0, addr ? addr + 1 : 0xffffffff81000000ull);
	CHECK_STR(r.image, "[kernel.kallsyms]");
	CHECK_STR(r.symbol, "[unknown]");
	sym_session_free(s);
}

static void test_adversarial(void)
{
	static const uint64_t ips[] = { 0, 1, 0xfff, 0x7fffffffffffull, 0xffff800000000000ull,
					0xffffffff81000000ull, UINT64_MAX - 1, UINT64_MAX };
	static const uint8_t modes[] = { DP_MODE_UNKNOWN, DP_MODE_USER, DP_MODE_KERNEL,
					 DP_MODE_GUEST_KERNEL, DP_MODE_GUEST_USER, DP_MODE_HYPERVISOR, 200 };
	static const uint32_t doms[] = { 0, 1, 2, 0xffffffffu };

	/* empty session, then tables that are empty or malformed */
	for (int round = 0; round < 3; round++) {
		struct sym_session *s = sym_session_new();
		sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "p", UINT64_MAX);
		sym_set_domain(s, 2, DP_DOMAIN_ACTIVE, NULL, 0);
		if (round == 1) {
			add_text(s, 0, DP_SYMTAB_KALLSYMS, "", "");
			add_text(s, 1, DP_SYMTAB_SYSMAP, "", "");
			add_text(s, 2, DP_SYMTAB_MODULES, "", "");
			add_text(s, 2, DP_SYMTAB_ELF, "vmlinux", "");
			struct dp_symtab st = { DP_SYMTAB_KALLSYMS, NULL, NULL, 0 };
			sym_add_symtab(s, 0xffffffffu, &st);
		}
		if (round == 2) {
			add_text(s, 0, DP_SYMTAB_KALLSYMS, "kallsyms",
				 "zzzz T bad_hex\n"
				 "ffffffff81000000\n"
				 "ffffffff81000000 T\n"
				 "ffffffff81000000T glued\n"
				 "11112222333344445555 T too_long\n"
				 "   \n\n\r\n"
				 "ffffffff81000100 T good_one\n"
				 "ffffffffffffff00 T at_the_top\n"
				 "ffffffff81000200 t unterminated_mod\t[oops\n"
				 "ffffffff81000300 t empty_mod\t[]\n"
				 "ffffffff81000400 T last_no_newline");
			add_text(s, 0, DP_SYMTAB_MODULES, "modules",
				 "short line\nm 99999999999999999999999 0 - Live 0xffffffffc0000000\n"
				 "m2 abc 0 - Live 0xffffffffc0000000\nm3 4096 0 - Live zz\n"
				 "m4 0 0 - Live 0xffffffffc0000000\nm5 4096 0 - Live 0xfffffffffffff000\n");
			add_text(s, 1, DP_SYMTAB_SYSMAP, "System.map",
				 "ffffffff81000000 T wraps_with_offset\n");
			add_text(s, 2, DP_SYMTAB_ELF, "vmlinux", "\177ELF garbage that is not an ELF");
		}
		for (size_t d = 0; d < sizeof(doms) / sizeof(doms[0]); d++)
			for (size_t m = 0; m < sizeof(modes); m++)
				for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
					struct sym_result r = look(s, doms[d], (uint32_t)i, modes[m], i & 1,
								   ips[i], ips[i]);
					(void)r;
				}
		if (round == 2) {
			struct sym_result r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81000104ull);
			CHECK_STR(r.symbol, "good_one");
			r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81000400ull);
			CHECK_STR(r.symbol, "last_no_newline");
			r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, UINT64_MAX - 1);
			CHECK_STR(r.image, "[m5]");   /* module range wins over the kernel */
			r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, UINT64_MAX);   /* end is exclusive */
			CHECK(has_warning(s, "malformed"));
			r = look(s, 0, 0, DP_MODE_KERNEL, false, 0, 0);
			CHECK_STR(r.symbol, "[unknown]");
		}
		sym_session_free(s);
	}

	/* random garbage as every kind of blob */
	srand(12345);
	static uint8_t junk[8192];
	for (int it = 0; it < 60; it++) {
		struct sym_session *s = sym_session_new();
		sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "p", (uint64_t)rand() << 20);
		size_t n = (size_t)rand() % sizeof(junk);
		for (size_t i = 0; i < n; i++) {
			/* mostly kallsyms-looking characters, some raw bytes */
			static const char cs[] = "0123456789abcdefT t[]\n\tWw ";
			junk[i] = rand() % 8 ? (uint8_t)cs[rand() % (sizeof(cs) - 1)] : (uint8_t)rand();
		}
		for (uint32_t kind = 1; kind <= 6; kind++) {
			struct dp_symtab st = { kind, kind == 4 ? "vmlinux" : "junk", junk, n };
			sym_add_symtab(s, (uint32_t)(1 + it % 2), &st);
		}
		struct dp_mmap mm = { .pid = 5, .start = (uint64_t)rand() << 12, .len = (uint64_t)rand(),
				      .pgoff = (uint64_t)rand(), .path = it % 3 ? "//anon" : "[vdso]" };
		sym_add_mmap(s, (uint32_t)(1 + it % 2), &mm);
		mm.pid = UINT32_MAX;
		mm.path = "/lib/modules/x/kernel/fs/ext4.ko";
		sym_add_mmap(s, (uint32_t)(1 + it % 2), &mm);
		for (int k = 0; k < 200; k++) {
			uint64_t ip = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 10) ^ (uint64_t)rand();
			if (k % 3 == 0)
				ip |= 0xffff800000000000ull;
			look(s, (uint32_t)(1 + k % 2), 5, modes[k % sizeof(modes)], k & 1, ip, ip);
		}
		sym_session_free(s);
	}
	sym_session_free(NULL);
}

/* a passive domain's code table (SYMTAB kind 7, sym_image_code): two
 * adjacent pages read across, one apart; a table cut in an entry;
 * many tiny overlapping entries (bounded work); the wrong magic */
static void put_entry(uint8_t *b, size_t *len, uint64_t addr, uint32_t n, uint8_t fill)
{
	memcpy(b + *len, &addr, 8);
	memcpy(b + *len + 8, &n, 4);
	memset(b + *len + 12, 0, 4);
	memset(b + *len + 16, fill, n);
	*len += 16 + n;
}

static void test_guest_code(void)
{
	struct sym_session *s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0);
	add_text(s, 1, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	size_t cap = 8 + 3 * (16 + 4096);
	uint8_t *b = calloc(1, cap), out[8192];
	size_t len = 8;
	memcpy(b, "DPCODE1", 8);
	put_entry(b, &len, 0xffffffff81003000ull, 4096, 0xbb);   /* listed first, read second */
	put_entry(b, &len, 0xffffffff81002000ull, 4096, 0xaa);
	put_entry(b, &len, 0xffffffff81009000ull, 4096, 0xcc);
	struct dp_symtab st = { DP_SYMTAB_CODE, "[guest.kernel]", b, len };
	sym_add_symtab(s, 1, &st);
	const struct sym_map *m = sym_find_map(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK(m != NULL);
	long n = sym_image_code(s, m, 0xffffffff81002ff0ull, 0xffffffff81003010ull, out, sizeof(out));
	CHECK(n == 0x20 && out[0] == 0xaa && out[15] == 0xaa && out[16] == 0xbb && out[31] == 0xbb);
	/* a gap: only what runs contiguously from the start */
	n = sym_image_code(s, m, 0xffffffff81003f00ull, 0xffffffff81004100ull, out, sizeof(out));
	CHECK(n == 0x100);
	CHECK(sym_image_code(s, m, 0xffffffff81005000ull, 0xffffffff81005010ull, out, sizeof(out)) == -ENOENT);
	CHECK(sym_image_code(s, m, 0xffffffff81002010ull, 0xffffffff81002010ull, out, sizeof(out)) == -ENOENT);
	/* bounded by the caller's buffer */
	CHECK(sym_image_code(s, m, 0xffffffff81002000ull, 0xffffffff81004000ull, out, 100) == 100);
	sym_session_free(s);

	/* crafted: an entry claiming more than the table holds, then tiny
	 * overlapping entries by the thousand, then a wrong magic */
	s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0);
	add_text(s, 1, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	size_t many = 200000, tcap = 8 + many * 17 + 16;
	uint8_t *t = calloc(1, tcap);
	len = 8;
	memcpy(t, "DPCODE1", 8);
	for (size_t i = 0; i < many; i++)
		put_entry(t, &len, 0xffffffff81002000ull + (i % 64), 1, (uint8_t)i);
	struct dp_symtab st2 = { DP_SYMTAB_CODE, "[guest.kernel]", t, len };
	sym_add_symtab(s, 1, &st2);
	m = sym_find_map(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	n = sym_image_code(s, m, 0xffffffff81002000ull, 0xffffffff81003000ull, out, sizeof(out));
	CHECK(n > 0 && n <= 256);     /* pieces of one byte, at most 256 of them */
	sym_session_free(s);
	s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0);
	add_text(s, 1, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	len = 8;
	put_entry(t, &len, 0xffffffff81002000ull, 64, 0x11);
	uint32_t lie = 1u << 30;
	memcpy(t + 8 + 8, &lie, 4);                                 /* cut in its entry */
	struct dp_symtab st3 = { DP_SYMTAB_CODE, "[guest.kernel]", t, len };
	sym_add_symtab(s, 1, &st3);
	m = sym_find_map(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK(sym_image_code(s, m, 0xffffffff81002000ull, 0xffffffff81002040ull, out, sizeof(out)) == -ENOENT);
	sym_session_free(s);
	s = sym_session_new();
	sym_set_domain(s, 1, DP_DOMAIN_PASSIVE, "vm1", 0);
	add_text(s, 1, DP_SYMTAB_KALLSYMS, "kallsyms", KALLSYMS);
	memcpy(b, "DPCODE2", 8);
	struct dp_symtab st4 = { DP_SYMTAB_CODE, "[guest.kernel]", b, 8 + 16 + 4096 };
	sym_add_symtab(s, 1, &st4);
	m = sym_find_map(s, 1, 0, DP_MODE_KERNEL, false, 0, 0xffffffff81002010ull);
	CHECK(sym_image_code(s, m, 0xffffffff81003000ull, 0xffffffff81003010ull, out, sizeof(out)) == -ENOENT);
	sym_session_free(s);
	free(b);
	free(t);
}

/* sym_find_map's per-(pid, page) memo (session.c) answers as a fresh
 * search would: after a mapping over the same page, a fork over a reused
 * pid, for processes whose memo slots collide. */
static void test_find_memo(void)
{
	struct sym_session *s = sym_session_new();
	struct dp_mmap a = { .pid = 20, .start = 0x10000, .len = 0x10000, .path = "/x/a.so" };
	sym_add_mmap(s, 0, &a);
	for (int i = 0; i < 3; i++) {    /* the second and third are memo hits */
		const struct sym_map *m = sym_find_map(s, 0, 20, DP_MODE_USER, false, 0, 0x10010 + 8 * i);
		CHECK_STR(sym_image_name(sym_map_image(m)), "a.so");
	}
	/* a mapping over the same page: the memo's answer is stale */
	struct dp_mmap b = { .pid = 20, .start = 0x10000, .len = 0x1000, .path = "/x/b.so" };
	sym_add_mmap(s, 0, &b);
	const struct sym_map *m = sym_find_map(s, 0, 20, DP_MODE_USER, false, 0, 0x10010);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	m = sym_find_map(s, 0, 20, DP_MODE_USER, false, 0, 0x11010);   /* the rest of a.so */
	CHECK_STR(sym_image_name(sym_map_image(m)), "a.so");
	/* another pid at the same address is another process */
	struct sym_result r = look(s, 0, 21, DP_MODE_USER, false, 0, 0x10010);
	CHECK_STR(r.image, "[unknown]");
	struct dp_task f = { .kind = DP_TASK_FORK, .pid = 21, .tid = 21, .ppid = 20, .ptid = 20 };
	sym_add_task(s, 0, &f);
	m = sym_find_map(s, 0, 21, DP_MODE_USER, false, 0, 0x10010);
	CHECK_STR(sym_image_name(sym_map_image(m)), "b.so");
	/* pid 21 reused by a process forked from one without mappings */
	struct dp_task f2 = { .kind = DP_TASK_FORK, .pid = 21, .tid = 21, .ppid = 99, .ptid = 99 };
	sym_add_task(s, 0, &f2);
	r = look(s, 0, 21, DP_MODE_USER, false, 0, 0x10010);
	CHECK_STR(r.image, "[unknown]");
	/* many processes, one address each: their memo slots collide */
	char path[64];
	for (uint32_t pid = 1000; pid < 6000; pid++) {
		snprintf(path, sizeof(path), "/x/p%u.so", pid);
		struct dp_mmap mm = { .pid = pid, .start = 0x400000, .len = 0x1000, .path = path };
		sym_add_mmap(s, 0, &mm);
	}
	int bad = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t pid = 1000; pid < 6000; pid++) {
			snprintf(path, sizeof(path), "p%u.so", pid);
			m = sym_find_map(s, 0, pid, DP_MODE_USER, false, 0, 0x400000 + pid % 4096);
			bad += strcmp(sym_image_name(sym_map_image(m)), path) != 0;
		}
	CHECK(bad == 0);
	sym_session_free(s);
}

int main(void)
{
	test_kallsyms();
	test_guest_code();
	test_sysmap_kaslr();
	test_kallsyms_offset();
	test_kallsyms_delta();
	test_passive_guest();
	test_maps_tasks();
	test_find_memo();
	test_live_kallsyms();
	test_adversarial();
	return unit_done();
}
