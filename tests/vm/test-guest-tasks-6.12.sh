#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test-guest-tasks.sh on Debian's 6.12 kernel (pcpu_hot, mem[MOD_TEXT],
# another task_struct and mm_struct) booted with KASLR: the direct map's
# base is randomized too, so the asids depend on page_offset_base's value
# read from guest memory; the kallsyms is this boot's own copy (CRLF).
VM_KMETA=linux-image-6.12-amd64 GUEST_KASLR=1 exec bash "$(dirname "$0")/test-guest-tasks.sh"
