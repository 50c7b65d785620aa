/// Stable kinds for `StoreEvent`, so apps can branch on what happened without an exhaustive `switch`
/// over the enum: an event added later (something a newer library announces) adds a kind here, and an
/// app's `switch event.kind` (over a struct, which always has a `default`) keeps compiling. Treat the
/// enum as non-exhaustive: match the events you handle, then `default`.
extension StoreEvent {
    /// What an event is about, by a stable name (`rawValue`, e.g. `"region-state-changed"`).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }
}

extension StoreEvent {
    /// What the event is about, stable across library versions (see `Kind`).
    public var kind: StoreEvent.Kind {
        switch self {
        case .regionStateChanged: .regionStateChanged
        case .progress: .progress
        case .updateAvailable: .updateAvailable
        case .updateStarted: .updateStarted
        case .updateDeferred: .updateDeferred
        case .updateDeclined: .updateDeclined
        case .updateCheckFailed: .updateCheckFailed
        case .updateProgress: .updateProgress
        case .downloadFinished: .downloadFinished
        case .downloadFailed: .downloadFailed
        case .updateFinished: .updateFinished
        case .mapCacheReset: .mapCacheReset
        case .updateFailed: .updateFailed
        case .availableRegionsChanged: .availableRegionsChanged
        case .moveProgress: .moveProgress
        case .storageMoved: .storageMoved
        case .updatePaused: .updatePaused
        case .repaired: .repaired
        case .storageSwitched: .storageSwitched
        case .networkChanged: .networkChanged
        }
    }
}

extension StoreEvent.Kind {
    public static let regionStateChanged = Self("region-state-changed")
    public static let progress = Self("progress")
    public static let updateAvailable = Self("update-available")
    public static let updateStarted = Self("update-started")
    public static let updateDeferred = Self("update-deferred")
    public static let updateDeclined = Self("update-declined")
    public static let updateCheckFailed = Self("update-check-failed")
    public static let updateProgress = Self("update-progress")
    public static let downloadFinished = Self("download-finished")
    public static let downloadFailed = Self("download-failed")
    public static let updateFinished = Self("update-finished")
    public static let mapCacheReset = Self("map-cache-reset")
    public static let updateFailed = Self("update-failed")
    public static let availableRegionsChanged = Self("available-regions-changed")
    public static let moveProgress = Self("move-progress")
    public static let storageMoved = Self("storage-moved")
    public static let updatePaused = Self("update-paused")
    public static let repaired = Self("repaired")
    public static let storageSwitched = Self("storage-switched")
    public static let networkChanged = Self("network-changed")

    /// Every kind this version of the library has.
    public static let all: [StoreEvent.Kind] = [
        .regionStateChanged, .progress, .updateAvailable, .updateStarted, .updateDeferred, .updateDeclined, .updateCheckFailed, .updateProgress,
        .downloadFinished, .downloadFailed, .updateFinished, .mapCacheReset, .updateFailed, .availableRegionsChanged, .moveProgress, .storageMoved,
        .updatePaused, .repaired, .storageSwitched, .networkChanged,
    ]
}

extension StoreEvent {
    /// The catalog the event is about, when it says: an update's check, start, deferral and decline
    /// (`UpdateInfo.catalog`) and its map cache reset (`CacheReset.catalog`). Nil for the others,
    /// `updateFinished` and `availableRegionsChanged` among them (their payloads carry no catalog).
    public var catalog: CatalogID? {
        switch self {
        case .updateAvailable(let info), .updateStarted(let info), .updateDeferred(let info, _), .updateDeclined(let info, _): info.catalog
        case .mapCacheReset(let reset): reset.catalog
        default: nil
        }
    }
}
