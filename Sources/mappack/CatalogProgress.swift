import Foundation
import MapBuild
import MapFormat
import MapIO
import Synchronization

/// A progress line while a command downloads its catalog (issue 43: a 3.6 MB catalog took 12 s on a
/// slow link with nothing on the screen): `catalog: 1.2 MiB from URL · 3 s`, shown only once bytes
/// arrive (a kept or local catalog says nothing), like the build's other phases (nothing with `--json`
/// or `--quiet`); and a warning when the catalog's `.zst` was set aside.
final class CatalogProgress: Sendable {
    /// What arrived so far, shared with the ticker's and the fetcher's closures.
    private final class Received: Sendable {
        let state = Mutex((source: String?.none, bytes: Int64(0), started: Date()))
    }

    private let ticker: ProgressTicker

    /// Listens to `CatalogSource.progress` until `finish()`.
    init(terminal: Terminal) {
        let received = Received()
        ticker = ProgressTicker(terminal: terminal) {
            received.state.withLock { state in
                guard let source = state.source else { return nil }
                return "catalog: \(ByteCount.format(state.bytes)) from \(source) · \(Int(Date().timeIntervalSince(state.started))) s"
            }
        }
        let ticker = ticker
        // A catalog.json.zst set aside (stale beside a re-signed catalog) is said in every mode but --quiet.
        CatalogSource.notes.withLock { $0 = { message in terminal.note("warning: catalog: \(message)") } }
        // A retry's wait is said as a bundle's is (a Retry-After of minutes is not silence).
        CatalogSource.retries.withLock {
            $0 = { url, attempt, reason, seconds in
                terminal.note("catalog: retry \(attempt) of \(url.shown) in \(String(format: "%.1f", seconds)) s: \(reason)")
            }
        }
        guard terminal.showsProgress else { return }
        CatalogSource.progress.withLock {
            $0 = { source, bytes in
                let first = received.state.withLock { state -> Bool in
                    defer { (state.source, state.bytes) = (source, bytes) }
                    return state.source != source
                }
                if first {
                    ticker.started("catalog: downloading \(source)")
                } else {
                    ticker.update("catalog: \(ByteCount.format(bytes)) from \(source)")
                }
            }
        }
    }

    /// The catalog is in: the line stops.
    func finish() {
        CatalogSource.progress.withLock { $0 = nil }
        CatalogSource.notes.withLock { $0 = nil }
        CatalogSource.retries.withLock { $0 = nil }
        ticker.finish()
    }
}
