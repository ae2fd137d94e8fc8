// SPDX-License-Identifier: MIT
/*
 * Debug files from debuginfod servers through libdebuginfod, loaded with
 * dlopen on the first query (contract and rules in debuginfod.h). What
 * this file adds to the library: the bound on one query (a progress
 * callback that cancels it), one query per build-id per run, no more
 * queries after the servers failed, and the check of what was downloaded
 * (an ELF file with the build-id asked for) before anyone reads it as a
 * debug file. The checked file is then read by the same ELF loaders as a
 * local debug file (elf.c, libelf: every size bounded).
 */
#include "symbols/debuginfod.h"
#include "symbols/buildid.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/file.h"
#include "util/hmap.h"
#include "util/xalloc.h"

/* The longest build-id asked for (bytes): SHA-1 ids are 20, some tools
 * make 32; libdebuginfod takes them as hex in a URL. */
#define DBGFD_MAX_ID 64u
/* DEBUGINFOD_MAXTIME above this (seconds) is not taken: a bound of days
 * is no bound. */
#define DBGFD_MAX_BOUND_S 86400u

/* One build-id asked: its answer, given again on the next ask. */
struct dbgfd_ent {
	char hex[2 * DBGFD_MAX_ID + 1];     /* the key of dbgfd.asked */
	enum dbgfd_status st;
	char *path;                         /* DBGFD_OK: malloc'd by libdebuginfod */
};

struct dbgfd {
	unsigned refs;              /* dbgfd_new calls not yet freed */
	bool init;                  /* environment read, library tried */
	enum dbgfd_status stopped;  /* DBGFD_OK while queries are made; else why not */
	char urls[200];             /* DEBUGINFOD_URLS, cut, for the notes */
	char why[224];              /* why DBGFD_NO_LIBRARY (dlerror() of a failed load) */
	unsigned bound_ms;
	uint64_t max_bytes;
	int last_err;               /* errno of the last DBGFD_ERROR */
	uint32_t noted;             /* statuses dbgfd_note has worded (bit per status) */
	void *lib;
	debuginfod_client *c;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find;
	/* the query under way */
	int64_t t0_ms;
	bool cut_time, cut_size;
	struct hmap asked;          /* hex build-id -> dbgfd_ent */
	struct dbgfd_ent **ents;
	size_t nents, cents;
};

/* debuginfod_get_user_data, for the progress callback to find its dbgfd.
 * One process-wide pointer: the library is loaded once per process. */
static __typeof__(debuginfod_get_user_data) *get_user_data;

/* The process's client: "once per build-id" and "not after a failure"
 * hold for the whole run, also for a diff's two symbol sessions. */
static struct dbgfd *the_dbgfd;

struct dbgfd *dbgfd_new(void)
{
	if (!the_dbgfd)
		the_dbgfd = xcalloc(1, sizeof(struct dbgfd));
	the_dbgfd->refs++;
	return the_dbgfd;
}

void dbgfd_free(struct dbgfd *d)
{
	if (!d || --d->refs)
		return;
	the_dbgfd = NULL;
	if (d->c)
		d->end(d->c);
	/* The library stays loaded: libcurl and its TLS library register
	 * handlers that run at exit, after an unload they would not exist. */
	for (size_t i = 0; i < d->nents; i++) {
		free(d->ents[i]->path);
		free(d->ents[i]);
	}
	free(d->ents);
	hmap_release(&d->asked);
	free(d);
}

/* A positive integer of at most max in the variable, or 0. */
static uint64_t env_positive(const char *name, uint64_t max)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || n == 0 || n > max)
		return 0;
	return n;
}

unsigned dbgfd_bound_ms(void)
{
	uint64_t s = env_positive(DEBUGINFOD_MAXTIME_ENV_VAR, DBGFD_MAX_BOUND_S);
	return (unsigned)((s ? s : DBGFD_DEFAULT_BOUND_S) * 1000u);
}

/* Called by libdebuginfod about once a second while a query waits, and
 * as data comes: a non-zero return cancels the query. a is the bytes
 * received once a server answers (a loop count before: small). */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)b;
	struct dbgfd *d = get_user_data ? get_user_data(c) : NULL;
	if (!d)
		return 0;
	if (mono_ms() - d->t0_ms >= (int64_t)d->bound_ms)
		d->cut_time = true;
	else if (a > 0 && (uint64_t)a > d->max_bytes)
		d->cut_size = true;
	return d->cut_time || d->cut_size;
}

