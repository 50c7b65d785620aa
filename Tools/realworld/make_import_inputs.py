#!/usr/bin/env python3
"""Inputs for `mappack import`, the way a map team has them, and an outside check of its output.

    .venv/bin/python Tools/realworld/make_import_inputs.py inputs --out DIR [--countries CH,LI,AT] [--max-zoom 8]
    .venv/bin/python Tools/realworld/make_import_inputs.py check --inputs DIR --source SOURCE_DIR

`inputs` writes, from the same Natural Earth and GeoNames wheels as make_real_world.py (its readers
are reused): `tiles.mbtiles` (one tippecanoe run over the countries, zooms 0..max), `regions.geojson`
(a FeatureCollection: one Polygon/MultiPolygon per country with `id` `<continent>/<iso>`,
`parent` `<continent>`, `names`; one per continent, the union of its countries, without parent) and
`places.geojson` (Point features with `name`, `population`, `alternate_names`, `geonameid`,
`kind` city). Without --countries: every country of --continent.

`check` reads a source folder `mappack import` wrote and compares it with shapely's answer, computed
here in Web-Mercator space: which input tiles touch a region polygon, and where each tile went.
It prints one JSON object: counts, tiles missing or extra, tiles stored twice or with other bytes,
a tile inside only Switzerland and where it went, a tile on the CH/LI border and where it went.
Overview bundles (kind `overview`) are left out of that cover and checked apart: each must hold
exactly the input tiles of zooms 0..--overview-maxzoom that touch the polygon of the region listing
it, with their bytes (`overviews` in the report).
Exit 0 when the cover and the overviews match, 1 when they do not, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import shutil
import math
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_real_world as world  # noqa: E402


def project(lon, lat):
    """Longitude, latitude -> Web-Mercator world space (0..1, y down), as mappack import computes it."""
    lat = max(min(lat, 85.05112877980659), -85.05112877980659)
    phi = math.radians(lat)
    y = (1 - math.log(math.tan(phi) + 1 / math.cos(phi)) / math.pi) / 2
    return ((lon + 180.0) / 360.0, min(max(y, 0.0), 1.0))


def projected(geometry):
    import numpy
    import shapely
    from shapely.geometry import shape

    return shapely.transform(shape(geometry), lambda points: numpy.array([project(x, y) for x, y in points]).reshape(-1, 2))


def tile_box(z, x, tms_row):
    import shapely

    n = float(1 << z)
    y = (1 << z) - 1 - tms_row
    return shapely.box(x / n, y / n, (x + 1) / n, (y + 1) / n)


def inputs(args):
    from shapely.geometry import mapping, shape
    from shapely.ops import unary_union

    out = Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    chosen = world.select(world.read_countries(), args.codes, args.continent)
    cities = world.read_cities(args.min_population)
    countries, features, places = [], [], []
    by_continent = {}
    for record, geometry in chosen:
        code = world.country_code(record)
        continent = world.slug(str(record["CONTINENT"]))
        region_id = f"{continent}/{(code or str(record['ADM0_A3'])).lower()}"
        countries.append({"record": record, "code": code, "geometry": geometry})
        features.append({"type": "Feature", "properties": {"id": region_id, "parent": continent, "names": world.country_names(record)},
                         "geometry": geometry})
        by_continent.setdefault(continent, (str(record["CONTINENT"]), []))[1].append(shape(geometry))
        for city in cities.values():
            if city["countrycode"] != code:
                continue
            alternates = sorted({a for a in city.get("alternatenames") or [] if a and a != city["name"]})
            places.append({"type": "Feature", "geometry": {"type": "Point", "coordinates": [float(city["longitude"]), float(city["latitude"])]},
                           "properties": {"name": city["name"], "population": int(city.get("population") or 0),
                                          "alternate_names": alternates, "geonameid": int(city["geonameid"]), "kind": "city"}})
    for continent, (name, shapes) in sorted(by_continent.items()):
        features.append({"type": "Feature", "properties": {"id": continent, "name": name}, "geometry": mapping(unary_union(shapes))})
    places.sort(key=lambda f: f["properties"]["geonameid"])
    with open(out / "regions.geojson", "w", encoding="utf-8") as handle:
        json.dump({"type": "FeatureCollection", "features": features}, handle, ensure_ascii=False)
    with open(out / "places.geojson", "w", encoding="utf-8") as handle:
        json.dump({"type": "FeatureCollection", "features": places}, handle, ensure_ascii=False)
    with tempfile.TemporaryDirectory(prefix="import-inputs.") as scratch:
        geojsonl = Path(scratch) / "countries.geojsonl"
        world.write_features(countries, geojsonl)
        world.run_tippecanoe(geojsonl, out / "tiles.mbtiles", args.max_zoom)
        if args.features_out:
            shutil.copyfile(geojsonl, args.features_out)
    world.log(f"make_import_inputs: {len(countries)} countries, {len(places)} places, zooms 0-{args.max_zoom} -> {out}")
    return 0


def check(args):
    import numpy
    import shapely

    folder = Path(args.inputs)
    source = Path(args.source)
    regions = json.loads((folder / "regions.geojson").read_text(encoding="utf-8"))["features"]
    shapes = [projected(f["geometry"]) for f in regions]
    ids = [f["properties"]["id"] for f in regions]
    tiles = sqlite3.connect(f"file:{folder / 'tiles.mbtiles'}?mode=ro", uri=True)
    rows = tiles.execute("SELECT zoom_level, tile_column, tile_row FROM tiles ORDER BY 1, 2, 3").fetchall()
    boxes = [tile_box(*row) for row in rows]
    tree = shapely.STRtree(shapes)
    pairs = tree.query(numpy.array(boxes), predicate="intersects")
    touching = {}
    for tile_index, shape_index in zip(pairs[0].tolist(), pairs[1].tolist()):
        touching.setdefault(rows[tile_index], set()).add(ids[shape_index])

    document = json.loads((source / "source.json").read_text(encoding="utf-8"))
    listed = {}
    for region in document["regions"]:
        for bundle in region["bundles"]:
            listed.setdefault(bundle, []).append(region["id"])
    def kind(bundle):
        return document["bundles"][bundle].get("kind")

    where, twice, differ = {}, [], 0
    for path in sorted((source / "bundles").glob("*/**/tiles.db")):
        bundle = path.relative_to(source / "bundles").parts[0]
        if kind(bundle) == "overview":
            continue
        database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        database.execute("ATTACH DATABASE ? AS src", (f"file:{folder / 'tiles.mbtiles'}?mode=ro",))
        for z, x, y, same in database.execute(
                "SELECT t.zoom_level, t.tile_column, t.tile_row, t.tile_data = s.tile_data FROM tiles t LEFT JOIN src.tiles s "
                "USING (zoom_level, tile_column, tile_row)"):
            if (z, x, y) in where:
                twice.append([z, x, y])
            where[(z, x, y)] = bundle
            differ += 0 if same else 1
        database.close()

    missing = sorted(set(touching) - set(where))
    extra = sorted(set(where) - set(touching))
    report = {
        "inputTiles": len(rows), "touching": len(touching), "placedTiles": len(where), "missing": [list(t) for t in missing[:20]],
        "extra": [list(t) for t in extra[:20]], "storedTwice": twice[:20], "bytesDiffer": differ,
    }
    by_id = dict(zip(ids, shapes))
    overviews = {}
    for bundle in sorted(b for b in document["bundles"] if kind(b) == "overview"):
        owners = listed.get(bundle, [])
        files = sorted((source / "bundles" / bundle).glob("**/tiles.db"))
        entry = {"listedBy": owners, "files": [str(f.relative_to(source / "bundles" / bundle)) for f in files]}
        if len(owners) == 1 and len(files) == 1:
            expected = {row for row in rows if row[0] <= args.overview_maxzoom and owners[0] in touching.get(row, set())}
            database = sqlite3.connect(f"file:{files[0]}?mode=ro", uri=True)
            database.execute("ATTACH DATABASE ? AS src", (f"file:{folder / 'tiles.mbtiles'}?mode=ro",))
            held, other = set(), 0
            for z, x, y, same in database.execute(
                    "SELECT t.zoom_level, t.tile_column, t.tile_row, t.tile_data = s.tile_data FROM tiles t LEFT JOIN src.tiles s "
                    "USING (zoom_level, tile_column, tile_row)"):
                held.add((z, x, y))
                other += 0 if same else 1
            database.close()
            entry.update({"tiles": len(held), "expected": len(expected), "missing": [list(t) for t in sorted(expected - held)[:20]],
                          "extra": [list(t) for t in sorted(held - expected)[:20]], "bytesDiffer": other,
                          "zooms": sorted({t[0] for t in held})})
        overviews[bundle] = entry
    report["overviews"] = overviews
    overviews_match = all(not e.get("missing", [0]) and not e.get("extra", [0]) and e.get("bytesDiffer", 1) == 0 for e in overviews.values())
    leaves = {i for i in ids if not any(f["properties"].get("parent") == i for f in regions)}
    top = max(row[0] for row in rows)
    if "europe/ch" in by_id:
        inside = [row for row in rows if row[0] == top and by_id["europe/ch"].contains(tile_box(*row))
                  and touching.get(row, set()) & leaves == {"europe/ch"}]
        if inside:
            tile = inside[len(inside) // 2]
            report["insideOnly"] = {"region": "europe/ch", "tile": list(tile), "bundle": where.get(tile), "listedBy": listed.get(where.get(tile), [])}
    if "europe/ch" in by_id and "europe/li" in by_id:
        border = [row for row in rows if row[0] == top and touching.get(row, set()) & leaves == {"europe/ch", "europe/li"}]
        if border:
            tile = border[0]
            holders = [b for t, b in where.items() if t == tile]
            report["border"] = {"regions": ["europe/ch", "europe/li"], "tile": list(tile), "bundles": holders,
                                "kinds": [document["bundles"][b].get("kind") for b in holders],
                                "listedBy": sorted(listed.get(holders[0], [])) if holders else []}
    print(json.dumps(report, sort_keys=True))
    return 0 if not missing and not extra and not twice and differ == 0 and overviews_match else 1


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("inputs", help="write tiles.mbtiles, regions.geojson and places.geojson")
    made.add_argument("--out", required=True)
    made.add_argument("--countries", default="CH,LI,AT")
    made.add_argument("--continent", default="Europe")
    made.add_argument("--max-zoom", type=int, default=8)
    made.add_argument("--min-population", type=int, default=5000, choices=(500, 1000, 5000, 15000))
    made.add_argument("--features-out", help="also keep the countries as the GeoJSON lines tippecanoe read (for the benchmark)")
    checked = commands.add_parser("check", help="compare an imported source folder with shapely's cover")
    checked.add_argument("--inputs", required=True)
    checked.add_argument("--source", required=True)
    checked.add_argument("--overview-maxzoom", type=int, default=5, help="the import's --overview-maxzoom (default 5, its default)")
    args = parser.parse_args(argv)
    if args.command == "inputs":
        args.codes = [c.strip().upper() for c in args.countries.split(",") if c.strip()]
        return inputs(args)
    return check(args)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except world.Failure as failure:
        world.log(f"make_import_inputs: {failure}")
        sys.exit(1)
