# SPDX-License-Identifier: MIT
"""Fuzz seeds cut from real kernels (the matrix's vmlinux files in the VM
cache), for tests/e2e/fuzz-ksyms.sh, fuzz-guest.sh and fuzz-orc.sh. The
ELF is read here (section headers only, no symbol table: Debian's vmlinux
has none), independent of src/; each seed comes with its known answer,
worked out here from the kernel's own files.

  kernel-seeds.py KIND OUTDIR [--controls DIR] NAME=KDIR...
writes OUTDIR/NAME for each kernel and prints "NAME KNOWN-ANSWER" lines.
KIND is one of:
  ksyms  fuzz-ksyms's input: the read-only data (.rodata through .notes
         and 64 KiB of .BTF: the kallsyms tables and the build-id note)
         at its own place after _text (flag 0x20, the number of 2 MiB
         steps); answer "SYMBOLS BUILDID": the count of the kernel's
         nokaslr /proc/kallsyms without module lines, the ELF's build id
  btf    fuzz-guest's "btf" input: 0x01 and the .BTF section; answer
         task_struct's and mm_struct's offsets, "tasks=.. pid=.. tgid=..
         comm=../LEN mm=.. real_parent=.. flags=.. pgd=..", from a BTF
         walk of its own
  orc    fuzz-orc's input: the ORC entries of vfs_read and of the
         functions of a read(2) call below it (ksys_read, __x64_sys_read,
         x64_sys_call, do_syscall_64, entry_SYSCALL_64; those the kernel
         has), each moved into the fuzzer's 64 KiB of text, with a stack
         of their real return addresses (the call sites found in .text)
         and a user pt_regs at the syscall entry; answer "LAYOUT STOP
         CHAIN...": the layout of the kernel's release (v1 to 6.2, v2
         6.3, v3 6.4 to 7.0, v4 7.1+), "user" when the stack reaches the
         syscall entry, and the chain's ips as offsets from the fuzzer's
         text; with --controls, DIR/NAME-as-vN is the seed with each
         other layout forced
"""
import struct
import sys

TEXT = 0xffffffff81000000


