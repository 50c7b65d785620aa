import Foundation
import MapIO
import MapStore

/// `MapStore.open` of an installed store (an app's every start after the first), against the least an
/// open must do: open the state database and read one row (which image is installed). That floor, not a
/// `stat` of the folder, is the baseline because no open can know the installed version without it; the
/// ratio is what the store adds on top. The same open with the preinstalled image offered (as an app
/// passes it at every start) runs in the same rounds.
enum OpenBench {
    /// The JSON line this benchmark prints.
    struct Row: Encodable {
        var row = "open-installed-store"
        var runs: Int
        /// Seconds the one-time install took (hard links from the folder image); nil when an earlier run's store was reused.
        var installSeconds: Double?
        var openMedianMs: Double
        var openMinMs: Double
        var openMaxMs: Double
        var openWithImageMedianMs: Double
        var baselineMedianMs: Double
        var baselineMinMs: Double
        var ratio: Double
        var targetMs = 20.0
        var pass: Bool
    }

    static func run(_ arguments: BenchArguments) async throws -> Row? {
        let image = PreinstalledImage(url: arguments.folder("--image"))
        let storage = arguments.folder("--storage")
        let cache = arguments.folder("--cache")
        let runs = try arguments.count("--runs", default: 10)
        let installSeconds = try await installOnce(image, storage: storage, cache: cache)
        if arguments.has("--open-only") {
            for _ in 0..<runs { try await open(storage: storage, cache: cache, image: nil) }
            return nil
        }

        let clock = ContinuousClock()
        var opens = LatencySamples()
        var withImage = LatencySamples()
        var baseline = LatencySamples()
        // Alternating rounds: whatever else the machine does falls on all three alike.
        for _ in 0..<runs {
            var start = clock.now
            try readInstalledImageID(storage: storage)
            baseline.append(clock.now - start)
            start = clock.now
            try await open(storage: storage, cache: cache, image: nil)
            opens.append(clock.now - start)
            start = clock.now
            try await open(storage: storage, cache: cache, image: image)
            withImage.append(clock.now - start)
        }
        return Row(
            runs: runs, installSeconds: installSeconds, openMedianMs: opens.medianMilliseconds, openMinMs: opens.quantileMilliseconds(0),
            openMaxMs: opens.maxMilliseconds, openWithImageMedianMs: withImage.medianMilliseconds, baselineMedianMs: baseline.medianMilliseconds,
            baselineMinMs: baseline.quantileMilliseconds(0), ratio: opens.medianMilliseconds / max(baseline.medianMilliseconds, 1e-6),
            pass: opens.medianMilliseconds <= 20 && withImage.medianMilliseconds <= 20)
    }

    /// Installs `image` unless the storage already holds an installed store that opens `ok`; returns the
    /// install's seconds, nil when reused.
    private static func installOnce(_ image: PreinstalledImage, storage: URL, cache: URL) async throws -> Double? {
        if FileManager.default.fileExists(atPath: storage.appendingPathComponent("state.sqlite").path),
            (try? await MapStore.open(storage: storage, cache: cache))?.initialStatus == .ok
        {
            return nil
        }
        for folder in [storage, cache] { try? FileManager.default.removeItem(at: folder) }
        var options = MapStore.Options()
        // The image is the benchmark's own and stays read-only: hard links make a 1 GiB install quick.
        options.linkFilesFromFolderImage = true
        let clock = ContinuousClock()
        let start = clock.now
        let store = try await MapStore.open(storage: storage, cache: cache, preinstalled: image, options: options)
        guard store.initialStatus == .ok else { throw BenchFailure("\(storage.path): install ended \(store.initialStatus)") }
        return seconds(clock.now - start)
    }

    /// One open, as an app's start does it; the store is released before the next.
    private static func open(storage: URL, cache: URL, image: PreinstalledImage?) async throws {
        let store = try await MapStore.open(storage: storage, cache: cache, preinstalled: image)
        guard store.initialStatus == .ok else { throw BenchFailure("\(storage.path): open found \(store.initialStatus), not ok") }
    }

    /// The baseline: open the state database read-only and read the installed image's id.
    private static func readInstalledImageID(storage: URL) throws {
        let database = try SQLiteDatabase(path: storage.appendingPathComponent("state.sqlite").path, readOnly: true)
        guard try database.firstRow("SELECT value FROM meta WHERE key = ?", [.text(StateMetaKey.imageID.rawValue)]) != nil else {
            throw BenchFailure("\(database.path): no installed image id")
        }
    }
}
