#!/usr/bin/env python3
"""Checks mappack's tile outputs with tools nobody in this project wrote: GDAL (`ogrinfo`),
`mapbox-vector-tile`, MapLibre Native (through `pymgl`) and the PyPI `pmtiles` reader.

    check_outputs.py mbtiles FILE [--expect-layer countries] [--expect-name Switzerland ...] [--min-zoom 0]
    check_outputs.py render MBTILES --lon 8.2 --lat 46.8 --zoom 6 [--expect-rgb R,G,B] [--expect LON,LAT=COLOUR ...] [--png OUT.png]
    check_outputs.py maplibre-db FILE [--expect-layer countries] [--expect-name Switzerland ...]
    check_outputs.py pmtiles FILE [--expect-layer countries] [--expect-name Switzerland ...] [--min-zoom 0]
    check_outputs.py pmtiles-matches MBTILES PMTILES
    check_outputs.py pmtiles-contents PMTILES

`pmtiles-contents` prints, as one JSON object, what the PyPI reader finds: the header's zooms, bounds
and centre, and the z/x/y of every tile the directories address (the caller checks them).

Exit 0 when every check passes, 1 with one `FAIL:` line per failed check, 2 on bad usage (or a
missing tool). The last line printed is the summary: `check_outputs <verb>: PASS|FAIL ...`.
Every child process gets a timeout.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

CHILD_TIMEOUT = 120
GZIP_MAGIC = b"\x1f\x8b"
# The render style's colours; `--expect` takes these names or R,G,B.
PALETTE = {
    "water": (30, 144, 255),   # wherever a tile is and no country polygon is drawn
    "land": (204, 204, 204),   # a country without its own colour below
    "not-installed": (240, 236, 228),   # `mappack serve`'s background: where the image has no tile
    "CH": (228, 26, 28),
    "LI": (77, 175, 74),
    "AT": (255, 127, 0),
    "DE": (152, 78, 163),
    "IT": (255, 255, 51),
    "FR": (166, 86, 40),
}


class Usage(Exception):
    pass


class Report:
    def __init__(self, verb: str, target: str):
        self.verb, self.target = verb, target
        self.failures: list[str] = []
        self.passed = 0

    def info(self, message: str) -> None:
        print(f"  {message}", flush=True)

    def check(self, ok: bool, what: str, why: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"ok: {what}", flush=True)
        else:
            self.failures.append(what)
            print(f"FAIL: {what}" + (f": {why}" if why else ""), flush=True)
        return ok

    def finish(self) -> int:
        if self.failures:
            print(f"check_outputs {self.verb}: FAIL {len(self.failures)} of {len(self.failures) + self.passed} checks "
                  f"({'; '.join(self.failures)}) - {self.target}", flush=True)
            return 1
        print(f"check_outputs {self.verb}: PASS {self.passed} checks - {self.target}", flush=True)
        return 0


# ---------------------------------------------------------------------------------------------
# Tiles.

def tile_encoding(data: bytes) -> str:
    if data[:2] == GZIP_MAGIC:
        return "gzip"
    if len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0:
        return "zlib"
    return "raw"


def unpack(data: bytes) -> bytes:
    """The MVT bytes of a tile stored raw, gzipped or zlib-deflated."""
    encoding = tile_encoding(data)
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "zlib":
        return zlib.decompress(data)
    return data


def decode_mvt(data: bytes) -> dict:
    import mapbox_vector_tile

    return mapbox_vector_tile.decode(data)


class TileScan:
    """Decodes tiles, counting layers and collecting property values that could be names."""

    def __init__(self, expect_layer: str | None, expect_names: list[str]):
        self.expect_layer = expect_layer
        self.wanted = set(expect_names)
        self.found_names: set[str] = set()
        self.layers: dict[str, int] = {}
        self.decoded = 0
        self.errors: list[str] = []
        self.empty = 0

    def add(self, address: str, mvt: bytes) -> None:
        try:
            tile = decode_mvt(mvt)
        except Exception as error:  # mapbox_vector_tile raises protobuf's DecodeError and others
            if len(self.errors) < 5:
                self.errors.append(f"{address}: {type(error).__name__}: {error}")
            else:
                self.errors.append(address)
            return
        self.decoded += 1
        if not tile:
            self.empty += 1
        for name, layer in tile.items():
            features = layer.get("features", [])
            self.layers[name] = self.layers.get(name, 0) + len(features)
            if self.wanted - self.found_names:
                for feature in features:
                    for value in (feature.get("properties") or {}).values():
                        if isinstance(value, str) and value in self.wanted:
                            self.found_names.add(value)

    def report(self, report: Report, total: int) -> None:
        report.check(total > 0, "the file holds tiles", "no tile rows")
        report.check(not self.errors and self.decoded == total, f"every tile decodes as MVT ({self.decoded} of {total})",
                     f"{total - self.decoded} did not; first: {'; '.join(self.errors[:5])}")
        report.info("layers (features summed over tiles): "
                    + (", ".join(f"{k}={v}" for k, v in sorted(self.layers.items())) or "none"))
        if self.expect_layer:
            report.check(self.expect_layer in self.layers, f"layer '{self.expect_layer}' is in the tiles",
                         f"layers seen: {sorted(self.layers) or 'none'}")
        for name in sorted(self.wanted):
            report.check(name in self.found_names, f"a feature is named '{name}'", "no feature property has that value")


# ---------------------------------------------------------------------------------------------
# mbtiles

def run_child(command: list[str], timeout: int = CHILD_TIMEOUT, **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "", f"timed out after {timeout} s")


def ogrinfo(path: str, report: Report) -> None:
    tool = shutil.which("ogrinfo")
    if not tool:
        raise Usage("ogrinfo not found: install the Debian package gdal-bin (make deps)")
    done = run_child([tool, "-ro", "-so", "-al", path])
    layers = []
    for line in done.stdout.splitlines():
        if line.startswith("Layer name:"):
            layers.append([line.split(":", 1)[1].strip(), None])
        elif line.startswith("Feature Count:") and layers:
            layers[-1][1] = line.split(":", 1)[1].strip()
    report.info("ogrinfo: " + (", ".join(f"{n} ({c} features)" for n, c in layers) or "no layers")
                + (f"; stderr: {done.stderr.strip()[:300]}" if done.stderr.strip() else ""))
    report.check(done.returncode == 0 and len(layers) > 0, "GDAL ogrinfo opens it as vector MBTiles with layers",
                 f"exit {done.returncode}, {len(layers)} layers" + (f": {done.stderr.strip()[:300]}" if done.stderr.strip() else ""))


def parse_bounds(text):
    try:
        west, south, east, north = (float(v) for v in str(text).split(","))
    except (TypeError, ValueError):
        return None
    if not (-180 <= west <= east <= 180 and -90 <= south <= north <= 90):
        return None
    return west, south, east, north


def tile_box(z, x, y):
    """[west, south, east, north] of XYZ tile z/x/y (mercantile's, not ours)."""
    import mercantile

    box = mercantile.bounds(x, y, z)
    return box.west, box.south, box.east, box.north


def read_sqlite(path: str):
    if not Path(path).is_file():
        raise Usage(f"{path}: no such file")
    database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    database.text_factory = lambda b: b.decode("utf-8", "replace")
    return database


def check_mbtiles(args) -> int:
    report = Report("mbtiles", args.file)
    ogrinfo(args.file, report)
    database = read_sqlite(args.file)
    try:
        tables = {row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        report.check({"metadata", "tiles"} <= tables, "tables metadata and tiles exist", f"found {sorted(tables)}")
        metadata = dict(database.execute("SELECT name, value FROM metadata")) if "metadata" in tables else {}
        report.info("metadata: " + ", ".join(f"{k}={v if len(str(v)) < 60 else str(v)[:57] + '...'}" for k, v in sorted(metadata.items())))
        report.check(metadata.get("format") == "pbf", "metadata format is 'pbf'", f"format is {metadata.get('format')!r}")
        layers = []
        try:
            layers = json.loads(metadata["json"]).get("vector_layers") or []
            report.check(isinstance(layers, list) and len(layers) > 0, "metadata json has vector_layers", "vector_layers missing or empty")
        except KeyError:
            report.check(False, "metadata json has vector_layers", "no 'json' row (MBTiles 1.3 requires it for vector tiles)")
        except (ValueError, AttributeError) as error:
            report.check(False, "metadata json has vector_layers", f"'json' is not a JSON object: {error}")
        if args.expect_layer and layers:
            ids = [layer.get("id") for layer in layers if isinstance(layer, dict)]
            report.check(args.expect_layer in ids, f"vector_layers lists '{args.expect_layer}'", f"it lists {ids}")
        if "tiles" not in tables:
            return report.finish()
        zooms = [row[0] for row in database.execute("SELECT DISTINCT zoom_level FROM tiles ORDER BY zoom_level")]
        report.info(f"tile zooms: {zooms}")
        if zooms:
            for key, actual in (("minzoom", zooms[0]), ("maxzoom", zooms[-1])):
                if key in metadata:
                    report.check(str(metadata[key]).strip() == str(actual), f"metadata {key} matches the tiles",
                                 f"metadata says {metadata[key]}, tiles go to {actual}")
        bounds = parse_bounds(metadata.get("bounds"))
        if bounds and zooms:
            outside = []
            for z, x, row in database.execute(
                    "SELECT zoom_level, tile_column, tile_row FROM tiles WHERE zoom_level = ?", (zooms[-1],)):
                w, s_, e, n = tile_box(z, x, (1 << z) - 1 - row)
                if e < bounds[0] or w > bounds[2] or n < bounds[1] or s_ > bounds[3]:
                    outside.append(f"{z}/{x}/{(1 << z) - 1 - row}")
            report.check(not outside, f"metadata bounds {metadata.get('bounds')} meet every tile at zoom {zooms[-1]}",
                         f"{len(outside)} tiles lie outside, e.g. {', '.join(outside[:3])}")
        elif "bounds" in metadata:
            report.check(False, "metadata bounds are west,south,east,north with west <= east and south <= north",
                         f"bounds is {metadata['bounds']!r}")
        if args.min_zoom is not None:
            report.check(args.min_zoom in zooms, f"tiles at zoom {args.min_zoom} exist",
                         f"lowest zoom is {zooms[0] if zooms else 'none'} (the overview's low zooms are missing)")
        scan = TileScan(args.expect_layer, args.expect_name)
        encodings: dict[str, int] = {}
        total = 0
        for z, x, row, data in database.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles"):
            total += 1
            data = bytes(data or b"")
            encodings[tile_encoding(data)] = encodings.get(tile_encoding(data), 0) + 1
            try:
                mvt = unpack(data)
            except (OSError, zlib.error, EOFError) as error:
                scan.errors.append(f"{z}/{x}/{(1 << z) - 1 - row}: cannot decompress: {error}")
                continue
            scan.add(f"{z}/{x}/{(1 << z) - 1 - row}", mvt)
        report.info("tile encodings: " + ", ".join(f"{k}={v}" for k, v in sorted(encodings.items())))
        scan.report(report, total)
    finally:
        database.close()
    return report.finish()


# ---------------------------------------------------------------------------------------------
# render (MapLibre Native through pymgl, in a child process with a timeout)

def parse_colour(text: str) -> tuple[int, int, int]:
    if text in PALETTE:
        return PALETTE[text]
    parts = text.split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and 0 <= int(p) <= 255 for p in parts):
        raise Usage(f"colour {text!r}: give R,G,B (0-255) or one of {', '.join(PALETTE)}")
    return tuple(int(p) for p in parts)


def parse_point(text: str):
    try:
        where, colour = text.split("=", 1)
        lon, lat = (float(v) for v in where.split(","))
    except ValueError:
        raise Usage(f"--expect {text!r}: give LON,LAT=R,G,B or LON,LAT=NAME")
    return lon, lat, parse_colour(colour)


def style_for(mbtiles: str, layer: str) -> dict:
    def hex_colour(rgb):
        return "#%02x%02x%02x" % rgb

    match = ["match", ["get", "ISO_A2"]]
    for code, rgb in PALETTE.items():
        if len(code) == 2 and code.isupper():
            match += [code, hex_colour(rgb)]
    match.append(hex_colour(PALETTE["land"]))
    return {
        "version": 8,
        "sources": {"countries": {"type": "vector", "url": "mbtiles://" + str(Path(mbtiles).absolute())}},
        "layers": [
            {"id": "water", "type": "background", "paint": {"background-color": hex_colour(PALETTE["water"])}},
            {"id": "countries", "type": "fill", "source": "countries", "source-layer": layer,
             "paint": {"fill-color": match, "fill-antialias": False}},
        ],
    }


def pixel_of(lon, lat, center_lon, center_lat, zoom, width, height):
    """The pixel of lon/lat in a width x height MapLibre view (512 px tiles) centred on center_lon/center_lat at zoom."""
    world = 512 * 2 ** zoom

    def project(lo, la):
        la = max(min(la, 85.0511), -85.0511)
        x = (lo + 180) / 360 * world
        y = (1 - math.log(math.tan(math.radians(la)) + 1 / math.cos(math.radians(la))) / math.pi) / 2 * world
        return x, y

    cx, cy = project(center_lon, center_lat)
    px, py = project(lon, lat)
    return int(round(width / 2 + px - cx)), int(round(height / 2 + py - cy))


def render_worker() -> int:
    """Child process: reads a job as JSON on stdin, renders, writes the PNG and RGBA samples as JSON on stdout."""
    job = json.loads(sys.stdin.read())
    import numpy
    import pymgl

    view = pymgl.Map(json.dumps(job["style"]), job["width"], job["height"], 1, job["lon"], job["lat"], job["zoom"])
    pixels = numpy.asarray(view.renderBuffer()).reshape(job["height"], job["width"], 4)
    if job.get("png"):
        Path(job["png"]).write_bytes(view.renderPNG())
    samples = []
    for x, y in job["pixels"]:
        samples.append([int(v) for v in pixels[y, x]] if 0 <= x < job["width"] and 0 <= y < job["height"] else None)
    print(json.dumps({"samples": samples}))
    return 0


def check_render(args) -> int:
    report = Report("render", args.mbtiles)
    if not Path(args.mbtiles).is_file():
        raise Usage(f"{args.mbtiles}: no such file")
    expectations = [parse_point(text) for text in args.expect]
    if args.expect_rgb:
        expectations.insert(0, (args.lon, args.lat, parse_colour(args.expect_rgb)))
    if not expectations:
        raise Usage("render: give --expect-rgb and/or --expect LON,LAT=COLOUR")
    pixels = [pixel_of(lon, lat, args.lon, args.lat, args.zoom, args.width, args.height) for lon, lat, _ in expectations]
    job = {"style": style_for(args.mbtiles, args.layer), "width": args.width, "height": args.height, "lon": args.lon,
           "lat": args.lat, "zoom": args.zoom, "png": str(Path(args.png).absolute()) if args.png else None, "pixels": pixels}
    environment = dict(os.environ)
    environment.setdefault("EGL_PLATFORM", "surfaceless")
    done = run_child([sys.executable, os.path.abspath(__file__), "_render-worker"], input=json.dumps(job), env=environment)
    if done.returncode != 0:
        report.check(False, "MapLibre Native (pymgl) renders the mbtiles", f"exit {done.returncode}: {done.stderr.strip()[-800:]}")
        return report.finish()
    report.check(True, "MapLibre Native (pymgl) renders the mbtiles")
    if args.png:
        report.info(f"PNG: {args.png}")
    samples = json.loads(done.stdout.strip().splitlines()[-1])["samples"]
    names = {rgb: name for name, rgb in PALETTE.items()}
    for (lon, lat, want), (x, y), got in zip(expectations, pixels, samples):
        label = names.get(want, ",".join(map(str, want)))
        if got is None:
            report.check(False, f"pixel at {lon},{lat} is {label}", f"({x},{y}) is outside the {args.width}x{args.height} view")
            continue
        ok = all(abs(g - w) <= args.tolerance for g, w in zip(got[:3], want))
        seen = names.get(tuple(got[:3]), ",".join(map(str, got[:3])))
        report.check(ok, f"pixel at {lon},{lat} (px {x},{y}) is {label}", f"it is {seen}")
    return report.finish()


# ---------------------------------------------------------------------------------------------
# maplibre-db (MapLibre Native's offline database, schema 6)

OFFLINE_TABLES = {"resources", "tiles", "regions", "region_resources", "region_tiles"}
OFFLINE_TILE_COLUMNS = ["id", "url_template", "pixel_ratio", "z", "x", "y", "expires", "modified", "etag", "data",
                        "compressed", "accessed", "must_revalidate"]


def region_problems(region_id, definition) -> list[str]:
    """What MapLibre Native's decodeOfflineRegionDefinition would refuse or misread in a region definition.
    Its JSON reader (rapidjson) takes `IsDouble()` numbers only, so `6` is refused where `6.0` is accepted."""
    def is_double(value):
        return isinstance(value, float)

    where = f"region {region_id}"
    try:
        value = json.loads(definition)
    except (ValueError, TypeError) as error:
        return [f"{where}: definition is not JSON ({error})"]
    if not isinstance(value, dict):
        return [f"{where}: definition is not a JSON object"]
    problems = []
    if not isinstance(value.get("style_url"), str):
        problems.append(f"{where}: style_url is not a string")
    for key, required in (("min_zoom", True), ("max_zoom", False), ("pixel_ratio", True)):
        if key in value and not is_double(value[key]):
            problems.append(f"{where}: {key} {value[key]!r} is not a JSON double (write it with a decimal point)")
        elif required and key not in value:
            problems.append(f"{where}: no {key}")
    if "include_ideographs" in value and not isinstance(value["include_ideographs"], bool):
        problems.append(f"{where}: include_ideographs is not a boolean")
    bounds = value.get("bounds")
    if isinstance(bounds, list) and len(bounds) == 4 and all(is_double(b) for b in bounds):
        south, west, north, east = bounds
        if not (-90 <= south <= north <= 90 and -180 <= west <= 180 and -180 <= east <= 180):
            problems.append(f"{where}: bounds {bounds} are not [south, west, north, east] in range")
        elif west > east:
            problems.append(f"{where}: bounds {bounds} have west > east (across the antimeridian); MapLibre Native takes "
                            "LatLngBounds::hull of the two corners, which is the other side of the world")
    elif not isinstance(value.get("geometry"), dict):
        problems.append(f"{where}: neither bounds of four JSON doubles nor a geometry object")
    if is_double(value.get("min_zoom")) and is_double(value.get("max_zoom")) and value["min_zoom"] > value["max_zoom"]:
        problems.append(f"{where}: min_zoom above max_zoom")
    return problems


def check_maplibre_db(args) -> int:
    report = Report("maplibre-db", args.file)
    database = read_sqlite(args.file)
    try:
        version = database.execute("PRAGMA user_version").fetchone()[0]
        report.check(version == 6, "PRAGMA user_version is 6 (MapLibre Native's offline schema)", f"it is {version}")
        tables = {row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        report.check(OFFLINE_TABLES <= tables, "tables resources, tiles, regions, region_resources, region_tiles exist",
                     f"missing {sorted(OFFLINE_TABLES - tables)}")
        if "tiles" not in tables:
            return report.finish()
        columns = [row[1] for row in database.execute("PRAGMA table_info(tiles)")]
        report.check(columns == OFFLINE_TILE_COLUMNS, "tiles has the schema's columns", f"it has {columns}")
        if "regions" in tables:
            regions = database.execute("SELECT id, definition FROM regions ORDER BY id").fetchall()
            report.check(len(regions) > 0, "at least one region", "regions is empty")
            bad = []
            for region_id, definition in regions:
                bad += region_problems(region_id, definition)
            report.check(not bad, "every region definition decodes as MapLibre Native decodes it (offline.cpp)", "; ".join(bad[:5]))
        if "region_tiles" in tables:
            dangling = database.execute(
                "SELECT count(*) FROM region_tiles WHERE tile_id NOT IN (SELECT id FROM tiles)").fetchone()[0]
            report.check(dangling == 0, "every region_tiles row names a tile", f"{dangling} rows name no tile")
        templates = [row[0] for row in database.execute("SELECT DISTINCT url_template FROM tiles ORDER BY 1")]
        report.info(f"url templates: {templates}")
        scan = TileScan(args.expect_layer, args.expect_name)
        total = 0
        wrong: dict[str, list[str]] = {}
        for z, x, y, data, compressed in database.execute("SELECT z, x, y, data, compressed FROM tiles ORDER BY z, x, y"):
            total += 1
            address = f"{z}/{x}/{y}"
            data = bytes(data or b"")
            if compressed == 1:
                try:
                    mvt = zlib.decompress(data)
                except zlib.error as error:
                    wrong.setdefault("compressed = 1 but the data does not inflate (zlib)", []).append(f"{address} ({error})")
                    continue
            elif compressed == 0:
                encoding = tile_encoding(data)
                mvt = data
                if encoding != "raw":
                    wrong.setdefault(
                        f"{encoding} data stored with compressed = 0: MapLibre Native reads such data as a raw MVT "
                        "and cannot parse it; store the raw MVT, or deflate it (zlib) with compressed = 1", []).append(address)
                    # Unwrapped anyway so the content checks below still say what the tiles hold.
                    try:
                        mvt = unpack(data)
                    except (OSError, zlib.error, EOFError):
                        pass
            else:
                wrong.setdefault("compressed is neither 0 nor 1", []).append(f"{address} ({compressed})")
                continue
            scan.add(address, mvt)
        for problem, addresses in wrong.items():
            report.check(False, "tile data matches its compressed flag", f"{len(addresses)} of {total} tiles: {problem}; e.g. {', '.join(addresses[:3])}")
        if not wrong:
            report.check(total > 0, "tile data matches its compressed flag", "no tiles")
        scan.report(report, total)
        report.info("not rendered: pymgl gives no way to point MapLibre Native at an offline database (no cache path "
                    "in its API), so this database is checked by its schema and by decoding every tile")
    finally:
        database.close()
    return report.finish()


# ---------------------------------------------------------------------------------------------
# pmtiles

PMTILES_ROOT_LIMIT = 16384  # the header and the root directory lie in the first 16 KiB (spec v3, chapters 2 and 4)


def pmtiles_entries(source, header):
    """Every tile entry (run length > 0) of the archive, walking the root and its leaf directories with
    the reader's own directory decoder; checks each directory's entries as the spec asks."""
    from pmtiles.tile import deserialize_directory

    problems: list[str] = []
    tiles = []
    leaves = 0

    def walk(offset, length, depth, where):
        nonlocal leaves
        try:
            entries = deserialize_directory(source(offset, length))
        except Exception as error:
            problems.append(f"{where} does not decode: {type(error).__name__}: {error}")
            return
        if not entries:
            problems.append(f"{where} has no entries (the spec: the count MUST be greater than 0)")
        previous = -1
        for entry in entries:
            if entry.tile_id <= previous:
                problems.append(f"{where}: tile ids not ascending ({previous} then {entry.tile_id})")
            previous = entry.tile_id
            if entry.length <= 0:
                problems.append(f"{where}: entry {entry} has length 0 (the spec: MUST be greater than 0)")
            if entry.run_length == 0:
                leaves += 1
                if depth > 0:
                    problems.append(f"{where}: a leaf directory inside a leaf directory")
                elif entry.offset + entry.length > header["leaf_directory_length"]:
                    problems.append(f"{where}: leaf {entry} ends past the leaf directories section")
                else:
                    walk(header["leaf_directory_offset"] + entry.offset, entry.length, depth + 1, f"leaf directory at {entry.offset}")
            else:
                tiles.append(entry)

    walk(header["root_offset"], header["root_length"], 0, "root directory")
    return tiles, leaves, problems


def check_pmtiles(args) -> int:
    from pmtiles.reader import MmapSource, Reader
    from pmtiles.tile import Compression, TileType, tileid_to_zxy

    report = Report("pmtiles", args.file)
    path = Path(args.file)
    if not path.is_file():
        raise Usage(f"{args.file}: no such file")
    size = path.stat().st_size
    with open(args.file, "rb") as handle:
        source = MmapSource(handle)
        try:
            header = Reader(source).header()
        except Exception as error:
            report.check(False, "the PMTiles header reads", f"{type(error).__name__}: {error}")
            return report.finish()
        report.check(header["version"] == 3, "PMTiles spec version 3", f"version {header['version']}")
        report.info(f"header: tile_type={header['tile_type'].name} tile_compression={header['tile_compression'].name} "
                    f"internal_compression={header['internal_compression'].name} clustered={header['clustered']} "
                    f"zooms {header['min_zoom']}-{header['max_zoom']} addressed={header['addressed_tiles_count']} "
                    f"entries={header['tile_entries_count']} contents={header['tile_contents_count']} "
                    f"bounds={[header[k] / 1e7 for k in ('min_lon_e7', 'min_lat_e7', 'max_lon_e7', 'max_lat_e7')]}")
        report.check(header["tile_type"] == TileType.MVT, "tile type is MVT", f"it is {header['tile_type'].name}")
        # The PyPI reader gunzips every directory whatever the header says; the spec allows others.
        report.check(header["internal_compression"] == Compression.GZIP, "directories and metadata are gzipped (internal compression 2)",
                     f"it is {header['internal_compression'].name}, which this reader cannot read")
        report.check(header["root_offset"] + header["root_length"] <= PMTILES_ROOT_LIMIT,
                     f"header and root directory lie in the first {PMTILES_ROOT_LIMIT} bytes",
                     f"the root ends at byte {header['root_offset'] + header['root_length']}")
        sections = {name: (header[f"{name}_offset"], header[f"{name}_length"])
                    for name in ("root", "metadata", "leaf_directory", "tile_data")}
        outside = [name for name, (offset, length) in sections.items() if offset < 127 or offset + length > size]
        report.check(not outside, "every section lies inside the file, after the header", f"{outside} do not (file is {size} bytes)")
        report.check(header["min_zoom"] <= header["max_zoom"], "min_zoom <= max_zoom")
        report.check(header["min_lon_e7"] <= header["max_lon_e7"] and header["min_lat_e7"] <= header["max_lat_e7"],
                     "bounds are min <= max")
        try:
            metadata = Reader(source).metadata()
            layers = metadata.get("vector_layers")
            report.check(isinstance(layers, list) and len(layers) > 0, "metadata has vector_layers (required for MVT)",
                         f"vector_layers is {layers!r}")
            if args.expect_layer:
                report.check(args.expect_layer in [l.get("id") for l in layers or []], f"vector_layers lists '{args.expect_layer}'")
            report.info(f"metadata keys: {sorted(metadata)}")
        except Exception as error:
            report.check(False, "metadata reads as JSON", f"{type(error).__name__}: {error}")

        entries, leaves, problems = pmtiles_entries(source, header)
        report.info(f"directories: root {header['root_length']} bytes, {leaves} leaf directories ({header['leaf_directory_length']} bytes)")
        report.check(not problems, "every directory decodes with ascending tile ids and non-zero lengths", "; ".join(problems[:5]))
        addressed = sum(entry.run_length for entry in entries)
        contents = {(entry.offset, entry.length) for entry in entries}
        for key, actual in (("addressed_tiles_count", addressed), ("tile_entries_count", len(entries)), ("tile_contents_count", len(contents))):
            if header[key] != 0:  # 0 means unknown
                report.check(header[key] == actual, f"header {key} matches the directories", f"header {header[key]}, directories {actual}")
        if header["clustered"]:
            # Clustered: tile data in tile id order; each entry starts where the data so far ends or, deduplicated, before it.
            end, wrong = 0, []
            for entry in entries:
                if entry.offset != end and entry.offset + entry.length > end:
                    wrong.append(str(entry))
                end = max(end, entry.offset + entry.length)
            report.check(not wrong and end == header["tile_data_length"],
                         "clustered: tile data in tile id order, each entry contiguous or an earlier copy, filling the data section",
                         f"{len(wrong)} entries are not, e.g. {wrong[:3]}; data ends at {end} of {header['tile_data_length']}")
        zooms = sorted({tileid_to_zxy(entry.tile_id)[0] for entry in entries} | {tileid_to_zxy(entry.tile_id + entry.run_length - 1)[0] for entry in entries})
        if zooms:
            report.check((zooms[0], zooms[-1]) == (header["min_zoom"], header["max_zoom"]), "header zooms match the tiles",
                         f"header {header['min_zoom']}-{header['max_zoom']}, tiles {zooms[0]}-{zooms[-1]}")
        if args.min_zoom is not None:
            report.check(args.min_zoom in zooms, f"tiles at zoom {args.min_zoom} exist", f"zooms with tiles: {zooms}")

        scan = TileScan(args.expect_layer, args.expect_name)
        total = 0
        for entry in entries:
            data = source(header["tile_data_offset"] + entry.offset, entry.length)
            address = "/".join(map(str, tileid_to_zxy(entry.tile_id)))
            total += entry.run_length
            try:
                if header["tile_compression"] == Compression.GZIP:
                    data = gzip.decompress(data)
                elif header["tile_compression"] != Compression.NONE:
                    scan.errors.append(f"{address}: tile compression {header['tile_compression'].name} not supported here")
                    continue
            except (OSError, EOFError) as error:
                scan.errors.append(f"{address}: header says {header['tile_compression'].name}, data does not decompress: {error}")
                continue
            before = scan.decoded
            scan.add(address, data)
            # A run of ids shares these bytes: count each tile it addresses as decoded.
            if scan.decoded > before:
                scan.decoded += entry.run_length - 1
        scan.report(report, total)
    return report.finish()


def check_pmtiles_matches(args) -> int:
    """Every tile of an MBTiles file, read by `sqlite3`, is the same bytes in the PMTiles archive at the
    same z/x/y, read by the PyPI reader's `Reader.get`, and the archive addresses no other tile."""
    from pmtiles.reader import MmapSource, Reader, all_tiles

    report = Report("pmtiles-matches", f"{args.mbtiles} vs {args.pmtiles}")
    database = read_sqlite(args.mbtiles)
    if not Path(args.pmtiles).is_file():
        raise Usage(f"{args.pmtiles}: no such file")
    try:
        with open(args.pmtiles, "rb") as handle:
            source = MmapSource(handle)
            reader = Reader(source)
            missing, different, total = [], [], 0
            for z, x, row, data in database.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY 1, 2, 3"):
                y = (1 << z) - 1 - row
                total += 1
                found = reader.get(z, x, y)
                if found is None:
                    missing.append(f"{z}/{x}/{y}")
                elif bytes(found) != bytes(data or b""):
                    different.append(f"{z}/{x}/{y}")
            addressed = sum(1 for _ in all_tiles(source))
    finally:
        database.close()
    report.info(f"{total} tiles in the MBTiles, {addressed} addressed by the PMTiles")
    report.check(total > 0, "the MBTiles holds tiles")
    report.check(not missing, "every MBTiles tile is in the PMTiles", f"{len(missing)} are not, e.g. {missing[:3]}")
    report.check(not different, "every tile has the same bytes in both", f"{len(different)} differ, e.g. {different[:3]}")
    report.check(addressed == total, "the PMTiles addresses no other tile", f"it addresses {addressed}, the MBTiles holds {total}")
    return report.finish()


def pmtiles_contents(args) -> int:
    """The header's zooms, bounds and centre and every addressed tile, as the PyPI reader reads them."""
    from pmtiles.reader import MmapSource, Reader, all_tiles

    if not Path(args.file).is_file():
        raise Usage(f"{args.file}: no such file")
    with open(args.file, "rb") as handle:
        source = MmapSource(handle)
        header = Reader(source).header()
        tiles = sorted(f"{z}/{x}/{y}" for (z, x, y), _ in all_tiles(source))
    degrees = lambda key: header[key] / 1e7
    print(json.dumps({
        "min_zoom": header["min_zoom"], "max_zoom": header["max_zoom"],
        "bounds": [degrees(k) for k in ("min_lon_e7", "min_lat_e7", "max_lon_e7", "max_lat_e7")],
        "center": [degrees("center_lon_e7"), degrees("center_lat_e7")], "center_zoom": header["center_zoom"],
        "tiles": tiles,
    }, sort_keys=True), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        raise Usage(message)


def parse(argv):
    parser = Parser(prog="check_outputs.py", description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=Parser)

    def tile_options(sub):
        sub.add_argument("--expect-layer", default=None)
        sub.add_argument("--expect-name", action="append", default=[], help="repeatable; a feature property value")

    sub = verbs.add_parser("mbtiles", help="GDAL + mapbox-vector-tile over an MBTiles file")
    sub.add_argument("file")
    tile_options(sub)
    sub.add_argument("--min-zoom", type=int, default=None, help="tiles at this zoom must exist")

    sub = verbs.add_parser("render", help="render with MapLibre Native (pymgl) and check pixel colours")
    sub.add_argument("mbtiles")
    sub.add_argument("--lon", type=float, required=True)
    sub.add_argument("--lat", type=float, required=True)
    sub.add_argument("--zoom", type=float, required=True)
    sub.add_argument("--expect-rgb", default=None, help="colour at --lon/--lat: R,G,B or " + "|".join(PALETTE))
    sub.add_argument("--expect", action="append", default=[], metavar="LON,LAT=COLOUR", help="repeatable")
    sub.add_argument("--png", default=None)
    sub.add_argument("--layer", default="countries")
    sub.add_argument("--width", type=int, default=512)
    sub.add_argument("--height", type=int, default=512)
    sub.add_argument("--tolerance", type=int, default=6)

    sub = verbs.add_parser("maplibre-db", help="MapLibre Native offline database: schema and every tile")
    sub.add_argument("file")
    tile_options(sub)

    sub = verbs.add_parser("pmtiles", help="PMTiles v3 through the PyPI pmtiles reader")
    sub.add_argument("file")
    tile_options(sub)
    sub.add_argument("--min-zoom", type=int, default=None, help="tiles at this zoom must exist")

    sub = verbs.add_parser("pmtiles-matches", help="every MBTiles tile has the same bytes at the same z/x/y in a PMTiles archive")
    sub.add_argument("mbtiles")
    sub.add_argument("pmtiles")

    sub = verbs.add_parser("pmtiles-contents", help="print a PMTiles archive's zooms, bounds, centre and tile addresses as JSON")
    sub.add_argument("file")
    return parser.parse_args(argv)


def main(argv) -> int:
    if argv[:1] == ["_render-worker"]:
        return render_worker()
    try:
        args = parse(argv)
        return {"mbtiles": check_mbtiles, "render": check_render, "maplibre-db": check_maplibre_db,
                "pmtiles": check_pmtiles, "pmtiles-matches": check_pmtiles_matches,
                "pmtiles-contents": pmtiles_contents}[args.verb](args)
    except Usage as usage:
        print(f"check_outputs: usage: {usage}", file=sys.stderr)
        print(f"check_outputs {argv[0] if argv else '?'}: USAGE ERROR", flush=True)
        return 2
    except ModuleNotFoundError as missing:
        print(f"check_outputs: {missing}; run `make venv` and use .venv/bin/python", file=sys.stderr)
        print(f"check_outputs {argv[0] if argv else '?'}: USAGE ERROR (missing Python package)", flush=True)
        return 2
    except sqlite3.DatabaseError as error:
        print(f"FAIL: the file opens as SQLite: {error}")
        print(f"check_outputs {argv[0]}: FAIL 1 check (not a SQLite database)", flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
