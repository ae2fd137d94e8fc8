// SPDX-License-Identifier: MIT
/*
 * The kernel symbol index of this machine's kallsyms and its cache file
 * (kcache.h). The index builder is also the recorder's (sideband.c).
 */
#include "symbols/kcache.h"
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/ksymidx.h"
#include "util/cachedir.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/le.h"
#include "util/sha256.h"
#include "util/xalloc.h"

static int cmp_ksym(const void *pa, const void *pb)
{
	const struct dp_ksym *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* equal addresses keep the text's order: names point into it */
	return a->name < b->name ? -1 : a->name > b->name;
}

/* The core kernel comes sorted, modules are listed per module: a sort
 * only when needed. */
uint8_t *ksyms_index_build(const char *ks, size_t len, int level, size_t *outlen, size_t *odd)
{
	struct dp_ksym *v = NULL;
	size_t n = 0, cap = 0, nodd = 0;
	const char **mods = NULL;
	uint32_t *modlens = NULL;
	size_t nmods = 0, cmods = 0, cml = 0;
	uint32_t last_mod = 0;
	const char *p = ks, *end = ks + len;
	struct kallsyms_line l;
	int r;
	bool sorted = true;
	while ((r = kallsyms_next(&p, end, 0, &l)) != KALLSYMS_END) {
		if (r != KALLSYMS_LINE) {
			nodd++;
			continue;
		}
		if (!l.addr && dp_ksym_text(l.type, 1))
			nodd++;
		uint32_t mod = 0;
		if (l.mod) {
			/* a module's lines are together: the last one first */
			if (!(last_mod && modlens[last_mod - 1] == l.modlen &&
			      !memcmp(mods[last_mod - 1], l.mod, l.modlen))) {
				last_mod = 0;
				for (size_t i = 0; i < nmods && !last_mod; i++)
					if (modlens[i] == l.modlen && !memcmp(mods[i], l.mod, l.modlen))
						last_mod = (uint32_t)i + 1;
				if (!last_mod && nmods < DP_KSYMIDX_MODS_MAX &&
				    l.modlen <= DP_KSYMIDX_MOD_NAME_MAX) {
					if (nmods == cmods)
						xgrow((void **)&mods, &cmods, nmods + 1, sizeof(*mods));
					if (nmods == cml)
						xgrow((void **)&modlens, &cml, nmods + 1, sizeof(*modlens));
					mods[nmods] = l.mod;
					modlens[nmods] = (uint32_t)l.modlen;
					last_mod = (uint32_t)++nmods;
				}
			}
			if (!last_mod) {
				nodd++;
				continue;    /* more modules than the index holds */
			}
			mod = last_mod;
		}
		if (n == cap)
			xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		if (n && l.addr < v[n - 1].addr)
			sorted = false;
		v[n++] = (struct dp_ksym){ l.addr, l.name,
					   l.namelen > UINT32_MAX ? UINT32_MAX : (uint32_t)l.namelen, mod,
					   l.type };
	}
	if (!sorted)
		qsort(v, n, sizeof(*v), cmp_ksym);
	uint8_t *out = NULL;
	size_t dropped = 0;
	if (dp_ksymidx_encode(v, n, mods, modlens, nmods, level, &out, outlen, &dropped) < 0)
		out = NULL;
	free(v);
	free(mods);
	free(modlens);
	if (odd)
		*odd = nodd + dropped;
	return out;
}

int kcache_mode(void)
{
	return cache_mode("DOMPROF_KSYM_CACHE");
}

/* A small /proc or /sys file, whole (at most max bytes). */
static char *small_file(const char *path, size_t max, size_t *len)
{
	char *buf;
	return file_read_all(path, max, &buf, len) == 0 ? buf : NULL;
}

