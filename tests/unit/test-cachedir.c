// SPDX-License-Identifier: MIT
/*
 * The cache directory's one rule (src/util/cachedir.c): where (absolute
 * DOMPROF_CACHE, XDG_CACHE_HOME, HOME; nothing else), and whom it trusts
 * (a chain of this user's directories, opened without following links;
 * files of this user's, not writable by others), and how it writes
 * (0700 directories, 0600 files, no temporary file left).
 *  - a written entry reads back; modes 0700 and 0600;
 *  - refused: a relative DOMPROF_CACHE, no HOME at all (never /tmp); the
 *    cache directory 0777 or 0770, a parent 0777 (not sticky); a file
 *    0666, a file that is a symbolic link, a directory that is a link in
 *    a directory others can write;
 *  - as root: a directory or file owned by another user (nobody's uid);
 *  - controls: a link from a directory of ours to a directory of ours is
 *    followed; a sticky world-writable parent holding a directory of
 *    ours is accepted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "util/cachedir.h"

static char top[] = "/tmp/dp-cachedir-XXXXXX";

static int put(const char *path, const char *text)
{
	char why[300];
	struct iovec v = { (void *)text, strlen(text) };
	return cache_write(path, &v, 1, why, sizeof(why));
}

static int get(const char *path)
{
	char *d, why[300];
	size_t len;
	int r = cache_read(path, 1024, &d, &len, why, sizeof(why));
	if (r == 0)
		free(d);
	return r;
}

static void where(void)
{
	char buf[300];
	unsetenv("XDG_CACHE_HOME");
	setenv("DOMPROF_CACHE", "relative/dir", 1);
	CHECK(!cache_dir("lines", buf, sizeof(buf)));
	unsetenv("DOMPROF_CACHE");
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	unsetenv("HOME");
	CHECK(!cache_dir("lines", buf, sizeof(buf)));   /* never /tmp */
	setenv("HOME", "/root-like", 1);
	CHECK(cache_dir("lines", buf, sizeof(buf)) && !strcmp(buf, "/root-like/.cache/domprof/lines"));
	if (home) {
		setenv("HOME", home, 1);
		free(home);
	}
}

static void rules(void)
{
	char p[400], d[400], why[300];
	struct stat st;
	/* a written entry reads back, made 0700 / 0600, nothing else left */
	snprintf(p, sizeof(p), "%s/ok/sub/e", top);
	CHECK_EQ_U64(put(p, "abc"), 0);
	CHECK_EQ_U64(get(p), 0);
	snprintf(d, sizeof(d), "%s/ok/sub", top);
	CHECK(stat(d, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(p, sizeof(p), "%s/ok/sub/missing", top);
	CHECK_EQ_U64(get(p), (uint64_t)-ENOENT);

	/* the cache directory writable by others */
	snprintf(p, sizeof(p), "%s/ok/sub/e", top);
	chmod(d, 0777);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	CHECK_EQ_U64(put(p, "x"), (uint64_t)-EPERM);
	chmod(d, 0770);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	chmod(d, 0700);
	/* a parent writable by others, not sticky */
	snprintf(d, sizeof(d), "%s/ok", top);
	chmod(d, 0777);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	/* control: sticky, the directories below ours */
	chmod(d, 01777);
	CHECK_EQ_U64(get(p), 0);
	chmod(d, 0700);
	/* the file writable by others, or a link */
	chmod(p, 0666);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	chmod(p, 0600);
	snprintf(d, sizeof(d), "%s/ok/sub/link", top);
	CHECK(symlink(p, d) == 0);
	CHECK_EQ_U64(get(d), (uint64_t)-ELOOP);
	/* a written entry replaces a link, never writes through it */
	CHECK_EQ_U64(put(d, "new"), 0);
	CHECK(lstat(d, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_EQ_U64(get(p), 0);

	/* a directory link: followed from a directory of ours (control),
	 * not from one others can write */
	char l[400];
	snprintf(l, sizeof(l), "%s/lnk", top);
	snprintf(d, sizeof(d), "%s/ok", top);
	CHECK(symlink(d, l) == 0);
	snprintf(p, sizeof(p), "%s/lnk/sub/e", top);
	CHECK_EQ_U64(get(p), 0);
	chmod(top, 01777);   /* a sticky one (/tmp): the way is fine, its links are not */
	CHECK_EQ_U64(get(p), (uint64_t)-ELOOP);
	chmod(top, 0777);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	chmod(top, 0700);
	CHECK_EQ_U64(cache_open_dir("relative", false, why, sizeof(why)), (uint64_t)-EINVAL);

	if (geteuid() != 0)
		return;
	/* another user's directory or file (root can chown) */
	snprintf(p, sizeof(p), "%s/ok/sub/e", top);
	snprintf(d, sizeof(d), "%s/ok/sub", top);
	CHECK(chown(p, 65534, 65534) == 0);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	CHECK(chown(p, 0, 0) == 0);
	CHECK(chown(d, 65534, 65534) == 0);
	CHECK_EQ_U64(get(p), (uint64_t)-EPERM);
	CHECK_EQ_U64(put(p, "x"), (uint64_t)-EPERM);
	CHECK(chown(d, 0, 0) == 0);
	CHECK_EQ_U64(get(p), 0);
}

int main(void)
{
	if (!mkdtemp(top)) {
		CHECK(0);
		return unit_done();
	}
	where();
	rules();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	CHECK(system(cmd) == 0);
	return unit_done();
}
