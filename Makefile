# mappack — make demo · make test · make bench · make deps
SHELL := /bin/bash
# The project-local Python (.venv) for the real world and the outside checkers (`make venv`); first,
# so its REALWORLD_APT is known to APT_PACKAGES below.
include Tools/realworld/venv.mk
.DEFAULT_GOAL := deps
# erofs-utils and cryptsetup-bin make and check the erofs output (mkfs.erofs, fsck.erofs,
# veritysetup); xfsprogs makes the XFS filesystem the reflink tests and bench copy on.
APT_PACKAGES := libcurl4-openssl-dev libarchive-dev libzstd-dev zlib1g-dev libsqlite3-dev libyaml-dev libssl-dev \
                pkg-config iso-codes nginx-light zstd sqlite3 libarchive-tools hyperfine python3 python3-jsonschema openssl \
                minisign chromium chromium-driver fuse3 python3-pyfuse3 libzck-dev zchunk time erofs-utils cryptsetup-bin xfsprogs \
                $(REALWORLD_APT)
SWIFT_FLAGS ?=
RELEASE := .build/release
# Release binaries carry the Swift runtime and Foundation inside (one self-contained file that runs on
# a CI runner without a Swift toolchain): an idle process is 23 MB resident instead of 30 MB, and
# starting one runs 27 M instructions instead of 46 M (61 shared libraries to load and relocate).
RELEASE_FLAGS := --static-swift-stdlib
DEMO_VERSION := 2026.11.0
# Where demo-world puts the demo world and its published catalog, and extra demo-world options
# (tests make a small world elsewhere).
DEMO_OUT := Output
DEMO_WORLD_OPTIONS :=
DEMO_SOURCE := $(DEMO_OUT)/demo-world-source/$(DEMO_VERSION)
DEMO_CATALOG := $(DEMO_OUT)/demo-world/$(DEMO_VERSION)
DEMO_STAMP := $(DEMO_OUT)/demo-world-$(DEMO_VERSION).stamp
# The real world `make demo` builds from (Tools/realworld), and the device folder it installs into.
REAL_VERSION := 2026.12.0
REAL_WORLD_OPTIONS :=
REAL_SOURCE := $(DEMO_OUT)/real-world-source/$(REAL_VERSION)
REAL_CATALOG := $(DEMO_OUT)/real-world/$(REAL_VERSION)
REAL_STAMP := $(DEMO_OUT)/real-world-$(REAL_VERSION).stamp
DEVICE := $(DEMO_OUT)/device

.PHONY: deps build release-hooks-check demo demo-world real-world test portable powercut format format-check bench fuzz fuzz-check man docs clean

## deps: install the Debian packages mappack needs (quiet and quick when present)
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

## build: release binaries (mappack, demo-world); fails when a test hook (crash points, the test
## pause, fuzz entry points: debug builds only, see Package.swift) is compiled into the release mappack
build: deps
	swift build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS) --product mappack
	swift build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS) --product demo-world
	@$(MAKE) -s release-hooks-check

## release-hooks-check: the release mappack (MapStore and MapBuild inside) names no test hook
release-hooks-check:
	@found=$$(strings $(RELEASE)/mappack | grep -E -o 'MAPSTORE_(CRASH|STOP)_AT|MAPPACK_TEST_PAUSE_(AT|SECONDS)|MAPPACK_FUZZ_BUNDLES|MAPPACK_TEST_BOOT_ID|MAPPACK_TEST_FREE_BYTES' | sort -u | tr '\n' ' '); \
	if [ -n "$$found" ]; then echo "release-hooks-check: $(RELEASE)/mappack holds test hooks: $$found(build them under MAPPACK_TEST_HOOKS)" >&2; exit 1; fi; \
	echo "release-hooks-check: $(RELEASE)/mappack holds no test hooks"

