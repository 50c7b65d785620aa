#!/usr/bin/env bash
# mappack import's GeoJSON rows (issue 41 attack 6, issue 45 item 1): peak RSS (/usr/bin/time -v)
# of an import whose --regions is one synthetic many-vertex polygon, at 1x and 4x the vertices, and
# whose --places holds 1x and 4x synthetic points, against a baseline import of a five-vertex polygon
# over the same small tileset, in the same run. Printed as ratios: 4x over 1x, and the RSS above the
# baseline per byte of GeoJSON. A benchmark, not a test: nothing here passes or fails on a number.
#
#   bash Benchmarks/geojson.sh [--bin DIR] [--vertices N] [--places N] [--against OLD_MAPPACK] [--out DIR]
#
# --bin        folder with a mappack binary (default .build/release, built here)
# --vertices   vertices of the 1x polygon (default 1000000; 4x is four times that)
# --places     points of the 1x places file (default 100000)
# --against    an older mappack binary (e.g. the commit before the streamed GeoJSON): the same rows
#              with it, in the same run
# --out        working folder (default Output/bench/geojson); results: a table on stdout and
#              OUT/geojson.json
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
vertices=1000000
places=100000
against=""
out=$root/Output/bench/geojson
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --vertices) vertices=${2:?--vertices needs a count}; shift 2 ;;
        --places) places=${2:?--places needs a count}; shift 2 ;;
        --against) against=${2:?--against needs a mappack binary}; shift 2 ;;
        --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "geojson.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for count in "$vertices" "$places"; do
    [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 100 ] || { echo "geojson.sh: '$count': expected a whole number >= 100" >&2; exit 2; }
done
[ -z "$against" ] || [ -x "$against" ] || { echo "geojson.sh: --against '$against': not an executable mappack binary" >&2; exit 2; }
[ -x "$bin/mappack" ] || swift build -c release --static-swift-stdlib --product mappack
[ -x /usr/bin/time ] || { echo "geojson.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$out"
echo "bench: making the GeoJSON inputs ($vertices and $((4 * vertices)) vertices, $places and $((4 * places)) places)…" >&2

# The inputs: a tileset of zooms 0-6 (every tile, three-byte blobs), a five-vertex polygon, polygons of
# 1x and 4x the vertices (a wavy ellipse over the Alps) and places of 1x and 4x the points inside it.
python3 - "$out" "$vertices" "$places" <<'PY'
import math, os, sqlite3, sys
out, vertices, places = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tiles = os.path.join(out, "tiles.mbtiles")
if not os.path.exists(tiles):
    db = sqlite3.connect(tiles + ".part")
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); INSERT INTO metadata VALUES ('format', 'pbf');"
                     "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
    db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)",
                   ((z, x, y, bytes([z, x % 256, y % 256])) for z in range(7) for x in range(1 << z) for y in range(1 << z)))
    db.commit()
    db.close()
    os.rename(tiles + ".part", tiles)
head = '{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"alps","name":"Alps"},"geometry":{"type":"Polygon","coordinates":[['
def polygon(path, n):
    if os.path.exists(path):
        return
    with open(path + ".part", "w") as f:
        f.write(head)
        for i in range(n):
            a = 2 * math.pi * i / n
            r = 5 + 0.5 * math.sin(40 * a)
            f.write("%s[%.6f,%.6f]" % ("," if i else "", 8 + r * math.cos(a), 47 + 0.7 * r * math.sin(a)))
        f.write(",[13.000000,47.000000]]]}}]}\n")
    os.rename(path + ".part", path)
def points(path, n):
    if os.path.exists(path):
        return
    with open(path + ".part", "w") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        for i in range(n):
            a, r = 2 * math.pi * ((i * 0.618034) % 1), 4 * ((i * 0.414214) % 1)
            f.write('%s{"type":"Feature","geometry":{"type":"Point","coordinates":[%.5f,%.5f]},'
                    '"properties":{"name":"Place %d","population":%d,"alternate_names":["P%d","Q%d"],"geonameid":%d}}\n'
                    % ("," if i else "", 8 + r * math.cos(a), 47 + 0.7 * r * math.sin(a), i, (i * 7919) % 100000, i, i, i))
        f.write("]}\n")
    os.rename(path + ".part", path)
