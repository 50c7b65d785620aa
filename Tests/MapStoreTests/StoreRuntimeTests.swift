import Foundation
import MapFormat
import Testing

@testable import MapStore

/// The store's run-time state as one value (issue 40 item 1): every transition of `StoreRuntime`, driven
/// without a store, and the one rule that settles a stopped download or update.
@Suite struct StoreRuntimeTests {
    /// Stand-ins for `DownloadTask` and `UpdateTask`: the runtime only holds them weakly and compares them.
    final class Job {
        let catalog: String
        init(catalog: String = "a") { self.catalog = catalog }
    }

    typealias Runtime = StoreRuntime<Job, Job>

    static func digest(_ byte: Character) -> BundleDigest {
        BundleDigest("sha256:" + String(repeating: byte, count: 64))!
    }

    static func region(_ id: RegionID, _ state: RegionState) -> StoredRegion {
        StoredRegion(id: id, parent: nil, name: id.rawValue, names: [:], bundles: [], sizeOnDisk: 0, state: state)
    }

    static let empty = StoreSnapshot.empty(root: "/nowhere")

    /// Claims are counted per bundle: a cleanup removes only what no other live task claims, whether the
    /// other task claimed before or after the one cleaned up (the interleaving of issue 40: a task that
    /// plans while another is cancelled keeps its bundles).
    @Test func cleanupRemovesOnlyUnclaimedBundles() {
        var runtime = Runtime(published: Self.empty)
        let (a, b, c) = (Self.digest("a"), Self.digest("b"), Self.digest("c"))
        let first = Job()
        let second = Job()
        runtime.claim([a, b], by: ObjectIdentifier(first))
        runtime.claim([b, c], by: ObjectIdentifier(second))
        #expect(runtime.claimCounts == [a: 1, b: 2, c: 1])

        #expect(runtime.cleanup([a, b], of: ObjectIdentifier(first)) == [a], "b is still the second task's")
        #expect(runtime.claimCounts == [b: 1, c: 1])
        // A cleanup is idempotent: the claims are gone, the bundles still claimed by others stay.
        #expect(runtime.cleanup([a, b], of: ObjectIdentifier(first)) == [a])
        #expect(runtime.cleanup([b, c], of: ObjectIdentifier(second)) == [b, c])
        #expect(runtime.claimCounts.isEmpty)
    }

    /// A second claim by the same task replaces its first (a resumed run plans again); an empty claim claims nothing.
    @Test func aClaimReplacesTheTasksEarlierOne() {
        var runtime = Runtime(published: Self.empty)
        let job = Job()
        runtime.claim([Self.digest("a"), Self.digest("b")], by: ObjectIdentifier(job))
        runtime.claim([Self.digest("b")], by: ObjectIdentifier(job))
        #expect(runtime.claimCounts == [Self.digest("b"): 1])
        runtime.claim([], by: ObjectIdentifier(job))
        #expect(runtime.claimCounts.isEmpty)
    }

    /// A finished task is no longer live and claims nothing; a task an app let go of is not live either.
    @Test func finishedAndDroppedTasksAreNotLive() {
        var runtime = Runtime(published: Self.empty)
        let kept = Job()
        runtime.started(download: kept)
        runtime.claim([Self.digest("a")], by: ObjectIdentifier(kept))
        do {
            let dropped = Job()
            runtime.started(download: dropped)
            #expect(runtime.liveDownloads.count == 2)
        }
        #expect(runtime.liveDownloads.map(ObjectIdentifier.init) == [ObjectIdentifier(kept)])
        #expect(runtime.liveWork == "a download task (running or paused)")
        runtime.finished(download: kept)
        #expect(runtime.liveDownloads.isEmpty)
        #expect(runtime.claimCounts.isEmpty)
        #expect(runtime.liveWork == nil)
    }

    /// One update at a time: a second start for the same catalog gets the live one, for another catalog `busy`.
    @Test func oneUpdateAtATime() {
        var runtime = Runtime(published: Self.empty)
        let first = Job(catalog: "world")
        var made = 0
        let (start, task) = runtime.startUpdate(
            {
                made += 1
                return first
            }, sameCatalog: { $0.catalog == "world" })
        #expect(start == .started && task === first && made == 1)
        #expect(runtime.liveWork == "an update (running or paused)")

        let same = runtime.startUpdate(
            {
                made += 1
                return Job(catalog: "world")
            }, sameCatalog: { $0.catalog == "world" })
        #expect(same.0 == .existing && same.1 === first && made == 1)
        let other = runtime.startUpdate(
            {
                made += 1
                return Job(catalog: "japan")
            }, sameCatalog: { $0.catalog == "japan" })
        #expect(other.0 == .busy && other.1 == nil && made == 1)

        // Another update's end does not free the slot; this one's does.
        runtime.finished(update: Job())
        #expect(runtime.liveUpdate === first)
        runtime.finished(update: first)
        #expect(runtime.liveUpdate == nil && runtime.liveWork == nil)
    }

    /// Fetches are counted, a fetch in progress is live work (a switch and a move refuse it), and an
    /// unbalanced end never counts below zero.
    @Test func fetchesAreCounted() {
        var runtime = Runtime(published: Self.empty)
        runtime.beginFetch()
        runtime.beginFetch()
        #expect(runtime.fetching == 2 && runtime.liveWork == "a download or an update that is fetching")
        runtime.endFetch()
        runtime.endFetch()
        runtime.endFetch()
        #expect(runtime.fetching == 0 && runtime.liveWork == nil)
    }

    /// Publishing returns each changed state in region order; a settled region loses its progress, a
    /// paused one keeps it.
    @Test func publishReturnsChangesAndSettlesProgress() {
        var before = Self.empty
        before.downloadStates = ["a/paused": .downloading, "b/installed": .downloading, "c/gone": .paused]
        var runtime = Runtime(published: before)
        for id: RegionID in ["a/paused", "b/installed", "c/gone"] { runtime.record(id, RegionProgress(receivedBytes: 1, totalBytes: 2)) }

        var after = Self.empty
        after.downloadStates = ["a/paused": .paused, "d/new": .downloading]
        after.regions = [Self.region("b/installed", .completed)]
        let changes = runtime.publish(after)
        #expect(changes.map(\.0) == ["a/paused", "b/installed", "c/gone", "d/new"])
        #expect(changes.map(\.1) == [.paused, .completed, .available, .downloading])
        #expect(runtime.progress(of: "a/paused") == RegionProgress(receivedBytes: 1, totalBytes: 2))
        #expect(runtime.progress(of: "b/installed") == nil)
        #expect(runtime.progress(of: "c/gone") == nil)
        #expect(runtime.published.states == after.states)
        #expect(runtime.publish(after).isEmpty, "publishing the same snapshot again changes nothing")
    }

    /// The one rule for a stopped run, for every phase, cancelled or failed: the table downloads and
    /// updates both follow (`MapStore.settle`).
    @Test func settlementTable() {
        let table: [(TaskStateMachine.Phase, RunSettlement)] = [
            (.running, .endKeepingBytes), (.pausing, .pause), (.paused, .endKeepingBytes), (.installing, .endKeepingBytes),
            (.stopping, .endKeepingBytes), (.cancelling, .endRemovingBytes), (.finished, .endKeepingBytes),
        ]
        for (phase, expected) in table {
            #expect(Runtime.settlement(cancelled: true, phase: phase) == expected, "cancelled in \(phase)")
            #expect(Runtime.settlement(cancelled: false, phase: phase) == .fail, "failed in \(phase)")
        }
    }
}
