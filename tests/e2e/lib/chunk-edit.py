#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Cut, repeat or reorder whole chunks of a domprof file, for tests of the
# reader's chunk-sequence check (docs/file-format.md: a header of
# header_len bytes padded to 8, then chunks of a 32-byte header and a
# stored payload padded to 8). The chunks' bytes are not changed, so every
# CRC stays valid: only their sequence is wrong.
#
# usage: chunk-edit.py IN list                 one line per chunk: index offset length seq nrecords flags
#        chunk-edit.py IN OUT drop I [J...]    without chunks I, J, ...
#        chunk-edit.py IN OUT dup I            chunk I twice
#        chunk-edit.py IN OUT swap I J         chunks I and J exchanged
import struct
import sys


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
