// SPDX-License-Identifier: MIT
/*
 * Code bytes of an image for annotate (symbols.h: sym_image_code): the
 * bytes of one function read from the same ELF source the image's
 * symbols came from (an embedded copy in the recording, or the file on
 * this machine when its build-id is the recorded one), through the
 * image's executable PT_LOAD segments. Bounded by the caller's buffer;
 * a segment's file size bounds the read, so a crafted program header
 * cannot send the read past the file (a pread past the end reads 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "util/le.h"
#include "symbols/symbols.h"

/*
 * A kernel image (a table of absolute addresses): the code a passive
 * domain's recorder read from guest memory at the end (SYMTAB kind
 * DP_SYMTAB_CODE: "DPCODE1\0", then entries of u64 address, u32 length,
 * u32 0 and the bytes; addresses are the guest's, the map's ips). The
 * bytes from start on, as far as the entries run contiguously.
 */
static long kernel_code(struct sym_session *s, const struct sym_map *m, uint64_t start,
			uint64_t end, uint8_t *buf, size_t cap)
{
	struct sym_domain *d = m->img->dom;
	struct blob *b = d ? find_blob(d, DP_SYMTAB_CODE, "[guest.kernel]") : NULL;
	const uint8_t *p = b ? blob_data(s, d, b) : NULL;
	if (!p || b->size < 24 || memcmp(p, "DPCODE1", 8))
		return -ENOENT;
	uint64_t at = start - m->delta;     /* the ip of the image address */
	uint64_t want = end - start < cap ? end - start : cap;
	size_t got = 0;
	/* a crafted table (many tiny or overlapping entries) is cut short:
	 * the recorder writes at most 64 entries of a page each */
	unsigned scanned = 0, pieces = 0;
	for (size_t off = 8; off <= b->size - 16 && got < want && scanned < 65536 && pieces < 256;
	     scanned++) {
		uint64_t a = get64(p + off);
		uint32_t len = get32(p + off + 8);
		if (len > b->size - off - 16)
			break;                      /* cut: nothing past it is trusted */
		uint64_t cur = at + got;
		if (cur >= a && cur - a < len) {
			size_t n = len - (size_t)(cur - a);
			if (n > want - got)
				n = (size_t)(want - got);
			memcpy(buf + got, p + off + 16 + (cur - a), n);
			got += n;
			pieces++;
			off = 8;                    /* the next page may be listed earlier */
			continue;
		}
		off += 16 + len;
	}
	return got ? (long)got : -ENOENT;
}

long sym_image_code(struct sym_session *s, const struct sym_map *m, uint64_t start,
		    uint64_t end, uint8_t *buf, size_t cap)
{
	struct sym_image *img = m->img;
	if (end <= start)
		return -ENOENT;
	if (img->kind == IMG_ABS)
		return kernel_code(s, m, start, end, buf, cap);
	if (img->kind != IMG_ELF)
		return -ENOENT;
	image_load_symbols(s, img);
	if (!img->info.ok)
		return -ENOENT;
	/* the layout read is of another file (a debug file with the recorded
	 * build-id, the binary having changed): its code is not the code run */
	if (!img->info_usable || (!img->blob && img->src_path != img->path &&
				  strcmp(img->src_path, img->path)))
		return -ESTALE;
	for (size_t i = 0; i < img->info.nsegs; i++) {
		const struct elf_seg *g = &img->info.segs[i];
		if (!g->exec || start < g->vaddr || start - g->vaddr >= g->filesz)
			continue;
		uint64_t in = start - g->vaddr;
		uint64_t n = g->filesz - in;
		if (n > end - start)
			n = end - start;
		if (n > cap)
			n = cap;
		if (g->off > UINT64_MAX - in)
			return -ERANGE;
		uint64_t off = g->off + in;
		if (img->blob) {
			if (off > img->blob_size)
				return -ERANGE;
			if (n > img->blob_size - off)
				n = img->blob_size - off;
			memcpy(buf, img->blob + off, n);
			return (long)n;
		}
		/* a path from the recording: a regular file only (a FIFO put
		 * there since the symbols were read would block the read) */
		int fd = open(img->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		struct stat st;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return -ENOENT;
		}
		ssize_t r = pread(fd, buf, n, (off_t)off);
		int e = errno;
		close(fd);
		return r < 0 ? -e : (long)r;
	}
	return -ERANGE;
}
