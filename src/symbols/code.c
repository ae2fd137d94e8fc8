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
#include "symbols/symbols.h"

long sym_image_code(struct sym_session *s, const struct sym_map *m, uint64_t start,
		    uint64_t end, uint8_t *buf, size_t cap)
{
	struct sym_image *img = m->img;
	if (img->kind != IMG_ELF || end <= start)
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
