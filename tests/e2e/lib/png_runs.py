# SPDX-License-Identifier: MIT
"""The widest coloured band in a screenshot, decoded without PIL (zlib
and the PNG filters only): the longest run of columns that are coloured
(chroma, max - min of R, G, B, at least MIN_CHROMA) in TALL rows one
under the other, gaps of up to GAP pixels allowed (a frame's label is
dark text on its colour). Flame graph frames are coloured (user frames
saturated, kernel, domain and process frames pale but tinted) and 16 px
tall; the page around them is white, grey or text (coloured text is not
TALL rows of solid colour).
Used by tests/e2e/report-html-firstscreen.sh.

usage: python3 png_runs.py MIN_FRACTION SHOT.png...
Prints "pixels: SHOT: widest coloured band W px of WIDTH (rows Y-Y2): wide"
for each, "wide" when W > MIN_FRACTION * WIDTH, else "narrow"; exit 0, or
2 when a file is not a PNG it can read.
"""
import re
import struct
import sys
import zlib

MIN_CHROMA = 15
GAP = 12
TALL = 4


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if not hdr:
        raise ValueError("no IHDR")
    w, h, bits, ctype, _, _, interlace = hdr
    if bits != 8 or ctype not in (2, 6) or interlace or w > 10000 or h > 10000:
        raise ValueError(f"unsupported PNG ({w}x{h}, depth {bits}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    if len(raw) < h * (stride + 1):
        raise ValueError("image data too short")
    rows, prev = [], bytearray(stride)
    low7 = int.from_bytes(b"\x7f" * stride, "big")
    high1 = int.from_bytes(b"\x80" * stride, "big")
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 2:   # Up: bytewise sums, all at once (no carry between bytes)
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            v = ((a & low7) + (b & low7)) ^ ((a ^ b) & high1)
            line = bytearray(v.to_bytes(stride, "big"))
        for i in range(stride if f in (1, 3, 4) else 0):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def widest_band(w, h, bpp, rows):
    """(width, first row) of the widest coloured band"""
    masks = []
    for line in rows:
        px = zip(line[0::bpp], line[1::bpp], line[2::bpp])
        masks.append(int("".join("1" if max(t) - min(t) >= MIN_CHROMA else "0" for t in px), 2))
    run = re.compile("1(?:0{0,%d}1)*" % GAP)
    best, best_y = 0, -1
    for y in range(h - TALL + 1):
        solid = masks[y]
        for k in range(1, TALL):
            solid &= masks[y + k]
        if not solid:
            continue
        for m in run.finditer(format(solid, "0%db" % w)):
            if m.end() - m.start() > best:
                best, best_y = m.end() - m.start(), y
    return best, best_y


def main():
    frac, status = float(sys.argv[1]), 0
    for path in sys.argv[2:]:
        try:
            w, h, bpp, rows = decode(path)
        except (OSError, ValueError, zlib.error) as e:
            print(f"pixels: {path}: cannot read: {e}")
            status = 2
            continue
        best, y = widest_band(w, h, bpp, rows)
        print(f"pixels: {path}: widest coloured band {best} px of {w} (rows {y}-{y + TALL - 1}): "
              + ("wide" if best > frac * w else "narrow"))
    return status


if __name__ == "__main__":
    sys.exit(main())
