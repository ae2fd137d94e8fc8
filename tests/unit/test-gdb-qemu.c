// SPDX-License-Identifier: MIT
/*
 * The passive sampler against a REAL qemu-system-x86_64 (no guest: the
 * VM starts paused with -S and runs its firmware once we resume it).
 * Through the public domain_source API: start, write meta, drain into a
 * real writer, stop; then read the file back and check the DOMAIN record
 * and the samples. Also: two vCPUs give samples on both, a VM killed
 * mid-recording ends the source with a message and leaves a valid file,
 * a VM whose qemu stalls (SIGSTOP) is resumed when qemu continues or the
 * message says it may be left paused (checked with the monitor's
 * `info status`), a detach works after a multiprocess debugger, and a
 * non-loopback address is refused. Prints samples/s per vCPU and the
 * stop time per sample (informational; not asserted). Skips (77) when
 * qemu is not installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/domain_source.h"
#include "collect/gdb_source.h"
#include "format/format.h"
#include "unit.h"

static const char *qemu_bin(void)
{
	static const char *c[] = { "/usr/bin/qemu-system-x86_64", "/usr/local/bin/qemu-system-x86_64" };
	for (size_t i = 0; i < 2; i++)
		if (access(c[i], X_OK) == 0)
			return c[i];
	return NULL;
}

static char monsock[300];

static pid_t start_qemu(const char *sock, const char *smp)
{
	unlink(sock);
	unlink(monsock);
	char gdb[600], mon[600];
	snprintf(gdb, sizeof(gdb), "unix:%s,server=on,wait=off", sock);
	snprintf(mon, sizeof(mon), "unix:%s,server=on,wait=off", monsock);
	pid_t p = fork();
	if (p == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(qemu_bin(), "qemu-system-x86_64", "-accel", "tcg", "-display", "none",
		      "-S", "-m", "64", "-smp", smp, "-monitor", mon, "-serial", "none",
		      "-nodefaults", "-no-reboot", "-gdb", gdb, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {   /* up to 10 s for the socket */
		struct stat st;
		if (stat(sock, &st) == 0) {
			/* the socket is bound before QEMU listens on it: a
			 * connect in between is refused (seen under valgrind) */
			usleep(300000);
			return p;
		}
		usleep(50000);
	}
	return p;
}

static void stop_qemu(pid_t p)
{
	kill(p, SIGTERM);
	waitpid(p, NULL, 0);
}

/* One command to the QEMU monitor (HMP) on its unix socket. */
static void monitor_cmd(const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", monsock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd));
	usleep(300000);   /* let the monitor act before we hang up */
	close(fd);
}

/* Read from fd until buf ends with the monitor prompt (at most 5 s). */
static size_t read_prompt(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	for (int i = 0; i < 50 && n + 1 < cap; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = 0;
		if (n >= 7 && !strcmp(buf + n - 7, "(qemu) "))
			break;
	}
	buf[n] = 0;
	return n;
}

/* The monitor's `info status` in out ("running", "paused", ...). */
static void monitor_status(char *out, size_t cap)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", monsock);
	snprintf(out, cap, "?");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	read_prompt(fd, buf, sizeof(buf));
	CHECK(write(fd, "info status\n", 12) == 12);
	read_prompt(fd, buf, sizeof(buf));
	close(fd);
	const char *p = strstr(buf, "VM status: ");
	if (p)
		snprintf(out, cap, "%.*s", (int)strcspn(p + 11, " \r\n"), p + 11);
}

/* A debugger session like gdb's: it negotiates multiprocess (which QEMU
 * then keeps for later clients) and detaches. */
static void multiprocess_session(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096] = "";
	static const char q[] = "$qSupported:multiprocess+#c6", d[] = "+$D;1#b0";
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	usleep(200000);
	CHECK(write(fd, q, strlen(q)) == (ssize_t)strlen(q));
	usleep(200000);
	CHECK(write(fd, d, strlen(d)) == (ssize_t)strlen(d));
	size_t n = 0;
	for (int i = 0; i < 20 && !strstr(buf, "$OK#9a"); i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		buf[n] = 0;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = 0;
	}
	buf[n] = 0;
	CHECK(strstr(buf, "multiprocess+") != NULL);
	CHECK(strstr(buf, "$OK#9a") != NULL);
	close(fd);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct readback {
	int domains, samples, lost_recs, symtabs;
	uint64_t lost;
	uint64_t per_cpu[4];
	int wrong_domain, bad_fields;
	char name[64], address[300];
	uint8_t kind;
	uint32_t vcpus;
};

