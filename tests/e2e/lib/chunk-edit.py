#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Cut, repeat or reorder whole chunks of a domprof file, for tests of the
# reader's chunk-sequence check (docs/file-format.md: a header of
# header_len bytes padded to 8, then chunks of a 32-byte header and a
# stored payload padded to 8). The chunks' bytes are not changed, so every
# CRC stays valid: only their sequence is wrong. One edit changes a
# chunk's bytes and seals it again (counts-flip: a forged counts part
# under valid CRCs, docs/file-format.md "Counts part").
#
# usage: chunk-edit.py IN list                 one line per chunk: index offset length seq nrecords flags
#        chunk-edit.py IN OUT drop I [J...]    without chunks I, J, ...
#        chunk-edit.py IN OUT dup I            chunk I twice
#        chunk-edit.py IN OUT swap I J         chunks I and J exchanged
#        chunk-edit.py IN OUT counts-flip I [BYTE BIT]
#               in chunk I's counts part (flag 2), one bit of the record
#               of its largest group flipped: bit BIT of byte BYTE of the
#               record (default 46 2: the sample's mode, user 1 becomes
#               hypervisor 5); the part compressed again (zstd(1)), the
#               payload's and header's CRCs made right. The records'
#               frame is untouched. Prints "group G count N mode M" (the
#               samples the forged part moves, their mode before).
#        chunk-edit.py IN OUT counts-break I
#               the same edit of the part's magic ("CNT1" becomes "BNT1":
#               a part that does not hold up)
import struct
import subprocess
import sys


def crc32c(data):
    tab = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
        tab.append(c)
    c = 0xffffffff
    for x in data:
        c = tab[(c ^ x) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


def zstd(args, data):
    return subprocess.run(['zstd', '-q', '-c'] + args, input=data, capture_output=True, check=True).stdout


def counts_flip(b, off, byte, bit):
    """chunk bytes at off with its counts part's largest group's record
    changed as the usage says (byte None: the part's magic instead):
    (the new chunk bytes, padded; group, count, mode)"""
    flags, stored = struct.unpack_from('<II', b, off + 4)
    if not flags & 2:
        sys.exit('chunk-edit: the chunk at offset %d has no counts part' % off)
    pl = b[off + 32:off + 32 + stored]
    skip = pl.rfind(struct.pack('<I', 0x184d2a5d))
    size, raw = struct.unpack_from('<II', pl, skip + 4)
    if skip <= 0 or skip + 8 + size != stored:
        sys.exit('chunk-edit: no counts part at the end of the chunk at offset %d' % off)
    part = bytearray(zstd(['-d'], pl[skip + 16:]))
    if len(part) != raw or part[:4] != b'CNT1':
        sys.exit('chunk-edit: the counts part does not decode')
    n, = struct.unpack_from('<I', part, 4)
    rec, best = 16 + 16 * n, None
    for i in range(n):
        count, = struct.unpack_from('<I', part, 16 + 16 * i)
        if count and (best is None or count > best[1]):
            best = (i, count, rec)
        rec += struct.unpack_from('<I', part, rec + 4)[0]
    if best is None:
        sys.exit('chunk-edit: the counts part has no group')
    mode = part[best[2] + 46]
    if byte is None:
        part[0] ^= 1 << bit
    elif byte >= struct.unpack_from('<I', part, best[2] + 4)[0]:
        sys.exit('chunk-edit: byte %d is past the record' % byte)
    else:
        part[best[2] + byte] ^= 1 << bit
    z = zstd(['-3'], bytes(part))
    npl = pl[:skip] + struct.pack('<IIII', 0x184d2a5d, 8 + len(z), raw, 0) + z
    h = bytearray(b[off:off + 32])
    struct.pack_into('<I', h, 8, len(npl))
    struct.pack_into('<I', h, 20, crc32c(npl))
    struct.pack_into('<I', h, 28, crc32c(bytes(h[:28])))
    return bytes(h) + npl + b'\0' * (-len(npl) % 8), best[0], best[1], mode


def chunks(b):
    hlen = struct.unpack_from('<I', b, 16)[0]
    off = (hlen + 7) & ~7
    out = []
    while off + 32 <= len(b):
        if b[off:off + 4] != b'CHNK':
            sys.exit('chunk-edit: no chunk header at offset %d' % off)
        stored, = struct.unpack_from('<I', b, off + 8)
        nrec, = struct.unpack_from('<I', b, off + 16)
        seq, = struct.unpack_from('<I', b, off + 24)
        flags, = struct.unpack_from('<I', b, off + 4)
        n = 32 + ((stored + 7) & ~7)
        out.append((off, n, seq, nrec, flags))
        off += n
    return ((hlen + 7) & ~7), out


def main():
    b = open(sys.argv[1], 'rb').read()
    head, cs = chunks(b)
    if sys.argv[2] == 'list':
        for i, (off, n, seq, nrec, flags) in enumerate(cs):
            print(i, off, n, seq, nrec, flags)
        return
    op, args = sys.argv[3], [int(a) for a in sys.argv[4:]]
    order = list(range(len(cs)))
    if op in ('counts-flip', 'counts-break'):
        i = args[0]
        byte, bit = (args[1], args[2]) if len(args) >= 3 else (46, 2)
        if op == 'counts-break':
            byte, bit = None, 0
        off, n = cs[i][0], cs[i][1]
        chunk, g, count, mode = counts_flip(b, off, byte, bit)
        with open(sys.argv[2], 'wb') as f:
            f.write(b[:off] + chunk + b[off + n:])
        print('group %d count %d mode %d' % (g, count, mode))
        return
    if op == 'drop':
        order = [i for i in order if i not in args]
    elif op == 'dup':
        order.insert(order.index(args[0]) + 1, args[0])
    elif op == 'swap':
        order[args[0]], order[args[1]] = order[args[1]], order[args[0]]
    else:
        sys.exit('chunk-edit: unknown operation ' + op)
    with open(sys.argv[2], 'wb') as f:
        f.write(b[:head])
        for i in order:
            off, n = cs[i][0], cs[i][1]
            f.write(b[off:off + n])


main()
