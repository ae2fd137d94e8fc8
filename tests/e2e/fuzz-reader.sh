#!/usr/bin/env bash
# The reader under libFuzzer for a short time (FUZZ_SECONDS, default 8)
# on a seed corpus of valid files; any crash or sanitizer report fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-reader ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
"$TT" mkseed "$corpus"
build/fuzz/fuzz-reader -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-8}" -max_len=8192 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
