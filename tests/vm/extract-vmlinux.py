#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Unpacks the vmlinux ELF from a bzImage (what the kernel's
# scripts/extract-vmlinux does): finds the compressed payload by its magic
# and decompresses it with the xz, zstd, lz4 (legacy frame: Debian's
# cloud kernels up to 5.10) or gzip command. Usage: IN OUT.
import subprocess, sys

data = open(sys.argv[1], "rb").read()
for magic, cmd in ((b"\xfd7zXZ\x00", ["xz", "-dc"]),
                   (b"\x28\xb5\x2f\xfd", ["zstd", "-dcq"]),
                   (b"\x02\x21\x4c\x18", ["lz4", "-dcq"]),
                   (b"\x1f\x8b\x08", ["gzip", "-dcq"])):
    at = data.find(magic)
    while at >= 0:
        p = subprocess.run(cmd, input=data[at:], capture_output=True)
        # the tools complain about trailing bytes after the payload: keep the
        # output if it is an ELF file.
        if p.stdout[:4] == b"\x7fELF":
            open(sys.argv[2], "wb").write(p.stdout)
            sys.exit(0)
        at = data.find(magic, at + 1)
sys.exit("no xz, zstd, lz4 or gzip payload holding an ELF file in " + sys.argv[1])
