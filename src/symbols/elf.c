// SPDX-License-Identifier: MIT
/*
 * ELF symbol loading with elfutils libelf: function symbols from .symtab
 * (or .dynsym when the file is stripped), PT_LOAD segments for placing a
 * mapping, the build-id note and .gnu_debuglink, and the search for
 * separate debug files. Also the demangler (libiberty's cplus_demangle,
 * which handles C++ and both Rust manglings). Everything here treats the
 * file as hostile input: libelf bounds-checks data, and we check what we
 * index ourselves.
 */
#include "symbols/internal.h"
#include "symbols/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/file.h"
#include "util/xalloc.h"

void elf_info_release(struct elf_info *info)
{
	free(info->segs);
	free(info->debuglink);
	memset(info, 0, sizeof(*info));
}

static void read_notes(Elf_Data *d, struct elf_info *info)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    name_off + 4 <= d->d_size &&
		    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && desc_off + nh.n_descsz <= d->d_size) {
			size_t n = nh.n_descsz > 20 ? 20 : nh.n_descsz;
			memcpy(info->buildid, (const char *)d->d_buf + desc_off, n);
			info->buildid_len = (uint8_t)n;
			return;
		}
		off = next;
	}
}

static unsigned bind_prio(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	default: return 1;
	}
}

static int add_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct sym_table *t,
		       uint64_t bias, size_t shnum)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !sh->sh_entsize)
		return 0;
	size_t n = d->d_size / sh->sh_entsize;
	/* the string table's bytes bound the names'. Only bytes libelf read
	 * from the file bound anything: a SHT_NOBITS section has a d_size of
	 * whatever its header says and no d_buf (fuzz-elfsyms: a string
	 * table of 0x11c8_0000_0000 bytes asked that much of the arena) */
	Elf_Scn *strs = sh->sh_link < shnum ? elf_getscn(e, sh->sh_link) : NULL;
	Elf_Data *sd = strs ? elf_getdata(strs, NULL) : NULL;
	if (sd && sd->d_buf && sd->d_size)
		symtab_reserve(t, n, sd->d_size);
	/* An ELF64 table (libelf hands its symbols out in host order, the
	 * GElf_Sym layout) is read as the array it is, its names from the
	 * string table's bytes: the same symbols and names as gelf_getsym
	 * and elf_strptr give (a name is one a NUL ends inside the table's
	 * sh_size bytes: elf_strptr's test), without their per-call checks
	 * and locks: 1.3 M of a small report's 47 M instructions, the libc
	 * debug file's 10k symbols at each report. Anything else (ELF32, a
	 * compressed or odd string table) takes libelf's calls. */
	const char *strbuf = NULL;
	size_t strsize = 0, nfast = 0;
	GElf_Shdr str_sh;
	if (gelf_getclass(e) == ELFCLASS64 && d->d_type == ELF_T_SYM && d->d_buf && sd &&
	    sd->d_buf && sd->d_type == ELF_T_BYTE && gelf_getshdr(strs, &str_sh) &&
	    str_sh.sh_type == SHT_STRTAB && !(str_sh.sh_flags & SHF_COMPRESSED) &&
	    sd->d_size == str_sh.sh_size && !sd->d_off) {
		strbuf = sd->d_buf;
		strsize = sd->d_size;
		nfast = d->d_size / sizeof(Elf64_Sym);
	}
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (strbuf) {
			if (i >= nfast)
				break;
			memcpy(&sym, (const char *)d->d_buf + i * sizeof(Elf64_Sym), sizeof(sym));
		} else if (!gelf_getsym(d, (int)i, &sym)) {
			break;
		}
		unsigned type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *name;
		size_t namelen;
		if (strbuf) {
			if (sym.st_name >= strsize)
				continue;
			name = strbuf + sym.st_name;
			const char *end = memchr(name, '\0', strsize - sym.st_name);
			if (!end)
				continue;
			namelen = (size_t)(end - name);
		} else {
			name = elf_strptr(e, sh->sh_link, sym.st_name);
			namelen = name ? strlen(name) : 0;
		}
		if (!name || !*name)
			continue;
		uint64_t limit = 0;
		if (sym.st_size == 0 && sym.st_shndx < shnum && sym.st_shndx < SHN_LORESERVE) {
			GElf_Shdr ssh;
			Elf_Scn *ss = elf_getscn(e, sym.st_shndx);
			if (ss && gelf_getshdr(ss, &ssh) && ssh.sh_addr + ssh.sh_size > sym.st_value)
				limit = ssh.sh_addr + ssh.sh_size + bias;
		}
		/* an ip inside a 4 GiB function is not credible: treat as unsized */
		uint64_t size = sym.st_size > UINT32_MAX ? 0 : sym.st_size;
		symtab_add(t, sym.st_value + bias, size, limit, name, namelen,
			   bind_prio(GELF_ST_BIND(sym.st_info)));
		added++;
	}
	return added;
}

