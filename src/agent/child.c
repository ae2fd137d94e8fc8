// SPDX-License-Identifier: MIT
/*
 * The agent's recorder child (agent/child.h): start `record -a` with a
 * readiness pipe, stop it as Ctrl-C would, reap it with bounded waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/child.h"
#include "format/raw.h"

void agent_child_init(struct agent_child *c, const struct workdir *wd)
{
	c->wd = wd;
	c->pid = 0;
	snprintf(c->data, sizeof(c->data), "%.4000s/agent.data", wd->path);
	snprintf(c->log, sizeof(c->log), "%.4000s/agent-record.log", wd->path);
}

static uint64_t file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Last non-empty line of the recorder's log, for messages. */
static void last_log_line(const struct agent_child *a, char *out, size_t outlen)
{
	out[0] = '\0';
	FILE *f = fopen(a->log, "re");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(out, outlen, "%.*s", (int)(outlen - 1), line);
	}
	fclose(f);
}

static void reap(struct agent_child *a, int *status, int timeout_ms)
{
	*status = -1;
	if (a->pid <= 0)
		return;
	for (int waited = 0;; waited += 20) {
		pid_t p = waitpid(a->pid, status, WNOHANG);
		if (p == a->pid || (p < 0 && errno != EINTR))
			break;
		if (waited >= timeout_ms) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, status, 0);
			break;
		}
		usleep(20000);
	}
	a->pid = 0;
}

/* In the child: become `domprof record -a ...` writing to lfd, with the
 * readiness pipe's write end as DOMPROF_READY_FD. Never returns. */
static void exec_recorder(const struct agent_child *a, const char *hz, bool callchain,
			  const char *dwarf, int lfd, int ready_wfd)
{
	dup2(lfd, 1);
	dup2(lfd, 2);
	int nfd = open("/dev/null", O_RDONLY);
	if (nfd >= 0)
		dup2(nfd, 0);
	int wfd = dup(ready_wfd); /* without O_CLOEXEC: it survives exec */
	char env[32];
	snprintf(env, sizeof(env), "%d", wfd);
	setenv("DOMPROF_READY_FD", env, 1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* an agent that dies must not leave a recorder running forever */
	prctl(PR_SET_PDEATHSIG, SIGINT);
	char *argv[12];
	int n = 0;
	argv[n++] = "domprof";
	argv[n++] = "record";
	argv[n++] = "-a";
	argv[n++] = "-F";
	argv[n++] = (char *)hz;
	if (dwarf[0]) {
		argv[n++] = "--call-graph";
		argv[n++] = (char *)dwarf;
	} else if (callchain) {
		argv[n++] = "-g";
	}
	argv[n++] = "-f";
	argv[n++] = "-o";
	argv[n++] = (char *)a->data;
	argv[n] = NULL;
	execv("/proc/self/exe", argv);
	/* the child's stderr is the log file: this line is what the agent reports */
	fprintf(stderr, "domprof agent: cannot run /proc/self/exe: %s\n", strerror(errno));
	_exit(127);
}

/*
 * Start `record -a` and wait until it samples. The recorder is asked to
 * write one byte on DOMPROF_READY_FD once its events are enabled; a
 * recorder without that hook is recognised by its file instead: the
 * header comes first, then the chunk holding the embedded kallsyms
 * (written before the events are enabled), and enabling follows at once.
 */
int agent_child_start(struct agent_child *a, unsigned hzv, bool callchain, uint32_t stack_size,
		      char *why, size_t whylen)
{
	char hz[16], dwarf[32] = "";
	int rp[2];
	snprintf(hz, sizeof(hz), "%u", hzv);
	/* a number checked by ap_start_decode, never text from the wire */
	if (stack_size)
		snprintf(dwarf, sizeof(dwarf), "dwarf,%u", (unsigned)stack_size);
	unlink(a->data); /* in the private dir: nobody else can put one back */
	int lfd = workdir_create_file(a->wd, "agent-record.log", O_WRONLY);
	if (lfd < 0) {
		snprintf(why, whylen, "cannot create %.400s: %s", a->log, strerror(-lfd));
		return -1;
	}
	if (pipe2(rp, O_CLOEXEC) < 0) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		close(lfd);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(rp[0]);
		close(rp[1]);
		close(lfd);
		return -1;
	}
	if (pid == 0)
		exec_recorder(a, hz, callchain, dwarf, lfd, rp[1]);
	close(rp[1]);
	close(lfd);
	a->pid = pid;
	uint64_t hdr = 0;
	int ret = -1;
	for (int i = 0; i < 6000; i++) { /* 60 s: a TCG guest is slow */
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			a->pid = 0;
			char line[512];
			last_log_line(a, line, sizeof(line));
			snprintf(why, whylen, "the guest's recorder failed: %.400s",
				 line[0] ? line : "exited at once");
			close(rp[0]);
			return -1;
		}
		struct pollfd pf = { .fd = rp[0], .events = POLLIN };
		if (poll(&pf, 1, 10) > 0) {
			char ch;
			if (read(rp[0], &ch, 1) == 1) {
				ret = 0;
				break;
			}
		}
		uint64_t sz = file_size(a->data);
		if (!hdr && sz >= DP_FILE_HEADER_MIN)
			hdr = sz;
		else if (hdr && sz > hdr) {
			usleep(300000);
			ret = 0;
			break;
		}
	}
	close(rp[0]);
	if (ret == 0)
		return 0;
	int status;
	kill(pid, SIGKILL);
	reap(a, &status, 1000);
	snprintf(why, whylen, "the guest's recorder did not start within 60 s");
	return -1;
}

/* Stop the recorder as Ctrl-C would; it finishes its file. */
int agent_child_stop(struct agent_child *a, char *msg, size_t msglen)
{
	int status = -1;
	if (a->pid > 0) {
		kill(a->pid, SIGINT);
		reap(a, &status, 120000);
	}
	last_log_line(a, msg, msglen);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (!msg[0])
			snprintf(msg, msglen, "the guest's recorder ended abnormally (status 0x%x)", status);
		return file_size(a->data) >= DP_FILE_HEADER_MIN ? 0 : -1;
	}
	return 0;
}

bool agent_child_running(const struct agent_child *c)
{
	return c->pid > 0;
}

int agent_child_ended(struct agent_child *c, int *status)
{
	if (c->pid <= 0 || waitpid(c->pid, status, WNOHANG) != c->pid)
		return 0;
	c->pid = 0;
	return 1;
}

void agent_child_discard(struct agent_child *c)
{
	unlink(c->data);
}
