// SPDX-License-Identifier: MIT
/*
 * Unit test of the guest layouts from BTF (src/guest/layout.c).
 *
 * Synthetic part (always): BTF blobs written with libbpf's own BTF
 * writer, with the offsets chosen here — members inside anonymous
 * unions and structs, typedef and qualifier chains, both module layouts
 * (core_layout before 6.4, mem[MOD_TEXT] after, with MOD_TEXT's value
 * taken from the enum), pcpu_hot or the plain current_task — and the
 * refusals: a missing field, a field of the wrong size, a bitfield, an
 * offset past its struct, a member of a type id that does not exist, an anonymous member that contains its own
 * struct (the bounds end the search), garbage, a truncated blob, a blob
 * over GUEST_BTF_MAX.
 *
 * Real part (when DOMPROF_GUEST_VMLINUX names vmlinux files, ':'
 * separated; tests/vm/test-guest-tasks.sh sets it to the cached Debian
 * 6.1 and 6.12 kernels, which a unit test must not download): the .BTF
 * section of each, with offsets derived from the kernel's C sources
 * rather than from BTF: tgid follows pid, real_parent follows them and
 * the stack canary, mm follows tasks and the two SMP push lists, flags
 * follows thread_info, __state, stack and usage, MODULE_NAME_LEN is 56,
 * and struct mod_kallsyms is four 8-byte slots. Its control: the same
 * blob with the name task_struct spoiled must be refused.
 *
 * Paging part (always): guest_layout_resolve on a fake guest with a
 * 4-level page_offset_base and with a 5-level one (0xff3da8edc0000000),
 * the mode from its half, from __pgtable_l5_enabled (believed only when
 * 0 or 1) and as given (cr4); the 5-level base checked through the
 * direct map with a phys_base below 0; the fixed bases without KASLR.
 * Controls: the 5-level guest taken for a 4-level one, a base whose
 * alias differs or is 1 GiB off, unaligned or out-of-half values are
 * refused. And guest_mem_read's canonical check per mode.
 *
 * Version part (always): guest_kernel_version reads the banner's version
 * word, bounded by the buffer, printable only; no banner, an unmapped or
 * user-half address give "" and -ENOENT.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "guest/ksyms.h"
#include "guest/layout.h"
#include "util/le.h"
#include "unit.h"
#include "util/xalloc.h"

/* ---- Synthetic BTF ------------------------------------------------------- */

enum {
	NO_COMM = 1, COMM_4 = 2, PID_BITFIELD = 4, SELF_ANON = 8, PAST_END = 16,
	NO_PCPU_HOT = 32, OLD_MODULE = 64, NO_MODULE = 128, BAD_TYPE = 256,
};

