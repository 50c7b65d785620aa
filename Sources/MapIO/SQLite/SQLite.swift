import CSQLite
import Foundation

/// A failed SQLite call: the database file, the statement and SQLite's message.
package struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The database file.
    package let path: String
    /// The SQL or operation that failed.
    package let operation: String
    /// SQLite's result code.
    package let code: Int32
    /// SQLite's message.
    package let message: String

    package var description: String { "\(path): SQLite error \(code) in '\(operation)': \(message)" }
}

/// A value bound to or read from a statement.
package enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob(Data)
    case null
}

/// One SQLite connection (`sqlite3_open_v2`), used from one task at a time.
package final class SQLiteDatabase {
    /// The file.
    package let path: String
    private var handle: OpaquePointer?

    /// Opens (and creates, unless `readOnly`) the database at `path`.
    package init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let code = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        if code != SQLITE_OK {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw SQLiteError(path: path, operation: "open", code: code, message: message)
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    private func failure(_ operation: String, _ code: Int32) -> SQLiteError {
        SQLiteError(path: path, operation: operation, code: code, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements without parameters (`sqlite3_exec`).
    package func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        if code != SQLITE_OK { throw failure(sql, code) }
    }

    /// Runs one statement with `parameters`, returning every row.
    @discardableResult
    package func query(_ sql: String, _ parameters: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try forEachRow(sql, parameters) { rows.append($0) }
        return rows
    }

    /// Runs one statement with `parameters`, calling `body` with each row.
    package func forEachRow(_ sql: String, _ parameters: [SQLValue] = [], _ body: ([SQLValue]) -> Void) throws(SQLiteError) {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        try bind(parameters, to: statement, sql: sql)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(sql, code) }
            body(row(statement))
        }
    }

    /// Prepares `sql` once and runs it for each parameter list (bulk inserts).
    package func executeMany(_ sql: String, _ parameterRows: [[SQLValue]]) throws(SQLiteError) {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        for parameters in parameterRows {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            try bind(parameters, to: statement, sql: sql)
            let code = sqlite3_step(statement)
            guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(sql, code) }
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Number of rows the last statement changed.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    private func prepare(_ sql: String) throws(SQLiteError) -> OpaquePointer? {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        if code != SQLITE_OK { throw failure(sql, code) }
        return statement
    }

    /// SQLite's "this memory may change" destructor, so it copies bound bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ parameters: [SQLValue], to statement: OpaquePointer?, sql: String) throws(SQLiteError) {
        for (i, value) in parameters.enumerated() {
            let index = Int32(i + 1)
            let code: Int32
            switch value {
            case .integer(let v): code = sqlite3_bind_int64(statement, index, v)
            case .text(let v): code = sqlite3_bind_text(statement, index, v, -1, SQLiteDatabase.transient)
            case .blob(let v):
                code = v.withUnsafeBytes { sqlite3_bind_blob64(statement, index, $0.baseAddress, sqlite3_uint64($0.count), SQLiteDatabase.transient) }
            case .null: code = sqlite3_bind_null(statement, index)
            }
            if code != SQLITE_OK { throw failure(sql, code) }
        }
    }

    private func row(_ statement: OpaquePointer?) -> [SQLValue] {
        (0..<sqlite3_column_count(statement)).map { column in
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
            case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, column)))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(statement, column))
                guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob(Data()) }
                return .blob(Data(bytes: bytes, count: count))
            case SQLITE_FLOAT: return .integer(Int64(sqlite3_column_double(statement, column)))
            default: return .null
            }
        }
    }
}

extension SQLValue {
    /// The integer, when this is one.
    package var int: Int64? { if case .integer(let v) = self { v } else { nil } }
    /// The text, when this is text.
    package var string: String? { if case .text(let v) = self { v } else { nil } }
    /// The bytes, when this is a blob.
    package var data: Data? { if case .blob(let v) = self { v } else { nil } }
}

extension SQLiteDatabase {
    /// The linked SQLite's version (`sqlite3_libversion`).
    package static var libraryVersion: String { "SQLite " + String(cString: sqlite3_libversion()) }
}
