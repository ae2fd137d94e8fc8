/* SPDX-License-Identifier: MIT */
/*
 * Symbol resolution: everything that turns (domain, pid, mode, ip) into
 * (image, symbol). The only module that includes libelf/libdw.
 *
 * A sym_session holds, per domain: the kernel symbol table (kallsyms /
 * System.map / vmlinux, relocated by the domain's KASLR offset), kernel
 * modules, and per process the executable mappings seen so far. Callers
 * feed it the recording in file order (sym_add_*) and look up each
 * sample's map while reading, so a mapping replaced later (exec, munmap)
 * still names the samples taken before. Symbol tables are loaded lazily,
 * only for images that a lookup hits, and each unique address is
 * resolved once by the caller (see analysis/).
 *
 * Ownership: the session owns every map, image and string it returns;
 * they stay valid until sym_session_free. Nothing here prints; warnings
 * are collected and read with sym_warnings().
 */
#ifndef DOMPROF_SYMBOLS_H
#define DOMPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct sym_session;
struct sym_map;     /* one mapping: image + placement */
struct sym_image;   /* one binary / symbol table, shared by its maps */

struct sym_session *sym_session_new(void);
void sym_session_free(struct sym_session *s);

/* ---- feeding ---- */

/* Root of separate debug files, "/usr/lib/debug" by default: build-id
 * files are looked up in DIR/.build-id/xx/yyyy.debug and debuglinks in
 * DIR/<binary's dir>/ (see docs/symbols.md). Copied. Call before lookups. */
void sym_set_debug_dir(struct sym_session *s, const char *dir);
/* A kernel ELF with DWARF (a vmlinux from a -dbg package) for the source
 * lines of domain's kernel samples (sym_srcline); copied. Its shift
 * from the recording's addresses: the domain's KASLR offset when the
 * recording knows it (passive domains), else the lowest kernel symbol
 * less the file's lowest code section. Repeat for several domains. */
void sym_set_kernel_debug(struct sym_session *s, const char *domain, const char *path);

/* Domain metadata (from DOMAIN records). kind: enum dp_domain_kind. */
void sym_set_domain(struct sym_session *s, uint32_t domain, uint8_t kind,
		    const char *name, uint64_t kaslr_offset);
/* Whether this machine's /proc/kallsyms may name the host domain's
 * kernel when the recording has no table (default true; false for a
 * perf.data recorded on another host: its kernel samples are then
 * [unknown], with a warning). */
void sym_set_kernel_local(struct sym_session *s, uint32_t domain, bool local);
/* The domain was read from a perf.data: its images (and its kernel's
 * kallsyms) are looked up in perf's build-id cache first, as perf does
 * ($PERF_BUILDID_DIR, else ~/.debug; docs/perfdata.md). Not for domprof
 * recordings, whose images resolve as docs/symbols.md says. */
void sym_set_perf_origin(struct sym_session *s, uint32_t domain);
/* An embedded SYMTAB record of `domain` (kallsyms, modules, System.map,
 * an ELF blob such as vmlinux or a guest binary keyed by build-id, a
 * perf map). Data is copied. */
void sym_add_symtab(struct sym_session *s, uint32_t domain, const struct dp_symtab *st);
/* Same from a SYMTAB record as the reader returns it; with the reader's
 * DP_READ_SYMTAB_STORED a compressed blob is kept compressed (a copy of
 * the stored bytes) and decompressed, or streamed, only when used. */
void sym_add_symtab_rec(struct sym_session *s, const struct dp_record *rec);
void sym_add_task(struct sym_session *s, uint32_t domain, const struct dp_task *t);
/* Returns the process mapping made (valid until sym_session_free), or
 * NULL for a kernel mapping (pid -1), an empty one, or one the entry
 * bound dropped. */
const struct sym_map *sym_add_mmap(struct sym_session *s, uint32_t domain, const struct dp_mmap *m);
/* No explicit "prepare" step: the first kernel lookup of a domain loads
 * its table; if the host kernel is hit and the file had no kallsyms, it
 * falls back to this machine's /proc/kallsyms with a warning. */

/*
 * The process map model alone, for the agent's ship set (agent/ship.h),
 * which asks only "which file did this process map at ip": call before
 * feeding. max_entries bounds the mapping-list entries of all processes
 * together (0: the default, 16 M; a fork shares its parent's list, so
 * the bound is reached by forks that map again, see maps.c);
 * key_identity makes a mapping's device, inode, size and mtime (MMAP
 * records of format 1.1) part of its image's key, so the same path and
 * build-id before and after a replacement are two images.
 */
void sym_set_map_model(struct sym_session *s, uint64_t max_entries, bool key_identity);
/* True once a mapping record was dropped for the entry bound. */
bool sym_map_budget_spent(const struct sym_session *s);

