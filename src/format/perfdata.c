// SPDX-License-Identifier: MIT
/*
 * The perf.data reader (see perfdata.h, docs/perfdata.md): perf's file
 * header, attributes and feature sections, then its data records in
 * three stages, each with its own bound:
 *   source  - the next perf record from the data section, or from the
 *             output of zstd-compressed records (perf record -z);
 *   order   - perf writes each CPU's ring in turn, so a process's MMAP
 *             can follow its first samples: timed records are queued and
 *             released in time order at each FINISHED_ROUND up to the
 *             newest time of the round before (as perf orders them);
 *   translate - one perf record to one domprof record (plus a DOMAIN
 *             record before a guest machine's first record).
 * The layout of the fields a SAMPLE carries follows from its attribute's
 * sample_type; every part is taken through a bounded cursor, so a field
 * that runs past its record makes the record damage, never a read past it.
 */
#include "format/perfdata.h"
#include "format/wire.h"
#include "util/hmap.h"
#include "util/sat.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <zstd.h>

/* perf's own record types (tools/perf, not the kernel's uapi) */
enum {
	PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE = 65, PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67, PD_FINISHED_ROUND = 68, PD_ID_INDEX = 69,
	PD_AUXTRACE_INFO = 70, PD_AUXTRACE = 71, PD_AUXTRACE_ERROR = 72,
	PD_THREAD_MAP = 73, PD_CPU_MAP = 74, PD_STAT_CONFIG = 75, PD_STAT = 76,
	PD_STAT_ROUND = 77, PD_EVENT_UPDATE = 78, PD_TIME_CONV = 79,
	PD_HEADER_FEATURE = 80, PD_COMPRESSED = 81, PD_FINISHED_INIT = 82,
	PD_COMPRESSED2 = 83,    /* newer perf: u64 data size, then 8-aligned */
};
/* feature bits */
enum {
	F_TRACING_DATA = 1, F_BUILD_ID = 2, F_HOSTNAME = 3, F_OSRELEASE = 4, F_VERSION = 5,
	F_ARCH = 6, F_NRCPUS = 7, F_CPUDESC = 8, F_CPUID = 9, F_TOTAL_MEM = 10,
	F_CMDLINE = 11, F_EVENT_DESC = 12, F_SAMPLE_TIME = 21, F_COMPRESSED = 27,
	F_LAST_KNOWN = 31, /* perf 6.1 writes up to PMU_CAPS (31) */
};

#define PD_HDR_SIZE 104u
#define PD_PIPE_HDR_SIZE 16u
#define PD_ATTR_MIN 64u         /* PERF_ATTR_SIZE_VER0 */
#define PD_ATTR_MAX 4096u
#define PD_MAX_ATTRS 4096u
#define PD_MAX_IDS (1u << 20)
#define PD_MAX_GUESTS 1024u
/* queued (not yet released) record bytes; past this the queue is sorted
 * and released whole (a file without FINISHED_ROUND) */
#define PD_QUEUE_MAX (64u << 20)
#define PD_QUEUE_RECS (1u << 20)  /* and at most this many records (48 bytes each) */
/* output of one COMPRESSED record (perf's are one ring's push, <= its
 * mmap size): past this the stream is damage */
#define PD_ZOUT_MAX (64u << 20)
#define PD_CTX_MAX ((uint64_t)-4095)
#define PD_MISC_BUILD_ID_SIZE (1u << 15)

struct pd_attr {
	uint32_t type;
	uint64_t config, period;
	bool freq, sample_id_all;
	uint64_t sample_type, read_format, branch_type, regs_user, regs_intr;
	uint32_t stack_user;
	char *name;
};

struct pd_id {
	uint64_t id;
	uint32_t attr;
};

struct pd_guest {
	uint32_t pid, domain;
	char *name;
	uint32_t symtab_kind;
	uint8_t *syms;
	size_t syms_len;
	uint64_t pass;          /* pass whose DOMAIN record was emitted */
	bool syms_sent;
};

struct qent {
	uint64_t time;          /* ties keep the order read (the sort is stable) */
	const uint8_t *map;     /* the record in the file, or NULL: at arena + off */
	size_t off;
	uint32_t len;
	int32_t attr;           /* a sample's attribute as found when queued (-1 none),
				 * -2 not known (other records; attributes changed since) */
	uint64_t foff;          /* file offset of the record (or of its COMPRESSED) */
};

struct pd_reader {
	const uint8_t *map;
	size_t size;
	bool pipe;
	uint64_t data_off, data_end;
	struct dp_header hdr;
	char *hstr[6];          /* hostname, release, cpudesc, cmdline, version, arch */
	char source[160];
	bool from_here;         /* hostname and release are this machine's */
	bool foreign_arch;      /* recorded on another architecture than x86-64 */
	uint64_t first_sample, last_sample; /* SAMPLE_TIME feature */

	struct pd_attr *attrs;
	size_t nattrs, attrcap;
	struct pd_id *ids;
	size_t nids, idcap;
	bool ids_sorted;
	/* the last id found: a ring's records come together, so most samples
	 * name the id of the one before (its search was a twentieth of a
	 * system-wide file's read) */
	bool id_hit;
	uint64_t hit_id;
	long hit_attr;
	struct hmap buildids;   /* filename -> uint8_t[21] (len, bytes) */
	char **bidkeys;
	size_t nbid, bidcap;

	struct pd_guest *guests;
	size_t nguests, guestcap;
	struct hmap guestidx;   /* pid -> index + 1 */
	uint32_t def_kind;      /* the table of every guest without its own */
	uint8_t *def_syms;
	size_t def_len;
	uint64_t pass;

	/* source */
	uint64_t pos;
	uint64_t cur_foff;      /* offset of the record being translated */
	long cur_attr;          /* its attribute if known (qent.attr), else -2 */
	ZSTD_DStream *zs;
	uint8_t *zbuf;
	size_t zlen, zpos, zcap;
	uint64_t zfoff;         /* the COMPRESSED record zbuf came from */
	bool at_end;

	/* order */
	struct qent *q;
	size_t nq, qcap, qhead, nrel;  /* [0, nrel) released, qhead next to hand out */
	struct qent *qtmp;      /* the merge sort's other half */
	size_t qtmpcap;
	uint8_t *arena;
	size_t alen, acap;
	uint64_t qbytes;        /* bytes of the queued records */
	uint64_t round_max, limit;
	bool flushed_all;
	bool mapped;            /* map is a file mapping (pd_set_mapped) */
	uint64_t dropped;       /* pages of map below this were dropped */

	/* translate / out */
	unsigned stage;         /* 0 events, 1 host domain, 2 records, 3 stats, 4 done */
	size_t ev_next;
	uint64_t *chain;
	size_t chaincap;
	uint64_t uregs[64];
	char str[4200];
	char comm[64];
	const uint8_t *held;    /* a record whose DOMAIN was emitted first */
	uint32_t held_len;
	uint64_t samples, lost, tmin, tmax;
	bool tseen;
	bool eof_early;         /* the data ended before the preamble */
	bool header_done;       /* hdr's strings are set: no more changes */
	uint64_t attr_seen_until; /* HEADER_ATTR records before this offset were read */

	/* what was skipped, per kind of thing (for the note) */
	uint64_t unknown_types, unknown_by[8];
	uint32_t unknown_id[8];
	uint64_t skipped_aux, no_attr, cut_chains, features_unknown, uregs_foreign;
	char note[512];

	struct dp_damage *damage;
	size_t ndamage, damcap;
	uint64_t damage_until;
};

/* ---- small helpers ---- */