/* Writes the blob into *len bytes (malloc'd). Offsets: see the checks. */
static void *build(unsigned o, size_t *len)
{
	struct btf *b = btf__new_empty();
	int i_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int i_uint = btf__add_int(b, "unsigned int", 4, 0);
	int i_long = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	int i_char = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	int pid_t_ = btf__add_typedef(b, "pid_t", i_int);
	int comm = btf__add_array(b, i_int, i_char, (o & COMM_4) ? 4 : 16);
	int name56 = btf__add_array(b, i_int, i_char, 56);
	int pad64 = btf__add_array(b, i_int, i_char, 64);
	int vptr = btf__add_ptr(b, 0);
	int cvptr = btf__add_const(b, btf__add_volatile(b, vptr));
	int lh = btf__add_struct(b, "list_head", 16);
	btf__add_field(b, "next", vptr, 0, 0);
	btf__add_field(b, "prev", vptr, 64, 0);

	/* task_struct: flags 12; union at 64 { struct { pid 0, tgid 4 } };
	 * tasks 128; mm 200 (const volatile pointer); real_parent 208; comm 300. */
	int ids = btf__add_struct(b, NULL, 8);
	btf__add_field(b, "pid", pid_t_, 0, (o & PID_BITFIELD) ? 20 : 0);
	btf__add_field(b, "tgid", pid_t_, 32, 0);
	int un = btf__add_union(b, NULL, 8);
	btf__add_field(b, NULL, ids, 0, 0);
	btf__add_field(b, "x", i_long, 0, 0);
	int task = btf__add_struct(b, "task_struct", 512);
	if (o & SELF_ANON)   /* the struct inside itself, many times over */
		for (int k = 0; k < 20; k++)
			btf__add_field(b, NULL, task, 0, 0);
	btf__add_field(b, "flags", i_uint, 96, 0);
	btf__add_field(b, NULL, un, 64 * 8, 0);
	btf__add_field(b, "tasks", (o & BAD_TYPE) ? 99999 : lh, 128 * 8, 0);
	btf__add_field(b, "mm", cvptr, 200 * 8, 0);
	btf__add_field(b, "real_parent", vptr, 208 * 8, 0);
	if (!(o & NO_COMM))
		btf__add_field(b, "comm", comm, ((o & PAST_END) ? 500 : 300) * 8, 0);

	/* mm_struct: struct { long a; union { struct { long b; pgd } } } -> pgd 16 */
	int s2 = btf__add_struct(b, NULL, 16);
	btf__add_field(b, "b", i_long, 0, 0);
	btf__add_field(b, "pgd", vptr, 64, 0);
	int u2 = btf__add_union(b, NULL, 16);
	btf__add_field(b, NULL, s2, 0, 0);
	int s1 = btf__add_struct(b, NULL, 24);
	btf__add_field(b, "a", i_long, 0, 0);
	btf__add_field(b, NULL, u2, 64, 0);
	btf__add_struct(b, "mm_struct", 256);
	btf__add_field(b, NULL, s1, 0, 0);

	if (!(o & NO_MODULE)) {
		int core;
		if (o & OLD_MODULE) {   /* core_layout at 320: base 0, size 8 */
			core = btf__add_struct(b, "module_layout", 56);
			btf__add_field(b, "base", vptr, 0, 0);
			btf__add_field(b, "size", i_uint, 64, 0);
		} else {   /* mem[3] at 320 of struct module_memory (64 bytes): MOD_TEXT is 1 here */
			btf__add_enum(b, "mod_mem_type", 4);
			btf__add_enum_value(b, "MOD_DATA", 0);
			btf__add_enum_value(b, "MOD_TEXT", 1);
			int mm = btf__add_struct(b, "module_memory", 64);
			btf__add_field(b, "base", vptr, 0, 0);
			btf__add_field(b, "size", i_uint, 64, 0);
			core = btf__add_array(b, i_int, mm, 3);
		}
		btf__add_struct(b, "module", 1024);
		btf__add_field(b, "state", i_int, 0, 0);
		btf__add_field(b, "list", lh, 64, 0);
		btf__add_field(b, "name", name56, 24 * 8, 0);
		btf__add_field(b, (o & OLD_MODULE) ? "core_layout" : "mem", core, 320 * 8, 0);
		btf__add_field(b, "kallsyms", vptr, 600 * 8, 0);
		btf__add_struct(b, "mod_kallsyms", 32);
		btf__add_field(b, "symtab", vptr, 0, 0);
		btf__add_field(b, "num_symtab", i_uint, 64, 0);
		btf__add_field(b, "strtab", vptr, 128, 0);
		btf__add_field(b, "typetab", vptr, 192, 0);
	}
	if (!(o & NO_PCPU_HOT)) {   /* union { struct { long x; current_task 8 }; pad[64] } */
		int s = btf__add_struct(b, NULL, 16);
		btf__add_field(b, "x", i_long, 0, 0);
		btf__add_field(b, "current_task", vptr, 64, 0);
		int u = btf__add_union(b, NULL, 64);
		btf__add_field(b, NULL, s, 0, 0);
		btf__add_field(b, "pad", pad64, 0, 0);
		btf__add_struct(b, "pcpu_hot", 64);
		btf__add_field(b, NULL, u, 0, 0);
	}
	__u32 sz;
	const void *raw = btf__raw_data(b, &sz);
	void *copy = xmalloc(sz);
	memcpy(copy, raw, sz);
	*len = sz;
	btf__free(b);
	return copy;
}

