#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent protocol's frame reader and payload decoders (what the host
# and the agent accept from each other) under libFuzzer for a short time
# (FUZZ_SECONDS, default 4) on seeds made here: plain and zstd frames of
# every message (HELLO_OK with features, START with a DWARF stack size),
# a record batch, garbage before a magic, a zstd bomb. Any
# crash or sanitizer report fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-agent ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" <<'PY'
import struct, subprocess, sys
d = sys.argv[1]
def frame(t, payload, z=False):
    if z:
        payload = subprocess.run(["zstd", "-q", "-c"], input=payload, capture_output=True).stdout
    return struct.pack("<IHHI", 0x47415044, t, 1 if z else 0, len(payload)) + payload
hello = frame(1, struct.pack("<I", 1))
ok = frame(16, struct.pack("<II", 1, 2) + b"guest\0" + b"6.1.0\0")
# HELLO_OK as an agent with features sends it (strings u16-prefixed, then
# u32 features: DWARF stacks), and START asking for them (12 bytes)
okf = frame(16, struct.pack("<IIH", 1, 2, 5) + b"guest" + struct.pack("<H", 5) + b"6.1.0" + struct.pack("<I", 1))
start = frame(2, struct.pack("<II", 1000, 1))
dstart = frame(2, struct.pack("<III", 1000, 3, 8192))
rec = struct.pack("<HHI", 6, 0, 16) + b"\0" * 8
batch = frame(19, rec * 4, z=True)
sym = frame(20, struct.pack("<IH", 4, 5) + b"[vdso]"[:5] + b"\x7fELF" + b"\0" * 60, z=True)
lost = frame(21, struct.pack("<Q", 2**63))
end = frame(22, struct.pack("<QQQ", 5, 4, 1))
bomb = frame(1, b"\0" * (1 << 20), z=True)
seeds = {"hello": b"\x08" + hello, "session": b"\x0f" + ok + start + batch + sym + lost + end,
         "garbage": b"\x08" + b"xxxxDPA" + hello, "bomb": b"\x00" + bomb, "cut": b"\x03" + batch[:20],
         "dwarf": b"\x0f" + okf + dstart + frame(2, struct.pack("<III", 1000, 3, 65528)) +
                  frame(2, struct.pack("<III", 1000, 2, 8192)) + frame(2, struct.pack("<II", 1000, 3))}
for k, v in seeds.items():
    open("%s/%s" % (d, k), "wb").write(v)
PY
build/fuzz/fuzz-agent -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=60000 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
echo ok