static void damage(struct pd_reader *p, uint64_t off, uint64_t lost, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void damage(struct pd_reader *p, uint64_t off, uint64_t lost, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dp_damage_vadd(&p->damage, &p->ndamage, &p->damcap, p->damage_until, off, lost, fmt, ap);
	va_end(ap);
}

/* A bounded cursor over one record's bytes. */
struct cur {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static uint64_t take64(struct cur *c)
{
	if (c->left < 8) {
		c->bad = true;
		c->left = 0;
		return 0;
	}
	uint64_t v = get64(c->p);
	c->p += 8;
	c->left -= 8;
	return v;
}

static const uint8_t *take(struct cur *c, uint64_t n)
{
	if (c->left < n) {
		c->bad = true;
		c->left = 0;
		return NULL;
	}
	const uint8_t *at = c->p;
	c->p += n;
	c->left -= n;
	return at;
}

/* A perf_header_string (u32 len, len bytes NUL-padded) as a new string. */
static char *take_string(struct cur *c)
{
	uint32_t n = c->left >= 4 ? get32(c->p) : 0;
	if (c->left < 4 || n > c->left - 4 || n > 65536) {
		c->bad = true;
		c->left = 0;
		return xstrdup("");
	}
	take(c, 4);
	const uint8_t *s = take(c, n);
	return xstrndup((const char *)s, strnlen((const char *)s, n));
}

static void set_hstr(struct pd_reader *p, int i, char *s)
{
	if (p->header_done) {
		free(s);  /* dp_header points at the first ones */
		return;
	}
	free(p->hstr[i]);
	p->hstr[i] = s;
}

/* ---- attributes and ids ---- */

static const char *default_name(uint32_t type, uint64_t config, char *buf, size_t n)
{
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
		"context-switches", "cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	static const char *const hw[] = { "cycles", "instructions", "cache-references",
		"cache-misses", "branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles" };
	if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw) / sizeof(sw[0]))
		return sw[config];
	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw) / sizeof(hw[0]))
		return hw[config];
	snprintf(buf, n, "%s:0x%" PRIx64, type == PERF_TYPE_TRACEPOINT ? "tracepoint" : "raw", config);
	return buf;
}

/* An attr of attr_size bytes at a (attr_size >= PD_ATTR_MIN checked). */
/* The attributes or ids changed: a queued sample's attribute is found
 * again when it is decoded. */
static void attrs_changed(struct pd_reader *p)
{
	for (size_t i = p->qhead; i < p->nq; i++)
		p->q[i].attr = -2;
	p->cur_attr = -2;
}

static uint32_t add_attr(struct pd_reader *p, const uint8_t *a, uint32_t size)
{
	xgrow((void **)&p->attrs, &p->attrcap, p->nattrs + 1, sizeof(*p->attrs));
	struct pd_attr *t = &p->attrs[p->nattrs];
	memset(t, 0, sizeof(*t));
	t->type = get32(a);
	t->config = get64(a + 8);
	t->period = get64(a + 16);
	t->sample_type = get64(a + 24);
	t->read_format = get64(a + 32);
	uint64_t flags = get64(a + 40);
	t->freq = flags >> 10 & 1;
	t->sample_id_all = flags >> 18 & 1;
	if (size >= 80)
		t->branch_type = get64(a + 72);
	if (size >= 96) {
		t->regs_user = get64(a + 80);
		t->stack_user = get32(a + 88);
	}
	if (size >= 104)
		t->regs_intr = get64(a + 96);
	char buf[64];
	t->name = xstrdup(default_name(t->type, t->config, buf, sizeof(buf)));
	attrs_changed(p);
	return (uint32_t)p->nattrs++;
}

static void add_id(struct pd_reader *p, uint64_t id, uint32_t attr)
{
	if (p->nids >= PD_MAX_IDS)
		return;
	xgrow((void **)&p->ids, &p->idcap, p->nids + 1, sizeof(*p->ids));
	p->ids[p->nids++] = (struct pd_id){ id, attr };
	p->ids_sorted = false;
	attrs_changed(p);
}

static int cmp_id(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The attr of an event id; -1 when no attr names it. */
static long attr_of_id(struct pd_reader *p, uint64_t id)
{
	if (!p->ids_sorted) {
		if (p->nids)
			qsort(p->ids, p->nids, sizeof(*p->ids), cmp_id);
		p->ids_sorted = true;
		p->id_hit = false;
	}
	if (p->id_hit && p->hit_id == id)
		return p->hit_attr;
	size_t lo = 0, hi = p->nids;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (p->ids[m].id == id) {
			p->id_hit = true;
			p->hit_id = id;
			return p->hit_attr = p->ids[m].attr;
		}
		if (p->ids[m].id < id)
			lo = m + 1;
		else
			hi = m;
	}
	return -1;
}

static bool all_identifier(const struct pd_reader *p)
{
	for (size_t i = 0; i < p->nattrs; i++)
		if (!(p->attrs[i].sample_type & PERF_SAMPLE_IDENTIFIER))
			return false;
	return p->nattrs > 0;
}

/* The attr of a SAMPLE (body after the 8-byte header), as perf finds it:
 * the IDENTIFIER first, else the ID at its place in the first attr's
 * layout, else the only attr. -1 when unknown. */
static long sample_attr(struct pd_reader *p, const uint8_t *b, size_t n)
{
	if (!p->nattrs)
		return -1;
	if (p->nattrs == 1)
		return 0;
	if (all_identifier(p))
		return n >= 8 ? attr_of_id(p, get64(b)) : -1;
	uint64_t st = p->attrs[0].sample_type;
	if (!(st & PERF_SAMPLE_ID))
		return 0;
	size_t at = 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
			 !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
	return n >= at + 8 ? attr_of_id(p, get64(b + at)) : -1;
}

/* Bytes of the sample_id trailer of a non-sample record for attr a. */
static size_t trailer_size(const struct pd_attr *a)
{
	if (!a->sample_id_all)
		return 0;
	uint64_t st = a->sample_type;
	return 8 * (size_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
			    !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
			    !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* The attr of a non-sample kernel record: its trailer's IDENTIFIER (the
 * last u64) when every attr has one, else the first attr. */
static const struct pd_attr *rec_attr(struct pd_reader *p, const uint8_t *r, uint32_t len)
{
	if (!p->nattrs)
		return NULL;
	if (p->nattrs > 1 && all_identifier(p) && len >= 16) {
		long a = attr_of_id(p, get64(r + len - 8));
		if (a >= 0)
			return &p->attrs[a];
	}
	return &p->attrs[0];
}

struct trailer {
	bool has_time, has_cpu;
	uint64_t time;
	uint32_t cpu;
	size_t size;            /* bytes the trailer takes at the record's end */
};

static struct trailer get_trailer(struct pd_reader *p, const uint8_t *r, uint32_t len)
{
	struct trailer t = { 0 };
	const struct pd_attr *a = rec_attr(p, r, len);
	if (!a || !a->sample_id_all)
		return t;
	size_t n = trailer_size(a);
	if (n + 8 > len)
		return t;
	t.size = n;
	const uint8_t *q = r + len - n;
	uint64_t st = a->sample_type;
	if (st & PERF_SAMPLE_TID)
		q += 8;
	if (st & PERF_SAMPLE_TIME) {
		t.has_time = true;
		t.time = get64(q);
		q += 8;
	}
	q += 8 * (!!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID));
	if (st & PERF_SAMPLE_CPU) {
		t.has_cpu = true;
		t.cpu = get32(q);
	}
	return t;
}

/* ---- features ---- */

static void add_buildid(struct pd_reader *p, const uint8_t *r, uint32_t len)
{
	/* header, s32 pid, build_id[24] (20 bytes, or the size in byte 20
	 * with PERF_RECORD_MISC_BUILD_ID_SIZE), filename to the end */
	if (len < 8 + 4 + 24 + 1)
		return;
	uint16_t misc = get16(r + 4);
	uint8_t n = 20;
	if (misc & PD_MISC_BUILD_ID_SIZE)
		n = r[12 + 20] > 20 ? 20 : r[12 + 20];
	const char *name = (const char *)r + 36;
	size_t nl = strnlen(name, len - 36);
	if (!nl || p->nbid >= PD_MAX_IDS)
		return;
	char *key = xstrndup(name, nl);
	if (strmap_get(&p->buildids, key)) {
		free(key);
		return;
	}
	uint8_t *v = xmalloc(21);
	v[0] = n;
	memcpy(v + 1, r + 12, n);
	xgrow((void **)&p->bidkeys, &p->bidcap, p->nbid + 1, sizeof(*p->bidkeys));
	p->bidkeys[p->nbid++] = key;
	strmap_put(&p->buildids, key, v);
}