static int from(unsigned o, struct guest_layout *l, char *why)
{
	size_t len;
	void *blob = build(o, &len);
	int r = guest_layout_from_btf(blob, len, l, why, 256);
	free(blob);
	return r;
}

static void test_synthetic(void)
{
	struct guest_layout l;
	char why[256];
	CHECK(from(0, &l, why) == 0);
	CHECK_STR(why, "");
	CHECK_EQ_U64(l.task_flags, 12);
	CHECK_EQ_U64(l.task_pid, 64);
	CHECK_EQ_U64(l.task_tgid, 68);
	CHECK_EQ_U64(l.task_tasks, 128);
	CHECK_EQ_U64(l.task_mm, 200);
	CHECK_EQ_U64(l.task_real_parent, 208);
	CHECK_EQ_U64(l.task_comm, 300);
	CHECK_EQ_U64(l.task_start_time, GUEST_NO_OFFSET);   /* optional: not in this BTF */
	CHECK_EQ_U64(l.task_comm_len, 16);
	CHECK_EQ_U64(l.mm_pgd, 16);
	CHECK_EQ_U64(l.mod_list, 8);
	CHECK_EQ_U64(l.mod_name, 24);
	CHECK_EQ_U64(l.mod_name_len, 56);
	CHECK_EQ_U64(l.mod_kallsyms, 600);
	CHECK_EQ_U64(l.mod_core_base, 320 + 64);      /* mem[MOD_TEXT = 1].base */
	CHECK_EQ_U64(l.mod_core_size, 320 + 64 + 8);
	CHECK(l.mks_symtab == 0 && l.mks_num_symtab == 8 && l.mks_strtab == 16 && l.mks_typetab == 24);
	CHECK_STR(l.percpu_sym, "pcpu_hot");
	CHECK_EQ_U64(l.percpu_current, 8);
	CHECK(!l.has_current && l.init_task == 0);   /* runtime parts: guest_layout_read */

	CHECK(from(OLD_MODULE | NO_PCPU_HOT, &l, why) == 0);
	CHECK_EQ_U64(l.mod_core_base, 320);
	CHECK_EQ_U64(l.mod_core_size, 328);
	CHECK_STR(l.percpu_sym, "current_task");
	CHECK_EQ_U64(l.percpu_current, 0);

	/* No struct module: not an error, the module fields are unknown. */
	CHECK(from(NO_MODULE, &l, why) == 0);
	CHECK(l.mod_list == GUEST_NO_OFFSET && l.mod_core_base == GUEST_NO_OFFSET &&
	      l.mks_symtab == GUEST_NO_OFFSET && l.task_comm == 300);

	/* Refusals, with the field named. */
	CHECK(from(NO_COMM, &l, why) == -ENOENT);
	CHECK(strstr(why, "comm") != NULL);
	CHECK(l.task_pid == GUEST_NO_OFFSET);   /* nothing half-filled */
	CHECK(from(COMM_4, &l, why) == -EBADMSG);
	CHECK(strstr(why, "task_struct.comm has size 4") != NULL);
	CHECK(from(PID_BITFIELD, &l, why) == -EBADMSG);
	CHECK(strstr(why, "pid") != NULL);
	CHECK(from(PAST_END, &l, why) == -EBADMSG);
	CHECK(strstr(why, "past") != NULL);
	/* The struct inside itself 20 times (20^8 paths to the depth bound):
	 * an absent field is refused when the work bound is reached; a
	 * present one is found at the depth bound, still inside the struct. */
	CHECK(from(SELF_ANON | NO_COMM, &l, why) == -EBADMSG);
	CHECK(strstr(why, "beyond bounds") != NULL);
	int r = from(SELF_ANON, &l, why);
	CHECK(r == -EBADMSG || (r == 0 && l.task_comm + 16 <= 512));
}

