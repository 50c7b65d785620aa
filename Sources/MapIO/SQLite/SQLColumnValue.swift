import Foundation

/// A Swift type a column can be read as (`SQLRow`'s subscript). `init(sqlValue:)` is nil when the
/// stored value is of another type: an integer column never accepts a REAL, and only optionals accept NULL.
package protocol SQLColumnValue {
    /// The value, when `sqlValue` holds one of this type.
    init?(sqlValue: SQLValue)
}

extension Int64: SQLColumnValue {
    package init?(sqlValue: SQLValue) {
        guard case .integer(let v) = sqlValue else { return nil }
        self = v
    }
}

extension Int: SQLColumnValue {
    package init?(sqlValue: SQLValue) {
        guard case .integer(let v) = sqlValue, let exact = Int(exactly: v) else { return nil }
        self = exact
    }
}

extension Double: SQLColumnValue {
    /// A REAL, or an INTEGER (SQLite stores whole REALs of REAL-affinity columns as integers on disk).
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let v): self = v
        case .integer(let v): self = Double(v)
        default: return nil
        }
    }
}

extension String: SQLColumnValue {
    package init?(sqlValue: SQLValue) {
        guard case .text(let v) = sqlValue else { return nil }
        self = v
    }
}

extension Data: SQLColumnValue {
    package init?(sqlValue: SQLValue) {
        guard case .blob(let v) = sqlValue else { return nil }
        self = v
    }
}

extension Optional: SQLColumnValue where Wrapped: SQLColumnValue {
    /// nil for NULL; otherwise the wrapped type's reading (another type is still a mismatch).
    package init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(sqlValue: sqlValue) else { return nil }
        self = .some(wrapped)
    }
}
