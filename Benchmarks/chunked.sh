#!/usr/bin/env bash
# Chunked updates (issue 21), side by side with whole-bundle updates, through nginx on 127.0.0.1:
# for worlds where 2% and 20% of the records of 20% of the leaves' bundles changed, a
# `mappack build --from OLD` over a catalog published with --chunked against the same over a plain
# catalog: bytes downloaded, bytes of the changed chunks (the least any chunked update must fetch),
# and the time of the update.
#
#   bash Benchmarks/chunked.sh [--bin DIR] [--scale S] [--only IDS]
#
# --bin    folder with mappack and demo-world (default .build/release)
# --scale  demo-world --scale (default 20); --only  demo-world --only (default europe/ch)
# Results: a table on stdout and Output/bench/chunked.json. Targets: downloaded <= 10% of the
# changed bundles' bytes and <= 1.5x the changed chunks' bytes at 2%; time <= 1.2x the whole update.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$root/.build/release
scale=20
only=europe/ch
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "${2:?--bin needs a folder}" && pwd); shift 2 ;;
        --scale) scale=${2:?--scale needs a value}; shift 2 ;;
        --only) only=${2:?--only needs region ids}; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "chunked.sh: unknown argument '$1' (use --bin DIR, --scale S, --only IDS)" >&2; exit 2 ;;
    esac
done
for tool in mappack demo-world; do [ -x "$bin/$tool" ] || { echo "chunked.sh: $bin/$tool is missing (swift build -c release)" >&2; exit 2; }; done
command -v zck_read_header >/dev/null || { echo "chunked.sh: zck_read_header is missing; run 'make deps'" >&2; exit 2; }
out=$root/Output/bench/chunked
rm -rf "$out"; mkdir -p "$out/www"
say() { echo "chunked: $*" >&2; }

source "$root/Benchmarks/nginx.sh"
trap nginx_stop EXIT
nginx_start "$out/www" chunked
base=$nginx_base

export SOURCE_DATE_EPOCH=1790000000
rows=()
for edit in 0.02 0.2; do
    w=$out/edit-$edit
    mkdir -p "$w"
    for v in 2026.11.0 2026.12.0; do
        "$bin/demo-world" --out "$w/src-$v" --only "$only" --scale "$scale" --map-version "$v" --base-version 2026.11.0 \
            --change-fraction 0.2 --edit-fraction "$edit" >/dev/null
        for kind in plain chunked; do
            flag=""; [ "$kind" = chunked ] && flag=--chunked
            "$bin/mappack" publish "$w/src-$v" --out "$out/www/$edit-$kind-$v" $flag -q >/dev/null
            printf 'name: bench\ncatalog: %s/%s-%s-%s/catalog.json\nregions:\n  include: [%s]\n' "$base" "$edit" "$kind" "$v" "$only" > "$w/$kind-$v.yaml"
        done
    done
    for kind in plain chunked; do
        "$bin/mappack" build "$w/$kind-2026.11.0.yaml" --cache "$w/cache-$kind-old" --out "$w/$kind-old" -q >/dev/null
        start=$(date +%s.%N)
        "$bin/mappack" build "$w/$kind-2026.12.0.yaml" --cache "$w/cache-$kind-new" --out "$w/$kind-new" \
            --from "$w/$kind-old/bench-2026.11.0" --json > "$w/$kind.events"
        end=$(date +%s.%N)
        echo "$start $end" > "$w/$kind.time"
    done
    cmp -s "$w/plain-new/bench-2026.12.0.tar.zst" "$w/chunked-new/bench-2026.12.0.tar.zst" || true
    rows+=("$edit")
done

python3 - "$out" "${rows[@]}" <<'PY'
import json, subprocess, sys
out, edits = sys.argv[1], sys.argv[2:]
def chunks(path):
    text = subprocess.run(["zck_read_header", "-c", path], capture_output=True, text=True, check=True).stdout
    header = next(int(l.split(":")[1]) for l in text.splitlines() if l.startswith("Header size"))
    rows = [l.split() for l in text.splitlines() if l.strip() and l.split()[0].isdigit()]
    return header, {(r[1], int(r[3])) for r in rows if int(r[3]) > 0}
report = []
print(f"{'edit':>5} {'changed bundles':>16} {'whole update':>13} {'chunked update':>15} {'share':>6} {'changed chunks':>15} {'x chunks':>8} {'time whole':>10} {'time chunked':>12} {'x time':>6}")
for edit in edits:
    w = f"{out}/edit-{edit}"
    def events(kind): return [json.loads(l) for l in open(f"{w}/{kind}.events")]
    def seconds(kind):
        a, b = map(float, open(f"{w}/{kind}.time").read().split()); return b - a
    plain, chunked = events("plain"), events("chunked")
    whole = next(e for e in plain if e["event"] == "done")["downloadedBytes"]
    got = next(e for e in chunked if e["event"] == "done")["downloadedBytes"]
    assembled = [e for e in chunked if e["event"] == "bundle-chunked"]
    size = sum(e["size"] for e in assembled)
    fallbacks = [e["fallback"] for e in assembled if e["fallback"]]
    # The least a chunked update must fetch: each changed bundle's header and its chunks no old bundle has.
    old = json.load(open(f"{out}/www/{edit}-chunked-2026.11.0/catalog.json"))
    new = json.load(open(f"{out}/www/{edit}-chunked-2026.12.0/catalog.json"))
    have = set()
    for digest, b in old["bundles"].items():
        have |= chunks(f"{out}/www/{edit}-chunked-2026.11.0/" + b["chunked"]["url"])[1]
    need = 0
    for e in assembled:
        b = new["bundles"][e["bundle"]]
        header, mine = chunks(f"{out}/www/{edit}-chunked-2026.12.0/" + b["chunked"]["url"])
        need += header + sum(c for _, c in mine - have)
    row = {"editFraction": float(edit), "changedBundleBytes": size, "wholeUpdateBytes": whole, "chunkedUpdateBytes": got,
           "share": got / size if size else None, "changedChunkBytes": need, "timesChangedChunks": got / need if need else None,
           "wholeSeconds": seconds("plain"), "chunkedSeconds": seconds("chunked"), "fallbacks": fallbacks}
    report.append(row)
    print(f"{edit:>5} {size:>16} {whole:>13} {got:>15} {row['share']:>6.1%} {need:>15} {row['timesChangedChunks']:>8.2f} "
          f"{row['wholeSeconds']:>9.2f}s {row['chunkedSeconds']:>11.2f}s {row['chunkedSeconds'] / row['wholeSeconds']:>6.2f}"
          + (f"  fallbacks: {fallbacks}" if fallbacks else ""))
json.dump(report, open(f"{out}/../chunked.json", "w"), indent=2)
PY