## demo: make a real world (Natural Earth countries, GeoNames cities; reused when unchanged), publish it,
## build Recipes/demo.yaml (Europe), verify the image, install it into a device store and verify that
# The build uses the default download cache, the one `mappack plan Recipes/demo.yaml` looks in.
demo: build venv
	@$(MAKE) -s real-world
	$(RELEASE)/mappack build Recipes/demo.yaml
	$(RELEASE)/mappack verify Output/demo-$(REAL_VERSION)
	rm -rf $(DEVICE) && $(RELEASE)/mappack store install --image Output/demo-$(REAL_VERSION).tar.zst --storage $(DEVICE)/storage --cache $(DEVICE)/cache
	$(RELEASE)/mappack verify $(DEVICE)/storage
	@echo "demo image: $$(pwd)/Output/demo-$(REAL_VERSION)  (packed: .tar.zst; tiles: .mbtiles, .maplibre.db, .pmtiles)"
	@echo "installed on a device folder: $$(pwd)/$(DEVICE)/storage"
	@echo "look at it: $(RELEASE)/mappack serve $(DEVICE)/storage --cache $(DEVICE)/cache   (then open the URL it prints)"

## real-world: make the real world's source folder (Tools/realworld/make_real_world.py) and publish it,
## unless the published one came from the same generator, requirements, mappack binary and options
real-world: venv
	@inputs="$(REAL_VERSION) [$(REAL_WORLD_OPTIONS)] $$(cat $(REALWORLD_DIR)/make_real_world.py $(REALWORLD_REQUIREMENTS) $(RELEASE)/mappack | sha256sum | cut -c1-64)"; \
	catalog="$(REAL_CATALOG)/catalog.json"; \
	if [ -f "$$catalog" ] && [ "$$(cat "$(REAL_STAMP)" 2>/dev/null)" = "$$inputs $$(sha256sum < "$$catalog" | cut -c1-64)" ]; then \
	  echo "real world: $(REAL_CATALOG) is up to date (same generator, binaries and options; rm $(REAL_STAMP) to remake it)"; \
	else \
	  rm -f "$(REAL_STAMP)" && \
	  $(REALWORLD_PYTHON) $(REALWORLD_DIR)/make_real_world.py --out $(REAL_SOURCE) --map-version $(REAL_VERSION) $(REAL_WORLD_OPTIONS) && \
	  $(RELEASE)/mappack publish $(REAL_SOURCE) --out $(REAL_CATALOG) && \
	  echo "$$inputs $$(sha256sum < "$$catalog" | cut -c1-64)" > "$(REAL_STAMP)"; \
	fi

## demo-world: generate and publish the synthetic demo world (scale tests, benchmarks, Recipes/synthetic.yaml), unless the published one came from the same
## binaries, map version and options and its catalog is untouched (a stamp records them)
demo-world:
	@inputs="$(DEMO_VERSION) [$(DEMO_WORLD_OPTIONS)] $$(cat $(RELEASE)/demo-world $(RELEASE)/mappack | sha256sum | cut -c1-64)"; \
	catalog="$(DEMO_CATALOG)/catalog.json"; \
	if [ -f "$$catalog" ] && [ "$$(cat "$(DEMO_STAMP)" 2>/dev/null)" = "$$inputs $$(sha256sum < "$$catalog" | cut -c1-64)" ]; then \
	  echo "demo world: $(DEMO_CATALOG) is up to date (same binaries, version and options; rm $(DEMO_STAMP) to remake it)"; \
	else \
	  rm -f "$(DEMO_STAMP)" && \
	  $(RELEASE)/demo-world --out $(DEMO_SOURCE) --map-version $(DEMO_VERSION) $(DEMO_WORLD_OPTIONS) && \
	  $(RELEASE)/mappack publish $(DEMO_SOURCE) --out $(DEMO_CATALOG) && \
	  echo "$$inputs $$(sha256sum < "$$catalog" | cut -c1-64)" > "$(DEMO_STAMP)"; \
	fi

## test: the whole suite (unit, nginx-backed network tests, end-to-end CLI tests)
# Two runs: MapStore's tests (async, timing-sensitive downloads against slow servers) first, on their
# own, then every other target. Run together, the end-to-end tests' long synchronous builds held the
# cooperative pool's threads (two on two cores) and starved the MapStore tests' download tasks.
test: deps venv format-check portable
	swift build --build-tests $(SWIFT_FLAGS)
	@$(MAKE) -s fuzz-check
	Tests/Support/suite.sh mapstore swift test --skip-build $(SWIFT_FLAGS) --filter MapStoreTests
	Tests/Support/suite.sh others swift test --skip-build $(SWIFT_FLAGS) --skip MapStoreTests

