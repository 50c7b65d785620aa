/// A catalog's id (its `catalog` field, e.g. `"demo-world"`): how a store names each of its catalogs.
public struct CatalogID: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: CatalogID, rhs: CatalogID) -> Bool { lhs.rawValue < rhs.rawValue }
}
