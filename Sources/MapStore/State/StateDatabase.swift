import Foundation
import MapFormat
import MapIO

/// A region row of the state database.
struct StoredRegion: Equatable {
    var id: RegionID
    var parent: RegionID?
    var name: String
    var names: [String: String]
    var bundles: [BundleDigest]
    var sizeOnDisk: Int64
    var state: RegionState
}

/// `state.sqlite`: what is installed and what operation is under way. Rollback journal
/// (`journal_mode=DELETE`) and `synchronous=EXTRA`, so a commit is on disk when it returns and
/// the file alone is the whole database (a move copies it and renames the copy into place).
/// `EXTRA`, not `FULL`: a DELETE-mode commit is the journal's unlink, and only `EXTRA` fsyncs the
/// folder after it; with `FULL` a power cut can bring the journal back and roll the commit back.
final class StateDatabase {
    /// The `meta.format` this library writes and reads.
    static let format = "mapstore-state/1"

    let db: SQLiteDatabase

    /// Opens or creates the database at `path`. A new database gets its tables in one commit (each
    /// commit costs several syncs: a first start on a device's flash pays for every one); a complete
    /// one opens without writing, so a reader never waits for another process's write lock. With
    /// `pending`, records it durably as `markPending` does: for a new database, in the commit that makes
    /// its tables (an install's first step costs one commit, not two).
    init(path: String, marking pending: PendingOperation? = nil) throws {
        db = try SQLiteDatabase(path: path)
        try db.execute("PRAGMA journal_mode=DELETE; PRAGMA synchronous=EXTRA;")
        if try !makeSchema(marking: pending), let pending { try markPending(pending) }
    }

    /// Every table this library reads or writes.
    static let tables: Set<String> = ["meta", "regions", "pending_operation", "downloads", "added_catalogs", "region_catalogs"]

    func meta(_ key: StateMetaKey) throws -> String? {
        try db.firstRow("SELECT value FROM meta WHERE key = ?", [.text(key.rawValue)])?["value", as: String.self]
    }

