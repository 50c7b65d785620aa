import Foundation
import MapBuild
import MapFetch
import MapFormat
import Synchronization

/// What a build (or merge) is doing, for people: each phase (fetch, reuse, unpack, manifest, cache
/// seed, pack, publish) with its own counts. On a terminal one line is redrawn in place and keeps
/// moving (the time in the phase) while a long phase reports nothing; off a terminal (CI logs) each
/// phase start is a line, and a progress line follows at most every `interval` seconds while the
/// phase lasts. Nothing with `--json` (the events say it) or `--quiet`.
final class BuildProgress: Sendable {
    /// What is known about the build so far.
    private struct State {
        var phase = BuildPhase.plan
        var phaseStarted = Date()
        var bundles = 0
        var downloadBytes: Int64 = 0
        var fetched = 0
        var received: Int64 = 0
        var inFlight: [BundleDigest: Int64] = [:]
        var reused = 0
        /// Bundles the download cache already held when the fetch started.
        var cached = 0
        var unpacked = 0
        var files = 0
        /// Files of the bundles that go into the image's store (the rest feed the cache seed only).
        var storeFiles = 0
        var storeBundlesDone = 0
        var fetchStarted = Date()
        /// The packed form's store files and bytes so far, and their totals.
        var packed = (files: 0, totalFiles: 0, bytes: Int64(0), totalBytes: Int64(0))
        /// A signal came: the line said so and moves no more.
        var stopping = false
    }

    /// How the phases that carry no counts of their own describe themselves.
    struct Descriptions: Sendable {
        var cacheSeed = ""
        var pack = ""
        var publish = ""
        /// The bundles whose files go into the image's store; nil when all do.
        var storeBundles: Set<BundleDigest>?
    }

    private let terminal: Terminal
    private let descriptions: Descriptions
    private let state = Mutex(State())
    private nonisolated(unsafe) var ticker: ProgressTicker?

    init(terminal: Terminal, descriptions: Descriptions = Descriptions()) {
        self.terminal = terminal
        self.descriptions = descriptions
        unsafe ticker = ProgressTicker(terminal: terminal) { [weak self] in self?.currentStatus() }
    }

    /// The status line now; nil before the build has a plan.
    private func currentStatus() -> String? { state.withLock { $0.phase == .plan || $0.stopping ? nil : status($0) } }

    /// Stops the ticking and clears a redrawn line.
    func finish() { unsafe ticker?.finish() }

    /// A line about the whole run on standard error, in every mode (`Terminal.notice`).
    func say(_ message: String) { terminal.notice(message) }

    /// A signal came: the line stops moving (no more ticks or counts) and one line on standard error
    /// says why, in every mode (with `--quiet` and `--json` too: a signal's answer is not chatter).
    func stopping(_ message: String) {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        unsafe ticker?.finish()
        terminal.notice(message)
    }

    /// Every bundle is in place (a phase after fetching and unpacking began), in every mode.
    private let downloadsDone = Atomic<Bool>(false)

    /// What a signal's line says: partial downloads exist only until every bundle is in place.
    var interruptMessage: String {
        downloadsDone.load(ordering: .relaxed)
            ? "interrupted: stopping (the downloads are complete and kept; run the same command again to finish without fetching them)"
            : "interrupted: stopping (partial downloads are kept; run the same command again to resume)"
    }

    /// What a build says before it reads back the outputs of an unsynced build from another boot.
    static let checkHeadline = "check: the last build's outputs were not synced and the machine restarted since; reading every file back"

