import Foundation
import MapIO

/// The places of `--places`, each dropped from memory once placed: as the file streams, a place
/// goes to the deepest regions whose polygons hold it (those this shard writes) and into a scratch
/// SQLite database (a private temporary one, which SQLite deletes when it closes); a place in no
/// such region is dropped at once. A region's places come back sorted, a batch at a time, when its
/// `search.db` is written, so memory holds a batch of places, not a region's or the file's.
final class ImportPlaces {
    /// The scratch database: `places(region, seq, …)`, `seq` the place's order in the file.
    private let database: SQLiteDatabase
    /// Rows inserted per statement batch.
    private static let batch = 4096

    private init(database: SQLiteDatabase) { self.database = database }

    /// Reads `file`, keeping the places of the regions that `shard` (0-based) writes.
    static func read(file: String, layout: ImportLayout, shard: Int) throws(ImportError) -> ImportPlaces {
        let places: ImportPlaces
        do {
            // An empty name is SQLite's private temporary database, on disk once past its cache.
            let database = try SQLiteDatabase(path: "")
            try database.execute(
                """
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
                CREATE TABLE places (region INTEGER NOT NULL, seq INTEGER NOT NULL, name BLOB NOT NULL, alternates BLOB NOT NULL,
                    kind BLOB NOT NULL, longitude REAL NOT NULL, latitude REAL NOT NULL, population INTEGER, geonameid INTEGER,
                    sortName BLOB NOT NULL, PRIMARY KEY (region, seq)) WITHOUT ROWID;
                BEGIN;
                """)
            places = ImportPlaces(database: database)
        } catch {
            throw .failed(reason: "scratch database for \(file): \(error)")
        }
        var pending: [[SQLValue]] = []
        var seq: Int64 = 0
        let insert = "INSERT INTO places VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        func flush() throws(ImportError) {
            do { try places.database.executeMany(insert, pending) } catch { throw .failed(reason: "scratch database for \(file): \(error)") }
            pending.removeAll(keepingCapacity: true)
        }
        // Places wait in batches and are tested in the order of their y, then x: neighbours read the
        // same cells of the regions' grids (`MercatorShape.contains`), where the file's order would
        // read a grid all over. Where a place goes does not depend on the order; `seq` keeps the file's.
        var waiting: [(seq: Int64, place: ImportPlace, point: MercatorShape.Point)] = []
        func placeWaiting() throws(ImportError) {
            waiting.sort { ($0.point.y, $0.point.x, $0.seq) < ($1.point.y, $1.point.x, $1.seq) }
            for (seq, place, point) in waiting {
                let regions = layout.deepestHolding(point, shard: shard)
                // Swift orders strings by their NFC scalars, which this key's bytes sort as.
                let sortName = regions.isEmpty ? Data() : Data(place.name.precomposedStringWithCanonicalMapping.utf8)
                for region in regions {
                    pending.append([
                        .integer(Int64(region)), .integer(seq), .blob(Data(place.name.utf8)), .blob(Data(place.alternateNames.utf8)),
                        .blob(Data(place.kind.utf8)), .real(place.longitude), .real(place.latitude), place.population.map { .integer($0) } ?? .null,
                        place.geonameid.map { .integer($0) } ?? .null, .blob(sortName),
                    ])
                }
                if pending.count >= batch { try flush() }
            }
            waiting.removeAll(keepingCapacity: true)
        }
        try GeoJSONInput.forEachPlace(
            file: file,
            restart: { () throws(ImportError) in
                pending.removeAll()
                waiting.removeAll()
                do { try places.database.execute("DELETE FROM places") } catch { throw .failed(reason: "scratch database for \(file): \(error)") }
            },
            { (place) throws(ImportError) in
                seq += 1
                waiting.append((seq, place, MercatorShape.project(longitude: place.longitude, latitude: place.latitude)))
                if waiting.count >= batch * 4 { try placeWaiting() }
            })
        try placeWaiting()
        try flush()
        do { try places.database.execute("COMMIT") } catch { throw .failed(reason: "scratch database for \(file): \(error)") }
        return places
    }

    /// The places of `region`, in `search.db`'s order: by population (largest first, none last),
    /// then name, latitude, longitude, then their order in the file. SQLite sorts them (on disk
    /// past its cache), so they come back a batch at a time, never all at once.
    func places(of region: Int) throws -> RegionPlaces {
        let count = try database.firstRow("SELECT count(*) AS n FROM places WHERE region = ?", [.integer(Int64(region))])?["n", as: Int64.self]
        return RegionPlaces(source: self, region: region, count: Int(count ?? 0))
    }

    /// One region's places, read in order by `forEachBatch`.
    struct RegionPlaces {
        fileprivate let source: ImportPlaces
        let region: Int
        let count: Int

        /// Calls `body` with the places in order, `batch` at a time.
        func forEachBatch(_ batch: Int, _ body: ([ImportPlace]) throws -> Void) throws {
            var places: [ImportPlace] = []
            var failure: (any Error)?
            // The order the whole-file import's sort of the file's order gave: names by their NFC bytes
            // (`sortName`), as Swift compares strings.
            try source.database.forEachRow(
                """
                SELECT name, alternates, kind, longitude, latitude, population, geonameid FROM places WHERE region = ?
                ORDER BY coalesce(population, -1) DESC, sortName, latitude, longitude, seq
                """, [.integer(Int64(region))]
            ) { row throws(SQLiteError) in
                guard failure == nil else { return }
                func text(_ column: String) throws(SQLiteError) -> String {
                    guard case .blob(let bytes) = try row[column] else { return "" }
                    return String(decoding: bytes, as: UTF8.self)
                }
                places.append(
                    ImportPlace(
                        name: try text("name"), alternateNames: try text("alternates"), kind: try text("kind"),
                        longitude: try row["longitude", as: Double.self], latitude: try row["latitude", as: Double.self],
                        population: try row["population", as: Int64?.self], geonameid: try row["geonameid", as: Int64?.self]))
                if places.count >= batch {
                    do { try body(places) } catch { failure = error }
                    places.removeAll(keepingCapacity: true)
                }
            }
            if let failure { throw failure }
            if !places.isEmpty { try body(places) }
        }
    }
}

