// SPDX-License-Identifier: MIT
/*
 * The recordings of bench/scale: a host recording of SAMPLES samples
 * with the distributions of a busy machine, written with the real format
 * writer, so report, flamegraph, export and diff can be measured at 1M,
 * 10M and 100M samples without recording for hours.
 *
 * What it holds, all seeded (the same file on every run of one size):
 *  - this machine's kernel: /proc/kallsyms embedded and [kernel.kallsyms]
 *    mapped, kernel frames at real function addresses (30% of samples
 *    are in the kernel, 1 to 8 kernel frames under their user frames);
 *  - 64 long-lived processes, each mapping 4 to 8 real shared libraries
 *    of this machine (libc, libstdc++, libz, libcrypto, ...) at its own
 *    bases, user frames at addresses inside their text, so symbols are
 *    resolved from real ELF files as in a real report;
 *  - stacks drawn from a fixed universe: 2000 template stacks a process,
 *    depth 2 to 40 (geometric, mean ~10), chosen with a Zipf(1.1)
 *    distribution, and the leaf moved by one of 8 small offsets: hot
 *    paths dominate and the tail keeps adding distinct stacks and
 *    addresses slowly, as on a real machine;
 *  - short-lived processes: one starts every 200,000 samples (a TASK
 *    COMM, its mappings), takes 1% of the samples with 200 stacks of its
 *    own for 400,000 samples and exits (a TASK EXIT): distinct processes,
 *    stacks and keys grow with the recording's length, as they do on a
 *    CI machine;
 *  - 2 CPUs at 1 kHz each (a sample every 0.5 ms), cpu-clock, zstd
 *    chunks of 1 MiB as the recorder writes them; a STATS record.
 *
 * usage: gen-scale OUT SAMPLES [SEED]
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"

#define NLONG 64
#define NTEMPL 2000
#define NTEMPL_SHORT 200
#define MAXDEPTH 40
#define SHORT_EVERY 200000ull
#define SHORT_LIFE 400000ull

static uint64_t rng;
static uint64_t rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static uint32_t rnd(uint32_t n) { return (uint32_t)(rnd64() % n); }

/* ---- the machine's images -------------------------------------------- */

struct lib {
	const char *path;
	uint64_t vaddr, filesz, offset;   /* the executable PT_LOAD */
};

static const char *const lib_paths[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
	"/usr/lib/x86_64-linux-gnu/libssl.so.3", "/usr/lib/x86_64-linux-gnu/libm.so.6",
	"/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "/usr/lib/x86_64-linux-gnu/libxml2.so.2",
	"/usr/lib/x86_64-linux-gnu/liblzma.so.5", "/usr/lib/x86_64-linux-gnu/libelf.so.1",
	"/usr/lib/x86_64-linux-gnu/libdw.so.1", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
	"/usr/lib/x86_64-linux-gnu/libgcrypt.so.20",
};
#define NLIBPATHS (sizeof(lib_paths) / sizeof(lib_paths[0]))

static struct lib libs[NLIBPATHS];
static size_t nlibs;

/* The executable PT_LOAD of an ELF64 file, read by hand (elf.h only). */
static int read_lib(const char *path, struct lib *l)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	void *m = fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr)
		  ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	const Elf64_Ehdr *eh = m;
	int ret = -1;
	if (!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= (uint64_t)st.st_size) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)m + eh->e_phoff);
		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && ph[i].p_filesz > 4096) {
				*l = (struct lib){ path, ph[i].p_vaddr, ph[i].p_filesz, ph[i].p_offset };
				ret = 0;
				break;
			}
	}
	munmap(m, (size_t)st.st_size);
	return ret;
}

static char *ksyms;
static size_t ksyms_len;
static uint64_t *kfuncs, kstart, kend;
static size_t nkfuncs;

static void read_kernel(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t cap = 0;
	char line[512];
	if (!f)
		return;
	ksyms = malloc(cap = 16u << 20);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		if (ksyms_len + n > cap)
			ksyms = realloc(ksyms, cap *= 2);
		memcpy(ksyms + ksyms_len, line, n);
		ksyms_len += n;
		unsigned long long a;
		char t, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 && a && (t == 't' || t == 'T') &&
		    !strchr(line, '[')) {
			if (!strcmp(name, "_stext"))
				kstart = a;
			else if (!strcmp(name, "_etext"))
				kend = a;
			else if (nkfuncs < 200000) {
				kfuncs = realloc(kfuncs, (nkfuncs + 1) * sizeof(*kfuncs));
				kfuncs[nkfuncs++] = a;
			}
		}
	}
	fclose(f);
	if (!kstart || !kend || nkfuncs < 100) {
		nkfuncs = 0;   /* no right to read kernel addresses: user samples only */
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < nkfuncs; i++)
		if (kfuncs[i] >= kstart && kfuncs[i] < kend)
			kfuncs[k++] = kfuncs[i];
	nkfuncs = k;
}

/* ---- processes and their stacks --------------------------------------- */

struct map { const struct lib *lib; uint64_t base; };