/* Feature `id` over bytes [b, b+n). */
static void parse_feature(struct pd_reader *p, unsigned id, const uint8_t *b, size_t n, uint64_t off)
{
	struct cur c = { b, n, false };
	switch (id) {
	case F_HOSTNAME: set_hstr(p, 0, take_string(&c)); break;
	case F_OSRELEASE: set_hstr(p, 1, take_string(&c)); break;
	case F_CPUDESC: set_hstr(p, 2, take_string(&c)); break;
	case F_VERSION: set_hstr(p, 4, take_string(&c)); break;
	case F_ARCH: set_hstr(p, 5, take_string(&c)); break;
	case F_NRCPUS:
		if (n >= 8)
			p->hdr.ncpus = get32(b + 4) ? get32(b + 4) : get32(b); /* online, else available */
		else
			c.bad = true;
		break;
	case F_CMDLINE: {
		uint32_t nr = n >= 4 ? get32(b) : 0;
		take(&c, 4);
		char *line = xstrdup("");
		for (uint32_t i = 0; i < nr && !c.bad && strlen(line) < 4000; i++) {
			char *s = take_string(&c);
			char *j = xmalloc(strlen(line) + strlen(s) + 2);
			sprintf(j, "%s%s%s", line, *line ? " " : "", s);
			free(line);
			free(s);
			line = j;
		}
		set_hstr(p, 3, line);
		break;
	}
	case F_EVENT_DESC: {
		uint32_t nr = n >= 8 ? get32(b) : 0, asz = n >= 8 ? get32(b + 4) : 0;
		take(&c, 8);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			take(&c, asz);
			uint32_t nids = c.left >= 4 ? get32(c.p) : 0;
			take(&c, 4);
			char *name = take_string(&c);
			if (!c.bad && i < p->nattrs && *name) {
				free(p->attrs[i].name);
				p->attrs[i].name = name;
			} else {
				free(name);
			}
			take(&c, 8 * (uint64_t)nids);
		}
		break;
	}
	case F_BUILD_ID: {
		while (c.left >= 8 && !c.bad) {
			uint16_t sz = get16(c.p + 6);
			if (sz < 8 || sz > c.left) {
				c.bad = true;
				break;
			}
			add_buildid(p, c.p, sz);
			take(&c, sz);
		}
		break;
	}
	case F_SAMPLE_TIME:
		if (n >= 16) {
			p->first_sample = get64(b);
			p->last_sample = get64(b + 8);
		}
		break;
	default:
		if (id > F_LAST_KNOWN)
			p->features_unknown++;
		break;  /* topology, caches, pmu mappings...: nothing a report uses */
	}
	if (c.bad)
		damage(p, off, 0, "perf.data feature %u at offset %" PRIu64 " is malformed (partly read)",
		       id, off);
}

static void parse_features(struct pd_reader *p, const uint8_t *flags)
{
	uint64_t at = p->data_end;  /* the section table follows the data */
	for (unsigned id = 1; id < 256; id++) {
		if (!(flags[id / 8] >> (id % 8) & 1))
			continue;
		if (at > p->size || p->size - at < 16) {
			damage(p, at, 0, "perf.data feature table cut at offset %" PRIu64, at);
			return;
		}
		uint64_t off = get64(p->map + at), n = get64(p->map + at + 8);
		at += 16;
		if (off > p->size || n > p->size - off) {
			damage(p, at - 16, 0, "perf.data feature %u points outside the file", id);
			continue;
		}
		parse_feature(p, id, p->map + off, (size_t)n, off);
	}
}

/* ---- header ---- */

bool pd_is_perf(const uint8_t *p, size_t n)
{
	return n >= 8 && (!memcmp(p, "PERFILE2", 8) || !memcmp(p, "2ELIFREP", 8));
}

static int parse_file_header(struct pd_reader *p, int *err, char *msg, size_t msglen)
{
	const uint8_t *h = p->map;
	if (p->size < PD_HDR_SIZE)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged perf.data header: file truncated inside it (%zu bytes)", p->size);
	uint64_t asz = get64(h + 16), aoff = get64(h + 24), an = get64(h + 32);
	uint64_t doff = get64(h + 40), dn = get64(h + 48);
	if (asz < PD_ATTR_MIN + 16 || asz > PD_ATTR_MAX + 16 || asz % 8)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged perf.data header: attribute size %" PRIu64, asz);
	if (aoff > p->size || an > p->size - aoff || an % asz || an / asz > PD_MAX_ATTRS)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged perf.data header: attribute section outside the file");
	if (doff > p->size || doff < PD_HDR_SIZE)
		return dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
			    "damaged perf.data header: data section at %" PRIu64 " outside the file", doff);
	p->data_off = doff;
	if (dn > p->size - doff) {
		damage(p, doff, 0, "perf.data data section (%" PRIu64 " bytes) runs past the end "
		       "of the file (%zu bytes): file truncated", dn, p->size);
		dn = p->size - doff;
	}
	p->data_end = doff + dn;
	for (uint64_t o = aoff; o < aoff + an; o += asz) {
		uint32_t idx = add_attr(p, h + o, (uint32_t)(asz - 16));
		uint64_t ioff = get64(h + o + asz - 16), in = get64(h + o + asz - 8);
		if (ioff > p->size || in > p->size - ioff) {
			damage(p, o, 0, "perf.data attribute %u: ids outside the file", idx);
			continue;
		}
		for (uint64_t k = 0; k + 8 <= in; k += 8)
			add_id(p, get64(h + ioff + k), idx);
	}
	if (dn == 0 && p->size > doff)
		/* perf writes the sizes when it ends: a killed perf leaves 0 */
		p->data_end = p->size;
	parse_features(p, h + 72);
	return 0;
}

static void finish_header(struct pd_reader *p)
{
	for (int i = 0; i < 6; i++)
		if (!p->hstr[i])
			p->hstr[i] = xstrdup("");
	p->header_done = true;
	p->hdr.hostname = p->hstr[0];
	p->hdr.release = p->hstr[1];
	p->hdr.cpu_desc = p->hstr[2];
	p->hdr.cmdline = p->hstr[3];
	snprintf(p->source, sizeof(p->source), "perf.data (perf %s, %s%s)",
		 *p->hstr[4] ? p->hstr[4] : "?", *p->hstr[5] ? p->hstr[5] : "?",
		 p->pipe ? ", pipe mode" : "");
	p->hdr.source = p->source;
	/* DWARF unwinding reads x86-64 register numbers (format.h) */
	p->foreign_arch = *p->hstr[5] && strcmp(p->hstr[5], "x86_64");
	struct utsname u;
	p->from_here = !uname(&u) && *p->hstr[0] && !strcmp(u.nodename, p->hstr[0]) &&
		       !strcmp(u.release, p->hstr[1]);
}

static void user_record(struct pd_reader *p, const uint8_t *r, uint32_t len, uint64_t foff);
static uint64_t trailing_payload(const uint8_t *r, uint32_t len);

/* A pipe's header is in its first records (attributes, features, event
 * names): read them before the data, up to the first kernel record. */
static void pipe_preamble(struct pd_reader *p)
{
	uint64_t off = p->data_off;
	while (off < p->size && p->size - off >= 8) {
		const uint8_t *q = p->map + off;
		uint16_t sz = get16(q + 6);
		uint32_t type = get32(q);
		if (sz < 8 || sz > p->size - off || type < PD_HEADER_ATTR || type == PD_COMPRESSED ||
		    type == PD_FINISHED_ROUND)
			break;
		user_record(p, q, sz, off);
		uint64_t extra = trailing_payload(q, sz);
		if (extra > p->size - off - sz)
			break;
		off += sz + extra;
	}
}

