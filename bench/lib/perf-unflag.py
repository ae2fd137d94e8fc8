#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Benchmarks only: clears, in place, the build-id flag
# (PERF_RECORD_MISC_MMAP_BUILD_ID) of MMAP2 records in a perf.data file
# whose "build-id size" byte is above 20, so perf 6.1 can read a
# recording made while another tool (e.g. a `domprof record -a` of
# another test on a shared machine) asked the kernel for build-ids:
# since Linux 5.12 the kernel leaves that flag set on the MMAP2 records
# of the events after the one that asked, over their device and inode
# fields, and perf's report asserts in util/build-id.c. Such records are
# what domprof's perf.data reader ignores the flag of (src/format/perfdata.c).
# Files perf wrote to disk (not pipe mode); records in PERF_RECORD_COMPRESSED
# are left alone. Prints how many records it changed.
import struct
import sys

MMAP2, MISC_BUILD_ID = 10, 1 << 14
path = sys.argv[1]
n = 0
with open(path, 'r+b') as f:
    head = f.read(104)
    if head[:8] != b'PERFILE2':
        sys.exit('perf-unflag: %s is not a perf.data file' % path)
    off, size = struct.unpack_from('<QQ', head, 40)
    pos, end = off, off + size
    while pos + 8 <= end:
        f.seek(pos)
        typ, misc, rsize = struct.unpack('<IHH', f.read(8))
        if rsize < 8:
            sys.exit('perf-unflag: record of size %d at %d' % (rsize, pos))
        if typ == MMAP2 and misc & MISC_BUILD_ID and rsize > 41:
            f.seek(pos + 40)
            if f.read(1)[0] > 20:
                f.seek(pos + 4)
                f.write(struct.pack('<H', misc & ~MISC_BUILD_ID))
                n += 1
        pos += rsize
print('perf-unflag: %d MMAP2 records unflagged in %s' % (n, path))