polygon(os.path.join(out, "tiny.geojson"), 4)
polygon(os.path.join(out, "boundaries-1x.geojson"), vertices)
polygon(os.path.join(out, "boundaries-4x.geojson"), 4 * vertices)
points(os.path.join(out, "places-1x.geojson"), places)
points(os.path.join(out, "places-4x.geojson"), 4 * places)
PY

# Peak RSS of one import, in KiB.
peak() { # mappack regions [places]
    local work=$out/work
    rm -rf "$work"
    local rss
    rss=$(/usr/bin/time -v "$1" import -q --tiles "$out/tiles.mbtiles" --regions "$2" ${3:+--places "$3"} --out "$work" 2>&1 >/dev/null \
        | awk -F': ' '/Maximum resident set size/ { print $2 }')
    rm -rf "$work"
    [ -n "$rss" ] || { echo "geojson.sh: the import of $2 ${3:-} failed" >&2; exit 1; }
    echo "$rss"
}

rows=$out/rows.txt
: >"$rows"
for binary in "$bin/mappack" ${against:+"$against"}; do
    label=new
    [ "$binary" = "$bin/mappack" ] || label=against
    echo "bench: peak RSS of $label ($binary)…" >&2
    base=$(peak "$binary" "$out/tiny.geojson")
    b1=$(peak "$binary" "$out/boundaries-1x.geojson")
    b4=$(peak "$binary" "$out/boundaries-4x.geojson")
    p1=$(peak "$binary" "$out/tiny.geojson" "$out/places-1x.geojson")
    p4=$(peak "$binary" "$out/tiny.geojson" "$out/places-4x.geojson")
    echo "$label $binary $base $b1 $b4 $p1 $p4" >>"$rows"
done

python3 - "$out" "$rows" <<'PY'
import json, os, sys
out, rows_file = sys.argv[1], sys.argv[2]
size = lambda name: os.path.getsize(os.path.join(out, name))
rows = []
for line in open(rows_file):
    label, binary, base, b1, b4, p1, p4 = line.split()
    base, b1, b4, p1, p4 = (int(v) * 1024 for v in (base, b1, b4, p1, p4))
    for kind, one, four, f1, f4 in (("boundaries", b1, b4, "boundaries-1x.geojson", "boundaries-4x.geojson"),
                                    ("places", p1, p4, "places-1x.geojson", "places-4x.geojson")):
        rows.append({"row": "import-geojson-" + kind, "binary": label, "baselinePeakRSSMiB": base / 2**20,
                     "peakRSSMiB1x": one / 2**20, "peakRSSMiB4x": four / 2**20, "inputBytes1x": size(f1), "inputBytes4x": size(f4),
                     "ratio4xOver1x": four / one, "ratio1xOverBaseline": one / base, "ratio4xOverBaseline": four / base,
                     "aboveBaselinePerInputByte1x": (one - base) / size(f1), "aboveBaselinePerInputByte4x": (four - base) / size(f4)})
json.dump({"rows": rows}, open(os.path.join(out, "geojson.json"), "w"), indent=1, sort_keys=True)
for r in rows:
    print(f"import --{r['row'].split('-')[-1]} ({r['binary']}), {r['inputBytes1x'] / 2**20:.0f} / {r['inputBytes4x'] / 2**20:.0f} MiB of GeoJSON: "
          f"peak RSS {r['peakRSSMiB1x']:.0f} / {r['peakRSSMiB4x']:.0f} MiB, baseline {r['baselinePeakRSSMiB']:.0f} MiB; "
          f"4x/1x = {r['ratio4xOver1x']:.2f}, over baseline {r['ratio1xOverBaseline']:.2f} / {r['ratio4xOverBaseline']:.2f}; "
          f"above baseline per GeoJSON byte {r['aboveBaselinePerInputByte1x']:.2f} / {r['aboveBaselinePerInputByte4x']:.2f}")
PY
