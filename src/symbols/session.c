// SPDX-License-Identifier: MIT
/*
 * The symbol session: its domains, its warnings and the lookups of
 * symbols.h. Naming rules (see docs/symbols.md):
 *
 *  - host and active domains: user ips through the pid's mappings, kernel
 *    ips to "[kernel.kallsyms]" or a module "[mod]";
 *  - passive domains: kernel ips to "[guest.kernel]"/"[mod]", user ips to
 *    one pseudo image per address space "[guest user cr3=0x...]";
 *  - whatever no table names is "[unknown]" under the right image.
 *
 * The containers are in internal.h, with the rule that maps never change
 * once returned. What feeds them lives with its concept: embedded tables
 * in blobs.c, tasks and mappings in maps.c, ELF images in image.c, the
 * kernel in kernel.c.
 */
#include "symbols/symbols.h"
#include "symbols/debuginfod.h"
#include "symbols/internal.h"
#include "util/addrspace.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Distinct warnings kept; a file with 20,000 domains lacking kernel
 * tables would otherwise print 20,000 lines. Further ones are counted. */
#define MAX_WARNINGS 100

/* ---- session ---- */

struct sym_session *sym_session_new(void)
{
	struct sym_session *s = xcalloc(1, sizeof(struct sym_session));
	s->debug_dir = "/usr/lib/debug";
	blob_limits(s);
	return s;
}

void sym_set_debug_dir(struct sym_session *s, const char *dir)
{
	if (dir && *dir) {
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			n--;
		s->debug_dir = pool_strndup(&s->pool, dir, n);
	}
}

void sym_set_kernel_debug(struct sym_session *s, const char *domain, const char *path)
{
	xgrow((void **)&s->kdebug, &s->ckdebug, s->nkdebug + 1, sizeof(*s->kdebug));
	s->kdebug[s->nkdebug++] = (struct sym_kdebug){ pool_strdup(&s->pool, domain),
						       pool_strdup(&s->pool, path) };
}

static void warn_keep(struct sym_session *s, const char *buf);

void sym_warn(struct sym_session *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->holding) {
		/* kept aside as written: the same text may still come before
		 * it in the order sym_warn_flush restores */
		xgrow((void **)&s->held, &s->cheld, s->nheld + 1, sizeof(*s->held));
		s->held[s->nheld] = (struct held_warn){ s->hold_tag, s->nheld, xstrdup(buf) };
		s->nheld++;
		return;
	}
	warn_keep(s, buf);
}

void sym_warn_hold(struct sym_session *s, uint64_t tag)
{
	s->holding = true;
	s->hold_tag = tag;
}

void sym_warn_unhold(struct sym_session *s)
{
	s->holding = false;
}

