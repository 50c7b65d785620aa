import Foundation
import MapFetch
import MapFormat
import MapIO
import MapVerify

#if MAPPACK_TEST_HOOKS || FUZZING
    /// The inputs mappack parses from untrusted sources, as fuzz entry points. The libFuzzer binary
    /// (`make fuzz`) and the regression tests run crash inputs through exactly these functions.
    ///
    /// Compiled only into test builds: debug (`MAPPACK_TEST_HOOKS`, see `Package.swift`) and the
    /// libFuzzer build (`-D FUZZING`, `Fuzz/run.sh`), never into a release `mappack`.
    package enum FuzzEntry: String, CaseIterable, Sendable {
        case recipe, catalog, manifest, extractor, build, catalogSignature, geojson

        /// Parses `data` as this kind of input; any error is fine, a crash or trap is a bug.
        package func run(_ data: Data) {
            switch self {
            case .recipe:
                _ = try? Recipe.parse(data, file: "fuzz.yaml")
            case .catalog:
                if let tree = try? CatalogSource.decode(data, url: URL(fileURLWithPath: "/fuzz/catalog.json")) {
                    _ = try? tree.resolve(include: tree.roots.prefix(2).map { RegionSelector($0.rawValue) }, exclude: [])
                }
            case .manifest:
                if let (manifest, _) = try? ImageVerifier.readManifest(data, file: "fuzz/manifest.json") {
                    _ = manifest.derivedSizesOnDisk()
                }
            case .extractor:
                FuzzEntry.extract(data)
            case .catalogSignature:
                _ = try? FuzzEntry.checkCatalogSignature(data)
            case .geojson:
                _ = FuzzEntry.readGeoJSON(data)
            case .build:
                // libFuzzer calls from its own thread, never the cooperative pool, so waiting here is safe.
                let done = DispatchSemaphore(value: 0)
                Task {
                    await FuzzEntry.build(data)
                    done.signal()
                }
                done.wait()
            }
        }

        /// Reads the bytes as `mappack import`'s boundaries and as its places (the streamed GeoJSON
        /// reader), from a scratch file; what each refusal was, nil where the bytes were accepted.
        static func readGeoJSON(_ data: Data) -> (regions: ImportError?, places: ImportError?) {
            let file = NSTemporaryDirectory() + "/mappack-fuzz-geojson-\(getpid()).json"
            defer { try? FileManager.default.removeItem(atPath: file) }
            do { try data.write(to: URL(fileURLWithPath: file)) } catch { return (.failed(reason: "\(error)"), .failed(reason: "\(error)")) }
            var refused: (regions: ImportError?, places: ImportError?) = (nil, nil)
            do { _ = try GeoJSONInput.regions(file: file) } catch { refused.regions = error }
            do { try GeoJSONInput.forEachPlace(file: file, restart: {}, { _ in }) } catch { refused.places = error }
            return refused
        }

        /// A key the fuzzed signatures are checked against, made once per process.
        private static let trustedKey = TrustedKey(path: "fuzz.pub", text: Ed25519.generate().publicKey)

        /// Checks the bytes as a `catalog.json.sig` over a fixed catalog, against a trusted key and a
        /// catalog seen before (so the rollback, mix-and-match and expiry checks are reached too).
        static func checkCatalogSignature(_ data: Data) throws(CatalogTrustError) -> SeenCatalog {
            let catalog = Data("{}".utf8)
            let seen = SeenCatalog(version: 5, sha256: SHA256.digest(catalog), keys: [])
            return try CatalogTrust.check(
                catalogBytes: catalog, signature: data, source: "fuzz/catalog.json.sig", trusted: [trustedKey], seen: seen,
                now: Date(timeIntervalSince1970: 1_790_000_000))
        }

        /// Takes the bytes as a catalog through the whole build without network: plan the first two
        /// root regions, resolve and fetch bundle URLs (`file://` only, an offline build), verify,
        /// unpack, write manifest, cache seed and packed image into a scratch folder.
        ///
        /// Relative bundle URLs resolve against the scratch folder, where `bundles` links to the
        /// folder named by `MAPPACK_FUZZ_BUNDLES` (a published world's `bundles/`, set by `make fuzz`)
        /// so the seed catalog builds for real.
        /// The build's error, nil when the catalog built (the replay tests want every regression input refused).
        @discardableResult
        static func build(_ data: Data, bundles: String? = ProcessInfo.processInfo.environment["MAPPACK_FUZZ_BUNDLES"]) async -> (any Error)? {
            let scratch = NSTemporaryDirectory() + "/mappack-fuzz-build-\(getpid())-\(UUID().uuidString)"
            try? FileSystem.removeTree(scratch)
            defer { try? FileSystem.removeTree(scratch) }
            do {
                try FileSystem.makeDirectories(scratch)
                if let bundles { try? FileManager.default.createSymbolicLink(atPath: scratch + "/bundles", withDestinationPath: bundles) }
                try FileSystem.writeAtomically(data, to: scratch + "/catalog.json")
                let tree = try CatalogSource.decode(data, url: URL(fileURLWithPath: scratch + "/catalog.json"))
                // Quoted for YAML: a root id may hold any character the catalog allows.
                let include = tree.roots.prefix(2).map {
                    "\"" + $0.rawValue.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
                }
                .joined(separator: ", ")
                let recipeText = "name: fuzz\ncatalog: catalog.json\nregions:\n  include: [\(include)]\ncacheSeed:\n  include: [\(include)]\n"
                var recipe = try Recipe.parse(Data(recipeText.utf8), file: scratch + "/fuzz.yaml")
                recipe.catalogURL = URL(fileURLWithPath: scratch + "/catalog.json")
                let cache = DownloadCache(root: scratch + "/cache", durable: false)
                var options = BuildOptions(outputRoot: scratch + "/out", cache: cache, jobs: 2, sourceDateEpoch: 0)
                options.offline = true
                let builder = ImageBuilder(plan: try BuildPlan.make(recipe: recipe, cache: cache), options: options)
                _ = try await builder.run { _ in }
                return nil
            } catch {
                return error
            }
        }

        /// Writes the bytes as a `.tar.zst` and extracts it with tight limits into a scratch folder.
        /// Bytes that are not zstd are compressed first: mutations of a raw tar reach the tar reader's
        /// header parsing, where mutations of compressed bytes mostly stop at the zstd decoder.
        private static func extract(_ input: Data) {
            let data = input.starts(with: Zstd.magic) ? input : Zstd.compress(input)
            let scratch = NSTemporaryDirectory() + "/mappack-fuzz-\(getpid())"
            try? FileSystem.removeTree(scratch)
            try? FileSystem.makeDirectories(scratch + "/out")
            defer { try? FileSystem.removeTree(scratch) }
            guard (try? FileSystem.writeAtomically(data, to: scratch + "/input.tar.zst")) != nil else { return }
            var limits = ExtractionLimits(maxBytes: 4 << 20, maxEntries: 2000)
            limits.windowLogMax = 24
            _ = try? SafeExtractor(limits: limits).extract(archive: scratch + "/input.tar.zst", into: scratch + "/out")
        }
    }
#endif