struct pd_reader *pd_open(const uint8_t *map, size_t size, uint64_t mtime_ns, int *err,
			  char *msg, size_t msglen)
{
	if (size >= 8 && !memcmp(map, "2ELIFREP", 8)) {
		dp_open_fail(err, msg, msglen, DP_ERR_VERSION,
		     "a perf.data of the other byte order (big-endian machine): not supported");
		return NULL;
	}
	if (size < PD_PIPE_HDR_SIZE) {
		dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
		     "damaged perf.data header: file truncated inside it (%zu bytes)", size);
		return NULL;
	}
	struct pd_reader *p = xcalloc(1, sizeof(*p));
	p->cur_attr = -2;
	p->map = map;
	p->size = size;
	p->hdr.major = 0;
	p->hdr.minor = 0;
	p->hdr.created_ns = mtime_ns;
	uint64_t hsz = get64(map + 8);
	if (hsz == PD_PIPE_HDR_SIZE) {
		p->pipe = true;
		p->data_off = PD_PIPE_HDR_SIZE;
		p->data_end = size;
		pipe_preamble(p);
	} else if (hsz == PD_HDR_SIZE) {
		if (parse_file_header(p, err, msg, msglen) < 0) {
			pd_free(p);
			return NULL;
		}
	} else {
		dp_open_fail(err, msg, msglen, DP_ERR_BAD_HEADER,
		     "damaged perf.data header: header size %" PRIu64 " (perf writes 104, or 16 "
		     "for a pipe)", hsz);
		pd_free(p);
		return NULL;
	}
	finish_header(p);
	p->pos = p->data_off;  /* the zstd stream is made at the first COMPRESSED record */
	return p;
}

static void free_attrs(struct pd_reader *p)
{
	for (size_t i = 0; i < p->nattrs; i++)
		free(p->attrs[i].name);
	p->nattrs = 0;
	p->nids = 0;
	p->id_hit = false;
	attrs_changed(p);
}

static void free_buildids(struct pd_reader *p)
{
	for (size_t i = 0; i < p->nbid; i++) {
		free(strmap_get(&p->buildids, p->bidkeys[i]));
		free(p->bidkeys[i]);
	}
	hmap_release(&p->buildids);
	memset(&p->buildids, 0, sizeof(p->buildids));
	p->nbid = 0;
}

void pd_free(struct pd_reader *p)
{
	if (!p)
		return;
	free_attrs(p);
	free(p->attrs);
	free(p->ids);
	free_buildids(p);
	free(p->bidkeys);
	for (size_t i = 0; i < p->nguests; i++) {
		free(p->guests[i].name);
		free(p->guests[i].syms);
	}
	free(p->guests);
	free(p->def_syms);
	hmap_release(&p->guestidx);
	for (int i = 0; i < 6; i++)
		free(p->hstr[i]);
	ZSTD_freeDStream(p->zs);
	free(p->zbuf);
	free(p->q);
	free(p->qtmp);
	free(p->arena);
	free(p->chain);
	free(p->damage);
	free(p);
}

const struct dp_header *pd_header(const struct pd_reader *p) { return &p->hdr; }
uint64_t pd_pos(const struct pd_reader *p) { return p->pos; }

size_t pd_damage(const struct pd_reader *p, const struct dp_damage **out)
{
	*out = p->damage;
	return p->ndamage;
}

const char *pd_incomplete(const struct pd_reader *p)
{
	if (!p->pipe && p->map && get64(p->map + 48) == 0 && p->data_end > p->data_off)
		return "perf.data incomplete: its header was never finished (perf record was killed?)";
	return NULL;
}

void pd_rewind(struct pd_reader *p)
{
	if (p->pos > p->damage_until)
		p->damage_until = p->pos;
	if (p->stage >= 4)
		p->damage_until = UINT64_MAX;
	p->pos = p->data_off;
	if (p->zs)
		ZSTD_initDStream(p->zs);
	p->zlen = p->zpos = 0;
	p->at_end = false;
	p->nq = p->qhead = p->nrel = 0;
	p->alen = 0;
	p->qbytes = 0;
	p->round_max = p->limit = 0;
	p->flushed_all = false;
	p->dropped = 0;   /* the pages fault back in as this pass reads them */
	p->stage = 0;
	p->ev_next = 0;
	p->held = NULL;
	p->eof_early = false;
	p->samples = p->lost = p->tmin = p->tmax = 0;
	p->tseen = false;
	p->pass++;
	p->unknown_types = p->skipped_aux = p->no_attr = p->cut_chains = p->uregs_foreign = 0;
	memset(p->unknown_by, 0, sizeof(p->unknown_by));
}

static struct pd_guest *pd_guest_get(struct pd_reader *p, uint32_t pid);

static void guest_take_default(struct pd_reader *p, struct pd_guest *g)
{
	if (!p->def_kind)
		return;
	g->symtab_kind = p->def_kind;
	g->syms = xmalloc(p->def_len ? p->def_len : 1);
	memcpy(g->syms, p->def_syms, p->def_len);
	g->syms_len = p->def_len;
}

int pd_set_guest(struct pd_reader *p, const struct dp_perf_guest *g)
{
	if (!g || (g->symtab_kind && g->symtab_kind != DP_SYMTAB_KALLSYMS &&
		   g->symtab_kind != DP_SYMTAB_SYSMAP) || (g->syms_len && !g->syms) ||
	    g->syms_len > DP_SYMTAB_MAX_RAW)
		return -EINVAL;
	if (g->pid == UINT32_MAX) {
		/* every guest machine's table (perf kvm --guestkallsyms) */
		if (!g->symtab_kind)
			return 0;
		free(p->def_syms);
		p->def_kind = g->symtab_kind;
		p->def_syms = xmalloc(g->syms_len ? g->syms_len : 1);
		memcpy(p->def_syms, g->syms, g->syms_len);
		p->def_len = g->syms_len;
		for (size_t i = 0; i < p->nguests; i++)
			if (!p->guests[i].symtab_kind)
				guest_take_default(p, &p->guests[i]);
		return 0;
	}
	struct pd_guest *x = pd_guest_get(p, g->pid);
	if (!x)
		return -ENOSPC;
	if (g->name && *g->name) {
		free(x->name);
		x->name = xstrdup(g->name);
	}
	if (g->symtab_kind) {
		free(x->syms);
		x->symtab_kind = g->symtab_kind;
		x->syms = xmalloc(g->syms_len ? g->syms_len : 1);
		memcpy(x->syms, g->syms, g->syms_len);
		x->syms_len = g->syms_len;
	}
	return 0;
}

/* The guest machine of a QEMU pid (domain ids from 1 in order of first
 * appearance); NULL past PD_MAX_GUESTS. */
static struct pd_guest *pd_guest_get(struct pd_reader *p, uint32_t pid)
{
	uintptr_t at = (uintptr_t)u64map_get(&p->guestidx, pid);
	if (at)
		return &p->guests[at - 1];
	if (p->nguests >= PD_MAX_GUESTS)
		return NULL;
	xgrow((void **)&p->guests, &p->guestcap, p->nguests + 1, sizeof(*p->guests));
	struct pd_guest *g = &p->guests[p->nguests++];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->domain = (uint32_t)p->nguests;
	char name[32];
	snprintf(name, sizeof(name), "[guest/%u]", pid);
	g->name = xstrdup(name);
	g->pass = UINT64_MAX;
	u64map_put(&p->guestidx, pid, (void *)(uintptr_t)p->nguests);
	guest_take_default(p, g);
	return g;
}

/* ---- source: the next perf record ---- */