static int held_cmp(const void *a, const void *b)
{
	const struct held_warn *x = a, *y = b;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sym_warn_flush(struct sym_session *s)
{
	s->holding = false;
	if (s->nheld > 1)
		qsort(s->held, s->nheld, sizeof(*s->held), held_cmp);
	for (size_t i = 0; i < s->nheld; i++) {
		warn_keep(s, s->held[i].text);
		free(s->held[i].text);
	}
	free(s->held);
	s->held = NULL;
	s->nheld = s->cheld = 0;
}

static void warn_keep(struct sym_session *s, const char *buf)
{
	/* a file with many domains gives many warnings: each kept once,
	 * found by hash, not by comparing with every earlier one */
	if (strmap_get(&s->warnidx, buf))
		return;
	if (s->nwarn >= MAX_WARNINGS) {
		/* past the cap, one line counts the rest (each still once) */
		const char *seen = pool_strdup(&s->pool, buf);
		strmap_put(&s->warnidx, seen, (void *)seen);
		s->warn_more++;
		snprintf(s->more_line, sizeof(s->more_line),
			 "%" PRIu64 " more symbol warnings not shown", s->warn_more);
		if (!s->more_warn) {
			if (s->nwarn == s->cwarn)
				xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
			s->warn[s->nwarn++] = s->more_line;
			s->more_warn = true;
		}
		return;
	}
	if (s->nwarn == s->cwarn)
		xgrow((void **)&s->warn, &s->cwarn, s->nwarn + 1, sizeof(*s->warn));
	const char *w = pool_strdup(&s->pool, buf);
	s->warn[s->nwarn++] = w;
	strmap_put(&s->warnidx, w, (void *)w);
}

const char *sym_debuginfod(struct sym_session *s, const uint8_t *bid, uint8_t len)
{
	if (!s->dbgfd)
		s->dbgfd = dbgfd_new();
	const char *path;
	char note[512];
	enum dbgfd_status st = dbgfd_find(s->dbgfd, bid, len, &path);
	if (dbgfd_note(s->dbgfd, st, note, sizeof(note)))
		sym_warn(s, "%s", note);   /* the same failure: one line */
	return st == DBGFD_OK ? path : NULL;
}

size_t sym_warnings(const struct sym_session *s, const char *const **out)
{
	*out = (const char *const *)s->warn;
	return s->nwarn;
}

void sym_session_free(struct sym_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndoms; i++) {
		struct sym_domain *d = s->doms[i];
		blobs_release(d);
		free(d->mods);
		free(d->modidx.v);
		free(d->pseudo.v);
		free(d->asids.v);
		free(d);
	}
	free(s->doms);
	free(s->domidx.v);
	free(s->warnidx.v);
	for (size_t i = 0; i < s->procs.cap; i++) {
		struct proc *p = s->procs.v[i].val;
		if (p) {
			proc_drop_maps(p);
			free(p);
		}
	}
	free(s->procs.v);
	for (struct sym_image *img = s->all_images, *n; img; img = n) {
		n = img->next_all;
		elf_info_release(&img->info);
		symtab_release(&img->tab);
		fde_release(&img->fde);
		lines_cache_end(img);
		lines_free(img->lines);
		ktab_free(img->kt);
		free(img->ktext);
		free(img);
	}
	free(s->images.v);
	for (size_t i = 0; i < s->nmaps; i++)
		free(s->maps[i]);
	free(s->maps);
	free(s->find_cache);
	for (size_t i = 0; i < s->nheld; i++)
		free(s->held[i].text);
	free(s->held);
	free(s->warn);
	free(s->kdebug);
	free(s->own_vdso);
	dbgfd_free(s->dbgfd);
	pool_release(&s->pool);
	free(s);
}

struct sym_domain *sym_domain_get(struct sym_session *s, uint32_t id)
{
	if (s->last_dom && s->last_dom->id == id)
		return s->last_dom;
	struct sym_domain *d = u64map_get(&s->domidx, id);
	if (d)
		return s->last_dom = d;
	d = xcalloc(1, sizeof(*d));
	d->id = id;
	/* a domain without a DOMAIN record: the host if 0, else host-like */
	d->kind = id == DP_HOST_DOMAIN ? DP_DOMAIN_HOST : DP_DOMAIN_ACTIVE;
	d->name = pool_strdup(&s->pool, id == DP_HOST_DOMAIN ? "host" : "?");
	if (s->ndoms == s->cdoms)
		xgrow((void **)&s->doms, &s->cdoms, s->ndoms + 1, sizeof(*s->doms));
	s->doms[s->ndoms++] = d;
	u64map_put(&s->domidx, id, d);
	return s->last_dom = d;
}

void sym_set_domain(struct sym_session *s, uint32_t domain, uint8_t kind,
		    const char *name, uint64_t kaslr_offset)
{
	struct sym_domain *d = sym_domain_get(s, domain);
	if (d->early && (d->kind != kind || (name && strcmp(d->name, name))))
		s->early_stale = true;
	d->kind = kind;
	/* the kind decides which lookups reach the process lists */
	if (s->find_cache)
		memset(s->find_cache, 0, s->find_cache_cap * sizeof(*s->find_cache));
	if (name)
		d->name = pool_strdup(&s->pool, name);
	d->kaslr = kaslr_offset;
}