static void test_garbage(void)
{
	struct guest_layout l;
	char why[256];
	static const char junk[] = "this is not BTF at all, but long enough to have a header";
	CHECK(guest_layout_from_btf(junk, sizeof(junk), &l, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "not BTF") != NULL);
	CHECK(guest_layout_from_btf(junk, 0, &l, why, sizeof(why)) == -EINVAL);
	size_t len;
	uint8_t *blob = build(0, &len);
	CHECK(guest_layout_from_btf(blob, len - 9, &l, why, sizeof(why)) == -EINVAL);   /* cut */
	CHECK(guest_layout_from_btf(blob, (size_t)GUEST_BTF_MAX + 1, &l, why, sizeof(why)) == -E2BIG);
	/* A type section off its 4-byte alignment (fuzz-guest found libbpf
	 * reading it misaligned): refused before libbpf sees it. */
	uint8_t *mis = xmalloc(len);
	memcpy(mis, blob, len);
	put32(mis + 8, get32(mis + 8) + 2);
	CHECK(guest_layout_from_btf(mis, len, &l, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "not 4-byte aligned") != NULL);
	put32(mis + 8, get32(mis + 8) - 2);   /* the control: restored, it parses */
	CHECK(guest_layout_from_btf(mis, len, &l, why, sizeof(why)) == 0);
	free(mis);
	/* A member whose type id is past the last type: refused, named. */
	CHECK(from(BAD_TYPE, &l, why) == -EBADMSG);
	CHECK(strstr(why, "task_struct.tasks") != NULL);
	free(blob);
	/* The control of this test: the untouched blob parses. */
	blob = build(0, &len);
	CHECK(guest_layout_from_btf(blob, len, &l, why, sizeof(why)) == 0);
	free(blob);
}

/* ---- Runtime addresses and the paging mode (guest_layout_resolve) -------- */

/* A fake guest: the kernel image (init_task, page_offset_base's slot,
 * __pgtable_l5_enabled, phys_base, linux_banner) at KASLR-like
 * addresses, and the direct map's alias of linux_banner, whose bytes
 * the checks choose. */
#define R_IMG     0xffffffff9d000000ull
#define R_INIT    (R_IMG + 0x1000)
#define R_POB     (R_IMG + 0x2000)
#define R_L5      (R_IMG + 0x2008)
#define R_PB      (R_IMG + 0x2010)
#define R_BANNER  (R_IMG + 0x3000)
#define R_PHYSB   0xffffffffff400000ull   /* phys_base below 0: KASLR moved the image further virtually */
#define BANNER    "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP"
static uint8_t r_img[0x4000], r_alias[64];
static bool r_has_l5, r_has_pob = true, r_has_pb = true;

static uint64_t r_sym(void *ctx, const char *name)
{
	if (!strcmp(name, "init_task"))
		return R_INIT;
	if (!strcmp(name, "page_offset_base"))
		return r_has_pob ? R_POB : 0;
	if (!strcmp(name, "__pgtable_l5_enabled"))
		return r_has_l5 ? R_L5 : 0;
	if (!strcmp(name, "phys_base"))
		return r_has_pb ? R_PB : 0;
	if (!strcmp(name, "linux_banner"))
		return R_BANNER;
	return 0;
}

/* The guest with page_offset_base = pob, and the banner's bytes at its
 * direct-map alias (alias_ok: the same bytes, else others). */
static struct guest_image r_guest(uint64_t pob, bool alias_ok)
{
	memset(r_img, 0, sizeof(r_img));
	put64(r_img + (R_POB - R_IMG), pob);
	put64(r_img + (R_PB - R_IMG), R_PHYSB);
	memcpy(r_img + (R_BANNER - R_IMG), BANNER, sizeof(BANNER));
	memcpy(r_alias, r_img + (R_BANNER - R_IMG), sizeof(r_alias));
	if (!alias_ok)
		r_alias[8] ^= 1;
	struct guest_image im = { .n = 2 };
	im.r[0].addr = R_IMG, im.r[0].len = sizeof(r_img), im.r[0].b = r_img;
	/* __pa_symbol(linux_banner) = banner - 0xffffffff80000000 + phys_base */
	im.r[1].addr = pob + (R_BANNER - 0xffffffff80000000ull + R_PHYSB);
	im.r[1].len = sizeof(r_alias), im.r[1].b = r_alias;
	return im;
}

