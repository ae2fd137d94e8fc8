// SPDX-License-Identifier: MIT
/*
 * Passive domains, symbols: the user's symbol file (kallsyms, System.map
 * or vmlinux; bounded, never a FIFO or device), guest memory reads for
 * collect/kaslr.c, and finding the guest kernel's KASLR offset from the
 * vCPUs' kernel rips. Part of the gdb source (gdb_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/gdb_rsp.h"
#include "collect/gdb_internal.h"
#include "collect/kaslr.h"
#include "symbols/kallsyms.h"
#include "symbols/vmlinux.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

/* ---- Helpers ---------------------------------------------------------- */

/* A symbol file the user named: bounded, and never a FIFO or device. */
int gdb_read_symfile(const char *path, uint8_t **data, size_t *len)
{
	char *buf;
	int r = file_read_all(path, GDB_MAX_SYMFILE, &buf, len);
	*data = (uint8_t *)buf;
	return r;
}


int gdb_mem_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_ctx *m = vctx;
	if (m->over)
		return m->over;
	if (m->s && (m->startup ? atomic_load(&m->s->stop_at_ns) != 0 : gdb_final_over(m->s)))
		return m->over = -ECANCELED;
	if (m->deadline_ns && mono_ns() >= m->deadline_ns)
		return m->over = -ETIME;
	if (m->max_bytes && m->bytes + len > m->max_bytes)
		return m->over = -E2BIG;
	int r = rsp_read_memory(m->c, addr, buf, len);
	if (r == 0)
		m->bytes += len;
	else if (m->startup && (r == -ETIMEDOUT || r == -EPIPE || r == -EBADMSG || r == -EMSGSIZE))
		m->over = r;   /* the stub failed: nothing more will come */
	return r;
}

bool gdb_final_over(const struct gdb_source *s)
{
	uint64_t stop = atomic_load(&s->stop_at_ns);
	return stop && mono_ns() >= stop + GDB_FINAL_MS * 1000000ull;
}

void gdb_guest_mem(struct gdb_source *s, struct guest_mem *m, struct mem_ctx *mc)
{
	memset(m, 0, sizeof(*m));
	memset(mc, 0, sizeof(*mc));
	mc->c = s->conn;
	mc->s = s;
	m->read = gdb_mem_read;
	m->ctx = mc;
	m->chunk = s->mem_chunk;
	m->paging = (uint8_t)s->paging;
}

/* ---- KASLR and symbols ---------------------------------------------------- */

int gdb_kernel_vcpus(struct gdb_source *s, uint64_t *rips, size_t *nrips, int *kcpu_out)
{
	struct dp_sample *v = xcalloc(s->nvcpu, sizeof(*v));
	size_t nr = 0;
	int r = 0, kcpu = -1;

	for (int tries = 0; tries < 50; tries++) {
		if ((r = gdb_read_vcpus(s, v, 0, true)) < 0)
			break;
		if ((r = rsp_ack(s->conn, s->replies)) < 0)
			break;
		for (size_t i = 0; i < s->nvcpu; i++)
			if (v[i].mode == DP_MODE_KERNEL) {
				if (kcpu < 0)
					kcpu = (int)i;
				rips[nr++] = v[i].ip;
			}
		if (kcpu >= 0)
			break;
		/* All in user mode: let it run a little and look again. */
		if ((r = gdb_resume_vm(s, 0)) < 0)
			break;
		usleep(10000);
		if ((r = gdb_interrupt_vm(s, false)) < 0)
			break;
	}
	free(v);
	*nrips = nr;
	*kcpu_out = kcpu;
	if (r < 0)
		return r;
	return kcpu < 0 ? -EAGAIN : 0;
}

int gdb_find_kaslr(struct gdb_source *s, const struct kaslr_image *img, char *how, size_t howlen)
{
	uint64_t rips[RSP_MAX_THREADS];
	size_t nr = 0;
	int kcpu = -1;
	int r = gdb_kernel_vcpus(s, rips, &nr, &kcpu);
	if (r < 0)
		return r;
	char req[64];
	snprintf(req, sizeof(req), "Hg%s", s->tids[kcpu]);
	if ((r = rsp_request(s->conn, req)) < 0)
		return r;
	struct mem_ctx mc = { .c = s->conn };
	uint64_t off = 0;
	r = kaslr_find(img, gdb_mem_read, &mc, rips, nr, &off, how, howlen);
	if (r == 0)
		s->kaslr = off;
	return r;
}

int gdb_load_symbols(struct gdb_source *s, struct kaslr_image *img, char *err, size_t errlen)
{
	const char *name = s->spec.name;
	int r;

	/* The file itself, not its contents: say why it cannot be read
	 * (the parsers' -ENOENT means "no _text symbol"). */
	if (access(s->spec.symfile, R_OK) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read %s=%s: %s", name, gdb_symsrc_key(s->spec.symsrc),
			 s->spec.symfile, strerror(-r));
		return r;
	}
	if (s->spec.symsrc == GDB_SYM_VMLINUX) {
		r = kaslr_image_from_vmlinux(s->spec.symfile, img);
	} else {
		uint8_t *d;
		size_t l;
		r = gdb_read_symfile(s->spec.symfile, &d, &l);
		if (r == 0) {
			r = kaslr_image_from_symtext((const char *)d, l, img);
			free(d);
			/* A symbol table without _text still names functions;
			 * only auto KASLR needs it. */
			if (r == -ENOENT && !s->spec.kaslr_auto)
				r = 0;
		}
	}
	if (r < 0) {
		const char *why = r == -ENOENT ? "no _text symbol" :
				  r == -EINVAL ? "no symbol lines" :
				  r == -ENOEXEC ? "not an ELF file" : file_strerror(r);
		snprintf(err, errlen, "%s: cannot use %s=%s: %s", name, gdb_symsrc_key(s->spec.symsrc),
			 s->spec.symfile, why);
	}
	return r;
}

int gdb_symfile_text(const struct gdb_source *s, char **text, size_t *len)
{
	char *in = NULL;
	size_t inlen = 0;
	int r;
	*text = NULL;
	*len = 0;
	if (s->spec.symsrc == GDB_SYM_VMLINUX) {
		r = elf_symtab_text(s->spec.symfile, GDB_MAX_SYMFILE, &in, &inlen);
	} else {
		uint8_t *d;
		r = gdb_read_symfile(s->spec.symfile, &d, &inlen);
		in = (char *)d;
	}
	if (r < 0)
		return r;
	/* the core kernel's lines at this boot's addresses; module lines
	 * (a kallsyms copy's) are left out: modules move on their own */
	size_t cap = inlen + 1, n = 0;
	char *out = xmalloc(cap);
	const char *p = in, *end = in + inlen;
	struct kallsyms_line l;
	int k;
	while ((k = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END) {
		if (k != KALLSYMS_LINE || l.mod)
			continue;
		size_t need = l.namelen + 24;
		if (n + need + 1 > cap) {
			cap = 2 * cap + need;
			out = xrealloc(out, cap);
		}
		/* per-CPU offsets (small, absolute) do not move */
		uint64_t a = guest_kptr(l.addr) ? l.addr + s->kaslr : l.addr;
		n += (size_t)snprintf(out + n, cap - n, "%016" PRIx64 " %c %.*s\n", a, l.type,
				      (int)l.namelen, l.name);
	}
	free(in);
	if (!n) {
		free(out);
		return -ENOENT;
	}
	out[n] = 0;
	*text = out;
	*len = n;
	return 0;
}
