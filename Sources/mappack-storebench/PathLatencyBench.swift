import Foundation
import MapFormat
import MapStore
import Synchronization

/// `path(of:)` latency with no write running and while an update runs, in one process: the update's
/// work (fetching, staging, hard-linking, the switch and the published snapshot) must not make readers wait.
enum PathLatencyBench {
    /// The JSON line this benchmark prints.
    struct Row: Encodable {
        var row = "path-during-update"
        var changedBundles: Int
        var updateBytes: Int64
        var updateSeconds: Double
        var sampleFiles: Int
        var intervalMs: Int
        var baselineCalls: Int
        var baselineMedianMs: Double
        var baselineP99Ms: Double
        var updateCalls: Int
        var updateMedianMs: Double
        var updateP99Ms: Double
        var updateMaxMs: Double
        /// Calls during the update that found no file (a file the new version dropped, once switched).
        var updateNotFound: Int
        var medianRatio: Double
        var p99Ratio: Double
        var targetMedianMs = 5.0
        var pass: Bool
    }

    /// Set by the update's side when it ends; read by the reader's loop.
    private final class StopFlag: Sendable {
        private let stopped = Atomic<Bool>(false)
        func stop() { stopped.store(true, ordering: .releasing) }
        var isStopped: Bool { stopped.load(ordering: .acquiring) }
    }

    static func run(_ arguments: BenchArguments) async throws -> Row {
        let image = arguments.folder("--image")
        let storage = arguments.folder("--storage")
        let cache = arguments.folder("--cache")
        let catalog = try arguments.url("--update-catalog")
        let interval = try arguments.count("--interval-ms", default: 1, minimum: 0)
        let baselineCalls = try arguments.count("--baseline-calls", default: 2000)
        let sampleCount = try arguments.count("--sample-files", default: 1000)

        // A fresh store each run: the update changes it.
        for folder in [storage, cache] { try? FileManager.default.removeItem(at: folder) }
        var options = MapStore.Options()
        // The image is the benchmark's own and stays read-only, so its files may be shared.
        options.linkFilesFromFolderImage = true
        let store = try await MapStore.open(storage: storage, cache: cache, preinstalled: PreinstalledImage(url: image), options: options)
        let files = try sampleFiles(in: image.appendingPathComponent("store").path, count: sampleCount)

        let info = try await store.checkForUpdate(catalog: catalog)
        guard info.bundlesToFetch > 0 else {
            throw BenchFailure(
                "\(catalog): no update (installed \(info.installedVersion), catalog \(info.availableVersion)); publish a newer version")
        }

        let never = StopFlag()
        _ = await onOwnThread { loop(store, files: files, interval: interval, calls: files.count, stop: never) }
        let baseline = await onOwnThread { loop(store, files: files, interval: interval, calls: baselineCalls, stop: never) }

        let updateEnded = StopFlag()
        async let during = onOwnThread { loop(store, files: files, interval: interval, calls: nil, stop: updateEnded) }
        let clock = ContinuousClock()
        let start = clock.now
        let outcome: Result<Void, any Error>
        do {
            try await store.startUpdate(catalog: catalog).wait()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        let updateSeconds = seconds(clock.now - start)
        updateEnded.stop()
        let measured = await during
        try outcome.get()
        guard store.mapVersion == info.availableVersion else {
            throw BenchFailure("the update ended at \(store.mapVersion?.rawValue ?? "nothing"), not \(info.availableVersion)")
        }

        let samples = measured.samples
        return Row(
            changedBundles: info.bundlesToFetch, updateBytes: info.updateBytes, updateSeconds: updateSeconds, sampleFiles: files.count,
            intervalMs: interval, baselineCalls: baseline.samples.count, baselineMedianMs: baseline.samples.medianMilliseconds,
            baselineP99Ms: baseline.samples.p99Milliseconds, updateCalls: samples.count, updateMedianMs: samples.medianMilliseconds,
            updateP99Ms: samples.p99Milliseconds, updateMaxMs: samples.maxMilliseconds, updateNotFound: measured.notFound,
            medianRatio: samples.medianMilliseconds / max(baseline.samples.medianMilliseconds, 1e-6),
            p99Ratio: samples.p99Milliseconds / max(baseline.samples.p99Milliseconds, 1e-6),
            pass: samples.count > 0 && samples.medianMilliseconds < 5)
    }

    /// Calls `path(of:)` for `files` in turn, `calls` times or until `stop`, pausing `interval` ms between
    /// calls (a UI asks per frame, not in a spin), and times each call.
    private static func loop(_ store: MapStore, files: [String], interval: Int, calls: Int?, stop: StopFlag)
        -> (samples: LatencySamples, notFound: Int)
    {
        var samples = LatencySamples()
        var notFound = 0
        let clock = ContinuousClock()
        var index = 0
        while !stop.isStopped, calls.map({ index < $0 }) ?? true {
            let file = files[index % files.count]
            index += 1
            let start = clock.now
            let found = (try? store.path(of: file)) ?? nil
            samples.append(clock.now - start)
            if found == nil { notFound += 1 }
            if interval > 0 { usleep(UInt32(interval * 1000)) }
        }
        return (samples, notFound)
    }

    /// Up to `count` store-relative file paths spread evenly over the image's store tree.
    private static func sampleFiles(in store: String, count: Int) throws -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: store) else { throw BenchFailure("\(store): cannot list the image's store") }
        var all: [String] = []
        while let path = walk.nextObject() as? String {
            if walk.fileAttributes?[.type] as? FileAttributeType == .typeRegular { all.append(path) }
        }
        guard !all.isEmpty else { throw BenchFailure("\(store): the image holds no files") }
        all.sort()
        let step = max(1, all.count / count)
        return stride(from: 0, to: all.count, by: step).prefix(count).map { all[$0] }
    }
}

/// Seconds of a duration, as a Double.
func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}

/// A benchmark that could not run; the message says what and where.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
