#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel symbol cache file (src/symbols/kcache.c) under libFuzzer
# (tests/fuzz/fuzz-kcache.c) for FUZZ_SECONDS (default 4). Known answer
# first: a cache file made by `test-tool kcache` over the kallsyms of
# `test-tool gen-perfdata --kallsyms` passes and holds its symbols;
# control that must fail: the same file with one index byte flipped is
# refused (checksum). Seeds: that file and one over the first 2000 lines
# of this machine's kallsyms. Then any crash or sanitizer report fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-kcache ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
"$TT" gen-perfdata --kallsyms >"$OUT/small.ksyms"
n=$(awk '$2 ~ /^[tTwW]$/' "$OUT/small.ksyms" | wc -l)
"$TT" kcache - "$OUT/small.ksyms" "$OUT/known" || fail "test-tool kcache"
FUZZ_KCACHE_VERBOSE=1 build/fuzz/fuzz-kcache "$OUT/known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known file crashed"; }
grep -q "^fuzz-kcache: ok [1-9][0-9]* blocks $(wc -l <"$OUT/small.ksyms") symbols$" "$OUT/known.log" ||
	fail "known file ($n text symbols): $(grep fuzz-kcache: "$OUT/known.log")"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[-5]^=1; open(sys.argv[2],'wb').write(b)" "$OUT/known" "$OUT/control"
FUZZ_KCACHE_VERBOSE=1 build/fuzz/fuzz-kcache "$OUT/control" >"$OUT/control.log" 2>&1 || true
grep -q '^fuzz-kcache: refused: index checksum mismatch$' "$OUT/control.log" || fail "control: a flipped byte was not refused: $(grep fuzz-kcache: "$OUT/control.log")"
cp "$OUT/known" "$corpus/small"
if head -n 2000 /proc/kallsyms >"$OUT/live.ksyms" 2>/dev/null && [ -s "$OUT/live.ksyms" ]; then
	"$TT" kcache - "$OUT/live.ksyms" "$corpus/live" || rm -f "$corpus/live"
fi
build/fuzz/fuzz-kcache -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=262144 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
