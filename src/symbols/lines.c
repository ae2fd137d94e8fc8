// SPDX-License-Identifier: MIT
/*
 * Source lines of addresses (symbols.h: sym_srcline), from the DWARF line
 * tables of an image through elfutils' libdw: the image's own file (its
 * embedded copy or the file on this machine) when it carries DWARF, else
 * its separate debug file (build-id directory, debuglink, debuginfod: the
 * search the symbol loader uses). One libdw handle per image, opened on
 * the first lookup and kept until the session ends; a lookup is one CU
 * search (.debug_aranges, or a bounded walk over the CUs) and one line
 * table search. Inlined code: the scopes at the address say which
 * inlined function the code belongs to and where it was inlined.
 *
 * The DWARF is hostile input: libdw bounds its own reads; here every walk
 * (CUs, scopes) has a count bound, and names are copied into the
 * session's pool.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "symbols/symbols.h"
#include "util/file.h"

#define LINES_MAX_CUS 200000   /* CUs walked when .debug_aranges misses */
#define LINES_MAX_SCOPES 64

struct img_lines {
	Elf *elf;
	Dwarf *dw;
	int fd;
	bool aranges_ok;
	uint64_t shift;          /* a kernel's: recorded address - file address */
};

static bool has_debug_line(Elf *e)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 65536 && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (nm && (!strcmp(nm, ".debug_line") || !strcmp(nm, ".zdebug_line")))
			return true;
	}
	return false;
}

/* libdw on a buffer or a regular file; NULL when it has no line tables */
static struct img_lines *open_lines(const char *path, const void *buf, size_t len)
{
	struct img_lines *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	L->fd = -1;
	elf_version(EV_CURRENT);   /* a kernel's file may be the first ELF read */
	if (buf) {
		L->elf = elf_memory((char *)buf, len);
	} else {
		L->fd = file_open_regular(path, NULL);
		if (L->fd >= 0)
			L->elf = elf_begin(L->fd, ELF_C_READ_MMAP, NULL);
	}
	if (L->elf && has_debug_line(L->elf))
		L->dw = dwarf_begin_elf(L->elf, DWARF_C_READ, NULL);
	if (!L->dw) {
		if (L->elf)
			elf_end(L->elf);
		if (L->fd >= 0)
			close(L->fd);
		free(L);
		return NULL;
	}
	Dwarf_Aranges *ar;
	size_t nar;
	L->aranges_ok = dwarf_getaranges(L->dw, &ar, &nar) == 0 && nar > 0;
	return L;
}

void lines_free(void *p)
{
	struct img_lines *L = p;
	if (!L)
		return;
	dwarf_end(L->dw);
	elf_end(L->elf);
	if (L->fd >= 0)
		close(L->fd);
	free(L);
}

static struct img_lines *image_lines(struct sym_session *s, struct sym_image *img)
{
	if (img->lines_done)
		return img->lines;
	img->lines_done = true;
	image_load_symbols(s, img);
	if (!img->info.ok || !img->info_usable)
		return NULL;
	struct img_lines *L = img->blob ? open_lines(NULL, img->blob, img->blob_size)
					: open_lines(img->path, NULL, 0);
	if (!L && img->src_path && img->src_path != img->path && strcmp(img->src_path, img->path))
		L = open_lines(img->src_path, NULL, 0);   /* the debug file symbols came from */
	if (!L && !img->is_vdso) {
		/* a binary with its own .symtab never looked for a debug file */
		struct sym_table t;
		char *found = NULL;
		symtab_init(&t);
		if (elf_load_debug(s, img->blob ? NULL : img->path, &img->info, &t, &found) >= 0 && found)
			L = open_lines(found, NULL, 0);
		symtab_release(&t);
		free(found);
	}
	img->lines = L;
	return L;
}

/* The lowest address of an executable section of e, or 0. */
static uint64_t lowest_code(Elf *e)
{
	uint64_t lo = 0;
	Elf_Scn *scn = NULL;
	for (unsigned i = 0; i < 65536 && (scn = elf_nextscn(e, scn)); i++) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr &&
		    (!lo || sh.sh_addr < lo))
			lo = sh.sh_addr;
	}
	return lo;
}

/* The line tables of a domain's kernel from the file --vmlinux gave for
 * it (sym_set_kernel_debug), placed by the domain's KASLR offset when
 * the recording knows it, else by its lowest kernel symbol against the
 * file's lowest code section; NULL without such a file, with a warning
 * when it has no line tables. */
