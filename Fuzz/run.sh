#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (address sanitizer) and runs each for FUZZ_SECONDS
# (default 60) from a seed corpus the project makes itself; FUZZ_TARGETS picks some of the targets
# (default: recipe catalog manifest extractor build catalogSignature geojson). The build target takes its input as a catalog
# through plan and an offline build whose relative bundle URLs reach a published demo world's bundles. Crashes land in Fuzz/crashes/<target>/;
# copy each into Fuzz/regressions/<target>/ so `make test` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
TARGETS="${FUZZ_TARGETS:-recipe catalog manifest extractor build catalogSignature geojson}"
WORK="Output/fuzz"
BIN=".build/fuzz/release/mappack-fuzz"

swift build -c release --scratch-path .build/fuzz --product mappack-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
# One product per call: given --product twice, swift build builds only the last.
swift build --product mappack
swift build --product demo-world

# Seed corpora: real recipes, a real catalog and manifest, real and hostile archives.
rm -rf "$WORK/seed"
mkdir -p "$WORK/seed"/{recipe,catalog,manifest,extractor,build,catalogSignature,geojson} "$WORK/world"
cp Recipes/*.yaml "$WORK/seed/recipe/"
.build/debug/demo-world --out "$WORK/world/src" --only europe/li --scale 0.05 >/dev/null
.build/debug/mappack keygen --out "$WORK/world/release" --force >/dev/null
.build/debug/mappack publish "$WORK/world/src" --out "$WORK/world/catalog" --sign "$WORK/world/release.key" >/dev/null
cp "$WORK/world/catalog/catalog.json.sig" "$WORK/seed/catalogSignature/"
cp "$WORK/world/catalog/catalog.json" "$WORK/seed/catalog/"
cp "$WORK/world/catalog/catalog.json" "$WORK/seed/build/"
printf 'name: seed\ncatalog: catalog/catalog.json\nregions:\n  include: [europe/li]\n' > "$WORK/world/seed.yaml"
.build/debug/mappack build "$WORK/world/seed.yaml" --cache "$WORK/world/cache" --out "$WORK/world/out" >/dev/null
cp "$WORK/world/out/seed-"*/manifest.json "$WORK/seed/manifest/"
find "$WORK/world/catalog/bundles" -name '*.tar.zst' -size -64k | sed -n 1,20p | xargs -I{} cp {} "$WORK/seed/extractor/"
python3 Tests/Fixtures/hostile_archives.py "$WORK/seed/extractor" dotdot symlink hardlink duplicate case normalization under_file window31 truncated good \
  dialect_pax dialect_gnu dialect_ustar dialect_base256 bad_pax pax_sparse bad_checksum huge_size type_S
# Raw tar seeds too (the target compresses what is not zstd), so mutations reach the tar headers.
for archive in "$WORK/seed/extractor/"*.tar.zst; do zstd -qdc "$archive" > "${archive%.zst}" 2>/dev/null || rm -f "${archive%.zst}"; done
rm -f "$WORK/seed/extractor/"*.json
# GeoJSON written every way a stream could misread (Tests/Fixtures/geojson_inputs.py), boundaries and places.
python3 Tests/Fixtures/geojson_inputs.py inputs --out "$WORK/world/geojson"
cp "$WORK/world/geojson/"*.geojson "$WORK/seed/geojson/"
for target in recipe catalog manifest extractor build catalogSignature geojson; do
  cp Fuzz/regressions/$target/* "$WORK/seed/$target/" 2>/dev/null || true
done

status=0
for target in $TARGETS; do
  mkdir -p "$WORK/corpus/$target" "Fuzz/crashes/$target"
  echo "== fuzzing $target for ${SECONDS_PER_TARGET}s"
  if ! MAPPACK_FUZZ_TARGET=$target MAPPACK_FUZZ_BUNDLES="$(pwd)/$WORK/world/catalog/bundles" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
      "$BIN" -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="Fuzz/crashes/$target/" "$WORK/corpus/$target" "$WORK/seed/$target" 2>"$WORK/$target.log"; then
    echo "!! $target: crash or timeout, see $WORK/$target.log and Fuzz/crashes/$target/"
    status=1
  fi
  tail -1 "$WORK/$target.log"
done
exit $status
