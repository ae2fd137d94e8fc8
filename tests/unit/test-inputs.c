// SPDX-License-Identifier: MIT
/*
 * Unit tests of analysis/inputs.c: a path kept as given (also one with
 * ',' or '*' that exists), a glob expanded sorted, a comma list of paths
 * and globs, a pattern matching nothing refused with its name, a name
 * that is no file kept (its open fails later), the default
 * domprof.data, and -i values before positional arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/inputs.h"
#include "unit.h"

static char dir[64];

static void touch(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static const char *at(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-inputs-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	touch("h.data.2026-12-01T10:00:00.000Z");
	touch("h.data.2026-12-01T10:01:00.000Z");
	touch("h.data.2026-12-01T11:00:00.000Z");
	touch("odd,name");
	touch("star*");
	char err[512];
	struct inputs in = { 0 };

	CHECK(!inputs_add(&in, at("h.data.*T10:*"), err, sizeof(err)));
	CHECK(in.n == 2);
	CHECK_STR(in.paths[0], at("h.data.2026-12-01T10:00:00.000Z"));
	CHECK_STR(in.paths[1], at("h.data.2026-12-01T10:01:00.000Z"));
	inputs_free(&in);
	CHECK(in.n == 0 && !in.paths);
	/* an older recorder's temporary inside the series' glob is skipped;
	 * named, it is refused; a glob of only temporaries matches nothing */
	touch("h.data.2026-12-01T10:02:00.000Z.tmp-4242");
	CHECK(!inputs_add(&in, at("h.data.*T10:*"), err, sizeof(err)));
	CHECK(in.n == 2);
	inputs_free(&in);
	CHECK(inputs_add(&in, at("h.data.2026-12-01T10:02:00.000Z.tmp-4242"), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "temporary file") != NULL);
	CHECK(inputs_add(&in, at("h.data.*.tmp-*"), err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "only recorders' temporary files") != NULL);
	CHECK(in.n == 0);

	/* an existing name is itself, whatever it holds */
	CHECK(!inputs_add(&in, at("odd,name"), err, sizeof(err)));
	CHECK(!inputs_add(&in, at("star*"), err, sizeof(err)));
	CHECK(in.n == 2);
	CHECK_STR(in.paths[0], at("odd,name"));
	CHECK_STR(in.paths[1], at("star*"));
	inputs_free(&in);

	/* a list: paths and globs, empty items skipped */
	char list[1024];
	snprintf(list, sizeof(list), "%s,,%s", at("h.data.*T11:*"), at("h.data.2026-12-01T10:00:00.000Z"));
	CHECK(!inputs_add(&in, list, err, sizeof(err)));
	CHECK(in.n == 2);
	CHECK_STR(in.paths[0], at("h.data.2026-12-01T11:00:00.000Z"));
	inputs_free(&in);

	/* nothing matches: refused, named; a missing plain name is kept */
	CHECK(inputs_add(&in, at("nothing*"), err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "no file matches") && strstr(err, "nothing*"));
	inputs_free(&in);
	CHECK(!inputs_add(&in, at("missing.data"), err, sizeof(err)));
	CHECK(in.n == 1);
	inputs_free(&in);

	/* collect: -i values first, then the arguments; the default */
	const char *iargs[] = { at("odd,name") };
	char *pos[] = { (char *)at("h.data.*T11:*") };
	CHECK(!inputs_collect(&in, iargs, 1, pos, 1, err, sizeof(err)));
	CHECK(in.n == 2);
	CHECK_STR(in.paths[0], at("odd,name"));
	CHECK_STR(in.paths[1], at("h.data.2026-12-01T11:00:00.000Z"));
	char desc[300];
	CHECK(strstr(inputs_desc(&in, desc, sizeof(desc)), "(and 1 more)") != NULL);
	inputs_free(&in);
	CHECK(!inputs_collect(&in, NULL, 0, NULL, 0, err, sizeof(err)));
	CHECK(in.n == 1);
	CHECK_STR(in.paths[0], "domprof.data");
	inputs_free(&in);
	char *bad[] = { (char *)at("nothing*") };
	CHECK(inputs_collect(&in, NULL, 0, bad, 1, err, sizeof(err)) == -ENOENT);
	CHECK(in.n == 0);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
	}
	return unit_done();
}