static int r_resolve(struct guest_image *im, unsigned paging, struct guest_layout *l, char *why)
{
	struct guest_mem m = { guest_image_read, im, 0, 0, 0, 0, (uint8_t)paging };
	memset(l, 0, sizeof(*l));
	why[0] = 0;   /* a success leaves it as it was */
	int r = guest_layout_resolve(&m, r_sym, NULL, l, why, 256);
	if (r == 0)
		CHECK_EQ_U64(m.paging, l->paging);   /* later reads use the mode found */
	return r;
}

static void test_paging(void)
{
	struct guest_layout l;
	char why[256];
	const uint64_t L5 = 0xff3da8edc0000000ull, L4 = 0xffff9a5b40000000ull;

	/* 4-level, as before: the value's half says so; no alias is read */
	struct guest_image im = r_guest(L4, false);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0);
	CHECK_EQ_U64(l.paging, GUEST_PAGING_4);
	CHECK_EQ_U64(l.page_offset_base, L4);
	CHECK_STR(l.paging_how, "the half page_offset_base is in");
	CHECK(r_resolve(&im, GUEST_PAGING_4, &l, why) == 0 && l.paging == GUEST_PAGING_4);
	CHECK_STR(l.paging_how, "as given");

	/* 5-level (the value): from its half, from the kernel's
	 * flag, from cr4; checked through the direct map */
	im = r_guest(L5, true);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0);
	CHECK_STR(why, "");
	CHECK_EQ_U64(l.paging, GUEST_PAGING_5);
	CHECK_EQ_U64(l.page_offset_base, L5);
	CHECK(r_resolve(&im, GUEST_PAGING_5, &l, why) == 0 && l.paging == GUEST_PAGING_5);
	CHECK_STR(l.paging_how, "as given");
	r_has_l5 = true;
	put32(r_img + (R_L5 - R_IMG), 1);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0 && l.paging == GUEST_PAGING_5);
	CHECK_STR(l.paging_how, "__pgtable_l5_enabled");
	/* a flag that is not 0 or 1 is not believed: the value's half decides */
	put32(r_img + (R_L5 - R_IMG), 7);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0 && l.paging == GUEST_PAGING_5);
	CHECK_STR(l.paging_how, "the half page_offset_base is in");
	/* the kernel's flag says 4-level: a 5-level value is refused */
	put32(r_img + (R_L5 - R_IMG), 0);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == -EBADMSG);
	CHECK(strstr(why, "4-level paging (__pgtable_l5_enabled)") != NULL);
	r_has_l5 = false;

	/* Controls. The guest taken for a 4-level one (the code before
	 * 5-level support): its page_offset_base is refused. */
	CHECK(r_resolve(&im, GUEST_PAGING_4, &l, why) == -EBADMSG);
	CHECK(strstr(why, "page_offset_base is 0xff3da8edc0000000: not a kernel direct-map base with 4-level") != NULL);
	CHECK(l.page_offset_base == 0 && l.init_task == 0);   /* nothing half-filled */
	/* A value that does not map the kernel image: refused */
	im = r_guest(L5, false);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == -EBADMSG);
	CHECK(strstr(why, "does not map the kernel: linux_banner") != NULL);
	CHECK(r_resolve(&im, GUEST_PAGING_5, &l, why) == -EBADMSG);
	/* ... nor one 1 GiB off (its alias is not mapped) */
	struct guest_image off = r_guest(L5, true);
	put64(r_img + (R_POB - R_IMG), L5 + (1ull << 30));
	CHECK(r_resolve(&off, GUEST_PAGING_UNKNOWN, &l, why) == -EFAULT);
	CHECK(strstr(why, "cannot be read") != NULL);
	/* without phys_base there is nothing to check with: accepted */
	r_has_pb = false;
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0 && l.paging == GUEST_PAGING_5);
	r_has_pb = true;
	/* phys_base not page-aligned */
	im = r_guest(L5, true);
	put64(r_img + (R_PB - R_IMG), R_PHYSB + 0x10);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == -EBADMSG);
	CHECK(strstr(why, "phys_base") != NULL);
	/* not 1 GiB-aligned; in no kernel half; a user address */
	const uint64_t bad[] = { L5 + 0x1000, 0x00ff000000000000ull, 0x7f0000000000ull, 0xfe00000000000000ull };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		im = r_guest(bad[i], true);
		CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == -EBADMSG);
		CHECK(strstr(why, "not a kernel direct-map base") != NULL);
	}

	/* No page_offset_base (CONFIG_RANDOMIZE_MEMORY=n): the fixed bases */
	r_has_pob = false;
	im = r_guest(0, true);
	CHECK(r_resolve(&im, GUEST_PAGING_UNKNOWN, &l, why) == 0 && l.paging == GUEST_PAGING_4);
	CHECK_EQ_U64(l.page_offset_base, 0xffff888000000000ull);
	CHECK_STR(l.paging_how, "no page_offset_base");
	im = r_guest(0xff11000000000000ull, true);   /* the alias at the fixed 5-level base */
	CHECK(r_resolve(&im, GUEST_PAGING_5, &l, why) == 0);
	CHECK_EQ_U64(l.page_offset_base, 0xff11000000000000ull);
	r_has_pob = true;
}

