"""Inputs for ImportGeoJSONStreamTests (stdlib only), and the digest of what an import made of them.

    python3 geojson_inputs.py inputs --out DIR     # DIR/regions.geojson, DIR/places.geojson, DIR/tiles.mbtiles
    python3 geojson_inputs.py digest SOURCE        # SHA-256 of source.json and every database's rows
                                                   # (but a tileset's generator_options, which names folders)

The GeoJSON is written by hand, not by json.dump, so it holds what writers in the wild produce and a
whole-file parser and a streamed one might read differently: members in any order (coordinates before
type, type after features), repeated keys, escapes and surrogate pairs, exponents, -0, extra position
elements, nested properties nobody reads, CRLF and tabs, MultiPolygons with holes and across the
antimeridian, ids in the Feature's own `id`. The same bytes on every run, so a digest recorded from the
whole-file parser (JSONSerialization, before the stream) pins the streamed import's output.
"""
import argparse
import hashlib
import math
import os
import sqlite3
import sys


def ring(cx, cy, r, n, phase=0.0):
    points = []
    for i in range(n):
        a = 2 * math.pi * i / n + phase
        points.append("[%.6f,%.6f]" % (cx + r * math.cos(a), cy + r * 0.8 * math.sin(a)))
    points.append(points[0])
    return "[" + ",".join(points) + "]"


def regions():
    outer = ring(10, 45, 12, 200)
    hole = ring(10, 45, 3, 17, 0.3)
    west = "[[179.5,-10],[180,-10],[180,-20],[179.5,-20],[179.5,-10]]"
    east = "[[-180,-10],[-179.25,-10],[-179.25,-20],[-180,-20],[-180,-10]]"
    features = [
        # Coordinates before type, a hole, the id in the Feature's own member, names with escapes.
        '{"geometry":{"coordinates":[' + outer + "," + hole + '],"type":"Polygon"},"type":"Feature","id":"world/a",'
        '"properties":{"names":{"en":"A\\u00e9\\ud83d\\ude00","de":"\\u00c4 \\"q\\" \\/ \\\\","fr":3,"fr":"Fr\\u00e8re"},'
        '"deep":{"x":[1,{"y":[[[]]]}],"z":"\\ud834\\udd1e"},"name":"ignored because names has en"}}',
        # A child: MultiPolygon, name:xx, parent, a repeated id whose last value counts.
        '{\r\n\t"type" : "Feature" ,\r\n\t"properties" : { "id" : "bad id!" , "id" : "world/a/b" , "parent" : "world/a" ,'
        ' "name:de" : "B-de" , "name:" : "not a language" , "name" : "B" , "population" : 12 },\r\n'
        '\t"geometry" : { "type" : "MultiPolygon" , "coordinates" : [ [ ' + ring(8, 44, 2.5, 40) + " ] , [ "
        + ring(14, 47, 1.25e0, 9, 0.1) + " ] ] , \"bbox\" : [ 0 , 0 , 1 , 1 ] }\r\n}",
        # Across the antimeridian, exponents, -0 and extra position elements.
        '{"type":"Feature","properties":{"id":"world/c","parent":null,"name":"C","name:ja":"\\u30b7"},'
        '"geometry":{"type":"MultiPolygon","coordinates":[[' + west + "],[" + east + ']]}}',
        '{"type":"Feature","properties":{"id":"world/d","name":"D","tags":[{"k":"v"}]},'
        '"geometry":{"type":"Polygon","coordinates":[[[-0,-0,12,"x"],[4.5e1,-0.0],[4.5E1,2.25e+1,null],[-0,22.5],[0,0]]]}}',
    ]
    return '{"features":[' + ",\n".join(features) + '],"name":"fixture","type":"FeatureCollection"}\n'


def places():
    features = []
    for i in range(48):
        lon = -4 + i * 0.55
        lat = 34 + (i * 7) % 22
        props = ['"name":"P%d \\u00fc\\ud83c\\udf0d"' % i]
        if i % 3 == 0:
            props.append('"alternate_names":["Alt%d",%d,"P%d \\u00fc\\ud83c\\udf0d",""]' % (i, i, i))
        if i % 3 == 1:
            props.append('"alternate_names":"X%d, Y%d ,,Z"' % (i, i))
        if i % 4 == 0:
            props.append('"population":%d' % (1000 * (i % 7)))
        if i % 4 == 1:
            props.append('"population":%d.75' % i)
        if i % 4 == 2:
            props.append('"population":null')
        if i % 5 == 0:
            props.append('"geonameid":%d' % (900000 + i))
        if i % 6 == 0:
            props.append('"kind":"city"')
        if i % 7 == 0:
            props.append('"names":{"de":"D%d","it":"I%d"},"name:fr":"F%d"' % (i, i, i))
        if i % 8 == 0:
            props.append('"extra":{"nested":[[1,2],[3,{"deep":true}]]}')
        geometry = '{"coordinates":[%r,%r,100],"type":"Point"}' % (lon, lat)
        features.append('{"type":"Feature","geometry":%s,"properties":{%s}}' % (geometry, ",".join(props)))
    return '{"type":"FeatureCollection","features":[\n' + ",\n".join(features) + "\n]}\n"


def tiles(path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE metadata (name TEXT, value TEXT); INSERT INTO metadata VALUES ('format', 'pbf'), ('name', 'fixture');"
        "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
    )
    rows = []
    for z in range(0, 7):
        for x in range(1 << z):
            for y in range(1 << z):
                rows.append((z, x, y, bytes([z, x % 256, y % 256])))
    db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
    db.commit()
    db.close()


def digest(source):
    h = hashlib.sha256()
    for folder, _, files in sorted(os.walk(source)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, source)
            h.update(("file %s\n" % relative).encode())
            if name.endswith(".db"):
                db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                # generator_options names the folders tippecanoe wrote in, different on each run.
                queries = ["SELECT name, value FROM metadata WHERE name != 'generator_options' ORDER BY name"]
                if "tiles" in tables:
                    queries.append("SELECT zoom_level, tile_column, tile_row, hex(tile_data) FROM tiles ORDER BY 1, 2, 3")
                if "places" in tables:
                    queries.append("SELECT rowid, name, alternate_names, kind, lat, lon, population, geonameid FROM places ORDER BY rowid")
                for query in queries:
                    for row in db.execute(query):
                        h.update((repr(row) + "\n").encode())
                db.close()
            else:
                with open(path, "rb") as handle:
                    h.update(handle.read())
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("inputs")
    make.add_argument("--out", required=True)
    check = sub.add_parser("digest")
    check.add_argument("source")
    args = parser.parse_args()
    if args.command == "inputs":
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "regions.geojson"), "w", encoding="utf-8", newline="") as handle:
            handle.write(regions())
        with open(os.path.join(args.out, "places.geojson"), "w", encoding="utf-8", newline="") as handle:
            handle.write(places())
        tiles(os.path.join(args.out, "tiles.mbtiles"))
    else:
        print(digest(args.source))


if __name__ == "__main__":
    sys.exit(main())
