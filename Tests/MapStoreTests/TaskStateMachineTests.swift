import Foundation
import MapFormat
import Synchronization
import TestSupport
import Testing

@testable import MapStore

/// Pause, resume and cancel of a `DownloadTask` or an `UpdateTask` (issue 35 item 1): a pause that
/// lands while a resume starts the next run stops that run.
@Suite struct TaskStateMachineTests {
    /// The events of `iterator` up to the next `.stateChanged(region, .paused)`, as lines.
    static func lines(
        until region: RegionID, _ iterator: inout AsyncStream<DownloadEvent>.Iterator
    ) async -> [String] {
        var lines: [String] = []
        while let event = await iterator.next() {
            switch event {
            case .stateChanged(let id, let state):
                lines.append("\(id) \(state)")
                if id == region, state == .paused { return lines }
            case .progress(let id, _, _): lines.append("progress \(id)")
            case .completed(let ids): lines.append("completed \(ids.map(\.rawValue).joined(separator: ","))")
            case .failed(let error): lines.append("failed \(error)")
            }
        }
        return lines
    }

    /// `resume()` makes the next run; a `pause()` arriving at that moment (here from the hook
    /// `download.resumed`, reached as `resume()` returns) must find and stop that run, not the one
    /// before it, which ended at the first pause. Before issue 35 the run was made after the lock was
    /// let go: the pause cancelled the old run and the new one fetched everything in phase `pausing`.
    @Test func pauseDuringResumeStopsTheNewRun() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(catalog: URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL)
        let region: RegionID = "europe/li"
        let task = try store.download(regions: [region])
        var events = task.events.makeAsyncIterator()
        #expect(task.pause())
        let first = await Self.lines(until: region, &events)
        try #require(task.isPaused, "the first pause did not take: \(first)")

        let root = folderPath(device.storage)
        let pausedInResume = Mutex<Bool?>(nil)
        CrashPoint.storageHooks.withLock {
            $0[root] = { [task] name in
                guard name == "download.resumed" else { return }
                CrashPoint.storageHooks.withLock { $0[root] = nil }
                pausedInResume.withLock { $0 = task.pause() }
            }
        }
        defer { CrashPoint.storageHooks.withLock { $0[root] = nil } }
        task.resume()
        try #require(pausedInResume.withLock { $0 } == true, "the hook did not pause the resumed task")
        let second = await Self.lines(until: region, &events)
        #expect(
            !second.contains { $0.hasSuffix(" downloading") || $0.hasPrefix("progress") },
            "the run started by resume() went on after the pause: \(second)")
        #expect(task.isPaused)

        // The machine is not stuck: a plain resume finishes the download.
        task.resume()
        try await task.wait()
        #expect(try store.regions().first { $0.id == region }?.state == .completed)
    }

    // MARK: the machine alone

    /// Every transition from every phase, against what `DownloadTask` and `UpdateTask` promise.
    @Test func transitionsFromEveryPhase() {
        let run = Task<Void, Never> {}
        var machine = TaskStateMachine()
        machine.start { run }
        let resumedWhileRunning = machine.resume { Task {} }
        #expect(!resumedWhileRunning, "resume() of a running task made a run")
        let pause = machine.pause()
        #expect(pause.pausing && pause.cancel == run)
        let again = machine.pause()
        #expect(again.pausing && again.cancel == nil, "a second pause cancelled a run again")
        let installedWhilePausing = machine.beginInstall()
        #expect(!installedWhilePausing, "a pausing task began its install")
        let paused = machine.markPaused()
        #expect(paused && machine.phase == .paused)

        // The run a resume makes is the one the next pause and stop cancel.
        let next = Task<Void, Never> {}
        let resumed = machine.resume { next }
        let pausedAgain = machine.pause()
        #expect(resumed && pausedAgain.cancel == next)
        _ = machine.markPaused()
        _ = machine.resume { next }
        let stop = machine.stop(.cancel)
        guard case .cancelRun(let cancelled) = stop else {
            Issue.record("stop(.cancel) of a running task did not cancel its run: \(stop)")
            return
        }
        #expect(cancelled == next && machine.phase == .cancelling)
        let late = (machine.markPaused(), machine.beginInstall(), machine.pause().pausing)
        #expect(late == (false, false, false), "a cancelling task moved on")
        guard case .none = machine.stop(.keepFetchedBytes) else {
            Issue.record("a second stop acted")
            return
        }

        // Paused: a stop leaves the settling to the caller; installing: everything is too late.
        var idle = TaskStateMachine()
        idle.start { run }
        _ = idle.pause()
        _ = idle.markPaused()
        guard case .settle = idle.stop(.keepFetchedBytes) else {
            Issue.record("stop of a paused task did not ask to settle")
            return
        }
        #expect(idle.phase == .stopping)
        var installing = TaskStateMachine()
        installing.start { run }
        let began = installing.beginInstall()
        let refused = (installing.pause().pausing, installing.completeElsewhere())
        #expect(began && refused == (false, false))
        guard case .none = installing.stop(.cancel) else {
            Issue.record("cancel of an installing task acted")
            return
        }
    }
}
