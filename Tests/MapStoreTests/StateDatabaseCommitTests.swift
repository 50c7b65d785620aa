import Foundation
import MapIO
import TestSupport
import Testing

@testable import MapStore

/// Issue 44: a first start's durable writes are few. Each commit of `state.sqlite` (rollback journal,
/// `synchronous=EXTRA`) costs several syncs; a new database used to commit once per table. SQLite's
/// file change counter (header bytes 24–27) goes up by one for each commit that wrote the file.
@Suite struct StateDatabaseCommitTests {
    /// The file change counter of the database at `path`.
    static func changeCounter(_ path: String) throws -> UInt32 {
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(28)
        return header.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test func aNewStateDatabaseIsMadeInOneCommit() throws {
        let folder = TemporaryFolder()
        let path = folder.join("state.sqlite")
        let state = try StateDatabase(path: path)
        #expect(try Self.changeCounter(path) == 1)
        // Every table a store reads is there.
        #expect(try state.addedCatalogs().isEmpty)
        #expect(try state.regions().isEmpty && state.pending() == nil && state.downloadStates().isEmpty)
    }

    @Test func anExistingStateDatabaseOpensWithoutWriting() throws {
        let folder = TemporaryFolder()
        let path = folder.join("state.sqlite")
        _ = try StateDatabase(path: path)
        let before = try Self.changeCounter(path)
        // Another connection holds the write lock (a writer in another process): opening still reads.
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("BEGIN IMMEDIATE")
        defer { try? writer.execute("ROLLBACK") }
        let reader = try StateDatabase(path: path)
        #expect(try reader.pending() == nil)
        #expect(try Self.changeCounter(path) == before)
    }
}

extension StateDatabaseCommitTests {
    @Test func anInstallsMarkIsMadeWithTheTablesOfANewDatabase() throws {
        let folder = TemporaryFolder()
        let path = folder.join("state.sqlite")
        let state = try StateDatabase(path: path, marking: .install(imageID: "/images/a"))
        #expect(try Self.changeCounter(path) == 1)
        #expect(try state.pending() == .install(imageID: "/images/a"))
        // An existing database records the mark in a commit of its own.
        let again = try StateDatabase(path: path, marking: .install(imageID: "/images/b"))
        #expect(try Self.changeCounter(path) == 2)
        #expect(try again.pending() == .install(imageID: "/images/b"))
    }
}
