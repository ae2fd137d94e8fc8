/* SPDX-License-Identifier: MIT */
/*
 * The domprof file format: record types as C structs, and the writer and
 * reader APIs. This directory is the only code that knows the bytes on
 * disk; docs/file-format.md is the normative description and this header
 * mirrors it.
 *
 * The rule from the Xenoprof seed: a record's kind is decided only by its
 * tag. Every field value (ip 0, ip ~0, any domain id, any pid) is data.
 * The current domain is decoder state, set only by DOMAIN_SWITCH records
 * and reset to the host (domain 0) at the start of every chunk.
 */
#ifndef DOMPROF_FORMAT_H
#define DOMPROF_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_MAGIC "DOMPROF\n"
#define DP_VERSION_MAJOR 1
/* Minor 1: chunk seq is meaningful (readers check it for gaps, repeats and
 * order), STATS carries the writer's record totals, and MMAP may carry the
 * mapped file's identity. Files of minor 0 are read as before, without the
 * sequence check. Minor 2: TASK may carry the task's address space.
 * Minor 3: the COUNTERS record (named per-domain counters). Minor 4:
 * SAMPLE may carry the user registers and stack bytes (DWARF unwinding).
 * Minor 5: a user stack may be stored in delta form. Minor 6: a zstd
 * chunk may carry a counts part (its samples in groups, format/counts.h)
 * after its records' frame. */
#define DP_VERSION_MINOR 6
#define DP_HOST_DOMAIN 0u

/* Record tags (u16 on disk). New tags may be added in minor versions;
 * readers skip tags they do not know. */
enum dp_rec_type {
	DP_REC_EVENT = 1,
	DP_REC_DOMAIN = 2,
	DP_REC_DOMAIN_SWITCH = 3,
	DP_REC_TASK = 4,
	DP_REC_MMAP = 5,
	DP_REC_SAMPLE = 6,
	DP_REC_LOST = 7,
	DP_REC_SYMTAB = 8,
	DP_REC_STATS = 9,
	DP_REC_COUNTERS = 10,   /* format 1.3 */
	DP_REC_MAX_KNOWN = 10,
};

enum dp_mode {
	DP_MODE_UNKNOWN = 0,
	DP_MODE_USER = 1,
	DP_MODE_KERNEL = 2,
	DP_MODE_GUEST_KERNEL = 3,
	DP_MODE_GUEST_USER = 4,
	DP_MODE_HYPERVISOR = 5,
};

/* The mode of a perf record from its header's misc field (perf's
 * PERF_RECORD_MISC_CPUMODE_MASK values): the host source and the
 * perf.data reader decode it the same way. */
static inline uint8_t dp_mode_of_perf_misc(uint16_t misc)
{
	static const uint8_t m[8] = { DP_MODE_UNKNOWN, DP_MODE_KERNEL, DP_MODE_USER,
				      DP_MODE_HYPERVISOR, DP_MODE_GUEST_KERNEL, DP_MODE_GUEST_USER,
				      DP_MODE_UNKNOWN, DP_MODE_UNKNOWN };
	return m[misc & 7];
}

/* The build-id of a perf MMAP2 record r (the kernel's layout: the
 * build-id form at offset 40, a size byte and 3 reserved, then 20
 * bytes) whose header misc is misc, into id; its length, 0 for none.
 * A size above 20 is no build-id: the kernel (5.12 to at least 6.18,
 * perf_event_mmap_output) sets PERF_RECORD_MISC_MMAP_BUILD_ID on the
 * record it shares between events for the first one that asked and
 * leaves it set for the events after it, so other tools' records carry
 * the flag over their device and inode fields (perf 6.1 aborts on
 * them). The host source and the perf.data reader both decode it here;
 * r holds at least 64 bytes (their callers check). */
static inline uint8_t dp_perf_mmap2_buildid(const uint8_t *r, uint16_t misc, uint8_t id[20])
{
	if (!(misc & (1u << 14)) || r[40] > 20)
		return 0;
	for (unsigned i = 0; i < r[40]; i++)
		id[i] = r[44 + i];
	return r[40];
}

