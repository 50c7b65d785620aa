#!/usr/bin/env bash
# Updates that cost nothing when nothing changed (issue 33), through nginx on 127.0.0.1:
# - bytes on the wire per update check (`mappack store update --check --trust`, i.e. MapStore's check,
#   from a store installed from a signed image of the old version), nginx's $bytes_sent with headers:
#   a check with nothing new, and a check that finds a new version, each against the plain
#   catalog.json's bytes fetched in the same round (what every check cost before issue 33).
# - publish of the new version, in which about 7% of the bundles changed, with --previous (the old
#   version's published folder) against a full publish, alternating in each round, medians; every
#   byte of both outputs compared. Target: <= 0.15x.
#
#   bash Benchmarks/updates.sh [--bin DIR] [--scale S] [--only IDS] [--change F] [--runs N] [--out DIR]
#
# --bin     folder with mappack and demo-world (default .build/release)
# --scale   demo-world --scale of both versions (default 0.3: Europe, about 1,400 bundles, 150 MB)
# --only    demo-world --only (default: all of Europe, whose catalog is the size a device meets)
# --change  demo-world --change-fraction of the new version (default 0.1: about 7% of the bundles)
# --runs    rounds (default 3); --out  work folder (default Output/bench/updates), report OUT.json
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
scale=0.3
only=""
change=0.1
runs=3
out=$root/Output/bench/updates
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --scale) scale=${2:?--scale needs a value}; shift 2 ;;
        --only) only=${2:?--only needs region ids}; shift 2 ;;
        --change) change=${2:?--change needs a fraction}; shift 2 ;;
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "updates.sh: unknown argument '$1' (use --bin DIR, --scale S, --only IDS, --change F, --runs N, --out DIR)" >&2; exit 2 ;;
    esac
done
python3 -c "import sys; s=float(sys.argv[1]); assert 0 < s <= 64" "$scale" 2>/dev/null \
    || { echo "updates.sh: --scale '$scale': expected a number above 0 (at most 64)" >&2; exit 2; }
python3 -c "import sys; f=float(sys.argv[1]); assert 0 < f <= 1" "$change" 2>/dev/null \
    || { echo "updates.sh: --change '$change': expected a fraction above 0, at most 1" >&2; exit 2; }
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "updates.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
for tool in mappack demo-world; do [ -x "$bin/$tool" ] || { echo "updates.sh: $bin/$tool is missing (swift build -c release)" >&2; exit 2; }; done
say() { echo "updates: $*" >&2; }
rm -rf "$out"; mkdir -p "$out/www"
out=$(cd "$out" && pwd)
only_args=()
[ -z "$only" ] || only_args=(--only "$only")
mp() { "$bin/mappack" "$@"; }

# --- two versions of a world, the old one published and signed, an image of one small region ----

say "making two versions of the world (--scale $scale${only:+, --only $only}, --change-fraction $change)…"
"$bin/demo-world" --out "$out/src-v1" --scale "$scale" "${only_args[@]}" >/dev/null
"$bin/demo-world" --out "$out/src-v2" --scale "$scale" --map-version 2026.12.0 --base-version 2026.11.0 \
    --change-fraction "$change" "${only_args[@]}" >/dev/null
