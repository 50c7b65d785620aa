#!/usr/bin/env python3
"""Prints what a PNG screenshot shows, as JSON: size, distinct colours, share of non-white pixels.

Reads 8-bit RGB or RGBA, non-interlaced PNGs (what Chromium's --screenshot writes) with only the
standard library, so a test can tell a rendered page from a blank one.
"""
import json, struct, sys, zlib

def stats(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise SystemExit("%s: only 8-bit RGB/RGBA, non-interlaced PNGs are read" % path)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours, non_white = set(), 0
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + left) & 0xFF
            elif kind == 2: line[i] = (line[i] + up) & 0xFF
            elif kind == 3: line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upper_left)) & 0xFF
        for x in range(0, stride, channels * 4):   # every fourth pixel is plenty
            pixel = bytes(line[x:x + 3])
            colours.add(pixel)
            if pixel != b"\xff\xff\xff":
                non_white += 1
        previous = line
    sampled = height * ((width + 3) // 4)
    return {"width": width, "height": height, "colours": len(colours), "nonWhite": non_white / sampled}

if __name__ == "__main__":
    print(json.dumps(stats(sys.argv[1])))