void sym_set_kernel_local(struct sym_session *s, uint32_t domain, bool local)
{
	sym_domain_get(s, domain)->no_live_kernel = !local;
}

void sym_set_perf_origin(struct sym_session *s, uint32_t domain)
{
	struct sym_domain *d = sym_domain_get(s, domain);
	if (d->early_elf && !d->perf_cache)
		s->early_stale = true;   /* its images would look in perf's cache first */
	d->perf_cache = true;
}

struct sym_map *sym_map_new(struct sym_session *s, struct sym_image *img,
			       uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct sym_map *m = xcalloc(1, sizeof(*m));
	m->img = img;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	if (img && img->kind != IMG_ELF)
		m->placed = true;    /* absolute or symbol-less: delta 0 */
	if (s->nmaps == s->cmaps)
		xgrow((void **)&s->maps, &s->cmaps, s->nmaps + 1, sizeof(*s->maps));
	s->maps[s->nmaps++] = m;
	return m;
}

struct sym_image *sym_image_new(struct sym_session *s, struct sym_domain *d,
				   uint8_t kind, const char *name, const char *path)
{
	struct sym_image *img = xcalloc(1, sizeof(*img));
	img->kind = kind;
	img->dom = d;
	img->sess = s;
	img->name = pool_strdup(&s->pool, name);
	img->path = path && strcmp(path, name) ? pool_strdup(&s->pool, path) : img->name;
	symtab_init(&img->tab);
	if (kind == IMG_PSEUDO) {
		img->syms_done = img->info_done = true;
		symtab_finish(&img->tab, 0);
	}
	img->next_all = s->all_images;
	s->all_images = img;
	return img;
}

/* A symbol-less image and its one map covering everything, per domain. */
struct sym_map *sym_pseudo_map(struct sym_session *s, struct sym_domain *d, const char *name)
{
	struct sym_map *m = strmap_get(&d->pseudo, name);
	if (m)
		return m;
	struct sym_image *img = sym_image_new(s, d, IMG_PSEUDO, name, name);
	m = sym_map_new(s, img, 0, UINT64_MAX, 0);
	strmap_put(&d->pseudo, img->name, m);
	return m;
}

/* ---- mappings ---- */

const char *sym_base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* ---- lookup ---- */

/* A passive domain whose recorder read the guest's task list gives its
 * user samples the pid of the process that ran (and TASK records name
 * it): their image is "[guest user] COMM (PID)", with the name that pid
 * has at the sample (file order, as the kernel part of the same sample
 * is named), so one process's user and kernel time carry one name. Not
 * keyed by cr3: a page-table page is reused by the next process as soon
 * as the last one exits. Samples of no named process stay per address
 * space, "[guest user cr3=0x...]". */
static const struct sym_map *guest_user_map(struct sym_session *s, struct sym_domain *d,
					    bool has_asid, uint64_t asid, uint32_t pid)
{
	if (!has_asid)
		return sym_pseudo_map(s, d, "[guest user]");
	const char *comm = pid ? sym_comm_now(s, d->id, pid) : NULL;
	if (comm && !strcmp(comm, SYM_UNKNOWN))
		comm = NULL;
	if (d->last_asid_map && d->last_asid == asid && d->last_asid_pid == pid && d->last_asid_comm == comm)
		return d->last_asid_map;
	char name[96];
	struct sym_map *m;
	if (comm) {
		snprintf(name, sizeof(name), "[guest user] %.40s (%" PRIu32 ")", comm, pid);
		m = sym_pseudo_map(s, d, name);
	} else if (!(m = u64map_get(&d->asids, asid))) {
		snprintf(name, sizeof(name), "[guest user cr3=0x%" PRIx64 "]", asid);
		struct sym_image *img = sym_image_new(s, d, IMG_PSEUDO, name, name);
		m = sym_map_new(s, img, 0, UINT64_MAX, 0);
		u64map_put(&d->asids, asid, m);
	}
	d->last_asid = asid;
	d->last_asid_pid = pid;
	d->last_asid_comm = comm;
	return d->last_asid_map = m;
}