/*
 * This host's JIT perf map of pid, /tmp/perf-PID.map, read only when it
 * is believable: a regular file (never through a symbolic link) owned by
 * this user (euid), root or `owner` (the process's own user, when the
 * caller knows it; SYM_NO_OWNER: none) and not writable by group or
 * others, checked on the opened file. On success returns 0 and *data
 * (malloc'd, NUL after *len bytes; the caller frees it; data NULL: the
 * checks only, nothing read). Else -ENOENT
 * when there is none, or SYM_PERFMAP_UNTRUSTED or another negative errno
 * with a one-line reason naming the file in why. Used by the recorder to
 * embed the map (owner: the uid the process had when it mapped JIT
 * memory) and by the report for a recording without it (no owner: a
 * recording does not say whose the process was).
 */
#define SYM_PERFMAP_UNTRUSTED (-4102)
#define SYM_NO_OWNER UINT32_MAX
int sym_perfmap_read(uint32_t pid, uint32_t owner, char **data, size_t *len, char *why, size_t whylen);

/* ---- lookup ---- */

/*
 * The mapping (from MMAP records, inherited over forks, newest wins on
 * overlap) of pid that holds ip, or NULL: it consults nothing else (no
 * kernel table, no JIT perf map, no file), so it is safe where every
 * path is hostile. An anonymous mapping gives the "[anon]" map.
 */
const struct sym_map *sym_find_proc_map(struct sym_session *s, uint32_t domain, uint32_t pid,
					uint64_t ip);
/* Every process mapping of domain (the same lists sym_find_proc_map
 * reads): fn(ctx, pid, map) for each, in no defined order, until fn
 * returns false or max_visits mappings were visited (forks share lists,
 * so the visits are bounded by the caller, not by the entry bound). */
void sym_each_proc_map(const struct sym_session *s, uint32_t domain, size_t max_visits,
		       bool (*fn)(void *ctx, uint32_t pid, const struct sym_map *m), void *ctx);
/* The address range [*start, *end) of a map. */
void sym_map_range(const struct sym_map *m, uint64_t *start, uint64_t *end);

/*
 * The map holding `ip` for a sample: user ips go through the pid's
 * mappings (executable, libraries, [vdso], JIT perf maps); kernel ips to
 * the domain's kernel image or a module; guest-user samples of a passive
 * domain to one per-address-space pseudo image "[guest user cr3=0x...]".
 * Never NULL: an address no map covers gets the domain's "[unknown]"
 * image (or "[kernel.kallsyms]"/"[guest.kernel]" for kernel-half ips).
 */
const struct sym_map *sym_find_map(struct sym_session *s, uint32_t domain,
				   uint32_t pid, uint8_t mode, bool has_asid,
				   uint64_t asid, uint64_t ip);

struct sym_result {
	const char *image;     /* short image name: "libc.so.6", "[kernel.kallsyms]", "[ext4]" */
	const char *image_path;/* full path or the same as image */
	const char *symbol;    /* demangled; "IMAGE+0xSTART" when only an
				* unwind-table FDE covers ip (fde); else
				* "[unknown]" when not found */
	uint64_t sym_start;    /* symbol (or FDE) start, in the image's address space */
	uint64_t offset;       /* ip - sym_start */
	uint64_t sym_end;      /* the symbol's (or FDE's) end, exclusive; 0 when
				* not found */
	bool known;            /* a symbol table named it (false for fde names) */
	bool fde;              /* named from the FDE covering ip: symbol is the
				* image name + "+0x" + the FDE's start (hex link-time
				* address), one name per function; known is false */
};

/* Resolve ip inside map m (as returned by sym_find_map for the same ip).
 * Loads the image's symbol table on first use. Always fills *out. */
void sym_resolve(struct sym_session *s, const struct sym_map *m, uint64_t ip,
		 struct sym_result *out);

/*
 * Where in the image of map m sym_resolve may name a symbol `name`
 * (demangled, as sym_result.symbol): the ranges [start, end) in the
 * image's link-time space of the symbol-table entries with that name,
 * sorted by start, into *out (malloc'd, the caller frees; NULL when
 * none). A superset: an FDE may name part of a stretched entry
 * otherwise, so a caller resolves the addresses inside them to be sure;
 * none outside them is `name`. Loads the image's symbols as sym_resolve
 * does. Returns the count (0: no address of the image is `name`), or -1
 * when it cannot tell (any address may be `name`: a kernel text table,
 * whose names are fetched per address, unless it is an index with a name
 * filter (SYMTAB kind 9) and name a plain identifier; an FDE name "IMAGE+0x..." or
 * "[unknown]"; a name other than a plain identifier in an image with
 * mangled names not yet demangled).
 */
