import CSQLite

/// One result row, read by column name and Swift type, in GRDB's manner:
/// `try row["size", as: Int64.self]`, `try row["parent", as: String?.self]`.
///
/// A value of another type than asked (a REAL read as an integer, text read as a blob, NULL read
/// as a non-optional) is an error naming the column, never a silent conversion.
package struct SQLRow: Sendable {
    /// A statement's column names → their index, shared by the rows of one run.
    package struct Columns: Sendable {
        let indexes: [String: Int]
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

    private func value(_ column: String) throws(SQLiteError) -> SQLValue {
        guard let index = columns.indexes[column] else {
            throw mismatch("no column '\(column)' (columns: \(columns.indexes.keys.sorted().joined(separator: ", ")))")
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
