#!/usr/bin/env python3
"""Prints how much a PNG shows: `WIDTHxHEIGHT colours=N foreground=M` (distinct colours, and pixels
other than the most frequent colour, the background).  With --min-colours and --min-foreground
(a fraction of the pixels), exits 1 naming the figure below its minimum: a blank or nearly blank
screenshot.  Python's standard library only (zlib, struct): 8-bit greyscale, RGB, grey+alpha and
RGBA, not interlaced, which is what Chromium writes."""
import argparse
import collections
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def chunks(data, path):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(kind, line, prev, bpp):
    """Undoes one scanline's filter (PNG spec 9.2), in place on line (a bytearray)."""
    n = len(line)
    if kind == 1:
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif kind == 2:
        for i in range(n):
            line[i] = (line[i] + prev[i]) & 255
    elif kind == 3:
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            upleft = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + paeth(left, prev[i], upleft)) & 255
    elif kind != 0:
        raise ValueError(f"unknown filter type {kind}")


def pixels(path):
    """Returns (width, height, Counter of pixel values as bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    idat = bytearray()
    width = height = bpp = None
    for kind, body in chunks(data, path):
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in CHANNELS or interlace:
                sys.exit(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}: "
                         "only 8-bit, non-interlaced grey/RGB/RGBA is read")
            bpp = CHANNELS[colour]
        elif kind == b"IDAT":
            idat += body
    if width is None:
        sys.exit(f"{path}: no IHDR chunk")
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        sys.exit(f"{path}: {len(raw)} bytes of image data, expected {height * (stride + 1)}")
    counts = collections.Counter()
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        unfilter(raw[start], line, prev, bpp)
        counts.update(bytes(line[x:x + bpp]) for x in range(0, stride, bpp))
        prev = line
    return width, height, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("png")
    ap.add_argument("--min-colours", type=int, default=0)
    ap.add_argument("--min-foreground", type=float, default=0.0)
    args = ap.parse_args()
    width, height, counts = pixels(args.png)
    total = width * height
    foreground = total - counts.most_common(1)[0][1] if counts else 0
    print(f"{args.png}: {width}x{height} colours={len(counts)} foreground={foreground} "
          f"({100.0 * foreground / max(total, 1):.1f}%)")
    if len(counts) < args.min_colours:
        sys.exit(f"{args.png}: {len(counts)} distinct colours, fewer than {args.min_colours}: "
                 "a blank page?")
    if foreground < args.min_foreground * total:
        sys.exit(f"{args.png}: {foreground} of {total} pixels differ from the background, "
                 f"fewer than {args.min_foreground:.0%}: a blank page?")


if __name__ == "__main__":
    main()
