// SPDX-License-Identifier: MIT
/*
 * util/outfile: the output-file rule of record and merge, on real files
 * in a fresh directory: the temporary file and its commit, FILE.old and
 * force, discard before and after the commit (FILE.old put back), a
 * dangling symlink followed and never removed, a device written in place
 * or refused, a directory refused, and the lock: a second process (a
 * forked child) is refused with -EBUSY naming the holder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "util/outfile.h"

static char dir[256];

static const char *at(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static bool holds(const char *p, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return !strcmp(buf, text);
}

static size_t entries(void)
{
	size_t n = 0;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	FILE *p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%zu", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

static void write_all(int fd, const char *s)
{
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
}

int main(void)
{
	struct outfile of;
	char msg[8192];
	snprintf(dir, sizeof(dir), "/tmp/test-outfile-%d", (int)getpid());
	CHECK(mkdir(dir, 0755) == 0);

	/* New file: a temporary until the commit. */
	CHECK(outfile_open(&of, at("a.data"), 0) == 0);
	CHECK(exists(of.tmp) && !exists(at("a.data")));
	/* hidden beside it, .a.data.tmp-PID: outside an a.data.* glob */
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/.a.data.tmp-%d", dir, (int)getpid());
	CHECK_STR(of.tmp, want);
	CHECK(outfile_is_temp(of.tmp));
	CHECK(outfile_is_temp("x/h.data.2026-01-01T00:00:00.000Z.tmp-12"));   /* older recorders' */
	CHECK(!outfile_is_temp("h.data.2026-01-01T00:00:00.000Z"));
	CHECK(!outfile_is_temp("a.tmp-"));
	CHECK(!outfile_is_temp(".tmp-12"));
	CHECK(!outfile_is_temp("a.tmp-12x"));
	write_all(of.fd, "one");
	CHECK(outfile_commit(&of) == 0);
	CHECK(holds(at("a.data"), "one") && entries() == 1);
	CHECK_EQ_U64(outfile_size(&of), 3);
	outfile_release(&of);

	/* Existing file -> .old; a discard after the commit puts it back. */
	CHECK(outfile_open(&of, at("a.data"), 0) == 0);
	write_all(of.fd, "two");
	CHECK(outfile_commit(&of) == 0);
	CHECK(holds(at("a.data"), "two") && holds(at("a.data.old"), "one"));
	outfile_discard(&of);
	CHECK(holds(at("a.data"), "one") && !exists(at("a.data.old")) && entries() == 1);

	/* Discard before the commit: nothing changes. Force: no .old. */
	CHECK(outfile_open(&of, at("a.data"), 0) == 0);
	outfile_discard(&of);
	CHECK(holds(at("a.data"), "one") && entries() == 1);
	CHECK(outfile_open(&of, at("a.data"), OUTFILE_FORCE) == 0);
	write_all(of.fd, "three");
	CHECK(outfile_commit(&of) == 0);
	outfile_release(&of);
	CHECK(holds(at("a.data"), "three") && entries() == 1);

	/* A dangling symlink: followed, never removed, nothing left on discard. */
	CHECK(symlink("target.data", at("link.data")) == 0);
	CHECK(outfile_open(&of, at("link.data"), 0) == 0);
	CHECK_STR(of.path, at("target.data"));
	outfile_discard(&of);
	CHECK(exists(at("link.data")) && !exists(at("target.data")) && entries() == 2);
	CHECK(outfile_open(&of, at("link.data"), 0) == 0);
	write_all(of.fd, "via link");
	CHECK(outfile_commit(&of) == 0);
	outfile_release(&of);
	struct stat st;
	CHECK(lstat(at("link.data"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(holds(at("target.data"), "via link"));

	/* A device: in place with OUTFILE_IN_PLACE, else refused; a directory refused. */
	CHECK(outfile_open(&of, "/dev/null", OUTFILE_IN_PLACE) == 0 && of.in_place);
	CHECK(outfile_commit(&of) == 0);
	outfile_discard(&of);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	CHECK(outfile_open(&of, "/dev/null", 0) == -EEXIST && of.stage == OUTFILE_ST_KIND);
	CHECK(strstr(outfile_strerror(&of, "/dev/null", -EEXIST, msg, sizeof(msg)), "not a regular file"));
	CHECK(outfile_open(&of, dir, OUTFILE_IN_PLACE) == -EISDIR);
	CHECK(outfile_open(&of, "/nonexistent-dir/x", 0) == -ENOENT && of.stage == OUTFILE_ST_CREATE);
	CHECK_STR(outfile_strerror(&of, "/nonexistent-dir/x", -ENOENT, msg, sizeof(msg)),
		  "cannot create output '/nonexistent-dir/x': No such file or directory");

	/* The lock: while we write b.data, a second process is refused at
	 * open and at commit, and b.data is never moved aside. */
	CHECK(outfile_open(&of, at("b.data"), 0) == 0);
	CHECK(outfile_commit(&of) == 0);
	pid_t me = getpid(), child = fork();
	if (child == 0) {
		struct outfile o2;
		int r = outfile_open(&o2, at("b.data"), 0);
		_exit(r == -EBUSY && o2.holder == me && o2.stage == OUTFILE_ST_BUSY ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	outfile_release(&of);
	struct outfile o3;
	CHECK(outfile_open(&o3, at("b.data"), 0) == 0); /* the lock went with the close */
	outfile_discard(&o3);

	/* Both open before either commits: the later commit is refused and
	 * leaves the earlier one's file where it is. */
	CHECK(outfile_open(&of, at("d.data"), 0) == 0);
	int up[2], down[2];
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	child = fork();
	if (child == 0) {
		struct outfile o2;
		char c = 0;
		int ok = outfile_open(&o2, at("d.data"), 0) == 0 && outfile_commit(&o2) == 0;
		if (write(up[1], ok ? "y" : "n", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	char c = 0;
	CHECK(read(up[0], &c, 1) == 1 && c == 'y');
	CHECK(outfile_commit(&of) == -EBUSY && of.holder == child);
	CHECK(strstr(outfile_strerror(&of, "d.data", -EBUSY, msg, sizeof(msg)), "is being written by process"));
	outfile_discard(&of);
	CHECK(exists(at("d.data")) && !exists(at("d.data.old")));
	CHECK(write(down[1], "x", 1) == 1);
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return unit_done();
}
