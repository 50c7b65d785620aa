/// What `mappack import` keeps of one GeoJSON Feature: its `id`, the properties it asked for and its
/// geometry, with coordinates in flat buffers. A projection, not the Feature: members and
/// properties nobody asked for were checked as JSON and dropped.
struct GeoJSONFeature {
    /// The Feature's own `id` member, a number as its text (`GeoJSONStream.readID`); nil when absent.
    var id: GeoJSONValue?
    /// The properties asked for (and every `name:…` one), the last of a repeated key winning, as
    /// Foundation kept them; empty when `properties` is absent or not an object.
    var properties = GeoJSONProperties()
    /// Nil when `geometry` is absent or not an object.
    var geometry: GeoJSONGeometry?
}
