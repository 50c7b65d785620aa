/// A catalog's id (its `catalog` field, e.g. `"demo-world"`): how a store names each of its catalogs.
public struct CatalogID: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id as the catalog spells it.
    public let rawValue: String
    /// The catalog id `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The catalog id `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The catalog id `value`.
    public init(stringLiteral value: String) { rawValue = value }
    /// The id.
    public var description: String { rawValue }
    /// Ordered by id.
    public static func < (lhs: CatalogID, rhs: CatalogID) -> Bool { lhs.rawValue < rhs.rawValue }
}
