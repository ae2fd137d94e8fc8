// SPDX-License-Identifier: MIT
/*
 * An analysis command's input files (see inputs.h): paths, comma lists
 * and glob patterns expanded here, bounded by INPUTS_MAX.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/inputs.h"
#include "util/outfile.h"
#include "util/xalloc.h"

static int push(struct inputs *in, const char *p, size_t n, char *err, size_t errlen)
{
	if (in->n >= INPUTS_MAX) {
		snprintf(err, errlen, "more than %u input files", INPUTS_MAX);
		return -E2BIG;
	}
	xgrow((void **)&in->paths, &in->cap, in->n + 1, sizeof(char *));
	in->paths[in->n++] = xstrndup(p, n);
	return 0;
}

static int add_one(struct inputs *in, const char *p, size_t n, char *err, size_t errlen)
{
	char *one = xstrndup(p, n);
	struct stat st;
	int ret = 0;
	if (stat(one, &st) == 0 || !strpbrk(one, "*?[")) {
		if (outfile_is_temp(one)) {
			snprintf(err, errlen, "'%s' is a recorder's temporary file (being written, or left by a "
				 "killed recorder): not a recording to read", one);
			ret = -EINVAL;
		} else
			ret = push(in, one, n, err, errlen);
	} else {
		glob_t g;
		int gr = glob(one, 0, NULL, &g);
		if (gr == GLOB_NOMATCH || (gr == 0 && !g.gl_pathc)) {
			snprintf(err, errlen, "no file matches '%s'", one);
			ret = -ENOENT;
		} else if (gr) {
			snprintf(err, errlen, "cannot expand '%s': %s", one,
				 gr == GLOB_NOSPACE ? "out of memory" : "read error");
			ret = -EIO;
		}
		/* a series' glob skips the temporaries among its files */
		size_t kept = 0;
		for (size_t i = 0; !ret && gr == 0 && i < g.gl_pathc; i++)
			if (!outfile_is_temp(g.gl_pathv[i])) {
				ret = push(in, g.gl_pathv[i], strlen(g.gl_pathv[i]), err, errlen);
				kept++;
			}
		if (!ret && gr == 0 && !kept) {
			snprintf(err, errlen, "no file matches '%s' (only recorders' temporary files)", one);
			ret = -ENOENT;
		}
		if (gr == 0 || gr == GLOB_NOMATCH)
			globfree(&g);
	}
	free(one);
	return ret;
}

int inputs_add(struct inputs *in, const char *arg, char *err, size_t errlen)
{
	struct stat st;
	if (stat(arg, &st) == 0 || !strchr(arg, ','))
		return add_one(in, arg, strlen(arg), err, errlen);
	for (const char *p = arg;;) {
		size_t n = strcspn(p, ",");
		if (n) {
			int ret = add_one(in, p, n, err, errlen);
			if (ret)
				return ret;
		}
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int inputs_collect(struct inputs *in, const char *const *iargs, size_t ni, char *const *pos,
		   size_t npos, char *err, size_t errlen)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < ni; i++)
		ret = inputs_add(in, iargs[i], err, errlen);
	for (size_t i = 0; !ret && i < npos; i++)
		ret = inputs_add(in, pos[i], err, errlen);
	if (!ret && !in->n)
		ret = push(in, "domprof.data", strlen("domprof.data"), err, errlen);
	if (ret)
		inputs_free(in);
	return ret;
}

const char *inputs_desc(const struct inputs *in, char *buf, size_t n)
{
	if (in->n <= 1)
		snprintf(buf, n, "%s", in->n ? in->paths[0] : "");
	else
		snprintf(buf, n, "%s (and %zu more)", in->paths[0], in->n - 1);
	return buf;
}

void inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	memset(in, 0, sizeof(*in));
}