/* Decompress one COMPRESSED record's payload after what is left in zbuf. */
static void decompress(struct pd_reader *p, const uint8_t *b, size_t n, uint64_t foff)
{
	if (p->zpos) {
		memmove(p->zbuf, p->zbuf + p->zpos, p->zlen - p->zpos);
		p->zlen -= p->zpos;
		p->zpos = 0;
	}
	size_t start = p->zlen;
	if (!p->zs) {
		p->zs = ZSTD_createDStream();
		ZSTD_initDStream(p->zs);
	}
	ZSTD_inBuffer in = { b, n, 0 };
	for (;;) {
		if (p->zlen - start >= PD_ZOUT_MAX) {
			damage(p, foff, n, "perf.data compressed record at offset %" PRIu64
			       " inflates past %u MiB; skipped", foff, PD_ZOUT_MAX >> 20);
			p->zlen = start;
			ZSTD_initDStream(p->zs);
			return;
		}
		if (p->zcap - p->zlen < (1u << 16)) {
			p->zcap = p->zcap ? p->zcap * 2 : (256u << 10);
			p->zbuf = xrealloc(p->zbuf, p->zcap);
		}
		ZSTD_outBuffer out = { p->zbuf + p->zlen, p->zcap - p->zlen, 0 };
		size_t r = ZSTD_decompressStream(p->zs, &out, &in);
		if (ZSTD_isError(r)) {
			damage(p, foff, n, "perf.data compressed record at offset %" PRIu64
			       " does not decompress (%s); skipped", foff, ZSTD_getErrorName(r));
			p->zlen = start;
			ZSTD_initDStream(p->zs);
			return;
		}
		p->zlen += out.pos;
		if (in.pos == in.size && out.pos < out.size)
			break;  /* all input read, all output it gave out */
	}
	p->zfoff = foff;
}

/* Bytes after a record that belong to it (pipe-mode tracing data, AUX
 * trace data): 0 for all others. */
static uint64_t trailing_payload(const uint8_t *r, uint32_t len)
{
	uint32_t type = get32(r);
	if (type == PD_HEADER_TRACING_DATA && len >= 12)
		return ((uint64_t)get32(r + 8) + 7) & ~7ull;
	if (type == PD_AUXTRACE && len >= 16)
		return get64(r + 8);
	return 0;
}

/* The next record: 1 with *r, *len, *foff; 0 at the end. */
static int src_next(struct pd_reader *p, const uint8_t **r, uint32_t *len, uint64_t *foff)
{
	for (;;) {
		if (p->zpos < p->zlen) {
			size_t left = p->zlen - p->zpos;
			const uint8_t *q = p->zbuf + p->zpos;
			uint16_t sz = left >= 8 ? get16(q + 6) : 0;
			if (left >= 8 && sz >= 8 && sz <= left) {
				p->zpos += sz;
				*r = q;
				*len = sz;
				*foff = p->zfoff;
				return 1;
			}
			if (left >= 8 && sz < 8) {
				damage(p, p->zfoff, left, "perf.data compressed record at offset %" PRIu64
				       " holds a record of size %u; rest skipped", p->zfoff, sz);
				p->zlen = p->zpos = 0;
			}
			/* else: a record continued by the next COMPRESSED */
		}
		if (p->at_end || p->pos >= p->data_end) {
			p->at_end = true;
			if (p->zpos < p->zlen)
				damage(p, p->zfoff, p->zlen - p->zpos, "perf.data compressed data ends "
				       "inside a record (%zu bytes lost)", p->zlen - p->zpos);
			p->zlen = p->zpos = 0;
			return 0;
		}
		uint64_t off = p->pos, left = p->data_end - off;
		const uint8_t *q = p->map + off;
		uint16_t sz = left >= 8 ? get16(q + 6) : 0;
		if (left < 8 || sz < 8 || sz > left) {
			damage(p, off, left, left < 8 || sz > left ?
			       "perf.data file truncated: record at offset %" PRIu64 " incomplete" :
			       "perf.data record at offset %" PRIu64 " has a bad size; rest of the data skipped",
			       off);
			p->pos = p->data_end;
			continue;
		}
		uint64_t extra = trailing_payload(q, sz);
		if (extra > left - sz) {
			damage(p, off, left, "perf.data record at offset %" PRIu64 ": its payload runs "
			       "past the data", off);
			p->pos = p->data_end;
			continue;
		}
		p->pos = off + sz + extra;
		if (get32(q) == PD_COMPRESSED) {
			/* perf 6.1 pads nothing: the rest of the record is zstd */
			decompress(p, q + 8, sz - 8u, off);
			continue;
		}
		if (get32(q) == PD_COMPRESSED2) {
			uint64_t dn = sz >= 16 ? get64(q + 8) : UINT64_MAX;
			if (dn > sz - 16u)
				damage(p, off, sz, "perf.data compressed record at offset %" PRIu64
				       " has a bad data size; skipped", off);
			else
				decompress(p, q + 16, (size_t)dn, off);
			continue;
		}
		*r = q;
		*len = sz;
		*foff = off;
		return 1;
	}
}

/* ---- order ---- */

/* End of the ascending run of q[] that starts at i. */
static size_t run_end(const struct qent *q, size_t i, size_t n)
{
	while (++i < n && q[i - 1].time <= q[i].time)
		;
	return i;
}

/*
 * Sort the queue by time, keeping the order read among equal times. The
 * queue is a few ascending runs (each CPU's ring is written in time
 * order, and what a release kept is sorted): a natural merge sort takes
 * O(n log runs), one pass when it is sorted already, where qsort's
 * general sort of 40-byte entries was most of the reader's time. Passes
 * are bounded by log2(n) + 1: each halves the number of runs.
 */
static void sort_queue(struct pd_reader *p)
{
	size_t n = p->nq;
	if (run_end(p->q, 0, n) == n)
		return;
	xgrow((void **)&p->qtmp, &p->qtmpcap, n, sizeof(*p->qtmp));
	for (;;) {
		struct qent *a = p->q, *o = p->qtmp;
		size_t i = 0, runs = 0;
		while (i < n) {
			size_t m = run_end(a, i, n), e = m < n ? run_end(a, m, n) : n;
			size_t x = i, y = m, w = i;
			while (x < m && y < e)
				o[w++] = a[y].time < a[x].time ? a[y++] : a[x++];
			if (x < m)
				memcpy(o + w, a + x, (m - x) * sizeof(*o)), w += m - x;
			if (y < e)
				memcpy(o + w, a + y, (e - y) * sizeof(*o));
			i = e;
			runs++;
		}
		/* the merged copy becomes the queue */
		struct qent *t = p->q;
		size_t tc = p->qcap;
		p->q = p->qtmp;
		p->qcap = p->qtmpcap;
		p->qtmp = t;
		p->qtmpcap = tc;
		if (runs <= 1)
			return;
	}
}

void pd_set_mapped(struct pd_reader *p) { p->mapped = true; }

/* Let the kernel take back the mapped pages no queued record and no
 * later read needs (they fault back in from the file if read again, as
 * on a rewind): a report's resident memory then holds a round or two of
 * records, not the file. Called when the queue is released. */
static void drop_pages(struct pd_reader *p)
{
	if (!p->mapped)
		return;
	uint64_t keep = p->pos;
	for (size_t i = 0; i < p->nq; i++)
		if (p->q[i].map && (uint64_t)(p->q[i].map - p->map) < keep)
			keep = (uint64_t)(p->q[i].map - p->map);
	keep &= ~(uint64_t)4095;
	if (keep > p->dropped + (256u << 10)) {
		madvise((void *)(p->map + p->dropped), keep - p->dropped, MADV_DONTNEED);
		p->dropped = keep;
	}
}

/* Drop the records already handed out, then release (sorted) those at
 * or before `limit`. */
static void release(struct pd_reader *p, uint64_t limit)
{
	if (p->nrel) {
		/* compact: what stays moves to the front of the arena */
		size_t keep = p->nq - p->nrel, w = 0;
		bool moved = false;
		for (size_t i = 0; i < keep && !moved; i++)
			moved = !p->q[p->nrel + i].map;
		if (keep) {
			uint8_t *na = moved ? xmalloc(p->acap) : NULL;
			for (size_t i = 0; i < keep; i++) {
				struct qent *e = &p->q[p->nrel + i];
				if (e->map)
					continue;  /* in the file: nothing to move */
				memcpy(na + w, p->arena + e->off, e->len);
				e->off = w;
				w += e->len;
			}
			memmove(p->q, p->q + p->nrel, keep * sizeof(*p->q));
			if (moved) {
				free(p->arena);
				p->arena = na;
			}
		}
		p->alen = w;
		p->nq = keep;
		p->qbytes = 0;
		for (size_t i = 0; i < keep; i++)
			p->qbytes += p->q[i].len;
		p->nrel = p->qhead = 0;
	}
	drop_pages(p);
	if (!p->nq)
		return;
	sort_queue(p);
	size_t k = 0;
	while (k < p->nq && p->q[k].time <= limit)
		k++;
	p->nrel = k;
	p->qhead = 0;
}

