// SPDX-License-Identifier: MIT
/*
 * agent/workdir.c on real directories: /tmp (sticky) is accepted; a
 * directory writable by others without the sticky bit, one owned by
 * another user, and one below such a directory are refused with a
 * reason; the private directory is ours with mode 0700; a file created
 * in it replaces a planted symbolic link instead of writing through it;
 * workdir_remove leaves nothing behind. Needs root (chown).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/workdir.h"
#include "unit.h"

int main(void)
{
	if (geteuid() != 0) {
		printf("test-workdir: needs root (chown); skipped\n");
		return 77;
	}
	char why[512], d[64] = "/tmp/test-workdir-XXXXXX", sub[128], target[128], link[4200];
	CHECK(workdir_check("/tmp", why, sizeof(why)) == 0);
	CHECK(mkdtemp(d) != NULL);

	CHECK(chmod(d, 0777) == 0);
	CHECK(workdir_check(d, why, sizeof(why)) == -EPERM && strstr(why, "not sticky"));
	snprintf(sub, sizeof(sub), "%s/sub", d);
	CHECK(mkdir(sub, 0755) == 0);
	CHECK(workdir_check(sub, why, sizeof(why)) == -EPERM && strstr(why, "not sticky") && strstr(why, d));
	CHECK(chmod(d, 01777) == 0);
	CHECK(workdir_check(d, why, sizeof(why)) == 0);
	CHECK(workdir_check(sub, why, sizeof(why)) == 0);
	CHECK(chmod(d, 0775) == 0);
	CHECK(workdir_check(d, why, sizeof(why)) == -EPERM);
	CHECK(chmod(d, 0755) == 0);
	CHECK(chown(sub, 65534, 65534) == 0);
	CHECK(workdir_check(sub, why, sizeof(why)) == -EPERM && strstr(why, "owned by uid 65534"));
	struct workdir w;
	CHECK(workdir_create(&w, sub, why, sizeof(why)) == -EPERM && w.fd == -1);
	CHECK(workdir_check("/nonexistent/dir", why, sizeof(why)) == -ENOENT);

	/* the private dir, in a sticky dir */
	CHECK(chmod(d, 01777) == 0);
	CHECK(workdir_create(&w, d, why, sizeof(why)) == 0 && w.fd >= 0);
	CHECK(!strncmp(w.path, d, strlen(d)) && strstr(w.path, "/domprof-agent."));
	struct stat st;
	CHECK(stat(w.path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 &&
	      st.st_uid == geteuid());

	/* a planted link is replaced, its target untouched */
	snprintf(target, sizeof(target), "%s/target", d);
	int t = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(t >= 0 && write(t, "keep", 4) == 4);
	close(t);
	snprintf(link, sizeof(link), "%s/agent.data", w.path);
	CHECK(symlink(target, link) == 0);
	int fd = workdir_create_file(&w, "agent.data", O_WRONLY);
	CHECK(fd >= 0 && write(fd, "new", 3) == 3);
	close(fd);
	CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 && st.st_size == 3);
	CHECK(stat(target, &st) == 0 && st.st_size == 4);
	fd = workdir_create_file(&w, "agent.data", O_WRONLY); /* again: a new file */
	CHECK(fd >= 0);
	close(fd);
	CHECK(stat(link, &st) == 0 && st.st_size == 0);
	CHECK(workdir_create_file(&w, "../escape", O_WRONLY) == -EINVAL);

	char path[sizeof(w.path)];
	snprintf(path, sizeof(path), "%s", w.path);
	workdir_remove(&w);
	CHECK(w.fd == -1 && stat(path, &st) < 0 && errno == ENOENT);
	workdir_remove(&w); /* no-op */

	unlink(target);
	rmdir(sub);
	CHECK(rmdir(d) == 0);
	return unit_done();
}
