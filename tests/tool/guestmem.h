// SPDX-License-Identifier: MIT
/*
 * Memory backends for the guest-introspection subcommands of test-tool
 * (guest-*.c): a vmlinux file (offline: the kernel's own image, unrelocated,
 * read through its program headers) and a live VM's gdbstub (the VM is
 * stopped while connected: QEMU stops it on connect).
 *
 *   "vmlinux:PATH"  or  "gdb:SOCKET-PATH"
 *
 * The vmlinux backend can also place the image at a KASLR-like shift
 * (",shift=0x200000"), so decoders are tested off the link address.
 */
#ifndef DOMPROF_TEST_GUESTMEM_H
#define DOMPROF_TEST_GUESTMEM_H

#include "guest/mem.h"

struct tt_mem;
/* Opens a backend; fills *m (read callback and ctx). NULL + message on stderr on failure. */
struct tt_mem *tt_mem_open(const char *spec, struct guest_mem *m);
void tt_mem_close(struct tt_mem *t);
/* The file's bytes of a vmlinux backend (NULL for gdb): for tests that
 * need a section directly, e.g. .BTF. */
const unsigned char *tt_mem_file(struct tt_mem *t, size_t *len);
/* gdb backend: the kernel-mode rips of the vCPUs right now (up to max); 0 for vmlinux. */
size_t tt_mem_krips(struct tt_mem *t, uint64_t *rips, size_t max);

/* gdb backend: the stub connection (NULL for vmlinux), for subcommands
 * that also read registers or resume and stop the VM (guest-tasks.c). */
struct rsp_conn *tt_mem_conn(struct tt_mem *t);
/* Resume the stopped VM behind c for ms, then stop it again (ack mode:
 * the stop reply is acked once the VM is stopped). 0 or a negative
 * errno. */
int tt_run_for(struct rsp_conn *c, int ms);

#endif
