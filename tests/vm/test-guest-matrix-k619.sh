#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live kernel matrix (tests/vm/guest-matrix.sh) on 6.19 rt-amd64, KASLR on, 1 vCPU, 5-level paging.
exec bash "$(dirname "$0")/guest-matrix.sh" k619
