/* SPDX-License-Identifier: MIT */
/*
 * The aggregated profile: what every renderer (report text/csv/json, diff,
 * flame graph, exports) reads. Renderers never see raw records; they see
 * the tables built here.
 *
 * profile_load() reads a recording once through the format reader, feeds
 * the symbol session in file order, and counts samples by unique key
 * (domain, process, mode, leaf map, call chain) in open-addressing hash
 * tables with no per-sample allocation. Only afterwards is each unique
 * (map, address) resolved, once, to (image, symbol), and the per-symbol
 * rows, call-graph edges, image summary and unique-stack list are built
 * from the unique keys. Work after reading is therefore proportional to
 * what was hit, not to the number of samples.
 *
 * Counting unit: one sample counts 1 (sample counts, like opreport), never
 * its period; only the unique stacks also carry the sum of their samples'
 * periods (for exports that weigh by time, e.g. pprof). Percentages are of profile.matched (the samples that passed
 * the filter), which equals profile.total_samples when no filter is set.
 *
 * Call chains: frames are innermost first on disk. perf's context markers
 * (PERF_CONTEXT_KERNEL, _USER, _GUEST*, values >= (u64)-4095), if a
 * recorder kept them, switch the mode of the following frames and are
 * not frames themselves. A first frame equal to the sample ip is the leaf
 * and is not repeated. Caller frames (return addresses) are resolved at
 * address-1 so a call that is the last instruction of a function names
 * that function. The maps of caller frames are looked up when a unique
 * stack is first seen (the leaf's map is looked up for every sample).
 *
 * Ownership: a struct profile owns everything it points to (strings come
 * from its symbol session and stay valid until profile_free).
 */
#ifndef DOMPROF_ANALYSIS_PROFILE_H
#define DOMPROF_ANALYSIS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "symbols/symbols.h"   /* struct sym_unwind_stats */

/* Which samples count. Zero-initialise, then set what you need. */
struct profile_filter {
	const char *domain;     /* domain name, NULL = all */
	const char *comm;       /* process command name, NULL = all */
	const char *image;      /* image short name or full path of the leaf frame, NULL = all */
	bool has_pid;
	uint32_t pid;
	int mode;               /* 0 all, PROFILE_MODE_USER, PROFILE_MODE_KERNEL */
	/* --time (analysis/window.h): seconds from each domain's first
	 * sample, or percentages of its span; time_to < 0: to the end */
	bool has_time, time_pct;
	double time_from, time_to;
	const uint64_t *cpus;   /* --cpu: WINDOW_CPU_WORDS words of bits, NULL = all */
};
#define PROFILE_MODE_USER   1  /* user and guest-user samples */
#define PROFILE_MODE_KERNEL 2  /* kernel, guest-kernel and hypervisor samples */

/* Progress callback: bytes of the file read so far out of size. Called
 * at most every few thousand records; never for tiny files. */
typedef void (*profile_progress_fn)(void *arg, uint64_t pos, uint64_t size);

struct profile_opts {
	bool callgraph;         /* build edges and inclusive counts (needs call chains) */
	bool stacks;            /* keep the unique-stack list (flame graphs, exports) */
	bool by_process;        /* split symbol rows by (pid, comm) */
	bool hits;              /* self samples per address of each symbol (annotate) */
	const char *hits_symbol; /* with hits: only symbols of this name (annotate NAME:
				 * the addresses of the others are not sorted); NULL: all */
	bool hits_only;         /* with hits_symbol: resolve only the samples whose leaf
				 * may be that symbol (sym_name_ranges of each leaf's
				 * image); the rest count in matched and their domain's
				 * samples, nowhere else: p->syms holds no other rows
				 * (but those of images that cannot tell, such as the
				 * kernel's), p->images and unique_addrs only theirs.
				 * Ignored with filter.image. */
	bool srcline;           /* rows per source line too (symbol.srcline) */
	bool no_inline;         /* with srcline: code inlined into a function counts
				 * as that function's, at the call's line */
	bool timeline;          /* count samples per time bucket per domain */
	bool collect_lines;     /* with srcline: keep the lines' answers for
				 * profile_lines_export */
	/* --vmlinux: kernel debug files for source lines, per domain name
	 * (sym_set_kernel_debug); borrowed for the call */
	const struct profile_vmlinux { const char *domain, *path; } *vmlinux;
	size_t nvmlinux;
	bool by_tid;            /* keep thread ids apart: stacks carry their
				 * sample's tid (flame graphs, exports --by-tid);
				 * else every stack's tid is 0 */
	uint64_t timeline_ns;   /* the bucket; 0: chosen (about 40 over the span) */
	profile_progress_fn progress;
	void *progress_arg;
	/* threads decoding the file's chunks (dp_reader_set_threads; the
	 * profile is the same for every value); 0: chosen by each file's
	 * size (jobs_for_size in analysis/options.h) */
	unsigned jobs;
	/* a perf.data's perf kvm guests: names and kernel tables
	 * (analysis/options.h; NULL: none) */
	const struct perf_guest_args *perf_guests;
	/* report --verify: each chunk's counts part is checked against its
	 * records (DP_READ_VERIFY_COUNTS): a disagreement is a file warning
	 * (damage), and the samples counted are the records' */
	bool verify_counts;
};

