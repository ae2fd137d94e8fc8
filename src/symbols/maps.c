// SPDX-License-Identifier: MIT
/*
 * Processes and their executable mappings, fed in file order from TASK
 * and MMAP records: a comm per process, a mapping list sorted by start,
 * a new mapping replacing what it overlaps (partial overlaps trimmed into
 * new map objects, so a map returned earlier never changes). A fork
 * shares its parent's list until either maps again; all lists together
 * are bounded by MAX_MAP_ENTRIES, since a crafted file can fork large
 * processes many times. Also the per-process JIT perf maps
 * (/tmp/perf-PID.map, embedded or on this machine) for anonymous
 * executable memory.
 *
 * This is the one model of process memory maps: the agent's ship set
 * (agent/ship.c) uses it too, through sym_set_map_model (its own entry
 * bound, images keyed by the mapped file's identity) and the lookups
 * that never consult a perf map or a file (sym_find_proc_map,
 * sym_each_proc_map), since it runs as root on paths others control.
 */
#include "symbols/symbols.h"
#include "symbols/internal.h"
#include "util/hmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Entries of all processes' mapping lists together (8 bytes each), as
 * inserted or copied: a fork shares its parent's list, but a crafted file
 * can fork a process with thousands of mappings and map again in each
 * child, copying the list each time. A real system-wide recording holds
 * a few million (thousands of processes, hundreds of mappings each). */
#define MAX_MAP_ENTRIES (16u << 20)

/* ---- tasks ---- */

struct proc *sym_proc_get(struct sym_session *s, uint32_t domain, uint32_t pid, bool create)
{
	uint64_t key = (uint64_t)domain << 32 | pid;
	if (s->last_proc && s->last_proc_key == key)
		return s->last_proc;
	struct proc *p = u64map_get(&s->procs, key);
	if (!p && create) {
		p = xcalloc(1, sizeof(*p));
		u64map_put(&s->procs, key, p);
	}
	if (p) {
		s->last_proc = p;
		s->last_proc_key = key;
	}
	return p;
}

/* Charge n more mapping-list entries (see MAX_MAP_ENTRIES); false, with
 * one warning, when the budget is spent. */
static bool map_budget(struct sym_session *s, size_t n)
{
	uint64_t max = s->map_max ? s->map_max : MAX_MAP_ENTRIES;
	if (s->map_entries <= max && n <= max - s->map_entries) {
		s->map_entries += n;
		return true;
	}
	s->map_budget_spent = true;
	sym_warn(s, "mapping records dropped: the recording needs more than %" PRIu64 " M mapping entries "
	     "(forks of large processes that map again?); some user samples may be [unknown]",
	     max >> 20);
	return false;
}

void sym_set_map_model(struct sym_session *s, uint64_t max_entries, bool key_identity)
{
	s->map_max = max_entries;
	s->key_identity = key_identity;
}

bool sym_map_budget_spent(const struct sym_session *s)
{
	return s->map_budget_spent;
}

/* Let go of p's mapping list (shared or not); p has none after. */
void proc_drop_maps(struct proc *p)
{
	if (!p->shared || --*p->shared == 0) {
		free(p->maps);
		free(p->shared);
	}
	p->maps = NULL;
	p->n = p->cap = 0;
	p->shared = NULL;
	p->last = NULL;
	p->gen++;
}

/* Before changing p's list: a list shared with forks is copied first,
 * within the session's budget of list entries. False when over it. */
static bool proc_own_maps(struct sym_session *s, struct proc *p)
{
	if (!p->shared)
		return true;
	if (*p->shared == 1) {
		free(p->shared);
	} else {
		if (!map_budget(s, p->n))
			return false;
		struct sym_map **own = xmalloc((p->cap ? p->cap : 1) * sizeof(*own));
		if (p->n)
			memcpy(own, p->maps, p->n * sizeof(*own));
		--*p->shared;
		p->maps = own;
	}
	p->shared = NULL;
	return true;
}

/* p named comm: a name that stays the same keeps its pointer (a loader
 * tells names in force apart by pointer, sym_comm_now) */
static void proc_name(struct sym_session *s, struct proc *p, const char *comm)
{
	if (!p->comm || strcmp(p->comm, comm))
		p->comm = pool_strdup(&s->pool, comm);
}

