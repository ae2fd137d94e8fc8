#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# The unit tests (release build, no sanitizers) under valgrind memcheck:
# any invalid access or definite leak fails (make check-valgrind).
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
command -v valgrind >/dev/null || skip "valgrind is not installed"
make -s --no-print-directory check-valgrind 2>&1 | grep -v '^cc ' | tail -n 40
exit "${PIPESTATUS[0]}"