int kcache_running_buildid(uint8_t id[20])
{
	size_t len;
	char *buf;
	int e = file_read_all("/sys/kernel/notes", 64 << 10, &buf, &len);
	if (e < 0)
		return e;
	const uint8_t *p = (const uint8_t *)buf;
	size_t off = 0;
	int r = -ENOENT;
	/* ELF notes: namesz, descsz, type, then name and desc, each padded to 4 */
	while (len - off >= 12) {
		uint32_t nsz = get32(p + off), dsz = get32(p + off + 4), type = get32(p + off + 8);
		size_t na = ((size_t)nsz + 3) & ~(size_t)3, da = ((size_t)dsz + 3) & ~(size_t)3;
		off += 12;
		if (na > len - off || da > len - off - na)
			break;
		if (type == 3 && nsz == 4 && !memcmp(p + off, "GNU", 4) && dsz >= 1 && dsz <= 20) {
			memcpy(id, p + off + na, dsz);
			r = (int)dsz;
			break;
		}
		off += na + da;
	}
	free(buf);
	return r;
}

/* The ids of the loaded BPF programs (their symbols are in kallsyms, as
 * module [bpf]) into the hash. An id is never reused while ids last, so
 * the list names the set. -EPERM without the right to list them. */
static int hash_bpf_ids(struct sha256 *c)
{
	union bpf_attr a;
	uint32_t id = 0, n = 0;
	for (n = 0; n < (1u << 22); n++) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &a, sizeof(a)) < 0) {
			if (errno == ENOENT)
				break;    /* no more */
			if (errno == ENOSYS && !n)
				break;    /* no BPF in this kernel: none loaded */
			return -errno;
		}
		id = a.next_id;
		sha256_update(c, &id, sizeof(id));
	}
	sha256_update(c, &n, sizeof(n));
	return 0;
}

int kcache_key_live(struct kcache_key *k, const char *modules, size_t modlen, char *why,
		    size_t whylen)
{
	memset(k, 0, sizeof(*k));
	int r = kcache_running_buildid(k->buildid);
	if (r < 0) {
		snprintf(why, whylen, "no build-id in /sys/kernel/notes");
		return r;
	}
	k->buildid_len = (uint8_t)r;
	size_t blen, klen;
	char *boot = small_file("/proc/sys/kernel/random/boot_id", 256, &blen);
	char *kptr = small_file("/proc/sys/kernel/kptr_restrict", 256, &klen);
	if (!boot || blen < 32 || !kptr) {
		free(boot);
		free(kptr);
		snprintf(why, whylen, "boot_id or kptr_restrict unreadable");
		return -ENOENT;
	}
	struct sha256 c;
	sha256_init(&c);
	static const char tag[] = "domprof kernel symbol cache 1";
	sha256_update(&c, tag, sizeof(tag));
	sha256_update(&c, &k->buildid_len, 1);
	sha256_update(&c, k->buildid, k->buildid_len);
	uint64_t n = blen;
	sha256_update(&c, &n, 8);
	sha256_update(&c, boot, blen);
	n = klen;
	sha256_update(&c, &n, 8);
	sha256_update(&c, kptr, klen);
	uint32_t uid = (uint32_t)geteuid();
	sha256_update(&c, &uid, 4);
	n = modules ? modlen : 0;
	sha256_update(&c, &n, 8);
	if (modules)
		sha256_update(&c, modules, modlen);
	free(boot);
	free(kptr);
	if ((r = hash_bpf_ids(&c)) < 0) {
		snprintf(why, whylen, "BPF programs cannot be listed (%s)", strerror(-r));
		return r;
	}
	sha256_final(&c, k->key);
	return 0;
}

