#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/test-guest-chains.sh on Debian's 6.12 kernel (the v3 ORC layout).
VM_KMETA=linux-image-6.12-amd64 exec bash "$(dirname "$0")/test-guest-chains.sh" "$@"
