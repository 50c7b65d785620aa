import Foundation
import MapFetch
import MapFormat
import TestSupport
import Testing

/// `DownloadCache.held`: one listing of the cache's folders answers as `contains` does digest by
/// digest, links and misplaced files included.
@Suite struct DownloadCacheHeldTests {
    /// A digest whose hex starts with `prefix` and repeats `fill`.
    static func digest(_ prefix: String, _ fill: Character) -> BundleDigest {
        BundleDigest(hex: prefix + String(repeating: fill, count: 64 - prefix.count))
    }

    @Test func answersAsContainsDoesForEachDigest() throws {
        let folder = TemporaryFolder("cache-held")
        let cache = DownloadCache(root: folder.join("cache"))
        let files = FileManager.default
        let top = folder.join("cache/sha256")
        let regular = Self.digest("aa", "1")
        let link = Self.digest("aa", "2")
        let misplaced = Self.digest("bb", "3")
        let folderNamed = Self.digest("aa", "4")
        let absent = Self.digest("cc", "5")
        let throughLinkedFolder = Self.digest("dd", "6")
        try files.createDirectory(atPath: top + "/aa", withIntermediateDirectories: true)
        try files.createDirectory(atPath: top + "/bb", withIntermediateDirectories: true)
        try files.createDirectory(atPath: folder.join("elsewhere"), withIntermediateDirectories: true)
        #expect(files.createFile(atPath: top + "/aa/" + regular.hex, contents: Data("x".utf8)))
        try files.createSymbolicLink(atPath: top + "/aa/" + link.hex, withDestinationPath: top + "/aa/" + regular.hex)
        // In the wrong prefix folder: `contains` looks under `bb/` and finds nothing.
        #expect(files.createFile(atPath: top + "/aa/" + misplaced.hex, contents: Data("x".utf8)))
        try files.createDirectory(atPath: top + "/aa/" + folderNamed.hex, withIntermediateDirectories: true)
        #expect(files.createFile(atPath: folder.join("elsewhere/") + throughLinkedFolder.hex, contents: Data("x".utf8)))
        try files.createSymbolicLink(atPath: top + "/dd", withDestinationPath: folder.join("elsewhere"))
        // Names that are no prefix folder, and a prefix that is a file.
        #expect(files.createFile(atPath: top + "/notes", contents: Data("x".utf8)))
        #expect(files.createFile(atPath: top + "/cc", contents: Data("x".utf8)))

        let digests = [regular, link, misplaced, folderNamed, absent, throughLinkedFolder].sorted()
        let held = try #require(cache.held(among: digests, listingAtMost: 100))
        #expect(held == digests.map { cache.contains($0) })
        #expect(held == digests.map { $0 == regular || $0 == throughLinkedFolder })
    }

    @Test func givesUpWhenTheFoldersHoldMoreThanTheLimit() throws {
        let folder = TemporaryFolder("cache-held-limit")
        let cache = DownloadCache(root: folder.join("cache"))
        let top = folder.join("cache/sha256/aa")
        try FileManager.default.createDirectory(atPath: top, withIntermediateDirectories: true)
        let digests = (1...5).map { Self.digest("aa", Character(String($0))) }
        for digest in digests { #expect(FileManager.default.createFile(atPath: top + "/" + digest.hex, contents: Data("x".utf8))) }
        #expect(cache.held(among: digests, listingAtMost: 3) == nil)
        #expect(cache.held(among: digests, listingAtMost: 6) == [true, true, true, true, true])
        // No cache at all: no listing to make.
        #expect(DownloadCache(root: folder.join("none")).held(among: digests, listingAtMost: 100) == nil)
    }
}
