// SPDX-License-Identifier: MIT
/*
 * The agent's COLLECT (agent/collect.h): the guest's records and the
 * binaries that were hit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/collect.h"
#include "agent/ship.h"
#include "collect/agent_proto.h"
#include "format/format.h"
#include "format/scan.h"
#include "symbols/vdso.h"
#include "util/addrspace.h"
#include "util/hmap.h"
#include "util/xalloc.h"

struct batch {
	uint8_t *b;
	size_t n, cap;
	int fd;
};

static int batch_flush(struct batch *bt)
{
	if (!bt->n)
		return 0;
	int r = ap_send(bt->fd, AP_RECORD, AP_F_ZSTD, bt->b, bt->n);
	bt->n = 0;
	return r;
}

static int batch_add(struct batch *bt, const void *raw, size_t len)
{
	if (bt->n + len > AGENT_BATCH) {
		int r = batch_flush(bt);
		if (r < 0)
			return r;
	}
	xgrow((void **)&bt->b, &bt->cap, bt->n + len, 1);
	memcpy(bt->b + bt->n, raw, len);
	bt->n += len;
	return 0;
}

/*
 * Send the ELF files samples hit, each named by its build-id, and the
 * vDSO. ship_read (agent/ship.h) decides what may be read: only the file
 * that was mapped, checked by build-id, never through a symbolic link.
 * Returns 0 or a negative errno from sending; counts what was sent and
 * what was refused.
 */
struct shipped {
	unsigned nsym, nrefused;
	uint64_t bytes;
	unsigned nstack;        /* of nsym, hit only by user stack words */
	uint64_t stack_bytes;
};

static int ship_symbols(int fd, const struct ship *sh, const struct agent_log *log,
			struct shipped *out)
{
	bool vdso_sent = false;
	/* the build-ids sent (hex, one per file: keys must outlive the
	 * index): a guest may map one binary under many paths */
	char (*hex)[2 * sizeof(((struct ship_file *)0)->bid) + 1] = xcalloc(ship_nfiles(sh) + 1, sizeof(*hex));
	struct hmap sent = { 0 };
	int ret = 0;
	for (size_t i = 0; !ret && i < ship_nfiles(sh); i++) {
		const struct ship_file *f = ship_file_at(sh, i);
		if (!f->hit)
			continue;
		uint8_t *data = NULL;
		size_t len = 0;
		char name[48];
		const char *how = "";
		for (unsigned k = 0; k < f->bidlen; k++)
			sprintf(hex[i] + 2 * k, "%02x", f->bid[k]);
		if (!strcmp(f->path, "[vdso]")) {
			if (vdso_sent || vdso_copy(&data, &len) < 0)
				continue;
			vdso_sent = true;
			snprintf(name, sizeof(name), "[vdso]");
		} else {
			snprintf(name, sizeof(name), "%s", hex[i]);
			if (strmap_get(&sent, hex[i]))
				continue; /* the same build-id sent under another path */
			enum ship_via via;
			int r = ship_read(sh, i, &data, &len, &via);
			if (r < 0) {
				agent_logf(log, "not shipped: %s: %s; its samples stay [unknown]", f->path,
					   ship_strerror(r));
				out->nrefused++;
				continue;
			}
			how = via == SHIP_VIA_MAP_FILES ? ", through its mapping" : ", by path";
		}
		/* the host takes no frame over AP_MAX_FRAME once decompressed
		 * (libLLVM is 110 MB): such a file would end the whole domain */
		if (len > AP_MAX_FRAME - sizeof(name) - 64) {
			agent_logf(log, "not shipped: %s: %zu bytes, over the protocol's %u MiB frame limit; "
				   "its samples stay [unknown]", f->path, len, AP_MAX_FRAME >> 20);
			free(data);
			out->nrefused++;
			continue;
		}
		size_t plen;
		uint8_t *p = ap_symtab_encode(DP_SYMTAB_ELF, name, data, len, &plen);
		ret = ap_send(fd, AP_SYMTAB, AP_F_ZSTD, p, plen);
		free(p);
		free(data);
		strmap_put(&sent, hex[i], (void *)1);
		out->nsym++;
		out->bytes += len;
		if (f->hit_stack) {
			out->nstack++;
			out->stack_bytes += len;
		}
		agent_logf(log, "sent %s (%s, %zu bytes%s%s)", f->path, name, len, how,
			   f->hit_stack ? ", reached only by user stack words" : "");
	}
	hmap_release(&sent);
	free(hex);
	return ret;
}

/* The first pass (dp_scan's callback): the ship set's model of who
 * mapped what, and what samples hit: their ips, the user addresses of
 * their call chains and, with --call-graph dwarf, the words of their
 * stored user stacks (return addresses into the binaries the host's
 * unwinder will need). */