/* Whether the string table linked from symbol table section sh holds
 * name (its bytes as libelf read them: bounded by the file). */
static bool strtab_has(Elf *e, const GElf_Shdr *sh, size_t shnum, const char *name)
{
	Elf_Scn *strs = sh->sh_link < shnum ? elf_getscn(e, sh->sh_link) : NULL;
	Elf_Data *sd = strs ? elf_getdata(strs, NULL) : NULL;
	return sd && sd->d_buf && memmem(sd->d_buf, sd->d_size, name, strlen(name)) != NULL;
}

static int load_elf(Elf *e, struct elf_info *info, struct sym_table *t, uint64_t bias,
		    const char *probe)
{
	GElf_Ehdr eh;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -EINVAL;
	info->ok = true;
	info->is_exec = eh.e_type == ET_EXEC;

	size_t phnum = 0;
	if (elf_getphdrnum(e, &phnum) == 0 && phnum) {
		if (phnum > 4096)
			phnum = 4096;
		info->segs = xcalloc(phnum, sizeof(*info->segs));
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph))
				break;
			if (ph.p_type == PT_LOAD) {
				struct elf_seg *sg = &info->segs[info->nsegs++];
				sg->off = ph.p_offset;
				sg->vaddr = ph.p_vaddr;
				sg->filesz = ph.p_filesz;
				sg->exec = ph.p_flags & PF_X;
			} else if (ph.p_type == PT_NOTE && !info->buildid_len) {
				/* the section headers may be stripped: read notes from phdrs */
				Elf_Data *nd = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
				if (nd)
					read_notes(nd, info);
			}
		}
	}

	size_t shstrndx = 0, shnum = 0;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		shstrndx = 0;
	if (elf_getshdrnum(e, &shnum) != 0)
		shnum = 0;
	Elf_Scn *symtab = NULL, *dynsym = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE && !info->buildid_len) {
			Elf_Data *d = elf_getdata(scn, NULL);
			if (d)
				read_notes(d, info);
		} else if (sh.sh_type == SHT_PROGBITS && shstrndx && !info->debuglink) {
			const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
			if (nm && !strcmp(nm, ".gnu_debuglink")) {
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_buf && d->d_size >= 8) {
					const char *s = d->d_buf;
					size_t l = strnlen(s, d->d_size);
					size_t crc_off = (l + 4) & ~(size_t)3;
					if (l && l < d->d_size && crc_off + 4 <= d->d_size &&
					    !memchr(s, '/', l)) {
						info->debuglink = xstrndup(s, l);
						memcpy(&info->debuglink_crc, s + crc_off, 4);
						/* the CRC is stored in the file's byte order */
						if ((eh.e_ident[EI_DATA] == ELFDATA2MSB) !=
						    (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
							info->debuglink_crc = __builtin_bswap32(info->debuglink_crc);
					}
				}
			}
		}
	}
	info->has_symtab = symtab != NULL;
	if (probe) {
		info->probed = true;
		info->probe_hit = (symtab && strtab_has(e, &symtab_sh, shnum, probe)) ||
				  (dynsym && strtab_has(e, &dynsym_sh, shnum, probe));
	}
	if (!t)
		return 0;
	int n = 0;
	if (symtab)
		n = add_symbols(e, symtab, &symtab_sh, t, bias, shnum);
	if (n == 0 && dynsym)
		n = add_symbols(e, dynsym, &dynsym_sh, t, bias, shnum);
	return n;
}

struct load_ctx {
	struct elf_info *info;
	struct sym_table *t;
	uint64_t bias;
	const char *probe;
};

static int load_cb(void *e, void *ctx)
{
	struct load_ctx *c = ctx;
	return load_elf(e, c->info, c->t, c->bias, c->probe);
}

int elf_load(const char *path, const void *buf, size_t len,
	     struct elf_info *info, struct sym_table *t, uint64_t bias)
{
	memset(info, 0, sizeof(*info));
	struct load_ctx c = { info, t, bias, NULL };
	return elf_with(path, buf, len, load_cb, &c);
}

int elf_load_probe(const char *path, const void *buf, size_t len, struct elf_info *info,
		   const char *name)
{
	memset(info, 0, sizeof(*info));
	struct load_ctx c = { info, NULL, 0, name };
	return elf_with(path, buf, len, load_cb, &c);
}

static bool file_crc(const char *path, uint32_t *crc)
{
	int fd = file_open_regular(path, NULL);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	uLong c = crc32(0L, Z_NULL, 0);
	unsigned char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		c = crc32(c, buf, (uInt)n);
	bool ok = !ferror(f);
	fclose(f);
	*crc = (uint32_t)c;
	return ok;
}

