// SPDX-License-Identifier: MIT
/*
 * pprof export (`domprof export --format pprof`): a gzip-compressed
 * profile.proto (github.com/google/pprof/proto/profile.proto) as `go tool
 * pprof` and other pprof readers load it.
 *
 * The protobuf encoding is written by hand: the message is small and flat
 * (varints and length-delimited fields only), and a generator would be a
 * build dependency for a few dozen lines. Nested messages are encoded into
 * a scratch buffer first so their length can be written before them.
 *
 * Mapping of the aggregated profile:
 *   sample_type   [samples/count, cpu/nanoseconds]; period_type cpu/nanoseconds
 *   function      one per profile symbol: name = frame label, filename = image path
 *   mapping       one per (domain, image); has_functions set, so pprof never
 *                 tries to re-symbolize (addresses are not kept by the profile)
 *   location      one per symbol, address 0, one line -> its function
 *   sample        one per unique stack, locations leaf-first as pprof wants,
 *                 values [count, cpu ns], labels domain, comm (strings),
 *                 pid (number), tid (number) with --by-tid, and those of
 *                 --labels (strings). cpu ns is the sum of the samples' recorded
 *                 periods for time events (cpu-clock, task-clock: the period
 *                 is in ns, and with -F it is what the kernel reported for
 *                 each sample), else count * ns per sample
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/flamegraph.h"
#include "util/hmap.h"
#include "util/xalloc.h"

struct pb {
	uint8_t *b;
	size_t n, cap;
};

static void pb_bytes(struct pb *p, const void *d, size_t n)
{
	xgrow((void **)&p->b, &p->cap, p->n + n, 1);
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(p, t, n);
}

/* wire types: 0 varint, 2 length-delimited */
static void pb_key(struct pb *p, unsigned field, unsigned wt) { pb_varint(p, (uint64_t)field << 3 | wt); }

/* A varint field; zero is the default and is omitted, as proto3 does. */
static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(p, field, 0);
	pb_varint(p, v);
}

static void pb_len(struct pb *p, unsigned field, const void *d, size_t n)
{
	pb_key(p, field, 2);
	pb_varint(p, n);
	pb_bytes(p, d, n);
}

/* Append a finished sub-message and empty the scratch buffer. */
static void pb_msg(struct pb *p, unsigned field, struct pb *sub)
{
	pb_len(p, field, sub->b, sub->n);
	sub->n = 0;
}

/* ---- string table ---- */

struct strtab {
	char **s;
	size_t n, cap;
	struct hmap index;
};

/* The string's index in the table, added when new. The map's keys are
 * the table's own copies, which never move. */
static int64_t st_id(struct strtab *t, const char *s)
{
	if (!s)
		s = "";
	uintptr_t e = (uintptr_t)strmap_get(&t->index, s);
	if (e)
		return (int64_t)e - 1;
	xgrow((void **)&t->s, &t->cap, t->n + 1, sizeof(*t->s));
	t->s[t->n] = xstrdup(s);
	strmap_put(&t->index, t->s[t->n], (void *)(uintptr_t)(t->n + 1));
	return (int64_t)t->n++;
}

static void st_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	hmap_release(&t->index);
}

static void value_type(struct pb *out, unsigned field, struct pb *sub, struct strtab *st,
		       const char *type, const char *unit)
{
	pb_uint(sub, 1, (uint64_t)st_id(st, type));
	pb_uint(sub, 2, (uint64_t)st_id(st, unit));
	pb_msg(out, field, sub);
}