enum dp_domain_kind {
	DP_DOMAIN_HOST = 0,
	DP_DOMAIN_PASSIVE = 1,
	DP_DOMAIN_ACTIVE = 2,
};

enum dp_task_kind {
	DP_TASK_COMM = 0,     /* a process/thread exists or renamed (snapshot, exec) */
	DP_TASK_FORK = 1,
	DP_TASK_EXIT = 2,
};

enum dp_lost_source {
	DP_LOST_RING = 0,      /* kernel ring buffer overflow (PERF_RECORD_LOST) */
	DP_LOST_THROTTLE = 1,  /* kernel throttled sampling */
	DP_LOST_DOMAIN = 2,    /* a VM sampler missed ticks (stub too slow) */
	DP_LOST_AGENT = 3,     /* an active domain's agent lost records */
	DP_LOST_WRITER = 4,    /* collector could not write (disk full) */
};
/* Sources this build names; a LOST record may carry any u32 (counted as
 * "other" by readers). */
#define DP_LOST_SOURCES 5u

enum dp_symtab_kind {
	DP_SYMTAB_KALLSYMS = 1,  /* /proc/kallsyms text */
	DP_SYMTAB_MODULES = 2,   /* /proc/modules text */
	DP_SYMTAB_SYSMAP = 3,    /* System.map text */
	DP_SYMTAB_ELF = 4,       /* an ELF file (vmlinux or a guest binary), keyed by name/build-id */
	DP_SYMTAB_PERFMAP = 5,   /* /tmp/perf-PID.map text */
	DP_SYMTAB_KALLSYMS_DELTA = 6, /* kallsyms text, each address written as the
				       * difference from the previous line's (hex,
				       * '-' when negative): ~40% smaller stored */
	DP_SYMTAB_CODE = 7,      /* code bytes read from a passive guest's memory
				  * (docs/file-format.md: "DPCODE1\0", then
				  * entries u64 address, u32 length, u32 0,
				  * bytes), for annotate */
	DP_SYMTAB_KSYMIDX = 8,   /* the host kallsyms as a binary index sorted by
				  * address, in independently compressed blocks
				  * (format/ksymidx.h); stored with compression 0,
				  * the blocks being compressed already */
	DP_SYMTAB_KSYMNF = 9,    /* a Bloom filter of the names in each block of
				  * the kind-8 index beside it (format/ksymnf.h),
				  * for lookups by name; stored with compression 0 */
	DP_SYMTAB_LINES = 10,    /* the source lines of an image's sampled addresses,
				  * named by its build-id in hex: a line cache file
				  * (symbols/lcache.h) made by `record` */
};

/* EVENT: what was sampled. */
struct dp_event {
	uint32_t id;            /* referenced by dp_sample.event */
	uint32_t type;          /* perf_event_attr.type */
	uint64_t config;        /* perf_event_attr.config */
	uint64_t period;        /* sample period or frequency (see freq) */
	bool freq;              /* period holds a frequency in Hz */
	const char *name;       /* "cpu-clock", "cycles:u", ... */
};

/* DOMAIN: one OS instance. */
struct dp_domain {
	uint32_t id;
	uint8_t kind;           /* enum dp_domain_kind */
	uint32_t vcpus;         /* number of (v)CPUs, 0 if unknown */
	uint64_t kaslr_offset;  /* guest kernel offset applied to its symbols */
	const char *name;       /* "host", "vm1" */
	const char *address;    /* how it was reached: "gdb:unix:/p", "agent:127.0.0.1:7000", "" */
	const char *symsrc;     /* symbol source: "kallsyms=/path", "embedded", "" */
};

/* TASK: comm, fork or exit of a task in the current domain. */
struct dp_task {
	uint8_t kind;           /* enum dp_task_kind */
	uint32_t pid, tid;
	uint32_t ppid, ptid;    /* parent, for FORK */
	uint64_t time;
	const char *comm;
	/* The task's address space as a passive domain's samples carry it
	 * (dp_sample.asid), when the recorder read it from guest memory
	 * (format 1.2; absent otherwise). */
	bool has_asid;
	uint64_t asid;
};