class Elf:
    def __init__(self, path):
        self.f = open(path, "rb")
        h = self.f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            raise SystemExit("%s: not a 64-bit ELF" % path)
        shoff, = struct.unpack_from("<Q", h, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", h, 0x3a)
        self.f.seek(shoff)
        raw = self.f.read(shentsize * shnum)
        shs = [struct.unpack_from("<IIQQQQIIQQ", raw, i * shentsize) for i in range(shnum)]
        self.f.seek(shs[shstrndx][4])
        names = self.f.read(shs[shstrndx][5])
        self.sec = {}
        for s in shs:
            n = names[s[0]:names.index(b"\0", s[0])].decode()
            self.sec.setdefault(n, {"type": s[1], "addr": s[3], "off": s[4], "size": s[5]})

    def data(self, name):
        s = self.sec[name]
        self.f.seek(s["off"])
        return self.f.read(s["size"])

    def span(self, lo, hi):
        """The bytes at [lo, hi) of the loaded image (zeros where no
        section with file bytes is)."""
        out = bytearray(hi - lo)
        for s in self.sec.values():
            a, n = s["addr"], s["size"]
            if s["type"] == 8 or not a or a + n <= lo or a >= hi:
                continue
            b, e = max(a, lo), min(a + n, hi)
            self.f.seek(s["off"] + b - a)
            out[b - lo:e - lo] = self.f.read(e - b)
        return bytes(out)


def kallsyms_count(kdir):
    with open(kdir + "/kallsyms-nokaslr.txt", "rb") as f:
        return sum(1 for line in f if b"[" not in line and line.strip())


def buildid(elf):
    if ".notes" not in elf.sec:
        return "-"
    b, i = elf.data(".notes"), 0
    while i + 12 <= len(b):
        nsz, dsz, typ = struct.unpack_from("<III", b, i)
        name = b[i + 12:i + 12 + nsz]
        desc = i + 12 + (nsz + 3) // 4 * 4
        if typ == 3 and name.rstrip(b"\0") == b"GNU":
            return b[desc:desc + dsz].hex()
        i = desc + (dsz + 3) // 4 * 4
    return "-"


def ksyms(out, kdir):
    elf = Elf(kdir + "/vmlinux")
    ro = elf.sec[".rodata"]["addr"]
    # through .notes and .BTF's first 64 KiB: the build-id note is looked
    # for before BTF-like data, and read in packets that must not cross
    # the end of the fuzzer's memory
    end = elf.sec[".BTF"]["addr"] + min(elf.sec[".BTF"]["size"], 64 << 10) if ".BTF" in elf.sec else \
        ro + elf.sec[".rodata"]["size"]
    steps = (ro - TEXT) >> 21
    if ro % (2 << 20) or not 1 <= steps <= 63:
        raise SystemExit("%s: .rodata at 0x%x is not a 2 MiB step after _text" % (kdir, ro))
    open(out, "wb").write(bytes([0x20, steps]) + elf.span(ro, end))
    print(kallsyms_count(kdir), buildid(elf))


# --- BTF: the offsets of task_struct's fields, walked here -------------
def btf_offsets(b):
    magic, ver, flags, hl, toff, tlen, soff, slen = struct.unpack_from("<HBBIIIII", b, 0)
    if magic != 0xeb9f:
        raise SystemExit("not BTF")
    types, strs = b[hl + toff:hl + toff + tlen], b[hl + soff:hl + soff + slen]
    name = lambda o: strs[o:strs.index(b"\0", o)].decode()
    extra = {1: lambda v: 4, 3: lambda v: 12, 4: lambda v: 12 * v, 5: lambda v: 12 * v, 6: lambda v: 8 * v,
             13: lambda v: 8 * v, 14: lambda v: 4, 15: lambda v: 12 * v, 17: lambda v: 4, 19: lambda v: 12 * v}
    t, i = [None], 0
    while i < len(types):
        no, info, st = struct.unpack_from("<III", types, i)
        kind, vlen, kflag = (info >> 24) & 0x1f, info & 0xffff, info >> 31
        n = extra.get(kind, lambda v: 0)(vlen)
        t.append((kind, no, st, kflag, types[i + 12:i + 12 + n], vlen))
        i += 12 + n

    def members(tid, base, found):
        kind, no, st, kflag, ex, vlen = t[tid]
        for k in range(vlen):
            mno, mty, moff = struct.unpack_from("<III", ex, 12 * k)
            bits = moff & 0xffffff if kflag else moff
            if mno == 0 and t[mty][0] in (4, 5):
                members(mty, base + bits // 8, found)
            elif mno:
                found.setdefault(name(mno), (base + bits // 8, mty))
        return found

    def struct_named(s):
        return next(i for i in range(1, len(t)) if t[i][0] == 4 and name(t[i][1]) == s and t[i][2])

    task = members(struct_named("task_struct"), 0, {})
    mm = members(struct_named("mm_struct"), 0, {})
    comm_len = struct.unpack_from("<III", t[task["comm"][1]][4])[2]
    return "tasks=%d pid=%d tgid=%d comm=%d/%d mm=%d real_parent=%d flags=%d pgd=%d" % (
        task["tasks"][0], task["pid"][0], task["tgid"][0], task["comm"][0], comm_len, task["mm"][0],
        task["real_parent"][0], task["flags"][0], mm["pgd"][0])


def btf(out, kdir):
    b = Elf(kdir + "/vmlinux").data(".BTF")
    open(out, "wb").write(b"\x01" + b)
    print(btf_offsets(b))


# --- ORC: a read(2) stack's functions -----------------------------------
FZ_TEXT, FZ_IPT, FZ_STACK = 0xffffffff81000000, 0xffffffff82000000, 0xffffc90000010000
CHAIN = ["vfs_read", "ksys_read", "__x64_sys_read", "x64_sys_call", "do_syscall_64", "entry_SYSCALL_64"]


def release(kdir):
    """The kernel's release: KDIR/release, else the version in the cache
    folder's name (linux-image-6.1.0-57-amd64_...)."""
    import os
    import re
    try:
        return open(kdir + "/release").read().strip()
    except OSError:
        m = re.search(r"linux-(?:image|binary)-(\d+\.\d+)", os.path.basename(kdir.rstrip("/")))
        return m.group(1) if m else "0.0"


def orc_layout(release):
    v = tuple(int(x) for x in release.split("-")[0].split("+")[0].split(".")[:2])
    return "v1" if v < (6, 3) else "v2" if v < (6, 4) else "v3" if v < (7, 1) else "v4"


def decode(e, lay):
    """(type, sp_reg, sp_off, bp_reg, bp_off) with v3's numbers: types
    0 undefined, 1 end, 2 call, 3 regs, 4 partial; registers SP 5, BP 4,
    PREV_SP 1, undefined 0 (others kept raw)."""
    so, bo, regs, f = struct.unpack("<hhBB", e)
    sr, br = regs & 15, regs >> 4
    if lay == "v4":
        m = {3: 5, 4: 4, 8: 1, 0: 0}
        sr, br = m.get(sr, 99), m.get(br, 99)
    if lay in ("v1", "v2"):
        ty = (f & 3) + 2 if sr else 0
    else:
        ty = f & 7
    return ty, sr, so, br, bo


def orc(out, kdir, release):
    elf = Elf(kdir + "/vmlinux")
    lay = orc_layout(release)
    ipa = elf.sec[".orc_unwind_ip"]["addr"]
    ipt, ent = elf.data(".orc_unwind_ip"), elf.data(".orc_unwind")
    ips = [ipa + 4 * i + v for i, v in enumerate(struct.unpack("<%di" % (len(ipt) // 4), ipt))]
    # Each function's address and end: the next symbol of the nokaslr
    # kallsyms (in address order) not named after it (the entry code's
    # labels inside entry_SYSCALL_64 are part of it), at most 12 KiB on.
    import re
    ks = open(kdir + "/kallsyms-nokaslr.txt", "rb").read()
    where, ends = {}, {}
    pat = rb"^([0-9a-f]+) [tT] (" + b"|".join(re.escape(n.encode()) for n in CHAIN) + rb")$"
    for m in re.finditer(pat, ks, re.M):
        n, a = m.group(2).decode(), int(m.group(1), 16)
        if n in where:
            continue
        where[n], end = a, a + 0x3000
        for line in ks[m.end() + 1:m.end() + 4096].split(b"\n")[:-1]:
            p = line.split()
            if len(p) >= 3 and int(p[0], 16) > a and not p[2].decode("latin-1").startswith(n):
                end = min(end, int(p[0], 16))
                break
        ends[n] = end
    text = elf.sec[".text"]
    fend = ends.get

    import bisect
    funcs = [n for n in CHAIN if n in where and text["addr"] <= where[n] < text["addr"] + text["size"]]
    pieces, place, tab = {}, 0x100, []
    for n in funcs:
        a, e = where[n], fend(n)
        lo = bisect.bisect_right(ips, a) - 1
        hi = bisect.bisect_left(ips, e)
        if lo < 0 or place + (e - a) > 0xff00:
            break
        pieces[n] = (a, e, place)
        for i in range(lo, hi):
            tab.append((place + max(ips[i], a) - a, ent[6 * i:6 * i + 6]))
        place = (place + (e - a) + 0x40) & ~0xf
    # The real table's first end-of-stack entry (every table has one; the
    # layout is told by the shape of the table, which needs it), after
    # the pieces with an undefined entry to close the last one.
    for i in range(len(ips)):
        if decode(ent[6 * i:6 * i + 6], lay)[0] == 1:
            tab += [(place, ent[6 * i:6 * i + 6])]
            break
    und = next(ent[6 * i:6 * i + 6] for i in range(len(ips)) if decode(ent[6 * i:6 * i + 6], lay)[0] == 0)
    tab.append((place + 0x10, und))
    to = lambda x, n: pieces[n][2] + x - pieces[n][0]   # a real address in n to its offset
    def entry_at(off):
        k = max(i for i, (o, _) in enumerate(tab) if o <= off)
        return decode(tab[k][1], lay)

    def call_site(caller, callees):
        a, e, _ = pieces[caller]
        code = elf.span(a, e)
        for i in range(len(code) - 5):
            if code[i] == 0xe8:
                tgt = a + i + 5 + struct.unpack_from("<i", code, i + 1)[0]
                if tgt in callees:
                    return a + i + 5
        return None

    # rip: in vfs_read, at the first entry with the deepest sp-based call frame
    a, e, _ = pieces["vfs_read"]
    best = None
    for o, b in tab:
        if to(a, "vfs_read") <= o < to(e, "vfs_read"):
            ty, sr, so, br, bo = decode(b, lay)
            if ty == 2 and sr == 5 and (best is None or so > best[1]):
                best = (o, so)
    # The unwinder's rules, followed here to place each return address
    # (and each saved bp, for a caller whose sp rule is on bp).
    stack = bytearray(0x2000)
    sp, bp = 0x200, 0x1000
    frames, stop = [best[0]], None
    callees = {where["vfs_read"]}
    rest = [n for n in funcs if n != "vfs_read"]
    look = best[0]
    while True:
        ty, sr, so, br, bo = entry_at(look)
        if sr not in (4, 5) or ty not in (2, 3):
            break
        cfa = (sp if sr == 5 else bp) + so
        if ty == 3:   # the syscall entry's pt_regs: user mode
            struct.pack_into("<QQ", stack, cfa + 16 * 8, 0x401000, 0x33)
            struct.pack_into("<Q", stack, cfa + 19 * 8, 0x7ffc0000)
            frames.append(0x401000)
            stop = "user"
            break
        caller, ret = None, None
        while rest and ret is None:
            caller = rest.pop(0)
            ret = call_site(caller, callees)
            callees.add(where[caller])   # a tail call through it
        if ret is None:
            break
        struct.pack_into("<Q", stack, cfa - 8, FZ_TEXT + to(ret, caller))
        if br in (1, 4):   # the caller's bp, saved at cfa or bp + offset
            nbp = cfa + 0x80
            struct.pack_into("<Q", stack, (cfa if br == 1 else bp) + bo, FZ_STACK + nbp)
            bp = nbp
        frames.append(to(ret, caller))
        sp, look, callees = cfa, to(ret, caller) - 1, {where[caller]}
    tab.sort(key=lambda x: x[0])
    n = len(tab)
    ipb = b"".join(struct.pack("<i", FZ_TEXT + o - (FZ_IPT + 4 * i)) for i, (o, _) in enumerate(tab))
    entb = b"".join(b for _, b in tab)
    # flags: layout auto, no frame-pointer guess; default window and depth
    hdr = struct.pack("<BHHHBHHHH", 16, n, 0, 0, 0, frames[0], 0x200, 0x1000, 0)
    open(out, "wb").write(hdr + ipb + entb + bytes(stack))
    print(lay, stop or "cut", " ".join("0x%x" % f for f in frames))
    return lay


def cut(kind, out, kdir, name, controls):
    """Writes kernel kdir's seed of kind to out and prints its answer."""
    if kind == "ksyms":
        ksyms(out, kdir)
    elif kind == "btf":
        btf(out, kdir)
    else:
        lay = orc(out, kdir, release(kdir))
        if controls:   # the same seed with each other layout forced
            b = bytearray(open(out, "rb").read())
            for flag, other in ((1, "v1"), (2, "v3"), (3, "v4")):
                if other != lay:
                    b[0] = (b[0] & ~3) | flag
                    open("%s/%s-as-%s" % (controls, name, other), "wb").write(b)


def main(argv):
    import contextlib
    import io
    if len(argv) < 3 or argv[0] not in ("ksyms", "btf", "orc"):
        raise SystemExit("usage: kernel-seeds.py ksyms|btf|orc OUTDIR [--controls DIR] NAME=KDIR...")
    kind, outdir, rest = argv[0], argv[1], argv[2:]
    controls = None
    if rest[0] == "--controls":
        controls, rest = rest[1], rest[2:]
    for arg in rest:
        name, kdir = arg.split("=", 1)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                cut(kind, "%s/%s" % (outdir, name), kdir, name, controls)
            except (OSError, KeyError, ValueError, StopIteration, TypeError, IndexError, struct.error) as e:
                raise SystemExit("kernel-seeds.py %s: %s: %s: %s" % (kind, kdir, type(e).__name__, e))
        print(name, buf.getvalue().strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
