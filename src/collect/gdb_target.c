// SPDX-License-Identifier: MIT
/*
 * Passive domains, the target: connect to the stub, negotiate, read the
 * target description (qXfer:features:read:target.xml) and from it the
 * register layout (where rip, cs and cr3 are: in the g reply or by `p`),
 * and list the vCPUs. Part of the gdb source (gdb_internal.h).
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
#include "util/clock.h"
#include "util/file.h"
#include "util/xalloc.h"

/* ---- Target description -------------------------------------------------- */

struct xfer_ctx { struct rsp_conn *c; };

static int xfer_read(void *vctx, const char *annex, char **data, size_t *len)
{
	struct xfer_ctx *x = vctx;
	size_t n = 0, cap = 4096;
	char *buf = xmalloc(cap);
	char req[256];

	for (;;) {
		snprintf(req, sizeof(req), "qXfer:features:read:%s:%zx,%x", annex, n, 0xffb);
		int r = rsp_request(x->c, req);
		if (r < 0) {
			free(buf);
			return r;
		}
		const char *p = x->c->pkt;
		size_t pl = x->c->pktlen;
		if (pl < 1 || (p[0] != 'm' && p[0] != 'l')) {
			free(buf);
			return -ENOENT;   /* "E00" or empty: annex not there */
		}
		if (n + pl - 1 > RSP_MAX_XML) {
			free(buf);
			return -EMSGSIZE;
		}
		if (n + pl > cap) {
			cap = (n + pl) * 2;
			buf = xrealloc(buf, cap);
		}
		memcpy(buf + n, p + 1, pl - 1);
		n += pl - 1;
		if (p[0] == 'l')
			break;
		if (pl == 1) {
			free(buf);
			return -EPROTO;   /* 'm' with no data would loop forever */
		}
	}
	*data = buf;
	*len = n;
	return 0;
}

static int find_reg(struct gdb_source *s, const char *name, struct reginfo *ri)
{
	const struct rsp_reg *r = rsp_tdesc_find(&s->td, name);
	memset(ri, 0, sizeof(*ri));
	if (!r)
		return -ENOENT;
	ri->present = true;
	ri->offset = r->offset;
	ri->size = r->bitsize / 8;
	ri->regnum = r->regnum;
	if (ri->size > 8)
		return -EPROTO;
	return 0;
}

/* ---- Setup ------------------------------------------------------------- */

/* Connect and learn the target. Fills err on failure. The VM is left
 * stopped (QEMU stops it when a debugger connects). */
