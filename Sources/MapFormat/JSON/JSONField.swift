/// The known members of one kind of object in a mappack JSON format (`catalog.json`,
/// `manifest.json`), declared once: a case's raw value is the key. The types' `Codable`
/// conformances take the cases as their `CodingKeys` (so `CanonicalJSON` writes these keys), the
/// hand-written readers match keys against them (`JSONFieldTable`), and the writers and hashers
/// that splice bytes (`ImageFile.Field.entryOpening`, `ImageManifest.Field.idField`) spell them
/// from them.
///
/// A reader switches over every case, so a field declared here and not read does not compile;
/// `FieldTableRoundTripTests` checks that the writer writes every case and the reader reads it back.
package protocol JSONField: CodingKey, CaseIterable, RawRepresentable, Hashable, Sendable where RawValue == String, AllCases == [Self] {}

/// A `JSONField`'s cases packed for `JSONScanner.nextMember(among:first:)`; a case's position in
/// `Field.allCases` is what the scanner reports and the bit `nextField` keeps for it.
struct JSONFieldTable<Field: JSONField>: Sendable {
    /// The keys, in case order.
    let keys: JSONKeys
    private let fields: [Field]

    init() {
        fields = Field.allCases
        keys = JSONKeys(fields.map(\.rawValue))
    }

    /// The field at a position the scanner reported.
    @inline(__always)
    func field(at position: Int) -> Field { fields[position] }
}
