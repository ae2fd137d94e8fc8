/* SPDX-License-Identifier: MIT */
/*
 * Where the agent waits for its controller (--listen ADDRESS), and the
 * one way it opens each kind of address: a TCP port (loopback only
 * unless there is a key or the user said --insecure: whoever connects
 * controls a root process), a unix socket created mode 0600 from the
 * start, or a character device (virtio-serial port, serial line) put in
 * raw mode so every byte passes unchanged.
 *
 * The listener owns its socket (closed, and a unix socket's file
 * removed, by agent_listen_close). It never prints: errors and the
 * --insecure warning come back as text for the command to print.
 */
#ifndef DOMPROF_AGENT_LISTEN_H
#define DOMPROF_AGENT_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

enum agent_lkind { AGENT_L_TCP, AGENT_L_UNIX, AGENT_L_DEV };

struct agent_listener {
	enum agent_lkind kind;
	const char *address;     /* borrowed: the --listen text */
	int lfd;                 /* listening socket, or -1 for a device */
};

/*
 * Parse and open `address` (tcp:HOST:PORT, unix:PATH or a /dev path).
 * have_key: a key is demanded (any TCP address is then allowed);
 * insecure: allow a non-loopback TCP address without a key, and put a
 * warning line in warn (else warn[0] = '\0'). Returns 0, or -EINVAL,
 * -EPERM, -ENODEV or another -errno with a one-line reason in err.
 */
int agent_listen_open(struct agent_listener *l, const char *address, bool have_key, bool insecure,
		      char *err, size_t errlen, char *warn, size_t warnlen);

/*
 * The next controller's connection, owned by the caller (close it). For a
 * socket: waits up to timeout_ms for one and returns its fd (TCP_NODELAY
 * set on TCP), or -EAGAIN when none came. For a device: opens it in raw
 * mode at once; -errno when it cannot be opened (the agent then stops).
 */
int agent_listen_next(struct agent_listener *l, int timeout_ms);

/* Close the socket and remove a unix socket's file. NULL-safe on lfd -1. */
void agent_listen_close(struct agent_listener *l);

#endif
