#!/usr/bin/env bash
# make bench: mappack against the shell pipeline a user would write (Benchmarks/baseline.sh) and
# against what this machine physically allows. See Benchmarks/README.md.
#
#   bash Benchmarks/run.sh [--size GIB] [--runs N] [--against OLD_MAPPACK]
#
# --size  compressed bundles of the benchmark world, in GiB (default 1); the RSS rows also use a
#         world of a quarter of that size.
# --runs  timed runs per command, alternating between commands; medians are reported (default 3).
# --against  an older mappack binary (e.g. a release build of the commit before a change): its
#         build, no-op, verify, install and plan rows run in the same rounds, reported as new/old.
# --build-only  the build, verify and install rows (bench.py) only, not the other scripts.
# --rows A,B    with --build-only: only these timed rows of bench.py (no RSS or plan rows), e.g.
#         coldLarge,coldLargeSync,baselineLarge,limitLarge,limitDurableLarge (issue 43's rows).
#
# Worlds are generated once and kept under Output/bench/world-<size>/ (delete them to regenerate).
# Results: a table on stdout and Output/bench/report.json. A missed target prints MISS but does
# not fail the script; only a broken command does.
set -euo pipefail

size=1
runs=3
against=""
build_only=""
only_rows=""
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size=${2:?--size needs a value}; shift 2 ;;
        --size=*) size=${1#*=}; shift ;;
        --runs) runs=${2:?--runs needs a value}; shift 2 ;;
        --runs=*) runs=${1#*=}; shift ;;
        --against) against=${2:?--against needs a mappack binary}; shift 2 ;;
        --against=*) against=${1#*=}; shift ;;
        --build-only) build_only=1; shift ;;
        --rows) only_rows=${2:?--rows needs row names}; build_only=1; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (use --size GIB, --runs N, --against OLD_MAPPACK, --build-only, --rows A,B)" >&2; exit 2 ;;
    esac
done
python3 -c "import sys; s=float(sys.argv[1]); assert 0 < s <= 64" "$size" 2>/dev/null \
    || { echo "run.sh: --size '$size': expected GiB, a number above 0 (at most 64)" >&2; exit 2; }
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "run.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
[ -z "$against" ] || [ -x "$against" ] || { echo "run.sh: --against '$against': not an executable mappack binary" >&2; exit 2; }
[ "$runs" -ge 3 ] || echo "run.sh: note: fewer than 3 runs; medians are not robust" >&2

cd "$(dirname "$0")/.."
root=$(pwd)
release=$root/.build/release
bench=$root/Output/bench
mkdir -p "$bench"
for tool in mappack demo-world; do
    [ -x "$release/$tool" ] || swift build -c release --static-swift-stdlib --product "$tool"
done
for tool in hyperfine zstd tar curl sha256sum du xargs python3; do
    command -v "$tool" >/dev/null || { echo "run.sh: '$tool' is missing; run 'make deps'" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "run.sh: nginx is missing; run 'make deps'" >&2; exit 2; }

say() { echo "bench: $*" >&2; }

# --- demo worlds --------------------------------------------------------------------------------

# Compressed bundle bytes as a function of demo-world --scale is close to linear (a fixed part plus a
# per-scale part); two small worlds fix the line once, kept in calibration.json (Benchmarks/scale.sh).
source "$root/Benchmarks/scale.sh"
calibrate() {
    [ -s "$bench/calibration.json" ] || say "calibrating demo-world --scale (two small worlds)…"
    scale_calibrate "$bench/calibration.json" size "$release"
}

# world SIZE_GIB [--full | --large]: prints the folder holding the published world (catalog.json, bundles/).
# --large: two countries' subtrees (issue 34's large-bundle world): at --size 0.1, 418 bundles of 56 MiB
# in all (16x fewer than the main world, each 9x larger on average), 30,615 files.
world() {
    local gib=$1 full=${2:-}
    local dir scale only=""
    if [ "$full" = --full ]; then
        dir=$bench/world-full; scale=0.1    # plan reads the catalog only; payload size does not matter
    elif [ "$full" = --large ]; then
        dir=$bench/world-large-$gib; full=""; only="--only europe/de,europe/fr"
        scale=$(python3 -c 'import sys; print("%g" % max(0.5, float(sys.argv[1]) * 80))' "$gib")
    elif [ "$full" = --few-files ]; then
        # Issue 43's own world: 1 GiB in about 53k files (20 KB each on average), from the same
        # regions with fewer, larger routing files (--small-files): at --size 1, 418 bundles,
        # 421 MiB compressed, 1,022 MiB unpacked, 53,355 files.
        dir=$bench/world-fewfiles-$gib; full=""
        only="--only europe/de,europe/fr --small-files $(python3 -c 'import sys; print("%g" % max(0.5, float(sys.argv[1]) * 14))' "$gib")"
        scale=$(python3 -c 'import sys; print("%g" % max(0.5, float(sys.argv[1]) * 95))' "$gib")
    else
        dir=$bench/world-$gib
        scale=$(scale_for "$bench/calibration.json" "$gib")
    fi
    if [ ! -f "$dir/published/catalog.json" ] || [ ! -f "$dir/world.json" ]; then
        say "generating demo world ${full:+(--full) }at --scale $scale into $dir…"
        rm -rf "$dir"; mkdir -p "$dir"
        "$release/demo-world" --out "$dir/source" --scale "$scale" $full $only >/dev/null
        "$release/mappack" publish "$dir/source" --out "$dir/published" >/dev/null
        rm -rf "$dir/source"
        python3 - "$dir/published/catalog.json" "$scale" "$gib" "$full" > "$dir/world.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); b = c["bundles"].values()
print(json.dumps({"scale": float(sys.argv[2]), "requestedGiB": None if sys.argv[4] else float(sys.argv[3]), "full": bool(sys.argv[4]),
                  "bundles": len(c["bundles"]), "regions": len(c["regions"]), "bundleBytes": sum(x["size"] for x in b),
                  "unpackedBytes": sum(x["unpackedSize"] for x in b), "files": sum(x.get("files", 0) for x in b)}))
PY
    fi
    echo "$dir"
}

