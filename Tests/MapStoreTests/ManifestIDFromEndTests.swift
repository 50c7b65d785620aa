import Foundation
import MapFormat
import Testing

@testable import MapStore

/// An unsigned in-place base's id is read at every open from the manifest's end, in windows that
/// double from 64 KiB: wherever the id field falls (inside the first window, cut by a window's
/// edge, far before the end), the id found is the one `idInCanonicalBytes` reads from the field.
@Suite struct ManifestIDFromEndTests {
    static let id = String(repeating: "ab", count: 32)

    /// A manifest-like file whose id field ends `after` bytes before the end (filler after it).
    static func file(after: Int, in folder: String) throws -> String {
        let field = Data(#""imageID":"\#(id)","#.utf8)
        let head = Data(String(repeating: "x", count: 300_000).utf8)
        let path = folder + "/manifest-\(after).json"
        try (head + field + Data(String(repeating: "y", count: after).utf8)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [0, 100, (64 << 10) - 40, (64 << 10) - 10, 64 << 10, (128 << 10) - 20, 200_000])
    func findsTheIDWhereverItsFieldFalls(_ after: Int) throws {
        let folder = NSTemporaryDirectory() + "/manifest-id-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try Self.file(after: after, in: folder)
        #expect(StoreCore.manifestIDFromEnd(path) == Self.id)
    }

    @Test func aFileWithoutTheFieldHasNoID() throws {
        let folder = NSTemporaryDirectory() + "/manifest-id-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/manifest.json"
        try Data(String(repeating: "z", count: 200_000).utf8).write(to: URL(fileURLWithPath: path))
        #expect(StoreCore.manifestIDFromEnd(path) == nil)
    }
}
