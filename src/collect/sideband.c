// SPDX-License-Identifier: MIT
/*
 * Host side band (see sideband.h): /proc snapshot, build-id cache,
 * kernel symbol tables. /proc files are read with plain stdio because
 * their sizes are unknown until read (st_size is 0).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/sideband.h"
#include "symbols/buildid.h"
#include "format/ksymidx.h"
#include "format/ksymnf.h"
#include "symbols/kallsyms.h"
#include "symbols/kcache.h"
#include "symbols/symbols.h"
#include "util/file.h"
#include "util/hmap.h"
#include "util/xalloc.h"

struct bid_ent {
	char *path;
	uint8_t len;
	uint8_t id[20];
};

struct jit_pid {
	uint32_t pid, uid;      /* uid SYM_NO_OWNER: not known */
	bool written;           /* its map is in the current file (poll) */
};

struct sideband {
	struct hmap bids;       /* path -> struct bid_ent (the key is its path) */
	unsigned reads;
	struct hmap jitidx;     /* pid -> index + 1 in jit[] */
	struct jit_pid *jit;
	size_t njit, cjit;
	uint64_t jit_dropped;
	size_t jit_next;        /* where the next poll starts */
	uint64_t perfmap_bytes; /* written to the current file */
};

struct sideband *sideband_new(void)
{
	return xcalloc(1, sizeof(struct sideband));
}

void sideband_free(struct sideband *sb)
{
	if (!sb)
		return;
	for (size_t i = 0; i < sb->bids.cap; i++) {
		struct bid_ent *e = sb->bids.v[i].val;
		if (e) {
			free(e->path);
			free(e);
		}
	}
	hmap_release(&sb->bids);
	hmap_release(&sb->jitidx);
	free(sb->jit);
	free(sb);
}

/* The paths symbols/maps.c takes for anonymous memory (JIT code). */
static bool anon_path(const char *p)
{
	return !p || !*p || !strcmp(p, "//anon") || !strncmp(p, "[anon", 5) ||
	       !strncmp(p, "/memfd:", 7) || !strncmp(p, "/dev/zero", 9);
}

static int put_perfmap(struct sideband *sb, struct dp_writer *w, struct jit_pid *j,
		       char *why, size_t whylen);

int sideband_note_mmap(struct sideband *sb, struct dp_writer *w, const struct dp_mmap *m)
{
	if (m->pid == UINT32_MAX || m->pid == 0 || !anon_path(m->path) ||
	    u64map_get(&sb->jitidx, m->pid))
		return 0;
	if (sb->njit >= SIDEBAND_JIT_MAX) {
		sb->jit_dropped++;
		return 0;
	}
	/* the owner of /proc/PID is the process's (effective) user, now:
	 * the one whose JIT writes its perf map */
	char path[32];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%" PRIu32, m->pid);
	uint32_t uid = stat(path, &st) == 0 ? (uint32_t)st.st_uid : SYM_NO_OWNER;
	if (sb->njit == sb->cjit)
		xgrow((void **)&sb->jit, &sb->cjit, sb->njit + 1, sizeof(*sb->jit));
	sb->jit[sb->njit++] = (struct jit_pid){ m->pid, uid, false };
	u64map_put(&sb->jitidx, m->pid, (void *)(uintptr_t)sb->njit);
	char why[200];
	int r = put_perfmap(sb, w, &sb->jit[sb->njit - 1], why, sizeof(why));
	return r < 0 ? r : 0;
}

/* Read pid j's map (checked) and write it to w. 1 written, 0 none or
 * refused (*why says why, "" for none), or the writer's negative errno. */
