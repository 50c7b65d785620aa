import Foundation
import MapIO
import TestSupport
import Testing

/// `withWorkLimit` bounds what SQL over a database from outside may cost: a query that never ends
/// is stopped with an error naming the file, one within the limit runs, and the limit ends with it.
@Suite struct SQLiteWorkLimitTests {
    static let endless = "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c) SELECT max(x) AS top FROM c"

    @Test func endlessQueryIsStoppedAtTheLimitNamingTheFile() throws {
        let folder = TemporaryFolder("sqlite-limit")
        let db = try SQLiteDatabase(path: folder.join("hostile.sqlite"))
        #expect {
            try db.withWorkLimit(steps: 1_000_000) { try db.query(SQLiteWorkLimitTests.endless) }
        } throws: { error in
            (error as? SQLiteWorkLimitError)?.steps == 1_000_000 && "\(error)".contains("hostile.sqlite")
        }
    }

    @Test func queryWithinTheLimitRunsAndTheLimitEndsWithTheBody() throws {
        let folder = TemporaryFolder("sqlite-limit")
        let db = try SQLiteDatabase(path: folder.join("fine.sqlite"))
        let finite = "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT max(x) AS top FROM c"
        let top = try db.withWorkLimit(steps: 100_000_000) { try db.firstRow(finite)?["top", as: Int64.self] }
        #expect(top == 100_000)
        // Outside the body nothing stops the same work.
        let before = try db.withWorkLimit(steps: 1_000) { 1 }
        #expect(before == 1)
        #expect(try db.firstRow(finite)?["top", as: Int64.self] == 100_000)
    }
}
