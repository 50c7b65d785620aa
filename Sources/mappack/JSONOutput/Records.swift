import Foundation

// The one-object answers of `--json`, one type per schema in `Schemas/` besides the events.

/// `mappack-plan/1`: what a build would do.
struct PlanRecord: JSONRecord {
    static let schema = JSONSchemas.plan

    /// One region the recipe selects.
    struct Region: Encodable, Sendable {
        let id: String
        let name: String
        let broughtBy: String
        @Nullable var sizeOnDiskInBytes: Int64?
        let downloadBytes: Int64
    }

    /// One bundle the build needs.
    struct Bundle: Encodable, Sendable {
        let digest: String
        let size: Int64
        let cached: Bool
        let forStore: Bool
        let regions: [String]
    }

    let recipe: String
    let catalog: String
    let mapVersion: String
    let blockSize: Int64
    let downloadBytes: Int64
    let totalBundleBytes: Int64
    let storeBundleBytes: Int64
    let cacheSeedBundleBytes: Int64
    let bundles: Int
    let bundlesCached: Int
    @Nullable var sizeOnDiskInBytes: Int64?
    let cacheSeedBytes: Int64
    @Nullable var capacity: Int64?
    let fits: Bool
    @Nullable var overshootBytes: Int64?
    let cache: String
    let regions: [Region]
    let bundleList: [Bundle]
}

/// `mappack-inspect/1`: what an image holds.
struct InspectRecord: JSONRecord {
    static let schema = JSONSchemas.inspect

    /// One region of the image.
    struct Region: Encodable, Sendable {
        let id: String
        let name: String
        let sizeOnDiskInBytes: Int64
    }

    /// The cache seed the image carries.
    struct CacheSeed: Encodable, Sendable {
        let entries: Int
        let size: Int64
        let sha256: String
        let regions: [String]
    }

    let format: String
    let name: String
    let imageID: String
    let catalog: String
    let mapVersion: String
    let built: String
    let mappackVersion: String
    let blockSize: Int64
    let bundles: Int
    let files: Int
    let signature: String
    let problems: Int
    let regions: [Region]
    @Nullable var cacheSeed: CacheSeed?
}

/// `mappack-diff/1`: two images or catalogs compared.
struct DiffRecord: JSONRecord {
    static let schema = JSONSchemas.diff

    let from: String
    let to: String
    let old: DiffSide.Label
    let new: DiffSide.Label
    let regionsAdded: [String]
    let regionsRemoved: [String]
    let regionsChanged: [String]
    let regionsUnchanged: Int
    let changes: [RegionChange]
    let bundlesKept: [String]
    let bundlesAdded: [String]
    let bundlesDropped: [String]
    let downloadBytes: Int64
}

/// `mappack-region/1`: one region of `mappack regions`.
struct RegionRecord: JSONRecord {
    static let schema = JSONSchemas.region

    let id: String
    @Nullable var parent: String?
    let name: String
    let depth: Int
    let children: Int
    let cities: [String]
    let downloadBytes: Int64
    @Nullable var sizeOnDiskInBytes: Int64?
    @Nullable var released: String?
}

/// `mappack-store-region/1`: one installed region of `mappack store regions`.
struct StoreRegionRecord: JSONRecord {
    static let schema = JSONSchemas.storeRegion

    let id: String
    let name: String
    let sizeOnDiskInBytes: Int64
    let state: String
    let mapVersion: String
    /// `storage`, `base` or `baseAndStorage` (`RegionBytesLocation`).
    let bytesIn: String
    let freedByDeletingInBytes: Int64
}

/// `mappack-store-catalog/1`: one catalog of `mappack store catalogs`.
struct StoreCatalogRecord: JSONRecord {
    static let schema = JSONSchemas.storeCatalog

    let id: String
    let imageCatalog: Bool
    @Nullable var url: String?
    @Nullable var mapVersion: String?
    let installedRegions: Int
    let updateState: String
}

/// `mappack-store-available/1`: the catalog's regions a store does not hold.
struct StoreAvailableRecord: JSONRecord {
    static let schema = JSONSchemas.storeAvailable

    /// One region to download (or to have after an update).
    struct Region: Encodable, Sendable {
        let id: String
        let name: String
        let downloadBytes: Int64
        let state: String
        /// The store's catalog offering it; absent for a catalog read from its URL alone.
        let catalog: String?
    }

    @Nullable var storeMapVersion: String?
    @Nullable var catalogMapVersion: String?
    @Nullable var catalog: String?
    @Nullable var note: String?
    let regions: [Region]
}

/// `mappack-store-version/1`: `mappack store version`.
struct StoreVersionRecord: JSONRecord {
    static let schema = JSONSchemas.storeVersion

    let report: String
    let storage: String
    @Nullable var mapVersion: String?
    @Nullable var imageID: String?
}

/// `mappack-store-cache/1`: `mappack store cache size`.
struct StoreCacheRecord: JSONRecord {
    static let schema = JSONSchemas.storeCache

    let bytes: Int64
    let entries: Int
}

/// `mappack-update-check/1`: `mappack store update --check`.
struct UpdateCheckRecord: JSONRecord {
    static let schema = JSONSchemas.updateCheck

    /// The catalog checked (its id).
    let catalog: String
    let status: String
    let installedVersion: String
    let availableVersion: String
    let bundlesToFetch: Int
    let updateBytes: Int64
    let unsupportedRegions: [String]
}

/// `mappack-help/1`: the verbs as declared.
struct HelpRecord: JSONRecord {
    static let schema = JSONSchemas.help

    /// One verb (or store verb) and its options.
    struct Verb: Encodable, Sendable {
        let name: String
        let positionals: String
        let summary: String
        let options: [Option]
        /// The subcommands' names (`store`'s verbs); left out for a verb without them.
        let verbs: [String]?
        let subcommands: [Verb]?
    }

    /// One option as `--help` shows it.
    struct Option: Encodable, Sendable {
        let name: String
        @Nullable var short: String?
        @Nullable var value: String?
        let help: String
    }

    let verbs: [Verb]
}

/// `mappack-completions/1`: a shell's completion script.
struct CompletionsRecord: JSONRecord {
    static let schema = JSONSchemas.completions

    let shell: String
    let script: String
}

/// `mappack-version/1`: mappack's version and the C libraries'.
struct VersionRecord: JSONRecord {
    static let schema = JSONSchemas.version

    let version: String
    let libraries: [String]
}