## format: reformat every Swift file with the toolchain's swift-format (.swift-format: 4 spaces,
## lines up to 150 columns; OnlyOneTrailingClosureArgument off); format-check: fail when a file is
## not formatted (part of make test)
format:
	swift format format --in-place --recursive --parallel Package.swift Sources Tests Examples
format-check:
	swift format lint --strict --recursive --parallel Package.swift Sources Tests Examples

## powercut: the whole power-cut crash matrix on the FUSE filesystem (Tests/Support/powercut_*.py; not part
##   of test, which runs a sampled subset); prints cut points tried, states checked, failures
powercut: deps
	swift build $(SWIFT_FLAGS) --product mappack
	swift build $(SWIFT_FLAGS) --product demo-world
	/usr/bin/python3 Tests/Support/powercut_selftest.py
	/usr/bin/python3 Tests/Support/powercut_matrix.py --bin .build/debug $(POWERCUT)

## portable: MapStore built with the non-Linux fallbacks forced on (see ARCHITECTURE.md, Portability)
portable:
	swift build --target MapStore --scratch-path .build/portable -Xswiftc -DMAPPACK_PORTABLE -Xcc -DMAPPACK_PORTABLE $(SWIFT_FLAGS)

## bench: benchmarks (not part of test); options through BENCH, e.g.
##   make bench BENCH="--size 0.1 --against /path/to/older/release/mappack"
bench: build
	bash Benchmarks/run.sh $(BENCH)

## man: the man page, made from the verbs' declarations
man: build
	mkdir -p Output && $(RELEASE)/mappack help --man > Output/mappack.1 && echo "man page: Output/mappack.1 (man -l Output/mappack.1)"

## docs: MapStore's DocC documentation (Sources/MapStore/MapStore.docc) into Output/MapStore.doccarchive,
## with the toolchain's swift symbolgraph-extract and docc (no plugin)
docs:
	swift build $(SWIFT_FLAGS) --target MapStore
	rm -rf Output/symbol-graphs && mkdir -p Output/symbol-graphs
	swift symbolgraph-extract -module-name MapStore -I .build/debug/Modules -output-dir Output/symbol-graphs \
	  -minimum-access-level public $(foreach m,$(wildcard Sources/C*/module.modulemap),-Xcc -fmodule-map-file=$(abspath $(m)))
	docc convert Sources/MapStore/MapStore.docc --additional-symbol-graph-dir Output/symbol-graphs \
	  --output-path Output/MapStore.doccarchive --fallback-display-name MapStore --fallback-bundle-identifier mappack.MapStore
	@echo "MapStore documentation: Output/MapStore.doccarchive (docc preview Sources/MapStore/MapStore.docc --additional-symbol-graph-dir Output/symbol-graphs)"

clean:
	rm -rf .build Output/*/ Output/*.tar.zst

## fuzz: libFuzzer targets for the recipe, catalog, manifest, bundle and GeoJSON parsers (FUZZ_SECONDS each; not part of test)
fuzz: deps
	bash Fuzz/run.sh

## fuzz-check: type-checks the libFuzzer driver (FuzzMain.swift under -D FUZZING, which only make fuzz
## compiles) against the debug build's modules with the strict settings of Package.swift's
## strictSettings (keep the two in step); part of test, a few seconds
fuzz-check:
	swiftc -typecheck -parse-as-library -swift-version 6 -strict-memory-safety \
	  -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility -warnings-as-errors \
	  -DFUZZING -DSWIFT_PACKAGE -I .build/debug/Modules -module-cache-path .build/debug/ModuleCache \
	  $(foreach map,$(wildcard Sources/C*/module.modulemap),-Xcc -fmodule-map-file=$(map)) \
	  -package-name "$$(grep -o -m1 '"-package-name","[^"]*"' .build/debug.yaml | cut -d'"' -f4)" \
	  Sources/mappack-fuzz/FuzzMain.swift
	@echo "fuzz-check: the libFuzzer driver type-checks"