/* dlopen and dlsym; false with d->why on failure. */
static bool lib_load(struct dbgfd *d)
{
	d->lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		const char *e = dlerror();
		snprintf(d->why, sizeof(d->why), "%s cannot be loaded (%.120s; Debian: apt-get install "
			 "libdebuginfod1)", DEBUGINFOD_SONAME, e ? e : "not found");
		return false;
	}
	__typeof__(debuginfod_set_progressfn) *set_progress;
	__typeof__(debuginfod_set_user_data) *set_user;
	d->begin = (__typeof__(d->begin))dlsym(d->lib, "debuginfod_begin");
	d->end = (__typeof__(d->end))dlsym(d->lib, "debuginfod_end");
	d->find = (__typeof__(d->find))dlsym(d->lib, "debuginfod_find_debuginfo");
	set_progress = (__typeof__(set_progress))dlsym(d->lib, "debuginfod_set_progressfn");
	set_user = (__typeof__(set_user))dlsym(d->lib, "debuginfod_set_user_data");
	get_user_data = (__typeof__(get_user_data))dlsym(d->lib, "debuginfod_get_user_data");
	if (!d->begin || !d->end || !d->find || !set_progress || !set_user || !get_user_data) {
		snprintf(d->why, sizeof(d->why), "%s lacks a debuginfod_* function", DEBUGINFOD_SONAME);
		d->end = NULL;
		return false;
	}
	d->c = d->begin();
	if (!d->c) {
		snprintf(d->why, sizeof(d->why), "debuginfod_begin failed");
		return false;
	}
	set_user(d->c, d);
	set_progress(d->c, progress);
	return true;
}

/* Read the environment and load the library, once. */
static void init(struct dbgfd *d)
{
	d->init = true;
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	if (!urls || !urls[strspn(urls, " \t\n")]) {
		d->stopped = DBGFD_OFF;
		return;
	}
	size_t n = strlen(urls);
	snprintf(d->urls, sizeof(d->urls), "%.*s%s", (int)(n < 180 ? n : 176), urls, n < 180 ? "" : "...");
	d->bound_ms = dbgfd_bound_ms();
	uint64_t m = env_positive(DEBUGINFOD_MAXSIZE_ENV_VAR, UINT64_MAX);
	d->max_bytes = m ? m : DBGFD_DEFAULT_MAX_BYTES;
	/* A static domprof (make static) has no dynamic loader (AT_BASE 0):
	 * a library dlopen'ed there brings its own libc, whose malloc'd path
	 * our free() must not take. */
	if (!getauxval(AT_BASE)) {
		snprintf(d->why, sizeof(d->why), "this domprof is statically linked");
		d->stopped = DBGFD_NO_LIBRARY;
	} else if (!lib_load(d)) {
		d->stopped = DBGFD_NO_LIBRARY;
	}
}

enum dbgfd_status dbgfd_check_file(const char *path, const uint8_t *bid, size_t len)
{
	int fd = file_open_regular(path, NULL);   /* not a FIFO or device */
	if (fd < 0)
		return DBGFD_NOT_ELF;
	close(fd);
	uint8_t got[20];
	uint8_t glen = 0;
	int r = sym_read_build_id(path, got, &glen);
	if (r == -ENOEXEC || (r < 0 && r != -ENOENT))
		return DBGFD_NOT_ELF;
	/* sym_read_build_id keeps at most 20 bytes: compare those */
	size_t want = len > 20 ? 20 : len;
	if (r < 0 || glen != want || memcmp(got, bid, want))
		return DBGFD_WRONG_ID;
	return DBGFD_OK;
}

/* What a failed query's code means (see libdebuginfod's curl error map). */
static enum dbgfd_status query_failure(struct dbgfd *d, int rc)
{
	if (d->cut_time)
		return DBGFD_TIMEOUT;
	if (d->cut_size) {
		d->last_err = EFBIG;
		return DBGFD_ERROR;
	}
	switch (-rc) {
	case ENOENT:
		return DBGFD_NOT_FOUND;
	case ECONNREFUSED: case EHOSTUNREACH: case ENETUNREACH: case EHOSTDOWN:
	case ENETDOWN: case EADDRNOTAVAIL: case ECONNRESET: case ECONNABORTED:
		d->last_err = -rc;
		return DBGFD_DOWN;
	case ETIME: case ETIMEDOUT:
		return DBGFD_TIMEOUT;
	case ENOSYS:     /* no URL it could use */
		return DBGFD_OFF;
	default:
		d->last_err = rc < 0 ? -rc : EIO;
		return DBGFD_ERROR;
	}
}

/* Ask the servers for bid; e gets the answer. */
static void query(struct dbgfd *d, const uint8_t *bid, size_t len, struct dbgfd_ent *e)
{
	char *path = NULL;
	d->cut_time = d->cut_size = false;
	d->t0_ms = mono_ms();
	int fd = d->find(d->c, bid, (int)len, &path);
	if (fd >= 0)
		close(fd);
	if (fd < 0 || !path) {
		free(path);
		e->st = query_failure(d, fd < 0 ? fd : -EIO);
		/* the servers themselves failed: asking for every other image
		 * would repeat the wait (or the error) as many times */
		if (e->st == DBGFD_DOWN || e->st == DBGFD_TIMEOUT)
			d->stopped = e->st;
		return;
	}
	e->st = dbgfd_check_file(path, bid, len);
	if (e->st == DBGFD_OK)
		e->path = path;
	else
		free(path);
}