/* MMAP: an executable mapping in the current domain. */
struct dp_mmap {
	uint32_t pid;           /* (uint32_t)-1 for the kernel */
	uint64_t start, len, pgoff;
	uint64_t time;
	uint8_t buildid_len;    /* 0..20 */
	uint8_t buildid[20];
	const char *path;
	/* The mapped file's identity as the recorder saw it through
	 * /proc/PID/map_files right after the mapping (format 1.1; absent in
	 * older files and when the recorder could not look). */
	bool has_ident;
	uint64_t dev, ino;      /* st_dev, st_ino */
	uint64_t size;          /* st_size */
	uint64_t mtime_ns;      /* st_mtim as ns since the epoch */
};

#define DP_MAX_CALLCHAIN 1024u
/* A SAMPLE's user stack (format 1.4): at most this many bytes, as the
 * kernel's sample_stack_user (< USHRT_MAX, a multiple of 8). */
#define DP_MAX_USTACK 65528u
/* perf's register ABI of the user registers (PERF_SAMPLE_REGS_ABI_*) */
#define DP_UREGS_ABI_32 1u
#define DP_UREGS_ABI_64 2u
/* perf's x86-64 register numbers (PERF_REG_X86_*) that readers name */
#define DP_X86_REG_BP 6u
#define DP_X86_REG_SP 7u
#define DP_X86_REG_IP 8u

/* SAMPLE: one sample in the current domain. The fields up to has_asid
 * are in the order of the record's fixed part on disk, and the optional
 * ones (zero when absent) follow together: the reader fills a sample with
 * a few wide copies (docs/file-format.md, "Decoding speed"). */
struct dp_sample {
	uint64_t time;          /* ns, CLOCK_MONOTONIC-like (perf clock) */
	uint64_t ip;
	uint64_t period;
	uint32_t pid, tid;
	uint32_t cpu;           /* cpu, or vcpu index for a VM domain */
	uint16_t event;         /* dp_event.id */
	uint8_t mode;           /* enum dp_mode */
	bool has_asid;
	uint64_t asid;          /* address-space id (guest cr3) if has_asid */
	uint32_t nr_callchain;  /* 0 = no call chain */
	const uint64_t *callchain; /* innermost first; borrowed (see reader) */
	/*
	 * The task's user registers and the top of its user stack at the
	 * sample, for unwinding user space with DWARF at report time
	 * (format 1.4; `record --call-graph dwarf`: perf's REGS_USER and
	 * STACK_USER). Absent (has_uregs false) in every other sample. With
	 * has_uregs, uregs holds one value per bit of uregs_mask in
	 * ascending bit order (bits are perf's register numbers of the
	 * recording's architecture, PERF_REG_X86_* on x86-64: ip is bit 8,
	 * sp bit 7, bp bit 6), and ustack the ustack_len bytes of stack the
	 * kernel copied from sp upwards (ustack_len <= ustack_size, the size
	 * asked for, <= DP_MAX_USTACK; ustack_len == ustack_size can mean the
	 * stack went on). uregs and ustack are borrowed like callchain: the
	 * caller's for the writer, the reader's until its next call. The
	 * writer refuses (-EINVAL, nothing written) a NULL uregs with a
	 * non-zero mask, a NULL ustack with a non-zero length, or
	 * ustack_len > ustack_size > DP_MAX_USTACK.
	 */
	bool has_uregs;
	uint32_t uregs_abi;     /* DP_UREGS_ABI_* (any value is data) */
	uint64_t uregs_mask;
	const uint64_t *uregs;  /* popcount(uregs_mask) values */
	uint32_t ustack_size;   /* bytes asked for (the recording's SIZE) */
	uint32_t ustack_len;    /* bytes stored */
	const uint8_t *ustack;
	/* Reader only: of ustack_len, the bytes the file took from the
	 * thread's previous stack in the chunk (1.5 delta form: ustack is
	 * then the reader's, rebuilt); 0 for a stack stored whole. The
	 * writer ignores it (dp_writer_opts.ustack_delta decides). */
	uint32_t ustack_ref;
	/* Reader only: the record has a call chain that the reader did not
	 * hand out (DP_READ_NO_CHAINS: nr_callchain is then 0 and callchain
	 * NULL). A load that keeps no chains still says the file has them. */
	bool chain_omitted;
};

