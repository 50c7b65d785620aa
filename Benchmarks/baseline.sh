#!/usr/bin/env bash
# The shell pipeline a user would write instead of mappack: the baseline of `make bench`.
#
#   bash Benchmarks/baseline.sh CATALOG_URL STORE_DIR [WORK_DIR]
#
# Does the same work as `mappack build` of a recipe that includes every region of the catalog:
#   1. fetch catalog.json, list every bundle (python3, no jq),
#   2. `curl --parallel` all bundles into WORK_DIR/bundles,
#   3. `sha256sum -c` them against the digests that name them,
#   4. `zstd -dc | tar -x` each bundle into STORE_DIR (one bundle after the other),
#   5. `du` for the sizes (allocated and apparent).
# WORK_DIR defaults to STORE_DIR.work and is removed at the end. Exit status is non-zero when
# any step fails (set -e, pipefail).
set -euo pipefail

catalog_url=${1:?usage: baseline.sh CATALOG_URL STORE_DIR [WORK_DIR]}
store=${2:?usage: baseline.sh CATALOG_URL STORE_DIR [WORK_DIR]}
work=${3:-$store.work}

mkdir -p "$store" "$work/bundles"
curl -fsS -o "$work/catalog.json" "$catalog_url"

# curl config (url/output pairs) and a sha256sum check list, from catalog.json.
python3 - "$work/catalog.json" "$catalog_url" "$work" <<'PY'
import json, sys, urllib.parse
catalog_path, catalog_url, work = sys.argv[1:4]
catalog = json.load(open(catalog_path))
with open(work + "/curl.cfg", "w") as cfg, open(work + "/SHA256SUMS", "w") as sums, open(work + "/list", "w") as names:
    for digest, info in sorted(catalog["bundles"].items()):
        hex_digest = digest.split(":", 1)[1]
        name = hex_digest + ".tar.zst"
        cfg.write('url = "%s"\noutput = "%s/bundles/%s"\n' % (urllib.parse.urljoin(catalog_url, info["url"]), work, name))
        sums.write("%s  %s\n" % (hex_digest, name))
        names.write(name + "\n")
PY

curl -fsS --parallel --parallel-max "${BASELINE_PARALLEL:-16}" --config "$work/curl.cfg"
(cd "$work/bundles" && sha256sum --quiet -c "$work/SHA256SUMS")
while read -r name; do
    zstd -qdc "$work/bundles/$name" | tar -x -C "$store"
done < "$work/list"
du -sB1 "$store" | cut -f1 > "$work/size-on-disk"
du -sb "$store" | cut -f1 > "$work/size-apparent"
echo "baseline: $(wc -l < "$work/list") bundles, $(cat "$work/size-apparent") bytes unpacked, $(cat "$work/size-on-disk") bytes on disk"
rm -rf "$work"
