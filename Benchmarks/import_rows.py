"""Helpers of Benchmarks/import.sh (stdlib only): a synthetic tileset of a given size, and the rows.

    python3 import_rows.py synthetic --regions REGIONS.geojson --bytes N --out TILES.mbtiles
    python3 import_rows.py row --name NAME --timings HYPERFINE.json --rss-kib N --baseline-rss-kib N --out ROW.json

The synthetic tileset covers the bounding box of the regions' polygons at zooms 0..14 (as many zooms as
the byte budget fills), each tile an incompressible blob of 16-64 KiB from a fixed seed (so a rerun
makes the same file), in MBTiles 1.3 shape with `format` = `png` (opaque tiles, not decoded).
"""
import argparse
import json
import math
import random
import sqlite3
import statistics
import sys


def bbox_of(regions_path):
    west, south, east, north = 180.0, 90.0, -180.0, -90.0
    with open(regions_path, encoding="utf-8") as handle:
        features = json.load(handle)["features"]

    def walk(coordinates):
        nonlocal west, south, east, north
        if coordinates and isinstance(coordinates[0], (int, float)):
            lon, lat = coordinates[0], coordinates[1]
            west, east, south, north = min(west, lon), max(east, lon), min(south, lat), max(north, lat)
            return
        for item in coordinates:
            walk(item)

    for feature in features:
        walk(feature["geometry"]["coordinates"])
    return west, max(south, -85.0), east, min(north, 85.0)


def tile_range(west, south, east, north, zoom):
    n = 1 << zoom

    def x_of(lon):
        return min(n - 1, max(0, int((lon + 180.0) / 360.0 * n)))

    def y_of(lat):
        rad = math.radians(lat)
        return min(n - 1, max(0, int((1.0 - math.asinh(math.tan(rad)) / math.pi) / 2.0 * n)))

    return x_of(west), x_of(east), y_of(north), y_of(south)


def synthetic(args):
    west, south, east, north = bbox_of(args.regions)
    rng = random.Random(20261201)
    database = sqlite3.connect(args.out)
    database.executescript(
        """
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 65536;
        CREATE TABLE metadata (name TEXT, value TEXT);
        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
        """)
    database.executemany("INSERT INTO metadata VALUES (?, ?)", [
        ("name", "synthetic"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "14"),
        ("bounds", f"{west},{south},{east},{north}")])
    written = 0
    tiles = 0
    for zoom in range(0, 15):
        x0, x1, y0, y1 = tile_range(west, south, east, north, zoom)
        for x in range(x0, x1 + 1):
            rows = []
            for y in range(y0, y1 + 1):
                size = rng.randint(16 << 10, 64 << 10)
                rows.append((zoom, x, (1 << zoom) - 1 - y, rng.randbytes(size)))
                written += size
                tiles += 1
                if written >= args.bytes:
                    break
            database.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
            if written >= args.bytes:
                break
        if written >= args.bytes:
            break
    database.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    database.commit()
    database.close()
    print(json.dumps({"tiles": tiles, "tileBytes": written}))


def row(args):
    with open(args.timings, encoding="utf-8") as handle:
        results = json.load(handle)["results"]
    medians = [statistics.median(result["times"]) for result in results]
    out = {
        "row": args.name, "baselineCommand": results[0]["command"], "importCommand": results[1]["command"],
        "runs": len(results[1]["times"]), "baselineMedianSeconds": medians[0], "importMedianSeconds": medians[1],
        # hyperfine subtracts the shell's start-up time; a read that fast can come out as 0: count it as 1 ms.
        "ratio": medians[1] / max(medians[0], 1e-3),
        "importPeakRSSMiB": args.rss_kib / 1024.0, "baselinePeakRSSMiB": args.baseline_rss_kib / 1024.0,
        "inputBytes": args.input_bytes,
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1, sort_keys=True)
    print(json.dumps(out, sort_keys=True))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("synthetic")
    made.add_argument("--regions", required=True)
    made.add_argument("--bytes", type=int, required=True)
    made.add_argument("--out", required=True)
    rowed = commands.add_parser("row")
    for name in ("--name", "--timings", "--out"):
        rowed.add_argument(name, required=True)
    rowed.add_argument("--rss-kib", type=int, required=True)
    rowed.add_argument("--baseline-rss-kib", type=int, required=True)
    rowed.add_argument("--input-bytes", type=int, required=True)
    args = parser.parse_args()
    return synthetic(args) if args.command == "synthetic" else row(args)


if __name__ == "__main__":
    sys.exit(main())