/// The places' half of an import, run on a second thread beside the tiles' half (placing the tiles
/// and writing their bundles): the places read from `--places`, then the `search.db` of each region
/// this shard writes. The two halves share only the regions' shapes, read-only (`ShapeStore` keeps
/// its cache behind a lock), and each has its own scratch database, so on two cores an import takes
/// about the longer half instead of both. A failure is the one the halves would have met one after the
/// other (places read, tiles placed and written, search written): the same inputs give the same error.
struct ImportSearchWork {
    /// What the half wrote: its bundles (by name) and the places it put in them.
    struct Written: Sendable {
        var bundles: [String: ImportShardRecord.Bundle] = [:]
        var places = 0
    }

    /// A failure of the half, with whether it came before the tiles' half would have begun.
    private struct Failure: Error {
        let beforeTiles: Bool
        let error: any Error
    }

    private let pending: PendingResult<Written>

    /// Starts the half: the places of `file` for `shard` (0-based) of `layout`, their bundles written under `folder`.
    static func start(file: String, layout: ImportLayout, shard: Int, folder: String) -> ImportSearchWork {
        ImportSearchWork(
            pending: BlockingPool.start {
                let places: ImportPlaces
                do { places = try ImportPlaces.read(file: file, layout: layout, shard: shard) } catch {
                    throw Failure(beforeTiles: true, error: error)
                }
                do {
                    var written = Written()
                    for region in layout.regions.indices where layout.searchShard[region] == shard {
                        let rows = try places.places(of: region)
                        let bundle = layout.searchBundle(for: region)
                        let path = folder + "/bundles/" + bundle.name + "/" + bundle.file
                        try ImportDatabases.writeSearch(to: path, region: layout.regions[region], places: rows)
                        Writeback.kernel.start(path: path)
                        written.bundles[bundle.name] = ImportShardRecord.Bundle(kind: bundle.kind, regions: [layout.regions[region].id])
                        written.places += rows.count
                    }
                    return written
                } catch {
                    throw Failure(beforeTiles: false, error: error)
                }
            })
    }

    /// Waits for the half and drops what it did: the import failed before the places were read, the
    /// one-thread order's first failure. (It writes in the output's staging folder, which the failed
    /// import discards once this returns.)
    func abandon() { _ = try? pending.value() }

    /// Waits for the half (always: it writes in the output's staging folder) and returns what it wrote
    /// with the tiles' half's value, or throws the first failure in the one-thread order.
    func finish<T>(beside tiles: Result<T, any Error>) throws -> (tiles: T, search: Written) {
        let search = Result { try pending.value() }
        if case .failure(let failure as Failure) = search, failure.beforeTiles { throw failure.error }
        let value = try tiles.get()
        switch search {
        case .success(let written): return (value, written)
        case .failure(let failure as Failure): throw failure.error
        case .failure(let error): throw error
        }
    }
}
