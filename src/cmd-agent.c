// SPDX-License-Identifier: MIT
/*
 * `domprof agent`: the in-guest half of an active domain. It listens
 * only where told (--listen), serves one controller (a host's `domprof
 * record --domain NAME=agent:ADDRESS`) at a time, and understands only
 * the requests of collect/agent_proto.h: HELLO, START, STOP, COLLECT.
 *
 * START runs this very binary as `record -a -F HZ [-g] -o PRIV/agent.data`
 * (the whole guest, cpu-clock; PRIV is the 0700 directory the agent made
 * under --dir, agent/workdir.h); STOP sends it SIGINT, so the recorder
 * finishes its file as after Ctrl-C; COLLECT reads that file and sends
 * the guest's records (tasks, maps, samples, its kallsyms) as raw
 * records, then the ELF files of the guest binaries that samples hit and
 * that pass agent/ship.h's identity checks, as SYMTAB blobs named by
 * build-id. The agent never runs anything else and
 * no request carries a path or a command (see docs/active.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "agent/ship.h"
#include "agent/workdir.h"
#include "collect/agent_proto.h"
#include "commands.h"
#include "format/format.h"
#include "util/sha256.h"
#include "util/xalloc.h"

const char usage_agent[] =
	"usage: domprof agent --listen ADDRESS [--key-file FILE | --insecure] [--dir DIR]\n"
	"                     [--idle-timeout SEC] [--once]\n"
	"\n"
	"Run inside a guest: wait for a host's `domprof record --domain NAME=agent:ADDRESS`,\n"
	"record the whole guest while the host records, and send the guest's samples,\n"
	"tasks, maps, kallsyms and the symbol tables of the binaries that were hit.\n"
	"\n"
	"  --listen ADDRESS  where to wait for the host (required; nothing is opened\n"
	"                    otherwise):\n"
	"                      tcp:HOST:PORT   a TCP port, e.g. tcp:10.0.2.15:7000 behind\n"
	"                                      QEMU's -netdev user,hostfwd=...\n"
	"                      unix:PATH       a unix socket\n"
	"                      /dev/PATH       a character device: a virtio-serial port\n"
	"                                      (/dev/vport0p1) or a serial line (/dev/ttyS1)\n"
	"  --key-file FILE   demand that the host proves it holds this shared key (and\n"
	"                    prove it in turn) before any request; created (random,\n"
	"                    mode 0600) if absent. The host gives it as\n"
	"                    --domain NAME=agent:ADDRESS,key=FILE\n"
	"  --insecure        allow a TCP address that is not loopback without a key\n"
	"                    (anyone who reaches it controls the agent)\n"
	"  --dir DIR         where the agent makes its private directory (mode 0700) for\n"
	"                    the recording (default /tmp); refused when it or a directory\n"
	"                    above it is writable by other users and not sticky, or owned\n"
	"                    by another user\n"
	"  --idle-timeout SEC  close a controller that sends nothing for SEC seconds\n"
	"                    while no recording runs (default 30)\n"
	"  --once            exit after the first controller disconnects\n"
	"\n"
	"One controller at a time; others are refused. Only the requests hello, start,\n"
	"stop and collect are understood; anything else closes the connection.\n"
	"Without --key-file a TCP address must be loopback (or --insecure); a unix\n"
	"socket is created mode 0600 (only this user connects). See docs/active.md.\n";

#define AGENT_BATCH (256u << 10)     /* raw records per RECORD frame */

enum lkind { L_TCP, L_UNIX, L_DEV };

struct agent {
	enum lkind kind;
	const char *listen;
	const char *dir;
	bool once;
	const char *key_file;    /* NULL: no authentication */
	struct ap_key key;
	bool insecure;
	int idle_ms;
	int lfd;                 /* listening socket, or -1 for a device */
	struct workdir wd;       /* private dir: the recording and its log */
	char data[4200], log[4200];
	/* session */
	pid_t child;
	bool recording, stopped;
	uint8_t *buf;
	size_t cap;
};

static volatile sig_atomic_t g_quit;
static void on_quit(int sig) { g_quit = sig; }

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "domprof agent: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int send_text(int fd, uint16_t type, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int send_text(int fd, uint16_t type, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ap_send(fd, type, 0, msg, strlen(msg));
}

/* ---- listening ---- */