/* Registers in a sample's uregs: popcount of its mask. */
static inline uint32_t dp_uregs_count(uint64_t mask)
{
	return (uint32_t)__builtin_popcountll(mask);
}

/* The value of register `reg` (perf's number) in s->uregs; false when
 * the sample has no user registers or the mask lacks it. */
static inline bool dp_sample_ureg(const struct dp_sample *s, unsigned reg, uint64_t *val)
{
	if (!s->has_uregs || reg >= 64 || !(s->uregs_mask >> reg & 1))
		return false;
	*val = s->uregs[dp_uregs_count(s->uregs_mask & ((1ull << reg) - 1))];
	return true;
}

struct dp_lost {
	uint64_t count;
	uint32_t source;        /* enum dp_lost_source */
	uint32_t where;         /* cpu or domain id */
};

/* SYMTAB: an embedded symbol table blob (stored zstd-compressed). */
struct dp_symtab {
	uint32_t kind;          /* enum dp_symtab_kind */
	const char *name;       /* "kallsyms", a path, or a build-id in hex */
	const uint8_t *data;    /* uncompressed bytes; see reader for lifetime.
				 * NULL when the reader keeps SYMTABs stored
				 * (DP_READ_SYMTAB_STORED) and the blob is compressed */
	size_t size;            /* uncompressed size (also when data is NULL) */
};

/*
 * COUNTERS (format 1.3): named counters of the current domain, e.g. how
 * the passive source's call-chain unwinds ended. Values are totals over
 * the recording: every COUNTERS record of a domain adds to them (also a
 * name repeated inside one record), so a writer may flush its counts in
 * several records and `merge`, which copies records, keeps them right.
 * Names are 1..DP_MAX_COUNTER_NAME bytes of [a-z0-9._-]; a record holds
 * at most DP_MAX_COUNTERS of them. The format gives no name a meaning;
 * docs/file-format.md lists the names in use.
 */
#define DP_MAX_COUNTERS 256u      /* per record */
#define DP_MAX_COUNTER_NAME 64u   /* bytes, no NUL on disk */

struct dp_counter {
	const char *name;       /* NUL-terminated */
	uint64_t value;
};

struct dp_counters {
	uint32_t n;
	const struct dp_counter *c; /* borrowed: the caller's (writer), the reader's (see dp_record) */
};

/* STATS flags */
#define DP_STATS_ERROR 1u       /* the recording ended by an error */
#define DP_STATS_INCOMPLETE 2u  /* made (merged) from a recording that was
				 * itself incomplete (had no STATS record) */

/* STATS: totals written at the end of a recording. */
struct dp_stats {
	uint64_t samples;
	uint64_t lost;
	uint64_t start_time, end_time; /* ns */
	uint64_t wall_ns;
	uint32_t exit_status;   /* of the profiled command, or 0 */
	uint32_t flags;         /* DP_STATS_* */
	/* Since format 1.1, filled by the writer itself (what a caller puts
	 * here is ignored): records and SAMPLE records in the file before
	 * this STATS record. The reader compares them with what it read. */
	bool has_totals;        /* reader: the record carried them */
	uint64_t records;
	uint64_t sample_records;
};

/* File header contents. */
struct dp_header {
	uint16_t major, minor;
	uint64_t created_ns;    /* CLOCK_REALTIME at creation */
	uint32_t ncpus;
	const char *hostname;
	const char *release;
	const char *cpu_desc;
	const char *cmdline;    /* arguments joined by single spaces */
	/* NULL for a domprof file; for a perf.data read in its place
	 * (docs/perfdata.md) a one-line description of it: "perf.data
	 * (perf 6.1.187, x86_64)", with ", pipe mode" for `perf record -o -`. */
	const char *source;
};

