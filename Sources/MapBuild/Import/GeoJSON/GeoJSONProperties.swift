/// Properties by key, in the order their keys first appear; a repeated key keeps its first place
/// and its last value.
struct GeoJSONProperties {
    private(set) var entries: [(key: String, value: GeoJSONValue)] = []
    private var positions: [String: Int] = [:]

    subscript(key: String) -> GeoJSONValue? { positions[key].map { entries[$0].value } }

    mutating func set(_ key: String, _ value: GeoJSONValue) {
        if let position = positions[key] {
            entries[position].value = value
        } else {
            positions[key] = entries.count
            entries.append((key, value))
        }
    }
}
