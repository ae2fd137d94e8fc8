#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# guest_modules_read (the guest's modules list and symbol tables, read
# from guest memory) under libFuzzer for a short time (FUZZ_SECONDS,
# default 4) on seeds made here: Debian 6.1's struct module layout with
# two modules in a fake memory image, the same with small read chunks,
# with a list that loops and with the core text fields left out. Any crash,
# sanitizer report or inconsistent result fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-guest-modules ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" <<'PY'
import struct, sys
d = sys.argv[1]
BASE = 0xffffffffc0000000
def image(loop=False):
    img = bytearray(0x1000)
    mods = [(0x40, b"alpha", [(0xffffffffc0100000, b"alpha_xmit", b"t"), (0xffffffffc0100400, b"alpha_tab", b"d")]),
            (0x800, b"beta", [(0xffffffffc0110000, b"beta_probe", b"T"), (0, b"beta_undef", b"U")])]
    struct.pack_into("<QQ", img, 0, BASE + mods[0][0] + 8, BASE + mods[1][0] + 8)
    for k, (off, name, syms) in enumerate(mods):
        nxt = BASE + mods[k + 1][0] + 8 if k + 1 < len(mods) else BASE
        if loop and k == 1:
            nxt = BASE + mods[0][0] + 8
        struct.pack_into("<Q", img, off + 8, nxt)
        img[off + 24:off + 24 + len(name)] = name
        struct.pack_into("<QI", img, off + 320, syms[0][0] & ~0xffff, 0x4000)
        ks = off + 0x380
        symtab = ks + 32
        strtab = symtab + 24 * (len(syms) + 1)
        strs = b"\0" + b"".join(n + b"\0" for _, n, _ in syms)
        typetab = strtab + len(strs)
        struct.pack_into("<Q", img, off + 544, BASE + ks)
        struct.pack_into("<QIxxxxQQ", img, ks, BASE + symtab, len(syms) + 1, BASE + strtab, BASE + typetab)
        so = 1
        for i, (v, n, t) in enumerate(syms):
            struct.pack_into("<IBBHQQ", img, symtab + 24 * (i + 1), so, 0x12, 0, 1, v, 16)
            so += len(n) + 1
        img[strtab:strtab + len(strs)] = strs
        img[typetab:typetab + 1 + len(syms)] = b"U" + b"".join(t for _, _, t in syms)
    return bytes(img)
def hdr(chunk=0, flags=0):
    return struct.pack("<12H", 8, 24, 56, 544, 320, 328, 0, 8, 16, 24, chunk, flags)
seeds = {"two": hdr() + image(), "chunk7": hdr(chunk=7) + image(), "loop": hdr() + image(loop=True),
         "nocore": hdr(flags=1) + image()}
for k, v in seeds.items():
    open("%s/%s" % (d, k), "wb").write(v)
PY
build/fuzz/fuzz-guest-modules -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=8192 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
echo ok