static struct img_lines *kernel_lines(struct sym_session *s, struct sym_image *img)
{
	if (img->lines_done)
		return img->lines;
	img->lines_done = true;
	const struct sym_domain *d = img->dom;
	const char *path = NULL;
	for (size_t i = 0; d && i < s->nkdebug; i++)
		if (!strcmp(s->kdebug[i].domain, d->name))
			path = s->kdebug[i].path;
	if (!path)
		return NULL;
	struct img_lines *L = open_lines(path, NULL, 0);
	if (!L) {
		sym_warn(s, "domain %s: %s has no DWARF line tables (--vmlinux wants the "
			 "kernel's debug file, e.g. from the linux-image-*-dbg package)", d->name, path);
		return NULL;
	}
	uint64_t first = 0;
	if (d->kind == DP_DOMAIN_PASSIVE && d->kaslr)
		L->shift = d->kaslr;
	else if (img->kt && ktab_first(img->kt, &first) && lowest_code(L->elf))
		L->shift = first - lowest_code(L->elf);
	img->lines = L;
	return L;
}

static bool cu_of(struct img_lines *L, Dwarf_Addr a, Dwarf_Die *cu)
{
	if (L->aranges_ok && dwarf_addrdie(L->dw, a, cu))
		return true;
	/* no .debug_aranges entry (clang, some LTO): walk the CUs, bounded */
	Dwarf_Off off = 0, next;
	size_t hsize;
	for (unsigned n = 0; n < LINES_MAX_CUS && dwarf_nextcu(L->dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
	     n++, off = next) {
		if (dwarf_offdie(L->dw, off + hsize, cu) && dwarf_haspc(cu, a) == 1)
			return true;
	}
	return false;
}

static const char *base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute at;
	const char *n = NULL;
	if (dwarf_attr_integrate(d, DW_AT_name, &at))
		n = dwarf_formstring(&at);
	return n;
}

bool sym_srcline(struct sym_session *s, const struct sym_map *cm, uint64_t ip, struct sym_srcline *out)
{
	memset(out, 0, sizeof(*out));
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned (internal.h) */
	bool kernel = m->img->kind == IMG_ABS && m->img->dom && m->img == m->img->dom->kimg;
	if (m->img->kind != IMG_ELF && !kernel)
		return false;
	struct img_lines *L = kernel ? kernel_lines(s, m->img) : image_lines(s, m->img);
	out->has_table = L != NULL;
	if (!L)
		return false;
	Dwarf_Addr a = kernel ? ip - L->shift : sym_map_to_image(m, ip);
	Dwarf_Die cu;
	if (!cu_of(L, a, &cu))
		return false;
	Dwarf_Line *ln = dwarf_getsrc_die(&cu, a);
	int line = 0;
	const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(ln, &line) != 0)
		return false;
	/* a relative name is relative to the CU's compilation directory */
	Dwarf_Attribute cd;
	const char *dir = file[0] != '/' && dwarf_attr(&cu, DW_AT_comp_dir, &cd) ? dwarf_formstring(&cd) : NULL;
	if (dir && *dir) {
		char full[4096];
		snprintf(full, sizeof(full), "%s/%s", dir, file);
		out->path = pool_strdup(&s->pool, full);
	} else {
		out->path = pool_strdup(&s->pool, file);
	}
	out->file = base(out->path);
	out->line = (unsigned)line;
	/* inlined code: the innermost inlined subroutine at a, and the call
	 * site of the outermost one in the chain, the line of the function the
	 * code was compiled into. (Past an inlined instance, dwarf_getscopes
	 * continues through its abstract definition's scopes, not the
	 * function it was inlined into: that one the caller names from the
	 * symbol table.) */
	Dwarf_Die *sc = NULL;
	int ns = dwarf_getscopes(&cu, a, &sc);
	if (ns > LINES_MAX_SCOPES)
		ns = LINES_MAX_SCOPES;
	int inner = -1, outer_inl = -1;
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&sc[i]);
		if (tag == DW_TAG_inlined_subroutine) {
			if (inner < 0)
				inner = i;
			outer_inl = i;
		} else if (tag == DW_TAG_subprogram) {
			break;
		}
	}
	if (inner >= 0) {
		const char *n = die_name(&sc[inner]);
		out->inlined = pool_strdup(&s->pool, n ? n : "?");
		/* where the outermost inlined call sits in the real function */
		Dwarf_Attribute at;
		Dwarf_Word fidx = 0, cl = 0;
		Dwarf_Files *files;
		size_t nfiles;
		if (dwarf_attr(&sc[outer_inl], DW_AT_call_line, &at) && dwarf_formudata(&at, &cl) == 0)
			out->call_line = (unsigned)cl;
		if (dwarf_attr(&sc[outer_inl], DW_AT_call_file, &at) && dwarf_formudata(&at, &fidx) == 0 &&
		    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && fidx < nfiles) {
			const char *cf = dwarf_filesrc(files, fidx, NULL, NULL);
			out->call_file = cf ? pool_strdup(&s->pool, base(cf)) : NULL;
		}
	}
	free(sc);
	return true;
}
