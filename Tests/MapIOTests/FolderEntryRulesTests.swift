import MapFormat
import MapIO
import Testing

/// A `FolderEntry` and a `StorePath` are checked by one rule (`StorePath.problem(_:rules:)`): the same
/// names pass both, except where a store path's two rules of its own refuse one, a backslash and
/// more than `StorePath.maxLength` bytes. The renames inside a folder take names of files on this
/// machine, an output the user named among them, where both are ordinary.
@Suite struct FolderEntryRulesTests {
    /// A name, the problem a store path has with it, and whether a folder entry takes it.
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let storePath: StorePath.Problem?
        let folderEntry: Bool

        var testDescription: String { name.count > 40 ? "\(name.prefix(20))… (\(name.utf8.count) bytes)" : name.debugDescription }
    }

    /// Store paths, the project's own staging and trash entries, names a user may give an output, and
    /// names that leave the folder.
    static let table: [Row] = [
        Row(name: "regions/europe/ee/37/353/routing/2/0/194.rt", storePath: nil, folderEntry: true),
        Row(name: ".out.staging-4242", storePath: nil, folderEntry: true),
        Row(name: ".out.staging-4242/image/store", storePath: nil, folderEntry: true),
        Row(name: ".trash-4242/.europe-2026.12.tmp-17.2", storePath: nil, folderEntry: true),
        Row(name: ".update-next", storePath: nil, folderEntry: true),
        Row(name: "Kärnten Ö/ü", storePath: nil, folderEntry: true),
        Row(name: "a/\u{301}b", storePath: nil, folderEntry: true),
        Row(name: String(repeating: "a", count: StorePath.maxLength), storePath: nil, folderEntry: true),
        // Only a store path's own rules refuse these.
        Row(name: #"maps\europe.mappack"#, storePath: .forbiddenByte, folderEntry: true),
        Row(name: #".maps\europe.tmp-17"#, storePath: .forbiddenByte, folderEntry: true),
        Row(name: String(repeating: "a/", count: 512) + "b", storePath: .tooLong, folderEntry: true),
        // Both refuse the rest.
        Row(name: "", storePath: .empty, folderEntry: false),
        Row(name: "/etc", storePath: .absolute, folderEntry: false),
        Row(name: ".", storePath: .emptyComponent, folderEntry: false),
        Row(name: "..", storePath: .climbs, folderEntry: false),
        Row(name: "a//b", storePath: .emptyComponent, folderEntry: false),
        Row(name: "a/", storePath: .emptyComponent, folderEntry: false),
        Row(name: "a/./b", storePath: .emptyComponent, folderEntry: false),
        Row(name: "a/../../x", storePath: .climbs, folderEntry: false),
        Row(name: "nul\0name", storePath: .forbiddenByte, folderEntry: false),
        Row(name: #"back\slash/.."#, storePath: .forbiddenByte, folderEntry: false),
        Row(name: String(repeating: "a/", count: 512) + "..", storePath: .climbs, folderEntry: false),
        Row(name: "../\u{301}x", storePath: .climbs, folderEntry: false),
        Row(name: "/\u{301}etc", storePath: .absolute, folderEntry: false),
    ]

    @Test(arguments: table)
    func eachRuleGivesItsAnswer(_ row: Row) {
        #expect(StorePath.problem(row.name) == row.storePath)
        #expect((FolderEntry(row.name) != nil) == row.folderEntry)
    }

    /// The rows the two rules answer differently are the backslash and length rows, and nothing else.
    @Test func theRulesDifferOnlyOnBackslashAndLength() {
        let differing = Self.table.filter { (StorePath.problem($0.name) == nil) != (FolderEntry($0.name) != nil) }
        #expect(differing.map(\.name) == [#"maps\europe.mappack"#, #".maps\europe.tmp-17"#, String(repeating: "a/", count: 512) + "b"])
        for row in differing {
            #expect(FolderEntry(row.name) != nil)
            #expect(row.storePath == .forbiddenByte || row.storePath == .tooLong)
        }
    }

    /// Over names built from the bytes the rules are about, some past the length limit: a folder entry
    /// takes exactly the names that, backslashes read as letters, are store paths or too long.
    @Test func aFolderEntryIsAStorePathWithoutItsTwoRules() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "a", "é", ".", "..", "/", "\\", "\0", "\u{301}"]
        var accepted = 0
        for round in 0..<20_000 {
            let count = 1 + round % 16
            var name = (0..<count).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined()
            if round % 50 == 0 { name = String(repeating: "ab/", count: 342) + name }
            // Byte by byte: a backslash a combining mark follows is one `Character` with it.
            let letters = String(decoding: name.utf8.map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "a") : $0 }, as: UTF8.self)
            let asStorePath = StorePath.problem(letters)
            let expected = asStorePath == nil || asStorePath == .tooLong
            #expect((FolderEntry(name) != nil) == expected, "\(name.debugDescription)")
            if expected { accepted += 1 }
        }
        #expect(accepted > 1000)
    }
}
