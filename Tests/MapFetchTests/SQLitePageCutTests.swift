import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@testable import MapFetch

/// Map bundles are mostly SQLite databases, and SQLite changes a file a page at a time in place. A
/// content-defined cut puts chunk ends anywhere in a page, so an edited page costs the one or two
/// chunks around it; cut on the pages, it costs exactly the chunks of the pages it changed
/// (Benchmarks/HISTORY.md, "Delta updates: measured").
@Suite struct SQLitePageCutTests {
    /// A bundle folder with a text file and a real SQLite database of about 300 KiB; with `edited`,
    /// the same database with same-length updates of three runs of rows (three pages and the header).
    func bundle(in folder: TemporaryFolder, _ name: String, edited: Bool) throws -> String {
        let root = folder.join(name)
        try FileSystem.makeDirectories(root + "/search")
        var state: UInt64 = 0x5151
        func word() -> String {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return String(state >> 20, radix: 36)
        }
        try Data((0..<2000).map { _ in word() }.joined(separator: " ").utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        let database = try SQLiteDatabase(path: root + "/search/places.db")
        try database.execute("CREATE TABLE places (id INTEGER PRIMARY KEY, name TEXT NOT NULL, x REAL NOT NULL)")
        try database.transaction {
            try database.executeMany(
                "INSERT INTO places VALUES (?, ?, ?)",
                (0..<5000).map { id in [.integer(Int64(id)), .text((0..<4).map { _ in word() }.joined(separator: " ")), .real(Double(id) / 7)] })
        }
        if edited {
            for first in [700, 2500, 4300] {
                try database.execute("UPDATE places SET name = upper(name) WHERE id BETWEEN \(first) AND \(first + 7)")
            }
        }
        return root
    }

    func tar(_ folder: String, to path: String) throws {
        let writer = try ArchiveWriter(path: path, mtime: 0, compressed: false)
        try writer.addTree(folder)
        try writer.finish()
    }

    @Test func anEditOfSQLitePagesCostsOnlyTheChunksOfThosePages() throws {
        let folder = TemporaryFolder("sqlite-pages")
        let old = try bundle(in: folder, "old", edited: false)
        let new = try bundle(in: folder, "new", edited: true)
        try tar(old, to: folder.join("old.tar"))
        try tar(new, to: folder.join("new.tar"))
        let tarSize = try #require(try FileSystem.status(folder.join("new.tar"))?.size)
        let parameters = Zchunk.Parameters.publisher(tarSize: tarSize)
        let seed = try SeedChunks.write(tar: folder.join("old.tar"), to: folder.join("old.seed"), parameters: parameters)
        let written = try Zchunk.compress(folder.join("new.tar"), to: folder.join("new.zck"), parameters: parameters)

        // The blocks of the chunk size, from the database's start, that the edit changed.
        let before = try Data(contentsOf: URL(fileURLWithPath: old + "/search/places.db"))
        let after = try Data(contentsOf: URL(fileURLWithPath: new + "/search/places.db"))
        #expect(before.count == after.count && before.count > 64 * parameters.chunkSize)
        let step = parameters.chunkSize
        let changed = stride(from: 0, to: after.count, by: step).filter {
            before[$0..<min(before.count, $0 + step)] != after[$0..<min(after.count, $0 + step)]
        }
        #expect((2...6).contains(changed.count), "the edit changed \(changed.count) blocks")

        // What a device lacks after copying the chunks its old files have: those blocks' chunks.
        let header = try Data(contentsOf: URL(fileURLWithPath: folder.join("new.zck"))).prefix(Int(written.headerSize))
        let target = try Zchunk.Target(path: folder.join("assembled.zck"), header: header)
        try target.copyChunks(from: seed)
        let missing = try target.checkChunks()
        #expect(missing.count == changed.count, "\(missing.count) chunks missing for \(changed.count) changed blocks of \(step) bytes")

        // Inside the database every chunk ends on a block boundary from the file's start (the pages),
        // and the database starts a chunk; elsewhere the cut is by content.
        let tarBytes = try Data(contentsOf: URL(fileURLWithPath: folder.join("new.tar")))
        let start = try #require(tarBytes.range(of: Data("SQLite format 3\u{0}".utf8))?.lowerBound)
        let end = start + after.count
        var ends: [Int] = []
        for chunk in target.chunks() { ends.append((ends.last ?? 0) + Int(chunk.uncompressed)) }
        #expect(ends.last == tarBytes.count)
        #expect(ends.contains(start), "no chunk ends where the database starts")
        let inside = ends.filter { $0 > start && $0 <= end }
        #expect(inside.allSatisfy { ($0 - start) % step == 0 || $0 == end }, "chunk ends inside the database: \(inside.map { $0 - start })")
        #expect(inside.count == (after.count + step - 1) / step)
    }

    /// Databases are told by their first 16 bytes, wherever they are and however long their names
    /// (a pax header before the member); the range is the member's data, nothing around it.
    @Test func databasesInATarAreFoundByTheirFirstBytes() throws {
        let folder = TemporaryFolder("sqlite-find")
        let root = folder.join("bundle")
        let deep = root + "/" + String(repeating: "long-folder-name/", count: 8)
        try FileSystem.makeDirectories(deep)
        let magic = Data("SQLite format 3\u{0}".utf8)
        try (magic + Data(repeating: 7, count: 4080)).write(to: URL(fileURLWithPath: deep + "/deep.db"))
        try (magic + Data(repeating: 1, count: 100)).write(to: URL(fileURLWithPath: root + "/short.db"))
        try (Data("SQLite format 3 ".utf8) + Data(repeating: 2, count: 5000)).write(to: URL(fileURLWithPath: root + "/almost.db"))
        try Data().write(to: URL(fileURLWithPath: root + "/empty.db"))
        try (magic + Data(repeating: 3, count: 9000)).write(to: URL(fileURLWithPath: root + "/zz.bin"))
        try tar(root, to: folder.join("b.tar"))
        let found = try SQLitePages.databases(inTar: folder.join("b.tar"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.join("b.tar")))
        #expect(found.map(\.count) == [4096, 9016], "\(found)")
        for range in found {
            #expect(bytes[Int(range.lowerBound)..<Int(range.lowerBound) + 16] == magic)
            #expect(range.lowerBound % 512 == 0)
        }
    }

    /// A tar that is not one, or whose sizes lie, ends the search: no crash, no endless loop, no
    /// range past the file's end.
    @Test func hostileTarsEndTheSearch() throws {
        let folder = TemporaryFolder("sqlite-hostile")
        func header(size: [UInt8], type: UInt8 = UInt8(ascii: "0")) -> [UInt8] {
            var block = [UInt8](repeating: 0, count: 512)
            for (i, byte) in "a.db".utf8.enumerated() { block[i] = byte }
            for (i, byte) in size.enumerated() { block[124 + i] = byte }
            block[156] = type
            return block
        }
        let magic = Array("SQLite format 3\u{0}".utf8)
        let cases: [(String, [UInt8])] = [
            ("random", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }),
            ("octal past the end", header(size: Array("77777777777\u{0}".utf8)) + magic + [UInt8](repeating: 0, count: 496)),
            ("base-256 huge", header(size: [0xFF] + [UInt8](repeating: 0xFF, count: 11)) + magic),
            (
                "base-256 past the end",
                header(size: [0x80] + [UInt8](repeating: 0, count: 7) + [0, 0, 0x10, 0]) + magic + [UInt8](repeating: 0, count: 496)
            ),
            ("not octal", header(size: Array("12345678901\u{0}".utf8)) + magic),
            ("short", Array(header(size: Array("00000001000\u{0}".utf8)).prefix(300))),
        ]
        for (name, bytes) in cases {
            let path = folder.join("\(name).tar")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let found = try SQLitePages.databases(inTar: path)
            #expect(found.isEmpty, "\(name): \(found)")
        }
        #expect(SQLitePages.memberSize(header(size: Array("   0001000 ".utf8))) == 512)
        // The same member whole is found.
        let whole = header(size: Array("00000001000\u{0}".utf8)) + magic + [UInt8](repeating: 9, count: 496) + [UInt8](repeating: 0, count: 1024)
        try Data(whole).write(to: URL(fileURLWithPath: folder.join("whole.tar")))
        #expect(try SQLitePages.databases(inTar: folder.join("whole.tar")) == [512..<1024])
    }
}