/* Whether a load with opts (NULL: none) uses the samples' call chains,
 * and their user stacks for DWARF unwinding: only for a call graph or
 * the stacks (opts.callgraph, opts.stacks). Without them each sample
 * counts at its leaf alone, so its chain need not be decoded at all
 * (annotate, flat reports); the loader asks this once, and a reader
 * option that skips chains belongs where it does (profile.c). */
bool profile_opts_chains(const struct profile_opts *opts);

struct profile_event {
	uint32_t id;
	uint32_t type;
	uint64_t config;
	uint64_t period;        /* period, or frequency in Hz when freq */
	bool freq;
	const char *name;
	uint64_t samples;       /* SAMPLE records of this event in the file
				 * (before filters; ids < 256 only) */
};

struct profile_domain {
	uint32_t id;
	uint8_t kind;           /* enum dp_domain_kind */
	uint32_t vcpus;
	uint64_t kaslr_offset;
	const char *name;       /* "host" when the file has no DOMAIN record for 0 */
	const char *address;    /* "" when none */
	const char *symsrc;     /* "" when none */
	uint64_t samples;       /* matched samples in this domain */
};

/*
 * One symbol: a unique (domain, image, symbol[, pid]) -- the unit of rows,
 * call-graph nodes and stack frames. `self` counts samples whose leaf is
 * this symbol; `total` counts samples with this symbol anywhere in their
 * stack (once per sample even under recursion; equals self without -g).
 */
struct profile_symbol {
	uint32_t domain;        /* domain id */
	const char *domain_name;
	const char *image;      /* short image name, "[kernel.kallsyms]", "[guest user cr3=0x...]" */
	const char *image_path;
	const char *symbol;     /* demangled, "IMAGE+0xSTART" (fde), or "[unknown]" */
	bool known;             /* a symbol table named it */
	bool fde;               /* named from an unwind-table FDE (known false):
				 * one function, but no symbol (docs/symbols.md) */
	bool kernel;            /* found in kernel mode (image of kernel/guest kernel) */
	uint32_t pid;           /* only with opts.by_process, else 0 */
	const char *comm;       /* only with opts.by_process, else NULL */
	const char *srcline;    /* only with opts.srcline: "file.c:12", "[no line
				 * info]" (the image has no line tables) or "??"
				 * (none for this address); else NULL */
	const char *inlined_into; /* opts.srcline, the symbol is an inlined
				 * function: the function it was inlined into */
	uint64_t self;
	uint64_t total;
};

/* A direct call observed in stacks: caller -> callee (symbol indexes),
 * counted once per sample even when the pair repeats in one stack. */
struct profile_edge {
	uint32_t caller, callee;
	uint64_t count;
};

/* Image summary row (opreport's default view): samples of one image in
 * one application (process command name) of one domain. */
struct profile_image {
	uint32_t domain;
	const char *domain_name;
	const char *app;        /* comm of the process, "[unknown]" when never named */
	const char *image;
	uint64_t samples;
};

/* One unique stack with its count. frames[] holds symbol indexes
 * root-first (outermost caller first, leaf last); nframes >= 1. Stacks
 * of different events are apart. */
struct profile_stack {
	uint32_t domain;
	const char *domain_name;
	uint32_t pid;
	uint32_t tid;           /* only with opts.by_tid, else 0 */
	const char *comm;       /* the process's command name */
	uint8_t mode;           /* enum dp_mode of the sample */
	uint32_t nframes;
	const uint32_t *frames;
	uint64_t count;
	uint16_t event;         /* dp_sample.event (profile_event.id) */
	uint64_t period;        /* sum of the samples' periods as recorded (for
				 * cpu-clock/task-clock: ns, also with -F) */
};

