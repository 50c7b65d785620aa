import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization

/// A reader polling a store on a thread of its own, as an app's map renderer does while the store is
/// written: each round reads `mapVersion`, resolves every watched path with `path(of:)`, hashes the
/// bytes there, and reads `mapVersion` again; a round whose two versions agree is kept as a sample.
final class ReaderLoop: Sendable {
    /// One file as a reader saw it: the store's version and installed regions, and the file's SHA-256 (nil: no file).
    struct Sample: Sendable {
        var version: MapVersion?
        var installed: Set<RegionID>
        var path: String
        var sha256: String?
    }

    private let running = Atomic<Bool>(true)
    private let samples = Mutex<[Sample]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ store: MapStore, paths: [String]) {
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                for path in paths {
                    let before = store.mapVersion
                    let installed = Set(((try? store.regions()) ?? []).map(\.id))
                    let url = try? store.path(of: path)
                    let bytes = url.flatMap { try? Data(contentsOf: $0) }
                    guard store.mapVersion == before, Set(((try? store.regions()) ?? []).map(\.id)) == installed else { continue }
                    let sample = Sample(version: before, installed: installed, path: path, sha256: bytes.map { SHA256.hex($0) })
                    samples.withLock { $0.append(sample) }
                }
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops the loop and returns what it saw.
    func stop() async -> [Sample] {
        running.store(false, ordering: .relaxed)
        let done = done
        await withCheckedContinuation { continuation in
            Thread {
                done.wait()
                continuation.resume()
            }.start()
        }
        return samples.withLock { $0 }
    }

    /// The samples of `path`s whose `region` the reader saw installed that found no file or other bytes than `expected`, as text.
    static func missing(_ samples: [Sample], region: RegionID, expected: [String: String]) -> [String] {
        samples.compactMap { sample in
            guard sample.installed.contains(region), expected[sample.path] != sample.sha256 else { return nil }
            return "\(sample.path) of installed \(region): \(sample.sha256 ?? "no file")"
        }
    }

    /// The samples whose bytes are not those `expected` lists for their version (by path), as text.
    static func torn(_ samples: [Sample], expected: [MapVersion: [String: String]]) -> [String] {
        samples.compactMap { sample in
            guard let version = sample.version, let files = expected[version] else { return nil }
            return files[sample.path] == sample.sha256 ? nil : "\(sample.path) at \(version): \(sample.sha256 ?? "no file")"
        }
    }
}
