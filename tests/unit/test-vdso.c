// SPDX-License-Identifier: MIT
/*
 * Unit test of the vDSO copier (src/symbols/vdso.c): vdso_copy gives
 * exactly the bytes of this process's [vdso] mapping (the size the old
 * /proc/self/maps copiers took, found here independently), which parse
 * as an ELF with the vDSO's symbols; vdso_extent, fed synthetic headers,
 * takes the furthest of the program headers, PT_LOAD contents and
 * section headers, and refuses headers that overflow, lie outside the
 * readable bytes, are too large or are not native ELF.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "symbols/internal.h"
#include "symbols/vdso.h"
#include "unit.h"

/* The [vdso] mapping of this process from /proc/self/maps (the control:
 * found without the ELF headers). */
static bool maps_vdso(unsigned long *lo, unsigned long *hi)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	char line[512];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", lo, hi) == 2;
	fclose(f);
	return found;
}

static void test_copy(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR), lo = 0, hi = 0;
	uint8_t *data = NULL;
	size_t len = 0;
	int r = vdso_copy(&data, &len);
	if (!base) {
		CHECK_EQ_U64(r, -ENOENT);
		return;
	}
	CHECK_EQ_U64(r, 0);
	CHECK(data != NULL);
	CHECK(maps_vdso(&lo, &hi));
	CHECK_EQ_U64(lo, base);
	CHECK_EQ_U64(len, hi - lo);
	CHECK(len <= VDSO_MAX_SIZE);
	CHECK(data && !memcmp(data, (const void *)base, len));
	/* it is an ELF with the vDSO's functions */
	struct elf_info info;
	struct sym_table t;
	symtab_init(&t);
	int n = elf_load(NULL, data, len, &info, &t, 0);
	CHECK(n > 0);
	CHECK(info.ok);
	bool clock = false;
	for (size_t i = 0; i < t.n; i++)
		clock |= strstr(t.arena + t.v[i].u.off, "clock_gettime") != NULL;
	CHECK(clock);
	elf_info_release(&info);
	symtab_release(&t);
	free(data);
}

/* A synthetic native ELF header page: 2 program headers, sections. */
static size_t make_elf(uint8_t *buf, size_t size)
{
	memset(buf, 0, size);
	ElfW(Ehdr) *eh = (void *)buf;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(ElfW(Phdr));
	eh->e_phnum = 2;
	eh->e_shoff = 3000;
	eh->e_shentsize = sizeof(ElfW(Shdr));
	eh->e_shnum = 10;
	ElfW(Phdr) *ph = (void *)(buf + eh->e_phoff);
	ph[0].p_type = PT_LOAD;
	ph[0].p_offset = 0;
	ph[0].p_filesz = 2000;
	ph[1].p_type = PT_DYNAMIC;
	ph[1].p_offset = 900000;      /* not PT_LOAD: not counted */
	ph[1].p_filesz = 16;
	return 3000 + 10 * sizeof(ElfW(Shdr));
}

static void test_extent(void)
{
	uint8_t buf[512];
	ElfW(Ehdr) *eh = (void *)buf;
	ElfW(Phdr) *ph = (void *)(buf + sizeof(*eh));
	size_t len = 0, want = make_elf(buf, sizeof(buf));
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), 0);
	CHECK_EQ_U64(len, want);
	/* a PT_LOAD reaching further decides */
	ph[0].p_filesz = 70000;
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), 0);
	CHECK_EQ_U64(len, 70000);
	/* hostile headers: each refused, none read outside buf */
	make_elf(buf, sizeof(buf));
	ph[0].p_offset = UINT64_MAX - 10;          /* offset + size wraps */
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	ph[0].p_filesz = VDSO_MAX_SIZE + 1;         /* over the bound */
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_shoff = (ElfW(Off))-1;                /* section headers wrap */
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_shnum = 0xffff;
	eh->e_shoff = VDSO_MAX_SIZE - 100;
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_phnum = 100;                          /* headers past the readable bytes */
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_phoff = (ElfW(Off))-8;
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_phentsize = 7;
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	eh->e_ident[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS32 : ELFCLASS64;
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	make_elf(buf, sizeof(buf));
	buf[1] = 'X';
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), -EINVAL);
	CHECK_EQ_U64(vdso_extent(buf, sizeof(*eh) - 1, &len), -EINVAL);
	CHECK_EQ_U64(vdso_extent(NULL, 4096, &len), -EINVAL);
	/* the control: the same page, repaired, passes again */
	make_elf(buf, sizeof(buf));
	CHECK_EQ_U64(vdso_extent(buf, sizeof(buf), &len), 0);
	CHECK_EQ_U64(len, want);
}

int main(void)
{
	test_copy();
	test_extent();
	return unit_done();
}