/* guest_mem_read refuses what the guest's paging mode does not map. */
static void test_canonical(void)
{
	static uint8_t zero[0x2000];
	struct guest_image im = { .n = 3 };
	im.r[0].addr = 0xff3da8edc0000000ull, im.r[0].len = sizeof(zero), im.r[0].b = zero;  /* 5-level direct map */
	im.r[1].addr = 0xffff888000000000ull, im.r[1].len = sizeof(zero), im.r[1].b = zero;  /* 4-level direct map */
	im.r[2].addr = 0x0000800000000000ull - 0x1000, im.r[2].len = sizeof(zero), im.r[2].b = zero;  /* across 47 bits */
	struct guest_mem m = { guest_image_read, &im, 0, 0, 0, 0, GUEST_PAGING_4 };
	uint64_t v;
	CHECK(guest_mem_u64(&m, 0xffff888000000000ull, &v) == 0);
	CHECK(guest_mem_u64(&m, 0xff3da8edc0000000ull, &v) == -EFAULT);
	CHECK(m.reads == 1);   /* refused before the reader */
	CHECK(guest_mem_u64(&m, 0x00007ffffffff000ull, &v) == 0);
	uint8_t b[16];
	CHECK(guest_mem_read(&m, 0x00007ffffffffff8ull, b, 16) == -EFAULT);   /* its end is not canonical */
	m.paging = GUEST_PAGING_5;
	CHECK(guest_mem_u64(&m, 0xff3da8edc0000000ull, &v) == 0);
	CHECK(guest_mem_u64(&m, 0xffff888000000000ull, &v) == 0);
	CHECK(guest_mem_read(&m, 0x00007ffffffffff8ull, b, 16) == 0);       /* user space up to 56 bits */
	CHECK(guest_mem_u64(&m, 0xfe00000000000000ull, &v) == -EFAULT);     /* not canonical in 57 bits */
	m.paging = GUEST_PAGING_UNKNOWN;   /* either mode's */
	CHECK(guest_mem_u64(&m, 0xff3da8edc0000000ull, &v) == 0 && guest_mem_u64(&m, 0xffff888000000000ull, &v) == 0);
	CHECK(guest_mem_u64(&m, 0x0100000000000000ull, &v) == -EFAULT);
	/* the kernel-half checks */
	CHECK(guest_kptr(0xff00000000000000ull) && !guest_kptr(0xfeffffffffffffffull));
	m.paging = GUEST_PAGING_4;
	CHECK(!guest_mem_kptr(&m, 0xff3da8edc0000000ull) && guest_mem_kptr(&m, 0xffff800000000000ull));
	CHECK(!guest_mem_kptr(&m, 0xffff7fffffffffffull));
	m.paging = GUEST_PAGING_5;
	CHECK(guest_mem_kptr(&m, 0xff3da8edc0000000ull) && !guest_mem_kptr(&m, 0x00ff000000000000ull));
}

