#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel symbol name filter (SYMTAB kind 9, src/format/ksymnf.c)
# under libFuzzer (tests/fuzz/fuzz-ksymnf.c) for FUZZ_SECONDS (default 4).
# Known answer first: the filter the target builds for its own index
# opens; controls that must fail: the same filter with its index check
# flipped is refused as built for another index, and one byte short is
# refused as cut. Then any crash or sanitizer report fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-ksymnf ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
: >"$OUT/empty"
FUZZ_KSYMNF_SEED="$OUT/known" build/fuzz/fuzz-ksymnf "$OUT/empty" >/dev/null 2>&1 || true
[ -s "$OUT/known" ] || fail "the target wrote no seed"
FUZZ_KSYMNF_VERBOSE=1 build/fuzz/fuzz-ksymnf "$OUT/known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known filter crashed"; }
grep -q '^fuzz-ksymnf: ok [1-9][0-9]* blocks$' "$OUT/known.log" || fail "known filter: $(grep fuzz-ksymnf: "$OUT/known.log")"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[20]^=1; open(sys.argv[2],'wb').write(b); open(sys.argv[3],'wb').write(open(sys.argv[1],'rb').read()[:-1])" \
	"$OUT/known" "$OUT/control" "$OUT/cut"
FUZZ_KSYMNF_VERBOSE=1 build/fuzz/fuzz-ksymnf "$OUT/control" >"$OUT/control.log" 2>&1 || true
grep -q '^fuzz-ksymnf: refused: built for another index$' "$OUT/control.log" || fail "control: a flipped check was not refused: $(grep fuzz-ksymnf: "$OUT/control.log")"
FUZZ_KSYMNF_VERBOSE=1 build/fuzz/fuzz-ksymnf "$OUT/cut" >"$OUT/cut.log" 2>&1 || true
grep -q '^fuzz-ksymnf: refused: .* bytes for .* blocks of ' "$OUT/cut.log" || fail "control: a cut filter was not refused: $(grep fuzz-ksymnf: "$OUT/cut.log")"
cp "$OUT/known" "$corpus/known"
build/fuzz/fuzz-ksymnf -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
