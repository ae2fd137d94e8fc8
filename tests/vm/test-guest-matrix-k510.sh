#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live kernel matrix (tests/vm/guest-matrix.sh) on 5.10 generic, KASLR off, 4 vCPUs.
exec bash "$(dirname "$0")/guest-matrix.sh" k510
