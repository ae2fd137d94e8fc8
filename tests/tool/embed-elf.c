// SPDX-License-Identifier: MIT
/*
 * test-tool embed-elf IN OUT
 *     Copy recording IN to OUT and embed, as host-domain SYMTAB ELF
 *     blobs named by build-id, every mapped file of the host domain
 *     whose build-id matches the recording's, and this process's vDSO
 *     as "[vdso]". The copy then reports the same on any machine:
 *     report resolves blobs by build-id before it looks at a path. The
 *     golden check's fixtures (tests/fixtures/golden/) are made so.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "test-tool.h"
#include "util/xalloc.h"

#define MAX_EMBED_BYTES (256u << 20) /* a fixture never needs more */

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_EMBED_BYTES) {
		close(fd);
		return -EINVAL;
	}
	uint8_t *b = xmalloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = b;
	*len = n;
	return 0;
}

/* The GNU build-id note of an ELF image in memory, or 0. */
static unsigned elf_buildid(const uint8_t *b, size_t len, uint8_t id[20])
{
	if (len < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64)
		return 0;
	const Elf64_Ehdr *eh = (const void *)b;
	if (eh->e_phoff > len || eh->e_phnum > (len - eh->e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(b + eh->e_phoff + i * sizeof(Elf64_Phdr));
		if (ph->p_type != PT_NOTE || ph->p_offset > len || ph->p_filesz > len - ph->p_offset)
			continue;
		size_t o = ph->p_offset, end = o + ph->p_filesz;
		while (end - o >= 12) {
			uint32_t nsz = *(const uint32_t *)(b + o), dsz = *(const uint32_t *)(b + o + 4);
			uint32_t type = *(const uint32_t *)(b + o + 8);
			size_t n4 = ((size_t)nsz + 3) & ~3ul, d4 = ((size_t)dsz + 3) & ~3ul;
			if (n4 > end - o - 12 || d4 > end - o - 12 - n4)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(b + o + 12, "GNU", 4) && dsz && dsz <= 20) {
				memcpy(id, b + o + 12 + n4, dsz);
				return dsz;
			}
			o += 12 + n4 + d4;
		}
	}
	return 0;
}

/* This process's vDSO image: its ELF headers give its size. */
static int own_vdso(const uint8_t **out, size_t *len)
{
	const uint8_t *v = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!v)
		return -ENOENT;
	const Elf64_Ehdr *eh = (const void *)v;
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (end < sizeof(*eh) || end > (1u << 20))
		return -EINVAL;
	*out = v;
	*len = end;
	return 0;
}

struct seen {
	char (*hex)[41];
	size_t n, cap;
};

static bool seen_add(struct seen *s, const char *hex)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->hex[i], hex))
			return false;
	xgrow((void **)&s->hex, &s->cap, s->n + 1, sizeof(*s->hex));
	memcpy(s->hex[s->n++], hex, 41);
	return true;
}

static void to_hex(const uint8_t *id, unsigned n, char hex[41])
{
	for (unsigned i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	hex[2 * n] = 0;
}

/* Embed the host domain's mapped files (first pass), then copy every record. */
static int embed_elf(const char *in, const char *out)
{
	int err;
	char msg[256];
	struct dp_reader *r = dp_reader_open(in, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "test-tool: %s: %s\n", in, msg);
		return 1;
	}
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "test-tool: %s: %s\n", out, strerror(errno));
		dp_reader_free(r);
		return 1;
	}
	struct dp_header h = *dp_reader_header(r);
	struct dp_writer_opts o = { .zstd_level = 3 };
	struct dp_writer *w = dp_writer_new(fd, &h, &o, &err);
	if (!w) {
		fprintf(stderr, "test-tool: %s: %s\n", out, strerror(-err));
		dp_reader_free(r);
		return 1;
	}
	struct seen seen = { 0 };
	struct dp_record rec;
	int rc = 0;
	unsigned nembed = 0;
	while (!rc && dp_reader_next(r, &rec) == 1) {
		if (rec.type != DP_REC_MMAP || rec.domain != DP_HOST_DOMAIN || !rec.u.mmap.buildid_len ||
		    rec.u.mmap.path[0] != '/')
			continue;
		char hex[41];
		to_hex(rec.u.mmap.buildid, rec.u.mmap.buildid_len, hex);
		if (!seen_add(&seen, hex))
			continue;
		uint8_t *data, id[20];
		size_t len;
		if (read_whole(rec.u.mmap.path, &data, &len) < 0)
			continue;
		unsigned idlen = elf_buildid(data, len, id);
		if (idlen == rec.u.mmap.buildid_len && !memcmp(id, rec.u.mmap.buildid, idlen)) {
			struct dp_symtab st = { .kind = DP_SYMTAB_ELF, .name = hex, .data = data, .size = len };
			rc = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
			nembed++;
		}
		free(data);
	}
	const uint8_t *vd;
	size_t vlen;
	if (!rc && own_vdso(&vd, &vlen) == 0) {
		struct dp_symtab st = { .kind = DP_SYMTAB_ELF, .name = "[vdso]", .data = vd, .size = vlen };
		rc = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
	}
	dp_reader_rewind(r);
	while (!rc && dp_reader_next(r, &rec) == 1)
		rc = dp_write_raw(w, rec.domain, rec.raw, rec.raw_len);
	const struct dp_damage *dmg;
	if (!rc && dp_reader_damage(r, &dmg)) {
		fprintf(stderr, "test-tool: %s: damaged at offset %llu (%s)\n", in,
			(unsigned long long)dmg[0].offset, dmg[0].what);
		rc = -EIO;
	}
	int fr = dp_writer_finish(w);
	if (!rc)
		rc = fr;
	dp_reader_free(r);
	free(seen.hex);
	if (rc) {
		fprintf(stderr, "test-tool: %s: %s\n", out, strerror(-rc));
		return 1;
	}
	fprintf(stderr, "test-tool: %s: %u files and the vDSO embedded\n", out, nembed);
	return 0;
}

int cmd_embed_elf(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-tool embed-elf IN OUT\n");
		return 2;
	}
	return embed_elf(argv[1], argv[2]);
}