    /// Takes one of the builder's events.
    func take(_ event: BuildEvent) {
        if case .phase(let name) = event, ![.plan, .upToDate, .check, .reuse, .chunked, .fetch, .unpack].contains(name) {
            downloadsDone.store(true, ordering: .relaxed)
        }
        guard terminal.showsProgress else { return }
        var started: [String] = []
        let now = state.withLock { state -> State? in
            if state.stopping { return nil }
            switch event {
            case .planned(let bundles, let bytes, let cached, _):
                // Fetching starts with the first fetch event: a --from build reuses bundles first.
                state.bundles = bundles
                state.downloadBytes = bytes
                state.cached = cached
            case .phase(let name):
                // The unpack phase ends with its count, also when a warm cache made it too quick to show.
                if state.phase == .unpack, name != .unpack {
                    let seconds = Int(Date().timeIntervalSince(state.phaseStarted))
                    started.append("unpacked \(state.unpacked + state.reused)/\(state.bundles) bundles, \(state.files) files in \(seconds) s")
                }
                started.append(enter(name, &state))
            case .reused(let digest, let files):
                state.reused += 1
                state.files += files
                count(digest, files: files, &state)
            case .unpacked(let digest, let files):
                state.unpacked += 1
                state.files += files
                count(digest, files: files, &state)
            case .fetch(let fetch):
                if state.phase == .plan || state.phase == .reuse { started.append(enter(.fetch, &state)) }
                switch fetch {
                case .progress(let digest, let received, _): state.inFlight[digest] = received
                case .verified(let digest, let size):
                    state.inFlight[digest] = nil
                    state.fetched += 1
                    state.received += size
                case .alreadyCached(let digest, _):
                    state.inFlight[digest] = nil
                    state.fetched += 1
                default: break
                }
                if state.phase == .fetch, state.fetched >= state.bundles - state.reused { started.append(enter(.unpack, &state)) }
            case .chunked(_, let downloaded, _, _, let fallback):
                // A chunked bundle's ranges count as received; the fetch phase then finds it cached.
                if fallback == nil { state.received += downloaded }
            case .packed(let files, let totalFiles, let bytes, let totalBytes):
                state.packed = (files, totalFiles, bytes, totalBytes)
            case .remote: break
            }
            return state
        }
        guard let now else { return }
        // The status line is only made when a terminal redraws it (at most 10 times a second).
        for headline in started { unsafe ticker?.started(headline) }
        if started.isEmpty { unsafe ticker?.update(self.status(now)) }
    }

    /// Counts a bundle put in place toward the image's store when it is one of its bundles.
    private func count(_ digest: BundleDigest, files: Int, _ state: inout State) {
        guard descriptions.storeBundles?.contains(digest) ?? true else { return }
        state.storeFiles += files
        state.storeBundlesDone += 1
    }

    /// Moves to `phase`, giving its first line.
    private func enter(_ phase: BuildPhase, _ state: inout State) -> String {
        state.phase = phase
        state.phaseStarted = Date()
        if phase == .fetch { state.fetchStarted = state.phaseStarted }
        return headline(state)
    }

    /// A phase's first line: what it is about to do.
    private func headline(_ state: State) -> String {
        let toFetch = state.bundles - state.reused
        switch state.phase {
        case .fetch:
            return
                "fetch: \(toFetch) bundle\(toFetch == 1 ? "" : "s"), \(ByteCount.format(state.downloadBytes)) to download"
                + (state.cached > 0 ? " (\(state.cached) in the download cache)" : "")
        case .reuse: return "reuse: copying unchanged bundles from the --from image"
        case .unpack:
            let source = state.cached >= state.bundles - state.reused ? "every bundle in the download cache" : "downloads done"
            return "unpack: \(state.unpacked + state.reused)/\(state.bundles) bundles, \(state.files) files (\(source))"
        case .manifest: return "manifest: \(state.storeFiles) files of \(state.storeBundlesDone) bundles"
        case .cacheSeed: return "cache seed: \(descriptions.cacheSeed)"
        case .pack:
            let size = state.packed.totalBytes > 0 ? " (\(ByteCount.format(state.packed.totalBytes)))" : ""
            return "pack: \(state.storeFiles) files\(size) into \(descriptions.pack)"
        case .publish: return "publish: into \(descriptions.publish)"
        case .check: return BuildProgress.checkHeadline
        default: return "\(state.phase.rawValue)…"
        }
    }

    /// The line that tells how the phase is going.
    private func status(_ state: State) -> String {
        let elapsed = Int(Date().timeIntervalSince(state.phaseStarted))
        switch state.phase {
        case .fetch:
            let received = state.received + state.inFlight.values.reduce(0, +)
            let seconds = max(0.001, Date().timeIntervalSince(state.fetchStarted))
            let rate = Double(received) / seconds
            let eta = rate > 0 ? Int(Double(max(0, state.downloadBytes - received)) / rate) : 0
            return
                "fetch \(state.fetched)/\(state.bundles - state.reused) bundles  \(ByteCount.format(received))/\(ByteCount.format(state.downloadBytes))  "
                + "\(ByteCount.format(Int64(rate)))/s  ETA \(eta) s · unpacked \(state.unpacked + state.reused)/\(state.bundles)"
        case .unpack:
            return "unpack \(state.unpacked + state.reused)/\(state.bundles) bundles, \(state.files) files · \(elapsed) s"
        case .pack:
            let packed = state.packed
            return
                "pack \(packed.files)/\(packed.totalFiles) files, \(ByteCount.format(packed.bytes))/\(ByteCount.format(packed.totalBytes))"
                + " into \(descriptions.pack) · \(elapsed) s"
        default:
            return headline(state) + " · \(elapsed) s"
        }
    }
}