static int put_perfmap(struct sideband *sb, struct dp_writer *w, struct jit_pid *j,
		       char *why, size_t whylen)
{
	char *text;
	size_t len;
	int r = sym_perfmap_read(j->pid, j->uid, &text, &len, why, whylen);
	if (r < 0)
		return 0;
	if (sb->perfmap_bytes + len > SIDEBAND_PERFMAP_BYTES) {
		free(text);
		snprintf(why, whylen, "/tmp/perf-%" PRIu32 ".map: over the %llu MiB of perf maps "
			 "a recording embeds, not embedded", j->pid, SIDEBAND_PERFMAP_BYTES >> 20);
		return 0;
	}
	char name[48];
	snprintf(name, sizeof(name), "/tmp/perf-%" PRIu32 ".map", j->pid);
	struct dp_symtab st = { DP_SYMTAB_PERFMAP, name, (const uint8_t *)text, len };
	int werr = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
	free(text);
	if (werr == -EFBIG) {   /* over a record's size: the report reads /tmp for it */
		snprintf(why, whylen, "/tmp/perf-%" PRIu32 ".map: over a record's size, not embedded",
			 j->pid);
		return 0;
	}
	if (werr < 0)
		return werr;
	sb->perfmap_bytes += len;
	j->written = true;
	return 1;
}

/* Each poll tries at most this many pids: a recording of a machine with
 * thousands of JIT processes spreads the opens over the polls. */
#define PERFMAP_POLL_MAX 1024u

int sideband_poll_perfmaps(struct sideband *sb, struct dp_writer *w)
{
	for (size_t k = 0; k < sb->njit && k < PERFMAP_POLL_MAX; k++) {
		if (sb->jit_next >= sb->njit)
			sb->jit_next = 0;
		struct jit_pid *j = &sb->jit[sb->jit_next++];
		if (j->written)
			continue;
		char why[200];
		int r = put_perfmap(sb, w, j, why, sizeof(why));
		if (r < 0)
			return r;
	}
	return 0;
}

void sideband_perfmaps_new_file(struct sideband *sb)
{
	for (size_t i = 0; i < sb->njit; i++)
		sb->jit[i].written = false;
	sb->perfmap_bytes = 0;
}

int sideband_write_perfmaps(struct sideband *sb, struct dp_writer *w, unsigned *embedded,
			    unsigned *refused, char *why, size_t whylen)
{
	*embedded = *refused = 0;
	if (whylen)
		why[0] = 0;
	for (size_t i = 0; i < sb->njit; i++) {
		char reason[200];
		int r = put_perfmap(sb, w, &sb->jit[i], reason, sizeof(reason));
		if (r < 0)
			return r;
		if (r > 0) {
			(*embedded)++;
		} else if (reason[0]) {
			if (!*refused && whylen)
				snprintf(why, whylen, "%s", reason);
			(*refused)++;
		}
	}
	return 0;
}

unsigned sideband_buildid_reads(const struct sideband *sb)
{
	return sb->reads;
}

void sideband_fill_buildid(struct sideband *sb, struct dp_mmap *m)
{
	const char *p = m->path;
	if (m->buildid_len || !p || p[0] != '/')
		return;
	size_t n = strlen(p);
	if (n > 10 && !strcmp(p + n - 10, " (deleted)"))
		return;
	struct bid_ent *e = strmap_get(&sb->bids, p);
	if (!e) {
		/* Failures are cached too: a file without a note (or gone)
		 * is not opened again for every mapping of it. */
		e = xcalloc(1, sizeof(*e));
		e->path = xstrdup(p);
		if (sym_read_build_id(p, e->id, &e->len) < 0)
			e->len = 0;
		sb->reads++;
		strmap_put(&sb->bids, e->path, e);
	}
	m->buildid_len = e->len;
	memcpy(m->buildid, e->id, e->len);
}

