#!/usr/bin/env python3
"""A synthetic planet-sized PMTiles v3 archive for Benchmarks/import.sh --planet (issue 45), stdlib only.

    python3 Benchmarks/planet_tiles.py --max-zoom 12 --out planet.pmtiles

Every tile of zooms 0..--max-zoom over the whole world (z0-12: 22,369,621 tiles), each its own bytes
(the tile id, 8 bytes little-endian, repeated: distinct, so no two tiles fold into one run), of a
length set by its zoom: 4 KiB at zoom 0, halving with each zoom down to --min-bytes (default 64) —
the low zooms' tiles hold a continent each and are the largest, as in a real archive. Tile type png
(opaque, never decoded), tiles uncompressed, directories gzipped, clustered.

Made as a stream, one leaf directory at a time: no list of entries or tiles is held, and since every
entry follows the previous one (run length 1, its bytes right after the last tile's), a leaf's columns
are written as repeated bytes rather than entry by entry. The tile data goes to a scratch file first,
then header, root, metadata, leaves and data are joined into --out (written as OUT.part, renamed at
the end; an existing OUT is kept). Prints {"tiles": …, "archiveBytes": …, "tileBytes": …} as JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import struct
import sys
import tempfile

LEAF_ENTRIES = 16384


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def directory(entries: list[tuple[int, int, int, int]]) -> bytes:
    """Serialize (tile_id, run_length, length, offset) entries, gzipped (few entries: the root)."""
    out = bytearray(varint(len(entries)))
    last = 0
    for tile_id, _, _, _ in entries:
        out += varint(tile_id - last)
        last = tile_id
    for _, run, _, _ in entries:
        out += varint(run)
    for _, _, length, _ in entries:
        out += varint(length)
    previous = None
    for _, _, length, offset in entries:
        out += varint(0 if previous is not None and offset == previous[0] + previous[1] else offset + 1)
        previous = (offset, length)
    return gzip.compress(bytes(out), mtime=0)


def leaf(first_id: int, count: int, length: int, offset: int) -> bytes:
    """A leaf of `count` consecutive tiles from `first_id`, each `length` bytes, back to back from `offset`."""
    tail = count - 1
    body = (varint(count) + varint(first_id) + b"\x01" * tail + b"\x01" * count + varint(length) * count
            + varint(offset + 1) + b"\x00" * tail)
    return gzip.compress(body, mtime=0)


def zoom_base(zoom: int) -> int:
    return ((1 << (2 * zoom)) - 1) // 3


def make(max_zoom: int, min_bytes: int, out: str) -> dict:
    part = out + ".part"
    folder = os.path.dirname(os.path.abspath(out))
    leaves = bytearray()
    root: list[tuple[int, int, int, int]] = []
    tiles = 0
    data_bytes = 0
    with tempfile.TemporaryFile(dir=folder) as data:
        for zoom in range(max_zoom + 1):
            length = max(min_bytes, 4096 >> zoom) // 8 * 8
            copies = length // 8
            base, count = zoom_base(zoom), 1 << (2 * zoom)
            for start in range(0, count, LEAF_ENTRIES):
                n = min(LEAF_ENTRIES, count - start)
                first = base + start
                data.write(b"".join(struct.pack("<Q", tile_id) * copies for tile_id in range(first, first + n)))
                blob = leaf(first, n, length, data_bytes)
                root.append((first, 0, len(blob), len(leaves)))
                leaves += blob
                data_bytes += n * length
                tiles += n
        root_bytes = directory(root)
        metadata = gzip.compress(json.dumps({"name": "synthetic planet", "description": "Benchmarks/planet_tiles.py"}).encode(), mtime=0)
        if 127 + len(root_bytes) > 16384:
            raise SystemExit(f"planet_tiles.py: the root directory takes {len(root_bytes)} bytes, past the first 16 KiB")
        root_offset = 127
        metadata_offset = root_offset + len(root_bytes)
        leaf_offset = metadata_offset + len(metadata)
        data_offset = leaf_offset + len(leaves)
        header = b"PMTiles" + struct.pack(
            "<BQQQQQQQQQQQBBBBBBiiiiBii", 3, root_offset, len(root_bytes), metadata_offset, len(metadata), leaf_offset,
            len(leaves), data_offset, data_bytes, tiles, tiles, tiles, 1, 2, 1, 2, 0, max_zoom,
            -1800000000, -850511287, 1800000000, 850511287, 0, 0, 0)
        assert len(header) == 127
        with open(part, "wb") as handle:
            handle.write(header + root_bytes + metadata + bytes(leaves))
            data.seek(0)
            shutil.copyfileobj(data, handle, 16 << 20)
    os.replace(part, out)
    return {"tiles": tiles, "archiveBytes": os.path.getsize(out), "tileBytes": data_bytes}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-zoom", type=int, default=12)
    parser.add_argument("--min-bytes", type=int, default=64)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if not 0 <= args.max_zoom <= 14:
        print(f"planet_tiles.py: --max-zoom {args.max_zoom}: expected 0..14", file=sys.stderr)
        return 2
    if not 8 <= args.min_bytes <= 4096:
        print(f"planet_tiles.py: --min-bytes {args.min_bytes}: expected 8..4096", file=sys.stderr)
        return 2
    if os.path.exists(args.out):
        print(json.dumps({"tiles": None, "archiveBytes": os.path.getsize(args.out), "kept": args.out}))
        return 0
    print(json.dumps(make(args.max_zoom, args.min_bytes, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
