import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@testable import MapBuild

@Suite struct ManifestStreamingTests {
    static let blockSize: Int64 = 4096

    func digest(_ n: Int) -> BundleDigest { BundleDigest(hex: String(repeating: String(n % 10), count: 64)) }

    func files(_ paths: [String], seed: Int) -> [ExtractedFile] {
        paths.enumerated().map { index, path in
            ExtractedFile(
                path: StorePath(alreadyChecked: path), size: Int64(seed * 1000 + index * 37), sha256: SHA256.digest(Data("\(seed)-\(path)".utf8)))
        }
    }

    /// A shell with regions (names, coordinates, slashes in strings), bundles and an empty-region cache seed,
    /// so every list the writer splices in, and the markers it looks for, are exercised.
    func shell(regions regionCount: Int = 5, bundles bundleCount: Int = 6) -> ImageManifest {
        let regions = (0..<regionCount).map { n in
            ImageRegion(
                id: RegionID("r\(n)"), parent: n == 0 ? nil : RegionID("r0"), name: "Région \(n)/Nord",
                names: ["de": "Region \(n)", "ja": "地域\(n)", "en": "Region \(n)"], bundles: [digest(n), digest(n + 1)],
                sizeOnDiskInBytes: Int64(n) * 4096, center: [Double(n) + 0.25, -12.5], bbox: [1, 2.5, 3, 4.75],
                cities: ["A \"quoted\" city"], released: "2026-0\(n + 1)-01")
        }
        let bundles = (0..<bundleCount).map { n in
            ImageBundle(digest: digest(n), size: Int64(100 + n), url: "bundles/\(n).tar.zst", files: n, unpackedSize: Int64(n) * 10)
        }
        return ImageManifest(
            name: "t", catalog: "c", mapVersion: MapVersion("1.0"), built: "2026-01-01T00:00:00Z", mappackVersion: "0",
            blockSize: Self.blockSize, language: "de", regions: regions, bundles: bundles, files: [],
            cacheSeed: ImageCacheSeed(sha256: SHA256Digest(hex: String(repeating: "a", count: 64))!, size: 1, entries: 0, regions: []))
    }

    /// The manifest streamed from spilled bundles equals, byte for byte, the one sealed in memory.
    /// With `inMemory`, the bundles at those positions keep their files in memory (no pre-encoded entries).
    func check(_ lists: [[String]], inMemory: Set<Int> = [], shell: ImageManifest? = nil) throws -> (streamed: Data, expected: Data) {
        let folder = TemporaryFolder("manifest-stream")
        let spill = try FileRecordSpill(path: folder.join("records"))
        var bundles: [UnpackedBundle] = []
        var all: [ImageFile] = []
        for (index, paths) in lists.enumerated() {
            let list = files(paths, seed: index)
            bundles.append(
                try UnpackedBundle(
                    digest: digest(index), files: list.reversed(), blockSize: Self.blockSize,
                    spill: inMemory.contains(index) ? nil : spill))
            all += list.map { ImageFile(path: $0.path, size: $0.size, sha256: $0.sha256, bundle: digest(index)) }
        }
        let path = folder.join("manifest.json")
        let id = try ManifestFileList(bundles).writeManifest(shell ?? self.shell(), to: path)
        var whole = shell ?? self.shell()
        whole.files = all.sorted { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        let (expectedID, expected) = try whole.sealed(hash: SHA256.hex)
        #expect(id == expectedID)
        return (try Data(contentsOf: URL(fileURLWithPath: path)), expected)
    }

    @Test func disjointBundlesStreamTheSameBytes() throws {
        let (streamed, expected) = try check([["regions/b/x.db", "regions/b/y.db"], ["regions/a/1.db"], ["regions/c/z.db", "regions/c/é.db"]])
        #expect(streamed == expected)
    }

    /// Regions and bundles are encoded 256 at a time and joined; spilled bundles bring entries encoded
    /// while they were unpacked, in-memory ones are encoded at the end; the joins must not show.
    @Test func manyRegionsAndBundlesAndMixedStorageStreamTheSameBytes() throws {
        let lists = (0..<40).map { n in (0..<(n % 4 + 1)).map { "regions/\(1000 + n)/f\($0).db" } }
        for inMemory: Set<Int> in [[], [0], [39], [0, 5, 6, 20], Set(0..<40)] {
            let (streamed, expected) = try check(lists, inMemory: inMemory, shell: shell(regions: 600, bundles: 513))
            #expect(streamed == expected, "in memory: \(inMemory.sorted())")
        }
    }

    @Test func interleavedBundlesAndEscapedPathsGiveTheSameBytes() throws {
        let (streamed, expected) = try check([["a/1", "c/1"], ["b/1", "d/1"]])
        #expect(streamed == expected)
        let (quoted, expectedQuoted) = try check([["a/say \"hi\".txt"], ["b/1"]])
        #expect(quoted == expectedQuoted)
    }

    @Test func aPathInTwoBundlesIsRefused() throws {
        let folder = TemporaryFolder("manifest-dup")
        let one = try UnpackedBundle(digest: digest(1), files: files(["a/1", "a/2"], seed: 1), blockSize: Self.blockSize, spill: nil)
        let two = try UnpackedBundle(digest: digest(2), files: files(["a/2", "a/3"], seed: 2), blockSize: Self.blockSize, spill: nil)
        let three = try UnpackedBundle(digest: digest(3), files: files(["a/0", "a/2", "a/9"], seed: 3), blockSize: Self.blockSize, spill: nil)
        #expect(throws: BuildError.self) { try ManifestFileList([one, two]) }
        #expect(throws: BuildError.self) { try ManifestFileList([one, three]).writeManifest(shell(), to: folder.join("m.json")) }
    }

    @Test func spillKeepsEveryRecordUnderConcurrentAppends() async throws {
        let folder = TemporaryFolder("spill")
        let spill = try FileRecordSpill(path: folder.join("records"))
        let lists = (0..<64).map { n in files((0..<(n % 7 + 1)).map { "r\(n)/f\($0)-ünï" }, seed: n) }
        let stored = try await withThrowingTaskGroup(of: (Int, FileRecordSpill.Records).self) { group in
            for (n, list) in lists.enumerated() { group.addTask { (n, try spill.append(list)) } }
            var out: [Int: FileRecordSpill.Records] = [:]
            for try await (n, records) in group { out[n] = records }
            return out
        }
        for (n, list) in lists.enumerated() { #expect(try spill.read(stored[n]!) == list) }
    }
}