/* ---- Writer ------------------------------------------------------- */

struct dp_writer;

struct dp_writer_opts {
	size_t chunk_bytes;     /* flush when the raw payload reaches this; 0 = 1 MiB */
	uint64_t chunk_ns;      /* also flush when this much CLOCK_MONOTONIC time passed since the chunk began; 0 = never */
	int zstd_level;         /* 0 = store uncompressed; >0 compresses chunks */
	/* Store a sample's user stack in delta form (format 1.5) where it
	 * repeats the previous stack of its thread in the chunk: only the
	 * bytes that differ (docs/file-format.md, "User stacks in delta
	 * form"). Readers give the same stack either way. */
	bool ustack_delta;
};

/* What record, merge and import put in ustack_delta: true, unless the
 * environment has DOMPROF_USTACK_DELTA=0 (files in the 1.4 encoding, for
 * comparing the two). */
bool dp_ustack_delta_wanted(void);

/*
 * Create FD-backed writer. fd is owned by the writer from here on (closed
 * by dp_writer_finish/dp_writer_free). The header is written at once.
 * Returns NULL and sets *err (a negative errno) on failure.
 */
struct dp_writer *dp_writer_new(int fd, const struct dp_header *hdr,
				const struct dp_writer_opts *opts, int *err);

/*
 * Append records. Each call encodes into the current chunk and flushes it
 * when full. `domain` is the domain the record belongs to: the writer
 * inserts a DOMAIN_SWITCH whenever it differs from the chunk's current
 * domain (host at every chunk start), so callers never write switches.
 * DOMAIN, EVENT, STATS and LOST records are not domain-scoped and ignore
 * the switch state. Returns 0, or a negative errno from a failed write
 * (the writer is then in error; later calls return the same error).
 */
int dp_write_event(struct dp_writer *w, const struct dp_event *ev);
int dp_write_domain(struct dp_writer *w, const struct dp_domain *d);
int dp_write_task(struct dp_writer *w, uint32_t domain, const struct dp_task *t);
int dp_write_mmap(struct dp_writer *w, uint32_t domain, const struct dp_mmap *m);
int dp_write_sample(struct dp_writer *w, uint32_t domain, const struct dp_sample *s);
/* The record dp_write_sample writes for s, whole (the user stack never
 * in delta form): its length in bytes, written to buf when it is at most
 * cap; 0 for a sample the writer refuses. For relaying a sample as one
 * record (the agent). */
size_t dp_sample_encode(const struct dp_sample *s, void *buf, size_t cap);
int dp_write_lost(struct dp_writer *w, const struct dp_lost *l);
int dp_write_symtab(struct dp_writer *w, uint32_t domain, const struct dp_symtab *st);
int dp_write_stats(struct dp_writer *w, const struct dp_stats *st);
/* One COUNTERS record of c->n counters for `domain` (domain-scoped, like
 * SAMPLE). -EINVAL, and nothing written (the writer stays usable), when
 * c->n > DP_MAX_COUNTERS, c->c is NULL with n > 0, or a name is NULL,
 * empty, longer than DP_MAX_COUNTER_NAME or holds a byte outside
 * [a-z0-9._-]. n == 0 writes nothing and returns 0. */
int dp_write_counters(struct dp_writer *w, uint32_t domain, const struct dp_counters *c);
/* Copy one raw record (as returned by the reader in dp_record.raw) into
 * the stream under `domain`. Used by merge and the agent relay. A STATS
 * record copied this way keeps the totals of the file it came from (a
 * reader then reports them as not matching): write STATS with
 * dp_write_stats. */
int dp_write_raw(struct dp_writer *w, uint32_t domain, const void *raw, size_t len);