int gdb_setup_target(struct gdb_source *s, char *err, size_t errlen)
{
	const char *name = s->spec.name;
	int fd = s->spec.is_unix ? rsp_connect_unix(s->spec.host, GDB_TIMEOUT_MS)
				 : rsp_connect_tcp(s->spec.host, s->spec.port, GDB_TIMEOUT_MS);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot connect to %s: %s", name, s->address + 4, strerror(-fd));
		return fd;
	}
	struct rsp_conn *c = s->conn;
	rsp_init(c, fd, GDB_TIMEOUT_MS);
	int r = rsp_drain(c, 50);
	if (r == 0)
		r = rsp_request(c, "qSupported:xmlRegisters=i386");
	/* The stop reply QEMU queues on connect can come after the drain's
	 * quiet time on a busy host (seen right after another debugger
	 * left): then it is what the request read. Skip such replies
	 * (bounded) to reach the qSupported answer. */
	for (int i = 0; r >= 0 && i < 4 && rsp_parse_stop(c->pkt, c->pktlen, NULL, 0) > 0; i++)
		if ((r = rsp_recv(c, 0)) >= 0)
			r = rsp_ack(c, 1);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s is not a GDB stub (%s)", name, s->address + 4, gdb_rsp_strerror(r));
		return r;
	}
	bool xfer = strstr(c->pkt, "qXfer:features:read+") != NULL;
	/* Memory reads as large as the stub's packets allow: PacketSize (hex)
	 * bounds the reply, two hex digits per byte plus framing. */
	const char *ps = strstr(c->pkt, "PacketSize=");
	unsigned long pkt = ps ? strtoul(ps + 11, NULL, 16) : 0;
	if (pkt > RSP_MAX_PAYLOAD)
		pkt = RSP_MAX_PAYLOAD;
	s->mem_chunk = pkt >= 64 ? (pkt - 32) / 2 : 512;
	if (strstr(c->pkt, "QStartNoAckMode+")) {
		if ((r = rsp_request(c, "QStartNoAckMode")) < 0)
			goto proto;
		if (!strcmp(c->pkt, "OK"))
			c->noack = true;
	}
	if (!xfer) {
		snprintf(err, errlen, "%s: the stub does not describe its registers (no qXfer:features:read)", name);
		return -ENOTSUP;
	}
	if ((r = rsp_request(c, "?")) < 0)
		goto proto;
	char tid0[RSP_MAX_TID];
	r = rsp_parse_stop(c->pkt, c->pktlen, tid0, sizeof(tid0));
	if (r == RSP_STOP_EXITED) {
		snprintf(err, errlen, "%s: the VM has exited", name);
		return -ECHILD;
	}
	if (r < 0)
		goto proto;
	rsp_detach_packet(tid0, s->detach, sizeof(s->detach));

	/* Registers. */
	struct xfer_ctx xc = { c };
	char *xml = NULL;
	size_t xl = 0;
	r = xfer_read(&xc, "target.xml", &xml, &xl);
	if (r == 0) {
		r = rsp_tdesc_parse(&s->td, xml, xl, xfer_read, &xc);
		free(xml);
	}
	if (r == 0)
		r = rsp_tdesc_finish(&s->td);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read the target description: %s", name,
			 r == -ENOENT ? "no registers described" : gdb_rsp_strerror(r));
		return r;
	}
	if (strcmp(s->td.arch, "i386:x86-64")) {
		snprintf(err, errlen, "%s: not x86_64 (the stub says architecture '%s')", name,
			 s->td.arch[0] ? s->td.arch : "unknown");
		return -ENOTSUP;
	}
	if (find_reg(s, "rip", &s->rip) < 0 || find_reg(s, "cs", &s->cs) < 0) {
		snprintf(err, errlen, "%s: the target description has no rip/cs registers", name);
		return -ENOTSUP;
	}
	find_reg(s, "cr3", &s->cr3);
	find_reg(s, "gs_base", &s->gs_base);
	find_reg(s, "k_gs_base", &s->k_gs_base);
	find_reg(s, "cr4", &s->cr4);

	/* How long is `g` really? Registers past its end need `p`. */
	if ((r = rsp_request(c, "g")) < 0)
		goto proto;
	size_t gbytes = c->pktlen / 2;
	s->gbytes = gbytes;
	if (s->rip.offset + s->rip.size > gbytes || s->cs.offset + s->cs.size > gbytes)
		s->use_p = true;   /* a stub with a short g: ask per register */
	s->rip.in_g = s->cs.in_g = true;
	s->cr3.in_g = s->cr3.present && s->cr3.offset + s->cr3.size <= gbytes;
	s->gs_base.in_g = s->gs_base.present && s->gs_base.offset + s->gs_base.size <= gbytes;
	s->k_gs_base.in_g = s->k_gs_base.present && s->k_gs_base.offset + s->k_gs_base.size <= gbytes;
	s->cr4.in_g = s->cr4.present && s->cr4.offset + s->cr4.size <= gbytes;

	/* vCPUs. */
	s->tids = xcalloc(RSP_MAX_THREADS, RSP_MAX_TID);
	s->nvcpu = 0;
	const char *q = "qfThreadInfo";
	for (int i = 0; i <= (int)RSP_MAX_THREADS; i++) {
		if ((r = rsp_request(c, q)) < 0)
			goto proto;
		r = rsp_parse_threads(c->pkt, c->pktlen, s->tids, &s->nvcpu, RSP_MAX_THREADS);
		if (r < 0) {
			if (s->nvcpu == 0 && c->pktlen == 0)
				break;   /* no thread list: one vCPU */
			goto proto;
		}
		if (r == 0)
			break;
		q = "qsThreadInfo";
	}
	if (s->nvcpu == 0) {
		s->nvcpu = 1;
		snprintf(s->tids[0], RSP_MAX_TID, "%s", tid0[0] ? tid0 : "0");
	}
	rsp_detach_packet(s->tids[0], s->detach, sizeof(s->detach));
	gdb_build_batch(s);
	return 0;
proto:
	snprintf(err, errlen, "%s: %s while talking to %s", name, gdb_rsp_strerror(r), s->address + 4);
	return r < 0 ? r : -EPROTO;
}

/* Auto KASLR: needs the VM stopped with a vCPU in kernel mode, because
 * with page-table isolation a user-mode vCPU does not map the kernel. */
