import Foundation
import MapFormat
import Synchronization
import TestSupport
import Testing

@testable import MapStore

/// Issue 31: the region states a consumer of `events()` builds by applying every `regionStateChanged` to
/// the states of the store's snapshot before equal the states of its snapshot after every operation, for
/// random sequences of operations against real nginx catalogs (two map versions). A failure names the
/// seed; set `MAPSTORE_PROPERTY_SEED` to replay it.
///
/// The states are the snapshot's (`StoreSnapshot.states`: installed regions and download rows), not the
/// public listings: `availableRegions` lists nothing while a store needs repair or keeps no catalog of
/// its version (after a repair finished a killed update, until the next check), though its paused
/// downloads are there.
///
/// Across a process death there are no events to hear: the killed process announced nothing more, and
/// the reopened store is a new consumer's start. Replay then begins again from the states the reopened
/// store holds at open (its initial states, with interrupted fetches paused), and every later event, the
/// repair's first when open found interrupted work, applies to those.
@Suite struct EventReplayPropertyTests {
    /// Sequences per run and operations per sequence: 10 to 40 s on a loaded two-core machine.
    static let sequences = 6
    static let operations = 10

    /// The operations a sequence picks from.
    enum Operation: CaseIterable {
        case downloadParent, delete, check, update, pauseAndResume, cancel, killAndReopen, repair
    }

    @Test(.timeLimit(.minutes(10)))
    func replayedEventsEqualTheStoreAfterEveryOperation() async throws {
        let fixture = try await UpdateFixture.ready()
        let nginx = try NginxServer(root: fixture.served)
        defer { nginx.stop() }
        let old = URL(string: "cat-\(UpdateFixture.oldVersion)/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let new = URL(string: "cat-\(UpdateFixture.newVersion)/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let seed = ProcessInfo.processInfo.environment["MAPSTORE_PROPERTY_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        for sequence in 0..<EventReplayPropertyTests.sequences {
            let device = Device()
            var store = try await device.open(image: fixture.image, catalog: old)
            var replay = EventReplay(store, observing: EventReplayPropertyTests.snapshotStates)
            var done: [String] = []
            for step in 0..<EventReplayPropertyTests.operations {
                let operation = Operation.allCases.randomElement(using: &random)!
                let what = try await EventReplayPropertyTests.run(
                    operation, store: store, device: device, old: old, new: new, fixture: fixture, random: &random)
                done.append(what)
                if operation == .killAndReopen {
                    store = try await device.open(image: fixture.image, catalog: old)
                    replay = EventReplay(store, observing: EventReplayPropertyTests.snapshotStates)
                    if store.initialStatus != .ok {
                        _ = try? await store.repair()
                        done.append("repair after reopen (\(store.initialStatus))")
                    }
                }
                let mismatch = await replay.mismatch()
                #expect(
                    mismatch == nil,
                    "seed \(seed) (MAPSTORE_PROPERTY_SEED), sequence \(sequence), step \(step): \(mismatch ?? "")\n  operations: \(done.joined(separator: "; "))"
                )
                if mismatch != nil { return }
            }
        }
    }

    /// The states of the store's published snapshot, `available` ones left out (as events replay them).
    @Sendable static func snapshotStates(_ store: MapStore) -> [RegionID: RegionState] {
        store.snapshot.states.filter { $0.value != .available }
    }

    /// Runs `operation` on the store (or, for a kill, the CLI on its storage) and says what it did. Refusals
    /// (a region not installed, a store to repair first) are outcomes like any other: the states must still agree.
    static func run(
        _ operation: Operation, store: MapStore, device: Device, old: URL, new: URL, fixture: UpdateFixture, random: inout SplitMix64
    ) async throws -> String {
        let installed = try store.regions().map(\.id)
        let available = ((try? store.availableRegions()) ?? []).filter { $0.state != .completed }
        // A parent of something not installed (or that thing itself): downloading it brings its descendants.
        let wanted = available.flatMap { [$0.id] + ($0.parent.map { [$0] } ?? []) }
        switch operation {
        case .downloadParent:
            guard let id = wanted.randomElement(using: &random) else { return "download: nothing to download" }
            return await outcome("download \(id)") { try await store.download(regions: [id]).wait() }
        case .delete:
            guard let id = installed.randomElement(using: &random) else { return "delete: nothing installed" }
            return await outcome("delete \(id)") { try await store.deleteRegions([id]) }
        case .check:
            return await outcome("check") { _ = try await store.checkForUpdate(catalog: new) }
        case .update:
            return await outcome("update") { try await store.update(catalog: new) }
        case .pauseAndResume:
            guard let id = wanted.randomElement(using: &random) else { return "pause: nothing to download" }
            let task: DownloadTask
            do { task = try store.download(regions: [id]) } catch { return "pause \(id): \(error)" }
            let ended = Flag()
            let waiter = Task { () -> String in
                defer { ended.raise() }
                return await outcome("pause and resume \(id)") { try await task.wait() }
            }
            // Paused at once: before, during or after the fetch, whatever the machine's speed makes it; resumed
            // once paused (a resume while the pause is under way does nothing), unless it ended first.
            task.pause()
            _ = await eventually(60) { task.isPaused || ended.isRaised }
            task.resume()
            return await waiter.value
        case .cancel:
            guard let id = wanted.randomElement(using: &random) else { return "cancel: nothing to download" }
            let task: DownloadTask
            do { task = try store.download(regions: [id]) } catch { return "cancel \(id): \(error)" }
            task.cancel()
            return await outcome("cancel \(id)") { try await task.wait() }
        case .killAndReopen:
            let kills: [([String], String)] = [
                (["download", "world", "--catalog", store.catalogURL?.absoluteString ?? old.absoluteString], "download.afterFetch"),
                (["download", "europe", "--catalog", store.catalogURL?.absoluteString ?? old.absoluteString], "download.afterMark"),
                (["delete", installed.randomElement(using: &random)?.rawValue ?? "europe/ch/zh"], "delete.midFiles"),
                (["update", "--catalog", new.absoluteString], "update.afterFetch"),
                (["update", "--catalog", new.absoluteString], "update.midSwitch"),
            ]
            let (verb, point) = kills.randomElement(using: &random)!
            let result = try await device.run(verb, crashAt: point)
            return "mappack store \(verb.prefix(2).joined(separator: " ")) killed at \(point): exit \(result.status)"
        case .repair:
            return await outcome("repair") { _ = try await store.repair() }
        }
    }

    /// `what`, then "ok" or the error's message.
    static func outcome(_ what: String, _ body: () async throws -> Void) async -> String {
        do {
            try await body()
            return what + ": ok"
        } catch {
            return what + ": \(error)"
        }
    }
}

/// A flag one task raises and another polls.
final class Flag: Sendable {
    private let raised = Mutex(false)
    func raise() { raised.withLock { $0 = true } }
    var isRaised: Bool { raised.withLock { $0 } }
}

/// A seeded random number generator (SplitMix64): the same seed gives the same sequence of operations.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
