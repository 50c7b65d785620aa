"""Differential check of two mappack binaries' GeoJSON reading (stdlib only).

    python3 Tools/geojson_differential.py OLD_MAPPACK NEW_MAPPACK [--cases N] [--seed S] [--work DIR]

Makes Tests/Fixtures/geojson_inputs.py's inputs, then imports N mutations of its boundaries or places
file with both binaries and compares exit code, standard error and the digest of what was written
(geojson_inputs.py digest). Half the mutations are of bytes (deletions, JSON-ish tokens inserted, bytes
flipped, spans copied: mostly refusals), half of structure (values replaced by random JSON, keys added
or deleted: valid JSON that import refuses or accepts). Prints each difference and a summary; exits 1
when there is one. How the streamed reader (issue 41 attack 6) was checked against the whole-file
parser of b0a9ff5.
"""
import argparse
import copy
import functools
import json
import os
import random
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests/Fixtures/geojson_inputs.py")
TOKENS = [b"[", b"]", b"{", b"}", b",", b":", b'"', b"\\", b"\\u", b"\\ud83d", b"-", b"0", b"1e", b".", b"true", b"null",
          b'"type"', b'"Feature"', b'"id"', b'"features"', b"\xc3", b"\xff", b" ", b"\n", b"9" * 30]
KEYS = ["id", "parent", "names", "name", "name:de", "name:", "type", "geometry", "coordinates", "properties", "features",
        "population", "alternate_names", "kind", "geonameid"]


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(data)) if data else 0
        op = rng.random()
        if op < 0.3 and data:
            del data[i:i + rng.randint(1, 8)]
        elif op < 0.6:
            data[i:i] = rng.choice(TOKENS)
        elif op < 0.8 and data:
            data[i] = rng.randrange(256)
        elif data:
            j = rng.randrange(len(data))
            data[i:i] = data[j:min(len(data), j + rng.randint(1, 200))]
    return bytes(data)


def random_value(rng, depth=0):
    r = rng.random()
    if r < 0.15:
        return rng.choice(["Polygon", "MultiPolygon", "Point", "Feature", "FeatureCollection", "world/a", "world/x", "", "bad id!",
                           "x\u00e9\U0001F600"])
    if r < 0.35:
        return rng.choice([0, -0.0, 1, 180.5, -91, 45.5, 1e300, 12, -1, 2.5])
    if r < 0.45:
        return rng.choice([True, False, None])
    if r < 0.7 and depth < 3:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    if depth < 3:
        return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return 1


def nodes(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from nodes(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value[:6]):
            yield from nodes(child, path + (index,))


def mutate_structure(rng, document):
    document = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        path, value = rng.choice(list(nodes(document)))
        if not path:
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        r = rng.random()
        if r < 0.4:
            parent[path[-1]] = random_value(rng)
        elif r < 0.6:
            del parent[path[-1]]
        elif isinstance(value, dict):
            value[rng.choice(KEYS)] = random_value(rng)
        elif isinstance(value, list):
            value.insert(rng.randint(0, len(value)), random_value(rng))
        else:
            parent[path[-1]] = random_value(rng)
    return json.dumps(document, ensure_ascii=rng.random() < 0.5).encode()


@functools.cache
def without_overviews(binary):
    """Overview bundles came after the stream (issue 42): a binary that writes them is asked not to,
    so it compares with one that predates them on the GeoJSON reading alone."""
    help_text = subprocess.run([binary, "help", "import"], capture_output=True, timeout=60).stdout
    return ["--overview-maxzoom", "none"] if b"--overview-maxzoom" in help_text else []


def run(binary, inputs, work, kind, case_file):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    arguments = [binary, "import", "-q", "--tiles", os.path.join(inputs, "tiles.mbtiles"), "--out", out, "--catalog", "c", "--map-version", "1"]
    arguments += without_overviews(binary)
    if kind == "regions":
        arguments += ["--regions", case_file]
    else:
        arguments += ["--regions", os.path.join(inputs, "regions.geojson"), "--places", case_file]
    result = subprocess.run(arguments, capture_output=True, timeout=120, env=dict(os.environ, SOURCE_DATE_EPOCH="1"))
    digest = b""
    if result.returncode == 0:
        digest = subprocess.run([sys.executable, FIXTURES, "digest", out], capture_output=True, timeout=120).stdout
    return result.returncode, result.stderr.replace(case_file.encode(), b"CASE"), digest


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default=os.path.join(ROOT, "Output/geojson-differential"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    inputs = os.path.join(args.work, "inputs")
    subprocess.run([sys.executable, FIXTURES, "inputs", "--out", inputs], check=True, timeout=120)
    sources = {kind: open(os.path.join(inputs, kind + ".geojson"), "rb").read() for kind in ("regions", "places")}
    case_file = os.path.join(args.work, "case.geojson")
    differences = accepted = 0
    for case in range(args.cases):
        kind = rng.choice(["regions", "places"])
        if rng.random() < 0.5:
            data = mutate_bytes(rng, sources[kind])
        else:
            data = mutate_structure(rng, json.loads(sources[kind]))
        with open(case_file, "wb") as handle:
            handle.write(data)
        old = run(args.old, inputs, args.work, kind, case_file)
        new = run(args.new, inputs, args.work, kind, case_file)
        accepted += new[0] == 0
        if old != new:
            differences += 1
            kept = os.path.join(args.work, "difference-%d-%d.geojson" % (args.seed, case))
            shutil.copy(case_file, kept)
            print("difference (%s, %s): old %d %r, new %d %r" % (kind, kept, old[0], old[1][:300], new[0], new[1][:300]))
    print("%d cases (%d accepted by the new binary): %d differences" % (args.cases, accepted, differences))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
