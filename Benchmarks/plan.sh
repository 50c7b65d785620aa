#!/usr/bin/env bash
# Times `mappack plan` on a full-world catalog (every country's subdivisions: ~5,400 regions,
# ~16,000 bundles, ~8 MB of catalog.json); the target is ≤ 100 ms.
#
#   bash Benchmarks/plan.sh [WORK_DIR]      (default: Output/bench-plan)
#
# Builds release binaries, generates and publishes the world once (payloads at --scale 0.01:
# plan reads only the catalog), then runs hyperfine and leaves its JSON in WORK_DIR/plan.json.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${1:-Output/bench-plan}
version=2026.11.0
release=.build/release

swift build -c release --static-swift-stdlib --product mappack
swift build -c release --static-swift-stdlib --product demo-world

mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ ! -f "$work/catalog/catalog.json" ]; then
    "$release/demo-world" --out "$work/source" --full --scale 0.01 --map-version "$version"
    "$release/mappack" publish "$work/source" --out "$work/catalog"
fi

# Every continent root and the world: the largest plan the catalog allows.
cat > "$work/world.yaml" <<YAML
name: bench-world
catalog: $work/catalog/catalog.json
mapVersion: $version
language: de
regions:
  include: [world, africa, americas, antarctica, asia, europe, oceania]
cacheSeed:
  include: [world]
  maxBytes: 64 MiB
target:
  blockSize: 4096
  capacity: 1024 GiB
output:
  formats: [directory]
YAML

echo "catalog: $(wc -c < "$work/catalog/catalog.json") bytes"
"$release/mappack" plan "$work/world.yaml" > /dev/null   # fail here, not inside hyperfine
hyperfine --warmup 2 --runs 10 --export-json "$work/plan.json" \
    "$release/mappack plan $work/world.yaml"
echo "results: $work/plan.json"
