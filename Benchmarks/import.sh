#!/usr/bin/env bash
# mappack import's rows (issue 30), real and synthetic:
# - the real Europe tileset: Natural Earth countries cut by tippecanoe (Tools/realworld/
#   make_import_inputs.py), imported with the countries' polygons and GeoNames places; the
#   baseline is tippecanoe's own run over the same countries (the step a map team already pays);
# - a synthetic tileset of --big-gib GiB (incompressible tiles over Europe's box, zooms 0..14, from
#   a fixed seed), imported with the same polygons; the baseline reads every tile once with sqlite3
#   (tippecanoe cannot make it, and a read is the least any import must do).
# Each row: medians of --runs timed runs (hyperfine), the ratio import / baseline, and the peak RSS
# of one import (/usr/bin/time -v): memory must not grow with the tileset. Then --shard 3 of the
# real import against one unsharded run (one round): CPU of the shards together and the slowest
# shard's wall, as ratios, and the tiles each placed (OUT/import.json's "shards").
#
#   bash Benchmarks/import.sh [--bin DIR] [--runs N] [--countries CODES] [--max-zoom Z] [--big-gib G] [--out DIR]
#   bash Benchmarks/import.sh --planet [--planet-zoom Z] [--bin DIR] [--out DIR]
#
# --bin        folder with a mappack binary (default .build/release, built here)
# --countries  ISO codes of the real world (default: every country of Europe); --max-zoom (default 8)
# --big-gib    size of the synthetic tileset's tiles in GiB (default 2; tests use a small one)
# --out        working folder (default Output/bench/import); inputs are kept there, so reruns skip
#              making them. Results: a table on stdout and OUT/import.json.
# --planet     instead of the rows above, the planet rows (issue 45; not in `make bench`: 20-30 min
#              on a loaded 2-core machine, 6 GB of disk): a synthetic PMTiles of every tile of zooms
#              0..--planet-zoom (default 12: 22,369,621 tiles, 1.5 GB; Benchmarks/planet_tiles.py) with
#              the world's boundaries and places (Natural Earth 10m countries and continents, GeoNames
#              cities >= 1,000: Benchmarks/geojson_world.py, 1x and 4x). One unsharded import of the file
#              (wall, CPU, peak RSS), 4 shards one after another, each alone, reading the archive by
#              range from nginx (bytes off its log), their merge checked against the unsharded import
#              (diff -r), and shard 4 again with the 4x GeoJSON (peak RSS). Results: a table on
#              stdout and OUT/planet.json.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
runs=3
countries=""
max_zoom=8
big_gib=2
out=$root/Output/bench/import
planet=0
planet_zoom=12
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --runs) runs=${2:?--runs needs a value}; shift 2 ;;
        --countries) countries=${2?--countries needs ISO codes}; shift 2 ;;
        --max-zoom) max_zoom=${2:?--max-zoom needs a zoom}; shift 2 ;;
        --big-gib) big_gib=${2:?--big-gib needs a size}; shift 2 ;;
        --planet) planet=1; shift ;;
        --planet-zoom) planet_zoom=${2:?--planet-zoom needs a zoom}; shift 2 ;;
        --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "import.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "import.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
python3 -c "import sys; assert 0 < float(sys.argv[1]) <= 64" "$big_gib" 2>/dev/null \
    || { echo "import.sh: --big-gib '$big_gib': expected GiB above 0 (at most 64)" >&2; exit 2; }