void sideband_fill_ident(struct dp_mmap *m)
{
	if (m->pid == (uint32_t)-1 || !m->path || m->path[0] != '/' || m->path[1] == '/')
		return;
	char mf[96];
	struct stat st;
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, m->pid, m->start,
		 m->start + m->len);
	if (stat(mf, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	m->has_ident = true;
	m->dev = (uint64_t)st.st_dev;
	m->ino = (uint64_t)st.st_ino;
	m->size = (uint64_t)st.st_size;
	m->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
}

/* A whole /proc text file (size 0 in stat, read to EOF), bounded far
 * above a real kallsyms (~10 MB). Returns malloc'd bytes or NULL. */
#define PROC_TEXT_MAX (256u << 20)
static char *slurp(const char *path, size_t *len)
{
	char *buf;
	return file_read_all(path, PROC_TEXT_MAX, &buf, len) == 0 ? buf : NULL;
}

/* The next entry of a /proc directory named by a number (a pid or a
 * tid), or NULL at its end. */
static const char *next_id(DIR *d)
{
	struct dirent *de;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			return de->d_name;
	return NULL;
}

static int snap_threads(struct dp_writer *w, pid_t pid, uint64_t time)
{
	char path[320], comm[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	const char *tid;
	int ret = 0;
	while (!ret && (tid = next_id(d))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, tid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		struct dp_task t = {
			.kind = DP_TASK_COMM, .pid = (uint32_t)pid,
			.tid = (uint32_t)strtoul(tid, NULL, 10),
			.time = time, .comm = comm,
		};
		ret = dp_write_task(w, DP_HOST_DOMAIN, &t);
	}
	closedir(d);
	return ret;
}

static int snap_maps(struct sideband *sb, struct dp_writer *w, pid_t pid, uint64_t time)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	while (!ret && getline(&line, &cap, f) > 0) {
		uint64_t start, end, off;
		char perms[8];
		int name_at = 0;
		/* start-end perms offset dev inode   name */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
			   &start, &end, perms, &off, &name_at) < 4 || !name_at)
			continue;
		if (perms[2] != 'x')
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		if (!name[0])
			name = "//anon";
		struct dp_mmap m = {
			.pid = (uint32_t)pid, .start = start, .len = end - start,
			.pgoff = off, .time = time, .path = name,
		};
		sideband_fill_buildid(sb, &m);
		sideband_fill_ident(&m);
		ret = dp_write_mmap(w, DP_HOST_DOMAIN, &m);
		if (!ret)
			ret = sideband_note_mmap(sb, w, &m);
	}
	free(line);
	fclose(f);
	return ret;
}

static int snap_one(struct sideband *sb, struct dp_writer *w, pid_t pid, uint64_t time)
{
	int ret = snap_threads(w, pid, time);
	if (!ret)
		ret = snap_maps(sb, w, pid, time);
	return ret;
}

int sideband_snapshot(struct sideband *sb, struct dp_writer *w, pid_t pid,
		      uint64_t time, unsigned *nproc)
{
	if (pid > 0) {
		if (nproc)
			(*nproc)++;
		return snap_one(sb, w, pid, time);
	}
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	const char *id;
	int ret = 0;
	while (!ret && (id = next_id(d))) {
		ret = snap_one(sb, w, (pid_t)atoi(id), time);
		if (nproc)
			(*nproc)++;
	}
	closedir(d);
	return ret;
}

/* The parent pid in /proc/PID/stat (after the last ')'), 0 if unknown. */
static pid_t stat_ppid(const char *id)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%s/stat", id);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	int ppid = 0;
	char st;
	if (!rp || sscanf(rp + 1, " %c %d", &st, &ppid) != 2)
		return 0;
	return (pid_t)ppid;
}

struct pp { pid_t pid, ppid; };

static int pp_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct pp *)a)->pid, y = ((const struct pp *)b)->pid;
	return (x > y) - (x < y);
}

/* True when root is an ancestor of (or is) pid; at most n steps up, so a
 * cycle (pids reused while /proc was read) ends. */
static bool in_tree(const struct pp *v, size_t n, pid_t pid, pid_t root)
{
	for (size_t step = 0; step <= n && pid > 0; step++) {
		if (pid == root)
			return true;
		struct pp key = { pid, 0 };
		const struct pp *e = bsearch(&key, v, n, sizeof(*v), pp_cmp);
		if (!e)
			return false;
		pid = e->ppid;
	}
	return false;
}

