#!/usr/bin/env bash
# The planet rows of mappack import (issue 45), run by `Benchmarks/import.sh --planet` (see its --help):
#
#   bash Benchmarks/import_planet.sh BIN-FOLDER OUT-FOLDER ZOOM
#
# A synthetic PMTiles of every tile of zooms 0..ZOOM (Benchmarks/planet_tiles.py) with the world's
# boundaries and places (Benchmarks/geojson_world.py), then, one after another, each alone (CI runs
# shards on separate machines, so a shard's wall must not carry the others' load):
#   whole      one unsharded import of the local archive;
#   shard-I    shard I of 4, the archive read by range from nginx on 127.0.0.1 (bytes off its log);
#   shard-4x   shard 4 again, with the 4x boundaries and places (peak RSS against shard 4's: the
#              GeoJSON's share of memory, at a quarter of an unsharded import's time).
# Each under /usr/bin/time -v (wall, user + sys, peak RSS). The shards' merge is checked against the
# unsharded import (diff -r). Results: a table on stdout and OUT-FOLDER/../planet.json.
set -euo pipefail
bin=${1:?import_planet.sh needs the mappack folder}
out=${2:?import_planet.sh needs a working folder}
zoom=${3:?import_planet.sh needs a zoom}
cd "$(dirname "$0")/.."
root=$(pwd)
[[ "$zoom" =~ ^[0-9]+$ ]] && [ "$zoom" -le 14 ] || { echo "import.sh: --planet-zoom '$zoom': expected 0..14" >&2; exit 2; }
py=$root/.venv/bin/python
[ -x "$py" ] || { echo "import.sh: $py is missing: run make venv (Natural Earth and GeoNames come from it)" >&2; exit 2; }
say() { echo "bench: $(date -u +%H:%M:%S) $*" >&2; }
shards=4
mkdir -p "$out/www"
archive=$out/www/planet-z$zoom.pmtiles
if [ ! -s "$archive" ]; then
    say "making the synthetic planet (every tile of zooms 0-$zoom)…"
    python3 "$root/Benchmarks/planet_tiles.py" --max-zoom "$zoom" --out "$archive" >&2
fi
if [ ! -s "$out/regions-4x.geojson" ] || [ ! -s "$out/places-4x.geojson" ]; then
    say "making the world's boundaries and places (Natural Earth, GeoNames)…"
    "$py" "$root/Benchmarks/geojson_world.py" "$out" --max-zoom 0 >&2
fi

# wall, user + sys, peak RSS (KiB) of one run, in FILE.
timed() { # file command...
    local file=$1; shift
    /usr/bin/time -v -o "$file" timeout 10800 "$@" >/dev/null
}
work=$out/work
rm -rf "$work"
mkdir -p "$work"
import=("$bin/mappack" import -q)
say "unsharded import of $(stat -c %s "$archive") bytes…"
timed "$work/whole.time" "${import[@]}" --tiles "$archive" --regions "$out/regions-1x.geojson" --places "$out/places-1x.geojson" \
    --out "$work/whole"

source "$root/Benchmarks/nginx.sh"
trap nginx_stop EXIT
nginx_log=1 nginx_start "$out/www" planet
for index in $(seq $shards); do
    say "shard $index/$shards by range…"
    before=$(wc -l < "$nginx_dir/access.log")
    timed "$work/shard-$index.time" "${import[@]}" --tiles "$nginx_base/$(basename "$archive")" --regions "$out/regions-1x.geojson" \
        --places "$out/places-1x.geojson" --shard "$index/$shards" --out "$work/shard-$index"
    tail -n +"$((before + 1))" "$nginx_dir/access.log" | awk '{ bytes += $3; n += 1 } END { print bytes + 0, n + 0 }' > "$work/shard-$index.bytes"
done
say "shard $shards/$shards by range, 4x GeoJSON…"
timed "$work/shard-4x.time" "${import[@]}" --tiles "$nginx_base/$(basename "$archive")" --regions "$out/regions-4x.geojson" \
    --places "$out/places-4x.geojson" --shard "$shards/$shards" --out "$work/shard-4x"
rm -rf "$work/shard-4x"
nginx_stop
say "merging the shards…"
timed "$work/merge.time" "$bin/mappack" import -q --merge $(seq -f "$work/shard-%g" $shards) --out "$work/merged"
same=true
diff -r "$work/whole" "$work/merged" >/dev/null || same=false
du -sb "$work/whole" | cut -f1 > "$work/whole.bytes"
rm -rf "$work/merged" "$work"/shard-?/bundles