/* libdebuginfod's cache directory, by its rules (elfutils 0.188, as
 * drgn finds it): DEBUGINFOD_CACHE_PATH; else ~/.debuginfod_client_cache
 * when it exists (the old place); else $XDG_CACHE_HOME/debuginfod_client;
 * else ~/.cache/debuginfod_client. */
static void cache_dir(char *out, size_t size)
{
	const char *e = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	if (e && *e) {
		snprintf(out, size, "%s", e);
		return;
	}
	const char *home = getenv("HOME");
	if (!home || !*home)
		home = "/";
	struct stat st;
	snprintf(out, size, "%s/.debuginfod_client_cache", home);
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return;
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x)
		snprintf(out, size, "%s/debuginfod_client", x);
	else
		snprintf(out, size, "%s/.cache/debuginfod_client", home);
}

/* After a server failure no query is made, but a file libdebuginfod
 * downloaded in an earlier run is still used: CACHE/HEX/debuginfo, if it
 * is not empty (an empty one records a miss), checked like a download.
 * Otherwise DBGFD_SKIPPED. */
static void from_cache(const uint8_t *bid, size_t len, struct dbgfd_ent *e)
{
	char dir[3000], path[3300];
	cache_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, e->hex);
	struct stat st;
	e->st = DBGFD_SKIPPED;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return;
	e->st = dbgfd_check_file(path, bid, len);
	if (e->st == DBGFD_OK)
		e->path = xstrdup(path);
}

enum dbgfd_status dbgfd_find(struct dbgfd *d, const uint8_t *bid, size_t len, const char **path)
{
	*path = NULL;
	if (!d->init)
		init(d);
	if (d->stopped == DBGFD_OFF || d->stopped == DBGFD_NO_LIBRARY)
		return d->stopped;
	if (!len || len > DBGFD_MAX_ID)
		return DBGFD_NOT_FOUND;
	char hex[2 * DBGFD_MAX_ID + 1];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	struct dbgfd_ent *e = strmap_get(&d->asked, hex);
	if (e) {
		*path = e->path;
		return e->st;
	}
	e = xcalloc(1, sizeof(*e));
	memcpy(e->hex, hex, 2 * len + 1);
	if (d->stopped == DBGFD_OK)
		query(d, bid, len, e);
	else
		from_cache(bid, len, e);
	if (d->nents == d->cents)
		xgrow((void **)&d->ents, &d->cents, d->nents + 1, sizeof(*d->ents));
	d->ents[d->nents++] = e;
	strmap_put(&d->asked, e->hex, e);
	*path = e->path;
	return e->st;
}

const char *dbgfd_note(struct dbgfd *d, enum dbgfd_status st, char *buf, size_t size)
{
	if ((unsigned)st >= 32 || (d->noted & (1u << st)))
		return NULL;
	d->noted |= 1u << st;
	switch (st) {
	case DBGFD_NO_LIBRARY:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "DEBUGINFOD_URLS is set but %s: no debug files "
			 "from servers", d->why);
		break;
	case DBGFD_DOWN:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "cannot reach %s (%s): not asked again in this run",
			 d->urls, strerror(d->last_err));
		break;
	case DBGFD_TIMEOUT:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "no answer from %s within %u s: not asked again in "
			 "this run (DEBUGINFOD_MAXTIME=SECONDS sets the bound)",
			 d->urls, d->bound_ms / 1000u);
		break;
	case DBGFD_NOT_ELF:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "%s served a debug file that is not an ELF file: refused",
			 d->urls);
		break;
	case DBGFD_WRONG_ID:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "%s served a debug file without the build-id asked "
			 "for: refused", d->urls);
		break;
	case DBGFD_ERROR:
		snprintf(buf, size, DBGFD_NOTE_PREFIX "%s: %s", d->urls,
			 d->last_err == EFBIG ? "a debug file over DEBUGINFOD_MAXSIZE was cut"
					       : strerror(d->last_err));
		break;
	default:
		return NULL;
	}
	return buf;
}

void dbgfd_turn_off(void)
{
	unsetenv(DEBUGINFOD_URLS_ENV_VAR);
}

char *dbgfd_env_hide(void)
{
	const char *v = getenv(DEBUGINFOD_URLS_ENV_VAR);
	if (!v)
		return NULL;
	char *saved = xstrdup(v);
	unsetenv(DEBUGINFOD_URLS_ENV_VAR);
	return saved;
}

void dbgfd_env_restore(char *saved)
{
	if (!saved)
		return;
	setenv(DEBUGINFOD_URLS_ENV_VAR, saved, 1);
	free(saved);
}
