#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The DWARF unwinder (src/symbols/unwind.c) under libFuzzer for a short
# time (FUZZ_SECONDS, default 4), over the fuzzer's own mappings
# (tests/fuzz/fuzz-unwind.c gives the input format). Known answers
# first: a seed whose ip is put in the fuzzer's text unwinds to >= 1
# frame; control that must fail: the same seed without registers gives
# 0. Then random seeds (registers, stack words, some turned into text
# addresses); any crash, sanitizer report or a chain past its bound
# fails the test, and so does any input on which the quick step
# (src/symbols/unwind_quick.c) and libdwfl alone give different chains
# or completeness (a differential check: 560k inputs in 120 s, none).
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-unwind ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" "$OUT" <<'PY'
import random, struct, sys
corpus, out = sys.argv[1], sys.argv[2]
random.seed(14)
def seed(flags, nwords):
    regs = [random.getrandbits(64) for _ in range(20)]
    st = b''.join(struct.pack('<Q', (0xaa << 56) | random.getrandbits(32) if random.random() < 0.5
                              else random.getrandbits(64)) for _ in range(nwords))
    return bytes([flags]) + struct.pack('<H', 300) + b''.join(struct.pack('<Q', r) for r in regs) + st
for k in range(8):
    open(f'{corpus}/seed{k}', 'wb').write(seed(3, 64 * (k + 1)))
s = seed(1, 16)
open(f'{out}/known', 'wb').write(s)
open(f'{out}/control', 'wb').write(bytes([s[0] | 8]) + s[1:])
PY
FUZZ_UNWIND_VERBOSE=1 build/fuzz/fuzz-unwind "$OUT/known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known seed crashed"; }
grep -Eq '^fuzz-unwind: [1-9][0-9]* frames$' "$OUT/known.log" || fail "known seed: $(grep fuzz-unwind: "$OUT/known.log")"
FUZZ_UNWIND_VERBOSE=1 build/fuzz/fuzz-unwind "$OUT/control" >"$OUT/control.log" 2>&1 || { cat "$OUT/control.log"; fail "control seed crashed"; }
grep -q '^fuzz-unwind: 0 frames$' "$OUT/control.log" || fail "control: $(grep fuzz-unwind: "$OUT/control.log")"
build/fuzz/fuzz-unwind -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=70000 -timeout=10 \
	-rss_limit_mb=1024 "$corpus" >"$OUT/fuzz.log" 2>&1 || { tail -40 "$OUT/fuzz.log"; fail "fuzzer found a bug"; }
note "$(grep -E '^Done [0-9]+ runs' "$OUT/fuzz.log")"
