#!/usr/bin/env bash
# The reader under libFuzzer for a short time (FUZZ_SECONDS, default 20)
# on a seed corpus of valid files; any crash or sanitizer report fails.
set -eu
cd "$DOMPROF_TOP"
[ -x build/fuzz/fuzz-reader ] || { echo "fuzzer not built (make fuzz needs clang)"; exit 77; }
corpus="$TEST_OUT/fuzz-reader-corpus"
rm -rf "$corpus"; mkdir -p "$corpus"
build/fuzz/mkseed "$corpus"
build/fuzz/fuzz-reader -max_total_time="${FUZZ_SECONDS:-20}" -max_len=8192 \
	-artifact_prefix="$TEST_OUT/fuzz-reader-" "$corpus" 2>&1 | tail -n 5