/* ---- Real kernels -------------------------------------------------------- */

/* The .BTF section of an ELF file, bounds-checked; NULL if absent. */
static const uint8_t *elf_btf(const uint8_t *f, size_t flen, size_t *len)
{
	if (flen < sizeof(Elf64_Ehdr) || memcmp(f, ELFMAG, SELFMAG))
		return NULL;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	if (eh->e_shoff > flen || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > flen - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	const Elf64_Shdr *str = &sh[eh->e_shstrndx];
	if (str->sh_offset > flen || str->sh_size > flen - str->sh_offset)
		return NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= str->sh_size || sh[i].sh_offset > flen || sh[i].sh_size > flen - sh[i].sh_offset)
			continue;
		const char *n = (const char *)f + str->sh_offset + sh[i].sh_name;
		if (strnlen(n, str->sh_size - sh[i].sh_name) == 4 && !memcmp(n, ".BTF", 4)) {
			*len = sh[i].sh_size;
			return f + sh[i].sh_offset;
		}
	}
	return NULL;
}

static void test_kernel(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: cannot open\n", path);
		CHECK(fd >= 0);
		return;
	}
	uint8_t *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(f != MAP_FAILED);
	if (f == MAP_FAILED)
		return;
	size_t len = 0;
	const uint8_t *btf = elf_btf(f, (size_t)st.st_size, &len);
	CHECK(btf != NULL);
	if (!btf) {
		munmap(f, (size_t)st.st_size);
		return;
	}
	struct guest_layout l;
	char why[256];
	int r = guest_layout_from_btf(btf, len, &l, why, sizeof(why));
	CHECK(r == 0);
	printf("%s: .BTF %zu bytes: tasks %u pid %u tgid %u comm %u mm %u real_parent %u flags %u start_time %u "
	       "pgd %u; module list %u name %u/%u kallsyms %u core %u/%u; current %s+%llu\n",
	       path, len, l.task_tasks, l.task_pid, l.task_tgid, l.task_comm, l.task_mm, l.task_real_parent,
	       l.task_flags, l.task_start_time, l.mm_pgd, l.mod_list, l.mod_name, l.mod_name_len, l.mod_kallsyms, l.mod_core_base,
	       l.mod_core_size, l.percpu_sym, (unsigned long long)l.percpu_current);
	/* struct task_struct: thread_info (24 bytes on x86_64), __state,
	 * stack, usage, flags; ...; pid_t pid, tgid; stack_canary;
	 * real_parent. tasks, then pushable_tasks (plist_node, 40) and
	 * pushable_dl_tasks (rb_node, 24), then mm. */
	CHECK_EQ_U64(l.task_flags, 24 + 4 + 4 + 8 + 4);
	CHECK_EQ_U64(l.task_tgid, l.task_pid + 4);
	CHECK_EQ_U64(l.task_real_parent, l.task_pid + 4 + 4 + 8);
	CHECK_EQ_U64(l.task_mm, l.task_tasks + 16 + 40 + 24);
	CHECK_EQ_U64(l.task_comm_len, 16);
	/* start_time lies between pid and comm: a task's identity is one
	 * transfer (guest_task_ident) */
	CHECK(l.task_start_time > l.task_pid && l.task_start_time < l.task_comm &&
	      l.task_comm + 16 - l.task_pid <= 2032);
	CHECK(l.mm_pgd % 8 == 0 && l.mm_pgd < 256);
	/* struct module: state, list, name[MODULE_NAME_LEN = 64 - 8]. */
	CHECK_EQ_U64(l.mod_list, 8);
	CHECK_EQ_U64(l.mod_name, 24);
	CHECK_EQ_U64(l.mod_name_len, 56);
	CHECK(l.mod_kallsyms != GUEST_NO_OFFSET && l.mod_core_base != GUEST_NO_OFFSET);
	CHECK_EQ_U64(l.mod_core_size, l.mod_core_base + 8);   /* void *base; unsigned int size */
	CHECK(l.mks_symtab == 0 && l.mks_num_symtab == 8 && l.mks_strtab == 16 && l.mks_typetab == 24);
	/* 6.1: the per-CPU variable; 6.2+: pcpu_hot, current_task first
	 * (inside an anonymous union and struct). */
	if (strstr(path, "linux-image-6.1.")) {
		CHECK_STR(l.percpu_sym, "current_task");
		CHECK_EQ_U64(l.mm_pgd, 72);
	} else if (strstr(path, "linux-image-6.12.")) {
		CHECK_STR(l.percpu_sym, "pcpu_hot");
		CHECK_EQ_U64(l.mm_pgd, 120);
	}
	CHECK_EQ_U64(l.percpu_current, 0);

	/* Controls: the name task_struct spoiled; the blob cut in half. */
	uint8_t *copy = xmalloc(len);
	memcpy(copy, btf, len);
	uint8_t *p = memmem(copy, len, "\0task_struct\0", 13);
	CHECK(p != NULL);
	if (p)
		p[11] = 'X';
	CHECK(guest_layout_from_btf(copy, len, &l, why, sizeof(why)) == -ENOENT);
	CHECK_STR(why, "BTF has no struct task_struct");
	CHECK(guest_layout_from_btf(btf, len / 2, &l, why, sizeof(why)) == -EINVAL);
	free(copy);
	munmap(f, (size_t)st.st_size);
}