static int model_record(void *ctx, const struct dp_record *rec)
{
	struct ship *sh = ctx;
	if (rec->domain != DP_HOST_DOMAIN)
		return 0;
	const struct dp_sample *smp = &rec->u.sample;
	switch (rec->type) {
	case DP_REC_MMAP:
		ship_mmap(sh, &rec->u.mmap);
		break;
	case DP_REC_TASK:
		if (rec->u.task.kind == DP_TASK_FORK)
			ship_fork(sh, &rec->u.task);
		break;
	case DP_REC_SAMPLE:
		if (smp->mode == DP_MODE_USER)
			ship_ip(sh, smp->pid, smp->ip);
		for (uint32_t i = 0; i < smp->nr_callchain; i++)
			if (smp->callchain[i] < USER_ADDR_END)
				ship_ip(sh, smp->pid, smp->callchain[i]);
		if (smp->has_uregs && smp->ustack_len)
			ship_stack(sh, smp->pid, smp->ustack, smp->ustack_len);
		break;
	default:
		break;
	}
	return 0;
}

struct walk {
	struct batch bt;
	struct ap_end end;
	uint8_t *enc;           /* a sample encoded whole */
	size_t enc_cap;
};

/* The second pass (dp_scan's callback) over every record: count, and
 * batch it unless the host writes its own. Returns 0, or -errno from
 * sending (which stops the scan). */
static int take_record(void *ctx, const struct dp_record *rec)
{
	struct walk *w = ctx;
	struct batch *bt = &w->bt;
	struct ap_end *end = &w->end;
	if (rec->domain != DP_HOST_DOMAIN)
		return 0;
	switch (rec->type) {
	case DP_REC_MMAP:
	case DP_REC_TASK:
	case DP_REC_SYMTAB:
		break;
	case DP_REC_SAMPLE:
		end->samples++;
		break;
	case DP_REC_LOST:
		end->lost += rec->u.lost.count;
		return 0;
	default:
		return 0; /* DOMAIN, EVENT, STATS: the host writes its own */
	}
	end->records++;
	if (rec->type == DP_REC_SAMPLE && !rec->raw) {
		/* a stack in delta form refers to the chunk's earlier
		 * records: the host gets the sample whole */
		size_t n = dp_sample_encode(&rec->u.sample, NULL, 0);
		if (!n)
			return 0;
		xgrow((void **)&w->enc, &w->enc_cap, n, 1);
		dp_sample_encode(&rec->u.sample, w->enc, n);
		return batch_add(bt, w->enc, n);
	}
	return batch_add(bt, rec->raw, rec->raw_len);
}

/* The binaries, found by a first pass over the recording. They go before
 * the records: a reader then meets a binary before the samples whose
 * stacks it unwinds (the host's profile loader unwinds --call-graph dwarf
 * stacks in one pass, in file order), and the processes that mapped them
 * are more likely still alive (map_files). */
static int ship_first(struct dp_reader *r, int fd, const struct agent_log *log, struct shipped *out,
		      char *why, size_t whylen)
{
	struct ship *sh = ship_new();
	static const struct dp_visitor visit = { .record = model_record };
	dp_scan(r, &visit, sh, NULL);
	dp_reader_rewind(r);     /* the records' pass reads it again */
	int ret = ship_symbols(fd, sh, log, out);
	if (ship_over_budget(sh))
		agent_logf(log, "the guest's recording maps more than the agent keeps track of "
			   "(a fork or mmap loop?); binaries mapped after that were not shipped");
	ship_free(sh);
	if (ret < 0) {
		snprintf(why, whylen, "sending to the host: %s", strerror(-ret));
		return AGENT_COLLECT_GONE;
	}
	return 0;
}

int agent_collect(const char *data, int fd, const struct agent_log *log, char *why, size_t whylen)
{
	struct shipped sy = { 0 };
	int err = 0;
	char msg[256];
	struct dp_reader *r = dp_reader_open(data, &err, msg, sizeof(msg));
	if (!r) {
		snprintf(why, whylen, "cannot read the guest's recording: %s", msg);
		return AGENT_COLLECT_FAILED;
	}
	int ret = ship_first(r, fd, log, &sy, why, whylen);
	if (ret < 0) {
		dp_reader_free(r);
		return ret;
	}
	struct walk w = { .bt = { .fd = fd } };
	static const struct dp_visitor visit = { .record = take_record };
	ret = dp_scan(r, &visit, &w, NULL);
	if (!ret)
		ret = batch_flush(&w.bt);
	free(w.bt.b);
	free(w.enc);
	size_t ndamage = dp_reader_damage(r, &(const struct dp_damage *){ NULL });
	dp_reader_free(r);
	struct ap_end end = w.end;
	if (ndamage)
		agent_logf(log, "the guest's recording had %zu damaged part(s); sent what was readable", ndamage);
	if (!ret && end.lost) {
		uint8_t l[8];
		ap_lost_encode(end.lost, l);
		ret = ap_send(fd, AP_LOST, 0, l, 8);
	}
	if (ret < 0) {
		snprintf(why, whylen, "sending to the host: %s", strerror(-ret));
		return AGENT_COLLECT_GONE;
	}
	uint8_t e[24];
	ap_end_encode(&end, e);
	agent_logf(log, "sent %" PRIu64 " records (%" PRIu64 " samples, %" PRIu64 " lost) and %u symbol "
		   "files (%" PRIu64 " bytes; %u of them, %" PRIu64 " bytes, reached only by user stack "
		   "words); %u hit binaries not shipped", end.records, end.samples, end.lost, sy.nsym,
		   sy.bytes, sy.nstack, sy.stack_bytes, sy.nrefused);
	return ap_send(fd, AP_END, 0, e, sizeof(e)) < 0 ? AGENT_COLLECT_GONE : 0;
}