static void read_back(const char *path, uint32_t id, struct readback *rb)
{
	int err;
	char msg[200];
	memset(rb, 0, sizeof(*rb));
	struct dp_reader *r = dp_reader_open(path, &err, msg, sizeof(msg));
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "reader: %s\n", msg);
		return;
	}
	struct dp_record rec;
	while (dp_reader_next(r, &rec) == 1) {
		switch (rec.type) {
		case DP_REC_DOMAIN:
			rb->domains++;
			snprintf(rb->name, sizeof(rb->name), "%s", rec.u.domain.name);
			snprintf(rb->address, sizeof(rb->address), "%s", rec.u.domain.address);
			rb->kind = rec.u.domain.kind;
			rb->vcpus = rec.u.domain.vcpus;
			break;
		case DP_REC_SAMPLE:
			rb->samples++;
			if (rec.domain != id)
				rb->wrong_domain++;
			if (rec.u.sample.cpu < 4)
				rb->per_cpu[rec.u.sample.cpu]++;
			if (!rec.u.sample.has_asid || (rec.u.sample.asid & 0xfff) ||
			    rec.u.sample.period != 1000000 || rec.u.sample.pid || rec.u.sample.tid ||
			    (rec.u.sample.mode != DP_MODE_KERNEL && rec.u.sample.mode != DP_MODE_USER))
				rb->bad_fields++;
			break;
		case DP_REC_LOST:
			rb->lost_recs++;
			rb->lost += rec.u.lost.count;
			break;
		case DP_REC_SYMTAB:
			rb->symtabs++;
			break;
		}
	}
	const struct dp_damage *dmg;
	CHECK(dp_reader_damage(r, &dmg) == 0);
	dp_reader_free(r);
}

static struct dp_writer *open_writer(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	struct dp_header h;
	char *argv[] = { "test-gdb-qemu", NULL };
	dp_header_fill_local(&h, 1, argv);
	struct dp_writer_opts wo = { 0 };
	int err = 0;
	struct dp_writer *w = dp_writer_new(fd, &h, &wo, &err);
	CHECK(w != NULL);
	return w;
}

/* The sampling rate of record(): 1000 Hz, but see the monitor-stop case. */
static unsigned rec_hz = 1000;

/* Record `secs` seconds from the VM at sock into path; returns the source
 * stats. If kill_after > 0, send sig to qemu then (0: the monitor's
 * stop), and SIGCONT cont_after seconds later if cont_after > 0. The end
 * message (empty if none) is taken after the stop. */
static void record(const char *sock, const char *path, double secs, pid_t qemu, double kill_after,
		   int sig, double cont_after, struct gdb_source_stats *st, char *endmsg, size_t endlen)
{
	char spec[400], err[512];
	snprintf(spec, sizeof(spec), "vm=gdb:unix:%s", sock);
	struct domain_source_opts o = { .hz = rec_hz };
	struct domain_source *s = domain_source_start(spec, 7, &o, err, sizeof(err));
	CHECK(s != NULL);
	if (!s) {
		fprintf(stderr, "start: %s\n", err);
		return;
	}
	/* The start-up reads guest memory on the source's thread: its
	 * line comes when that is over (bounded by its budget). */
	for (int i = 0; i < 3000 && !domain_source_info(s); i++)
		usleep(10000);
	CHECK(domain_source_info(s) != NULL);
	if (!domain_source_info(s))
		return;
	printf("info: %s\n", domain_source_info(s));
	/* qemu -S: the VM is still at the reset vector, no kernel anywhere.
	 * Reading guest memory finds nothing and says so in one line; the
	 * domain is recorded by address all the same. */
	CHECK(strstr(domain_source_info(s), "no kernel symbols from guest memory") != NULL);
	CHECK(strstr(domain_source_info(s), "still in firmware") != NULL);
	CHECK_STR(domain_source_name(s), "vm");
	struct dp_writer *w = open_writer(path);
	CHECK(domain_source_write_meta(s, w) == 0);
	domain_source_begin(s);
	double t0 = now_s();
	bool killed = false;
	double max_drain = 0, last_stop = 0;
	bool conted = false;
	while (now_s() - t0 < secs) {
		usleep(20000);
		double d0 = now_s();
		CHECK(domain_source_drain(s, w) >= 0);
		if (now_s() - d0 > max_drain)
			max_drain = now_s() - d0;
		/* A monitor stop that lands while the sampler holds the VM is
		 * undone by the sampler's resume (a known limit, see
		 * docs/passive.md): repeat it until the source notices. */
		if (sig == 0 && killed && !domain_source_ended(s) && now_s() - last_stop > 0.5) {
			monitor_cmd("stop\n");
			last_stop = now_s();
		}
		if (kill_after > 0 && !killed && now_s() - t0 > kill_after) {
			last_stop = now_s();
			if (sig == 0)
				monitor_cmd("stop\n");
			else
				kill(qemu, sig);
			if (sig == SIGKILL)
				waitpid(qemu, NULL, 0);
			killed = true;
		}
		if (killed && cont_after > 0 && !conted && now_s() - t0 > kill_after + cont_after) {
			kill(qemu, SIGCONT);
			conted = true;
		}
		if (domain_source_ended(s) && (conted || cont_after <= 0))
			break;
	}
	/* A stalled or dead VM never blocks drain (0.5 s is far above a
	 * drain's cost and far below the stub timeout). */
	CHECK(max_drain < 0.5);
	domain_source_stop(s);
	CHECK(domain_source_drain(s, w) >= 0);
	endmsg[0] = 0;
	if (domain_source_ended(s))
		snprintf(endmsg, endlen, "%s", domain_source_message(s));
	gdb_source_get_stats(domain_source_gdb(s), st);
	uint64_t n = domain_source_samples(s);
	CHECK_EQ_U64(n, st->samples);
	domain_source_stop(s);   /* twice is safe */
	domain_source_free(s);
	CHECK(dp_writer_finish(w) == 0);
}