static void enqueue(struct pd_reader *p, const uint8_t *r, uint32_t len, uint64_t t, int32_t attr,
		    uint64_t foff)
{
	xgrow((void **)&p->q, &p->qcap, p->nq + 1, sizeof(*p->q));
	if (t > p->round_max)
		p->round_max = t;
	if (r >= p->map && r < p->map + p->size) {
		/* a record of the mapped file stays where it is */
		p->q[p->nq++] = (struct qent){ t, r, 0, len, attr, foff };
		p->qbytes += len;
		return;
	}
	if (p->acap - p->alen < len) {
		p->acap = p->acap ? p->acap * 2 : (16u << 10);
		while (p->acap - p->alen < len)
			p->acap *= 2;
		p->arena = xrealloc(p->arena, p->acap);
	}
	memcpy(p->arena + p->alen, r, len);
	p->q[p->nq++] = (struct qent){ t, NULL, p->alen, len, attr, foff };
	p->alen += len;
	p->qbytes += len;
}

static void user_record(struct pd_reader *p, const uint8_t *r, uint32_t len, uint64_t foff);

/* The next record in time order: 1 with *r, *len; 0 at the end. */
static int ord_next(struct pd_reader *p, const uint8_t **r, uint32_t *len)
{
	for (;;) {
		if (p->qhead < p->nrel) {
			struct qent *e = &p->q[p->qhead++];
			*r = e->map ? e->map : p->arena + e->off;
			*len = e->len;
			p->cur_foff = e->foff;
			p->cur_attr = e->attr;
			return 1;
		}
		if (p->flushed_all) {
			release(p, 0);  /* drops what was handed out */
			return 0;
		}
		const uint8_t *q;
		uint32_t n;
		uint64_t foff;
		if (!src_next(p, &q, &n, &foff)) {
			release(p, UINT64_MAX);
			p->flushed_all = true;
			continue;
		}
		uint32_t type = get32(q);
		if (type >= PD_HEADER_ATTR) {
			if (type == PD_FINISHED_ROUND) {
				release(p, p->limit);
				p->limit = p->round_max;
			} else {
				user_record(p, q, n, foff);
			}
			continue;
		}
		uint64_t t = 0;
		long a = -2;
		if (type == PERF_RECORD_SAMPLE) {
			a = sample_attr(p, q + 8, n - 8u);
			if (a >= 0 && (p->attrs[a].sample_type & PERF_SAMPLE_TIME)) {
				uint64_t st = p->attrs[a].sample_type;
				size_t at = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
						     !!(st & PERF_SAMPLE_TID));
				t = n >= at + 8 ? get64(q + at) : 0;
			}
		} else {
			struct trailer tr = get_trailer(p, q, n);
			t = tr.time;
		}
		enqueue(p, q, n, t, (int32_t)a, foff);
		if (p->qbytes > PD_QUEUE_MAX || p->nq > PD_QUEUE_RECS) {
			release(p, UINT64_MAX);
			p->limit = p->round_max;
		}
	}
}

/* ---- perf's own records ---- */

static void note_unknown(struct pd_reader *p, uint32_t type)
{
	p->unknown_types++;
	for (int i = 0; i < 8; i++) {
		if (p->unknown_by[i] && p->unknown_id[i] != type)
			continue;
		p->unknown_id[i] = type;
		p->unknown_by[i]++;
		return;
	}
}

static void user_record(struct pd_reader *p, const uint8_t *r, uint32_t len, uint64_t foff)
{
	uint32_t type = get32(r);
	/* Attributes are read once over all passes (a pipe's first ones by
	 * pipe_preamble, before the first pass); the others are the same
	 * when read again (names, build-ids kept once, features whose
	 * strings are already set), and several may share one offset (a
	 * COMPRESSED record's). */
	if (type == PD_HEADER_ATTR) {
		if (foff < p->attr_seen_until)
			return;
		p->attr_seen_until = foff + 1;
	}
	switch (type) {
	case PD_HEADER_ATTR: {
		/* header, attr (its own size field), ids to the end */
		uint32_t asz = len >= 16 ? get32(r + 12) : 0;
		if (asz < PD_ATTR_MIN || asz > PD_ATTR_MAX || asz > len - 8u || p->nattrs >= PD_MAX_ATTRS) {
			damage(p, foff, len, "perf.data attribute record at offset %" PRIu64
			       " is malformed; skipped", foff);
			return;
		}
		uint32_t idx = add_attr(p, r + 8, asz);
		for (uint32_t o = 8 + asz; o + 8 <= len; o += 8)
			add_id(p, get64(r + o), idx);
		return;
	}
	case PD_EVENT_UPDATE:
		/* header, u64 type, u64 id, data: type 2 names the event */
		if (len > 24 && get64(r + 8) == 2) {
			long a = attr_of_id(p, get64(r + 16));
			size_t nl = strnlen((const char *)r + 24, len - 24u);
			if (a >= 0 && nl) {
				free(p->attrs[a].name);
				p->attrs[a].name = xstrndup((const char *)r + 24, nl);
			}
		}
		return;
	case PD_HEADER_FEATURE:
		if (len >= 16 && get64(r + 8) < 256)
			parse_feature(p, (unsigned)get64(r + 8), r + 16, len - 16u, foff);
		return;
	case PD_HEADER_BUILD_ID:
		add_buildid(p, r, len);
		return;
	case PD_HEADER_TRACING_DATA: case PD_AUXTRACE: case PD_AUXTRACE_INFO:
	case PD_AUXTRACE_ERROR:
		p->skipped_aux++;
		return;
	case PD_HEADER_EVENT_TYPE: case PD_ID_INDEX: case PD_THREAD_MAP: case PD_CPU_MAP:
	case PD_STAT_CONFIG: case PD_STAT: case PD_STAT_ROUND: case PD_TIME_CONV:
	case PD_FINISHED_INIT:
		return;  /* understood; nothing a profile needs */
	default:
		note_unknown(p, type);
		return;
	}
}

/* ---- translate ---- */

static bool is_guest(uint8_t mode)
{
	return mode == DP_MODE_GUEST_KERNEL || mode == DP_MODE_GUEST_USER;
}

/* The read_format block of one event (PERF_SAMPLE_READ). */
static void skip_read(struct cur *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t head = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (rf & PERF_FORMAT_GROUP) {
		uint64_t nr = take64(c);
		if (nr > c->left / 8 / per)
			c->bad = true;
		else
			take(c, 8 * (head + nr * per));
	} else {
		take(c, 8 * (head + per));
	}
}

