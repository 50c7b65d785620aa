#!/usr/bin/env bash
# MapStore's rows (issue 18), through nginx on 127.0.0.1 and mappack-storebench:
# - path(of:) during an update: a store installed from an image of a world, then an update to a version
#   of that world in which 10% of the leaf regions changed (hundreds of bundles); a reader calls
#   path(of:) once per millisecond with no write running (the baseline) and while the update runs.
#   Median and p99 of both, and their ratios. Target: median < 5 ms during the update.
# - open of an installed store: MapStore.open of a store of --size GiB on disk (installed once, kept),
#   against opening its state database and reading one row, and open with the image offered, in
#   alternating rounds; with strace, the system calls and files one open makes. Target: <= 20 ms.
# - first start in place (issue 44): MapStore.open of the open row's image used in place
#   (Options.useImageInPlace) against today's copy install of it, alternating rounds on the same
#   filesystem: time and bytes left in the storage, and the floor timed in the same rounds (the
#   manifest read and hashed, which the image id check needs). Targets: <= 1 MiB written, <= 50 ms.
#
#   bash Benchmarks/store.sh [--bin DIR] [--size GIB] [--path-size GIB] [--runs N] [--scale S] [--only IDS] [--out DIR]
#
# --bin        folder with mappack, demo-world and mappack-storebench (default .build/release, built here)
# --size       installed size of the open row's store, GiB of unpacked files (default 1)
# --path-size  installed size of the path row's store (default 0.1)
# --runs       open rounds (default 10; fewer gives a less robust median)
# --scale      demo-world --scale of both worlds instead of fitting the sizes; --only  demo-world --only
#              (tests use both to make tiny worlds; with --only fewer than 100 bundles change)
# --out        working folder (default Output/bench/store); worlds and the open row's store are kept
#              there, so reruns skip making them. Results: a table on stdout and OUT/store.json.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
size=1
path_size=0.1
runs=10
scale=""
only=""
out=$root/Output/bench/store
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --size) size=${2:?--size needs a value}; shift 2 ;;
        --path-size) path_size=${2:?--path-size needs a value}; shift 2 ;;
        --runs) runs=${2:?--runs needs a value}; shift 2 ;;
        --scale) scale=${2:?--scale needs a value}; shift 2 ;;
        --only) only=${2:?--only needs region ids}; shift 2 ;;
        --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "store.sh: unknown argument '$1' (use --bin, --size, --path-size, --runs, --scale, --only, --out)" >&2; exit 2 ;;
    esac
done
for value in "$size" "$path_size" ${scale:+"$scale"}; do
    python3 -c "import sys; s=float(sys.argv[1]); assert 0 < s <= 64" "$value" 2>/dev/null \
        || { echo "store.sh: '$value': expected a number above 0 (at most 64)" >&2; exit 2; }
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "store.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
if [ "$bin" = "$root/.build/release" ]; then
    swift build -c release --static-swift-stdlib --product mappack-storebench >/dev/null
fi
for tool in mappack demo-world mappack-storebench; do
    [ -x "$bin/$tool" ] || { echo "store.sh: $bin/$tool is missing (swift build -c release --static-swift-stdlib --product $tool)" >&2; exit 2; }
done
mkdir -p "$out"
say() { echo "store: $*" >&2; }
export SOURCE_DATE_EPOCH=1790000000
only_args=()
[ -z "$only" ] || only_args=(--only "$only")

# --- worlds --------------------------------------------------------------------------------------

# Installed bytes as a function of demo-world --scale are close to linear; two small worlds fix the
# line once (kept in calibration.json; Benchmarks/scale.sh).
source "$root/Benchmarks/scale.sh"
store_scale() {
    [ -z "$scale" ] || { echo "$scale"; return; }
    [ -s "$out/calibration.json" ] || say "calibrating demo-world --scale against installed bytes (two small worlds)…"
    scale_calibrate "$out/calibration.json" unpackedSize "$bin" "${only_args[@]}" >&2
    scale_for "$out/calibration.json" "$1"
}

# publish_version DIR SCALE VERSION [BASE]: generates and publishes one version of a world into
# DIR/www/VERSION (catalog.json + bundles).
publish_version() {
    local dir=$1 s=$2 version=$3 base=${4:-}
    local extra=()
    [ -z "$base" ] || extra=(--base-version "$base" --change-fraction 0.1)
    "$bin/demo-world" --out "$dir/src-$version" --scale "$s" --map-version "$version" "${extra[@]}" "${only_args[@]}" >/dev/null
    "$bin/mappack" publish "$dir/src-$version" --out "$dir/www/$version" -q >/dev/null
    rm -rf "$dir/src-$version"
}

