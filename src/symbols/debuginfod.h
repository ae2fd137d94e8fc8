/* SPDX-License-Identifier: MIT */
/*
 * Separate debug files from debuginfod servers: the last step of the
 * debug-file search (elf.c's, after the build-id directory and the
 * .gnu_debuglink names, and the unwinder's, unwind.c) when the standard
 * variable DEBUGINFOD_URLS names servers. The servers are asked through
 * elfutils' libdebuginfod, loaded with dlopen(3) on the first query (as
 * libdw loads it), so domprof links neither it nor libcurl and the static
 * build is unchanged; <elfutils/debuginfod.h> gives the prototypes only.
 * The downloads live in libdebuginfod's own cache (DEBUGINFOD_CACHE_PATH,
 * else ~/.cache/debuginfod_client), with its rules.
 *
 * The rules (docs/symbols.md, "Debug files from debuginfod"):
 *  - off when DEBUGINFOD_URLS is unset or empty (`--no-debuginfod`
 *    unsets it), or when libdebuginfod.so.1 cannot be loaded;
 *  - each build-id is asked at most once per run: the answer (a path or
 *    a failure) is kept and given again;
 *  - one query lasts at most the bound: DEBUGINFOD_MAXTIME seconds when
 *    set to a positive number, else DBGFD_DEFAULT_BOUND_S; a download
 *    over DEBUGINFOD_MAXSIZE bytes (default DBGFD_DEFAULT_MAX_BYTES) is
 *    cut too. libdebuginfod's own DEBUGINFOD_TIMEOUT (no progress for
 *    that long) still applies inside, so a smaller one ends it sooner;
 *  - after a failure of the servers themselves (unreachable, no answer
 *    within the bound) no further query is made: DBGFD_SKIPPED, unless
 *    libdebuginfod's cache already holds the file (looked up by its
 *    layout, CACHE/BUILDID/debuginfo, and checked as a download);
 *  - a downloaded file is used only when it is an ELF file whose build-id
 *    note equals the one asked for (a server may lie or send junk).
 *
 * Nothing here prints: each answer is a status, and dbgfd_note() words a
 * failure in one line for the caller to show once. Ownership: the dbgfd
 * owns the paths it returns (valid until its last dbgfd_free). Not
 * thread-safe: one thread of a process uses it (the report's).
 */
#ifndef DOMPROF_SYMBOLS_DEBUGINFOD_H
#define DOMPROF_SYMBOLS_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

/* The bound on one query without DEBUGINFOD_MAXTIME, and on a download's
 * size without DEBUGINFOD_MAXSIZE. */
#define DBGFD_DEFAULT_BOUND_S 5u
#define DBGFD_DEFAULT_MAX_BYTES (1ull << 30)

enum dbgfd_status {
	DBGFD_OK = 0,       /* *path: the checked file in libdebuginfod's cache */
	DBGFD_OFF,          /* DEBUGINFOD_URLS unset or empty: nothing asked */
	DBGFD_NO_LIBRARY,   /* libdebuginfod.so.1 (or a function of it) is missing */
	DBGFD_NOT_FOUND,    /* the servers have no debug file of that build-id */
	DBGFD_DOWN,         /* no server could be reached (refused, no route, name) */
	DBGFD_TIMEOUT,      /* no file within the bound (or over the size bound) */
	DBGFD_NOT_ELF,      /* the file served is not an ELF file: refused */
	DBGFD_WRONG_ID,     /* an ELF without that build-id: refused */
	DBGFD_SKIPPED,      /* not asked: an earlier server failure stopped queries */
	DBGFD_ERROR,        /* another error of libdebuginfod (dbgfd_note says which) */
};

struct dbgfd;

/* The process's client: one for all callers (a diff's two symbol
 * sessions share its answers), counted; dbgfd_free lets go of one
 * reference and frees it with the last, so that a later dbgfd_new starts
 * afresh. The environment is read, and the library loaded, on the first
 * dbgfd_find. */
struct dbgfd *dbgfd_new(void);
void dbgfd_free(struct dbgfd *d);

/*
 * The debug file of build-id bid[0..len) (1..64 bytes): DBGFD_OK and
 * *path, or a failure status and *path NULL. Blocks for at most the
 * bound (plus libdebuginfod's one-second poll) the first time a build-id
 * is asked; afterwards answers from memory.
 */
enum dbgfd_status dbgfd_find(struct dbgfd *d, const uint8_t *bid, size_t len, const char **path);

/*
 * One line for a failure worth telling the user (DOWN, TIMEOUT, NOT_ELF,
 * WRONG_ID, NO_LIBRARY, ERROR), naming the servers and the consequence,
 * into buf (512 bytes are enough), the first time the status is given;
 * NULL for the others (OK, OFF, NOT_FOUND, SKIPPED) and for a status
 * already worded: each kind of failure is told once per run.
 */
const char *dbgfd_note(struct dbgfd *d, enum dbgfd_status st, char *buf, size_t size);

/*
 * Is the file at path an ELF file with build-id bid[0..len)? DBGFD_OK,
 * DBGFD_NOT_ELF (not ELF, unreadable, not a regular file) or
 * DBGFD_WRONG_ID (another build-id, or none). What dbgfd_find checks a
 * download with; exposed for the unit test.
 */
enum dbgfd_status dbgfd_check_file(const char *path, const uint8_t *bid, size_t len);

/* The bound on one query in milliseconds, from DEBUGINFOD_MAXTIME
 * (seconds; a value that is not a positive number, or over a day, gives
 * the default). Exposed for the unit test. */
unsigned dbgfd_bound_ms(void);

/* Every line of dbgfd_note starts with this: a command that shows other
 * symbol warnings elsewhere (report's text header) picks these out for
 * stderr. */
#define DBGFD_NOTE_PREFIX "debuginfod: "

/* `--no-debuginfod`: no server is asked in this process, neither by
 * dbgfd_find nor by libdwfl, as without DEBUGINFOD_URLS (it is unset).
 * Call before the first query. */
void dbgfd_turn_off(void);

/*
 * libdwfl asks debuginfod on its own, unbounded, at the end of
 * dwfl_standard_find_debuginfo when DEBUGINFOD_URLS is set. The unwinder
 * calls that search between these two, which take the variable out of
 * the environment and put it back, so that only dbgfd_find asks servers.
 * hide returns what restore needs (NULL when the variable was unset).
 */
char *dbgfd_env_hide(void);
void dbgfd_env_restore(char *saved);

#endif