int kcache_key_file(struct kcache_key *k, const uint8_t *bid, size_t bidlen, const char *path,
		    char *why, size_t whylen)
{
	memset(k, 0, sizeof(*k));
	struct stat st;
	if (!bidlen || bidlen > 20 || stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: %s", path, bidlen ? strerror(errno ? errno : EINVAL) : "no build-id");
		return -ENOENT;
	}
	memcpy(k->buildid, bid, bidlen);
	k->buildid_len = (uint8_t)bidlen;
	k->perf_copy = true;
	struct sha256 c;
	sha256_init(&c);
	static const char tag[] = "domprof kernel symbol cache 1: perf copy";
	sha256_update(&c, tag, sizeof(tag));
	sha256_update(&c, &k->buildid_len, 1);
	sha256_update(&c, k->buildid, k->buildid_len);
	uint64_t f[8] = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			  (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
			  (uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec, (uint64_t)geteuid() };
	sha256_update(&c, f, sizeof(f));
	sha256_final(&c, k->key);
	return 0;
}

bool kcache_path(const struct kcache_key *k, char *buf, size_t len)
{
	char dir[4096], hex[41];
	if (!cache_dir("host-kernel", dir, sizeof(dir)))
		return false;
	for (unsigned i = 0; i < k->buildid_len && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", k->buildid[i]);
	hex[2 * (k->buildid_len > 20 ? 20 : k->buildid_len)] = '\0';
	int n = snprintf(buf, len, "%s/%s%s.idx", dir, k->perf_copy ? "perf-" : "", hex);
	return n > 0 && (size_t)n < len;
}

/*
 * The header: magic (8), header size (4), payload crc32c (4), payload
 * length (8), key (32), header crc32c over the bytes before it (4), zero
 * (4).
 */
void kcache_header(uint8_t head[KCACHE_HEAD], const uint8_t key[KCACHE_KEY], const uint8_t *ix,
		   size_t len)
{
	memset(head, 0, KCACHE_HEAD);
	memcpy(head, KCACHE_MAGIC, 8);
	put32(head + 8, KCACHE_HEAD);
	put32(head + 12, crc32c(0, ix, len));
	put64(head + 16, len);
	memcpy(head + 24, key, KCACHE_KEY);
	put32(head + 56, crc32c(0, head, 56));
}

int kcache_check(const uint8_t *data, size_t len, const uint8_t *key, size_t *ixlen, char *why,
		 size_t whylen)
{
	if (len < KCACHE_HEAD || memcmp(data, KCACHE_MAGIC, 8) || get32(data + 8) != KCACHE_HEAD) {
		snprintf(why, whylen, "not a cache file of this version");
		return -EINVAL;
	}
	if (crc32c(0, data, 56) != get32(data + 56) || get32(data + 60)) {
		snprintf(why, whylen, "header checksum mismatch");
		return -EINVAL;
	}
	uint64_t n = get64(data + 16);
	if (n != len - KCACHE_HEAD) {
		snprintf(why, whylen, "index size %llu does not match the file's %zu bytes",
			 (unsigned long long)n, len - KCACHE_HEAD);
		return -EINVAL;
	}
	if (key && memcmp(data + 24, key, KCACHE_KEY)) {
		snprintf(why, whylen, "made for another boot, module or BPF set");
		return -ESTALE;
	}
	if (crc32c(0, data + KCACHE_HEAD, (size_t)n) != get32(data + 12)) {
		snprintf(why, whylen, "index checksum mismatch");
		return -EINVAL;
	}
	struct dp_ksymidx *ix;
	char w[160];
	if (dp_ksymidx_open(data + KCACHE_HEAD, (size_t)n, &ix, w, sizeof(w)) < 0) {
		snprintf(why, whylen, "index refused: %s", w);
		return -EINVAL;
	}
	dp_ksymidx_free(ix);
	*ixlen = (size_t)n;
	return 0;
}

int kcache_load(const struct kcache_key *k, char **buf, const uint8_t **ix, size_t *ixlen,
		char *why, size_t whylen)
{
	char path[4200];
	*buf = NULL;
	if (!kcache_path(k, path, sizeof(path))) {
		snprintf(why, whylen, "no cache directory (HOME unset)");
		return -ENOENT;
	}
	char *data;
	size_t len;
	int r = cache_read(path, KCACHE_MAX, &data, &len, why, whylen);
	if (r < 0)
		return r;
	char w[200];
	if ((r = kcache_check((const uint8_t *)data, len, k->key, ixlen, w, sizeof(w))) < 0) {
		snprintf(why, whylen, "%s: %s", path, w);
		free(data);
		return r;
	}
	*buf = data;
	*ix = (const uint8_t *)data + KCACHE_HEAD;
	return 0;
}

int kcache_store(const struct kcache_key *k, const uint8_t *ix, size_t len, char *why,
		 size_t whylen)
{
	char path[4200];
	if (len > KCACHE_MAX - KCACHE_HEAD || !kcache_path(k, path, sizeof(path))) {
		snprintf(why, whylen, "no cache directory (HOME unset)");
		return -ENOENT;
	}
	uint8_t head[KCACHE_HEAD];
	kcache_header(head, k->key, ix, len);
	struct iovec v[2] = { { head, sizeof(head) }, { (void *)ix, len } };
	return cache_write(path, v, 2, why, whylen);
}