struct sym_range {
	uint64_t start, end;
};
long sym_name_ranges(struct sym_session *s, const struct sym_map *m, const char *name,
		     struct sym_range **out);

/* sym_name_ranges while the recording is still being read, for a caller
 * that drops the samples outside the ranges as it reads: the same
 * answer as after the last record, or SYM_RANGES_LATER (*out NULL) when
 * a later record could still change it (ask again at the end). An
 * answer given here that a later record did make stale is reported by
 * sym_final_stale (a file with its records in an unusual order: read it
 * again without this). */
/* Before the lookups: sym_name_ranges will be asked for `name` (a
 * plain identifier; others are ignored), so each ELF image's layout is
 * read with a look for it in its string tables, and an image without it
 * anywhere answers 0 without reading its symbol table. */
void sym_set_name_probe(struct sym_session *s, const char *name);
#define SYM_RANGES_LATER (-2L)
long sym_name_ranges_final(struct sym_session *s, const struct sym_map *m, const char *name,
			   struct sym_range **out);
bool sym_final_stale(const struct sym_session *s);

/* Optional, before a batch of sym_resolve calls: announce that (m, ip)
 * will be resolved. Lets the kernel table copy the names of all
 * announced symbols out of the compressed kallsyms in one pass, instead
 * of keeping every name in memory. Never needed for correctness. */
void sym_want(struct sym_session *s, const struct sym_map *m, uint64_t ip);

/* The image of a map, and its name (for aggregation keys). */
const struct sym_image *sym_map_image(const struct sym_map *m);
const char *sym_image_name(const struct sym_image *img);
/* Address in the image's own (link-time) space, for ip in map m. */
uint64_t sym_map_to_image(const struct sym_map *m, uint64_t ip);
/* True when m's image has no symbols at all (a pseudo image: [anon],
 * [heap], [unknown], ...): every address of it resolves alike. */
bool sym_map_symbolless(const struct sym_map *m);

/*
 * The code bytes of [start, end) in the image of map m (link-time
 * addresses, as sym_result gives them), for annotate: read from the
 * file the recording refers to (an embedded copy, or the file on this
 * machine when its build-id matches), only from an executable PT_LOAD
 * segment and at most cap bytes; for a kernel image, from the code a
 * passive domain's recorder read from guest memory (DP_SYMTAB_CODE). Returns the number of bytes written to
 * buf (fewer when the segment ends first), or a negative errno: -ENOENT
 * no file for this image (kernel tables, a passive guest's user space,
 * [unknown]), -ESTALE the file changed since the recording, -ERANGE the
 * range lies in no executable segment, or the read's error.
 */
long sym_image_code(struct sym_session *s, const struct sym_map *m, uint64_t start,
		    uint64_t end, uint8_t *buf, size_t cap);

/*
 * The source line of ip in map m, from the DWARF line tables of its image
 * (its file or embedded copy, else its separate debug file). file is the
 * base name. When the code at ip was inlined: inlined is the (innermost)
 * inlined function, call_file:call_line the line of the inlined call in
 * the function the code was compiled into (the symbol table's function
 * at ip). Strings live in the
 * session. Returns false when there is no line for ip; has_table says
 * whether the image has line tables at all.
 */
struct sym_srcline {
	const char *file;
	const char *path;       /* the file as the line table names it (absolute
				 * when the compiler gave a directory) */
	unsigned line;
	const char *inlined;
	const char *call_file;
	unsigned call_line;
	bool has_table;
};
bool sym_srcline(struct sym_session *s, const struct sym_map *m, uint64_t ip, struct sym_srcline *out);
/*
 * Line tables for the recording (SYMTAB kind 10, docs/file-format.md):
 * after sym_lines_collect, every sym_srcline answer of an image with a
 * build-id and line tables (its own DWARF, a debug file, the line cache,
 * the recording's table) is kept; sym_lines_export then hands fn each
 * such image's answers as the bytes of a line cache file (lcache.h, key
 * zero), with its domain and its build-id in hex, and fills *st. The
 * bytes are fn's to copy until it returns. Returns 0 or fn's negative
 * return.
 */
typedef int (*sym_lines_fn)(void *ctx, uint32_t domain, const char *buildid_hex, const uint8_t *data,
			    size_t len);
struct sym_lines_stats {
	size_t images, addrs, bytes;
	size_t refused;   /* images over the table's limits (lcache_encode): not written */
};
void sym_lines_collect(struct sym_session *s);
int sym_lines_export(struct sym_session *s, sym_lines_fn fn, void *ctx, struct sym_lines_stats *st);

/* The source lines of n addresses (maps[i], ips[i]; a NULL map is
 * skipped) worked out ahead on up to `threads` threads (0: the CPUs
 * this process may run on), one image at a time per thread; sym_srcline then answers them
 * from memory, the same answers. Kernel addresses are left to
 * sym_srcline. Loads the images' symbols (in the order of first use). */
