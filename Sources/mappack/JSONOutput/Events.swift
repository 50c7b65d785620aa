import Foundation

// The lines of `Schemas/mappack-events.schema.json`, one type per shape. A type whose `event` is a
// stored `let` with a value names one event; one with an `event` parameter is shared by events
// with the same fields (the schema lists each).

/// `failed`: a verb's error, its last line; exit code as the process ends with it.
struct FailedEvent: JSONEvent {
    let event = "failed"
    let error: String
    let exitCode: Int
}

/// `done` of a build: the image and every output.
struct BuildDoneEvent: JSONEvent {
    /// One output of a build: its format and path.
    struct Output: Encodable, Sendable {
        let format: String
        let path: String
    }

    let event = "done"
    let image: String
    @Nullable var packed: String?
    let imageID: String
    let mapVersion: String
    let regions: Int
    let upToDate: Bool
    let files: Int
    let bundles: Int
    let downloadedBytes: Int64
    let sizeOnDiskInBytes: Int64
    let outputs: [Output]
    let seconds: Double
}

/// `done` of a merge.
struct MergeDoneEvent: JSONEvent {
    let event = "done"
    let image: String
    @Nullable var packed: String?
    let imageID: String
    let outputs: [BuildDoneEvent.Output]
}

/// `done` of one shard of a build.
struct ShardDoneEvent: JSONEvent {
    let event = "done"
    let shard: String
}

/// `done` of `verify` on an image.
struct ImageVerifiedEvent: JSONEvent {
    let event = "done"
    let ok: Bool
    let imageID: String
    let files: Int
    let bytesHashed: Int64
    let problems: Int
}

/// `done` of `verify` on an installed store.
struct StoreVerifiedEvent: JSONEvent {
    let event = "done"
    let ok: Bool
    let imageID: String
    let store = true
    let problems: Int
}

/// `done` of `store verify`.
struct StoreVerifyDoneEvent: JSONEvent {
    let event = "done"
    let ok: Bool
    let store = true
    let storage: String
    let problems: Int
}

/// `problem`: one thing a verify found; `store verify` gives the detail only.
struct ProblemEvent: JSONEvent {
    let event = "problem"
    var kind: String? = nil
    var path: String? = nil
    var regions: [String]? = nil
    let detail: String
}

/// `planned`: the bundles a build puts in place.
struct PlannedEvent: JSONEvent {
    let event = "planned"
    let bundles: Int
    let downloadBytes: Int64
    let cached: Int
    let reused: Int
}

/// `phase`: a build or publish entering a phase.
struct PhaseEvent: JSONEvent {
    let event = "phase"
    let phase: String
}

/// `bundle-started`, `bundle-verified`, `bundle-cached`, `remote-hit`, `remote-uploaded`: a bundle and its size.
struct BundleSizeEvent: JSONEvent {
    let event: String
    let bundle: String
    let size: Int64
}

/// `progress`: bytes of one bundle received.
struct BundleProgressEvent: JSONEvent {
    let event = "progress"
    let bundle: String
    let received: Int64
    let size: Int64
}

/// `remote-miss`, `remote-upload-failed`, `failed` (of one bundle): a bundle and why.
struct BundleReasonEvent: JSONEvent {
    let event: String
    let bundle: String
    let reason: String
}

/// `remote-rejected`: a remote cache entry that did not verify.
struct RemoteRejectedEvent: JSONEvent {
    let event = "remote-rejected"
    let bundle: String
    let url: String
    let reason: String
}

/// `bundle-unpacked`, `bundle-reused`: a bundle and its files.
struct BundleFilesEvent: JSONEvent {
    let event: String
    let bundle: String
    let files: Int
}

/// `bundle-chunked`: a bundle made from a device's old chunks and fetched ones.
struct BundleChunkedEvent: JSONEvent {
    let event = "bundle-chunked"
    let bundle: String
    let downloaded: Int64
    let reused: Int64
    let size: Int64
    @Nullable var fallback: String?
}

/// `retry`: a bundle's download tried again.
struct RetryEvent: JSONEvent {
    let event = "retry"
    let bundle: String
    let attempt: Int
    let reason: String
    let delay: Double
}

/// `pack-progress`: files and bytes into the `.tar.zst`.
struct PackProgressEvent: JSONEvent {
    let event = "pack-progress"
    let files: Int
    let totalFiles: Int
    let bytes: Int64
    let totalBytes: Int64
}

/// `publish-progress`: bundles packed.
struct PublishProgressEvent: JSONEvent {
    let event = "publish-progress"
    let bundles: Int
    let total: Int
}

/// `published`: the catalog written.
struct PublishedEvent: JSONEvent {
    let event = "published"
    let catalog: String
    let regions: Int
    let bundles: Int
    let bytes: Int64
    @Nullable var catalogVersion: Int?
    /// Bundles reused from the previous publish (`--previous`, or the output folder's) instead of packed.
    let reused: Int
}

/// `imported`: a source folder written from a tileset.
struct ImportedEvent: JSONEvent {
    let event = "imported"
    let output: String
    let regions: Int
    let bundles: Int
    let tiles: Int
    let placed: Int
    let outside: Int
    let places: Int
}

/// `keygen`: the key files written (`private` only when a new pair was made).
struct KeygenEvent: JSONEvent {
    let event = "keygen"
    let `public`: String
    let minisignPublic: String
    let `private`: String?
}

/// `serving`: `mappack serve` listens.
struct ServingEvent: JSONEvent {
    let event = "serving"
    let path: String
    let kind: String
    let url: String
    let port: Int
    let imageID: String
    let tileDatabases: Int
    let maplibre: String?
}

/// `status`: a store's state after `install` or `status`.
struct StoreStatusEvent: JSONEvent {
    let event = "status"
    let status: String
    let storage: String
    /// Empty when nothing is installed.
    let mapVersion: String
    let imageID: String
    @Nullable var advice: String?
}

/// `repaired`: what a repair did.
struct RepairedEvent: JSONEvent {
    let event = "repaired"
    let before: String
    let status: String
    let storage: String
    let actions: [String]
}

/// `deleted`, `downloaded`: regions and the storage.
struct StoreRegionsEvent: JSONEvent {
    let event: String
    let regions: [String]
    let storage: String
}

/// `cache-cleared`: the map cache's bytes after.
struct CacheClearedEvent: JSONEvent {
    let event = "cache-cleared"
    let bytes: Int64
}

/// `cache-limit`: the limit set and the bytes after.
struct CacheLimitEvent: JSONEvent {
    let event = "cache-limit"
    let limit: Int64
    let bytes: Int64
}

/// `moved`: the storage's new folder.
struct MovedEvent: JSONEvent {
    let event = "moved"
    let storage: String
}

/// `update-progress`: an update's phase and how far.
struct UpdateProgressEvent: JSONEvent {
    let event = "update-progress"
    let phase: String
    let fraction: Double
}

/// `updated`: the map version after an update.
struct UpdatedEvent: JSONEvent {
    let event = "updated"
    @Nullable var mapVersion: String?
    let storage: String
    /// The catalog updated (its id) and the version of it now installed.
    var catalog: String?
    var catalogVersion: String?
}

/// `download-progress`: one region's bytes received.
struct DownloadProgressEvent: JSONEvent {
    let event = "download-progress"
    let region: String
    let received: Int64
    let total: Int64
}