int main(void)
{
	if (!qemu_bin()) {
		printf("SKIP: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)\n");
		return 77;
	}
	char dir[] = "/tmp/dp-gdbq-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char sock[128], path[128], endmsg[512];
	snprintf(sock, sizeof(sock), "%s/gdb.sock", dir);
	snprintf(path, sizeof(path), "%s/out.dp", dir);
	snprintf(monsock, sizeof(monsock), "%s/mon.sock", dir);
	struct gdb_source_stats st;
	struct readback rb;

	/* 1 vCPU, 2 s. */
	pid_t q = start_qemu(sock, "1");
	memset(&st, 0, sizeof(st));
	record(sock, path, 2.0, q, 0, 0, 0, &st, endmsg, sizeof(endmsg));
	CHECK(endmsg[0] == 0);
	read_back(path, 7, &rb);
	CHECK_EQ_U64(rb.domains, 1);
	CHECK_STR(rb.name, "vm");
	CHECK(!strncmp(rb.address, "gdb:unix:", 9));
	CHECK_EQ_U64(rb.kind, DP_DOMAIN_PASSIVE);
	CHECK_EQ_U64(rb.vcpus, 1);
	CHECK_EQ_U64(rb.samples, st.samples);
	CHECK(rb.samples > 100);      /* 1000 Hz for 2 s; very loose */
	CHECK_EQ_U64(rb.wrong_domain, 0);
	CHECK_EQ_U64(rb.bad_fields, 0);
	CHECK_EQ_U64(rb.per_cpu[0], rb.samples);
	CHECK_EQ_U64(rb.lost, st.lost);
	if (st.ticks)
		printf("1 vCPU: %" PRIu64 " samples in 2 s (%.0f/s per vCPU), %" PRIu64 " lost, "
		       "VM stopped %.1f us per sample\n", st.samples, st.samples / 2.0, st.lost,
		       st.stop_ns / 1e3 / st.ticks);
	stop_qemu(q);

	/* 2 vCPUs, 2 s: both appear. */
	q = start_qemu(sock, "2");
	record(sock, path, 2.0, q, 0, 0, 0, &st, endmsg, sizeof(endmsg));
	read_back(path, 7, &rb);
	CHECK_EQ_U64(rb.vcpus, 2);
	CHECK(rb.per_cpu[0] > 50);
	CHECK(rb.per_cpu[1] > 50);
	CHECK_EQ_U64(rb.per_cpu[0], rb.per_cpu[1]);
	if (st.ticks)
		printf("2 vCPUs: %" PRIu64 " samples in 2 s (%.0f/s per vCPU), %" PRIu64 " lost, "
		       "VM stopped %.1f us per tick\n", st.samples, st.samples / 2.0 / 2, st.lost,
		       st.stop_ns / 1e3 / st.ticks);
	stop_qemu(q);

	/* VM killed after 1 s: the source ends with a message, file valid. */
	q = start_qemu(sock, "1");
	record(sock, path, 5.0, q, 1.0, SIGKILL, 0, &st, endmsg, sizeof(endmsg));
	printf("end message: %s\n", endmsg);
	CHECK(!strncmp(endmsg, "vm: ", 4));
	CHECK(strstr(endmsg, " samples") != NULL);
	read_back(path, 7, &rb);
	CHECK_EQ_U64(rb.domains, 1);
	CHECK(rb.samples > 10);
	CHECK_EQ_U64(rb.samples, st.samples);

	/* VM stalled (qemu stopped by SIGSTOP) after 1 s for the rest of the
	 * recording: the stub does not answer, the source ends with the
	 * timeout after its samples, and says the VM may be left paused.
	 * It is: qemu pauses it for the 0x03 it finds queued when it
	 * continues. */
	char status[64];
	q = start_qemu(sock, "1");
	record(sock, path, 4.0, q, 1.0, SIGSTOP, 0, &st, endmsg, sizeof(endmsg));
	printf("end message: %s\n", endmsg);
	CHECK(strstr(endmsg, "vm: stub did not answer within 1 s after ") == endmsg);
	CHECK(strstr(endmsg, "; the VM may be left paused (run `cont` in its QEMU monitor)") != NULL);
	read_back(path, 7, &rb);
	CHECK(rb.samples > 10);
	CHECK_EQ_U64(rb.samples, st.samples);
	kill(q, SIGCONT);
	usleep(300000);
	monitor_status(status, sizeof(status));
	printf("after the stall: %s\n", status);
	CHECK_STR(status, "paused");
	monitor_cmd("cont\n");
	monitor_status(status, sizeof(status));
	CHECK_STR(status, "running");
	stop_qemu(q);

	/* Stalled for 1.5 s, then continued while recording: once the stub
	 * answers again, the sampler reads what it was owed and detaches,
	 * so the VM runs. */
	q = start_qemu(sock, "1");
	record(sock, path, 5.0, q, 1.0, SIGSTOP, 1.5, &st, endmsg, sizeof(endmsg));
	printf("end message: %s\n", endmsg);
	CHECK(strstr(endmsg, "vm: stub did not answer within 1 s after ") == endmsg);
	CHECK(strstr(endmsg, "; the VM was resumed when the stub answered again") != NULL);
	usleep(500000);   /* let qemu act on anything still queued */
	monitor_status(status, sizeof(status));
	printf("after the stall: %s\n", status);
	CHECK_STR(status, "running");

	/* After a debugger that negotiated multiprocess, QEMU answers a
	 * bare `D` with E22: the recording must still leave the VM running. */
	multiprocess_session(sock);
	record(sock, path, 1.0, q, 0, 0, 0, &st, endmsg, sizeof(endmsg));
	CHECK(endmsg[0] == 0);
	monitor_status(status, sizeof(status));
	printf("after a multiprocess debugger and a recording: %s\n", status);
	CHECK_STR(status, "running");
	stop_qemu(q);

	/* VM paused through the monitor after 1 s: the source ends saying so
	 * and leaves it paused. (kill_after with signal 0 = monitor stop.)
	 * Up to 20 s: the recording ends as soon as the source notices, but a
	 * stop landing while the sampler holds the VM is undone, and under
	 * valgrind the sampler holds it most of the time (3 s of repeats
	 * were not always enough there; 20 s at 1000 Hz failed once under
	 * valgrind on a host loaded by other builds). At 50 Hz the VM runs
	 * most of the time, so a stop lands outside the sampler's hold. */
	q = start_qemu(sock, "1");
	rec_hz = 50;
	record(sock, path, 20.0, q, 1.0, 0, 0, &st, endmsg, sizeof(endmsg));
	rec_hz = 1000;
	printf("end message: %s\n", endmsg);
	CHECK(strstr(endmsg, "vm: VM was paused outside domprof") == endmsg);
	stop_qemu(q);

	/* Nothing listening: a one-line error naming the domain. */
	char err[512];
	struct domain_source_opts o = { .hz = 100 };
	char spec[300];
	snprintf(spec, sizeof(spec), "vm2=gdb:unix:%s", sock);
	CHECK(domain_source_start(spec, 8, &o, err, sizeof(err)) == NULL);
	printf("no stub: %s\n", err);
	CHECK(!strncmp(err, "vm2: cannot connect", 19));
	/* Remote address refused before any connection is tried. */
	CHECK(domain_source_start("vm3=gdb:192.0.2.1:1234", 9, &o, err, sizeof(err)) == NULL);
	printf("remote: %s\n", err);
	CHECK(strstr(err, "not a loopback") != NULL);
	CHECK(domain_source_start("vm4=bogus:127.0.0.1:7000", 9, &o, err, sizeof(err)) == NULL);
	CHECK(!strncmp(err, "vm4: unknown domain kind", 24));
	CHECK(domain_source_start("vm5=gdb:unix:/s,frob=1", 9, &o, err, sizeof(err)) == NULL);
	CHECK(!strncmp(err, "vm5: unknown option", 19));

	unlink(sock);
	unlink(path);
	unlink(monsock);
	rmdir(dir);
	return unit_done();
}
