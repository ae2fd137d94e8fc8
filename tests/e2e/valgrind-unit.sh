#!/usr/bin/env bash
# The unit tests (release build, no sanitizers) under valgrind memcheck:
# any invalid access or definite leak fails (make check-valgrind).
set -u
cd "$DOMPROF_TOP"
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
make -s --no-print-directory check-valgrind 2>&1 | grep -v '^cc ' | tail -n 40
exit "${PIPESTATUS[0]}"