/* Flush the current chunk now (no-op if empty). */
int dp_writer_flush(struct dp_writer *w);
/* Flush the open chunk if it is older than opts.chunk_ns. Appends check
 * this every 256 records; a recorder calls it from its loop as well, so a
 * slow trickle of records still reaches the disk within chunk_ns. */
int dp_writer_tick(struct dp_writer *w);
/* Flush, fsync and close. Returns 0 or the first error seen. Frees w. */
int dp_writer_finish(struct dp_writer *w);
/* Close without flushing the open chunk (used after a fatal error). */
void dp_writer_free(struct dp_writer *w);

/* Counters, for the recorder's summary line. */
uint64_t dp_writer_bytes(const struct dp_writer *w);
uint64_t dp_writer_records(const struct dp_writer *w);
/* Sum of the counts of every LOST record written so far (any source). */
uint64_t dp_writer_lost(const struct dp_writer *w);
/* SAMPLE records written so far (also those copied with dp_write_raw). */
uint64_t dp_writer_samples(const struct dp_writer *w);

/* ---- Reader ------------------------------------------------------- */

struct dp_reader;

/* One decoded record. Pointers (strings, callchain, counters, raw, symtab data) are
 * borrowed from the reader and valid until the next dp_reader_next call,
 * or (for SYMTAB data) until the next chunk is entered: copy what you keep. */
struct dp_record {
	uint16_t type;          /* enum dp_rec_type, or an unknown tag */
	uint32_t domain;        /* decoder state: domain current at this record */
	uint64_t chunk_offset;  /* file offset of the chunk holding it */
	/* The whole record as on disk (header included). NULL (raw_len 0)
	 * for a SAMPLE whose user stack is in delta form (1.5): it refers
	 * to earlier records of its chunk, so it is no record by itself:
	 * copy it with dp_write_sample, or dp_sample_encode. */
	const void *raw;
	uint32_t raw_len;
	/* Samples this record stands for: 1, or for a group of samples
	 * (DP_READ_GROUPS) their number */
	uint32_t weight;
	union {
		struct dp_event event;
		struct dp_domain domain;
		struct dp_task task;
		struct dp_mmap mmap;
		struct dp_sample sample;
		struct dp_lost lost;
		struct dp_symtab symtab;
		struct dp_stats stats;
		struct dp_counters counters;  /* names NUL-terminated copies */
		uint32_t switch_to;  /* DOMAIN_SWITCH */
	} u;
	/* SYMTAB only: the blob as stored in the file, with the same lifetime
	 * as u.symtab.data (see DP_READ_SYMTAB_STORED). */
	uint32_t symtab_compression;  /* 0 = stored as is, 1 = one zstd frame of u.symtab.size bytes */
	const uint8_t *symtab_stored;
	size_t symtab_stored_size;
};

/* A damage event found while reading, for `info` and warnings. */
struct dp_damage {
	uint64_t offset;        /* file offset where it was found */
	uint64_t bytes_lost;    /* bytes skipped because of it */
	char what[128];         /* "bad CRC in chunk", "file truncated", ... */
};

/*
 * Open and map `path`, validate the header. On failure returns NULL,
 * *err = negative errno or one of DP_ERR_*, and msg (if not NULL,
 * msglen bytes) gets a one-line reason without a trailing newline.
 */
#define DP_ERR_NOT_DOMPROF  (-1001)
#define DP_ERR_VERSION      (-1002)
#define DP_ERR_BAD_HEADER   (-1003)
struct dp_reader *dp_reader_open(const char *path, int *err, char *msg, size_t msglen);
/* Same over a caller-owned memory buffer (fuzzing, tests). buf must
 * outlive the reader. */
struct dp_reader *dp_reader_open_mem(const void *buf, size_t len, int *err,
				     char *msg, size_t msglen);
void dp_reader_free(struct dp_reader *r);

/* Reader options (dp_reader_set_flags; none by default). */
#define DP_READ_SYMTAB_STORED 1u  /* do not decompress SYMTAB blobs: data is
				   * NULL for a compressed one, and the caller
				   * decompresses `stored` if and when needed (a
				   * kallsyms is ~5 MB of text, ~1 MB stored) */