# build_image DIR VERSION: a folder image of every region of the published VERSION, in DIR/image.
build_image() {
    local dir=$1 version=$2
    local roots
    roots=$(python3 -c 'import json,sys; print(", ".join(r["id"] for r in json.load(open(sys.argv[1]))["regions"] if r["parent"] is None))' "$dir/www/$version/catalog.json")
    printf 'name: bench\ncatalog: %s\nregions:\n  include: [%s]\ntarget:\n  blockSize: 4096\n  capacity: 1024 GiB\noutput:\n  formats: [directory]\n' \
        "$dir/www/$version/catalog.json" "$roots" > "$dir/image.yaml"
    rm -rf "$dir/image" "$dir/image-cache"
    "$bin/mappack" build "$dir/image.yaml" --cache "$dir/image-cache" --out "$dir/image" -q >/dev/null
    rm -rf "$dir/image-cache"
    python3 - "$dir/www/$version/catalog.json" "$dir/image/bench-$version/manifest.json" > "$dir/world.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
print(json.dumps({"bundles": len(c["bundles"]), "regions": len(c["regions"]), "files": len(m["files"]),
                  "bundleBytes": sum(b["size"] for b in c["bundles"].values()), "installedBytes": sum(f["size"] for f in m["files"])}))
PY
}