/* The banner's version word, as the refusal lines name the kernel. */
static void test_version(void)
{
	static uint8_t page[256];
	struct guest_image im = { .n = 1 };
	im.r[0].addr = 0xffffffff82000000ull, im.r[0].len = sizeof(page), im.r[0].b = page;
	struct guest_mem m = { guest_image_read, &im, 0, 0, 0, 0, GUEST_PAGING_4 };
	char v[64];
	memcpy(page, "Linux version 7.2.13+deb14-amd64 (debian-kernel@lists.debian.org)", 66);
	CHECK(guest_kernel_version(&m, 0xffffffff82000000ull, v, sizeof(v)) == 0);
	CHECK_STR(v, "7.2.13+deb14-amd64");
	char small[6];
	CHECK(guest_kernel_version(&m, 0xffffffff82000000ull, small, sizeof(small)) == 0);
	CHECK_STR(small, "7.2.1");
	/* controls: not a banner, a control byte ends the word, unmapped, user half */
	CHECK(guest_kernel_version(&m, 0xffffffff82000001ull, v, sizeof(v)) == -ENOENT && !v[0]);
	page[16] = 0x1b;
	CHECK(guest_kernel_version(&m, 0xffffffff82000000ull, v, sizeof(v)) == 0);
	CHECK_STR(v, "7.");
	memset(page + 14, 0xff, 8);
	CHECK(guest_kernel_version(&m, 0xffffffff82000000ull, v, sizeof(v)) == -ENOENT && !v[0]);
	CHECK(guest_kernel_version(&m, 0xffffffff90000000ull, v, sizeof(v)) == -ENOENT);
	CHECK(guest_kernel_version(&m, 0x400000, v, sizeof(v)) == -ENOENT);
}

int main(void)
{
	test_synthetic();
	test_garbage();
	test_paging();
	test_canonical();
	test_version();
	const char *env = getenv("DOMPROF_GUEST_VMLINUX");
	if (env && *env) {
		char *list = xstrdup(env), *save = NULL;
		for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save))
			test_kernel(p);
		free(list);
	} else {
		printf("real-kernel part skipped: DOMPROF_GUEST_VMLINUX is not set (tests/vm/test-guest-tasks.sh sets it)\n");
	}
	return unit_done();
}