#define DP_READ_NO_CHAINS 2u      /* hand out no call chains: every sample comes
				   * with nr_callchain 0 and callchain NULL, and
				   * chain_omitted set when it had one (its
				   * length is still checked). For loads that
				   * keep no chains (analysis/profile.c,
				   * reader_options): the place a chain encoding
				   * that is costly to decode can skip them */
/* DP_READ_GROUPS: for readers that count samples. A run of samples
 * without a user stack between
 * two records other than samples and DOMAIN_SWITCH may come as groups:
 * one SAMPLE record per set of the run's samples alike in domain, ip,
 * pid, mode, event, asid and call chain (with DP_READ_NO_CHAINS: in
 * having one), and in tid and cpu with
 * DP_READ_GROUP_TID / DP_READ_GROUP_CPU. Its weight is how many samples
 * it stands for, its period their sum (mod 2^64), every other field its
 * first sample's (time among them), raw NULL; it comes where its first
 * sample was. Records of other types, samples with a user stack and
 * damage come as without the flag, and the samples counted are the
 * same, on any number of threads: the digest of a chunk (format/digest.h)
 * is made by the worker that decompressed it, else by the reader's
 * thread (a chunk of over 16 MiB decoded comes sample by sample). Not
 * for a reader that needs each sample's time or raw bytes. */
#define DP_READ_GROUPS 4u
#define DP_READ_GROUP_TID 8u
#define DP_READ_GROUP_CPU 16u
/* DP_READ_VERIFY_COUNTS: the two views of a chunk with a counts part
 * (format 1.6, docs/file-format.md "Counts part") are both decoded and
 * compared: its records and the part (format/counts.h cnt_agrees). A
 * part that disagrees with the records, or that is flagged but does not
 * hold up, is damage ("counts part of chunk at offset N ..."; nothing is
 * skipped: bytes_lost 0). The records are what is read then, always
 * (they are the authoritative view), with DP_READ_GROUPS too: its groups
 * come from digests of the records, never from a part. Costs a counting
 * read the parts' gain and the part's decoding besides: for info, dump,
 * merge and report --verify. */
#define DP_READ_VERIFY_COUNTS 32u
void dp_reader_set_flags(struct dp_reader *r, unsigned flags);

/*
 * Decode chunks on n threads (the caller's and n - 1 workers; n <= 1:
 * the caller's alone, the default; at most DP_READ_THREADS_MAX). Workers
 * check the CRCs of the chunks ahead and decompress them; the caller's
 * thread still walks the file and returns the records, so what
 * dp_reader_next returns (records, their order, damage) is the same for
 * every n. Costs up to 64 MiB of decoded chunks ahead. Returns 0,
 * -EAGAIN when no worker could be started (the reader then reads alone),
 * or -EBUSY (nothing changed) when workers run and a chunk is open: call
 * it before the first dp_reader_next or after a rewind. dp_reader_free
 * stops the workers.
 */
#define DP_READ_THREADS_MAX 64u
int dp_reader_set_threads(struct dp_reader *r, unsigned n);

const struct dp_header *dp_reader_header(const struct dp_reader *r);

/*
 * Next record: returns 1 and fills *rec, 0 at end of file. Damage never
 * stops iteration: a bad chunk is skipped and recorded as dp_damage, and
 * reading resumes at the next valid chunk. In a 1.1 file a chunk whose
 * sequence number was already read is skipped (damage), one out of order
 * is read (damage), numbers never seen are damage at the end of the file,
 * and STATS totals that differ from the records read are damage. A
 * record whose bytes do not decode (too short for its tag; a COUNTERS
 * record with more than DP_MAX_COUNTERS entries, an entry running past
 * the record, a name of bad length or bytes) is skipped and counted as
 * damage.
 * Unknown tags are returned with type set and only raw filled: callers
 * skip them.
 */
int dp_reader_next(struct dp_reader *r, struct dp_record *rec);
/* Restart from the first chunk (damage list is kept, not duplicated). */
void dp_reader_rewind(struct dp_reader *r);

