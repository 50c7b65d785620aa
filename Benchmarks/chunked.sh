#!/usr/bin/env bash
# Chunked updates (issue 21), side by side with whole-bundle updates, through nginx on 127.0.0.1:
# for worlds where 2% and 20% of the records of 20% of the leaves' bundles changed, a device update
# (`mappack store update`, i.e. MapStore.update, from a store installed from the old image) over a
# catalog published with --chunked, over a plain catalog, and over the chunked catalog from a server
# that ignores Range (nginx `max_ranges 0`). Bytes are what nginx sent for bundles (its access log);
# time is the median of --runs updates, the kinds alternating within each round.
#
#   bash Benchmarks/chunked.sh [--bin DIR] [--scales "S …"] [--only IDS] [--runs N] [--chunk BYTES] [--edits "F …"] [--out DIR]
#
# --bin     folder with mappack and demo-world (default .build/release)
# --scales  demo-world --scale values, one world each (default "10 30"); --only  demo-world --only (default europe/ch)
# --runs    timed updates per kind (default 5); --edits  --edit-fraction values (default "0.02 0.2")
# --chunk   one chunk size in bytes for every bundle (MAPPACK_ZCK_CHUNK, the publisher's choice; the catalog
#           records it and the device cuts its old files with the catalog's value; default: mappack's
#           per-bundle size, a 64th of the bundle's tar from 1 to 8 KiB)
# --out     work folder (default Output/bench/chunked); the report is written beside it as FOLDER.json
# Results: a table on stdout and Output/bench/chunked.json. Targets: downloaded <= 10% of the
# changed bundles' bytes and <= 1.5x the changed chunks' bytes at 2%; time <= 1.2x the whole update;
# without Range support the same bytes as a whole update of the same catalog, and no failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
scales="10 30"
only=europe/ch
runs=5
chunk=""
edits="0.02 0.2"
out=$root/Output/bench/chunked
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --scales|--scale) scales=${2:?--scales needs values}; shift 2 ;;
        --only) only=${2:?--only needs region ids}; shift 2 ;;
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --chunk) chunk=${2:?--chunk needs bytes}; shift 2 ;;
        --edits) edits=${2:?--edits needs fractions}; shift 2 ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "chunked.sh: unknown argument '$1' (use --bin DIR, --scales \"S …\", --only IDS, --runs N, --chunk BYTES, --edits \"F …\", --out DIR)" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || { echo "chunked.sh: --runs '$runs': expected a whole number >= 1" >&2; exit 2; }