const struct sym_map *sym_find_map(struct sym_session *s, uint32_t domain,
				   uint32_t pid, uint8_t mode, bool has_asid,
				   uint64_t asid, uint64_t ip)
{
	/* sym_domain_get's own first test, here: asked once per sample */
	struct sym_domain *d = s->last_dom && s->last_dom->id == domain ? s->last_dom
									 : sym_domain_get(s, domain);
	bool khalf = ip >= KERNEL_ADDR_START;
	if (mode == DP_MODE_HYPERVISOR)
		return sym_pseudo_map(s, d, "[hypervisor]");
	if (d->kind == DP_DOMAIN_PASSIVE) {
		if (mode == DP_MODE_KERNEL || mode == DP_MODE_GUEST_KERNEL ||
		    (mode == DP_MODE_UNKNOWN && khalf))
			return kernel_map(s, d, ip);
		return guest_user_map(s, d, has_asid, asid, pid);
	}
	switch (mode) {
	case DP_MODE_KERNEL:
		return kernel_map(s, d, ip);
	case DP_MODE_GUEST_KERNEL:
		/* a KVM host's view of some guest's kernel: no table for it */
		return sym_pseudo_map(s, d, "[guest.kernel]");
	case DP_MODE_GUEST_USER:
		return guest_user_map(s, d, has_asid, asid, 0);  /* pid: the host's (qemu) */
	default:
		break;
	}
	/* A user lookup that finds one of the process's mappings is the same
	 * for any address of that mapping until the process's list changes
	 * (its gen): memoised per (pid, page). */
	uint64_t pkey = (uint64_t)domain << 32 | pid;
	/* Small first and grown (emptied) as entries are written: 4096 of
	 * them are 192 KiB, 48 fresh pages cleared by calloc at a report's
	 * first sample (~1.4% of a small report's time), where a process
	 * or two need a few dozen. */
	if (!s->find_cache || (s->find_cache_stores >= s->find_cache_cap &&
			       s->find_cache_cap < FIND_CACHE)) {
		uint32_t cap = s->find_cache ? s->find_cache_cap * 4 : 256;
		free(s->find_cache);
		s->find_cache_cap = cap < FIND_CACHE ? cap : FIND_CACHE;
		s->find_cache = xcalloc(s->find_cache_cap, sizeof(*s->find_cache));
		s->find_cache_stores = 0;
	}
	struct find_cache_ent *fc =
		&s->find_cache[hash_fold64(pkey, ip >> 12) & (s->find_cache_cap - 1)];
	if (fc->p && fc->key == pkey && ip >= fc->lo && ip < fc->hi && fc->gen == fc->p->gen)
		return fc->res;
	struct proc *p = sym_proc_get(s, domain, pid, false);
	if (p) {
		struct sym_map *m = proc_find_map(s, d, p, pid, ip);
		if (m) {
			/* p->last is the mapping that holds ip (m may be the
			 * process's perf map standing in for it) */
			if (p->last) {
				*fc = (struct find_cache_ent){ pkey, p->last->start, p->last->end, p,
							       p->gen, m };
				s->find_cache_stores++;
			}
			return m;
		}
	}
	if (khalf)
		return kernel_map(s, d, ip);
	if (p) {
		/* JIT code whose mapping was not recorded */
		struct sym_map *j = perfmap_map(s, d, p, pid);
		if (j) {
			image_load_symbols(s, j->img);
			if (symtab_find(&j->img->tab, ip))
				return j;
		}
	}
	if (!d->unknown)
		d->unknown = sym_pseudo_map(s, d, SYM_UNKNOWN);
	return d->unknown;
}

