/* SPDX-License-Identifier: MIT */
/*
 * The input files of an analysis command (report, flamegraph, export,
 * info, annotate; each side of diff; merge): one recording, or several
 * read as one (the files of one `record --switch-output` series, a
 * window of it). Each argument is a path, or when no file has that name,
 * a list of paths separated by ',' and each a path or a glob pattern
 * (`*`, `?`, `[`) that this module expands with glob(3), sorted, so a
 * quoted pattern works where the shell did not expand it (a remote
 * command, diff's two sides). A pattern that matches nothing is an
 * error; a path that does not exist is kept (its open fails with the
 * usual message). A writer's temporary file (util/outfile.h,
 * outfile_is_temp) is skipped by a pattern and refused when named.
 *
 * Nothing here prints. Ownership: the list owns its strings
 * (inputs_free).
 */
#ifndef DOMPROF_ANALYSIS_INPUTS_H
#define DOMPROF_ANALYSIS_INPUTS_H

#include <stddef.h>

#define INPUTS_MAX 100000u     /* files one command reads at most */

struct inputs {
	char **paths;
	size_t n, cap;
};

/* Add what arg names. 0, or -ENOENT (a pattern matched nothing),
 * -EINVAL (a temporary file named) or -E2BIG (past INPUTS_MAX) with a
 * one-line reason in err. */
int inputs_add(struct inputs *in, const char *arg, char *err, size_t errlen);
/* A command's inputs: each -i value (iargs), then each positional
 * argument (pos), through inputs_add; "domprof.data" when there is none.
 * 0, or inputs_add's error (in is then freed). */
int inputs_collect(struct inputs *in, const char *const *iargs, size_t ni, char *const *pos,
		   size_t npos, char *err, size_t errlen);
/* "A", or "A (and N more)" for messages, into buf. */
const char *inputs_desc(const struct inputs *in, char *buf, size_t n);
void inputs_free(struct inputs *in);

#endif
