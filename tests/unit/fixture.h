/* SPDX-License-Identifier: MIT */
/*
 * The one way tests write a synthetic recording: fixture_writer() and
 * fixture_writer_tmp() open a format writer (src/format/) on a new file
 * with a header naming the given command line, fixture_sample() writes one sample. Used by the
 * unit tests (tests/unit/test-*.c) and the test-tool generators
 * (tests/tool/gen-*.c). Nothing here checks or prints: callers CHECK (a
 * unit test) or die (a generator) on what it returns.
 *
 * Ownership: the writer owns the descriptor; dp_writer_finish() or
 * dp_writer_free() closes it.
 */
#ifndef DOMPROF_TESTS_FIXTURE_H
#define DOMPROF_TESTS_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

/* A writer on fd (owned from here on, closed on failure too), header
 * naming argv[0..argc) (argc 0: no command line); o NULL: the writer's
 * defaults. NULL on failure with *err a negative errno. */
static inline struct dp_writer *fixture_writer_fd(int fd, int argc, char **argv,
						  const struct dp_writer_opts *o, int *err)
{
	*err = 0;
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	struct dp_header h;
	dp_header_fill_local(&h, argc, argv);
	struct dp_writer *w = dp_writer_new(fd, &h, o, err);
	if (!w)
		close(fd);
	return w;
}

/* The same on path, created or truncated (mode 0644). */
static inline struct dp_writer *fixture_writer(const char *path, int argc, char **argv,
					       const struct dp_writer_opts *o, int *err)
{
	return fixture_writer_fd(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), argc, argv, o, err);
}

/* The same on a new file made by mkstemp from tmpl ("...XXXXXX",
 * filled in). */
static inline struct dp_writer *fixture_writer_tmp(char *tmpl, int argc, char **argv,
						   const struct dp_writer_opts *o, int *err)
{
	return fixture_writer_fd(mkstemp(tmpl), argc, argv, o, err);
}

/* One sample at time 1, period 1, tid = pid; chain NULL when n is 0.
 * 0 or the writer's negative errno. */
static inline int fixture_sample(struct dp_writer *w, uint32_t dom, uint32_t pid, uint8_t mode,
				 uint64_t ip, const uint64_t *chain, uint32_t n)
{
	struct dp_sample s = { .time = 1, .ip = ip, .period = 1, .pid = pid, .tid = pid,
			       .mode = mode, .nr_callchain = n, .callchain = chain };
	return dp_write_sample(w, dom, &s);
}

#endif
