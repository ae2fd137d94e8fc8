// SPDX-License-Identifier: MIT
/*
 * The _text layout of a vmlinux for KASLR detection (see vmlinux.h),
 * moved here from src/collect/kaslr.c so that only src/symbols/ includes
 * libelf. The file is named by the user: libelf bounds every section and
 * symbol read by the file's size.
 */
#include "symbols/vmlinux.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/xalloc.h"

/* Calls fn with each named symbol of every SHT_SYMTAB section, until it
 * returns false. */
static void each_symtab_sym(Elf *elf, bool (*fn)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && *name && !fn(ctx, name, &sym))
				return;
		}
	}
}

struct text_syms {
	struct vmlinux_text *out;
	bool have_text;
};

static bool text_sym(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct text_syms *ts = ctx;
	ts->out->nsyms++;
	if (!strcmp(name, "_text")) {
		ts->out->text = sym->st_value;
		ts->have_text = true;
	} else if (!strcmp(name, "_etext")) {
		ts->out->etext = sym->st_value;
	} else if (!strcmp(name, "_end")) {
		ts->out->end = sym->st_value;
	}
	return true;
}

/* _text, _etext and _end from every SHT_SYMTAB section. */
static bool read_text_syms(Elf *elf, struct vmlinux_text *out)
{
	struct text_syms ts = { out, false };
	each_symtab_sym(elf, text_sym, &ts);
	return ts.have_text;
}

/* The bytes at _text, from the allocated section that holds it. */
static void read_text_bytes(Elf *elf, struct vmlinux_text *out, uint8_t *bytes, size_t max)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || out->text < sh.sh_addr ||
		    out->text >= sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		uint64_t off = out->text - sh.sh_addr;
		if (!d || !d->d_buf || off >= d->d_size)
			break;
		size_t n = d->d_size - off;
		out->nbytes = n < max ? n : max;
		memcpy(bytes, (const uint8_t *)d->d_buf + off, out->nbytes);
		break;
	}
}

int elf_text_bytes(const char *path, struct vmlinux_text *out, uint8_t *bytes, size_t max)
{
	int ret = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	int fd = file_open_regular(path, NULL);   /* a user-named vmlinux: no FIFO */
	if (fd < 0)
		return fd;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	if (!read_text_syms(elf, out))
		goto out;
	read_text_bytes(elf, out, bytes, max);
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* elf_symtab_text's text: one kallsyms-style line per symbol. */
struct sym_text {
	char *t;
	size_t n, cap, max;
};

static bool sym_line(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct sym_text *st = ctx;
	if (strpbrk(name, " \t\r\n"))
		return true;
	size_t need = strlen(name) + 24;
	if (st->n + need + 1 > st->max)
		return false;
	if (st->n + need + 1 > st->cap) {
		st->cap = 2 * st->cap + need;
		st->t = xrealloc(st->t, st->cap);
	}
	st->n += (size_t)snprintf(st->t + st->n, st->cap - st->n, "%016llx %c %s\n",
				  (unsigned long long)sym->st_value,
				  GELF_ST_TYPE(sym->st_info) == STT_FUNC ? 't' : 'd', name);
	return true;
}

int elf_symtab_text(const char *path, size_t max, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	int fd = file_open_regular(path, NULL);
	if (fd < 0)
		return fd;
	int ret = -ENOENT;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	struct sym_text st = { .max = max, .cap = 1u << 20 };
	st.t = xmalloc(st.cap);
	each_symtab_sym(elf, sym_line, &st);
	char *t = st.t;
	size_t n = st.n;
	if (n) {
		t[n] = 0;
		*text = t;
		*len = n;
		ret = 0;
	} else {
		free(t);
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
