#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The source line cache file (src/symbols/lcache.c) under libFuzzer
# (tests/fuzz/fuzz-lcache.c) for FUZZ_SECONDS (default 4). Known answer
# first: the cache a report of the lines workload writes passes, with
# lines and inlined code in it; control that must fail: the same file
# with one payload byte flipped is refused (checksum). Seeds: that file,
# the one test-tool lcache forges from it (another line, still valid)
# and a cut one. Then any crash, sanitizer report, or an entry that does
# not survive a second encoding fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-lcache ] || skip "fuzzer not built (make fuzz needs clang)"
need_workload lines
corpus="$OUT/corpus"
mkdir -p "$corpus"
cp "$WL/lines" "$OUT/lines"
# --no-lines: the report, not a table in the recording, answers, so it writes the cache
"$DOMPROF" record --no-lines -f -F 1000 -o "$OUT/lines.data" -- "$OUT/lines" 100 >"$OUT/record.log" 2>&1 ||
	{ cat "$OUT/record.log"; fail "record failed"; }
DOMPROF_CACHE="$OUT/cache" "$DOMPROF" report -q -i "$OUT/lines.data" -l -s srcline >/dev/null
bid=$(readelf -n "$OUT/lines" | awk '/Build ID/ { print $3 }')
known=$(ls "$OUT"/cache/lines/"$bid"-*.lines | head -n 1)
[ -s "$known" ] || fail "the report wrote no cache file for the lines workload"
FUZZ_LCACHE_VERBOSE=1 build/fuzz/fuzz-lcache "$known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known file crashed"; }
grep -Eq '^fuzz-lcache: ok [1-9][0-9]* entries, [1-9][0-9]* with a line, [1-9][0-9]* inlined$' "$OUT/known.log" ||
	fail "known file: $(grep fuzz-lcache: "$OUT/known.log")"
note "$(grep fuzz-lcache: "$OUT/known.log")"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[-5]^=1; open(sys.argv[2],'wb').write(b)" "$known" "$OUT/control"
FUZZ_LCACHE_VERBOSE=1 build/fuzz/fuzz-lcache "$OUT/control" >"$OUT/control.log" 2>&1 || true
grep -q '^fuzz-lcache: refused: payload checksum mismatch$' "$OUT/control.log" ||
	fail "control: a flipped byte was not refused: $(grep fuzz-lcache: "$OUT/control.log")"
cp "$known" "$corpus/known"
"$TT" lcache "$known" "$corpus/forged" 0 0 zero-key >/dev/null || fail "test-tool lcache"
head -c 200 "$known" >"$corpus/cut"
build/fuzz/fuzz-lcache -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 \
	-artifact_prefix="$OUT/" "$corpus" >"$OUT/fuzz.log" 2>&1 || { tail -40 "$OUT/fuzz.log"; fail "fuzzer found a bug"; }
note "$(grep -E '^Done [0-9]+ runs' "$OUT/fuzz.log")"