/* A SAMPLE's fields in sample_type order into s. False: malformed. */
static bool dec_sample(struct pd_reader *p, const struct pd_attr *a, const uint8_t *r,
		       uint32_t len, struct dp_sample *s)
{
	struct cur c = { r + 8, len - 8u, false };
	uint64_t st = a->sample_type;
	memset(s, 0, sizeof(*s));
	s->period = a->freq ? 1 : a->period;
	s->mode = dp_mode_of_perf_misc(get16(r + 4));
	if (st & PERF_SAMPLE_IDENTIFIER) take64(&c);
	if (st & PERF_SAMPLE_IP) s->ip = take64(&c);
	if (st & PERF_SAMPLE_TID) {
		uint64_t v = take64(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME) s->time = take64(&c);
	if (st & PERF_SAMPLE_ADDR) take64(&c);
	if (st & PERF_SAMPLE_ID) take64(&c);
	if (st & PERF_SAMPLE_STREAM_ID) take64(&c);
	if (st & PERF_SAMPLE_CPU) s->cpu = (uint32_t)take64(&c);
	if (st & PERF_SAMPLE_PERIOD) s->period = take64(&c);
	if (st & PERF_SAMPLE_READ) skip_read(&c, a->read_format);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = take64(&c);
		if (nr > c.left / 8)
			return false;
		const uint8_t *ips = take(&c, 8 * nr);
		size_t want = nr < DP_MAX_CALLCHAIN ? (size_t)nr : DP_MAX_CALLCHAIN;
		if (want > p->chaincap) {
			p->chaincap = want < 64 ? 64 : DP_MAX_CALLCHAIN;
			p->chain = xrealloc(p->chain, p->chaincap * sizeof(uint64_t));
		}
		uint32_t n = 0;
		for (uint64_t k = 0; k < nr; k++) {
			uint64_t ip = get64(ips + 8 * k);
			if (ip >= PD_CTX_MAX)
				continue;  /* a context marker: kernel and user frames tell apart by address */
			if (n == DP_MAX_CALLCHAIN) {
				p->cut_chains++;
				break;
			}
			p->chain[n++] = ip;
		}
		s->nr_callchain = n;
		s->callchain = n ? p->chain : NULL;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t n = c.left >= 4 ? get32(c.p) : 0;
		if (c.left < 4 || n > c.left - 4)
			return false;
		take(&c, 4 + (uint64_t)n);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take64(&c);
		if (a->branch_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take64(&c);
		if (nr > c.left / 24)
			return false;
		take(&c, 24 * nr);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = take64(&c);
		uint32_t nregs = dp_uregs_count(a->regs_user);
		const uint8_t *regs = abi ? take(&c, 8 * (uint64_t)nregs) : NULL;
		if (regs) {
			for (uint32_t i = 0; i < nregs; i++)
				p->uregs[i] = get64(regs + 8 * i);
			s->uregs_abi = (uint32_t)abi;
			s->uregs_mask = a->regs_user;
			s->uregs = p->uregs;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take64(&c);
		const uint8_t *data = size <= c.left ? take(&c, size) : NULL;
		if (size > c.left && !data)
			return false;
		uint64_t dyn = size ? take64(&c) : 0;
		if (dyn > size)
			dyn = size;
		if (s->uregs && p->foreign_arch) {
			p->uregs_foreign++;  /* register numbers of another architecture */
		} else if (s->uregs && size <= DP_MAX_USTACK && !c.bad) {
			s->has_uregs = true;
			s->ustack_size = (uint32_t)size;
			s->ustack_len = (uint32_t)dyn;
			s->ustack = dyn ? data : NULL;
		}
	}
	if (!s->has_uregs) {
		s->uregs = NULL;
		s->uregs_mask = 0;
		s->uregs_abi = 0;
	}
	/* later fields (weight, data_src, regs_intr, ...) are not used */
	return !c.bad;
}

/* A string field from r+at to the trailer, into p->str. */
static const char *rec_str(struct pd_reader *p, const uint8_t *r, uint32_t len, size_t at,
			   size_t trailer)
{
	size_t n = len > at + trailer ? len - at - trailer : 0;
	n = strnlen((const char *)r + at, n);
	if (n >= sizeof(p->str))
		n = sizeof(p->str) - 1;
	memcpy(p->str, r + at, n);
	p->str[n] = 0;
	return p->str;
}

static void mmap_buildid(struct pd_reader *p, struct dp_mmap *m)
{
	/* the kernel's map is "[kernel.kallsyms]_text", its table entry
	 * "[kernel.kallsyms]" */
	const char *key = m->path && !strncmp(m->path, "[kernel.kallsyms]", 17) ? "[kernel.kallsyms]" : m->path;
	const uint8_t *v = key ? strmap_get(&p->buildids, key) : NULL;
	if (v && !m->buildid_len) {
		m->buildid_len = v[0];
		memcpy(m->buildid, v + 1, v[0]);
	}
}

/* Translate r into rec. 1: rec filled; 0: nothing to hand out; -1:
 * malformed (damage). Domain-scoped records of a guest get its domain. */
static int translate(struct pd_reader *p, const uint8_t *r, uint32_t len, struct dp_record *rec)
{
	uint32_t type = get32(r);
	uint16_t misc = get16(r + 4);
	uint8_t mode = dp_mode_of_perf_misc(misc);
	struct trailer tr = type == PERF_RECORD_SAMPLE ? (struct trailer){ 0 } : get_trailer(p, r, len);
	memset(&rec->u, 0, sizeof(rec->u));
	rec->domain = DP_HOST_DOMAIN;
	switch (type) {
	case PERF_RECORD_SAMPLE: {
		long a = p->cur_attr >= -1 ? p->cur_attr : sample_attr(p, r + 8, len - 8u);
		if (a < 0) {
			p->no_attr++;
			return 0;
		}
		if (!dec_sample(p, &p->attrs[a], r, len, &rec->u.sample))
			return -1;
		rec->type = DP_REC_SAMPLE;
		rec->u.sample.event = (uint16_t)a;
		return 1;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		bool two = type == PERF_RECORD_MMAP2;
		size_t at = two ? 72 : 40;
		if (len < at + 1 + tr.size)
			return -1;
		if (!two && (misc & PERF_RECORD_MISC_MMAP_DATA))
			return 0;
		if (two && !(get32(r + 64) & PROT_EXEC))
			return 0;
		struct dp_mmap *m = &rec->u.mmap;
		m->pid = get32(r + 8);
		m->start = get64(r + 16);
		m->len = get64(r + 24);
		m->pgoff = get64(r + 32);
		m->time = tr.time;
		if (two)
			m->buildid_len = dp_perf_mmap2_buildid(r, misc, m->buildid);
		m->path = rec_str(p, r, len, at, tr.size);
		if (mode == DP_MODE_KERNEL || mode == DP_MODE_GUEST_KERNEL)
			m->pid = UINT32_MAX;
		mmap_buildid(p, m);
		rec->type = DP_REC_MMAP;
		return 1;
	}
	case PERF_RECORD_COMM:
		if (len < 16 + 1 + tr.size)
			return -1;
		rec->type = DP_REC_TASK;
		rec->u.task.kind = DP_TASK_COMM;
		rec->u.task.pid = get32(r + 8);
		rec->u.task.tid = get32(r + 12);
		rec->u.task.time = tr.time;
		rec->u.task.comm = rec_str(p, r, len, 16, tr.size);
		return 1;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (len < 32)
			return -1;
		rec->type = DP_REC_TASK;
		rec->u.task.kind = type == PERF_RECORD_FORK ? DP_TASK_FORK : DP_TASK_EXIT;
		rec->u.task.pid = get32(r + 8);
		rec->u.task.ppid = get32(r + 12);
		rec->u.task.tid = get32(r + 16);
		rec->u.task.ptid = get32(r + 20);
		rec->u.task.time = get64(r + 24);
		rec->u.task.comm = "";
		return 1;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (len < (type == PERF_RECORD_LOST ? 24u : 16u))
			return -1;
		rec->type = DP_REC_LOST;
		rec->u.lost.count = get64(r + (type == PERF_RECORD_LOST ? 16 : 8));
		rec->u.lost.source = DP_LOST_RING;
		rec->u.lost.where = tr.has_cpu ? tr.cpu : 0;
		p->lost = sat_add64(p->lost, rec->u.lost.count);
		return 1;
	case PERF_RECORD_THROTTLE:
		rec->type = DP_REC_LOST;
		rec->u.lost.count = 1;
		rec->u.lost.source = DP_LOST_THROTTLE;
		rec->u.lost.where = tr.has_cpu ? tr.cpu : 0;
		return 1;
	case PERF_RECORD_KSYMBOL: {
		/* addr, u32 len, u16 type, u16 flags (1: unregister), name */
		if (len < 24 + 1 + tr.size)
			return -1;
		if (get16(r + 22) & 1)
			return 0;
		char name[300];
		snprintf(name, sizeof(name), "[%.290s]", rec_str(p, r, len, 24, tr.size));
		memcpy(p->str, name, strlen(name) + 1);
		rec->type = DP_REC_MMAP;
		rec->u.mmap.pid = UINT32_MAX;
		rec->u.mmap.start = get64(r + 8);
		rec->u.mmap.len = get32(r + 16);
		rec->u.mmap.time = tr.time;
		rec->u.mmap.path = p->str;
		return 1;
	}
	case PERF_RECORD_UNTHROTTLE: case PERF_RECORD_READ: case PERF_RECORD_AUX:
	case PERF_RECORD_ITRACE_START: case PERF_RECORD_SWITCH: case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_NAMESPACES: case PERF_RECORD_BPF_EVENT: case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE: case 21: /* AUX_OUTPUT_HW_ID */
		return 0;
	default:
		note_unknown(p, type);
		return 0;
	}
}

static void fill_event(struct pd_reader *p, size_t i, struct dp_record *rec)
{
	const struct pd_attr *a = &p->attrs[i];
	rec->type = DP_REC_EVENT;
	rec->domain = DP_HOST_DOMAIN;
	rec->u.event = (struct dp_event){ .id = (uint32_t)i, .type = a->type, .config = a->config,
					  .period = a->period, .freq = a->freq, .name = a->name };
}

static void fill_host(struct pd_reader *p, struct dp_record *rec)
{
	rec->type = DP_REC_DOMAIN;
	rec->domain = DP_HOST_DOMAIN;
	rec->u.domain = (struct dp_domain){ .id = DP_HOST_DOMAIN, .kind = DP_DOMAIN_HOST,
		.vcpus = p->hdr.ncpus, .name = "host", .address = "perf.data",
		.symsrc = p->from_here ? DP_SYMSRC_PERF_LOCAL : DP_SYMSRC_PERF_FOREIGN };
}

/* Before a guest's first record in a pass: its DOMAIN, then its SYMTAB. */
static bool guest_preamble(struct pd_reader *p, struct pd_guest *g, struct dp_record *rec)
{
	if (g->pass != p->pass) {
		g->pass = p->pass;
		g->syms_sent = false;
		rec->type = DP_REC_DOMAIN;
		rec->domain = DP_HOST_DOMAIN;
		rec->u.domain = (struct dp_domain){ .id = g->domain, .kind = DP_DOMAIN_PASSIVE,
			.name = g->name, .address = "perf kvm",
			.symsrc = g->symtab_kind == DP_SYMTAB_SYSMAP ? "System.map" :
				  g->symtab_kind ? "kallsyms" : "" };
		return true;
	}
	if (g->symtab_kind && !g->syms_sent) {
		g->syms_sent = true;
		rec->type = DP_REC_SYMTAB;
		rec->domain = g->domain;
		rec->u.symtab = (struct dp_symtab){ g->symtab_kind, "kallsyms", g->syms, g->syms_len };
		rec->symtab_compression = 0;
		rec->symtab_stored = g->syms;
		rec->symtab_stored_size = g->syms_len;
		return true;
	}
	return false;
}

static void fill_stats(struct pd_reader *p, struct dp_record *rec)
{
	rec->type = DP_REC_STATS;
	rec->domain = DP_HOST_DOMAIN;
	uint64_t t0 = p->first_sample ? p->first_sample : p->tmin;
	uint64_t t1 = p->last_sample ? p->last_sample : p->tmax;
	rec->u.stats = (struct dp_stats){ .samples = p->samples, .lost = p->lost,
		.start_time = t0, .end_time = t1, .wall_ns = t1 > t0 ? t1 - t0 : 0 };
}

static void make_note(struct pd_reader *p)
{
	int n = 0;
	size_t cap = sizeof(p->note);
	p->note[0] = 0;
	if (p->unknown_types) {
		n += snprintf(p->note + n, cap - (size_t)n, "%" PRIu64 " records of unknown types skipped (type",
			      p->unknown_types);
		for (int i = 0; i < 8 && p->unknown_by[i] && n < (int)cap; i++)
			n += snprintf(p->note + n, cap - (size_t)n, "%s %u x%" PRIu64, i ? "," : "",
				      p->unknown_id[i], p->unknown_by[i]);
		n += snprintf(p->note + n, cap - (size_t)n, ")");
	}
	if (p->features_unknown && n < (int)cap)
		n += snprintf(p->note + n, cap - (size_t)n, "%s%" PRIu64 " header features of a newer perf "
			      "not read", n ? "; " : "", p->features_unknown);
	if (p->skipped_aux && n < (int)cap)
		n += snprintf(p->note + n, cap - (size_t)n, "%s%" PRIu64 " tracing/AUX records not read",
			      n ? "; " : "", p->skipped_aux);
	if (p->no_attr && n < (int)cap)
		n += snprintf(p->note + n, cap - (size_t)n, "%s%" PRIu64 " samples of no known event skipped",
			      n ? "; " : "", p->no_attr);
	if (p->uregs_foreign && n < (int)cap)
		n += snprintf(p->note + n, cap - (size_t)n, "%s%" PRIu64 " user stacks of %s samples not "
			      "unwound (x86-64 only)", n ? "; " : "", p->uregs_foreign, p->hstr[5]);
	if (p->cut_chains && n < (int)cap)
		snprintf(p->note + n, cap - (size_t)n, "%s%" PRIu64 " call chains cut at %u frames",
			 n ? "; " : "", p->cut_chains, DP_MAX_CALLCHAIN);
}

const char *pd_note(const struct pd_reader *p)
{
	return p->stage >= 4 && p->note[0] ? p->note : NULL;
}

int pd_next(struct pd_reader *p, struct dp_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	for (;;) {
		switch (p->stage) {
		case 0:
		case 2: {
			const uint8_t *r;
			uint32_t len;
			if (p->held) {
				r = p->held;
				len = p->held_len;
				p->held = NULL;
			} else if (p->eof_early || !ord_next(p, &r, &len)) {
				if (p->stage == 2) {
					p->stage = 3;
					continue;
				}
				p->eof_early = true;  /* no records: the preamble still */
				r = NULL;
				len = 0;
			}
			if (p->stage == 0) {
				/* the attributes are known (a pipe's come first) */
				if (p->ev_next < p->nattrs) {
					fill_event(p, p->ev_next++, rec);
					p->held = r;
					p->held_len = len;
					return 1;
				}
				p->stage = 2;
				p->held = r;
				p->held_len = len;
				fill_host(p, rec);
				return 1;
			}
			if (!r)
				continue;
			rec->chunk_offset = p->cur_foff;
			uint8_t mode = dp_mode_of_perf_misc(get16(r + 4));
			struct pd_guest *g = NULL;
			if (is_guest(mode) && get32(r) != PERF_RECORD_LOST) {
				/* perf keys a guest machine by the pid: a sample's
				 * is decoded first (a malformed one is damage below) */
				if (get32(r) == PERF_RECORD_SAMPLE) {
					long a = sample_attr(p, r + 8, len - 8u);
					struct dp_sample s;
					if (a >= 0 && dec_sample(p, &p->attrs[a], r, len, &s))
						g = pd_guest_get(p, s.pid);
				} else if (len >= 12) {
					g = pd_guest_get(p, get32(r + 8));
				}
				if (g && guest_preamble(p, g, rec)) {
					p->held = r;
					p->held_len = len;
					rec->chunk_offset = p->cur_foff;
					return 1;
				}
			}
			int t = translate(p, r, len, rec);
			if (t < 0) {
				damage(p, p->cur_foff, len, "malformed perf.data record (type %u) at offset %"
				       PRIu64 " skipped", get32(r), p->cur_foff);
				continue;
			}
			if (!t)
				continue;
			if (g && rec->type != DP_REC_LOST)
				rec->domain = g->domain;
			if (rec->type == DP_REC_SAMPLE) {
				p->samples++;
				uint64_t tm = rec->u.sample.time;
				if (!p->tseen || tm < p->tmin)
					p->tmin = tm;
				if (tm > p->tmax)
					p->tmax = tm;
				p->tseen = true;
			}
			return 1;
		}
		case 3:
			p->stage = 4;
			make_note(p);
			fill_stats(p, rec);
			return 1;
		default:
			return 0;
		}
	}
}