/* A named counter's total in one domain over the whole recording: the sum
 * of its COUNTERS records (format 1.3, docs/file-format.md), saturating.
 * Not filtered: counters say how the recording was made, not which
 * samples are shown. */
struct profile_counter {
	uint32_t domain;
	const char *name;
	uint64_t value;
};

struct profile {
	/* header metadata */
	struct dp_header header;        /* strings owned by the profile */
	struct profile_event *events;
	size_t nevents;
	struct profile_domain *domains;
	size_t ndomains;
	uint64_t total_samples;         /* SAMPLE records read, before filtering */
	uint64_t matched;               /* samples that passed the filter */
	uint64_t lost;                  /* sum of LOST record counts */
	uint64_t lost_by_source[DP_LOST_SOURCES]; /* per enum dp_lost_source */
	bool has_stats;
	struct dp_stats stats;
	char **warnings;                /* reader damage + symbol warnings, one line each */
	size_t nwarnings;
	size_t nfile_warnings;          /* warnings[0..nfile_warnings) are about the file
					 * itself (damage, incomplete recording) */
	uint64_t damaged_bytes;
	bool has_callchains;            /* some sample carried a call chain */
	struct profile_counter *counters; /* every domain's, sorted by domain id then name */
	size_t ncounters;
	uint64_t counters_dropped;      /* counter entries past the loader's limit on
					 * distinct names (DP_COUNTER_SUMS_MAX) */
	/* DWARF unwinding of recorded user stacks (--call-graph dwarf):
	 * samples with a stack considered (call graph or stacks asked for),
	 * those whose user chain the unwinder replaced, those that kept the
	 * recorded frame-pointer chain (the unwinder found fewer frames and
	 * did not reach the outermost one), and of the replaced ones, those
	 * unwound to the outermost frame. All 0 with DOMPROF_DWARF_UNWIND=0.
	 * How the unwinder's walks ended (sym_unwind_stats: every sample
	 * considered is one of complete, stopped, no_fde, depth_cut, failed;
	 * cached counts those answered from its cache). */
	struct {
		uint64_t samples, unwound, kept_fp, complete;
		struct sym_unwind_stats walks;
	} dwarf;

	/* --timeline: matched samples per bucket of bucket_ns from each
	 * domain's first sample (analysis/window.h), one row per domain
	 * with samples, in domain id order; nbuckets over all of them (at
	 * most PROFILE_TIMELINE_MAX: a longer span gets wider buckets, and
	 * bucket_widened says so). */
	struct {
		uint64_t bucket_ns;
		size_t nbuckets;
		bool bucket_widened;
		struct profile_timeline_row {
			uint32_t domain;
			const char *name;
			uint64_t *counts;   /* nbuckets */
		} *rows;
		size_t nrows;
	} timeline;

	/* symbols; rows are the symbols with self > 0 (profile_rows) */
	struct profile_symbol *syms;
	size_t nsyms;
	struct profile_edge *edges;     /* sorted by caller, then count desc */
	size_t nedges;
	struct profile_image *images;   /* sorted: app total desc, then samples desc */
	size_t nimages;
	struct profile_stack *stacks;   /* only with opts.stacks; count desc */
	size_t nstacks;

	/* counters for benchmarks and `info` */
	size_t unique_keys;             /* unique (domain, pid, mode, map, chain) */
	size_t unique_addrs;            /* unique (map, address) resolved */

	void *priv;
};

#define PROFILE_TIMELINE_MAX 10000u

/*
 * With opts.hits: the self samples of symbol sym (an index into p->syms)
 * per address, in the image's link-time address space, sorted by
 * address; *start and *end (may be NULL) get the symbol's range there
 * (end 0 when not known). Returns the count of entries at *out (valid
 * until profile_free), 0 when the symbol has no self samples.
 */
struct profile_hit {
	uint64_t addr;
	uint64_t count;
};
size_t profile_symbol_hits(const struct profile *p, uint32_t sym, const struct profile_hit **out,
			   uint64_t *start, uint64_t *end);
/* Its code bytes [start, end) (at most cap), read as symbols.h's
 * sym_image_code does: the byte count, or its negative errno. */
long profile_symbol_code(const struct profile *p, uint32_t sym, uint8_t *buf, size_t cap);
/* The name of image address addr in the image symbol sym is in (a branch
 * target): "name+0xOFF" into buf (n bytes); false when nothing names it. */