struct proc {
	uint32_t pid;
	char comm[16];
	struct map maps[8];
	unsigned nmaps;
	unsigned ntempl;
	uint64_t (*templ)[MAXDEPTH];   /* frames innermost first */
	uint8_t *depth;
	uint8_t *kernel_frames;        /* how many of the first frames are kernel */
	double *cdf;                   /* Zipf over the templates */
	uint64_t born, dies;           /* short-lived: sample indexes */
	bool alive;
};

/* A user address in the process: one of 4096 spots of one of its libs. */
static uint64_t user_addr(const struct proc *p)
{
	const struct map *m = &p->maps[rnd(p->nmaps)];
	uint64_t spot = rnd(4096) * (m->lib->filesz / 4096);
	return m->base + (m->lib->vaddr & 0xfffull) + spot;
}

static void make_templates(struct proc *p, unsigned n)
{
	p->ntempl = n;
	p->templ = calloc(n, sizeof(*p->templ));
	p->depth = calloc(n, 1);
	p->kernel_frames = calloc(n, 1);
	p->cdf = calloc(n, sizeof(double));
	double sum = 0;
	for (unsigned t = 0; t < n; t++) {
		unsigned d = 2;
		while (d < MAXDEPTH && rnd(10) < 9 && (d < 4 || rnd(10) < 8))
			d++;
		unsigned k = nkfuncs && rnd(10) < 3 ? 1 + rnd(d < 8 ? d - 1 : 8) : 0;
		p->depth[t] = (uint8_t)d;
		p->kernel_frames[t] = (uint8_t)k;
		for (unsigned i = 0; i < d; i++)
			p->templ[t][i] = i < k ? kfuncs[rnd((uint32_t)nkfuncs)] + 4 * rnd(16) : user_addr(p);
		sum += 1.0 / pow(t + 1, 1.1);
		p->cdf[t] = sum;
	}
	for (unsigned t = 0; t < n; t++)
		p->cdf[t] /= sum;
}

static unsigned pick(const double *cdf, unsigned n)
{
	double u = (double)(rnd64() >> 11) / 9007199254740992.0;
	unsigned lo = 0, hi = n - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void new_proc(struct proc *p, uint32_t pid, const char *prefix, unsigned idx, unsigned ntempl)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s%u", prefix, idx);
	p->nmaps = 4 + rnd(5);
	if (p->nmaps > nlibs)
		p->nmaps = (unsigned)nlibs;
	unsigned first = rnd((uint32_t)nlibs);
	for (unsigned i = 0; i < p->nmaps; i++) {
		p->maps[i].lib = &libs[(first + i) % nlibs];
		p->maps[i].base = 0x7f0000000000ull + (uint64_t)rnd(1u << 20) * 0x100000ull;
	}
	make_templates(p, ntempl);
	p->alive = true;
}

static void free_proc(struct proc *p)
{
	free(p->templ);
	free(p->depth);
	free(p->kernel_frames);
	free(p->cdf);
	p->templ = NULL;
	p->alive = false;
}

static int write_proc(struct dp_writer *w, const struct proc *p, uint64_t t)
{
	struct dp_task tk = { .kind = DP_TASK_COMM, .pid = p->pid, .tid = p->pid, .time = t, .comm = p->comm };
	int r = dp_write_task(w, DP_HOST_DOMAIN, &tk);
	for (unsigned i = 0; !r && i < p->nmaps; i++) {
		const struct lib *l = p->maps[i].lib;
		struct dp_mmap m = {
			.pid = p->pid, .start = p->maps[i].base, .len = (l->filesz + 0xfff + (l->vaddr & 0xfff)) & ~0xfffull,
			.pgoff = l->offset & ~0xfffull, .time = t, .path = l->path,
		};
		r = dp_write_mmap(w, DP_HOST_DOMAIN, &m);
	}
	return r;
}

static int write_sample(struct dp_writer *w, const struct proc *p, uint64_t t, uint32_t cpu)
{
	unsigned k = pick(p->cdf, p->ntempl);
	uint64_t chain[MAXDEPTH];
	unsigned d = p->depth[k];
	memcpy(chain, p->templ[k], d * sizeof(uint64_t));
	chain[0] += 2 * rnd(8);   /* the leaf moves a little */
	struct dp_sample s = {
		.time = t, .ip = chain[0], .period = 1000000, .pid = p->pid, .tid = p->pid, .cpu = cpu,
		.mode = p->kernel_frames[k] ? DP_MODE_KERNEL : DP_MODE_USER,
		.nr_callchain = d, .callchain = chain,
	};
	return dp_write_sample(w, DP_HOST_DOMAIN, &s);
}

/* ---- the file ----------------------------------------------------------- */