[ -z "$chunk" ] || [[ "$chunk" =~ ^[0-9]+$ ]] || { echo "chunked.sh: --chunk '$chunk': expected bytes (a power of two, 1024 to 1048576)" >&2; exit 2; }
for tool in mappack demo-world; do [ -x "$bin/$tool" ] || { echo "chunked.sh: $bin/$tool is missing (swift build -c release)" >&2; exit 2; }; done
command -v zck_read_header >/dev/null || { echo "chunked.sh: zck_read_header is missing; run 'make deps'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "chunked.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
rm -rf "$out"; mkdir -p "$out/www"
say() { echo "chunked: $*" >&2; }

# Two servers over the same files: one with Range, one without; both log bytes per request.
source "$root/Benchmarks/nginx.sh"
nginx_log=1
nginx_server_extra="max_ranges 0;"
nginx_start "$out/www" chunked-norange
norange_base=$nginx_base norange_log=$nginx_dir/access.log norange_dir=$nginx_dir
nginx_dir=""  # keep it running; the next start takes over the variables
nginx_server_extra=""
nginx_start "$out/www" chunked
base=$nginx_base
ranged_log=$nginx_dir/access.log
stop_all() {
    nginx_stop
    nginx_dir=$norange_dir
    nginx_stop
}
trap stop_all EXIT

# bytes LOGFILE FROM_LINE: body bytes nginx sent for bundles (.tar.zst, .zck) after line FROM_LINE.
bytes() { tail -n +"$(($2 + 1))" "$1" | awk '$1 ~ /^\/[^ ]*\/bundles\// { sum += $3 } END { print sum + 0 }'; }
lines() { wc -l < "$1" 2>/dev/null || echo 0; }

export SOURCE_DATE_EPOCH=1790000000
worlds=()
for scale in $scales; do
    for edit in $edits; do
        name=s$scale-e$edit
        w=$out/$name
        mkdir -p "$w"
        say "world $name: generating and publishing"
        for v in 2026.11.0 2026.12.0; do
            "$bin/demo-world" --out "$w/src-$v" --only "$only" --scale "$scale" --map-version "$v" --base-version 2026.11.0 \
                --change-fraction 0.2 --edit-fraction "$edit" >/dev/null
            "$bin/mappack" publish "$w/src-$v" --out "$out/www/$name-plain-$v" -q >/dev/null
            MAPPACK_ZCK_CHUNK=$chunk "$bin/mappack" publish "$w/src-$v" --out "$out/www/$name-chunked-$v" --chunked -q >/dev/null
            rm -rf "$w/src-$v"
        done
        for kind in plain chunked; do
            printf 'name: bench\ncatalog: %s/%s-%s-2026.11.0/catalog.json\nregions:\n  include: [%s]\n' "$base" "$name" "$kind" "$only" > "$w/$kind-old.yaml"
            "$bin/mappack" build "$w/$kind-old.yaml" --cache "$w/cache-$kind" --out "$w/$kind-old" -q >/dev/null
            rm -rf "$w/cache-$kind"
        done
        : > "$w/runs.tsv"
        for round in $(seq "$runs"); do
            for kind in plain chunked norange; do
                image=$w/$([ "$kind" = plain ] && echo plain || echo chunked)-old/bench-2026.11.0
                catalog=$base/$name-$([ "$kind" = plain ] && echo plain || echo chunked)-2026.12.0/catalog.json
                access=$ranged_log
                if [ "$kind" = norange ]; then catalog=$norange_base/$name-chunked-2026.12.0/catalog.json; access=$norange_log; fi
                device=$w/device-$kind
                rm -rf "$device"
                "$bin/mappack" store install --storage "$device/storage" --cache "$device/cache" --image "$image" -q >/dev/null
                sync
                mark=$(lines "$access")
                start=$(date +%s.%N)
                /usr/bin/time -f '%U %S' -o "$w/cpu" \
                    "$bin/mappack" store update --storage "$device/storage" --cache "$device/cache" --catalog "$catalog" -q >/dev/null \
                    || { echo "chunked.sh: $kind update of $name failed" >&2; exit 1; }
                end=$(date +%s.%N)
                cpu=$(awk 'END { print $1 + $2 }' "$w/cpu")
                printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$round" "$(python3 -c "print($end - $start)")" "$(bytes "$access" "$mark")" "$cpu" >> "$w/runs.tsv"
            done
        done
        rm -rf "$w"/device-* "$w"/*-old
        worlds+=("$name:$scale:$edit")
    done
done

python3 - "$out" "$chunk" "${worlds[@]}" <<'PY'
import json, statistics, subprocess, sys
out, chunk, worlds = sys.argv[1], sys.argv[2], sys.argv[3:]
def chunks(path):
    text = subprocess.run(["zck_read_header", "-c", path], capture_output=True, text=True, check=True).stdout
    header = next(int(l.split(":")[1]) for l in text.splitlines() if l.startswith("Header size"))
    rows = [l.split() for l in text.splitlines() if l.strip() and l.split()[0].isdigit()]
    return header, {(r[1], int(r[3])) for r in rows if int(r[3]) > 0}
def catalog(name, kind, version): return json.load(open(f"{out}/www/{name}-{kind}-{version}/catalog.json"))
report = []
head = ("scale", "edit", "changed bundles", "whole update", "chunked update", "share", "changed chunks", "x chunks",
        "time whole", "time chunked", "x time", "no-Range update", "x whole")
print(" | ".join(head))
for world in worlds:
    name, scale, edit = world.split(":")
    runs = [l.split("\t") for l in open(f"{out}/{name}/runs.tsv").read().splitlines()]
    def median(kind, column): return statistics.median(float(r[column]) for r in runs if r[0] == kind)
    def each(kind, column): return [float(r[column]) for r in runs if r[0] == kind]
    old, new = catalog(name, "chunked", "2026.11.0"), catalog(name, "chunked", "2026.12.0")
    changed = [d for d in new["bundles"] if d not in old["bundles"]]
    changed_bytes = sum(new["bundles"][d]["size"] for d in changed)
    plain_old, plain_new = catalog(name, "plain", "2026.11.0"), catalog(name, "plain", "2026.12.0")
    plain_changed = sum(b["size"] for d, b in plain_new["bundles"].items() if d not in plain_old["bundles"])
    # The least a chunked update must fetch: each changed bundle's header and its chunks no old bundle has.
    have = set()
    for b in old["bundles"].values():
        have |= chunks(f"{out}/www/{name}-chunked-2026.11.0/" + b["chunked"]["url"])[1]
    need = 0
    headers = 0
    by_kind = {}
    for d in changed:
        header, mine = chunks(f"{out}/www/{name}-chunked-2026.12.0/" + new["bundles"][d]["chunked"]["url"])
        missing = sum(c for _, c in mine - have)
        need += header + missing
        headers += header
        kind = by_kind.setdefault(new["bundles"][d].get("kind") or "?", [0, 0, 0, set()])
        kind[0] += new["bundles"][d]["size"]
        kind[1] += header
        kind[2] += missing
        kind[3].add(new["bundles"][d]["chunked"].get("chunkSize", 8192))
    whole, got, norange = median("plain", 3), median("chunked", 3), median("norange", 3)
    tw, tc = median("plain", 2), median("chunked", 2)
    row = {"scale": float(scale), "editFraction": float(edit), "chunkSize": int(chunk) if chunk else "per bundle",
           "changedBundleBytes": changed_bytes, "changedPlainBundleBytes": plain_changed,
           "allBundleBytes": sum(b["size"] for b in new["bundles"].values()),
           "allPlainBundleBytes": sum(b["size"] for b in plain_new["bundles"].values()),
           "wholeUpdateBytes": whole, "chunkedUpdateBytes": got, "share": got / changed_bytes,
           "changedChunkBytes": need, "timesChangedChunks": got / need, "changedHeaderBytes": headers,
           "changedByKind": {k: {"bytes": v[0], "headers": v[1], "missingChunks": v[2], "chunkSizes": sorted(v[3])} for k, v in by_kind.items()},
           "wholeSeconds": each("plain", 2), "chunkedSeconds": each("chunked", 2), "wholeMedian": tw, "chunkedMedian": tc,
           "timeRatio": tc / tw, "noRangeBytes": norange, "noRangeTimesWhole": norange / changed_bytes,
           "noRangeSeconds": each("norange", 2), "wholeCPUSeconds": each("plain", 4), "chunkedCPUSeconds": each("chunked", 4),
           "cpuRatio": median("chunked", 4) / median("plain", 4)}
    report.append(row)
    print(f"{scale} | {edit} | {changed_bytes:,} | {int(whole):,} | {int(got):,} | {row['share']:.1%} | {need:,} | "
          f"{row['timesChangedChunks']:.2f} | {tw:.2f} s | {tc:.2f} s | {row['timeRatio']:.2f} | {int(norange):,} | {row['noRangeTimesWhole']:.2f}")
    print("    changed chunks by kind: " + ", ".join(
        f"{k} {(v[1] + v[2]) / v[0]:.1%} of {v[0]:,} B (headers {v[1]:,} B, chunks {v[2]:,} B, chunk size {'/'.join(map(str, sorted(v[3])))})"
        for k, v in sorted(by_kind.items())))
    print(f"    CPU (user + sys) whole {median('plain', 4):.2f} s, chunked {median('chunked', 4):.2f} s: x{row['cpuRatio']:.2f}")
    print(f"    all bundles: chunked {row['allBundleBytes']:,} B, plain {row['allPlainBundleBytes']:,} B "
          f"(+{row['allBundleBytes'] / row['allPlainBundleBytes'] - 1:.1%}); times whole {['%.2f' % t for t in row['wholeSeconds']]}, "
          f"chunked {['%.2f' % t for t in row['chunkedSeconds']]}")
json.dump(report, open(f"{out}.json", "w"), indent=2)
PY