    func setMeta(_ key: StateMetaKey, _ value: String) throws {
        try db.query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(key.rawValue), .text(value)])
    }

    /// True when the database records neither a committed image nor a pending operation. Every
    /// install records its pending row before it writes anything else, so a file left empty, truncated
    /// to its header, freshly created or stripped of those rows is no evidence that an install began:
    /// it is read as a lost state, never as an interrupted install.
    var isBlank: Bool {
        get throws { try imageID == nil && pending() == nil }
    }

    /// The committed image id, nil before the first install commits.
    var imageID: String? { get throws { try meta(.imageID) } }
    /// The committed map version.
    var mapVersion: MapVersion? { get throws { try meta(.mapVersion).map { MapVersion($0) } } }

    /// The operation under way, if one started and never committed.
    func pending() throws -> PendingOperation? {
        guard let row = try db.firstRow("SELECT kind, detail FROM pending_operation WHERE id = 1"),
            let kind = try row["kind", as: String?.self], let detail = try row["detail", as: String?.self]
        else { return nil }
        return PendingOperation(kind: kind, detail: detail) ?? .install(imageID: "")
    }

    /// Records `operation` durably before its work begins.
    func markPending(_ operation: PendingOperation) throws {
        try db.query(
            "INSERT OR REPLACE INTO pending_operation(id, kind, detail, started) VALUES (1, ?, ?, ?)",
            [.text(operation.kind), .text(operation.detail), .text(UTCTime.format(Date()) ?? "")])
    }

    func clearPending() throws { try db.query("DELETE FROM pending_operation") }

    /// Records the installed image and its regions and clears the pending install in one transaction;
    /// marks the cache seed import pending when the image has a seed. `signed`: the image's
    /// `manifest.sig` is kept beside the manifest.
    /// `meta`: keys set with the commit (an in-place install's base). `confirming` runs last, before
    /// the commit: when it throws, nothing is committed (an in-place first start's id check, whose hash
    /// runs while the rows are written).
    func commitInstall(
        _ manifest: ManifestHeader, seedPending: Bool, signed: Bool, meta: [StateMetaKey: String] = [:], confirming: (() throws -> Void)? = nil
    ) throws {
        try db.transaction {
            try db.execute(
                "DELETE FROM meta; DELETE FROM regions; DELETE FROM pending_operation; DELETE FROM added_catalogs; DELETE FROM region_catalogs;")
            try setMeta(.format, StateDatabase.format)
            try setMeta(.catalogsSchema, StateDatabase.catalogsSchema)
            for (key, value) in meta { try setMeta(key, value) }
            try recordManifest(manifest)
            try setMeta(.language, manifest.language ?? "")
            try setMeta(.installed, UTCTime.format(Date()) ?? "")
            try setMeta(.signature, signed ? StateDatabase.signatureKept : StateDatabase.signatureNone)
            // Every install refuses a manifest whose regions' sizes are not what its files take, so
            // the declared sizes are the derived ones; a streamed manifest has no file list to derive from.
            try insertRegions(of: manifest, sizes: [:], states: [:], from: [:])
            if seedPending { try markPending(.cacheImport) }
            try confirming?()
        }
    }

    /// The installed manifest's image id, map version, block size and catalog name, in meta.
    private func recordManifest(_ manifest: ManifestHeader) throws {
        try setMeta(.imageID, manifest.imageID)
        try setMeta(.mapVersion, manifest.mapVersion.rawValue)
        try setMeta(.blockSize, String(manifest.blockSize))
        try setMeta(.catalogName, manifest.catalog)
    }

    /// Records `manifest` as installed with the rows of `regions` (states from `states`, else `completed`),
    /// keeping other meta (catalog URL, …); clears any pending row. One transaction. Repair uses it when
    /// the state was lost or disagrees with a sound kept manifest and the files.
    func rebuild(from manifest: ImageManifest, regions: Set<RegionID>, states: [RegionID: RegionState], signed: Bool) throws {
        try db.transaction {
            let current = try currentStates()
            try db.execute("DELETE FROM regions; DELETE FROM pending_operation;")
            try setMeta(.format, StateDatabase.format)
            try recordManifest(manifest.header)
            if try meta(.language) == nil { try setMeta(.language, manifest.language ?? "") }
            try setMeta(.signature, signed ? StateDatabase.signatureKept : StateDatabase.signatureNone)
            try insertRegions(of: manifest.header, sizes: manifest.derivedSizesOnDisk(), states: states, from: current, only: regions)
        }
    }

    /// Values of the `signature` meta key: the kept manifest carries the image's signature (`kept`), came
    /// from an unsigned image (`none`), or was written by an update or download (absent: nothing to check).
    static let signatureKept = "kept"
    static let signatureNone = "none"

    /// One row per region of `manifest` (or of those in `only`), sizes from `sizes` (else the
    /// manifest's own), state `completed` unless `states` says otherwise; each state checked as a
    /// transition from `current` (a region without a current state is `available`).
    private func insertRegions(
        of manifest: ManifestHeader, sizes: [RegionID: Int64], states: [RegionID: RegionState], from current: [RegionID: RegionState],
        only: Set<RegionID>? = nil
    ) throws {
        let regions = manifest.regions.filter { only?.contains($0.id) ?? true }
        // In runs of rows, so the bound values of thousands of regions are never all held at once
        // (issue 34: they were the peak of a device install's heap).
        for start in stride(from: 0, to: regions.count, by: StateDatabase.rowsPerInsert) {
            try db.executeMany(
                "INSERT INTO regions(id, parent, name, names, bundles, size, state) VALUES (?, ?, ?, ?, ?, ?, ?)",
                try regions[start..<min(start + StateDatabase.rowsPerInsert, regions.count)].map { region in
                    let state = try (current[region.id] ?? .available).transition(to: states[region.id] ?? .completed, region: region.id)
                    return [
                        .text(region.id.rawValue), region.parent.map { .text($0.rawValue) } ?? .null, .text(region.name),
                        .text(try CanonicalJSON.text(of: region.names)),
                        .text(region.bundles.map(\.description).joined(separator: " ")),
                        .integer(sizes[region.id] ?? region.sizeOnDiskInBytes), .text(state.storedValue),
                    ]
                })
        }
    }

    /// Region rows bound per `executeMany`.
    static let rowsPerInsert = 256

    /// The installed region rows, by id. Without `bundles` (the readers' snapshot, read at every open:
    /// thousands of rows for a continent), each row's bundle list is left empty. Names and digests are
    /// read in place, with no JSONDecoder set up per row.
    func regions(bundles: Bool = true) throws -> [StoredRegion] {
        try db.query("SELECT id, parent, name, names, \(bundles ? "bundles" : "''") AS bundles, size, state FROM regions ORDER BY id").map { row in
            let names = JSONStrings.object(try row.text("names") ?? "{}") ?? [:]
            return StoredRegion(
                id: RegionID(try row.text("id") ?? ""), parent: try row.text("parent").map { RegionID($0) }, name: try row.text("name") ?? "",
                names: names, bundles: Self.digests(try row.text("bundles") ?? ""), sizeOnDisk: try row.integer("size") ?? 0,
                state: RegionState(stored: try row.text("state") ?? ""))
        }
    }

    /// The installed regions whose stored state is `state`, by id (an open asks for the interrupted ones:
    /// no row of the others is read).
    func regionIDs(in state: RegionState) throws -> [RegionID] {
        try db.query("SELECT id FROM regions WHERE state = ? ORDER BY id", [.text(state.storedValue)]).map { RegionID(try $0["id", as: String.self]) }
    }

    /// The digests of a region row's `bundles` column (`sha256:HEX` separated by spaces); a damaged
    /// entry is left out (the region then misses a bundle, which `verify` and `repair` find).
    static func digests(_ text: String) -> [BundleDigest] {
        let prefix = Array("sha256:".utf8)
        return text.utf8.split(separator: UInt8(ascii: " ")).compactMap { entry in
            guard entry.starts(with: prefix) else { return nil }
            return BundleDigest(validatingHex: entry.dropFirst(prefix.count))
        }
    }

    /// Installed regions whose stored state is not one this library knows (they read as `needUpdate`).
    func regionsWithUnknownState() throws -> [RegionID] {
        try db.query("SELECT id, state FROM regions ORDER BY id").compactMap { row in
            let state = try row["state", as: String?.self] ?? ""
            return RegionState.isKnown(stored: state) ? nil : RegionID(try row["id", as: String?.self] ?? "")
        }
    }

    /// Every region's stored state: its installed row's, else its download row's (absent: `available`).
    func currentStates() throws -> [RegionID: RegionState] {
        try Self.states(downloads: downloadStates(), installed: regions(bundles: false))
    }

    /// Every region's state from the download rows `downloads` and the installed rows `installed`:
    /// an installed row's state wins (absent from both: `available`).
    static func states(downloads: [RegionID: RegionState], installed: [StoredRegion]) -> [RegionID: RegionState] {
        var states = downloads
        for row in installed { states[row.id] = row.state }
        return states
    }

    /// Removes `ids` and clears the pending delete in one transaction.
    func commitDelete(_ ids: [RegionID]) throws {
        try db.transaction {
            try db.executeMany("DELETE FROM regions WHERE id = ?", ids.map { [.text($0.rawValue)] })
            try dropRegionCatalogs(ids)
            try clearPending()
        }
    }

    /// Records a switch to `manifest`: regions, their states, meta, an added catalog's rows (`catalog`);
    /// clears the pending row; one transaction. `fresh`: regions installed afresh (a new base's), whose
    /// states are not transitions from what they were; their rows of an added catalog are dropped.
    func commitTransition(
        _ manifest: ImageManifest, states: [RegionID: RegionState], meta: [StateMetaKey: String], catalog: CatalogCommit? = nil,
        fresh: Set<RegionID> = []
    ) throws {
        try db.transaction {
            if let catalog { try applyCatalogCommit(catalog) }
            let owners = try regionCatalogs()
            try dropRegionCatalogs(fresh.filter { owners[$0] != nil }.sorted())
            let current = try currentStates().filter { !fresh.contains($0.key) }
            try db.execute("DELETE FROM regions; DELETE FROM pending_operation;")
            try db.query("DELETE FROM meta WHERE key = ?", [.text(StateMetaKey.signature.rawValue)])
            try recordManifest(manifest.header)
            for (key, value) in meta { try setMeta(key, value) }
            try insertRegions(of: manifest.header, sizes: manifest.derivedSizesOnDisk(), states: states, from: current)
            try db.executeMany("DELETE FROM downloads WHERE id = ?", manifest.regions.map { [.text($0.id.rawValue)] })
        }
    }

    /// Sets the state of installed regions (ids without a row are left out), each a checked transition.
    func setStates(_ states: [RegionID: RegionState]) throws {
        try db.transaction {
            let current = Dictionary(try regions().map { ($0.id, $0.state) }, uniquingKeysWith: { first, _ in first })
            let rows = try states.compactMap { id, next throws -> [SQLValue]? in
                guard let from = current[id] else { return nil }
                return [.text(try from.transition(to: next, region: id).storedValue), .text(id.rawValue)]
            }
            try db.executeMany("UPDATE regions SET state = ? WHERE id = ?", rows)
        }
    }

    /// States of regions being downloaded or paused (not installed yet).
    func downloadStates() throws -> [RegionID: RegionState] {
        var out: [RegionID: RegionState] = [:]
        for row in try db.query("SELECT id, state FROM downloads") {
            // Only download states belong here; any other (an unknown value reads as `needUpdate`) is no download.
            guard let id = try row["id", as: String?.self], let stored = try row["state", as: String?.self] else { continue }
            let state = RegionState(stored: stored)
            if state == .downloading || state == .paused { out[RegionID(id)] = state }
        }
        return out
    }

    /// Sets (or with nil removes, back to `available`) the download state of not-yet-installed regions,
    /// each a checked transition from its current download state.
    func setDownloadState(_ ids: [RegionID], _ state: RegionState?) throws {
        let current = try downloadStates()
        for id in ids { _ = try (current[id] ?? .available).transition(to: state ?? .available, region: id) }
        if let state {
            try db.executeMany(
                "INSERT OR REPLACE INTO downloads(id, state) VALUES (?, ?)", ids.map { [.text($0.rawValue), .text(state.storedValue)] })
        } else {
            try db.executeMany("DELETE FROM downloads WHERE id = ?", ids.map { [.text($0.rawValue)] })
        }
    }
}