bool profile_symbol_name_at(const struct profile *p, uint32_t sym, uint64_t addr, char *buf, size_t n);
/* The source line of image address addr of symbol sym (symbols.h's
 * sym_srcline: *path as the line table names the file, *line); false
 * when the image has no line for it. */
bool profile_symbol_line_at(const struct profile *p, uint32_t sym, uint64_t addr, const char **path,
			    unsigned *line);

/*
 * Read `path` and build the profile. filter and opts may be NULL. Returns
 * NULL on failure with *err a negative errno or DP_ERR_* and msg (msglen
 * bytes, may be NULL) a one-line reason. An empty or filtered-to-nothing
 * profile is a success with matched == 0.
 */
struct profile *profile_load(const char *path, const struct profile_filter *filter,
			     const struct profile_opts *opts, int *err,
			     char *msg, size_t msglen);
/*
 * Several files read as one recording, in the order given (the files of
 * one `record --switch-output` series, or any recordings of the same
 * machine): the same domain ids are the same domains, samples add up,
 * the header is the first file's, the STATS records are summed (samples,
 * lost, wall time; the union of the spans; has_stats only when every
 * file had one), --time counts from each domain's first sample over all
 * of them, and each file's damage or missing end is a warning naming it.
 * Identical embedded tables (each file's kallsyms) are kept once. Every
 * file is opened before any is read: one that cannot be fails the call
 * (err, msg as profile_load). n == 1 is profile_load.
 */
struct profile *profile_load_files(const char *const *paths, size_t n, const struct profile_filter *filter,
				   const struct profile_opts *opts, int *err, char *msg, size_t msglen);
/* Same, from an open reader (rewound first; the reader stays the caller's). */
struct profile *profile_load_reader(struct dp_reader *r, const struct profile_filter *filter,
				    const struct profile_opts *opts, int *err,
				    char *msg, size_t msglen);
void profile_free(struct profile *p);
/* With opts.collect_lines: the line tables of the images whose lines the
 * load looked up (sym_lines_export), each handed to fn. */
int profile_lines_export(const struct profile *p, sym_lines_fn fn, void *ctx, struct sym_lines_stats *st);

/*
 * Sorting symbol rows. keys: comma-separated list of sample, symbol,
 * image, domain, pid, comm (like perf's --sort). Fills keys_out (up to
 * PROFILE_MAX_SORT) and returns the count, or -1 on an unknown key, with
 * *bad pointing at it (static storage-free: a pointer into keys).
 */
enum profile_sort_key {
	PROFILE_SORT_SAMPLE, PROFILE_SORT_SYMBOL, PROFILE_SORT_IMAGE,
	PROFILE_SORT_DOMAIN, PROFILE_SORT_PID, PROFILE_SORT_COMM,
	PROFILE_SORT_SRCLINE,   /* splits rows per source line (opts.srcline), as
				 * perf's -s srcline; orders nothing itself */
};
#define PROFILE_MAX_SORT 8
int profile_parse_sort(const char *keys, enum profile_sort_key *keys_out, const char **bad);

/*
 * Rows for a symbol table: indexes of symbols with self > 0 and
 * self*100/matched >= threshold_pct, ordered by keys (ties by samples
 * desc, then domain, image, symbol). Returns a malloc'd array the caller
 * frees; *n gets its length.
 */
uint32_t *profile_rows(const struct profile *p, const enum profile_sort_key *keys,
		       int nkeys, double threshold_pct, size_t *n);

/* Call-graph entries: symbols with total*100/matched >= threshold_pct,
 * ordered by self desc then total desc. malloc'd; caller frees. */
uint32_t *profile_cg_entries(const struct profile *p, double threshold_pct, size_t *n);
/* The edges into / out of a symbol (borrowed; callers ordered by count
 * desc, callees by count desc). */
size_t profile_callers(const struct profile *p, uint32_t sym, const struct profile_edge *const **out);
size_t profile_callees(const struct profile *p, uint32_t sym, const struct profile_edge *const **out);

/* Percentage of matched (0 when matched is 0). */
double profile_pct(const struct profile *p, uint64_t n);

/* The counters of one domain (a slice of p->counters, borrowed, sorted by
 * name; *out NULL and 0 when it has none), and one counter's total (0
 * when absent). */
size_t profile_counters(const struct profile *p, uint32_t domain,
			const struct profile_counter **out);
uint64_t profile_counter(const struct profile *p, uint32_t domain, const char *name);

/* The profile_domain of a domain id, or NULL. */
const struct profile_domain *profile_domain_by_id(const struct profile *p, uint32_t id);

#endif