void sym_add_task(struct sym_session *s, uint32_t domain, const struct dp_task *t)
{
	if (!t)
		return;
	sym_domain_get(s, domain);
	switch (t->kind) {
	case DP_TASK_COMM: {
		struct proc *p = sym_proc_get(s, domain, t->pid, true);
		/* the process is named by its main thread; others name it only
		 * until the main thread is seen */
		if (t->comm && (t->tid == t->pid || !p->comm))
			proc_name(s, p, t->comm);
		break;
	}
	case DP_TASK_FORK: {
		if (t->pid == t->ppid)
			break;       /* a new thread shares its process's maps */
		struct proc *parent = sym_proc_get(s, domain, t->ppid, false);
		struct proc *c = sym_proc_get(s, domain, t->pid, true);
		proc_drop_maps(c);   /* a reused pid starts over */
		c->perfmap_state = 0;
		c->perfmap = NULL;
		c->gen++;
		if (parent) {
			/* the child shares the parent's list until either maps
			 * something: a crafted file may fork a process with
			 * thousands of mappings a hundred thousand times */
			if (parent->n) {
				if (!parent->shared) {
					parent->shared = xmalloc(sizeof(*parent->shared));
					*parent->shared = 1;
				}
				++*parent->shared;
				c->maps = parent->maps;
				c->n = parent->n;
				c->cap = parent->cap;
				c->shared = parent->shared;
				c->gen++;
			}
			c->comm = parent->comm;
		}
		if (t->comm && *t->comm)
			proc_name(s, c, t->comm);
		break;
	}
	default:
		/* EXIT: keep the maps, late samples of the process still need them */
		break;
	}
}

const char *sym_comm_now(struct sym_session *s, uint32_t domain, uint32_t pid)
{
	struct proc *p = sym_proc_get(s, domain, pid, false);
	return p ? p->comm : NULL;
}

const char *sym_comm(struct sym_session *s, uint32_t domain, uint32_t pid)
{
	struct proc *p = sym_proc_get(s, domain, pid, false);
	return p && p->comm ? p->comm : SYM_UNKNOWN;
}

static bool is_anon_path(const char *p)
{
	return !*p || !strcmp(p, "//anon") || !strncmp(p, "[anon", 5) ||
	       !strncmp(p, "/memfd:", 7) || !strncmp(p, "/dev/zero", 9);
}

/* Put the new map m into p's list: replace what it overlaps; trim partial
 * overlaps into new map objects so maps handed out earlier never change.
 * False when the entry bound dropped it. */
static bool proc_insert(struct sym_session *s, struct proc *p, struct sym_map *m)
{
	if (!proc_own_maps(s, p))
		return false;
	size_t lo = 0, hi = p->n;
	while (lo < hi) {    /* first map with end > start */
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid]->end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t first = lo, last = lo;   /* [first, last) overlap */
	while (last < p->n && p->maps[last]->start < m->end)
		last++;
	struct sym_map *left = NULL, *right = NULL;
	if (first < last) {
		struct sym_map *a = p->maps[first], *b = p->maps[last - 1];
		if (a->start < m->start) {
			left = sym_map_new(s, a->img, a->start, m->start, a->pgoff);
			left->anon = a->anon;
		}
		if (b->end > m->end) {
			right = sym_map_new(s, b->img, m->end, b->end, b->pgoff + (m->end - b->start));
			right->anon = b->anon;
		}
	}
	size_t add = 1 + (left != NULL) + (right != NULL);
	size_t newn = p->n - (last - first) + add;
	if (newn > p->n && !map_budget(s, newn - p->n))
		return false;
	if (newn > p->cap)
		xgrow((void **)&p->maps, &p->cap, newn, sizeof(*p->maps));
	memmove(p->maps + first + add, p->maps + last, (p->n - last) * sizeof(*p->maps));
	size_t w = first;
	if (left)
		p->maps[w++] = left;
	p->maps[w++] = m;
	if (right)
		p->maps[w++] = right;
	p->n = newn;
	p->last = NULL;   /* it may have been replaced or trimmed */
	p->gen++;
	return true;
}