static int gzip_write(FILE *f, const uint8_t *data, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* 15 window bits + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uint8_t buf[65536];
	z.next_in = (Bytef *)data;
	int rc = 0, zr;
	size_t left = n;
	do {
		/* avail_in is 32-bit: feed large buffers in slices */
		if (!z.avail_in && left) {
			uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;
			z.avail_in = take;
			left -= take;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = -ENOMEM;
			break;
		}
		size_t have = sizeof(buf) - z.avail_out;
		if (have && fwrite(buf, 1, have, f) != have) {
			rc = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

/* ---- --labels ---- */

static bool label_key_ok(const char *k, size_t n)
{
	if (!n || n > PPROF_LABEL_KEY_MAX || (k[0] >= '0' && k[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(k[i] == '_' || (k[i] >= '0' && k[i] <= '9') || (k[i] >= 'a' && k[i] <= 'z') ||
		      (k[i] >= 'A' && k[i] <= 'Z')))
			return false;
	return true;
}

static bool label_val_ok(const char *v, size_t n)
{
	if (!n || n > PPROF_LABEL_VAL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	return true;
}

int pprof_labels_parse(struct pprof_labels *l, const char *arg, char *err, size_t errlen)
{
	const char *p = arg;
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : n, vn = eq ? n - kn - 1 : 0;
		if (!eq || !label_key_ok(p, kn) || !label_val_ok(eq + 1, vn)) {
			snprintf(err, errlen, "bad label '%.*s' in --labels '%.64s': KEY=VALUE, KEY of letters, "
				 "digits and '_' (not first a digit, at most %u), VALUE of 1 to %u printable "
				 "bytes without ','", (int)(n > 200 ? 200 : n), p, arg,
				 PPROF_LABEL_KEY_MAX, PPROF_LABEL_VAL_MAX);
			return -EINVAL;
		}
		static const char *const own[] = { "domain", "comm", "pid", "tid" };
		for (size_t i = 0; i < 4; i++)
			if (kn == strlen(own[i]) && !memcmp(p, own[i], kn)) {
				snprintf(err, errlen, "--labels: '%s' is a label every sample carries already "
					 "(domain, comm, pid, tid)", own[i]);
				return -EINVAL;
			}
		for (size_t i = 0; i < l->n; i++)
			if (strlen(l->v[i].key) == kn && !memcmp(l->v[i].key, p, kn)) {
				snprintf(err, errlen, "--labels: label '%s' given twice", l->v[i].key);
				return -EINVAL;
			}
		if (l->n >= PPROF_LABELS_MAX) {
			snprintf(err, errlen, "--labels: at most %u labels", PPROF_LABELS_MAX);
			return -EINVAL;
		}
		l->v[l->n].key = xstrndup(p, kn);
		l->v[l->n].val = xstrndup(eq + 1, vn);
		l->n++;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

void pprof_labels_free(struct pprof_labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	l->n = 0;
}

/* perf's software clock events, whose periods are nanoseconds. */
#define SW_TYPE 1u
#define SW_CPU_CLOCK 0u
#define SW_TASK_CLOCK 1u

/* CPU nanoseconds a stack stands for (see the top of the file). */
static uint64_t stack_ns(const struct profile *p, const struct profile_stack *s, uint64_t ns)
{
	for (size_t i = 0; i < p->nevents; i++) {
		const struct profile_event *e = &p->events[i];
		if (e->id != s->event)
			continue;
		if (e->type == SW_TYPE && (e->config == SW_CPU_CLOCK || e->config == SW_TASK_CLOCK) &&
		    s->period)
			return s->period;
		break;
	}
	return s->count * ns;
}

int export_pprof(FILE *f, const struct profile *p, const struct pprof_labels *labels,
		 enum fg_root root)
{
	struct pb out = { 0 }, sub = { 0 }, line = { 0 };
	struct strtab st = { 0 };
	st_id(&st, ""); /* string_table[0] must be "" */
	uint64_t ns = fg_sample_ns(p);
	char buf[512];

	value_type(&out, 1, &sub, &st, "samples", "count");
	value_type(&out, 1, &sub, &st, "cpu", "nanoseconds");

	/* samples: locations leaf-first; location id = symbol index + 1 */
	int64_t k_domain = st_id(&st, "domain"), k_pid = st_id(&st, "pid"), k_comm = st_id(&st, "comm");
	size_t nl = labels ? labels->n : 0;
	int64_t lk[PPROF_LABELS_MAX], lv[PPROF_LABELS_MAX];
	for (size_t i = 0; i < nl; i++) {
		lk[i] = st_id(&st, labels->v[i].key);
		lv[i] = st_id(&st, labels->v[i].val);
	}
	int64_t k_tid = root == FG_ROOT_TID ? st_id(&st, "tid") : -1;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		struct pb locs = { 0 };
		for (uint32_t j = s->nframes; j-- > 0;)
			pb_varint(&locs, (uint64_t)s->frames[j] + 1);
		pb_len(&sub, 1, locs.b, locs.n);
		free(locs.b);
		struct pb vals = { 0 };
		pb_varint(&vals, s->count);
		pb_varint(&vals, stack_ns(p, s, ns));
		pb_len(&sub, 2, vals.b, vals.n);
		free(vals.b);
		/* labels */
		pb_uint(&line, 1, (uint64_t)k_domain);
		pb_uint(&line, 2, (uint64_t)st_id(&st, s->domain_name));
		pb_msg(&sub, 3, &line);
		pb_uint(&line, 1, (uint64_t)k_comm);
		pb_uint(&line, 2, (uint64_t)st_id(&st, s->comm ? s->comm : "[unknown]"));
		pb_msg(&sub, 3, &line);
		pb_uint(&line, 1, (uint64_t)k_pid);
		pb_key(&line, 3, 0);
		pb_varint(&line, s->pid);
		pb_msg(&sub, 3, &line);
		if (k_tid >= 0) {
			pb_uint(&line, 1, (uint64_t)k_tid);
			pb_key(&line, 3, 0);
			pb_varint(&line, s->tid);
			pb_msg(&sub, 3, &line);
		}
		for (size_t j = 0; j < nl; j++) {
			pb_uint(&line, 1, (uint64_t)lk[j]);
			pb_uint(&line, 2, (uint64_t)lv[j]);
			pb_msg(&sub, 3, &line);
		}
		pb_msg(&out, 2, &sub);
	}

	/* mappings: one per (domain, image), numbered in order of first use */
	uint32_t *map_of = xcalloc(p->nsyms ? p->nsyms : 1, sizeof(*map_of));
	struct strtab maps = { 0 };
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct profile_symbol *y = &p->syms[i];
		snprintf(buf, sizeof(buf), "%" PRIu32 "\x01%s", y->domain, y->image ? y->image : "");
		size_t before = maps.n;
		map_of[i] = (uint32_t)st_id(&maps, buf) + 1;
		if (maps.n == before)
			continue;
		pb_uint(&sub, 1, map_of[i]);
		const char *file = y->image_path && *y->image_path ? y->image_path : y->image;
		if (y->domain != DP_HOST_DOMAIN) {
			snprintf(buf, sizeof(buf), "%s:%s", y->domain_name, file);
			file = buf;
		}
		pb_uint(&sub, 5, (uint64_t)st_id(&st, file));
		pb_uint(&sub, 7, 1); /* has_functions */
		pb_msg(&out, 3, &sub);
	}
	st_free(&maps);

	/* locations and functions, one each per symbol */
	for (size_t i = 0; i < p->nsyms; i++) {
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, map_of[i]);
		pb_uint(&line, 1, i + 1);
		pb_msg(&sub, 4, &line);
		pb_msg(&out, 4, &sub);
	}
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct profile_symbol *y = &p->syms[i];
		int64_t name = st_id(&st, fg_symbol_label(p, (uint32_t)i, buf, sizeof(buf)));
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, (uint64_t)name);
		pb_uint(&sub, 3, (uint64_t)name);
		pb_uint(&sub, 4, (uint64_t)st_id(&st, y->image_path && *y->image_path ? y->image_path : y->image));
		pb_msg(&out, 5, &sub);
	}
	free(map_of);

	int64_t period_t = st_id(&st, "cpu"), period_u = st_id(&st, "nanoseconds");
	char comment[600];
	snprintf(comment, sizeof(comment), "domprof %s; event %s; host %s", DOMPROF_VERSION,
		 p->nevents ? p->events[0].name : "?", p->header.hostname ? p->header.hostname : "?");
	int64_t cmt = st_id(&st, comment);

	for (size_t i = 0; i < st.n; i++)
		pb_len(&out, 6, st.s[i], strlen(st.s[i]));
	pb_uint(&out, 9, p->header.created_ns);
	if (p->has_stats)
		pb_uint(&out, 10, p->stats.wall_ns);
	pb_uint(&sub, 1, (uint64_t)period_t);
	pb_uint(&sub, 2, (uint64_t)period_u);
	pb_msg(&out, 11, &sub);
	pb_uint(&out, 12, ns);
	pb_uint(&out, 13, (uint64_t)cmt);

	int rc = gzip_write(f, out.b ? out.b : (const uint8_t *)"", out.n);
	free(out.b);
	free(sub.b);
	free(line.b);
	st_free(&st);
	if (!rc && (fflush(f) || ferror(f)))
		rc = -EIO;
	return rc;
}