mp keygen --out "$out/release" -q >/dev/null
SOURCE_DATE_EPOCH=1790000000 mp publish "$out/src-v1" --out "$out/v1" --sign "$out/release.key" -q >/dev/null
python3 - "$out/src-v1" "$out/src-v2" "$out/v1/catalog.json" > "$out/world.json" <<'PY'
import hashlib, json, os, sys
old, new = sys.argv[1] + "/bundles", sys.argv[2] + "/bundles"
names = sorted(os.listdir(new))
def tree(folder):
    out = {}
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            out[os.path.relpath(path, folder)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out
changed = sum(1 for n in names if tree(old + "/" + n) != tree(new + "/" + n))
c = json.load(open(sys.argv[3]))
print(json.dumps({"bundleFolders": len(names), "changedBundleFolders": changed, "bundles": len(c["bundles"]), "regions": len(c["regions"]),
                  "bundleBytes": sum(b["size"] for b in c["bundles"].values())}))
PY
# The device holds one leaf region, the one with the fewest bundles: the check's bytes do not depend on it.
region=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1])); parents = {r["parent"] for r in c["regions"]}
print(min((len(r["bundles"]), r["id"]) for r in c["regions"] if r["id"] not in parents)[1])' "$out/v1/catalog.json")
printf 'name: device\ncatalog: %s\nregions:\n  include: [%s]\noutput:\n  formats: [directory]\n' "$out/v1/catalog.json" "$region" > "$out/device.yaml"
mp build "$out/device.yaml" --cache "$out/build-cache" --out "$out/image" --sign "$out/release.key" -q >/dev/null
image=$(ls -d "$out"/image/device-*/)
rm -rf "$out/build-cache"

# --- publish: full against --previous, alternating ------------------------------------------------

say "publishing the new version, full and with --previous ($runs rounds)…"
now() { date +%s.%N; }
: > "$out/publish.txt"
for round in $(seq "$runs"); do
    for kind in full incremental; do
        rm -rf "$out/v2-$kind"
        extra=()
        [ "$kind" = full ] || extra=(--previous "$out/v1")
        start=$(now)
        SOURCE_DATE_EPOCH=1790003600 mp publish "$out/src-v2" --out "$out/v2-$kind" --sign "$out/release.key" "${extra[@]}" -q >/dev/null
        echo "$kind $(python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$start" "$(now)")" >> "$out/publish.txt"
    done
    # The floor of an incremental publish, in the same round: reading and hashing every source
    # byte (which finding the unchanged bundles needs) and compressing the new catalog at the level
    # publish uses (zstd -19). Packing the changed bundles comes on top.
    start=$(now)
    find "$out/src-v2" -type f -print0 | xargs -0 -P "$(nproc)" -n 512 sha256sum >/dev/null
    zstd -19 -q -c "$out/v2-full/catalog.json" >/dev/null
    echo "floor $(python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$start" "$(now)")" >> "$out/publish.txt"
    # Every byte of both outputs, every round.
    if diff -r "$out/v2-full" "$out/v2-incremental" >/dev/null; then echo "identical $round" >> "$out/publish.txt"; else
        say "round $round: the --previous publish differs from the full one"; echo "different $round" >> "$out/publish.txt"; fi
done

# --- the wire: checks from a device, nginx's $bytes_sent ------------------------------------------

source "$root/Benchmarks/nginx.sh"
trap nginx_stop EXIT
trap 'exit 130' INT TERM
nginx_log=sent
nginx_start "$out/www" updates
log=$nginx_dir/access.log
lines() { wc -l < "$log" 2>/dev/null || echo 0; }
# sent FROM: bytes nginx sent after line FROM of its log (headers included), and the requests.
sent() { tail -n +"$(($1 + 1))" "$log" | awk '{ sum += $3; n += 1; s = s " " $1 "=" $2 } END { print sum + 0, n + 0, s }'; }
# nginx's ETag is the file's mtime and size: v2 is served as published an hour later, as a real one would be.
touch -d "@1790003600" "$out"/v2-full/catalog.json*
touch -d "@1790000000" "$out"/v1/catalog.json*
serve() { rm -f "$out/www/world"; ln -s "$1" "$out/www/world"; }
url=$nginx_base/world/catalog.json
check() {
    MAPPACK_NOW=1790007200 mp store update --check --storage "$out/device/storage" --cache "$out/device/cache" \
        --catalog "$url" --trust "$out/release.pub" -q >/dev/null || true
}
: > "$out/wire.txt"
for round in $(seq "$runs"); do
    rm -rf "$out/device"
    MAPPACK_NOW=1790007200 mp store install --storage "$out/device/storage" --cache "$out/device/cache" --image "$image" \
        --trust "$out/release.pub" -q >/dev/null
    serve "$out/v1"
    from=$(lines); curl -fsS -o /dev/null "$url"; echo "plain-old $(sent "$from")" >> "$out/wire.txt"
    from=$(lines); check; echo "first $(sent "$from")" >> "$out/wire.txt"
    from=$(lines); check; echo "nothing-new $(sent "$from")" >> "$out/wire.txt"
    serve "$out/v2-full"
    from=$(lines); curl -fsS -o /dev/null "$url"; echo "plain-new $(sent "$from")" >> "$out/wire.txt"
    from=$(lines); check; echo "new-version $(sent "$from")" >> "$out/wire.txt"