tag=${scale:+scale-$scale}${only:+-only-${only//[\/,]/_}}
open_dir=$out/open-${tag:-$size}
path_dir=$out/path-${tag:-$path_size}
if [ ! -s "$open_dir/world.json" ]; then
    s=$(store_scale "$size")
    what="about $size GiB installed"; [ -z "$scale" ] || what="--scale given"
    say "making the open row's world (--scale $s, $what) and its image in $open_dir…"
    rm -rf "$open_dir"; mkdir -p "$open_dir"
    publish_version "$open_dir" "$s" 2026.11.0
    build_image "$open_dir" 2026.11.0
    rm -rf "$open_dir/www"           # the open row needs only the image
fi
if [ ! -s "$path_dir/world.json" ]; then
    s=$(store_scale "$path_size")
    say "making the path row's two versions (--scale $s) and the old one's image in $path_dir…"
    rm -rf "$path_dir"; mkdir -p "$path_dir"
    publish_version "$path_dir" "$s" 2026.11.0
    publish_version "$path_dir" "$s" 2026.12.0 2026.11.0
    build_image "$path_dir" 2026.11.0
fi

# --- nginx on 127.0.0.1 --------------------------------------------------------------------------

source "$root/Benchmarks/nginx.sh"
cleanup() {
    nginx_stop
    rm -rf "$path_dir/device"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
nginx_start "$path_dir/www" store
update_url=$nginx_base/2026.12.0/catalog.json
for _ in $(seq 50); do curl -fsS -o /dev/null "$update_url" 2>/dev/null && break; sleep 0.1; done

# --- the rows ------------------------------------------------------------------------------------

say "path(of:) while an update runs…"
"$bin/mappack-storebench" path --image "$path_dir/image/bench-2026.11.0" --storage "$path_dir/device/maps" \
    --cache "$path_dir/device/cache" --update-catalog "$update_url" > "$out/path.json"
say "open of the installed store ($runs rounds)…"
"$bin/mappack-storebench" open --image "$open_dir/image/bench-2026.11.0" --storage "$open_dir/device/maps" \
    --cache "$open_dir/device/cache" --runs "$runs" > "$out/open.json"

say "first start in place against the copy install (3 rounds)…"
"$bin/mappack-storebench" inplace --image "$open_dir/image/bench-2026.11.0" --storage "$open_dir/inplace/maps" \
    --cache "$open_dir/inplace/cache" --runs 3 > "$out/inplace.json"

# What one open does, from the difference between 1 and 3 opens in one process (process start and
# the first open's one-time work cancel out).
rm -f "$out/strace-1.txt" "$out/strace-3.txt"
if command -v strace >/dev/null; then
    for n in 1 3; do
        strace -f -c -o "$out/strace-$n.txt" "$bin/mappack-storebench" open --open-only --runs "$n" \
            --image "$open_dir/image/bench-2026.11.0" --storage "$open_dir/device/maps" --cache "$open_dir/device/cache" \
            || { say "strace of open failed"; rm -f "$out/strace-$n.txt"; }
    done
fi

python3 - "$out" "$open_dir/world.json" "$path_dir/world.json" <<'PY'
import json, os, sys
out = sys.argv[1]
open_world, path_world = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
path_row, open_row = json.load(open(out + "/path.json")), json.load(open(out + "/open.json"))
in_place = json.load(open(out + "/inplace.json"))

def calls(n):
    counts = {}
    for line in open(f"{out}/strace-{n}.txt"):
        parts = line.split()
        if len(parts) >= 5 and parts[-1] != "total" and parts[3].isdigit():
            counts[parts[-1]] = int(parts[3])
    return counts
if os.path.exists(out + "/strace-1.txt") and os.path.exists(out + "/strace-3.txt"):
    one, three = calls(1), calls(3)
    per = {k: (three.get(k, 0) - one.get(k, 0)) / 2 for k in set(one) | set(three)}
    open_row["syscallsPerOpen"] = sum(per.values())
    open_row["filesOpenedPerOpen"] = per.get("openat", 0) + per.get("open", 0)
    open_row["statsPerOpen"] = sum(v for k, v in per.items() if "stat" in k)
    open_row["getdentsPerOpen"] = per.get("getdents64", 0)
open_row["storeFiles"], open_row["storeBytes"] = open_world["files"], open_world["installedBytes"]
path_row["storeFiles"], path_row["storeBytes"] = path_world["files"], path_world["installedBytes"]
json.dump({"path": path_row, "open": open_row, "inPlace": in_place, "openWorld": open_world, "pathWorld": path_world},
          open(out + "/store.json", "w"), indent=2)

def ok(flag): return "PASS" if flag else "MISS"
p, o = path_row, open_row
print(f"path(of:) during an update of {p['changedBundles']} bundles ({p['updateSeconds']:.1f} s, {p['storeFiles']} files installed):")
print(f"  {'':<22} {'calls':>7} {'median ms':>10} {'p99 ms':>9}")
print(f"  {'no write running':<22} {p['baselineCalls']:>7} {p['baselineMedianMs']:>10.4f} {p['baselineP99Ms']:>9.4f}")
print(f"  {'during the update':<22} {p['updateCalls']:>7} {p['updateMedianMs']:>10.4f} {p['updateP99Ms']:>9.4f}  (max {p['updateMaxMs']:.2f} ms)")
print(f"  ratio {p['medianRatio']:.2f}x median, {p['p99Ratio']:.2f}x p99; target median < 5 ms: {ok(p['pass'])}")
gib = o["storeBytes"] / 2**30
print(f"open of an installed store ({gib:.2f} GiB, {o['storeFiles']} files), {o['runs']} alternating rounds:")
print(f"  MapStore.open               median {o['openMedianMs']:9.2f} ms  (min {o['openMinMs']:.2f}, max {o['openMaxMs']:.2f})")
print(f"  open, image offered         median {o['openWithImageMedianMs']:9.2f} ms")
print(f"  baseline: state db, one row median {o['baselineMedianMs']:9.3f} ms")
print(f"  ratio {o['ratio']:.1f}x; target <= 20 ms (both opens): {ok(o['pass'])}")
if "syscallsPerOpen" in o:
    print(f"  per open (strace -c -f): {o['syscallsPerOpen']:.0f} system calls, {o['filesOpenedPerOpen']:.0f} openat, "
          f"{o['statsPerOpen']:.0f} stat calls, {o['getdentsPerOpen']:.0f} getdents64")
i = in_place
print(f"first start of the same image, {i['runs']} alternating rounds (bytes: allocated in the storage folder):")
print(f"  in place                    median {i['inPlaceMedianMs']:9.2f} ms  (max {i['inPlaceMaxMs']:.2f}), {i['inPlaceStorageBytes']:>12,} bytes in the storage")
print(f"  copy install (today)        median {i['copyMedianMs']:9.2f} ms, {i['copyStorageBytes']:>12,} bytes")
print(f"  later start in place        median {i['inPlaceReopenMedianMs']:9.2f} ms")
print(f"  floor: manifest read + SHA-256 median {i['manifestHashMedianMs']:9.2f} ms (in place / floor {i['inPlaceOverHash']:.2f}x)")
print(f"  copy / in place: {i['timeRatio']:.0f}x the time, {i['bytesRatio']:.0f}x the bytes; target <= 1 MiB and <= 50 ms: {ok(i['pass'])}")
PY