int sideband_snapshot_tree(struct sideband *sb, struct dp_writer *w, pid_t root,
			   uint64_t time, unsigned *nproc)
{
	DIR *d = opendir("/proc");
	if (!d)
		return sideband_snapshot(sb, w, root, time, nproc);
	struct pp *v = NULL;
	size_t n = 0, cap = 0;
	const char *id;
	while (n < SIDEBAND_TREE_MAX && (id = next_id(d))) {
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		v[n].pid = (pid_t)atoi(id);
		v[n].ppid = stat_ppid(id);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), pp_cmp);
	int ret = 0;
	for (size_t i = 0; !ret && i < n; i++)
		if (in_tree(v, n, v[i].pid, root))
			ret = sideband_snapshot(sb, w, v[i].pid, time, nproc);
	free(v);
	return ret;
}

/* Kernel text range from kallsyms: _stext (or _text) to _etext, each
 * from its first core-kernel line (0 when absent). */
static void kernel_range(const char *ks, size_t len, uint64_t *start, uint64_t *end)
{
	const char *p = ks, *e = ks + len;
	uint64_t stext = 0, text = 0;
	struct kallsyms_line l;
	int r;
	*end = 0;
	while ((r = kallsyms_next(&p, e, 0, &l)) != KALLSYMS_END) {
		if (r != KALLSYMS_LINE || l.mod)
			continue;
		if (!stext && kallsyms_name_is(&l, "_stext"))
			stext = l.addr;
		else if (!text && kallsyms_name_is(&l, "_text"))
			text = l.addr;
		else if (!*end && kallsyms_name_is(&l, "_etext"))
			*end = l.addr;
	}
	*start = stext ? stext : text;
}

/*
 * kallsyms with each address as the difference from the previous line's
 * (DP_SYMTAB_KALLSYMS_DELTA). The table is mostly sorted, so the deltas
 * are short and repeat: stored ~40% smaller than the plain text, which
 * matters since the table is most of a short recording's size. Lines
 * without an address are dropped (/proc/kallsyms has none). Returns a
 * malloc'd text of *outlen bytes.
 */
static char *kallsyms_delta(const char *ks, size_t len, size_t *outlen)
{
	/* a line's delta is at most one char ('-') longer than its address,
	 * plus a '\n' the last line may lack */
	char *out = xmalloc(2 * len + 64), *o = out;
	const char *p = ks, *end = ks + len;
	uint64_t prev = 0;
	struct kallsyms_line l;
	while (kallsyms_next(&p, end, 0, &l) != KALLSYMS_END) {
		if (!l.addr_end)
			continue;    /* no address: nothing to encode */
		uint64_t a = l.addr;
		if (a >= prev)
			o += sprintf(o, "%" PRIx64, a - prev);
		else
			o += sprintf(o, "-%" PRIx64, prev - a);
		const char *le = l.line + l.linelen;
		memcpy(o, l.addr_end, (size_t)(le - l.addr_end));
		o += le - l.addr_end;
		*o++ = '\n';
		prev = a;
	}
	*outlen = (size_t)(o - out);
	return out;
}

/* Level of the index's blocks: level 6, as the kind-6 text. With
 * 256-entry blocks the index stores smaller than that text for about
 * the same CPU (docs/file-format.md). */
#define KSYMIDX_LEVEL 6

/* See sideband.h: the symbols module's builder (kcache.h), which the
 * kernel symbol cache shares. */
uint8_t *sideband_kallsyms_index(const char *ks, size_t len, size_t *outlen)
{
	return ksyms_index_build(ks, len, KSYMIDX_LEVEL, outlen, NULL);
}