python3 - "$work" "$shards" "$archive" "$same" "$out/regions-1x.geojson" "$out/places-1x.geojson" "$out/regions-4x.geojson" \
    "$out/places-4x.geojson" "$(dirname "$out")/planet.json" <<'PY'
import json, os, re, sys
work, count, archive, same = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "true"
geojson1, geojson4 = sum(os.path.getsize(p) for p in sys.argv[5:7]), sum(os.path.getsize(p) for p in sys.argv[7:9])
def measured(name):
    text = open(f"{work}/{name}.time").read()
    def field(label):
        return re.search(re.escape(label) + r": (.*)", text).group(1).strip()
    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    return {"wallSeconds": wall, "cpuSeconds": float(field("User time (seconds)")) + float(field("System time (seconds)")),
            "userSeconds": float(field("User time (seconds)")), "peakRSSMiB": int(field("Maximum resident set size (kbytes)")) / 1024}
whole, shard4x = measured("whole"), measured("shard-4x")
parts = [measured(f"shard-{i}") for i in range(1, count + 1)]
records = [json.load(open(f"{work}/shard-{i}/shard.json")) for i in range(1, count + 1)]
fetched = [[int(v) for v in open(f"{work}/shard-{i}.bytes").read().split()] for i in range(1, count + 1)]
size = os.path.getsize(archive)
tiles = records[0]["counts"]["tiles"]
result = {
    "archive": os.path.basename(archive), "archiveBytes": size, "tiles": tiles, "geojsonBytes1x": geojson1, "geojsonBytes4x": geojson4,
    "unsharded": whole, "lastShard4x": shard4x, "shards": parts, "merge": measured("merge"), "mergeIdentical": same,
    "shardPlacedTiles": [r["counts"]["placed"] for r in records], "shardExamined": [r["counts"]["examined"] for r in records],
    "shardFetchedBytes": [f[0] for f in fetched], "shardRequests": [f[1] for f in fetched],
    "shardFetchedRatios": [f[0] / size for f in fetched],
    "cpuRatio": sum(p["cpuSeconds"] for p in parts) / whole["cpuSeconds"],
    "slowestWallRatio": max(p["wallSeconds"] for p in parts) / whole["wallSeconds"],
    "rss4xOver1x": shard4x["peakRSSMiB"] / parts[-1]["peakRSSMiB"],
    "tilesPerCPUSecond": tiles / whole["cpuSeconds"],
    "outputBytes": int(open(f"{work}/whole.bytes").read()),
}
json.dump(result, open(sys.argv[9], "w"), indent=1, sort_keys=True)
print(f"planet import, {tiles:,} tiles ({size / 2**20:.0f} MiB PMTiles), GeoJSON {geojson1 / 2**20:.0f} MiB: unsharded wall "
      f"{whole['wallSeconds']:.0f} s, CPU {whole['cpuSeconds']:.0f} s ({result['tilesPerCPUSecond']:,.0f} tiles a CPU-second), peak RSS "
      f"{whole['peakRSSMiB']:.0f} MiB")
print(f"  shard {count}/{count}'s peak RSS with 4x the GeoJSON ({geojson4 / 2**20:.0f} MiB): {shard4x['peakRSSMiB']:.0f} MiB = "
      f"{result['rss4xOver1x']:.2f}x the 1x's {parts[-1]['peakRSSMiB']:.0f} MiB (CPU {shard4x['cpuSeconds']:.0f} s against {parts[-1]['cpuSeconds']:.0f} s)")
print(f"  4 shards by range, each alone: CPU together {result['cpuRatio']:.2f}x the unsharded import ("
      + " + ".join(f"{p['cpuSeconds']:.0f}" for p in parts) + f" s), slowest wall {result['slowestWallRatio']:.2f}x ("
      + " / ".join(f"{p['wallSeconds']:.0f}" for p in parts) + " s), peak RSS " + " / ".join(f"{p['peakRSSMiB']:.0f}" for p in parts) + " MiB")
print("  bytes each shard fetched / the archive: " + " / ".join(f"{r:.3f}" for r in result["shardFetchedRatios"])
      + f" ({sum(result['shardFetchedRatios']):.2f}x together), requests " + " / ".join(str(n) for n in result["shardRequests"])
      + "; tiles placed " + " / ".join(f"{n:,}" for n in result["shardPlacedTiles"]))
print(f"  merge: wall {result['merge']['wallSeconds']:.0f} s; the same bytes as the unsharded import: {'yes' if same else 'NO'}")
PY
[ "$same" = true ] || { echo "import.sh: the planet shards' merge differs from the unsharded import" >&2; exit 1; }