static int open_listen(struct agent *a, char *err, size_t errlen)
{
	const char *l = a->listen;
	if (!strncmp(l, "tcp:", 4)) {
		char host[256];
		const char *hp = l + 4, *colon = strrchr(hp, ':');
		if (!colon || colon == hp || !colon[1] || (size_t)(colon - hp) >= sizeof(host)) {
			snprintf(err, errlen, "bad --listen '%s': expected tcp:HOST:PORT", l);
			return -EINVAL;
		}
		memcpy(host, hp, (size_t)(colon - hp));
		host[colon - hp] = '\0';
		if (host[0] == '[' && host[strlen(host) - 1] == ']') {
			memmove(host, host + 1, strlen(host));
			host[strlen(host) - 1] = '\0';
		}
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res;
		int r = getaddrinfo(host, colon + 1, &hints, &res);
		if (r) {
			snprintf(err, errlen, "bad --listen '%s': %s", l, gai_strerror(r));
			return -EINVAL;
		}
		/* Without a key, whoever connects controls a root process:
		 * only loopback, unless the user says otherwise. */
		if (!ap_is_loopback(res->ai_addr) && !a->key_file) {
			if (!a->insecure) {
				snprintf(err, errlen, "refusing to listen on %s without a key: it is not a loopback "
					 "address, so anyone who reaches it would control this agent (give "
					 "--key-file FILE, or --insecure)", l);
				freeaddrinfo(res);
				return -EPERM;
			}
			say("WARNING: listening on %s without a key (--insecure): anyone who can reach it "
			    "controls this agent", l);
		}
		int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
		if (fd >= 0)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 1) < 0) {
			int e = errno;
			snprintf(err, errlen, "cannot listen on %s: %s", l, strerror(e));
			if (fd >= 0)
				close(fd);
			freeaddrinfo(res);
			return -e;
		}
		freeaddrinfo(res);
		a->kind = L_TCP;
		a->lfd = fd;
		return 0;
	}
	if (!strncmp(l, "unix:", 5)) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		if (strlen(l + 5) >= sizeof(sa.sun_path) || !l[5]) {
			snprintf(err, errlen, "bad --listen '%s': socket path empty or too long", l);
			return -EINVAL;
		}
		strcpy(sa.sun_path, l + 5);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* created 0600 from the start (no window before the chmod):
		 * connecting needs write access, so only this user connects */
		mode_t um = umask(0177);
		int b = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(um);
		if (fd < 0 || b < 0 || listen(fd, 1) < 0) {
			int e = errno;
			snprintf(err, errlen, "cannot listen on %s: %s%s", l, strerror(e),
				 e == EADDRINUSE ? " (remove the old socket file)" : "");
			if (fd >= 0)
				close(fd);
			return -e;
		}
		chmod(sa.sun_path, 0600);
		a->kind = L_UNIX;
		a->lfd = fd;
		return 0;
	}
	if (l[0] == '/') {
		struct stat st;
		if (stat(l, &st) < 0 || !S_ISCHR(st.st_mode)) {
			snprintf(err, errlen, "cannot listen on %s: %s", l,
				 errno && stat(l, &st) < 0 ? strerror(errno) : "not a character device");
			return -ENODEV;
		}
		a->kind = L_DEV;
		a->lfd = -1;
		return 0;
	}
	snprintf(err, errlen, "bad --listen '%s': expected tcp:HOST:PORT, unix:PATH or a /dev path", l);
	return -EINVAL;
}

static int open_device(const char *path)
{
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct termios t;
	if (tcgetattr(fd, &t) == 0) {
		/* a serial line must pass every byte unchanged */
		cfmakeraw(&t);
		cfsetispeed(&t, B115200);
		cfsetospeed(&t, B115200);
		tcsetattr(fd, TCSANOW, &t);
		tcflush(fd, TCIOFLUSH);
	}
	return fd;
}

/* ---- the recorder child ---- */

static uint64_t file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Last non-empty line of the recorder's log, for messages. */
static void last_log_line(const struct agent *a, char *out, size_t outlen)
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

static void reap(struct agent *a, int *status, int timeout_ms)
{
	*status = -1;
	if (a->child <= 0)
		return;
	for (int waited = 0;; waited += 20) {
		pid_t p = waitpid(a->child, status, WNOHANG);
		if (p == a->child || (p < 0 && errno != EINTR))
			break;
		if (waited >= timeout_ms) {
			kill(a->child, SIGKILL);
			waitpid(a->child, status, 0);
			break;
		}
		usleep(20000);
	}
	a->child = 0;
}