/* The index's name filter (kind 9) after it: what `annotate NAME` reads
 * to decode only the blocks that may hold NAME. Building it decodes every
 * block once, one at a time (~5 ms of CPU for a 122k-symbol kallsyms, no
 * more page faults than before: 3,230 -> 3,247 for `record -- true`);
 * an index that does not
 * decode (it cannot: it was just built) simply gets no filter. */
static int write_name_filter(struct dp_writer *w, const uint8_t *ix, size_t ixlen)
{
	struct dp_ksymidx *x;
	uint8_t *nf;
	size_t nflen;
	int ret = 0;
	if (dp_ksymidx_open(ix, ixlen, &x, NULL, 0) < 0)
		return 0;
	if (!dp_ksymnf_build(x, &nf, &nflen, NULL, 0)) {
		struct dp_symtab st = { DP_SYMTAB_KSYMNF, "kallsyms", nf, nflen };
		ret = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
		free(nf);
	}
	dp_ksymidx_free(x);
	return ret;
}

int sideband_write_kernel(struct sideband *sb, struct dp_writer *w, uint64_t time,
			  size_t *bytes)
{
	size_t len = 0;
	int ret = 0;
	*bytes = 0;
	char *ks = slurp("/proc/kallsyms", &len);
	uint64_t s = 0, e = 0;
	if (ks)
		kernel_range(ks, len, &s, &e);
	/* Without the right to see kernel addresses (kptr_restrict, no
	 * CAP_SYSLOG) every address reads 0: such a table names nothing. */
	if (ks && s) {
		/* The index (kind 8) is what reports read without parsing the
		 * whole table; DOMPROF_RECORD_KSYMS=text writes the kind-6 text
		 * instead and =both the two (for tests comparing them). */
		const char *how = getenv("DOMPROF_RECORD_KSYMS");
		bool text = how && (!strcmp(how, "text") || !strcmp(how, "both"));
		bool index = !how || strcmp(how, "text");
		uint8_t *ix = NULL;
		size_t ixlen = 0;
		if (index && !(ix = sideband_kallsyms_index(ks, len, &ixlen)))
			text = true;    /* cannot happen with a real kallsyms: keep the text */
		if (ix) {
			struct dp_symtab st = { DP_SYMTAB_KSYMIDX, "kallsyms", ix, ixlen };
			ret = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
			if (!ret)
				ret = write_name_filter(w, ix, ixlen);
			free(ix);
		}
		if (!ret && text) {
			size_t dlen;
			char *delta = kallsyms_delta(ks, len, &dlen);
			struct dp_symtab st = { DP_SYMTAB_KALLSYMS_DELTA, "kallsyms", (const uint8_t *)delta, dlen };
			ret = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
			free(delta);
		}
		*bytes += len;
		if (!ret && e > s) {
			struct dp_mmap m = { .pid = (uint32_t)-1, .start = s, .len = e - s,
					     .time = time, .path = "[kernel.kallsyms]" };
			ret = dp_write_mmap(w, DP_HOST_DOMAIN, &m);
		}
	}
	free(ks);
	char *mods = ret ? NULL : slurp("/proc/modules", &len);
	if (mods) {
		struct dp_symtab st = { DP_SYMTAB_MODULES, "modules", (const uint8_t *)mods, len };
		ret = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
		*bytes += len;
		/* name size refs deps state address */
		for (char *l = mods; !ret && *l;) {
			char name[64], path[80];
			uint64_t size, addr;
			if (sscanf(l, "%63s %" SCNu64 " %*s %*s %*s %" SCNx64, name, &size, &addr) == 3 &&
			    addr) {
				snprintf(path, sizeof(path), "[%s]", name);
				struct dp_mmap m = { .pid = (uint32_t)-1, .start = addr, .len = size,
						     .time = time, .path = path };
				ret = dp_write_mmap(w, DP_HOST_DOMAIN, &m);
			}
			char *nl = strchr(l, '\n');
			if (!nl)
				break;
			l = nl + 1;
		}
		free(mods);
	}
	(void)sb;
	return ret;
}
