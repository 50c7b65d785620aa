/// A catalog that is well-formed JSON but does not describe a valid region tree.
public enum CatalogError: Error, Equatable, Sendable, CustomStringConvertible {
    case format(FormatTagError)
    case duplicateRegion(RegionID)
    case unknownParent(region: RegionID, parent: RegionID)
    case parentCycle([RegionID])
    case missingBundle(region: RegionID, bundle: BundleDigest)
    case noNames(region: RegionID)
    case invalidSize(bundle: BundleDigest, field: String, value: Int64)
    case invalidBundleURL(bundle: BundleDigest, url: String)
    case emptyRegionID

    public var description: String {
        switch self {
        case .format(let error): return error.description
        case .duplicateRegion(let id): return "region '\(id)' is defined more than once; region ids must be unique"
        case .unknownParent(let region, let parent): return "region '\(region)' names parent '\(parent)', which the catalog does not define"
        case .parentCycle(let ids): return "regions form a parent cycle: \(ids.map(\.rawValue).joined(separator: " → ")); every chain of parents must end at a root (parent null)"
        case .missingBundle(let region, let bundle): return "region '\(region)' references bundle \(bundle), which is not in \"bundles\""
        case .noNames(let region): return "region '\(region)' has no names; give at least one language"
        case .invalidSize(let bundle, let field, let value): return "bundle \(bundle) has \(field) \(value), which is negative or absurd (over 1 PiB)"
        case .invalidBundleURL(let bundle, let url): return "bundle \(bundle) has url '\(url)', which is empty or climbs out with '..'"
        case .emptyRegionID: return "a region has an empty id"
        }
    }
}

/// A non-fatal finding in a catalog.
public enum CatalogWarning: Equatable, Sendable, CustomStringConvertible {
    case unreferencedBundle(BundleDigest)
    public var description: String {
        switch self {
        case .unreferencedBundle(let digest): return "bundle \(digest) is referenced by no region; it will never be downloaded"
        }
    }
}
