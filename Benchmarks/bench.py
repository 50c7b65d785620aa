#!/usr/bin/env python3
"""Measurements of `make bench`; started by Benchmarks/run.sh, which prepares the worlds and nginx.

Timed rows run alternating (round 1: every command once, round 2: …), each after its own
untimed `prepare` step, and report the median. Plan timing uses hyperfine; peak RSS uses
/usr/bin/time -v. Writes Output/bench/report.json and prints a table with PASS/MISS per target.
"""
import argparse, datetime, json, os, re, resource, shutil, statistics, subprocess, sys, time

p = argparse.ArgumentParser()
for name in ("root", "bench", "port", "runs", "size", "small-size", "world", "small-world", "full-world", "large-world", "few-files-world", "work", "work-fs"):
    p.add_argument("--" + name, required=True)
p.add_argument("--against", default="", help="an older mappack binary to time side by side with this one")
p.add_argument("--rows", default="", help="comma-separated timed rows to run (e.g. the large-bundle ones); "
               "skips the RSS and plan rows and the targets whose rows did not run")
args = p.parse_args()
runs = int(args.runs)
root, bench = args.root, args.bench
mappack = root + "/.build/release/mappack"
work = args.work
ncpu = os.cpu_count() or 1


def log(message):
    print("bench: " + message, file=sys.stderr, flush=True)


def sh(command, check=True, capture=False):
    result = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        sys.exit("bench: command failed (%d): %s\n%s" % (result.returncode, command, result.stderr[-4000:]))
    return result


def q(path):
    return "'" + path.replace("'", "'\\''") + "'"


def load_world(folder):
    info = json.load(open(folder + "/world.json"))
    catalog = json.load(open(folder + "/published/catalog.json"))
    info["folder"] = folder
    info["url"] = "http://127.0.0.1:%s/%s/published/catalog.json" % (args.port, os.path.relpath(folder, bench))
    info["roots"] = [r["id"] for r in catalog["regions"] if r["parent"] is None]
    info["mapVersion"] = catalog["mapVersion"]
    return info


def recipe(path, world, catalog):
    # Every region of the world, one output format (the folder), no cache seed: the same work as
    # Benchmarks/baseline.sh, which unpacks every bundle into one store folder.
    with open(path, "w") as f:
        f.write("name: bench\ncatalog: %s\nmapVersion: %s\nregions:\n  include: [%s]\n"
                "target:\n  blockSize: 4096\n  capacity: 1024 GiB\noutput:\n  formats: [directory]\n"
                % (catalog, world["mapVersion"], ", ".join(world["roots"])))
    return path


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
main = load_world(args.world)
small = load_world(args.small_world)
full = load_world(args.full_world)
large = load_world(args.large_world)
few = load_world(args.few_files_world)
recipe_main = recipe(work + "/main.yaml", main, main["url"])
recipe_small = recipe(work + "/small.yaml", small, small["url"])
recipe_full = recipe(work + "/full.yaml", full, full["folder"] + "/published/catalog.json")
recipe_large = recipe(work + "/large.yaml", large, large["url"])
recipe_few = recipe(work + "/few.yaml", few, few["url"])
large_bundles = large["folder"] + "/published/bundles"
bundles_dir = main["folder"] + "/published/bundles"
image = work + "/m-out/bench-" + main["mapVersion"]

# Put every bundle in the page cache, so the first round is not the only one that reads the disk.
sh("find %s -type f -name '*.tar.zst' -print0 | xargs -0 cat > /dev/null" % q(bundles_dir))
count = int(sh("find %s -type f -name '*.tar.zst' | wc -l" % q(bundles_dir), capture=True).stdout)
half = count // ncpu + 1   # xargs -n: one batch per core, so the limit rows pay no per-bundle process start
find_bundles = "find %s -type f -name '*.tar.zst' -print0" % q(bundles_dir)

