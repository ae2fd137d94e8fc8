#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The perf.data reader (src/format/perfdata.c) under libFuzzer
# (tests/fuzz/fuzz-perfdata.c) for FUZZ_SECONDS (default 4). Known answer
# first: the perf kvm file of `test-tool gen-perfdata guest` holds 12
# samples, 4 of them in the guest; control that must fail: the same file
# with its magic changed reads none. Seeds: that file in the file, pipe,
# compressed and pipe+compressed forms (tests/unit/perfgen.h), and one
# recorded by perf here when it can. Then any crash or sanitizer report
# fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-perfdata ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
"$TT" gen-perfdata "$OUT/known" guest
FUZZ_PERFDATA_VERBOSE=1 build/fuzz/fuzz-perfdata "$OUT/known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known file crashed"; }
grep -q '^fuzz-perfdata: 12 samples, 4 in guests$' "$OUT/known.log" || fail "known file: $(grep fuzz-perfdata: "$OUT/known.log")"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[0:8]=b'PERFILE3'; open(sys.argv[2],'wb').write(b)" "$OUT/known" "$OUT/control"
FUZZ_PERFDATA_VERBOSE=1 build/fuzz/fuzz-perfdata "$OUT/control" >"$OUT/control.log" 2>&1 || true
! grep -q 'fuzz-perfdata: 12 samples' "$OUT/control.log" || fail "control: a file without perf's magic was read"
cp "$OUT/known" "$corpus/guest"
"$TT" gen-perfdata "$corpus/pipe" pipe samples=3
"$TT" gen-perfdata "$corpus/z" compress samples=3
"$TT" gen-perfdata "$corpus/pipez" pipe compress guest samples=2
if command -v perf >/dev/null && [ -x "$WL/threefuncs" ]; then
	PERF_BUILDID_DIR="$OUT/bid" perf record -q -g -c 2000000 -o "$corpus/real" -- "$WL/threefuncs" 1 >/dev/null 2>&1 || rm -f "$corpus/real"
fi
build/fuzz/fuzz-perfdata -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=16384 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