/* Damage found so far (complete after the first full pass). */
size_t dp_reader_damage(const struct dp_reader *r, const struct dp_damage **out);
/* Progress: bytes of the file consumed so far, and total file size. */
uint64_t dp_reader_pos(const struct dp_reader *r);
uint64_t dp_reader_size(const struct dp_reader *r);
uint64_t dp_reader_chunks(const struct dp_reader *r);
/* Of those chunks, how many carry a counts part (format 1.6: their flag;
 * whether a part is sound is found only by a counting read). */
uint64_t dp_reader_chunks_counts(const struct dp_reader *r);

/*
 * After a full pass: NULL when the recording is complete, else a one-line
 * reason (static storage) that it is not: it has no end-of-recording
 * STATS record (the recorder was killed, or its disk filled), or its
 * STATS says it was merged from such a recording. NULL as well before the
 * end of the file was reached. Not damage: nothing in the file is bad,
 * the end of the recording was never written.
 */
const char *dp_reader_incomplete(const struct dp_reader *r);

/*
 * True when the record at raw[0..len) (header included) is one the reader
 * decodes without calling it damage: its length fields are consistent and
 * it is long enough for its tag; a zstd SYMTAB blob is decompressed in a
 * 64 KiB window to confirm its stated size (a false size costs time, never
 * memory). Unknown tags pass. For code that relays records it did not
 * write (the agent source), so a peer cannot put damage into a file.
 */
bool dp_record_check(const void *raw, size_t len);

const char *dp_rec_type_name(uint16_t type);
const char *dp_mode_name(uint8_t mode);
const char *dp_domain_kind_name(uint8_t kind);
const char *dp_lost_source_name(uint32_t src);

/*
 * perf.data files (docs/perfdata.md). dp_reader_open and _open_mem read a
 * file starting with perf's magic "PERFILE2" as well: records come out
 * translated to domprof's (EVENT, DOMAIN, TASK, MMAP, SAMPLE, LOST,
 * STATS; no raw bytes: raw is NULL and raw_len 0, so they are copied
 * with the typed writers, never dp_write_raw), and the header has a
 * `source`. A perf kvm recording's guest samples become one passive
 * domain per guest machine (QEMU pid): dp_reader_perf_guest names one
 * and gives its kernel symbols (a kallsyms or System.map text, copied),
 * before the first read. -EINVAL for a domprof file or a bad kind.
 */
struct dp_perf_guest {
	uint32_t pid;           /* perf's key of the guest machine (the QEMU pid) */
	const char *name;       /* domain name, NULL for perf's "[guest/PID]" */
	uint32_t symtab_kind;   /* DP_SYMTAB_KALLSYMS or DP_SYMTAB_SYSMAP; 0: none */
	const uint8_t *syms;
	size_t syms_len;
};
bool dp_reader_is_perf(const struct dp_reader *r);
/* The host DOMAIN record of a perf.data says where its kernel symbols
 * come from in its symsrc: this machine's /proc/kallsyms when the file's
 * hostname and kernel release are this machine's, else none (a reader
 * must not name another kernel's samples with this one's table). */
#define DP_SYMSRC_PERF_LOCAL "live /proc/kallsyms (perf.data recorded on this host)"
#define DP_SYMSRC_PERF_FOREIGN "none for the kernel (perf.data recorded on another host)"
int dp_reader_perf_guest(struct dp_reader *r, const struct dp_perf_guest *g);
/* After a full pass: NULL, or one line saying what of a perf.data was not
 * understood and skipped (unknown record types, features of a newer
 * perf, another byte order's parts), static until the reader is freed. */
const char *dp_reader_note(const struct dp_reader *r);

/* Fill a header with this machine's hostname, release, cpu, ncpus, time
 * and the given argv. Strings are static storage owned by the function
 * (valid for the process lifetime; not thread-safe). */
void dp_header_fill_local(struct dp_header *h, int argc, char **argv);

#endif
