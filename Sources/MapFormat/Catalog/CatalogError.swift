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
    /// A chunking parameter of the bundle's `chunked` form (`field`, e.g. `chunked.chunkSize`) that a
    /// device cannot cut or compress with; `reason` says which values it takes.
    case invalidChunking(bundle: BundleDigest, field: String, value: Int, reason: String)
    /// A bundle URL that `BundleURL.resolve` refuses against the catalog's URL.
    case foreignBundleURL(bundle: BundleDigest, url: String, catalog: String)
    case emptyRegionID
    /// A string that becomes part of file names breaks `PathName`'s grammar.
    case invalidName(field: String, value: String, reason: String)
    /// A region id breaks `PathName.regionIDProblem`'s grammar.
    case invalidRegionID(RegionID, reason: String)
    /// The sum of one size field over all bundles does not fit in 64 bits.
    case totalTooLarge(field: String)
    /// A region sits deeper below its root than `RegionTree.maxDepth`.
    case tooDeep(region: RegionID, limit: Int)

    public var description: String {
        switch self {
        case .format(let error): return error.description
        case .duplicateRegion(let id): return "region '\(id)' is defined more than once; region ids must be unique"
        case .unknownParent(let region, let parent): return "region '\(region)' names parent '\(parent)', which the catalog does not define"
        case .parentCycle(let ids):
            return
                "regions form a parent cycle: \(ids.map(\.rawValue).joined(separator: " → ")); every chain of parents must end at a root (parent null)"
        case .missingBundle(let region, let bundle): return "region '\(region)' references bundle \(bundle), which is not in \"bundles\""
        case .noNames(let region): return "region '\(region)' has no names; give at least one language"
        case .invalidSize(let bundle, let field, let value): return "bundle \(bundle) has \(field) \(value), which is negative or absurd (over 1 PiB)"
        case .invalidChunking(let bundle, let field, let value, let reason):
            return "bundle \(bundle) has \(field) \(value), \(reason); the catalog's chunked form is corrupt: publish it again"
        case .invalidBundleURL(let bundle, let url):
            return
                "bundle \(bundle) has url '\(url)', which is empty or climbs out with '..' (also percent-encoded); give a path below the catalog's folder"
        case .foreignBundleURL(let bundle, let url, let catalog):
            return
                "bundle \(bundle) has url '\(url)', which does not parse or leaves the catalog \(catalog) (another scheme, host or port, a '..', or outside a file catalog's folder); bundles must be served beside their catalog"
        case .emptyRegionID: return "a region has an empty id"
        case .invalidName(let field, let value, let reason): return "\(field) '\(value)' \(reason); \(PathName.rule)"
        case .invalidRegionID(let id, let reason): return "region id '\(id)' \(reason); an id is names joined by '/', and \(PathName.rule)"
        case .totalTooLarge(let field): return "the bundles' \(field) values add up to more than 2^63 bytes; the catalog's sizes are corrupt"
        case .tooDeep(let region, let limit):
            return "region '\(region)' lies more than \(limit) levels below its root; mappack accepts region trees up to \(limit) levels deep"
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