void sym_srcline_prefetch(struct sym_session *s, const struct sym_map *const *maps, const uint64_t *ips,
			  size_t n, unsigned threads);

/* Command name of a pid in a domain, "[unknown]" if never seen: the
 * last name the records added so far gave it. */
const char *sym_comm(struct sym_session *s, uint32_t domain, uint32_t pid);

/* The name in force for pid as the records added so far stand (the
 * name of a sample read at this point: a process renamed by exec has
 * one name before it and another after), NULL when none named it yet.
 * Owned by the session; a name given again unchanged keeps its pointer,
 * so two pointers that differ are two names. */
const char *sym_comm_now(struct sym_session *s, uint32_t domain, uint32_t pid);

/* Warnings collected so far (e.g. "no kallsyms in file, using live
 * /proc/kallsyms"), each once. */
size_t sym_warnings(const struct sym_session *s, const char *const **out);

/* Warnings made between sym_warn_hold and sym_warn_unhold are kept
 * aside with tag; sym_warn_flush adds them to the others in the order of
 * their tags (then of their making), as if each had been made at its
 * tag's turn: work done ahead of its place keeps its warnings where they
 * were. */
void sym_warn_hold(struct sym_session *s, uint64_t tag);
void sym_warn_unhold(struct sym_session *s);
void sym_warn_flush(struct sym_session *s);

/* Demangle a C++ or Rust name; returns a malloc'd string or NULL when the
 * name is not mangled. Exposed for tests. */
char *sym_demangle(const char *name);

/* ---- DWARF unwinding of recorded user stacks (unwind.c) ---- */

/*
 * Unwinds the user stack a SAMPLE of `record --call-graph dwarf` carries
 * (has_uregs: registers and stack bytes from sp upwards) with libdwfl and
 * the CFI (.eh_frame, .debug_frame, separate debug files under the
 * session's debug dir) of the images the process had mapped when the
 * sample was read: feed the session in file order as for lookups and
 * unwind each sample as it is read. x86-64 (ABI 64) only.
 *
 * Ownership: the unwinder borrows the session (it must outlive the
 * unwinder) and owns one libdwfl handle per process; not thread-safe.
 */
struct sym_unwinder;

struct sym_unwind_stats {
	uint64_t samples;     /* samples with usable registers asked for */
	uint64_t complete;    /* unwound to the outermost frame (CFI says so) */
	uint64_t stopped;     /* ended early: no CFI, a read outside the stack, ... */
	uint64_t depth_cut;   /* reached the frame bound */
	uint64_t no_fde;      /* ended at a pc its image's .eh_frame does not cover
			       * (not counted in stopped) */
	uint64_t failed;      /* not even the first frame (ip in no readable image) */
	uint64_t frames;      /* frames returned, all samples */
	uint64_t rebuilds;    /* a process's handle rebuilt (its mappings changed) */
	uint64_t forgotten;   /* handles let go at a process's exit */
	uint64_t quick;       /* walked by the quick step alone (unwind_quick.c) */
	uint64_t cached;      /* answered from the cache (same ip, sp, bp, stack
			       * length and every stack word the unwind read) */
};

struct sym_unwinder *sym_unwinder_new(struct sym_session *s);
void sym_unwinder_free(struct sym_unwinder *u);
/*
 * The user call chain of sample smp of (domain, pid): at most max pcs
 * (and at most 256) into pcs, innermost first: pcs[0] is the user ip,
 * the others return addresses (as recorded chains hold them). Returns
 * the number written, 0 when the sample has no x86-64 user registers or
 * its ip lies in no image that can be read. *complete is true when the
 * CFI marked the last frame outermost, false when unwinding stopped
 * (the chain is then cut where it failed, counted in the stats).
 */
uint32_t sym_unwind_user(struct sym_unwinder *u, uint32_t domain, uint32_t pid,
			 const struct dp_sample *smp, uint64_t *pcs, uint32_t max,
			 bool *complete);
void sym_unwinder_stats(const struct sym_unwinder *u, struct sym_unwind_stats *out);
/* The quick step (on by default): simple CFI rules walked without
 * libdwfl, which takes every sample it cannot walk the same way. Off,
 * every sample is libdwfl's (DOMPROF_DWARF_UNWIND=libdwfl: tests compare
 * the two). */
void sym_unwinder_set_quick(struct sym_unwinder *u, bool on);
/* The process (domain, pid) exited: let go of its libdwfl handle (its
 * images' mappings and CFI). A later sample of the pid builds a new one. */
void sym_unwinder_forget(struct sym_unwinder *u, uint32_t domain, uint32_t pid);

#endif
