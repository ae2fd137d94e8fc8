/* SPDX-License-Identifier: MIT */
/*
 * Private to src/analysis/profile*.c: the state shared by the three
 * passes that make a profile (see profile.c for the overview). Nothing
 * outside src/analysis/profile*.c includes this; the public contract is
 * profile.h.
 *
 * Ownership: struct priv hangs off profile->priv and lives as long as
 * the profile (profile_free releases it); struct loader lives on the
 * stack of one load and owns the key, chain and address arrays and the
 * lookup tables (released by loader_release in profile.c).
 */
#ifndef DOMPROF_ANALYSIS_PROFILE_INTERNAL_H
#define DOMPROF_ANALYSIS_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "format/scan.h"
#include "analysis/window.h"
#include "symbols/symbols.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* A string folded into h; NULL hashes as "". */
static inline uint64_t hash_str(uint64_t h, const char *s)
{
	return s ? hash_fold64(h, hash_bytes64(s, strlen(s))) : hash_fold64(h, hash_bytes64("", 0));
}

static inline bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- private state ---- */

/* One unique sample key (the index holds its hash). */
struct key {
	uint64_t ip;
	uint64_t asid;
	uint64_t count;
	uint64_t period;             /* sum of the samples' periods */
	const struct sym_map *map;
	/* the process's name at its samples' time (sym_comm_now: a process
	 * that exec'd has samples under two names, as perf counts them);
	 * NULL when none had named it yet: its last name (key_comm) */
	const char *comm;
	uint32_t domain, pid;
	uint32_t chain_off, nchain;  /* raw call chain in keys' arena */
	uint32_t leaf_sym;           /* filled by resolve (HITS_OUT: not resolved) */
	uint16_t event;
	uint8_t mode;
	bool keep;
};

/* One resolved address: an image and an address in it (0 for an image
 * without symbols, where every address resolves alike), so the maps of
 * many processes of one binary share their lookups. */
struct addr {
	const struct sym_image *img;
	uint64_t addr;
	uint32_t sym;
	uint32_t domain;             /* syms[sym].domain: a probe compares it without loading the row */
};

struct stack_ent {
	uint64_t hash;
	uint32_t off, n;
	uint32_t domain, pid, tid;
	const char *comm;            /* key_comm: owned by the symbol session */
	uint8_t mode;
	uint16_t event;
	uint64_t count, period;
};

struct priv {
	struct sym_session *sym;
	char **strings;              /* copies of header/event/domain strings */
	size_t nstrings, capstrings;
	uint32_t *frames;            /* stack frames, root-first */
	const struct profile_edge **in_ptrs, **out_ptrs;
	uint32_t *in_off, *out_off;
	/* id -> index+1 in p->domains / p->events: a file may hold tens of
	 * thousands of domains, each looked up per unique key */
	struct hmap domidx, evidx;
	struct dp_counter_sums counters; /* owns the names p->counters points to */
	/* opts.hits (hits.c): self samples per (symbol, image address),
	 * sorted; per symbol with hits, its range and one map to read its
	 * code through */
	struct profile_hit *hits;
	size_t nhits, caphits;
	struct hit_sym { uint32_t sym; uint32_t first, n; const struct sym_map *map;
			 uint64_t start, end; } *hsyms;
	size_t nhsyms;
};

enum { PEND = 16 };

struct loader {
	uint64_t ev_samples[256];  /* SAMPLE records per event id < 256 */
	struct profile *p;
	struct priv *pv;
	const struct profile_filter *f;
	struct profile_opts o;
	bool chains;                 /* profile_opts_chains(o): chains read and kept */

	/* domain filter: resolved when the DOMAIN record appears */
	bool dom_filter;
	bool dom_found;
	uint32_t dom_id;

	/* opts.hits_only narrowed while reading (profile.c sets early: one
	 * file, no filter only the end can apply); the images' answers */
	bool early;
	struct hits_narrow *narrow;
	/* the keys of samples outside it, by process and mode (few, each
	 * hit by most samples): counted without the hash and the queue */
	struct out_key { uint32_t domain, pid, tid, key; uint64_t asid; const char *comm;
			 uint16_t event; uint8_t mode; bool used; } *outk;

	struct key *keys;
	size_t nkeys, capkeys;
	/* opts.by_tid: the tid of each key, beside the keys so that a key
	 * stays 64 bytes when tids are not asked for */
	uint32_t *key_tid;
	size_t capkey_tid;
	struct hidx keytab;
	uint64_t *chain;             /* raw chains */
	size_t nchain, capchain;
	const struct sym_map **chain_map; /* per chain slot: map of that frame (NULL: marker / skipped) */
	uint8_t *chain_mode;
	size_t capchain_map, capchain_mode;

	struct addr *addrs;
	size_t naddrs, capaddrs;
	struct hidx addrtab;

	size_t capsyms;
	struct hidx symtab;
	size_t capdomains, capevents;
	size_t dom_last;             /* profile_domain_get's last answer, index + 1 */

