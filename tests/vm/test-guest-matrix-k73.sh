#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live kernel matrix (tests/vm/guest-matrix.sh) on 7.3 cloud-amd64, KASLR on, 4 vCPUs, 5-level paging.
exec bash "$(dirname "$0")/guest-matrix.sh" k73
