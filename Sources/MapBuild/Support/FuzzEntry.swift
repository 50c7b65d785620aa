import Foundation
import MapFormat
import MapIO

/// The inputs mappack parses from untrusted sources, as fuzz entry points. The libFuzzer binary
/// (`make fuzz`) and the regression tests run crash inputs through exactly these functions.
package enum FuzzEntry: String, CaseIterable, Sendable {
    case recipe, catalog, manifest, extractor

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
        _ = try? SafeExtractor(limits: limits, durable: false).extract(archive: scratch + "/input.tar.zst", into: scratch + "/out")
    }
}
