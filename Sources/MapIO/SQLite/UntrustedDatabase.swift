import Foundation

/// The rules for SQL over a SQLite file from outside (a bundle's tile database, an image's cache
/// seed), written once for the build and the device: SQL over it must end and read only stored
/// rows. A table it reads must be a plain table (no view, virtual table, generated column or
/// trigger, which run SQL of the file's choosing: a recursive view never ends), the schema's
/// functions are not trusted (`PRAGMA trusted_schema = OFF`), and every read runs under a work
/// limit (`SQLiteDatabase.withWorkLimit`) that grows with the file's size.
package enum UntrustedDatabase {
    /// SQLite steps a read may take per byte of the database. A copy costs tens of steps per row and
    /// every row of a plain table takes bytes of the file, so real databases stay far below; only
    /// SQL that makes rows out of nothing reaches it.
    package static let stepsPerByte: Int64 = 1_000

    /// The steps any database may take, however small (its schema, a few queries).
    package static let baseWorkLimit: Int64 = 10_000_000

    /// The steps the reads of a database of `bytes` bytes may take, in all.
    package static func workLimit(bytes: Int64) -> Int64 { baseWorkLimit + stepsPerByte * max(bytes, 0) }

    /// The bytes a database was allowed for, from the `workLimit` it was given (for messages).
    package static func bytes(ofWorkLimit limit: Int64) -> Int64 { (limit - baseWorkLimit) / stepsPerByte }

    /// Opens `path` read-only with its schema untrusted.
    package static func open(path: String) throws(SQLiteError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path, readOnly: true)
        try database.execute("PRAGMA trusted_schema = OFF")
        return database
    }

    /// Why `table` of the database attached to `database` as `schema` (`main` for the file itself)
    /// may not be read: it is a view or a virtual table, or has a generated column or a trigger.
    /// Nil when it is a plain table or there is none (reading it then fails on its own). Run it under
    /// the work limit: the schema is the file's too.
    package static func refusal(of table: String, in database: SQLiteDatabase, schema: String = "main") throws(SQLiteError) -> String? {
        let master = "\"\(schema.replacingOccurrences(of: "\"", with: "\"\""))\".sqlite_master"
        // Names in SQLite are case-insensitive: `ENTRIES` answers to `entries`.
        let objects = try database.query(
            "SELECT type, coalesce(sql, '') AS sql FROM \(master) WHERE name = ? COLLATE NOCASE AND type IN ('table', 'view')", [.text(table)])
        for object in objects {
            let type = try object["type", as: String.self]
            if type != "table" { return "'\(table)' is a \(type), not a table" }
            if try object["sql", as: String.self].uppercased().hasPrefix("CREATE VIRTUAL TABLE") { return "'\(table)' is a virtual table" }
        }
        guard !objects.isEmpty else { return nil }
        let generated = try database.query("SELECT name FROM pragma_table_xinfo(?, ?) WHERE hidden IN (2, 3)", [.text(table), .text(schema)])
        if let column = generated.first { return "'\(table)' has a generated column, '\(try column["name", as: String.self])'" }
        let triggers = try database.query("SELECT name FROM \(master) WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE", [.text(table)])
        if let trigger = triggers.first { return "'\(table)' has a trigger, '\(try trigger["name", as: String.self])'" }
        return nil
    }
}
