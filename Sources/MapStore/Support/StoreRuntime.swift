import MapFormat

/// Everything a store knows at run time besides what is committed in its storage, as one value under
/// one lock (`MapStore.runtime`): the live download tasks and update, the bundles each claims in the
/// download cache, the fetches writing there, each region's progress and the snapshot readers see.
///
/// Each transition is a mutating call that changes the value and returns what the caller does once the
/// lock is let go (announce state changes, remove bundles, settle a task), so no decision is taken on a
/// value another lock may have changed meanwhile. Generic over the task types only so that the table
/// test (`StoreRuntimeTests`) drives it with plain objects; the store uses `MapStore.Runtime`.
struct StoreRuntime<Download: AnyObject, Update: AnyObject> {
    /// What readers see: replaced when a write ends (`publish`).
    private(set) var published: StoreSnapshot
    /// Download tasks not finished yet (running or paused), held weakly: a task holds its store.
    private var downloads: [ObjectIdentifier: Weak<Download>] = [:]
    /// The update not finished yet (running or paused); one at a time, held weakly like downloads.
    private var update = Weak<Update>()
    /// The bundles each live task (download or update) claims in the download cache.
    private var claims: [ObjectIdentifier: Set<BundleDigest>] = [:]
    /// How many live tasks claim each bundle: a cleanup removes only bundles with none.
    private(set) var claimCounts: [BundleDigest: Int] = [:]
    /// Fetches (downloads and updates) writing into the download cache now.
    private(set) var fetching = 0
    /// Latest progress per region being downloaded or updated, for `MapStore.progress(of:)`.
    private var progress: [RegionID: RegionProgress] = [:]

    init(published: StoreSnapshot) {
        self.published = published
    }

    // MARK: Live tasks

    /// A download task starts: it is live until `finished(download:)`.
    mutating func started(download: Download) {
        downloads[ObjectIdentifier(download)] = Weak(download)
    }

    /// A download task ended: it is no longer live, and its claims are let go.
    mutating func finished(download: Download) {
        downloads[ObjectIdentifier(download)] = nil
        release(ObjectIdentifier(download))
    }

    /// The live download tasks (ones an app let go of while paused are gone).
    var liveDownloads: [Download] { downloads.values.compactMap(\.object) }

    /// What `startUpdate` does: return the live update (`existing`), or the new one `make` made.
    enum UpdateStart: Equatable {
        /// No update was live: `make`'s is live now and must be started.
        case started
        /// An update for the same catalog is live: resume it.
        case existing
        /// An update for another catalog is live.
        case busy
    }

    /// Starts an update unless one is live: `sameCatalog` says whether the live one reads the same catalog.
    mutating func startUpdate(_ make: () -> Update, sameCatalog: (Update) -> Bool) -> (UpdateStart, Update?) {
        if let live = update.object { return sameCatalog(live) ? (.existing, live) : (.busy, nil) }
        let task = make()
        update = Weak(task)
        return (.started, task)
    }

    /// An update ended: it is no longer live, and its claims are let go.
    mutating func finished(update task: Update) {
        if update.object === task { update = Weak() }
        release(ObjectIdentifier(task))
    }

    /// The live update, if any.
    var liveUpdate: Update? { update.object }

    /// What is under way on the storage folder and would be cut off from it by a switch (nil when none is).
    var liveWork: String? {
        if fetching > 0 { return "a download or an update that is fetching" }
        if !liveDownloads.isEmpty { return "a download task (running or paused)" }
        if liveUpdate != nil { return "an update (running or paused)" }
        return nil
    }

    // MARK: Claims

    /// `owner` claims exactly `bundles` (replacing what it claimed before), taken in the same step as
    /// the plan that chose them, so a cleanup that runs after never removes one of them.
    mutating func claim(_ bundles: Set<BundleDigest>, by owner: ObjectIdentifier) {
        release(owner)
        guard !bundles.isEmpty else { return }
        claims[owner] = bundles
        for digest in bundles { claimCounts[digest, default: 0] += 1 }
    }

    /// `owner` claims nothing any more.
    mutating func release(_ owner: ObjectIdentifier) {
        guard let bundles = claims.removeValue(forKey: owner) else { return }
        for digest in bundles {
            let count = (claimCounts[digest] ?? 1) - 1
            claimCounts[digest] = count > 0 ? count : nil
        }
    }

    /// A cleanup of `owner`'s fetched `bundles`: lets go of `owner`'s claims and returns the bundles
    /// nobody else claims, which the caller removes (under the store's lock, where claims are taken).
    mutating func cleanup(_ bundles: Set<BundleDigest>, of owner: ObjectIdentifier) -> Set<BundleDigest> {
        release(owner)
        return bundles.filter { claimCounts[$0] == nil }
    }

    // MARK: Fetches

    /// A fetch begins writing into the download cache (a move refuses to start meanwhile).
    mutating func beginFetch() { fetching += 1 }

    /// A fetch ended.
    mutating func endFetch() { fetching = max(0, fetching - 1) }

    // MARK: Progress

    /// A region's bytes so far.
    mutating func record(_ region: RegionID, _ value: RegionProgress) { progress[region] = value }

    /// The latest progress of `region`, nil when none is under way.
    func progress(of region: RegionID) -> RegionProgress? { progress[region] }

    /// The regions' work ended (installed, outdated again, cancelled): no progress is kept for them.
    mutating func settleProgress<S: Sequence>(_ regions: S) where S.Element == RegionID {
        for id in regions { progress[id] = nil }
    }

    // MARK: Publishing

    /// Publishes `snapshot` for readers; returns each region whose state differs from the snapshot it
    /// replaces, with its new state (a region gone from the store and the downloads reads `available`),
    /// which the caller announces in this order. A region that settled (installed, outdated, gone)
    /// keeps no progress; a paused one keeps its bytes so far.
    mutating func publish(_ snapshot: StoreSnapshot) -> [(RegionID, RegionState)] {
        let before = published.states
        published = snapshot
        let after = snapshot.states
        let changes = Set(before.keys).union(after.keys).sorted().filter { before[$0] != after[$0] }.map { ($0, after[$0] ?? .available) }
        settleProgress(changes.filter { $0.1 != .downloading && $0.1 != .paused }.map(\.0))
        return changes
    }

    // MARK: Settling a run

    /// How a run of a download or an update that stopped by an error ends, from the error and the task's
    /// phase: the one rule both runners follow (`MapStore.settle`).
    static func settlement(cancelled: Bool, phase: TaskStateMachine.Phase) -> RunSettlement {
        guard cancelled else { return .fail }
        switch phase {
        case .pausing: return .pause
        case .cancelling: return .endRemovingBytes
        case .running, .paused, .installing, .stopping, .finished: return .endKeepingBytes
        }
    }
}

/// How a stopped run ends (`StoreRuntime.settlement`).
enum RunSettlement: Equatable {
    /// Paused: the regions are recorded `paused`, then the task is (if a stop or a cancel came in
    /// meanwhile, the run settles again as that one asks).
    case pause
    /// Ended by a stop: fetched bytes are kept for a later task, the regions wait (`paused` downloads,
    /// `outdated` updates).
    case endKeepingBytes
    /// Ended by a cancel: fetched bytes no other task claims are removed.
    case endRemovingBytes
    /// Failed: the failure is the task's end; fetched bytes are kept for a later attempt.
    case fail
}

/// An object held without keeping it alive.
struct Weak<Object: AnyObject> {
    weak var object: Object?

    init(_ object: Object? = nil) { self.object = object }
}
