/// One object of a mappack JSON format being read, member by member, by a hand-written reader:
/// where it starts (for "missing required field" errors) and which declared fields it has had.
///
/// ```swift
/// var object = try JSONObjectFields<ImageFile.Field>(&scanner, expected: "a file")
/// while let field = try object.next(&scanner, ImageFile.Field.table) { switch field { … } }
/// return ImageFile(path: try object.required(path, .path), …)
/// ```
struct JSONObjectFields<Field: JSONField> {
    /// Offset of the object's `{`.
    let start: Int
    private var first = true
    /// One bit per field of `table`, set once its member has been read.
    private var seen: UInt32 = 0

    /// Opens the object at the scanner's position; `what` names it when it is not an object.
    @inline(__always)
    init(_ scanner: inout JSONScanner, expected what: String) throws(JSONScanner.Failure) {
        start = scanner.offset
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (\(what))") }
        try scanner.beginObject()
    }

    /// Reads up to the value of the next member that `table` (`Field.table`, passed in so that hot
    /// loops fetch it once) declares, skipping the values of other members; nil after the closing `}`. A declared key seen before is refused: readers
    /// that keep the first and readers that keep the last of a repeated key would see two
    /// different documents.
    @inline(__always)
    mutating func next(_ scanner: inout JSONScanner, _ table: JSONFieldTable<Field>) throws(JSONScanner.Failure) -> Field? {
        while true {
            let member = try scanner.nextMember(among: table.keys, first: &first)
            guard let position = member.known else {
                if member == .end { return nil }
                try scanner.skipValue()
                continue
            }
            let mask: UInt32 = 1 << UInt32(position)
            guard seen & mask == 0 else { throw .duplicateKey(table.keys.names[position], at: scanner.offset) }
            seen |= mask
            return table.field(at: position)
        }
    }

    /// The value of a required field, or a "missing required field" failure at the object's start.
    @inline(__always)
    func required<T>(_ value: T?, _ field: Field) throws(JSONScanner.Failure) -> T {
        guard let value else { throw missing(field) }
        return value
    }

    /// Out of line, so that `required` is a test and a branch where it is inlined.
    @inline(never)
    private func missing(_ field: Field) -> JSONScanner.Failure {
        JSONScanner.Failure(offset: start, reason: "missing required field \"\(field.rawValue)\"", path: [.key(field.rawValue)])
    }
}
