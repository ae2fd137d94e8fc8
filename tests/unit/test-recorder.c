// SPDX-License-Identifier: MIT
/*
 * Unit test of collect/recorder.c, a recording's start-up and end,
 * without root or VMs: no host perf source (recorder_open_host is not
 * called), a real command spawned and released, a real output file.
 * A command that runs: the file is put in place, readable, its STATS
 * name the command's exit status, the size returned is the file's. A
 * command that cannot run: 127, one notice naming it, and the output
 * undone (an existing FILE kept as it was, no FILE.old). An output in a
 * missing directory and a bad guest spec: one notice each, nothing left.
 * The DOMPROF_READY_FD handshake: a pipe is taken and signalled, anything
 * else is refused, the variable is gone either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/recorder.h"
#include "format/format.h"
#include "unit.h"

static volatile sig_atomic_t g_flag;

struct notes { int n; char last[512]; };
static void on_notice(void *ctx, const char *msg)
{
	struct notes *n = ctx;
	n->n++;
	snprintf(n->last, sizeof(n->last), "%s", msg);
}

static char g_dir[64];

static struct recorder_config config(const char *out, char **cmd, struct notes *nt)
{
	struct recorder_config c = {
		.output = out, .hz = 1000, .cmd = cmd, .stop_flag = &g_flag,
		.notice = on_notice, .notice_ctx = nt,
	};
	return c;
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void test_command_runs(void)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/ok.data", g_dir);
	char *cmd[] = { "sh", "-c", "exit 3", NULL };
	struct notes nt = { 0 };
	struct recorder_config cfg = config(out, cmd, &nt);
	struct recorder r;
	recorder_init(&r, &cfg);
	char *argv[] = { "record", "sh", NULL };
	CHECK(recorder_open_output(&r) == 0);
	CHECK(recorder_spawn(&r) == 0);
	CHECK(recorder_start_file(&r, 2, argv) == 0);
	CHECK(exists(out)); /* put in place before sampling starts */
	uint64_t t0 = 0, bytes = 0;
	CHECK(recorder_start(&r, &t0) == 0);
	CHECK(t0 > 0);
	struct collector_result res;
	CHECK(recorder_run(&r, t0, &res, &bytes) == 0);
	recorder_free(&r);
	CHECK(res.child_done);
	CHECK(WIFEXITED(res.child_status) && WEXITSTATUS(res.child_status) == 3);
	CHECK_EQ_U64(nt.n, 0);
	struct stat st;
	CHECK(stat(out, &st) == 0);
	CHECK_EQ_U64(bytes, (uint64_t)st.st_size);
	int err;
	struct dp_reader *rd = dp_reader_open(out, &err, NULL, 0);
	CHECK(rd != NULL);
	unsigned nstats = 0;
	uint32_t status = 0;
	struct dp_record rec;
	while (rd && dp_reader_next(rd, &rec) > 0)
		if (rec.type == DP_REC_STATS) {
			nstats++;
			status = rec.u.stats.exit_status;
		}
	CHECK_EQ_U64(nstats, 1);
	CHECK_EQ_U64(status, 3);
	const struct dp_damage *d;
	CHECK(rd && dp_reader_damage(rd, &d) == 0);
	dp_reader_free(rd);
	unlink(out);
}

static void test_command_missing(void)
{
	char out[128], old[140];
	snprintf(out, sizeof(out), "%s/missing.data", g_dir);
	snprintf(old, sizeof(old), "%s.old", out);
	FILE *f = fopen(out, "w");
	fputs("earlier recording", f);
	fclose(f);
	char *cmd[] = { "/nonexistent/domprof-no-such-command", NULL };
	struct notes nt = { 0 };
	struct recorder_config cfg = config(out, cmd, &nt);
	struct recorder r;
	recorder_init(&r, &cfg);
	char *argv[] = { "record", cmd[0], NULL };
	CHECK(recorder_open_output(&r) == 0);
	CHECK(recorder_spawn(&r) == 0);
	CHECK(recorder_start_file(&r, 2, argv) == 0);
	uint64_t t0;
	CHECK_EQ_U64(recorder_start(&r, &t0), 127);
	CHECK_EQ_U64(nt.n, 1);
	CHECK_STR(nt.last, "cannot run '/nonexistent/domprof-no-such-command': command not found");
	recorder_abort(&r);
	recorder_free(&r);
	/* the earlier FILE is back, nothing else is left */
	char buf[64] = "";
	f = fopen(out, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(buf, sizeof(buf), f) != NULL);
		fclose(f);
	}
	CHECK_STR(buf, "earlier recording");
	CHECK(!exists(old));
	unlink(out);
}

static void test_output_dir_missing(void)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/no/such/dir.data", g_dir);
	char *cmd[] = { NULL };
	struct notes nt = { 0 };
	struct recorder_config cfg = config(out, cmd, &nt);
	struct recorder r;
	recorder_init(&r, &cfg);
	CHECK(recorder_open_output(&r) < 0);
	CHECK_EQ_U64(nt.n, 1);
	CHECK(strstr(nt.last, out) != NULL);
	recorder_free(&r);
}

static void test_bad_domain(void)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/dom.data", g_dir);
	char *cmd[] = { NULL };
	const char *doms[] = { "vm1=nosuchkind:x" };
	struct notes nt = { 0 };
	struct recorder_config cfg = config(out, cmd, &nt);
	cfg.domains = doms;
	cfg.ndomains = 1;
	struct recorder r;
	recorder_init(&r, &cfg);
	char *argv[] = { "record", NULL };
	CHECK(recorder_open_output(&r) == 0);
	CHECK(recorder_start_file(&r, 1, argv) < 0);
	CHECK_EQ_U64(nt.n, 1);
	CHECK(nt.last[0] != 0);
	recorder_abort(&r);
	recorder_free(&r);
	CHECK(!exists(out));
}

static void test_ready_fd(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	char v[16];
	snprintf(v, sizeof(v), "%d", p[1]);
	setenv("DOMPROF_READY_FD", v, 1);
	int fd = recorder_take_ready_fd();
	CHECK_EQ_U64(fd, p[1]);
	CHECK(getenv("DOMPROF_READY_FD") == NULL);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	recorder_signal_ready(fd);
	char c = 0;
	CHECK(read(p[0], &c, 1) == 1 && c == 'r');
	close(p[0]);
	/* a regular file is no readiness pipe */
	char path[128];
	snprintf(path, sizeof(path), "%s/notapipe", g_dir);
	int rf = open(path, O_CREAT | O_RDWR, 0600);
	snprintf(v, sizeof(v), "%d", rf);
	setenv("DOMPROF_READY_FD", v, 1);
	CHECK(recorder_take_ready_fd() == -1);
	CHECK(getenv("DOMPROF_READY_FD") == NULL);
	close(rf);
	unlink(path);
	recorder_signal_ready(-1); /* no-op */
}

int main(void)
{
	strcpy(g_dir, "/tmp/test-recorder-XXXXXX");
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_command_runs();
	test_command_missing();
	test_output_dir_missing();
	test_bad_domain();
	test_ready_fd();
	rmdir(g_dir);
	return unit_done();
}