const struct sym_map *sym_add_mmap(struct sym_session *s, uint32_t domain, const struct dp_mmap *mm)
{
	if (!mm)
		return NULL;
	struct sym_domain *d = sym_domain_get(s, domain);
	const char *path = mm->path ? mm->path : "";
	uint64_t end = mm->start + mm->len < mm->start ? UINT64_MAX : mm->start + mm->len;
	if (mm->len == 0)
		return NULL;
	if (mm->pid == UINT32_MAX) {
		/* kernel mappings: modules give ranges the tables may lack */
		kernel_add_mmap(s, d, mm, end);
		return NULL;
	}
	struct proc *p = sym_proc_get(s, domain, mm->pid, true);
	struct sym_map *m;
	if (!strcmp(path, "[vdso]")) {
		struct sym_image *img = s->key_identity ? image_elf_ident(s, d, "[vdso]", mm, true)
			: image_elf(s, d, "[vdso]", mm->buildid, mm->buildid_len, true);
		m = sym_map_new(s, img, mm->start, end, mm->pgoff);
	} else if (is_anon_path(path)) {
		struct sym_map *a = sym_pseudo_map(s, d, "[anon]");
		m = sym_map_new(s, a->img, mm->start, end, mm->pgoff);
		m->anon = true;
	} else if (path[0] == '[' || path[0] != '/') {
		/* [heap], [stack], [vsyscall], odd names: named, never resolved */
		struct sym_map *a = sym_pseudo_map(s, d, path);
		m = sym_map_new(s, a->img, mm->start, end, mm->pgoff);
	} else {
		struct sym_image *img = s->key_identity ? image_elf_ident(s, d, path, mm, false)
			: image_elf(s, d, path, mm->buildid, mm->buildid_len, false);
		m = sym_map_new(s, img, mm->start, end, mm->pgoff);
	}
	size_t mark = s->nmaps - 1; /* m is the newest map made */
	if (proc_insert(s, p, m))
		return m;
	/* Dropped for the entry bound: m (and any trimmed piece made for it)
	 * is in no list, so it goes now; a mapping loop past the bound must
	 * not keep growing the session. */
	while (s->nmaps > mark)
		free(s->maps[--s->nmaps]);
	return NULL;
}

/*
 * The pid's JIT map image, when the pid has a perf map: an embedded one
 * read so far, or (host) a /tmp one sym_perfmap_read believes. Decided
 * at the pid's first sample in anonymous code, as the samples' keys are
 * (no map: they fold into one [anon] key per process); which table names
 * them is chosen later, when the image's symbols load (image.c): the
 * last embedded map of the pid by then, else the /tmp one if still
 * believable.
 */
struct sym_map *perfmap_map(struct sym_session *s, struct sym_domain *d,
				   struct proc *p, uint32_t pid)
{
	if (p->perfmap_state == 0) {
		p->perfmap_state = 1;
		bool have = perfmap_blob(d, pid) != NULL;
		if (!have && d->kind == DP_DOMAIN_HOST) {
			char why[200];
			int r = sym_perfmap_read(pid, SYM_NO_OWNER, NULL, NULL, why, sizeof(why));
			if (r == 0) {
				have = true;
			} else if (why[0]) {
				sym_warn(s, "%s; its JIT samples are [anon]", why);
			}
		}
		if (have) {
			char path[64];
			snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
			struct sym_image *img = sym_image_new(s, d, IMG_PERFMAP, sym_base_name(path), path);
			img->pid = pid;
			p->perfmap = sym_map_new(s, img, 0, UINT64_MAX, 0);
			p->perfmap_state = 2;
		}
	}
	return p->perfmap;
}


/* p's own mapping holding ip, or NULL. */
static inline struct sym_map *proc_lookup(const struct proc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {    /* first map with start > ip */
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid]->start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < p->maps[lo - 1]->end ? p->maps[lo - 1] : NULL;
}

struct sym_map *proc_find_map(struct sym_session *s, struct sym_domain *d,
			      struct proc *p, uint32_t pid, uint64_t ip)
{
	if (!p->n)
		return NULL;
	/* p->last is in maps[], whose entries do not overlap: when it holds
	 * ip it is what the search would find */
	struct sym_map *m = p->last;
	if (!m || ip < m->start || ip >= m->end) {
		m = proc_lookup(p, ip);
		p->last = m;
	}
	if (m) {
		if (m->anon) {
			struct sym_map *j = perfmap_map(s, d, p, pid);
			if (j)
				return j;
		}
		return m;
	}
	return NULL;
}

struct sym_map *sym_proc_map_at(const struct proc *p, uint64_t ip)
{
	return proc_lookup(p, ip);
}

const struct sym_map *sym_find_proc_map(struct sym_session *s, uint32_t domain, uint32_t pid,
					uint64_t ip)
{
	struct proc *p = sym_proc_get(s, domain, pid, false);
	return p ? proc_lookup(p, ip) : NULL;
}

void sym_each_proc_map(const struct sym_session *s, uint32_t domain, size_t max_visits,
		       bool (*fn)(void *ctx, uint32_t pid, const struct sym_map *m), void *ctx)
{
	size_t visits = 0;
	for (size_t i = 0; i < s->procs.cap; i++) {
		const struct proc *p = s->procs.v[i].val;
		if (!p || (uint32_t)(s->procs.v[i].key >> 32) != domain)
			continue;
		for (size_t k = 0; k < p->n; k++) {
			if (visits++ >= max_visits)
				return;
			if (!fn(ctx, (uint32_t)s->procs.v[i].key, p->maps[k]))
				return;
		}
	}
}

void sym_map_range(const struct sym_map *m, uint64_t *start, uint64_t *end)
{
	*start = m->start;
	*end = m->end;
}
