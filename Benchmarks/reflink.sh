#!/usr/bin/env bash
# Reflink copies (issue 44): a first-start install of a folder image whose copy shares extents
# (FICLONE) on an XFS filesystem made with reflinks (mkfs.xfs -m reflink=1, loop-mounted; root),
# against the same install copying the bytes (MAPPACK_NO_REFLINK=1) on the same filesystem, in
# alternating rounds: median seconds of each, their ratio, and the space each install took.
#
#   bash Benchmarks/reflink.sh [--bin DIR] [--scale S] [--runs N] [--out DIR]
#
# --bin    folder with mappack and demo-world (default .build/release)
# --scale  demo-world --scale of the world (europe/ch and its subtree; default 80, about 240 MiB
#          of files)
# --runs   rounds (default 3)
# --out    working folder (default Output/bench/reflink); the world is kept there. Results: a table
#          on stdout and OUT/reflink.json.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
scale=80
runs=3
out=$root/Output/bench/reflink
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --scale) scale=${2:?--scale needs a value}; shift 2 ;;
        --runs) runs=${2:?--runs needs a value}; shift 2 ;;
        --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "reflink.sh: unknown argument '$1' (use --bin, --scale, --runs, --out)" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "reflink.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
say() { echo "reflink: $*" >&2; }
if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null; then
    say "skipped: needs root and mkfs.xfs (xfsprogs, make deps) for an XFS loop mount"
    exit 0
fi
for tool in mappack demo-world; do
    [ -x "$bin/$tool" ] || { echo "reflink.sh: $bin/$tool is missing (swift build -c release --product $tool)" >&2; exit 2; }
done
mkdir -p "$out"
export SOURCE_DATE_EPOCH=1790000000

world=$out/world-$scale
if [ ! -f "$world/published/catalog.json" ]; then
    say "making the world (demo-world --only europe/ch --scale $scale)…"
    rm -rf "$world"
    "$bin/demo-world" --out "$world/source" --only europe/ch --scale "$scale" >/dev/null
    "$bin/mappack" publish "$world/source" --out "$world/published" >/dev/null
fi
unpacked=$(du -sb "$world/source" | cut -f1)

image=$out/xfs.img
mnt=$(mktemp -d /tmp/mappack-bench-xfs.XXXXXX)
cleanup() { umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; rm -f "$image"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -f "$image"
truncate -s $(( (unpacked * 6 >> 20) + 1024 ))M "$image"
mkfs.xfs -q -m reflink=1 "$image"
mount -o loop "$image" "$mnt"
cat > "$mnt/recipe.yaml" <<YAML
name: reflink
catalog: $world/published/catalog.json
regions:
  include: [europe/ch]
output:
  formats: [directory]
YAML
"$bin/mappack" build "$mnt/recipe.yaml" --out "$mnt/out" --cache "$mnt/cache" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
img=$(ls -d "$mnt"/out/reflink-*/)
files=$(find "$img/store" -type f | wc -l)
bytes=$(du -sb "$img/store" | cut -f1)
say "image: $files files, $((bytes >> 20)) MiB, on XFS (reflink=1) at $mnt"

# One install into a fresh storage folder; prints seconds and KiB of space it took (df).
install() {
    local env=$1
    rm -rf "$mnt/storage" "$mnt/device-cache"; sync
    local before after start end
    before=$(df --output=used -k "$mnt" | tail -1)
    start=$(date +%s.%N)
    env $env "$bin/mappack" store install --image "$img" --storage "$mnt/storage" --cache "$mnt/device-cache" >/dev/null
    end=$(date +%s.%N)
    sync
    after=$(df --output=used -k "$mnt" | tail -1)
    echo "$(python3 -c "print(float('$end') - float('$start'))") $((after - before))"
}
reflink_runs=(); copy_runs=()
for round in $(seq 1 "$runs"); do
    reflink_runs+=("$(install MAPPACK_BENCH_ROW=reflink)")
    copy_runs+=("$(install MAPPACK_NO_REFLINK=1)")
    say "round $round: reflink ${reflink_runs[-1]}, byte copy ${copy_runs[-1]} (seconds, KiB used)"
done
python3 - "$out/reflink.json" "$files" "$bytes" "${reflink_runs[*]}" "${copy_runs[*]}" <<'PY'
import json, statistics, sys
path, files, size, reflink, copy = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split()
def rows(values):
    pairs = list(zip(values[0::2], values[1::2]))
    return statistics.median(float(s) for s, _ in pairs), statistics.median(int(k) for _, k in pairs)
(rs, rk), (cs, ck) = rows(reflink), rows(copy)
result = dict(files=files, bytes=size, reflinkSeconds=rs, copySeconds=cs, reflinkOverCopy=rs / cs, reflinkKiB=rk, copyKiB=ck)
json.dump(result, open(path, "w"), indent=2)
print("%-58s %8.3f s" % ("store install on XFS, reflinks (%d files, %d MiB)" % (files, size >> 20), rs))
print("%-58s %8.3f s" % ("store install on XFS, byte copy (MAPPACK_NO_REFLINK)", cs))
print("%-58s %8.2fx" % ("reflink install / byte-copy install", rs / cs))
print("%-58s %8d MiB / %d MiB" % ("space used by one install, reflink / byte copy", rk >> 10, ck >> 10))
PY