void sym_want(struct sym_session *s, const struct sym_map *cm, uint64_t ip)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	struct sym_image *img = m->img;
	/* only the kernel text table fetches names in batches: a table over
	 * a symbol index names a symbol with the block its lookup decodes
	 * (ktab_want does nothing), so its lookup here was a second search
	 * per key for nothing (a sixth of a large annotate) */
	if (!img->kt || ktab_index(img->kt))
		return;
	image_place(s, m);
	size_t idx;
	uint64_t start, end;
	if (ktab_find(img->kt, ip + m->delta, &idx, &start, &end))
		ktab_want(img->kt, idx);
}

const struct sym_image *sym_map_image(const struct sym_map *m)
{
	return m->img;
}

const char *sym_image_name(const struct sym_image *img)
{
	return img->name;
}

uint64_t sym_map_to_image(const struct sym_map *cm, uint64_t ip)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	if (!m->placed)
		image_place(m->img->sess, m);
	return ip + m->delta;
}

bool sym_map_symbolless(const struct sym_map *m)
{
	return m->img->kind == IMG_PSEUDO;
}

/* sym_range by start */
static int range_cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Only [A-Za-z0-9_]: the demangler writes such a name only from one
 * source name of the mangled one, so only a mangled name holding it
 * can demangle to it (the others are not demangled to compare). */
static bool plain_ident(const char *n)
{
	if (!*n)
		return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9') ||
		      *n == '_'))
			return false;
	return true;
}

/* An entry's name as sym_resolve gives it (demangled once, kept so) */
static const char *entry_name(struct sym_session *s, struct sym_entry *e)
{
	if (!(e->flags & SYM_F_DEMANGLED)) {
		e->flags |= SYM_F_DEMANGLED;
		char *dm = sym_demangle(e->u.name);
		if (dm) {
			e->u.name = pool_strdup(&s->pool, dm);
			free(dm);
		}
	}
	return e->u.name;
}

long sym_name_ranges(struct sym_session *s, const struct sym_map *cm, const char *name,
		     struct sym_range **out)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	struct sym_image *img = m->img;
	*out = NULL;
	/* names sym_resolve makes up rather than finds in the table */
	if (strchr(name, '+') || !strcmp(name, SYM_UNKNOWN))
		return -1;
	image_place(s, m);
	bool plain = plain_ident(name);
	/* the probe said the name is in none of the file's string tables
	 * (nor of a debug file that could stand in): no entry can be it,
	 * or a mangled one holding it, and the table need not be read */
	if (plain && img->kind == IMG_ELF && !img->syms_done && s->probe && !strcmp(s->probe, name) &&
	    img->info_usable && !img->tab_loaded && img->info.probed && !img->info.probe_hit &&
	    (img->info.has_symtab || img->is_vdso ||
	     !elf_debug_may_have(s, img->blob ? NULL : img->path, &img->info, name)))
		return 0;
	image_load_symbols(s, img);
	struct sym_range *v = NULL;
	size_t n = 0, cap = 0;
	/* a kernel text table: only an index with a name filter can tell
	 * without decoding every block; its names are C identifiers or
	 * mangled (and then looked at) */
	if (img->kt && (!plain || ktab_name_ranges(img->kt, name, &s->pool, &v, &n, &cap) < 0))
		return -1;
	size_t nkt = n;
	for (size_t i = 0; i < img->tab.n; i++) {
		struct sym_entry *e = &img->tab.v[i];
		const char *raw = e->u.name;
		bool mangled = !(e->flags & SYM_F_DEMANGLED) && raw[0] == '_' &&
			       (raw[1] == 'Z' || raw[1] == 'R');
		if (mangled && !plain) {
			free(v);
			return -1;
		}
		/* cheap tests first: most names differ in the first byte, and
		 * a mangled one must hold the plain name */
		if (mangled ? !strstr(raw, name) : raw[0] != name[0] || strcmp(raw, name))
			continue;
		if (mangled && strcmp(entry_name(s, e), name))
			continue;
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		v[n++] = (struct sym_range){ e->start, e->end };
	}
	if (nkt && n > nkt)
		qsort(v, n, sizeof(*v), range_cmp);
	*out = v;
	return (long)n;
}