static int write_meta(struct dp_writer *w, uint64_t t0)
{
	struct dp_domain host = { .id = 0, .kind = DP_DOMAIN_HOST, .vcpus = 2, .name = "host",
				  .address = "", .symsrc = "embedded" };
	struct dp_event ev = { .id = 0, .type = 1, .config = 0, .period = 1000, .freq = true, .name = "cpu-clock" };
	int r = dp_write_domain(w, &host);
	if (!r)
		r = dp_write_event(w, &ev);
	if (!r && nkfuncs) {
		struct dp_symtab st = { .kind = DP_SYMTAB_KALLSYMS, .name = "kallsyms",
					.data = (const uint8_t *)ksyms, .size = ksyms_len };
		r = dp_write_symtab(w, DP_HOST_DOMAIN, &st);
		struct dp_mmap km = { .pid = UINT32_MAX, .start = kstart, .len = kend - kstart, .time = t0,
				      .path = "[kernel.kallsyms]" };
		if (!r)
			r = dp_write_mmap(w, DP_HOST_DOMAIN, &km);
	}
	return r;
}

static int generate(struct dp_writer *w, uint64_t n)
{
	const uint64_t t0 = 1000000000000ull, step = 500000;   /* 2 CPUs x 1 kHz */
	struct proc *lp = calloc(NLONG, sizeof(*lp));
	struct proc sp[4];   /* short-lived, at most 2 alive at a time */
	memset(sp, 0, sizeof(sp));
	uint32_t next_pid = 100000, nshort = 0;
	int r = write_meta(w, t0);
	for (unsigned i = 0; !r && i < NLONG; i++) {
		new_proc(&lp[i], 1000 + i, "svc", i, NTEMPL);
		r = write_proc(w, &lp[i], t0);
	}
	/* process shares: Zipf too (a few busy services) */
	double pcdf[NLONG], sum = 0;
	for (unsigned i = 0; i < NLONG; i++) {
		sum += 1.0 / pow(i + 1, 0.8);
		pcdf[i] = sum;
	}
	for (unsigned i = 0; i < NLONG; i++)
		pcdf[i] /= sum;
	for (uint64_t i = 0; !r && i < n; i++) {
		uint64_t t = t0 + i * step;
		if (i % SHORT_EVERY == 0) {
			struct proc *s = &sp[nshort % 4];
			if (s->templ)
				free_proc(s);
			new_proc(s, next_pid++, "job", nshort++, NTEMPL_SHORT);
			s->born = i;
			s->dies = i + SHORT_LIFE;
			r = write_proc(w, s, t);
		}
		for (unsigned k = 0; k < 4 && !r; k++)
			if (sp[k].alive && sp[k].dies == i) {
				struct dp_task ex = { .kind = DP_TASK_EXIT, .pid = sp[k].pid, .tid = sp[k].pid, .time = t };
				r = dp_write_task(w, DP_HOST_DOMAIN, &ex);
				sp[k].alive = false;
			}
		if (r)
			break;
		const struct proc *p = NULL;
		if (rnd(100) == 0)
			for (unsigned k = 0; k < 4 && !p; k++)
				if (sp[(i + k) % 4].alive)
					p = &sp[(i + k) % 4];
		if (!p)
			p = &lp[pick(pcdf, NLONG)];
		r = write_sample(w, p, t, (uint32_t)(i & 1));
	}
	if (!r) {
		struct dp_stats st = { .samples = n, .start_time = t0, .end_time = t0 + n * step,
				       .wall_ns = n * step };
		r = dp_write_stats(w, &st);
	}
	for (unsigned i = 0; i < NLONG; i++)
		free_proc(&lp[i]);
	for (unsigned k = 0; k < 4; k++)
		free_proc(&sp[k]);
	free(lp);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: gen-scale OUT SAMPLES [SEED]\n");
		return 2;
	}
	char *end;
	unsigned long long n = strtoull(argv[2], &end, 10);
	if (*end || n > (1ull << 40)) {
		fprintf(stderr, "gen-scale: bad SAMPLES '%s'\n", argv[2]);
		return 2;
	}
	rng = argc == 4 ? strtoull(argv[3], NULL, 0) | 1 : 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < NLIBPATHS; i++)
		if (read_lib(lib_paths[i], &libs[nlibs]) == 0)
			nlibs++;
	if (!nlibs) {
		fprintf(stderr, "gen-scale: none of the shared libraries it maps is on this machine\n");
		return 1;
	}
	read_kernel();
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "gen-scale: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	char *hargv[] = { "gen-scale", argv[1], argv[2] };
	struct dp_header hdr;
	dp_header_fill_local(&hdr, 3, hargv);
	hdr.ncpus = 2;
	struct dp_writer_opts wo = { .chunk_bytes = 0, .chunk_ns = 0, .zstd_level = 1 };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &hdr, &wo, &err);
	if (!w) {
		fprintf(stderr, "gen-scale: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	int r = generate(w, n);
	int fr = dp_writer_finish(w);
	if (r || fr) {
		fprintf(stderr, "gen-scale: writing %s: %s\n", argv[1], strerror(-(r ? r : fr)));
		return 1;
	}
	fprintf(stderr, "gen-scale: %s: %llu samples, %zu libraries, %zu kernel functions\n", argv[1], n,
		nlibs, nkfuncs);
	free(ksyms);
	free(kfuncs);
	return 0;
}