calibrate
small=$(python3 -c 'import sys; print("%g" % (float(sys.argv[1]) / 4))' "$size")
world_main=$(world "$size")
world_small=$(world "$small")
world_full=$(world 0 --full)
world_large=$(world "$size" --large)
world_few=$(world "$size" --few-files)

# --- nginx on 127.0.0.1 -------------------------------------------------------------------------

source "$root/Benchmarks/nginx.sh"
trap nginx_stop EXIT
trap 'exit 130' INT TERM
nginx_start "$bench" bench
port=$nginx_port
say "nginx serving $bench on 127.0.0.1:$port"

# --- a fresh, journaled ext4 for the timed work ------------------------------------------------

# Every row creates and deletes tens of thousands of files. On an ext4 without a journal (this
# machine's root filesystem) the kernel then scans past recently deleted inodes on every new file
# (`recently_deleted` in ialloc.c), so a row's time depends on what the rows before it deleted:
# the same `zstd | tar` took 2.5 s, then 5.9 s, then 9.6 s in three rounds (perf: 60 % of it in
# that scan). A journaled ext4 (the default of mkfs.ext4, and of devices and CI runners) does not
# do that scan, so the rows run on one, made here in a sparse file and loop-mounted (needs root);
# otherwise they run in Output/bench/work and the report says so.
work=$bench/work
workfs="host filesystem ($(stat -f -c %T "$bench"))"
mnt=""
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null && command -v mount >/dev/null; then
    bytes=$(python3 - "$world_main/world.json" "$world_small/world.json" "$world_large/world.json" "$world_few/world.json" <<'PY'
import json, sys
need = 1 << 30
for path, copies in ((sys.argv[1], 3), (sys.argv[2], 1), (sys.argv[3], 3), (sys.argv[4], 3)):
    w = json.load(open(path))
    on_disk = w["unpackedBytes"] + 2 * w["files"] * 4096       # files rounded up, plus about as many folders
    need += copies * on_disk + (copies + 1) * (w["bundleBytes"] + w["bundles"] * 4096)
print(int(need * 1.5))
PY
)
    image=$bench/scratch-ext4.img
    mnt=$(mktemp -d /tmp/mappack-bench-fs.XXXXXX)
    rm -f "$image"
    if truncate -s "$bytes" "$image" && mkfs.ext4 -q -F -i 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$image" \
        && mount -o loop "$image" "$mnt"; then
        work=$mnt/work
        workfs="fresh ext4 with journal, loop-mounted ($((bytes >> 30)) GiB sparse file)"
    else
        say "could not make the scratch ext4; running on the host filesystem"
        rmdir "$mnt" 2>/dev/null || true; mnt=""; rm -f "$image"
    fi
fi
unmount_work() {
    if [ -n "$mnt" ]; then umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; rm -f "$bench/scratch-ext4.img"; fi
}
trap 'nginx_stop; unmount_work' EXIT
say "timed work on: $workfs"

python3 "$root/Benchmarks/bench.py" --root "$root" --bench "$bench" --port "$port" --runs "$runs" \
    --size "$size" --small-size "$small" --world "$world_main" --small-world "$world_small" --full-world "$world_full" --large-world "$world_large" --few-files-world "$world_few" \
    --work "$work" --work-fs "$workfs" ${only_rows:+--rows "$only_rows"} ${against:+--against "$(cd "$(dirname "$against")" && pwd)/$(basename "$against")"}
[ -z "$build_only" ] || exit 0

# Chunked updates (issue 21): their own small worlds and nginx, rows side by side with whole updates.
bash "$root/Benchmarks/chunked.sh" --bin "$release" || say "chunked update rows failed"

# MapStore (issue 18): path(of:) during an update and open of an installed 1 GiB store, own worlds and nginx.
bash "$root/Benchmarks/store.sh" --bin "$release" || say "store rows failed"

# Reflink copies (issue 44): a store install on XFS sharing extents against the byte copy on the same filesystem.
bash "$root/Benchmarks/reflink.sh" --bin "$release" || say "reflink rows failed"

# mappack import (issue 30): the real Europe tileset against tippecanoe's own run, a 2 GiB synthetic one
# against one read of its tiles; peak RSS of both.
bash "$root/Benchmarks/import.sh" --bin "$release" || say "import rows failed"

# mappack import's GeoJSON (issue 41 attack 6, issue 45 item 1): peak RSS with boundaries and places
# of 1x and 4x the size against a tiny import; with --against, the older binary's too.
bash "$root/Benchmarks/geojson.sh" --bin "$release" ${against:+--against "$against"} || say "GeoJSON rows failed"

# Update checks and incremental publish (issue 33): bytes on the wire per check against the plain
# catalog, and publish --previous against a full publish; own worlds and nginx.
bash "$root/Benchmarks/updates.sh" --bin "$release" || say "update rows failed"
