// SPDX-License-Identifier: MIT
/*
 * GNU build-id from an ELF file through libelf. Program headers (PT_NOTE)
 * are tried first because they exist in every loadable object, even
 * stripped ones; section headers (SHT_NOTE) are the fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include "symbols/buildid.h"
#include "util/file.h"

static int find_note(Elf_Data *data, uint8_t out[20], uint8_t *len)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0) {
			size_t n = nh.n_descsz > 20 ? 20 : nh.n_descsz;
			memcpy(out, (const char *)data->d_buf + desc_off, n);
			*len = (uint8_t)n;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

/* The build-id note of an open Elf handle: program headers first. */
static int elf_build_id(Elf *e, uint8_t out[20], uint8_t *len)
{
	if (!e || elf_kind(e) != ELF_K_ELF)
		return -ENOEXEC;
	int ret = -ENOENT;
	size_t nph = 0;
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph && ret; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
							   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (d)
				ret = find_note(d, out, len);
		}
	}
	for (Elf_Scn *scn = NULL; ret && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d)
			ret = find_note(d, out, len);
	}
	return ret;
}

int sym_read_build_id(const char *path, uint8_t out[20], uint8_t *len)
{
	*len = 0;
	int fd = file_open_regular(path, NULL);   /* never blocks on a FIFO */
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int ret = elf_build_id(e, out, len);
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

int sym_build_id_mem(const void *buf, size_t size, uint8_t out[20], uint8_t *len)
{
	*len = 0;
	elf_version(EV_CURRENT);
	/* elf_memory takes a non-const image: libelf converts in place
	 * only for a foreign byte order, never for a native ELF. */
	Elf *e = elf_memory((char *)buf, size);
	int ret = elf_build_id(e, out, len);
	if (e)
		elf_end(e);
	return ret;
}
