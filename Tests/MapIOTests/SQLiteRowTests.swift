import Foundation
import MapIO
import TestSupport
import Testing

@Suite struct SQLiteRowTests {
    private func database(_ setup: String) throws -> (SQLiteDatabase, TemporaryFolder) {
        let folder = TemporaryFolder("sqlite-row")
        let db = try SQLiteDatabase(path: folder.join("test.sqlite"))
        try db.execute(setup)
        return (db, folder)
    }

    @Test func realColumnReadAsIntegerIsAnErrorNamingTheColumn() throws {
        let (db, folder) = try database("CREATE TABLE places(name TEXT, lat REAL); INSERT INTO places VALUES ('Bern', 46.948);")
        defer { _ = folder }
        let row = try #require(try db.query("SELECT name, lat FROM places").first)
        #expect(try row["lat", as: Double.self] == 46.948)
        #expect(try row["name", as: String.self] == "Bern")
        #expect {
            try row["lat", as: Int64.self]
        } throws: { error in
            "\(error)".contains("column 'lat' holds REAL 46.948") && "\(error)".contains("SELECT name, lat FROM places")
        }
        #expect(throws: SQLiteError.self) { try row["lat", as: Int.self] }
        #expect(throws: SQLiteError.self) { try row["lat", as: Int64?.self] }
    }

    @Test func nullReadsAsNilOnlyForOptionalsAndOtherTypesAreErrors() throws {
        let (db, folder) = try database("CREATE TABLE t(id INTEGER, parent TEXT, data BLOB); INSERT INTO t VALUES (7, NULL, x'0102');")
        defer { _ = folder }
        let row = try #require(try db.query("SELECT id, parent, data FROM t").first)
        #expect(try row["parent", as: String?.self] == nil)
        #expect(throws: SQLiteError.self) { try row["parent", as: String.self] }
        #expect(try row["id", as: Int64.self] == 7)
        #expect(try row["id", as: Double.self] == 7)
        #expect(throws: SQLiteError.self) { try row["id", as: String.self] }
        #expect(try row["data", as: Data.self] == Data([1, 2]))
        #expect(throws: SQLiteError.self) { try row["data", as: String?.self] }
        #expect(throws: SQLiteError.self) { try row["size", as: Int64.self] }
    }

    @Test func cachedStatementsRunAgainNestedAndLeaveNoLockBehind() throws {
        let (db, folder) = try database("CREATE TABLE t(id INTEGER PRIMARY KEY, value TEXT);")
        defer { _ = folder }
        let insert = "INSERT INTO t(id, value) VALUES (?, ?)"
        for id in 1...3 { try db.query(insert, [.integer(Int64(id)), .text("v\(id)")]) }
        let select = "SELECT value FROM t WHERE id >= ? ORDER BY id"
        var pairs: [String] = []
        try db.forEachRow(select, [.integer(2)]) { outer throws(SQLiteError) in
            // The same SQL while its statement is in use: runs on a statement of its own.
            let inner = try db.query(select, [.integer(1)]).map { row throws(SQLiteError) in try row["value", as: String.self] }
            pairs.append(try outer["value", as: String.self] + ":" + inner.joined(separator: ","))
        }
        #expect(pairs == ["v2:v1,v2,v3", "v3:v1,v2,v3"])
        #expect(try db.query(select, [.integer(3)]).map { row throws(SQLiteError) in try row["value", as: String.self] } == ["v3"])
        // Kept statements are reset: nothing holds a read open that would block these.
        try db.execute("VACUUM")
        try db.transaction { try db.executeMany("DELETE FROM t WHERE id = ?", [[.integer(1)]]) }
        #expect(try db.firstRow("SELECT COUNT(*) AS count FROM t")?["count", as: Int.self] == 2)
    }
}
