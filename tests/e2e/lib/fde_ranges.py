# SPDX-License-Identifier: MIT
"""Function ranges of an ELF file from its unwind tables, read by binutils'
readelf (an implementation independent of domprof's src/symbols/fde.c),
for tests that group another profiler's addresses by the same ranges
domprof names stripped code by (IMAGE+0xSTART, docs/symbols.md):
tests/e2e/xz-perf.sh and tests/e2e/dwarf-python.sh.

    import fde_ranges
    t = fde_ranges.Table("/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1")
    t.start_of(vaddr)        # start of the FDE covering vaddr, or None
    t.vaddr_of_offset(off)   # file offset -> vaddr (PT_LOAD), or None
    t.name_of_offset(off)    # "liblzma.so.5.4.1+0x15b40" or None
    t.start_of_name(name)    # a report row's symbol (IMAGE+0xSTART or a
                             # .dynsym name, with or without @VERSION)
                             # -> start of the FDE covering it, or None

Used as a program: `python3 fde_ranges.py FILE` prints "START END" (hex)
of every FDE, sorted.
"""
import bisect
import re
import subprocess
import os
import sys

_FDE = re.compile(r"\sFDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)")
_DYNSYM = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+\d+\s+(?:FUNC|IFUNC)\s+\S+\s+\S+\s+(\d+)\s+(\S+)")
_LOAD = re.compile(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)")


def _readelf(args, path):
    return subprocess.run(["readelf", "-W"] + args + [path], check=True,
                          capture_output=True, text=True).stdout


class Table:
    def __init__(self, path, shift=0):
        """shift: added to every range (a test's control: a table that
        is not the file's own)."""
        self.name = os.path.basename(os.path.realpath(path))
        ranges = set()
        for line in _readelf(["--debug-dump=frames"], path).splitlines():
            m = _FDE.search(line) if " FDE " in line else None
            if m:
                lo, hi = int(m.group(1), 16), int(m.group(2), 16)
                if hi > lo:  # empty FDEs cover nothing
                    ranges.add((lo + shift, hi + shift))
        self.ranges = sorted(ranges)
        self.starts = [lo for lo, _ in self.ranges]
        self.loads = []
        for line in _readelf(["-l"], path).splitlines():
            m = _LOAD.match(line)
            if m:
                off, va, filesz = (int(g, 16) for g in m.groups())
                self.loads.append((off, va, filesz))

        self.dynsym = {}
        for line in _readelf(["--dyn-syms"], path).splitlines():
            m = _DYNSYM.match(line)
            if m:  # a defined function (section index, not UND)
                va, name = int(m.group(1), 16), m.group(3)
                self.dynsym[name] = va
                self.dynsym.setdefault(name.split("@")[0], va)

    def start_of_name(self, name):
        pre = self.name + "+0x"
        if name.startswith(pre):
            try:
                return self.start_of(int(name[len(pre):], 16))
            except ValueError:
                return None
        va = self.dynsym.get(name, self.dynsym.get(name.split("@")[0]))
        return None if va is None else self.start_of(va)

    def start_of(self, vaddr):
        i = bisect.bisect_right(self.starts, vaddr) - 1
        # FDEs may overlap (rare): the latest start that covers vaddr,
        # looked for among the 8 nearest
        for j in range(i, max(i - 8, -1), -1):
            lo, hi = self.ranges[j]
            if lo <= vaddr < hi:
                return lo
        return None

    def vaddr_of_offset(self, off):
        for o, va, sz in self.loads:
            if o <= off < o + sz:
                return off - o + va
        return None

    def name_of_offset(self, off):
        va = self.vaddr_of_offset(off)
        s = None if va is None else self.start_of(va)
        return None if s is None else "%s+0x%x" % (self.name, s)


if __name__ == "__main__":
    for lo, hi in Table(sys.argv[1]).ranges:
        print("%x %x" % (lo, hi))
