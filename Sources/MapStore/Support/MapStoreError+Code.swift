/// Stable codes for `MapStoreError`, so apps can branch on the kind of failure without an exhaustive
/// `switch` over the enum: a case added to `MapStoreError` later (a new failure a newer library reports)
/// adds a code here, and an app's `switch error.code` (over a struct, which always has a `default`) keeps
/// compiling. The enum's cases and their values stay for apps that want the details; treat it as
/// non-exhaustive (match what you handle, then `default`).
extension MapStoreError {
    /// A kind of failure, by a stable name (`rawValue`, e.g. `"out-of-space"`), as swift-nio's and gRPC's
    /// error codes: compare with `==` or `switch` with a `default`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }
}

extension MapStoreError {
    /// The kind of failure, stable across library versions (see `Code`).
    public var code: MapStoreError.Code {
        switch self {
        case .invalidImage: .invalidImage
        case .notAnImage: .notAnImage
        case .repairNeeded: .repairNeeded
        case .imageNeededForRepair: .imageNeededForRepair
        case .repairFailed: .repairFailed
        case .notInstalled: .notInstalled
        case .unknownRegion: .unknownRegion
        case .seedOlderThanStore: .seedOlderThanStore
        case .invalidCacheSeed: .invalidCacheSeed
        case .destinationNotEmpty: .destinationNotEmpty
        case .io: .io
        case .local: .local
        case .remote: .remote
        case .invalidCatalog: .invalidCatalog
        case .rollbackRefused: .rollbackRefused
        case .meteredNetworkDisallowed: .meteredNetworkDisallowed
        case .noCatalogURL: .noCatalogURL
        case .updateRequired: .updateRequired
        case .unknownCatalogRegion: .unknownCatalogRegion
        case .cancelled: .cancelled
        case .busy: .busy
        case .outOfSpace: .outOfSpace
        case .catalogUnsigned: .catalogUnsigned
        case .catalogSignatureInvalid: .catalogSignatureInvalid
        case .catalogRollback: .catalogRollback
        case .catalogMixAndMatch: .catalogMixAndMatch
        case .catalogExpired: .catalogExpired
        case .catalogOtherLineage: .catalogOtherLineage
        case .catalogResetRefused: .catalogResetRefused
        case .catalogTimestampStale: .catalogTimestampStale
        case .catalogTimestampReplayed: .catalogTimestampReplayed
        case .catalogTimestampExpired: .catalogTimestampExpired
        case .catalogTimestampMismatch: .catalogTimestampMismatch
        case .ownershipConflict: .ownershipConflict
        case .catalogTimestampMissing: .catalogTimestampMissing
        case .unknownCatalog: .unknownCatalog
        case .catalogRegionClash: .catalogRegionClash
        case .catalogInUse: .catalogInUse
        case .catalogAlreadyAdded: .catalogAlreadyAdded
        case .regionsOfSeveralCatalogs: .regionsOfSeveralCatalogs
        }
    }
}

extension MapStoreError.Code {
    public static let invalidImage = Self("invalid-image")
    public static let notAnImage = Self("not-an-image")
    public static let repairNeeded = Self("repair-needed")
    public static let imageNeededForRepair = Self("image-needed-for-repair")
    public static let repairFailed = Self("repair-failed")
    public static let notInstalled = Self("not-installed")
    public static let unknownRegion = Self("unknown-region")
    public static let seedOlderThanStore = Self("seed-older-than-store")
    public static let invalidCacheSeed = Self("invalid-cache-seed")
    public static let destinationNotEmpty = Self("destination-not-empty")
    public static let io = Self("io")
    public static let local = Self("local")
    public static let remote = Self("remote")
    public static let invalidCatalog = Self("invalid-catalog")
    public static let rollbackRefused = Self("rollback-refused")
    public static let meteredNetworkDisallowed = Self("metered-network-disallowed")
    public static let noCatalogURL = Self("no-catalog-url")
    public static let updateRequired = Self("update-required")
    public static let unknownCatalogRegion = Self("unknown-catalog-region")
    public static let cancelled = Self("cancelled")
    public static let busy = Self("busy")
    public static let outOfSpace = Self("out-of-space")
    public static let catalogUnsigned = Self("catalog-unsigned")
    public static let catalogSignatureInvalid = Self("catalog-signature-invalid")
    public static let catalogRollback = Self("catalog-rollback")
    public static let catalogMixAndMatch = Self("catalog-mix-and-match")
    public static let catalogExpired = Self("catalog-expired")
    public static let catalogOtherLineage = Self("catalog-other-lineage")
    public static let catalogResetRefused = Self("catalog-reset-refused")
    public static let catalogTimestampStale = Self("catalog-timestamp-stale")
    public static let catalogTimestampReplayed = Self("catalog-timestamp-replayed")
    public static let catalogTimestampExpired = Self("catalog-timestamp-expired")
    public static let catalogTimestampMismatch = Self("catalog-timestamp-mismatch")
    public static let ownershipConflict = Self("ownership-conflict")
    public static let catalogTimestampMissing = Self("catalog-timestamp-missing")

    /// Every code this version of the library has.
    public static let all: [MapStoreError.Code] = [
        .invalidImage, .notAnImage, .repairNeeded, .imageNeededForRepair, .repairFailed, .notInstalled, .unknownRegion, .seedOlderThanStore,
        .invalidCacheSeed, .destinationNotEmpty, .io, .local, .remote, .invalidCatalog, .rollbackRefused, .meteredNetworkDisallowed, .noCatalogURL,
        .updateRequired, .unknownCatalogRegion, .cancelled, .busy, .outOfSpace, .catalogUnsigned, .catalogSignatureInvalid, .catalogRollback,
        .catalogMixAndMatch, .catalogExpired, .catalogOtherLineage, .catalogResetRefused, .catalogTimestampStale, .catalogTimestampReplayed,
        .catalogTimestampExpired, .catalogTimestampMismatch, .ownershipConflict, .catalogTimestampMissing,
        .unknownCatalog, .catalogRegionClash, .catalogInUse, .catalogAlreadyAdded, .regionsOfSeveralCatalogs,
    ]
    public static let unknownCatalog = Self("unknown-catalog")
    public static let catalogRegionClash = Self("catalog-region-clash")
    public static let catalogInUse = Self("catalog-in-use")
    public static let catalogAlreadyAdded = Self("catalog-already-added")
    public static let regionsOfSeveralCatalogs = Self("regions-of-several-catalogs")
}
