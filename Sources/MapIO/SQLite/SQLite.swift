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

    /// `SQLITE_FULL`: the database (or its journal) could not grow, its filesystem being full.
    package var isDiskFull: Bool { code == 13 }
}

/// A statement stopped by `SQLiteDatabase.withWorkLimit`: it ran more virtual-machine steps than
/// its caller allowed (a database from outside whose query would never end, or not soon).
package struct SQLiteWorkLimitError: Error, Sendable, CustomStringConvertible {
    /// The database file.
    package let path: String
    /// The steps allowed.
    package let steps: Int64

    package var description: String { "\(path): SQLite stopped after more than \(steps) steps" }
}

/// A value bound to or read from a statement.
package enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    /// A REAL (floating point) value; never read back as an integer (see `SQLRow`).
    case real(Double)
    case text(String)
    case blob(Data)
    case null
}

/// One SQLite connection (`sqlite3_open_v2`), used from one task at a time.
///
/// Statements are prepared once per SQL text and kept (`sqlite3_reset` between uses), as GRDB's
/// cached statements are; a statement in use when the same SQL runs again (a query inside
/// `forEachRow`'s body) is not shared: the inner run prepares its own.
@safe package final class SQLiteDatabase {
    /// The file.
    package let path: String
    private var handle: OpaquePointer?
    /// Prepared statements not in use, by SQL text.
    private var cachedStatements: [String: OpaquePointer] = unsafe [:]
    /// More distinct statements than any caller runs; a bound in case SQL text is ever built at run time.
    private static let statementCacheLimit = 64

    /// Opens (and creates, unless `readOnly`) the database at `path`.
    package init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let code = unsafe sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        if code != SQLITE_OK {
            let message = unsafe handle.map { unsafe String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            unsafe sqlite3_close(handle)
            throw SQLiteError(path: path, operation: "open", code: code, message: message)
        }
        unsafe sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        // `forEach`, not a `for unsafe … in` loop: swift-format 6.3.1 drops the space after that `unsafe` (swift-format#1183).
        // swift-format-ignore: ReplaceForEachWithForLoop
        unsafe cachedStatements.values.forEach { unsafe sqlite3_finalize($0) }
        unsafe sqlite3_close_v2(handle)
    }

    private func failure(_ operation: String, _ code: Int32) -> SQLiteError {
        unsafe SQLiteError(path: path, operation: operation, code: code, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Rows this connection has inserted, updated or deleted since it opened (`sqlite3_total_changes64`):
    /// equal at two moments when it wrote nothing between them.
    package var totalChanges: Int64 { unsafe sqlite3_total_changes64(handle) }

    /// Runs one or more statements without parameters (`sqlite3_exec`).
    package func execute(_ sql: String) throws(SQLiteError) {
        let code = unsafe sqlite3_exec(handle, sql, nil, nil, nil)
        if code != SQLITE_OK { throw failure(sql, code) }
    }

    /// Runs one statement with `parameters`, returning every row.
    @discardableResult
    package func query(_ sql: String, _ parameters: [SQLValue] = []) throws(SQLiteError) -> [SQLRow] {
        var rows: [SQLRow] = []
        try forEachRow(sql, parameters) { row throws(SQLiteError) in rows.append(row) }
        return rows
    }

    /// Runs one statement with `parameters`, returning its first row (nil when it has none).
    package func firstRow(_ sql: String, _ parameters: [SQLValue] = []) throws(SQLiteError) -> SQLRow? {
        try query(sql, parameters).first
    }

    /// Runs one statement with `parameters`, calling `body` with each row.
    package func forEachRow(_ sql: String, _ parameters: [SQLValue] = [], _ body: (SQLRow) throws(SQLiteError) -> Void) throws(SQLiteError) {
        let statement = try unsafe checkOut(sql)
        defer { unsafe checkIn(statement, sql: sql) }
        try unsafe bind(parameters, to: statement, sql: sql)
        var columns: SQLRow.Columns?
        while true {
            let code = unsafe sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(sql, code) }
            let names = unsafe columns ?? columnNames(statement)
            columns = names
            try unsafe body(SQLRow(columns: names, values: values(statement), path: path, sql: sql))
        }
    }

    /// Prepares `sql` once and runs it for each parameter list (bulk inserts).
    package func executeMany(_ sql: String, _ parameterRows: [[SQLValue]]) throws(SQLiteError) {
        let statement = try unsafe checkOut(sql)
        defer { unsafe checkIn(statement, sql: sql) }
        for parameters in parameterRows {
            unsafe sqlite3_reset(statement)
            unsafe sqlite3_clear_bindings(statement)
            try unsafe bind(parameters, to: statement, sql: sql)
            let code = unsafe sqlite3_step(statement)
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

    /// Runs `body` with every statement of this connection stopped once they have run `steps`
    /// virtual-machine steps in all (`sqlite3_progress_handler`, asked every 10,000 steps): the
    /// work a query over a database from outside may do is bounded, whatever its schema holds.
    /// Throws `SQLiteWorkLimitError` when the limit stopped a statement.
    package func withWorkLimit<T>(steps: Int64, _ body: () throws -> T) throws -> T {
        let budget = WorkBudget(remaining: steps)
        unsafe sqlite3_progress_handler(
            handle, SQLiteDatabase.progressInterval, SQLiteDatabase.spendSteps, Unmanaged.passUnretained(budget).toOpaque())
        defer { unsafe sqlite3_progress_handler(handle, 0, nil, nil) }
        do {
            let result = try withExtendedLifetime(budget) { try body() }
            if budget.exceeded { throw SQLiteWorkLimitError(path: path, steps: steps) }
            return result
        } catch {
            if budget.exceeded { throw SQLiteWorkLimitError(path: path, steps: steps) }
            throw error
        }
    }

    /// The progress handler: takes the steps since its last call from the `WorkBudget` in
    /// `context`; a non-zero answer makes SQLite stop the statement (`SQLITE_INTERRUPT`).
    private static let spendSteps: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
        let budget = unsafe Unmanaged<WorkBudget>.fromOpaque(context!).takeUnretainedValue()
        budget.remaining -= Int64(progressInterval)
        guard budget.remaining < 0 else { return 0 }
        budget.exceeded = true
        return 1
    }

    /// Steps between two calls of the progress handler: rare enough to cost nothing.
    private static let progressInterval: Int32 = 10_000

    /// The steps `withWorkLimit` has left; the progress handler's context.
    private final class WorkBudget {
        var remaining: Int64
        var exceeded = false
        init(remaining: Int64) { self.remaining = remaining }
    }

    /// Number of rows the last statement changed.
    package var changes: Int { unsafe Int(sqlite3_changes(handle)) }

    /// The cached statement for `sql`, taken out of the cache while in use, else a new one (`sqlite3_prepare_v2`).
    private func checkOut(_ sql: String) throws(SQLiteError) -> OpaquePointer? {
        if let cached = unsafe cachedStatements.removeValue(forKey: sql) { return unsafe cached }
        var statement: OpaquePointer?
        let code = unsafe sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        if code != SQLITE_OK {
            unsafe sqlite3_finalize(statement)
            throw failure(sql, code)
        }
        return unsafe statement
    }

    /// Resets `statement` (ending its read, dropping its bindings) and keeps it for the next run of `sql`.
    private func checkIn(_ statement: OpaquePointer?, sql: String) {
        unsafe sqlite3_reset(statement)
        unsafe sqlite3_clear_bindings(statement)
        if unsafe cachedStatements[sql] == nil, unsafe cachedStatements.count < SQLiteDatabase.statementCacheLimit, let statement = unsafe statement {
            unsafe cachedStatements[sql] = statement
        } else {
            unsafe sqlite3_finalize(statement)
        }
    }

    /// SQLite's "this memory may change" destructor, so it copies bound bytes.
    private static let transient = unsafe unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ parameters: [SQLValue], to statement: OpaquePointer?, sql: String) throws(SQLiteError) {
        for (i, value) in parameters.enumerated() {
            let index = Int32(i + 1)
            let code: Int32
            switch value {
            case .integer(let v): code = unsafe sqlite3_bind_int64(statement, index, v)
            case .real(let v): code = unsafe sqlite3_bind_double(statement, index, v)
            case .text(let v): code = unsafe sqlite3_bind_text(statement, index, v, -1, SQLiteDatabase.transient)
            case .blob(let v):
                code = unsafe v.withUnsafeBytes {
                    unsafe sqlite3_bind_blob64(statement, index, $0.baseAddress, sqlite3_uint64($0.count), SQLiteDatabase.transient)
                }
            case .null: code = unsafe sqlite3_bind_null(statement, index)
            }
            if code != SQLITE_OK { throw failure(sql, code) }
        }
    }

    /// Column names of `statement`'s rows (`sqlite3_column_name`), in column order.
    private func columnNames(_ statement: OpaquePointer?) -> SQLRow.Columns {
        let names = unsafe (0..<sqlite3_column_count(statement)).map { column in
            unsafe sqlite3_column_name(statement, column).map { unsafe String(cString: $0) }
        }
        return SQLRow.Columns(names: names)
    }

    private func values(_ statement: OpaquePointer?) -> [SQLValue] {
        unsafe (0..<sqlite3_column_count(statement)).map { column in
            switch unsafe sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER: return unsafe .integer(sqlite3_column_int64(statement, column))
            case SQLITE_TEXT: return unsafe .text(String(cString: sqlite3_column_text(statement, column)))
            case SQLITE_BLOB:
                let count = unsafe Int(sqlite3_column_bytes(statement, column))
                guard count > 0, let bytes = unsafe sqlite3_column_blob(statement, column) else { return .blob(Data()) }
                return unsafe .blob(Data(bytes: bytes, count: count))
            case SQLITE_FLOAT: return unsafe .real(sqlite3_column_double(statement, column))
            default: return .null
            }
        }
    }
}

extension SQLiteDatabase {
    /// The linked SQLite's version (`sqlite3_libversion`).
    package static var libraryVersion: String { unsafe "SQLite " + String(cString: sqlite3_libversion()) }
}
