# demo-world --scale for a wanted size, for the benchmark scripts (sourced, not run): run.sh sizes
# its worlds by compressed bundle bytes, store.sh by installed bytes.
#
#   scale_calibrate FILE FIELD BIN [demo-world options…]
#       fits the line bytes = fixed + perScale × scale from two small worlds (--scale 0.1 and 0.5,
#       made with BIN/demo-world and BIN/mappack publish), summing each bundle's FIELD (`size`,
#       `unpackedSize`) in the catalog; kept in FILE, made again when FIELD or the options differ
#   scale_for FILE GIB
#       prints the --scale whose world holds about GIB GiB (at least 0.01)

scale_calibrate() {
    local file=$1 field=$2 bin=$3
    shift 3
    if [ -s "$file" ] && python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c.get("field") == sys.argv[2] and c.get("options") == sys.argv[3:] else 1)' "$file" "$field" "$@"; then
        return
    fi
    local tmp s points=()
    tmp=$(mktemp -d "$(dirname "$file")/.calibrate.XXXXXX")
    for s in 0.1 0.5; do
        "$bin/demo-world" --out "$tmp/src-$s" --scale "$s" "$@" >/dev/null
        "$bin/mappack" publish "$tmp/src-$s" --out "$tmp/pub-$s" -q >/dev/null
        points+=("$s" "$(python3 -c 'import json,sys; print(sum(b[sys.argv[2]] for b in json.load(open(sys.argv[1]))["bundles"].values()))' "$tmp/pub-$s/catalog.json" "$field")")
        rm -rf "$tmp/src-$s" "$tmp/pub-$s"
    done
    python3 - "$field" "${points[@]}" "$@" > "$file" <<'PY'
import json, sys
field, s1, b1, s2, b2 = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
slope = (b2 - b1) / (s2 - s1)
print(json.dumps({"field": field, "options": sys.argv[6:], "bytesPerScale": slope, "fixedBytes": b1 - slope * s1,
                  "points": [[s1, b1], [s2, b2]]}))
PY
    rm -rf "$tmp"
}

scale_for() {
    python3 -c '
import json, sys
c = json.load(open(sys.argv[1])); want = float(sys.argv[2]) * 2**30
print("%.4f" % max(0.01, (want - c["fixedBytes"]) / c["bytesPerScale"]))' "$1" "$2"
}
