#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# guest-ksyms.sh's checks (kallsyms and build id decoded from a kernel
# image placed as guest memory, against the kernel's own nokaslr
# /proc/kallsyms, with its controls) on kernels fetched from Debian's
# archive by tests/vm/kernels.sh: 5.10 (bullseye), 6.19 (trixie-
# backports), 7.2 (sid) and 7.3 (experimental or backports), newest of
# each series. Each kernel is booted once, ever, to capture its kallsyms
# (cached next to it); the test itself boots nothing. It also checks the
# layout each one decodes to (src/guest/ksyms.c's out->layout): every
# layout the decoder knows is covered by one kernel here or in
# guest-ksyms.sh. Skips (77) only when the archive cannot be reached and
# a kernel is not cached.
declare -A KSYMS_LAYOUTS=(
	[5.10]="base-relative abs-percpu, offsets first, markers u32"
	[6.19]="base-relative, names first, markers u32"
	[7.2]="place-relative, names first, num_syms u32, markers u32"
	[7.3]="place-relative, names first, num_syms u32, markers u32"
)
KSYMS_KERNELS="series:5.10 series:6.19 series:7.2 series:7.3"
source "$(dirname "$0")/guest-ksyms.sh"
