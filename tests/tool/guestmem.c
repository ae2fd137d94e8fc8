// SPDX-License-Identifier: MIT
/*
 * test-tool's guest memory backends (guestmem.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "guestmem.h"

struct tt_mem {
	/* vmlinux */
	unsigned char *file;
	size_t flen;
	uint64_t shift;
	/* gdb */
	struct rsp_conn *c;
};

static int vmlinux_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct tt_mem *t = ctx;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)t->file;
	addr -= t->shift;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(t->file + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr || addr - ph->p_vaddr >= ph->p_memsz)
			continue;
		if (len > ph->p_memsz - (addr - ph->p_vaddr))
			return -EFAULT;
		uint64_t off = addr - ph->p_vaddr;
		if (off + len <= ph->p_filesz) {
			memcpy(buf, t->file + ph->p_offset + off, len);
		} else {   /* .bss part: zeros */
			memset(buf, 0, len);
			if (off < ph->p_filesz)
				memcpy(buf, t->file + ph->p_offset + off, ph->p_filesz - off);
		}
		return 0;
	}
	return -EFAULT;
}

static int gdb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct tt_mem *t = ctx;
	return rsp_read_memory(t->c, addr, buf, len);
}

static struct tt_mem *open_vmlinux(const char *spec, struct guest_mem *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", spec);
	struct tt_mem *t = calloc(1, sizeof(*t));
	char *opt = strstr(path, ",shift=");
	if (opt) {
		t->shift = strtoull(opt + 7, NULL, 0);
		*opt = 0;
	}
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "test-tool: cannot read %s\n", path);
		goto fail;
	}
	t->flen = (size_t)st.st_size;
	t->file = mmap(NULL, t->flen, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (t->file == MAP_FAILED || memcmp(t->file, ELFMAG, SELFMAG)) {
		fprintf(stderr, "test-tool: %s is not an ELF file\n", path);
		goto fail;
	}
	m->read = vmlinux_read;
	m->ctx = t;
	return t;
fail:
	free(t);
	return NULL;
}

static struct tt_mem *open_gdb(const char *path, struct guest_mem *m)
{
	int fd = rsp_connect_unix(path, 2000);
	if (fd < 0) {
		fprintf(stderr, "test-tool: cannot connect to %s: %s\n", path, strerror(-fd));
		return NULL;
	}
	struct tt_mem *t = calloc(1, sizeof(*t));
	t->c = calloc(1, sizeof(*t->c));
	rsp_init(t->c, fd, 2000);
	rsp_drain(t->c, 100);
	m->read = gdb_read;
	m->ctx = t;
	return t;
}

struct tt_mem *tt_mem_open(const char *spec, struct guest_mem *m)
{
	memset(m, 0, sizeof(*m));
	if (!strncmp(spec, "vmlinux:", 8))
		return open_vmlinux(spec + 8, m);
	if (!strncmp(spec, "gdb:", 4))
		return open_gdb(spec + 4, m);
	fprintf(stderr, "test-tool: memory backend must be vmlinux:PATH or gdb:SOCKET, not %s\n", spec);
	return NULL;
}

void tt_mem_close(struct tt_mem *t)
{
	if (!t)
		return;
	if (t->file)
		munmap(t->file, t->flen);
	if (t->c) {
		/* leave the VM running */
		rsp_send(t->c, "D");
		rsp_close(t->c);
		free(t->c);
	}
	free(t);
}

const unsigned char *tt_mem_file(struct tt_mem *t, size_t *len)
{
	*len = t->file ? t->flen : 0;
	return t->file;
}

size_t tt_mem_krips(struct tt_mem *t, uint64_t *rips, size_t max)
{
	if (!t->c || max == 0)
		return 0;
	/* `g` of the current thread: rip at byte 128, cs at 140 (QEMU's
	 * x86_64 layout, see ../shared/vm-notes.md). */
	if (rsp_request(t->c, "g") < 0 || t->c->pktlen < 2 * 144)
		return 0;
	uint64_t rip = 0, cs = 0;
	if (rsp_hex_le(t->c->pkt + 256, 16, 8, &rip) < 0 || rsp_hex_le(t->c->pkt + 280, 8, 4, &cs) < 0)
		return 0;
	if ((cs & 3) != 0)
		return 0;
	rips[0] = rip;
	return 1;
}

struct rsp_conn *tt_mem_conn(struct tt_mem *t)
{
	return t->c;
}

/* Resume the VM for ms, then stop it again (ack mode: the stop reply is
 * acked once the VM is stopped). */
int tt_run_for(struct rsp_conn *c, int ms)
{
	int r = rsp_send(c, "c");
	if (r < 0)
		return r;
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
	if ((r = rsp_write(c, "\x03", 1)) < 0)
		return r;
	for (int i = 0; i < 8; i++) {
		if ((r = rsp_recv(c, 2000)) < 0 || (r = rsp_ack(c, 1)) < 0)
			return r;
		if (rsp_parse_stop(c->pkt, c->pktlen, NULL, 0) == RSP_STOP_SIGNAL)
			return 0;
	}
	return -EPROTO;
}