	/* --time: each domain's sample span (a pass before the samples),
	 * and the window of the last domain seen */
	struct window_spans spans;
	uint32_t win_dom;
	bool win_valid, win_known;
	uint64_t win_lo, win_hi;
	uint64_t time_out;           /* samples the other filters kept, outside it */
	/* --timeline (timeline.c): samples per (key, bucket), counted into
	 * the rows once the keys' filters are known */
	struct tl_cell { uint32_t key, bucket; uint64_t count; } *tl_cells;
	struct hmap nolines;         /* opts.srcline: images said to have no lines */
	/* opts.hits: a kept key's leaf (symbol, image address) and samples */
	struct hit_raw { uint32_t sym; uint64_t addr, count; const struct sym_map *map; } *hit_raw;
	size_t nhit_raw, caphit_raw;
	size_t ntl_cells, captl_cells;
	struct hidx tl_tab;

	/* Samples between their key's hash and its count (profile_load.c):
	 * a busy machine's recording has millions of keys, and a probe of
	 * their table missed the cache on nearly every sample (its slot,
	 * then its key); queued, the slot of each is fetched PEND samples
	 * ahead and its key PEND/2 ahead. FIFO, drained before any other
	 * record and at the end of each file, so keys are made in sample
	 * order against the symbol session of their sample's moment. */
	struct pend {
		struct dp_sample s;      /* callchain: its own slot of pend_chain */
		const struct sym_map *map;
		const char *comm;
		uint64_t kip, asid, h;
		uint32_t domain, nc;
		uint32_t weight;         /* samples it stands for */
	} *pend;
	uint64_t *pend_chain;        /* PEND x DP_MAX_CALLCHAIN */
	unsigned pend_head, npend;

	/* DWARF unwinding (profile_load.c): made on the first sample with a
	 * user stack, freed when reading ends */
	struct sym_unwinder *uw;
	int uw_state;                /* 0 not decided, 1 on, 2 libdwfl only, -1 off (env) */
	uint64_t uw_chain[DP_MAX_CALLCHAIN];
};

static inline bool mode_is_kernel(uint8_t m)
{
	return m == DP_MODE_KERNEL || m == DP_MODE_GUEST_KERNEL || m == DP_MODE_HYPERVISOR;
}

/* ---- shared between the passes (profile_load.c) ---- */

/* A copy of s ("" for NULL) owned by the profile. */
const char *profile_keep_str(struct priv *pv, const char *s);
/* --timeline (timeline.c): buckets chosen from the spans; a sample of
 * key `key` counted in its bucket; at the end (after profile_build: the
 * keys' keep flags are the comm and image filters) the rows, named and
 * sorted. The rows are freed with the profile, the cells with the
 * loader (timeline_release). */
void timeline_setup(struct loader *L);
void timeline_add(struct loader *L, uint32_t key, uint32_t domain, uint64_t t);
void timeline_release(struct loader *L);
void timeline_finish(struct loader *L);
void timeline_free(struct profile *p);
/* opts.hits (hits.c): a kept key's self samples counted at its leaf
 * symbol's address (profile_build, after leaf resolution); sorted and
 * merged at the end. */
void hits_add(struct loader *L, const struct key *k);
void hits_finish(struct loader *L);
void hits_free(struct priv *pv);
/* opts.hits_only (hits.c): whether key k's leaf lies where hits_symbol
 * may be (sym_name_ranges of its image, asked once per image): a key
 * outside is counted (matched, its domain's samples) but never resolved.
 * A key's leaf_sym is HITS_OUT for those. */
#define HITS_OUT UINT32_MAX
struct hits_narrow;
struct hits_narrow *hits_narrow_new(struct loader *L);
bool hits_narrow_in(struct hits_narrow *h, const struct key *k);
void hits_narrow_free(struct hits_narrow *h);
/* The same while reading (L->early): false when the sample of map m at
 * ip cannot be hits_symbol's (its key is then made without map and ip,
 * one per process and mode: hits_narrow_in says out for it); true when
 * it may be, or when only the end can tell (sym_name_ranges_final).
 * Warnings are held (sym_warn_hold) at the turn of each image's first
 * sample; profile_build flushes them after its own narrowing. */
bool hits_early_in(struct loader *L, const struct sym_map *m, uint64_t ip);
/* --time found nothing: a warning naming each domain's span. */
void time_window_note(struct loader *L);
/* Appends a copy of s to p->warnings. */
void profile_add_warning(struct profile *p, const char *s);
/* The domain with this id, created (named "host" / "dom<id>") on first use. */
struct profile_domain *profile_domain_get(struct loader *L, uint32_t id);

/* The load pass (profile_load.c): dp_scan's callbacks, ctx = the loader.
 * After each dp_scan, profile_load_drain counts the samples still queued. */
extern const struct dp_visitor profile_load_visitor;
void profile_load_drain(struct loader *L);

/* Passes 2 and 3 (profile_build.c): resolve the loader's keys and fill
 * syms, edges, images and stacks of L->p. */
void profile_build(struct loader *L);

#endif
