import Foundation
import MapFormat
import MapIO

/// What a build machine remembers of the newest trusted catalog of each catalog id, so `mappack build
/// --trust` refuses rollback and mix-and-match as a device does: one small JSON file per catalog id
/// under `<download cache>/catalog-trust/`, named by the SHA-256 of the id (an id never becomes a path).
/// Each catalog URL is pinned to the catalog id first trusted there (`lineage-<SHA-256 of the URL>.json`),
/// so another lineage signed by the same key and served at the URL is refused.
public struct CatalogTrustLedger: Sendable {
    /// The ledger's folder.
    public let folder: String

    /// A ledger in `folder` (created on the first write).
    public init(folder: String) { self.folder = folder }

    private struct Record: Codable {
        var version: Int64
        var sha256: SHA256Digest
        var keys: [String]
        var epoch: Int64?
        /// The newest `catalog.json.timestamp` counter accepted (absent before issue 33).
        var timestamp: Int64?
    }

    private struct Pin: Codable {
        var catalog: String
    }

    func pinPath(url: String) -> String { folder + "/lineage-" + SHA256.hex(Data(url.utf8)) + ".json" }

    /// The catalog id first trusted at `url`, nil when none was.
    func lineage(url: String) throws(CatalogSource.LoadError) -> String? {
        let path = pinPath(url: url)
        guard FileSystem.exists(path) else { return nil }
        do {
            return try CanonicalJSON.decode(Pin.self, from: try ReadableFile.contents(of: path, limit: 1 << 16), file: path).catalog
        } catch {
            throw .ledger(path: path, reason: "the catalog lineage pin is damaged (\(error)); remove it to pin the next signed catalog afresh")
        }
    }

    /// Pins `url` to `catalog` (once: a pinned URL keeps its lineage).
    func pin(url: String, catalog: String) throws(CatalogSource.LoadError) {
        let path = pinPath(url: url)
        guard !FileSystem.exists(path) else { return }
        do {
            try FileSystem.makeDirectories(folder)
            try FileSystem.writeAtomically(try CanonicalJSON.encode(Pin(catalog: catalog)), to: path)
        } catch {
            throw .ledger(path: path, reason: "cannot pin the catalog lineage: \(error)")
        }
    }

    func path(catalog: String) -> String { folder + "/" + SHA256.hex(Data(catalog.utf8)) + ".json" }

    /// What was seen for `catalog`, nil when nothing was.
    func seen(catalog: String) throws(CatalogSource.LoadError) -> SeenCatalog? {
        let path = path(catalog: catalog)
        guard FileSystem.exists(path) else { return nil }
        do {
            let record = try CanonicalJSON.decode(Record.self, from: try ReadableFile.contents(of: path, limit: 1 << 20), file: path)
            return SeenCatalog(
                version: record.version, sha256: record.sha256, keys: record.keys, catalog: catalog, epoch: record.epoch ?? 0,
                timestampVersion: record.timestamp ?? 0)
        } catch {
            throw .ledger(path: path, reason: "the catalog trust ledger is damaged (\(error)); remove it to trust the next signed catalog afresh")
        }
    }

    /// Records `seen` for `catalog` (atomically replaced).
    func record(_ seen: SeenCatalog, catalog: String) throws(CatalogSource.LoadError) {
        let path = path(catalog: catalog)
        do {
            try FileSystem.makeDirectories(folder)
            try FileSystem.writeAtomically(
                try CanonicalJSON.encode(
                    Record(
                        version: seen.version, sha256: seen.sha256, keys: seen.keys, epoch: seen.epoch,
                        timestamp: seen.timestampVersion == 0 ? nil : seen.timestampVersion)), to: path)
        } catch {
            throw .ledger(path: path, reason: "cannot record the trusted catalog: \(error)")
        }
    }
}