/* Load a candidate debug file into a fresh table; keep it if it matches. */
static int try_debug(const char *cand, const struct elf_info *info, bool check_crc,
		     struct sym_table *t, char **found)
{
	struct stat st;
	if (stat(cand, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (check_crc) {
		uint32_t crc;
		if (!file_crc(cand, &crc) || crc != info->debuglink_crc)
			return 0;
	}
	struct elf_info di;
	struct sym_table tmp;
	symtab_init(&tmp);
	int n = elf_load(cand, NULL, 0, &di, &tmp, 0);
	bool match = n > 0;
	if (match && info->buildid_len && di.buildid_len &&
	    (di.buildid_len != info->buildid_len ||
	     memcmp(di.buildid, info->buildid, info->buildid_len)))
		match = false;
	elf_info_release(&di);
	if (!match) {
		symtab_release(&tmp);
		return 0;
	}
	symtab_release(t);
	*t = tmp;
	*found = xstrdup(cand);
	return n;
}

/* The local candidates for a binary's debug file, in elf_load_debug's
 * order: fn(candidate, whether its CRC must match the debuglink's, ctx)
 * for each until one returns > 0, which is returned (else 0). */
static int each_debug_candidate(const char *debug_dir, const char *path, const struct elf_info *info,
				int (*fn)(const char *cand, bool check_crc, void *ctx), void *ctx)
{
	char cand[4096];
	int n;
	if (info->buildid_len >= 2) {
		int o = snprintf(cand, sizeof(cand), "%s/.build-id/%02x/", debug_dir, info->buildid[0]);
		for (unsigned i = 1; i < info->buildid_len; i++)
			o += snprintf(cand + o, sizeof(cand) - o, "%02x", info->buildid[i]);
		snprintf(cand + o, sizeof(cand) - o, ".debug");
		if ((size_t)o < sizeof(cand) && (n = fn(cand, false, ctx)) > 0)
			return n;
	}
	if (!info->debuglink || !path || !*path)
		return 0;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	for (int i = 0; i < 3; i++) {
		int w;
		if (i == 0)
			w = snprintf(cand, sizeof(cand), "%.*s/%s", dirlen, dir, info->debuglink);
		else if (i == 1)
			w = snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dirlen, dir, info->debuglink);
		else if (dir[0] == '/')
			w = snprintf(cand, sizeof(cand), "%s%.*s/%s", debug_dir, dirlen, dir, info->debuglink);
		else
			continue;
		if (w < 0 || (size_t)w >= sizeof(cand))
			continue;
		if (!strcmp(cand, path))
			continue;    /* debuglink naming the file itself */
		if ((n = fn(cand, true, ctx)) > 0)
			return n;
	}
	return 0;
}

struct try_ctx {
	const struct elf_info *info;
	struct sym_table *t;
	char **found;
};

static int try_cb(const char *cand, bool check_crc, void *ctx)
{
	struct try_ctx *c = ctx;
	return try_debug(cand, c->info, check_crc, c->t, c->found);
}

static int elf_load_debug_local(const char *debug_dir, const char *path,
				const struct elf_info *info, struct sym_table *t, char **found)
{
	*found = NULL;
	struct try_ctx c = { info, t, found };
	return each_debug_candidate(debug_dir, path, info, try_cb, &c);
}

/* 1 when candidate cand, if it is an ELF file, holds the name: a
 * superset of try_debug's choice (neither its CRC nor its build-id nor
 * its count of symbols is checked) */
static int probe_cb(const char *cand, bool check_crc, void *ctx)
{
	(void)check_crc;
	struct stat st;
	if (stat(cand, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	struct elf_info di;
	int r = elf_load_probe(cand, NULL, 0, &di, ctx);
	bool hit = r >= 0 && di.ok && di.probe_hit;
	elf_info_release(&di);
	return hit;
}

bool elf_debug_may_have(struct sym_session *s, const char *path, const struct elf_info *info,
			const char *name)
{
	/* a server could give what no local file has (elf_load_debug asks
	 * one when none matched) */
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls && *urls && info->buildid_len >= 2)
		return true;
	return each_debug_candidate(s->debug_dir, path, info, probe_cb, (void *)name) > 0;
}

int elf_load_debug(struct sym_session *s, const char *path, const struct elf_info *info,
		   struct sym_table *t, char **found)
{
	int n = elf_load_debug_local(s->debug_dir, path, info, t, found);
	if (n > 0 || info->buildid_len < 2)
		return n;
	/* last, the servers: the file is checked to have this build-id (so
	 * it parsed as ELF) and read by the same loader as a local one */
	const char *dl = sym_debuginfod(s, info->buildid, info->buildid_len);
	return dl ? try_debug(dl, info, false, t, found) : 0;
}

char *sym_demangle(const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* DMGL_AUTO: libiberty tries Rust (legacy and v0), then the C++ ABI */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
