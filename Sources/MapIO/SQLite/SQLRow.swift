import CSQLite

/// One result row, read by column name and Swift type, in GRDB's manner:
/// `try row["size", as: Int64.self]`, `try row["parent", as: String?.self]`.
///
/// A value of another type than asked (a REAL read as an integer, text read as a blob, NULL read
/// as a non-optional) is an error naming the column, never a silent conversion.
package struct SQLRow: Sendable {
    /// A statement's column names in column order (nil where SQLite gives none), shared by the rows
    /// of one run. A row has a handful of columns, and short names compare in one step: a search
    /// costs less than hashing the name (a state's region rows are read at every open: thousands).
    package struct Columns: Sendable {
        let names: [String?]

        /// The first column named `name`.
        func index(of name: String) -> Int? { names.firstIndex { $0 == name } }
    }

    private let columns: Columns
    private let values: [SQLValue]
    /// The database file and statement, for errors.
    private let path: String
    private let sql: String

    init(columns: Columns, values: [SQLValue], path: String, sql: String) {
        self.columns = columns
        self.values = values
        self.path = path
        self.sql = sql
    }

    /// The raw value of `column`, for copying into another statement.
    package subscript(_ column: String) -> SQLValue {
        get throws(SQLiteError) { try value(column) }
    }

    /// The value of `column` as `T`; throws when the column is missing or holds another type.
    package subscript<T: SQLColumnValue>(_ column: String, as type: T.Type) -> T {
        get throws(SQLiteError) {
            let value = try value(column)
            guard let decoded = T(sqlValue: value) else {
                throw mismatch("column '\(column)' holds \(value.typeName), read as \(T.self)")
            }
            return decoded
        }
    }

    /// The text of `column`, nil for NULL: `self[column, as: String?.self]` without the generic call
    /// (from another module, each such call looks up generic metadata; an open reads thousands of rows).
    package func text(_ column: String) throws(SQLiteError) -> String? {
        switch try value(column) {
        case .text(let text): return text
        case .null: return nil
        case let other: throw mismatch("column '\(column)' holds \(other.typeName), read as Optional<String>")
        }
    }

    /// The integer of `column`, nil for NULL: `self[column, as: Int64?.self]` without the generic call.
    package func integer(_ column: String) throws(SQLiteError) -> Int64? {
        switch try value(column) {
        case .integer(let integer): return integer
        case .null: return nil
        case let other: throw mismatch("column '\(column)' holds \(other.typeName), read as Optional<Int64>")
        }
    }

    private func value(_ column: String) throws(SQLiteError) -> SQLValue {
        guard let index = columns.index(of: column) else {
            throw mismatch("no column '\(column)' (columns: \(Set(columns.names.compactMap { $0 }).sorted().joined(separator: ", ")))")
        }
        return values[index]
    }

    private func mismatch(_ message: String) -> SQLiteError {
        SQLiteError(path: path, operation: sql, code: SQLITE_MISMATCH, message: message)
    }
}

extension SQLValue {
    /// SQLite's name of this value's storage class, for errors.
    var typeName: String {
        switch self {
        case .integer: "INTEGER"
        case .real(let v): "REAL \(v)"
        case .text: "TEXT"
        case .blob: "BLOB"
        case .null: "NULL"
        }
    }
}