/* Whether img's symbols are what they will be when the recording has
 * been read. A kernel image's and its modules' tables are fixed at the
 * domain's first kernel lookup (ensure_kernel), which the sample asking
 * has made; a host ELF image reads the file at its path, unless an
 * embedded ELF (there is none yet: one later makes it stale) or the
 * domain's kind or origin (a later DOMAIN record: stale) say otherwise;
 * a perf map's table may come at the end of the recording. */
static bool image_final(struct sym_image *img)
{
	struct sym_domain *d = img->dom;
	switch (img->kind) {
	case IMG_PSEUDO:
		return true;
	case IMG_ABS:
		d->early = true;
		return true;
	case IMG_ELF:
		if (d->kind != DP_DOMAIN_HOST || d->first_kind[DP_SYMTAB_ELF])
			return false;
		d->early = d->early_elf = true;
		return true;
	default:
		return false;
	}
}

long sym_name_ranges_final(struct sym_session *s, const struct sym_map *m, const char *name,
			   struct sym_range **out)
{
	*out = NULL;
	if (!image_final(m->img))
		return SYM_RANGES_LATER;
	return sym_name_ranges(s, m, name, out);
}

void sym_set_name_probe(struct sym_session *s, const char *name)
{
	s->probe = name && plain_ident(name) ? pool_strdup(&s->pool, name) : NULL;
}

bool sym_final_stale(const struct sym_session *s)
{
	return s->early_stale;
}

void sym_resolve(struct sym_session *s, const struct sym_map *cm, uint64_t ip,
		 struct sym_result *out)
{
	struct sym_map *m = (struct sym_map *)cm;   /* session-owned, see top */
	struct sym_image *img = m->img;
	image_place(s, m);
	uint64_t addr = ip + m->delta;
	image_load_symbols(s, img);
	/* a JIT without a map (embedded or believable) is anonymous code */
	out->image = img->kind == IMG_PERFMAP && img->perfmap_none ? "[anon]" : img->name;
	out->image_path = img->path;
	if (img->kt) {
		size_t idx;
		uint64_t start, end;
		if (ktab_find(img->kt, addr, &idx, &start, &end)) {
			out->symbol = ktab_name(img->kt, idx, &s->pool);
			out->sym_start = start;
			out->sym_end = end;
			out->offset = addr - start;
			out->known = true;
			out->fde = false;
			return;
		}
	}
	struct sym_entry *e = symtab_find(&img->tab, addr);
	out->fde = false;
	/* a symbol without a size was stretched to the next one: an FDE that
	 * starts after it and covers addr is a function the table lacks */
	if (e && (e->flags & SYM_F_GUESSED) && img->kind == IMG_ELF) {
		const char *name;
		const struct fde_range *f = image_fde(s, img, addr, &name);
		if (f && f->start > e->start)
			e = NULL;
	}
	if (!e) {
		/* no symbol covers it (a stripped library, a static function of
		 * a .dynsym-only binary): the unwind table's FDE gives the
		 * function's bounds, so its samples still group per function */
		const char *name;
		const struct fde_range *f = image_fde(s, img, addr, &name);
		out->symbol = f ? name : SYM_UNKNOWN;
		out->sym_start = f ? f->start : 0;
		out->sym_end = f ? f->end : 0;
		out->offset = f ? addr - f->start : addr;
		out->known = false;
		out->fde = f != NULL;
		return;
	}
	out->symbol = entry_name(s, e);
	out->sym_start = e->start;
	out->sym_end = e->end;
	out->offset = addr - e->start;
	out->known = true;
}
