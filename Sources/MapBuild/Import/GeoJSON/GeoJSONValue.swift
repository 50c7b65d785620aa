/// A property value, as deep as import looks: containers only where asked for, one level deep.
enum GeoJSONValue {
    case string(String)
    /// A number; `true` and `false` too, as 1 and 0 (Foundation gave them as numbers).
    case number(Double)
    case null
    /// An array's elements (where asked for).
    case array([GeoJSONValue])
    /// An object's members in the file's order, repeated keys included (where asked for).
    case object([GeoJSONMember])
    /// An array or object where none was asked for, checked and dropped.
    case other

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }
}

/// One member of an object value: its key and value.
struct GeoJSONMember {
    let key: String
    let value: GeoJSONValue
}