done

python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
world = json.load(open(out + "/world.json"))
times, identical = {"full": [], "incremental": [], "floor": []}, []
for line in open(out + "/publish.txt"):
    kind, value = line.split()
    if kind in times: times[kind].append(float(value))
    else: identical.append(kind == "identical")
wire = {}
for line in open(out + "/wire.txt"):
    parts = line.split()
    wire.setdefault(parts[0], []).append({"bytes": int(parts[1]), "requests": int(parts[2]), "log": parts[3:]})
med = lambda xs: statistics.median(xs)
full, inc, floor = med(times["full"]), med(times["incremental"]), med(times["floor"])
rows = {
    "world": world, "runs": runs,
    "publish": {"fullSeconds": times["full"], "incrementalSeconds": times["incremental"], "floorSeconds": times["floor"],
                "fullMedian": full, "incrementalMedian": inc, "floorMedian": floor, "ratio": inc / full, "floorRatio": inc / floor,
                "identical": all(identical) and len(identical) == runs, "pass": inc / full <= 0.15 and all(identical)},
    "wire": {k: v for k, v in wire.items()},
}
b = lambda kind: med([x["bytes"] for x in wire[kind]])
rows["wire"]["nothingNewRatio"] = b("nothing-new") / b("plain-old")
rows["wire"]["newVersionRatio"] = b("new-version") / b("plain-new")
json.dump(rows, open(out + ".json", "w"), indent=2)
ok = lambda flag: "PASS" if flag else "MISS"
changed = world["changedBundleFolders"] / world["bundleFolders"]
print(f"update checks through nginx ($bytes_sent, headers included; {world['regions']} regions, {world['bundles']} bundles), medians of {runs} rounds:")
print(f"  {'':<34} {'bytes':>10} {'plain catalog.json':>19} {'ratio':>9}")
for kind, plain, label in (("nothing-new", "plain-old", "check, nothing new"), ("new-version", "plain-new", "check, new version"),
                           ("first", "plain-old", "first check of a device")):
    requests = " ".join(wire[kind][-1]["log"])
    print(f"  {label:<34} {b(kind):>10,.0f} {b(plain):>19,.0f} {b(kind) / b(plain):>8.4f}x  ({requests})")
print(f"  target: nothing new <= 1 KiB: {ok(b('nothing-new') <= 1024)}")
print(f"publish of a version with {world['changedBundleFolders']} of {world['bundleFolders']} bundles changed ({changed:.1%}), "
      f"{world['bundleBytes'] / 1e6:.0f} MB of bundles, medians of {runs}:")
print(f"  full publish {full:8.2f} s   with --previous {inc:8.2f} s   ratio {inc / full:.3f}x   "
      f"outputs byte-identical: {'yes' if rows['publish']['identical'] else 'NO'}; target <= 0.15x: {ok(rows['publish']['pass'])}")
print(f"  floor (sha256sum of every source file on all cores, then zstd -19 of the catalog) {floor:.2f} s: "
      f"--previous is {inc / floor:.2f}x the floor, which alone is {floor / full:.3f}x the full publish")
PY