[ -x "$bin/mappack" ] || swift build -c release --static-swift-stdlib --product mappack
[ -x "$root/.venv/bin/python" ] || make -s venv
py=$root/.venv/bin/python
tippecanoe=$root/.venv/bin/tippecanoe
for tool in hyperfine sqlite3; do command -v "$tool" >/dev/null || { echo "import.sh: '$tool' is missing; run 'make deps'" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "import.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
say() { echo "bench: $*" >&2; }
mkdir -p "$out"
[ "$planet" = 1 ] && exec bash "$root/Benchmarks/import_planet.sh" "$bin" "$out/planet" "$planet_zoom"

inputs=$out/inputs-$(echo "${countries:-europe}" | tr ',A-Z' '-a-z')-z$max_zoom
if [ ! -s "$inputs/tiles.mbtiles" ] || [ ! -s "$inputs/countries.geojsonl" ]; then
    say "making the real inputs (${countries:-Europe}, zooms 0-$max_zoom)…"
    "$py" "$root/Tools/realworld/make_import_inputs.py" inputs --out "$inputs" --countries "$countries" --max-zoom "$max_zoom" \
        --features-out "$inputs/countries.geojsonl" >&2
fi
big=$out/synthetic-${big_gib}g.mbtiles
if [ ! -s "$big" ]; then
    say "making the synthetic tileset ($big_gib GiB)…"
    python3 "$root/Benchmarks/import_rows.py" synthetic --regions "$inputs/regions.geojson" \
        --bytes "$(python3 -c "import sys; print(int(float(sys.argv[1]) * 2**30))" "$big_gib")" --out "$big" >&2
fi

# Peak RSS of one run of a command, in KiB.
peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ { print $2 }'; }

row() { # name baseline-command import-command import-out input-bytes
    local name=$1 baseline=$2 import=$3 work=$4 bytes=$5
    hyperfine --style none --runs "$runs" --prepare "rm -rf '$work'" --export-json "$out/$name.hyperfine.json" "$baseline" "$import" >&2
    rm -rf "$work"
    local rss base_rss
    rss=$(peak bash -c "$import")
    rm -rf "$work"
    base_rss=$(peak bash -c "$baseline")
    python3 "$root/Benchmarks/import_rows.py" row --name "$name" --timings "$out/$name.hyperfine.json" --rss-kib "$rss" \
        --baseline-rss-kib "$base_rss" --input-bytes "$bytes" --out "$out/$name.json" >/dev/null
}

real_bytes=$(stat -c %s "$inputs/tiles.mbtiles")
row import-real \
    "'$tippecanoe' -o '$out/tippecanoe.mbtiles' --force --quiet -l countries -Z0 -z$max_zoom --detect-shared-borders --no-tile-size-limit --name countries '$inputs/countries.geojsonl'" \
    "'$bin/mappack' import -q --tiles '$inputs/tiles.mbtiles' --regions '$inputs/regions.geojson' --places '$inputs/places.geojson' --out '$out/work-real'" \
    "$out/work-real" "$real_bytes"
big_bytes=$(stat -c %s "$big")
row import-synthetic \
    "sqlite3 -readonly '$big' 'SELECT sum(length(tile_data)) FROM tiles'" \
    "'$bin/mappack' import -q --tiles '$big' --regions '$inputs/regions.geojson' --out '$out/work-big'" \
    "$out/work-big" "$big_bytes"

# --shard 4 against one unsharded import of the real inputs, in the same round: user+sys CPU of
# the four shards together and wall time of the slowest, each over the unsharded run's (the shards
# run one after another here, as N machines would run them side by side). Twice: the MBTiles read
# from disk, and the same tiles as PMTiles (the `pmtiles` converter's) where the unsharded import
# reads the file and each shard reads the archive by range from nginx on 127.0.0.1 (its bytes off
# nginx's access log, `$body_bytes_sent`, over the archive's size).
shards=4
timed() { # out-file command...: wall, user, sys seconds
    local file=$1; shift
    /usr/bin/time -f "%e %U %S" -o "$file" timeout 3600 "$@" >/dev/null
}
real_import=("$bin/mappack" import -q --regions "$inputs/regions.geojson" --places "$inputs/places.geojson")
rm -rf "$out/work-shards"
mkdir -p "$out/work-shards"
timed "$out/work-shards/whole.time" "${real_import[@]}" --tiles "$inputs/tiles.mbtiles" --out "$out/work-shards/whole"
for index in $(seq $shards); do
    timed "$out/work-shards/shard-$index.time" "${real_import[@]}" --tiles "$inputs/tiles.mbtiles" --shard "$index/$shards" \
        --out "$out/work-shards/shard-$index"
done

archive=$inputs/www/tiles.pmtiles
if [ ! -s "$archive" ]; then
    mkdir -p "$inputs/www"
    "$root/.venv/bin/pmtiles-convert" "$inputs/tiles.mbtiles" "$archive" >&2
fi
source "$root/Benchmarks/nginx.sh"
trap nginx_stop EXIT
nginx_log=1 nginx_start "$inputs/www" import
timed "$out/work-shards/pm-whole.time" "${real_import[@]}" --tiles "$archive" --out "$out/work-shards/pm-whole"
for index in $(seq $shards); do
    before=$(wc -l < "$nginx_dir/access.log")
    timed "$out/work-shards/pm-shard-$index.time" "${real_import[@]}" --tiles "$nginx_base/tiles.pmtiles" --shard "$index/$shards" \
        --out "$out/work-shards/pm-shard-$index"
    tail -n +"$((before + 1))" "$nginx_dir/access.log" | awk '{ bytes += $3; n += 1 } END { print bytes + 0, n + 0 }' \
        > "$out/work-shards/pm-shard-$index.bytes"
done
"$bin/mappack" import -q --merge $(seq -f "$out/work-shards/pm-shard-%g" $shards) --out "$out/work-shards/pm-merged" >/dev/null
diff -r "$out/work-shards/pm-whole" "$out/work-shards/pm-merged" >/dev/null || { echo "import.sh: merged PMTiles shards differ from the unsharded import" >&2; exit 1; }
nginx_stop

python3 - "$out" "$shards" "$(stat -c %s "$archive")" <<'PY'
import json, sys
out, count, archive = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [json.load(open(f"{out}/{name}.json")) for name in ("import-real", "import-synthetic")]
def seconds(name):
    wall, user, system = (float(v) for v in open(f"{out}/work-shards/{name}.time").read().split()[-3:])
    return wall, user + system
def split(prefix):
    whole = seconds(prefix + "whole")
    parts = [seconds(f"{prefix}shard-{i}") for i in range(1, count + 1)]
    placed = [json.load(open(f"{out}/work-shards/{prefix}shard-{i}/shard.json"))["counts"]["placed"] for i in range(1, count + 1)]
    return {"shards": count, "unshardedWallSeconds": whole[0], "unshardedCPUSeconds": whole[1],
            "shardWallSeconds": [p[0] for p in parts], "shardCPUSeconds": [p[1] for p in parts], "shardPlacedTiles": placed,
            "cpuRatio": sum(p[1] for p in parts) / whole[1], "slowestWallRatio": max(p[0] for p in parts) / whole[0]}
shards = split("")
ranged = split("pm-")
fetched = [[int(v) for v in open(f"{out}/work-shards/pm-shard-{i}.bytes").read().split()] for i in range(1, count + 1)]
ranged.update({"archiveBytes": archive, "shardFetchedBytes": [f[0] for f in fetched], "shardRequests": [f[1] for f in fetched],
               "shardFetchedRatios": [f[0] / archive for f in fetched]})
json.dump({"rows": rows, "shards": shards, "rangedShards": ranged}, open(f"{out}/import.json", "w"), indent=1, sort_keys=True)
labels = {"import-real": "import, real tileset / tippecanoe over the same countries",
          "import-synthetic": "import, synthetic tileset / one sqlite3 read of every tile"}
for r in rows:
    print(f"{labels[r['row']]} ({r['inputBytes'] / 2**20:.0f} MiB in): median {r['importMedianSeconds']:.2f} s vs "
          f"{r['baselineMedianSeconds']:.2f} s = {r['ratio']:.2f}x; peak RSS {r['importPeakRSSMiB']:.1f} MiB "
          f"(baseline {r['baselinePeakRSSMiB']:.1f} MiB)")
for name, row in (("MBTiles", shards), ("PMTiles by range", ranged)):
    print(f"import --shard {count} / unsharded, real tileset, {name}: CPU of the {count} shards {row['cpuRatio']:.2f}x, slowest shard's wall "
          f"{row['slowestWallRatio']:.2f}x; tiles placed {' / '.join(str(n) for n in row['shardPlacedTiles'])}")
print(f"import --shard {count}, PMTiles by range: bytes each shard fetched / the archive's {archive}: "
      + " / ".join(f"{r:.3f}" for r in ranged["shardFetchedRatios"])
      + f" ({sum(ranged['shardFetchedRatios']):.2f}x together), requests " + " / ".join(str(n) for n in ranged["shardRequests"]))
PY
