// SPDX-License-Identifier: MIT
/*
 * The agent's transports (agent/listen.h): parse --listen, open a TCP
 * port, a unix socket or a character device, and hand out controllers'
 * connections one at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "agent/listen.h"
#include "collect/agent_proto.h"

static int open_tcp(struct agent_listener *a, bool have_key, bool insecure, char *err, size_t errlen,
		    char *warn, size_t warnlen)
{
	const char *l = a->address;
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
	if (!ap_is_loopback(res->ai_addr) && !have_key) {
		if (!insecure) {
			snprintf(err, errlen, "refusing to listen on %s without a key: it is not a loopback "
				 "address, so anyone who reaches it would control this agent (give "
				 "--key-file FILE, or --insecure)", l);
			freeaddrinfo(res);
			return -EPERM;
		}
		snprintf(warn, warnlen, "WARNING: listening on %s without a key (--insecure): anyone who "
			 "can reach it controls this agent", l);
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
	a->kind = AGENT_L_TCP;
	a->lfd = fd;
	return 0;
}

static int open_unix(struct agent_listener *a, char *err, size_t errlen)
{
	const char *l = a->address;
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
	a->kind = AGENT_L_UNIX;
	a->lfd = fd;
	return 0;
}

int agent_listen_open(struct agent_listener *a, const char *l, bool have_key, bool insecure,
		      char *err, size_t errlen, char *warn, size_t warnlen)
{
	a->address = l;
	a->lfd = -1;
	a->kind = AGENT_L_DEV;
	if (warnlen)
		warn[0] = '\0';
	if (!strncmp(l, "tcp:", 4))
		return open_tcp(a, have_key, insecure, err, errlen, warn, warnlen);
	if (!strncmp(l, "unix:", 5))
		return open_unix(a, err, errlen);
	if (l[0] == '/') {
		struct stat st;
		if (stat(l, &st) < 0 || !S_ISCHR(st.st_mode)) {
			snprintf(err, errlen, "cannot listen on %s: %s", l,
				 errno && stat(l, &st) < 0 ? strerror(errno) : "not a character device");
			return -ENODEV;
		}
		a->kind = AGENT_L_DEV;
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

int agent_listen_next(struct agent_listener *a, int timeout_ms)
{
	if (a->kind == AGENT_L_DEV)
		return open_device(a->address);
	struct pollfd pf = { .fd = a->lfd, .events = POLLIN };
	if (poll(&pf, 1, timeout_ms) <= 0)
		return -EAGAIN;
	int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -EAGAIN;
	int one = 1;
	if (a->kind == AGENT_L_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

void agent_listen_close(struct agent_listener *a)
{
	if (a->lfd >= 0)
		close(a->lfd);
	a->lfd = -1;
	if (a->kind == AGENT_L_UNIX)
		unlink(a->address + 5);
}