build_cmd = "%s build %s --cache %s --out %s" % (q(mappack), q(recipe_main), q(work + "/m-cache"), q(work + "/m-out"))
rows = {
    "cold": dict(label="mappack build, cold (empty download cache)",
                 prepare="rm -rf %s %s" % (q(work + "/m-cache"), q(work + "/m-out")), command=build_cmd),
    "noop": dict(label="mappack build again (warm cache, nothing changed)", prepare="", command=build_cmd),
    "verify": dict(label="mappack verify (full SHA-256)", prepare="", command="%s verify %s" % (q(mappack), q(image))),
    "sha256c": dict(label="sha256sum -c over the image's files", prepare="",
                    command="cd %s/store && sha256sum --quiet -c %s" % (q(image), q(work + "/image.sums"))),
    "baseline": dict(label="baseline.sh: curl --parallel, sha256sum -c, zstd|tar, du",
                     prepare="rm -rf %s %s" % (q(work + "/b-store"), q(work + "/b-store.work")),
                     command="bash %s %s %s" % (q(root + "/Benchmarks/baseline.sh"), q(main["url"]), q(work + "/b-store"))),
    "limitExtract": dict(label="limit: zstd -dc | tar -x of local bundles, xargs -P%d" % ncpu,
                         prepare="rm -rf %s && mkdir -p %s" % (q(work + "/l-store"), q(work + "/l-store")),
                         command="%s | xargs -0 -P%d -n%d sh -c 'zstd -qdc \"$@\" | tar -xi -C %s' _"
                                 % (find_bundles, ncpu, half, q(work + "/l-store"))),
    # The same unpacking made durable the way a build makes its outputs durable: one `syncfs` of the
    # filesystem after the last file (`sync -f`), timed with it. The floor of a durable cold build.
    "limitDurable": dict(label="limit, durable: the same zstd|tar, then one syncfs (sync -f)",
                         prepare="rm -rf %s && mkdir -p %s" % (q(work + "/d-store"), q(work + "/d-store")),
                         command="%s | xargs -0 -P%d -n%d sh -c 'zstd -qdc \"$@\" | tar -xi -C %s' _ && sync -f %s"
                                 % (find_bundles, ncpu, half, q(work + "/d-store"), q(work + "/d-store"))),
    "limitSha": dict(label="limit: sha256sum of local bundles, xargs -P%d" % ncpu, prepare="",
                     command="%s | xargs -0 -P%d -n%d sha256sum > /dev/null" % (find_bundles, ncpu, half)),
    # First-start install on a device: the quick check (sizes, ids) and the full one (every byte hashed
    # while it is copied, what trusted keys ask for), against a plain copy of the same store.
    "install": dict(label="mappack store install (folder image, quick check)",
                    prepare="rm -rf %s %s" % (q(work + "/i-store"), q(work + "/i-cache")),
                    command="%s store install --image %s --storage %s --cache %s"
                            % (q(mappack), q(image), q(work + "/i-store"), q(work + "/i-cache"))),
    "installFull": dict(label="mappack store install --full (every byte hashed)",
                        prepare="rm -rf %s %s" % (q(work + "/i-store"), q(work + "/i-cache")),
                        command="%s store install --full --image %s --storage %s --cache %s"
                                % (q(mappack), q(image), q(work + "/i-store"), q(work + "/i-cache"))),
    "copy": dict(label="cp -r of the image (the floor of an install)", prepare="rm -rf %s" % q(work + "/c-store"),
                 command="cp -r %s %s && sync -f %s" % (q(image), q(work + "/c-store"), q(work + "/c-store"))),
}
# The same cold build and limits on the large-bundle world (issue 34: the ratios hold on both).
large_count = int(sh("find %s -type f -name '*.tar.zst' | wc -l" % q(large_bundles), capture=True).stdout)
find_large = "find %s -type f -name '*.tar.zst' -print0" % q(large_bundles)
rows["coldLarge"] = dict(label="large bundles: mappack build, cold",
                         prepare="rm -rf %s %s" % (q(work + "/L-cache"), q(work + "/L-out")),
                         command="%s build %s --cache %s --out %s" % (q(mappack), q(recipe_large), q(work + "/L-cache"), q(work + "/L-out")))
