// SPDX-License-Identifier: MIT
/*
 * test-tool guest-layout [--truncate=N] [--flip=OFF] VMLINUX
 *
 * The structure layouts the passive domain reads processes and modules
 * with (src/guest/layout.c guest_layout_from_btf), resolved from the .BTF
 * section of a kernel ELF (an unpacked vmlinux), offline: the kernel
 * matrix's BTF check (tests/e2e/guest-ksyms-matrix.sh). Controls:
 * --truncate=N keeps the first N bytes of the BTF only, --flip=OFF
 * changes (xor 0xff) the byte at OFF of it; the resolution must then
 * refuse it with one line saying why.
 *
 * Output (stdout), on success:
 *   btf bytes=N
 *   task tasks=.. pid=.. tgid=.. comm=../.. mm=.. real_parent=.. flags=.. start_time=..
 *   mm pgd=..
 *   module list=.. name=../.. kallsyms=.. core_base=.. core_size=..
 *   mod_kallsyms symtab=.. num_symtab=.. strtab=.. typetab=..
 *   current SYM+OFF
 * (-1: a field BTF does not have). On failure, one line on stderr
 * ("test-tool guest-layout: WHY") and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/layout.h"
#include "test-tool.h"
#include "util/xalloc.h"

#define ME "test-tool guest-layout"

/* The .BTF section's bytes (malloc'd) of the ELF at path, or NULL with a
 * message. */
static unsigned char *read_btf(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, ME ": cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	unsigned char *out = NULL;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0) {
		fprintf(stderr, ME ": %s is not an ELF file\n", path);
		goto done;
	}
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(s, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".BTF"))
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		if (!d || !d->d_buf || d->d_size == 0 || d->d_size > GUEST_BTF_MAX) {
			fprintf(stderr, ME ": %s: .BTF section unreadable or over %u MiB\n", path, GUEST_BTF_MAX >> 20);
			goto done;
		}
		out = xmalloc(d->d_size);
		memcpy(out, d->d_buf, d->d_size);
		*len = d->d_size;
		goto done;
	}
	fprintf(stderr, ME ": %s has no .BTF section\n", path);
done:
	if (e)
		elf_end(e);
	close(fd);
	return out;
}

int cmd_guest_layout(int argc, char **argv)
{
	long long trunc = -1, flip = -1;
	int a = 1;
	for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
		if (!strncmp(argv[a], "--truncate=", 11))
			trunc = strtoll(argv[a] + 11, NULL, 0);
		else if (!strncmp(argv[a], "--flip=", 7))
			flip = strtoll(argv[a] + 7, NULL, 0);
		else
			break;
	}
	if (a + 1 != argc) {
		fprintf(stderr, "usage: test-tool guest-layout [--truncate=N] [--flip=OFF] VMLINUX\n");
		return 2;
	}
	size_t len = 0;
	unsigned char *btf = read_btf(argv[a], &len);
	if (!btf)
		return 1;
	if (trunc >= 0 && (size_t)trunc < len)
		len = (size_t)trunc;
	if (flip >= 0) {
		if ((size_t)flip >= len) {
			fprintf(stderr, ME ": --flip=%lld is past the BTF's %zu bytes\n", flip, len);
			free(btf);
			return 2;
		}
		btf[flip] ^= 0xff;
	}
	struct guest_layout l;
	char why[256];
	int r = guest_layout_from_btf(btf, len, &l, why, sizeof(why));
	free(btf);
	if (r < 0) {
		fprintf(stderr, ME ": %s\n", why[0] ? why : strerror(-r));
		return 1;
	}
#define I(x) ((x) == GUEST_NO_OFFSET ? -1 : (long)(x))
	printf("btf bytes=%zu\n", len);
	printf("task tasks=%ld pid=%ld tgid=%ld comm=%ld/%ld mm=%ld real_parent=%ld flags=%ld start_time=%ld\n",
	       I(l.task_tasks), I(l.task_pid), I(l.task_tgid), I(l.task_comm), I(l.task_comm_len), I(l.task_mm),
	       I(l.task_real_parent), I(l.task_flags), I(l.task_start_time));
	printf("mm pgd=%ld\n", I(l.mm_pgd));
	printf("module list=%ld name=%ld/%ld kallsyms=%ld core_base=%ld core_size=%ld\n", I(l.mod_list),
	       I(l.mod_name), I(l.mod_name_len), I(l.mod_kallsyms), I(l.mod_core_base), I(l.mod_core_size));
	printf("mod_kallsyms symtab=%ld num_symtab=%ld strtab=%ld typetab=%ld\n", I(l.mks_symtab),
	       I(l.mks_num_symtab), I(l.mks_strtab), I(l.mks_typetab));
	printf("current %s+%" PRIu64 "\n", l.percpu_sym[0] ? l.percpu_sym : "none", l.percpu_current);
#undef I
	return 0;
}