/*
 * Start `record -a` and wait until it samples. The recorder is asked to
 * write one byte on DOMPROF_READY_FD once its events are enabled; a
 * recorder without that hook is recognised by its file instead: the
 * header comes first, then the chunk holding the embedded kallsyms
 * (written before the events are enabled), and enabling follows at once.
 */
static int start_recording(struct agent *a, const struct ap_start *st, char *why, size_t whylen)
{
	char hz[16];
	int rp[2];
	snprintf(hz, sizeof(hz), "%u", st->hz);
	unlink(a->data); /* in the private dir: nobody else can put one back */
	int lfd = workdir_create_file(&a->wd, "agent-record.log", O_WRONLY);
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
	if (pid == 0) {
		dup2(lfd, 1);
		dup2(lfd, 2);
		int nfd = open("/dev/null", O_RDONLY);
		if (nfd >= 0)
			dup2(nfd, 0);
		int wfd = dup(rp[1]); /* without O_CLOEXEC: it survives exec */
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
		argv[n++] = hz;
		if (st->flags & AP_START_CALLCHAIN)
			argv[n++] = "-g";
		argv[n++] = "-f";
		argv[n++] = "-o";
		argv[n++] = a->data;
		argv[n] = NULL;
		execv("/proc/self/exe", argv);
		fprintf(stderr, "domprof agent: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	close(rp[1]);
	close(lfd);
	a->child = pid;
	uint64_t hdr = 0;
	int ret = -1;
	for (int i = 0; i < 6000; i++) { /* 60 s: a TCG guest is slow */
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			a->child = 0;
			char line[512];
			last_log_line(a, line, sizeof(line));
			snprintf(why, whylen, "the guest's recorder failed: %.400s",
				 line[0] ? line : "exited at once");
			close(rp[0]);
			return -1;
		}
		struct pollfd pf = { .fd = rp[0], .events = POLLIN };
		if (poll(&pf, 1, 10) > 0) {
			char c;
			if (read(rp[0], &c, 1) == 1) {
				ret = 0;
				break;
			}
		}
		uint64_t sz = file_size(a->data);
		if (!hdr && sz >= 48)
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
static int stop_recording(struct agent *a, char *msg, size_t msglen)
{
	int status = -1;
	if (a->child > 0) {
		kill(a->child, SIGINT);
		reap(a, &status, 120000);
	}
	last_log_line(a, msg, msglen);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (!msg[0])
			snprintf(msg, msglen, "the guest's recorder ended abnormally (status 0x%x)", status);
		return file_size(a->data) >= 48 ? 0 : -1;
	}
	return 0;
}

/* ---- collect: the guest's records and the binaries that were hit ---- */

/* Our own vDSO: the guest kernel gives every process the same one. */
static int own_vdso(uint8_t **data, size_t *len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f = base ? fopen("/proc/self/maps", "re") : NULL;
	if (!f)
		return -ENOENT;
	char line[512];
	int r = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base && hi > lo) {
			*len = hi - lo;
			*data = xmalloc(*len);
			memcpy(*data, (const void *)lo, *len);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

struct batch {
	uint8_t *b;
	size_t n, cap;
	int fd;
};

static int batch_flush(struct batch *bt)
{
	if (!bt->n)
		return 0;
	int r = ap_send(bt->fd, AP_RECORD, AP_F_ZSTD, bt->b, bt->n);
	bt->n = 0;
	return r;
}

static int batch_add(struct batch *bt, const void *raw, size_t len)
{
	if (bt->n + len > AGENT_BATCH) {
		int r = batch_flush(bt);
		if (r < 0)
			return r;
	}
	xgrow((void **)&bt->b, &bt->cap, bt->n + len, 1);
	memcpy(bt->b + bt->n, raw, len);
	bt->n += len;
	return 0;
}

/*
 * Send the ELF files samples hit, each named by its build-id, and the
 * vDSO. ship_read (agent/ship.h) decides what may be read: only the file
 * that was mapped, checked by build-id, never through a symbolic link.
 * Returns 0 or a negative errno from sending; counts what was sent and
 * what was refused.
 */
static int ship_symbols(int fd, const struct ship *sh, unsigned *nsym, uint64_t *symbytes,
			unsigned *nrefused)
{
	bool vdso_sent = false;
	bool *sent = xcalloc(ship_nfiles(sh) + 1, sizeof(bool));
	int ret = 0;
	for (size_t i = 0; !ret && i < ship_nfiles(sh); i++) {
		const struct ship_file *f = ship_file_at(sh, i);
		if (!f->hit)
			continue;
		uint8_t *data = NULL;
		size_t len = 0;
		char name[48];
		const char *how = "";
		if (!strcmp(f->path, "[vdso]")) {
			if (vdso_sent || own_vdso(&data, &len) < 0)
				continue;
			vdso_sent = true;
			snprintf(name, sizeof(name), "[vdso]");
		} else {
			for (unsigned k = 0; k < f->bidlen; k++)
				sprintf(name + 2 * k, "%02x", f->bid[k]);
			bool dup = false; /* the same build-id sent under another path */
			for (size_t j = 0; j < i && !dup; j++) {
				const struct ship_file *g = ship_file_at(sh, j);
				dup = sent[j] && g->bidlen == f->bidlen && !memcmp(g->bid, f->bid, f->bidlen);
			}
			if (dup)
				continue;
			enum ship_via via;
			int r = ship_read(sh, i, &data, &len, &via);
			if (r < 0) {
				say("not shipped: %s: %s; its samples stay [unknown]", f->path, ship_strerror(r));
				(*nrefused)++;
				continue;
			}
			how = via == SHIP_VIA_MAP_FILES ? ", through its mapping" : ", by path";
		}
		size_t plen;
		uint8_t *p = ap_symtab_encode(DP_SYMTAB_ELF, name, data, len, &plen);
		ret = ap_send(fd, AP_SYMTAB, AP_F_ZSTD, p, plen);
		free(p);
		free(data);
		sent[i] = true;
		(*nsym)++;
		*symbytes += len;
		say("sent %s (%s, %zu bytes%s)", f->path, name, len, how);
	}
	free(sent);
	return ret;
}

static int collect(struct agent *a, int fd, char *why, size_t whylen)
{
	int err = 0;
	char msg[256];
	struct dp_reader *r = dp_reader_open(a->data, &err, msg, sizeof(msg));
	if (!r) {
		snprintf(why, whylen, "cannot read the guest's recording: %s", msg);
		return -1;
	}
	struct ship *sh = ship_new();
	struct batch bt = { .fd = fd };
	struct ap_end end = { 0 };
	struct dp_record rec;
	int ret = 0;
	while (!ret && dp_reader_next(r, &rec) == 1) {
		if (rec.domain != DP_HOST_DOMAIN)
			continue;
		switch (rec.type) {
		case DP_REC_MMAP:
			ship_mmap(sh, &rec.u.mmap);
			break;
		case DP_REC_TASK:
			if (rec.u.task.kind == DP_TASK_FORK)
				ship_fork(sh, &rec.u.task);
			break;
		case DP_REC_SAMPLE:
			end.samples++;
			if (rec.u.sample.mode == DP_MODE_USER)
				ship_ip(sh, rec.u.sample.pid, rec.u.sample.ip);
			for (uint32_t i = 0; i < rec.u.sample.nr_callchain; i++)
				if (rec.u.sample.callchain[i] < 0x800000000000ull)
					ship_ip(sh, rec.u.sample.pid, rec.u.sample.callchain[i]);
			break;
		case DP_REC_LOST:
			end.lost += rec.u.lost.count;
			continue;
		case DP_REC_SYMTAB:
			break;
		default:
			continue; /* DOMAIN, EVENT, STATS: the host writes its own */
		}
		end.records++;
		ret = batch_add(&bt, rec.raw, rec.raw_len);
	}
	if (!ret)
		ret = batch_flush(&bt);
	free(bt.b);
	size_t ndamage = dp_reader_damage(r, &(const struct dp_damage *){ NULL });
	dp_reader_free(r);
	if (ndamage)
		say("the guest's recording had %zu damaged part(s); sent what was readable", ndamage);

	unsigned nsym = 0, nrefused = 0;
	uint64_t symbytes = 0;
	if (!ret)
		ret = ship_symbols(fd, sh, &nsym, &symbytes, &nrefused);
	ship_free(sh);
	if (!ret && end.lost) {
		uint8_t l[8];
		memcpy(l, &end.lost, 8);
		ret = ap_send(fd, AP_LOST, 0, l, 8);
	}
	if (ret < 0) {
		snprintf(why, whylen, "sending to the host: %s", strerror(-ret));
		return -2; /* the connection is gone */
	}
	uint8_t e[24];
	ap_end_encode(&end, e);
	say("sent %" PRIu64 " records (%" PRIu64 " samples, %" PRIu64 " lost) and %u symbol files "
	    "(%" PRIu64 " bytes); %u hit binaries not shipped", end.records, end.samples, end.lost, nsym,
	    symbytes, nrefused);
	return ap_send(fd, AP_END, 0, e, sizeof(e)) < 0 ? -2 : 0;
}

/* ---- one controller ---- */

static void end_session(struct agent *a)
{
	if (a->recording && a->child > 0) {
		char m[256];
		stop_recording(a, m, sizeof(m));
		say("controller gone while recording; recording discarded");
	}
	a->recording = a->stopped = false;
	unlink(a->data);
}

/* Refuse a second controller while one is served. */
static void refuse_busy(struct agent *a)
{
	int c = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* Read what the newcomer already sent (its HELLO) before answering:
	 * closing a socket with unread input makes TCP send a reset, which
	 * can discard our ERROR before the peer reads it. */
	struct pollfd pf = { .fd = c, .events = POLLIN };
	char junk[512];
	if (poll(&pf, 1, 200) > 0)
		(void)!read(c, junk, sizeof(junk));
	send_text(c, AP_ERROR, "busy: another controller is connected to this agent");
	shutdown(c, SHUT_WR);
	if (poll(&pf, 1, 200) > 0)
		(void)!read(c, junk, sizeof(junk));
	close(c);
	say("refused a second controller");
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Challenge-response state of one controller (see agent_proto.h). */
struct auth {
	bool authed;             /* the controller proved the key (or there is none) */
	bool challenged;         /* AUTH_CHALLENGE sent, AUTH_PROOF awaited */
	uint8_t nh[AP_NONCE], na[AP_NONCE];
};

/*
 * The authentication frames, and the gate before every other request.
 * Returns 1 when the frame was an authentication step (go on reading), 0
 * when it may be served, -1 when the connection must close.
 */
static int auth_step(struct agent *a, int fd, struct auth *au, uint16_t type, size_t len)
{
	if (type == AP_AUTH) {
		if (!a->key_file) {
			send_text(fd, AP_ERROR, "this agent has no key (it runs without --key-file); "
				  "connect without key=");
			say("refused AUTH: no --key-file");
			return -1;
		}
		if (len != AP_NONCE || ap_nonce(au->na) < 0) {
			send_text(fd, AP_ERROR, "bad AUTH request");
			return -1;
		}
		memcpy(au->nh, a->buf, AP_NONCE);
		au->authed = false; /* a new controller on a device starts over */
		au->challenged = true;
		return ap_send(fd, AP_AUTH_CHALLENGE, 0, au->na, AP_NONCE) < 0 ? -1 : 1;
	}
	if (type == AP_AUTH_PROOF) {
		uint8_t mac[AP_MAC];
		if (!au->challenged) {
			send_text(fd, AP_ERROR, "AUTH first");
			return -1;
		}
		au->challenged = false;
		ap_auth_mac(&a->key, true, au->nh, au->na, mac);
		if (len != AP_MAC || !ct_equal(a->buf, mac, AP_MAC)) {
			send_text(fd, AP_ERROR, "authentication failed: wrong key");
			say("a controller failed authentication (wrong key); closing");
			return -1;
		}
		au->authed = true;
		ap_auth_mac(&a->key, false, au->nh, au->na, mac);
		return ap_send(fd, AP_AUTH_OK, 0, mac, AP_MAC) < 0 ? -1 : 1;
	}
	if (!au->authed) {
		send_text(fd, AP_ERROR, "authentication required: this agent has a key; give the host "
			  "--domain NAME=agent:ADDRESS,key=FILE");
		say("refused a controller without the key");
		return -1;
	}
	return 0;
}

/* Serve requests on fd until the controller leaves or breaks the
 * protocol. Returns when the session is over. A controller that sends
 * nothing for idle_ms while no recording runs is closed: it would hold
 * the agent (everybody else is "busy") forever. */
static void serve(struct agent *a, int fd)
{
	bool hello = false;
	struct auth au = { .authed = !a->key_file };
	int64_t last = mono_ms();
	for (;;) {
		if (g_quit)
			break;
		/* on a device nobody may be there: only a begun session idles */
		bool begun = a->kind != L_DEV || hello || au.challenged || (a->key_file && au.authed);
		if (a->idle_ms > 0 && !a->recording && begun && mono_ms() - last > a->idle_ms) {
			say("controller idle for %d s; closing", a->idle_ms / 1000);
			send_text(fd, AP_ERROR, "idle for %d s; closing", a->idle_ms / 1000);
			break;
		}
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = a->lfd, .events = POLLIN } };
		int np = a->lfd >= 0 ? 2 : 1;
		int pr = poll(pf, (nfds_t)np, 500);
		if (pr < 0 && errno != EINTR)
			break;
		if (np == 2 && (pf[1].revents & POLLIN))
			refuse_busy(a);
		if (a->recording && a->child > 0) {
			int st;
			if (waitpid(a->child, &st, WNOHANG) == a->child) {
				a->child = 0;
				say("the recorder ended by itself (status 0x%x)", st);
			}
		}
		if (pr <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		uint16_t type, flags;
		size_t len;
		int ft = a->idle_ms > 0 && a->idle_ms < 10000 ? a->idle_ms : 10000;
		int r = ap_recv_max(fd, &type, &flags, &a->buf, &a->cap, &len, AP_MAX_REQUEST, ft,
				    a->kind == L_DEV);
		if (r == -ECONNRESET) {
			if (a->kind == L_DEV) { /* nobody on the other end yet */
				usleep(200000);
				continue;
			}
			say("controller disconnected");
			break;
		}
		if (r < 0) {
			say("bad frame from the controller: %s%s; closing", ap_strerror(r),
			    r == -EMSGSIZE ? " (requests are at most 4096 bytes)" : "");
			send_text(fd, AP_ERROR, "%s", r == -EMSGSIZE ? "request too large" : "protocol error");
			break;
		}
		last = mono_ms();
		int as = auth_step(a, fd, &au, type, len);
		if (as < 0)
			break;
		if (as > 0)
			continue;
		char tb[16], why[512] = "";
		if (type == AP_HELLO) {
			uint32_t v = 0;
			if (len >= 4)
				memcpy(&v, a->buf, 4);
			if (v != AP_VERSION) {
				send_text(fd, AP_ERROR, "protocol version %u not supported (agent speaks %u)", v, AP_VERSION);
				break;
			}
			if (a->recording) /* a new controller on a device: drop the old run */
				end_session(a);
			struct utsname u;
			uname(&u);
			struct ap_hello hh = { .version = AP_VERSION, .ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN) };
			snprintf(hh.hostname, sizeof(hh.hostname), "%s", u.nodename);
			snprintf(hh.release, sizeof(hh.release), "%s", u.release);
			uint8_t out[256];
			size_t n = ap_hello_encode(&hh, out, sizeof(out));
			if (ap_send(fd, AP_HELLO_OK, 0, out, n) < 0)
				break;
			hello = true;
			say("controller connected");
			continue;
		}
		if (!hello) {
			send_text(fd, AP_ERROR, "say HELLO first");
			break;
		}
		if (type == AP_START) {
			struct ap_start st;
			if (ap_start_decode(a->buf, len, &st) < 0) {
				send_text(fd, AP_ERROR, "bad START request (hz 1..100000, known flags only)");
				continue;
			}
			if (a->recording) {
				send_text(fd, AP_ERROR, "already recording");
				continue;
			}
			if (start_recording(a, &st, why, sizeof(why)) < 0) {
				say("%s", why);
				send_text(fd, AP_ERROR, "%s", why);
				continue;
			}
			a->recording = true;
			a->stopped = false;
			say("recording the guest at %u Hz%s", st.hz, st.flags & AP_START_CALLCHAIN ? " with call chains" : "");
			if (ap_send(fd, AP_STARTED, 0, NULL, 0) < 0)
				break;
		} else if (type == AP_STOP) {
			if (!a->recording) {
				send_text(fd, AP_ERROR, "not recording");
				continue;
			}
			a->recording = false;
			int r2 = stop_recording(a, why, sizeof(why));
			a->stopped = r2 == 0;
			say("recording stopped: %s", why);
			if (send_text(fd, a->stopped ? AP_STOPPED : AP_ERROR, "%s", why) < 0)
				break;
		} else if (type == AP_COLLECT) {
			if (!a->stopped) {
				send_text(fd, AP_ERROR, "nothing to collect: no finished recording");
				continue;
			}
			int c = collect(a, fd, why, sizeof(why));
			if (c == -2) {
				say("%s", why);
				break;
			}
			if (c < 0)
				send_text(fd, AP_ERROR, "%s", why);
			a->stopped = false;
			unlink(a->data);
		} else {
			/* Nothing else exists: no command, file or address request. */
			say("refused request %s; closing", ap_type_name(type, tb, sizeof(tb)));
			send_text(fd, AP_ERROR, "unknown request %s (only HELLO, START, STOP, COLLECT)",
				  ap_type_name(type, tb, sizeof(tb)));
			break;
		}
	}
	end_session(a);
	/* nothing of a session outlives it */
	free(a->buf);
	a->buf = NULL;
	a->cap = 0;
}

int cmd_agent(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'D' },
		{ "once", no_argument, NULL, '1' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "insecure", no_argument, NULL, 'I' },
		{ "idle-timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent ag, *a = &ag;
	memset(a, 0, sizeof(*a));
	a->dir = "/tmp";
	a->lfd = -1;
	a->idle_ms = 30000;
	int c;
	char *end;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:l:D:", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': a->listen = optarg; break;
		case 'D': a->dir = optarg; break;
		case '1': a->once = true; break;
		case 'k': a->key_file = optarg; break;
		case 'I': a->insecure = true; break;
		case 'T': {
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 0 || v > 86400)
				return usage_error("agent", "bad --idle-timeout '%s' (seconds, 0..86400; 0: none)",
						   optarg);
			a->idle_ms = (int)v * 1000;
			break;
		}
		case ':': return usage_error("agent", "option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("agent", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("agent", "unexpected argument '%s'", argv[optind]);
	if (!a->listen)
		return usage_error("agent", "--listen ADDRESS is required (the agent opens nothing by default)");
	char err[4600];
	if (a->key_file && a->insecure)
		return usage_error("agent", "--insecure and --key-file contradict each other");
	if (a->key_file) {
		bool created;
		if (ap_key_load(a->key_file, true, &a->key, &created, err, sizeof(err)) < 0) {
			fprintf(stderr, "domprof agent: %s\n", err);
			return 1;
		}
		if (created)
			say("created key file %s; give the host a copy (mode 0600) as "
			    "--domain NAME=agent:ADDRESS,key=FILE", a->key_file);
	}
	/* Every file the agent creates is in a directory of its own. */
	if (workdir_create(&a->wd, a->dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprof agent: %s\n", err);
		return 1;
	}
	snprintf(a->data, sizeof(a->data), "%.4000s/agent.data", a->wd.path);
	snprintf(a->log, sizeof(a->log), "%.4000s/agent-record.log", a->wd.path);
	if (open_listen(a, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprof agent: %s\n", err);
		workdir_remove(&a->wd);
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	say("listening on %s%s (files in %s)", a->listen, a->key_file ? " (key required)" : "", a->wd.path);

	while (!g_quit) {
		int fd;
		if (a->kind == L_DEV) {
			fd = open_device(a->listen);
			if (fd < 0) {
				fprintf(stderr, "domprof agent: cannot open %s: %s\n", a->listen, strerror(-fd));
				break;
			}
		} else {
			struct pollfd pf = { .fd = a->lfd, .events = POLLIN };
			if (poll(&pf, 1, 500) <= 0)
				continue;
			fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			int one = 1;
			if (a->kind == L_TCP)
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		serve(a, fd);
		close(fd);
		if (a->once)
			break;
	}
	if (a->lfd >= 0)
		close(a->lfd);
	if (a->kind == L_UNIX)
		unlink(a->listen + 5);
	free(a->buf);
	memset(&a->key, 0, sizeof(a->key));
	workdir_remove(&a->wd);
	say("exiting");
	return 0;
}
