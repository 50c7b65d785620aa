import Foundation
import MapVerify
import TestSupport
import Testing

/// `ImageVerifier.imageIDFromEnd(ofManifestAt:)` hands a manifest file's end to the format's reader
/// (`ManifestReader.imageIDFromEnd`, tested with the windows in MapFormatTests), up to the largest
/// manifest accepted.
@Suite struct ManifestIDFromFileTests {
    static let id = String(repeating: "cd", count: 32)
    static let ending = Data(#""imageID":"\#(id)","regions":[]}"#.utf8)

    /// A file of `size` bytes (sparse: nothing is written before its end) that ends in an id field.
    static func file(size: Int, in folder: TemporaryFolder) throws -> String {
        let path = folder.join("manifest-\(size).json")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(size - ending.count))
        try handle.write(contentsOf: ending)
        try handle.close()
        return path
    }

    @Test func readsTheIDAtTheEndOfAFile() throws {
        let folder = TemporaryFolder("manifest-id")
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: try Self.file(size: 300_000, in: folder)) == Self.id)
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: try Self.file(size: Self.ending.count, in: folder)) == Self.id)
    }

    /// A manifest larger than any accepted is not read at all; one of the largest size is.
    @Test func refusesAFileLargerThanAManifestMayBe() throws {
        let folder = TemporaryFolder("manifest-id-large")
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: try Self.file(size: ImageVerifier.maxManifestBytes, in: folder)) == Self.id)
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: try Self.file(size: ImageVerifier.maxManifestBytes + 1, in: folder)) == nil)
    }

    @Test func aMissingFileHasNoID() {
        let folder = TemporaryFolder("manifest-id-missing")
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: folder.join("manifest.json")) == nil)
        #expect(ImageVerifier.imageIDFromEnd(ofManifestAt: folder.path) == nil)
    }
}