rows["limitLarge"] = dict(label="large bundles: limit, zstd -dc | tar -x",
                          prepare="rm -rf %s && mkdir -p %s" % (q(work + "/L-store"), q(work + "/L-store")),
                          command="%s | xargs -0 -P%d -n%d sh -c 'zstd -qdc \"$@\" | tar -xi -C %s' _"
                                  % (find_large, ncpu, large_count // ncpu + 1, q(work + "/L-store")))
rows["limitDurableLarge"] = dict(label="large bundles: limit, durable (then syncfs)",
                                 prepare="rm -rf %s && mkdir -p %s" % (q(work + "/L-store"), q(work + "/L-store")),
                                 command="%s | xargs -0 -P%d -n%d sh -c 'zstd -qdc \"$@\" | tar -xi -C %s' _ && sync -f %s"
                                         % (find_large, ncpu, large_count // ncpu + 1, q(work + "/L-store"), q(work + "/L-store")))
# Issue 43: the large-bundle world against the user's shell pipeline too, and `--sync` (today's
# durable build, on request) against the durable limit.
rows["baselineLarge"] = dict(label="large bundles: baseline.sh (curl, sha256sum, zstd|tar, du)",
                             prepare="rm -rf %s %s" % (q(work + "/L-bstore"), q(work + "/L-bstore.work")),
                             command="bash %s %s %s" % (q(root + "/Benchmarks/baseline.sh"), q(large["url"]), q(work + "/L-bstore")))
rows["coldLargeSync"] = dict(label="large bundles: mappack build --sync, cold",
                             prepare="rm -rf %s %s" % (q(work + "/L-cache"), q(work + "/L-out")),
                             command="%s build --sync %s --cache %s --out %s" % (q(mappack), q(recipe_large), q(work + "/L-cache"), q(work + "/L-out")))
# Issue 43's own world shape (1 GiB in about 53k files; see run.sh): the cold build against the
# user's shell pipeline and the limit, as on the large-bundle world.
few_bundles = few["folder"] + "/published/bundles"
few_count = int(sh("find %s -type f -name '*.tar.zst' | wc -l" % q(few_bundles), capture=True).stdout)
rows["coldFew"] = dict(label="few files (issue 43's world): mappack build, cold",
                       prepare="rm -rf %s %s" % (q(work + "/F-cache"), q(work + "/F-out")),
                       command="%s build %s --cache %s --out %s" % (q(mappack), q(recipe_few), q(work + "/F-cache"), q(work + "/F-out")))
rows["baselineFew"] = dict(label="few files: baseline.sh (curl, sha256sum, zstd|tar, du)",
                           prepare="rm -rf %s %s" % (q(work + "/F-bstore"), q(work + "/F-bstore.work")),
                           command="bash %s %s %s" % (q(root + "/Benchmarks/baseline.sh"), q(few["url"]), q(work + "/F-bstore")))
rows["limitFew"] = dict(label="few files: limit, zstd -dc | tar -x",
                        prepare="rm -rf %s && mkdir -p %s" % (q(work + "/F-store"), q(work + "/F-store")),
                        command="find %s -type f -name '*.tar.zst' -print0 | xargs -0 -P%d -n%d sh -c 'zstd -qdc \"$@\" | tar -xi -C %s' _"
                                % (q(few_bundles), ncpu, few_count // ncpu + 1, q(work + "/F-store")))
order = ["cold", "noop", "verify", "sha256c", "install", "installFull", "copy", "baseline", "limitExtract", "limitDurable", "limitSha",
         "coldLarge", "coldLargeSync", "baselineLarge", "limitLarge", "limitDurableLarge", "coldFew", "baselineFew", "limitFew"]

# --against OLD: the mappack rows again with the older binary (own output and cache folders), in the
# same rounds, so both see the same machine; reported as new / old.
compared = ["cold", "noop", "verify", "install", "coldLarge"] if args.against else []
old_image = work + "/o-out/bench-" + main["mapVersion"]
if compared:
    old_build = "%s build %s --cache %s --out %s" % (q(args.against), q(recipe_main), q(work + "/o-cache"), q(work + "/o-out"))
    rows["old:cold"] = dict(label="(old) " + rows["cold"]["label"], prepare="rm -rf %s %s" % (q(work + "/o-cache"), q(work + "/o-out")),
                            command=old_build)
    rows["old:noop"] = dict(label="(old) " + rows["noop"]["label"], prepare="", command=old_build)
    rows["old:verify"] = dict(label="(old) " + rows["verify"]["label"], prepare="", command="%s verify %s" % (q(args.against), q(old_image)))
    rows["old:install"] = dict(label="(old) " + rows["install"]["label"],
                               prepare="rm -rf %s %s" % (q(work + "/i-store"), q(work + "/i-cache")),
                               command="%s store install --image %s --storage %s --cache %s"
                                       % (q(args.against), q(old_image), q(work + "/i-store"), q(work + "/i-cache")))
    rows["old:coldLarge"] = dict(label="(old) " + rows["coldLarge"]["label"],
                                 prepare="rm -rf %s %s" % (q(work + "/oL-cache"), q(work + "/oL-out")),
                                 command="%s build %s --cache %s --out %s"
                                         % (q(args.against), q(recipe_large), q(work + "/oL-cache"), q(work + "/oL-out")))
    for key in compared:
        order.insert(order.index(key) + 1, "old:" + key)
if args.rows:
    wanted = set(args.rows.split(","))
    unknown = wanted - set(order)
    if unknown:
        sys.exit("bench: --rows: unknown row(s) %s; known: %s" % (", ".join(sorted(unknown)), ", ".join(order)))
    order = [key for key in order if key in wanted]
    compared = [key for key in compared if key in wanted and "old:" + key in wanted]
for key in order:
    rows[key]["seconds"] = []
    rows[key]["cpuSeconds"] = []


def timed(row):
    if row["prepare"]:
        sh(row["prepare"])
    sh("sync")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(["bash", "-c", row["command"]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit("bench: '%s' failed (%d):\n%s" % (row["label"], result.returncode, result.stderr[-4000:]))
    row["seconds"].append(elapsed)
    row["cpuSeconds"].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return elapsed


log("world %s GiB: %d bundles, %.1f MiB compressed, %.1f MiB unpacked, %d files; %d alternating runs"
    % (args.size, main["bundles"], main["bundleBytes"] / 2**20, main["unpackedBytes"] / 2**20, main["files"], runs))
for round_number in range(1, runs + 1):
    for key in order:
        seconds = timed(rows[key])
        log("round %d/%d  %-13s %8.2f s" % (round_number, runs, key, seconds))
        if key == "cold" and round_number == 1 and "sha256c" in order:
            # The check list for `sha256sum -c`: the same files and digests that `mappack verify` checks.
            manifest = json.load(open(image + "/manifest.json"))
            with open(work + "/image.sums", "w") as f:
                for entry in manifest["files"]:
                    f.write("%s  %s\n" % (entry["sha256"].split(":")[-1], entry["path"]))

for key in ("b-store", "l-store", "d-store", "i-store", "i-cache", "c-store", "L-cache", "L-out", "L-store", "L-bstore",
            "oL-cache", "oL-out", "F-cache", "F-out", "F-store", "F-bstore", "F-bstore.work"):
    shutil.rmtree(work + "/" + key, ignore_errors=True)


# --- peak RSS at two world sizes ----------------------------------------------------------------
def peak_rss(command):
    result = sh("/usr/bin/time -v " + command, capture=True)
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    return int(match.group(1)) / 1024.0


rss = {}
for name, world, path in () if args.rows else (("size", main, recipe_main), ("quarter", small, recipe_small)):
    out, cache = work + "/rss-out-" + name, work + "/rss-cache-" + name
    sh("rm -rf %s %s && sync" % (q(out), q(cache)))
    build = peak_rss("%s build %s --cache %s --out %s" % (q(mappack), q(path), q(cache), q(out)))
    verify = peak_rss("%s verify %s" % (q(mappack), q(out + "/bench-" + world["mapVersion"])))
    # A device's first start: the image installed into a fresh storage folder (quick check, as the
    # "install" row), issue 34.
    storage, device_cache = work + "/rss-storage-" + name, work + "/rss-device-cache-" + name
    install = peak_rss("%s store install --image %s --storage %s --cache %s"
                       % (q(mappack), q(out + "/bench-" + world["mapVersion"]), q(storage), q(device_cache)))
    rss[name] = {"gib": world["bundleBytes"] / 2**30, "buildMiB": build, "verifyMiB": verify, "installMiB": install}
    log("peak RSS at %.3f GiB: build %.1f MiB, verify %.1f MiB, install %.1f MiB" % (rss[name]["gib"], build, verify, install))
    sh("rm -rf %s %s %s %s" % (q(out), q(cache), q(storage), q(device_cache)))

# --- plan on the full world catalog (hyperfine) -------------------------------------------------
plan_json = work + "/plan-hyperfine.json"
plan_cmd = "%s plan %s --cache %s" % (mappack, recipe_full, work + "/plan-cache")
old_plan_cmd = "%s plan %s --cache %s" % (args.against, recipe_full, work + "/plan-cache") if args.against else ""
plan, old_plan, plan_ms = None, None, None
if not args.rows:
    sh("hyperfine -N --style none --warmup 2 --runs %d --export-json %s %s %s"
       % (max(10, runs), q(plan_json), q(plan_cmd), q(old_plan_cmd) if old_plan_cmd else ""))
    plan = json.load(open(plan_json))["results"][0]
    old_plan = json.load(open(plan_json))["results"][1] if old_plan_cmd else None
    plan_ms = plan["median"] * 1000

# --- report -------------------------------------------------------------------------------------
med = {key: statistics.median(rows[key]["seconds"]) for key in order}


def over(a, b):
    """The ratio of two rows' medians; None when either did not run (--rows)."""
    return med[a] / med[b] if a in med and b in med else None


ratios = {
    "coldOverBaseline": over("cold", "baseline"),
    "coldOverLimit": over("cold", "limitExtract"),
    "coldOverDurableLimit": over("cold", "limitDurable"),
    "durableLimitOverLimit": over("limitDurable", "limitExtract"),
    "coldLargeOverLimit": over("coldLarge", "limitLarge"),
    "coldLargeOverDurableLimit": over("coldLarge", "limitDurableLarge"),
    "coldLargeOverBaseline": over("coldLarge", "baselineLarge"),
    "coldLargeSyncOverDurableLimit": over("coldLargeSync", "limitDurableLarge"),
    "coldFewOverBaseline": over("coldFew", "baselineFew"),
    "coldFewOverLimit": over("coldFew", "limitFew"),
    "noopOverCold": over("noop", "cold"),
    "verifySpeedup": over("sha256c", "verify"),
    "peakRssMiB": max(max(r["buildMiB"], r["verifyMiB"]) for r in rss.values()) if rss else None,
    "buildRssMiB": max(r["buildMiB"] for r in rss.values()) if rss else None,
    "installRssMiB": max(r["installMiB"] for r in rss.values()) if rss else None,
    "planMs": plan_ms,
    "installFullOverInstall": over("installFull", "install"),
    "installOverCopy": over("install", "copy"),
    # Issue 43: a default build against the older binary's (--against), both worlds.
    "coldOverOld": over("cold", "old:cold"),
    "coldLargeOverOld": over("coldLarge", "old:coldLarge"),
}
# Issue 34's goals (the earlier, looser ones are in Benchmarks/HISTORY.md).
targets = [
    ("cold build / baseline", "coldOverBaseline", "<=", 0.35, "%.2fx"),
    ("cold build / limit (zstd|tar)", "coldOverLimit", "<=", 1.1, "%.2fx"),
    ("cold build / durable limit (then syncfs)", "coldOverDurableLimit", "<=", 0.6, "%.2fx"),
    # Issue 43's goals for the large-bundle world: builds are not synced by default, `--sync` is.
    ("large bundles: cold build / shell pipeline", "coldLargeOverBaseline", "<=", 0.45, "%.2fx"),
    ("large bundles: cold build / limit", "coldLargeOverLimit", "<=", 0.9, "%.2fx"),
    ("large bundles: build --sync / durable limit", "coldLargeSyncOverDurableLimit", "<=", 1.1, "%.2fx"),
    # The same two goals on issue 43's own world shape (1 GiB in about 53k files).
    ("few files: cold build / shell pipeline", "coldFewOverBaseline", "<=", 0.45, "%.2fx"),
    ("few files: cold build / limit", "coldFewOverLimit", "<=", 0.9, "%.2fx"),
    ("no-op rebuild / cold build", "noopOverCold", "<=", 0.005, "%.2f%%"),
    ("verify speedup over sha256sum -c", "verifySpeedup", ">=", 3.0, "%.2fx"),
    ("peak RSS, build and verify, both sizes", "peakRssMiB", "<=", 64, "%.1f MiB"),
    ("peak RSS of a cold build, both sizes", "buildRssMiB", "<=", 48, "%.1f MiB"),
    ("peak RSS of a device install, both sizes", "installRssMiB", "<=", 32, "%.1f MiB"),
    ("quick install / cp -r then sync", "installOverCopy", "<=", 1.0, "%.2fx"),
    ("plan on the --full catalog", "planMs", "<=", 40, "%.1f ms"),
]

# Issue 43: a default build is no slower than the older binary's on the small-file world.
targets.append(("cold build / --against binary's, small files", "coldOverOld", "<=", 1.0, "%.2fx"))
targets = [t for t in targets if ratios[t[1]] is not None]


def shown(fmt, value):
    return fmt % (value * 100) if fmt.endswith("%%") else fmt % value


verdicts = []
for name, key, op, goal, fmt in targets:
    value = ratios[key]
    ok = value <= goal if op == "<=" else value >= goal
    off = value / goal if op == "<=" else goal / value
    verdicts.append({"target": name, "key": key, "value": value, "goal": "%s %s" % (op, shown(fmt, goal)),
                     "pass": ok, "missFactor": None if ok else off})

mib = main["bundleBytes"] / 2**20
print()
print("mappack benchmarks  %s  world %s GiB: %d bundles, %.0f MiB compressed, %.0f MiB unpacked, %d files; %d cores, %d runs"
      % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), args.size, main["bundles"], mib, main["unpackedBytes"] / 2**20,
         main["files"], ncpu, runs))
print("large-bundle world: %d bundles, %.0f MiB compressed, %.0f MiB unpacked, %d files"
      % (large["bundles"], large["bundleBytes"] / 2**20, large["unpackedBytes"] / 2**20, large["files"]))
print("few-files world (issue 43's shape): %d bundles, %.0f MiB compressed, %.0f MiB unpacked, %d files"
      % (few["bundles"], few["bundleBytes"] / 2**20, few["unpackedBytes"] / 2**20, few["files"]))
print("work folder on: %s" % args.work_fs)
print()
print("%-58s %9s %9s %9s %8s %9s" % ("row", "median s", "min s", "max s", "cpu s", "MiB/s"))
for key in order:
    row = rows[key]
    print("%-58s %9.2f %9.2f %9.2f %8.1f %9.0f" % (row["label"][:58], med[key], min(row["seconds"]), max(row["seconds"]),
                                                statistics.median(row["cpuSeconds"]),
                                                (large["bundleBytes"] / 2**20 if key.endswith("Large") else
                                                 mib if key not in ("verify", "sha256c", "install", "installFull", "copy")
                                                 else main["unpackedBytes"] / 2**20) / med[key]))
if plan:
    print("%-58s %9.1f ms (hyperfine, %d runs, ± %.1f ms)" % ("mappack plan, --full catalog (%d regions)" % full["regions"], plan_ms,
                                                            len(plan["times"]), plan["stddev"] * 1000))
for name, r in rss.items():
    print("%-58s build %6.1f MiB   verify %6.1f MiB   install %6.1f MiB"
          % ("peak RSS at %.3f GiB" % r["gib"], r["buildMiB"], r["verifyMiB"], r["installMiB"]))
for label, key in (("cold build / durable limit (zstd|tar, then syncfs)", "coldOverDurableLimit"),
                   ("durable limit / limit (what the syncfs costs)", "durableLimitOverLimit"),
                   ("large bundles: cold build / durable limit", "coldLargeOverDurableLimit"),
                   ("install --full / quick install", "installFullOverInstall"),
                   ("quick install / cp -r", "installOverCopy")):
    if ratios[key] is not None:
        print("%-58s %8.2fx" % (label, ratios[key]))
if compared:
    print()
    print("side by side with %s (medians of the same rounds)" % args.against)
    print("%-58s %9s %9s %9s" % ("row", "new s", "old s", "new/old"))
    for key in compared:
        print("%-58s %9.2f %9.2f %8.2fx" % (rows[key]["label"][:58], med[key], med["old:" + key], med[key] / med["old:" + key]))
    if plan:
        print("%-58s %9.1f %9.1f %8.2fx" % ("mappack plan, --full catalog (ms)", plan_ms, old_plan["median"] * 1000,
                                            plan["median"] / old_plan["median"]))
print()
for v, (name, key, op, goal, fmt) in zip(verdicts, targets):
    extra = "" if v["pass"] else "   (%.2fx off the target)" % v["missFactor"]
    print("%-4s %-42s %12s   target %s%s" % ("PASS" if v["pass"] else "MISS", name, shown(fmt, v["value"]), v["goal"], extra))

report = {
    "format": "mappack-bench/1",
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    "machine": {"cores": ncpu, "kernel": os.uname().release, "workFilesystem": args.work_fs},
    "sizeGiB": float(args.size), "runs": runs,
    "world": {k: main[k] for k in ("scale", "bundles", "regions", "bundleBytes", "unpackedBytes", "files")},
    "largeWorld": {k: large[k] for k in ("scale", "bundles", "regions", "bundleBytes", "unpackedBytes", "files")},
    "fewFilesWorld": {k: few[k] for k in ("scale", "bundles", "regions", "bundleBytes", "unpackedBytes", "files")},
    "rows": {key: {"label": rows[key]["label"], "command": rows[key]["command"], "seconds": rows[key]["seconds"],
                   "median": med[key], "cpuSeconds": rows[key]["cpuSeconds"]} for key in order},
    "plan": {"command": plan_cmd, "regions": full["regions"], "medianMs": plan_ms, "meanMs": plan["mean"] * 1000,
             "stddevMs": plan["stddev"] * 1000, "runs": len(plan["times"])} if plan else None,
    "rss": rss,
    "ratios": ratios,
    "targets": verdicts,
}
if compared:
    report["against"] = {"binary": args.against, "newOverOld": {key: med[key] / med["old:" + key] for key in compared},
                         "planNewOverOld": plan["median"] / old_plan["median"] if plan else None}
with open(bench + "/report.json", "w") as f:
    json.dump(report, f, indent=2, sort_keys=True)
    f.write("\n")
print("\nreport: %s" % (bench + "/report.json"))
shutil.rmtree(work + "/m-out", ignore_errors=True)
shutil.rmtree(work + "/m-cache", ignore_errors=True)
