import Foundation
import MapFormat
import MapIO

/// `mappack import`: writes a region source folder (`mappack-source/1`) from one tileset (MBTiles,
/// or PMTiles v3 turned into a scratch MBTiles first: `ImportPMTiles`), region boundaries and optional places (`docs/source-format.md`, `docs/import.md`).
///
/// Each tile goes to the deepest regions whose polygons meet its square in Web-Mercator space (a
/// region's own tiles are those of no descendant: installing a region brings its descendants). A
/// tile that one region needs goes to that region's `tiles.db`; one that several need is stored
/// once, in a shared bundle listed by all of them. A region with children or without a parent also
/// gets an overview bundle of the low zooms that meet it (`ImportOverview`).
///
/// It streams: the first pass reads only the tileset's index (zoom, column, row, in that order),
/// finds each tile's regions (regions whose box meets the tile's column, then the exact test) and
/// records the placement in a scratch SQLite table; the second writes each database in turn with
/// SQLite copying the tile bytes from the tileset (`INSERT … SELECT` over `ATTACH`), so tile data
/// never passes through Swift and one output database is open at a time.
public struct TileImporter: Sendable {
    /// What to import and where.
    public struct Options: Sendable {
        public var tiles: String
        public var regions: String
        public var places: String?
        public var output: String
        public var catalog: String
        public var mapVersion: MapVersion
        /// `--shard I/N` (1-based): this run places the tiles of its share of the tile order
        /// (`ImportShardPlan`) and writes the pieces of the bundles they go to, the `search.db` of
        /// its share of the regions, and `shard.json`; `--merge` joins the shards.
        public var shard: (index: Int, count: Int)?
        /// `--overview-maxzoom`: the zooms of the overview bundles (of regions with children, and roots).
        public var overview: OverviewZooms = .standard

        public init(tiles: String, regions: String, places: String?, output: String, catalog: String, mapVersion: MapVersion) {
            self.tiles = tiles
            self.regions = regions
            self.places = places
            self.output = output
            self.catalog = catalog
            self.mapVersion = mapVersion
        }
    }

    /// What an import (or a merge) wrote.
    public struct Result: Sendable {
        /// The source folder, or the shard folder.
        public let output: String
        public let regions: Int
        public let bundles: Int
        public let tiles: Int
        public let placed: Int
        public let outside: Int
        public let places: Int
        /// Tiles this run looked at: all of them unsharded; a shard's share of them (the other shards
        /// take the rest).
        public var examined: Int? = nil
        /// The shard this run was (`--shard I/N`), nil unsharded or for a merge.
        public var shard: (index: Int, count: Int)? = nil
        /// For `--tiles https://…`: the bytes fetched by range, the requests, and the archive's bytes.
        public var fetched: (bytes: UInt64, requests: Int, archive: UInt64)? = nil
    }

    public let options: Options

    public init(options: Options) { self.options = options }

    /// The bundle kinds an import writes.
    enum Kind {
        static let tiles = "tiles"
        static let shared = "border"
        static let search = "search"
        static let overview = "overview"
    }

    /// Runs the import (blocking: call it off the cooperative pool).
    public func run() throws -> Result {
        let shard = options.shard ?? (1, 1)
        guard shard.count >= 1, (1...shard.count).contains(shard.index) else {
            throw ImportError.badShards(reason: "--shard \(shard.index)/\(shard.count): expected I/N with 1 ≤ I ≤ N")
        }
        if let reason = PathName.problem(options.catalog) {
            throw ImportError.badShards(reason: "--catalog '\(options.catalog)' \(reason); \(PathName.rule)")
        }
        if let reason = PathName.problem(options.mapVersion.rawValue) {
            throw ImportError.badShards(reason: "--map-version '\(options.mapVersion)' \(reason); \(PathName.rule)")
        }
        let rowCheck = Self.startRowCheck(options.tiles, shard: options.shard)
        let regions = try GeoJSONInput.regions(file: options.regions)
        var layout = ImportLayout(regions: regions)
        layout.searchShard = ImportShardPlan.searchShards(ids: regions.map(\.id), shards: shard.count)
        // A PMTiles archive's header is checked now; its tiles become an MBTiles in the staging folder.
        let archive = try ImportPMTiles.open(options.tiles)
        let mbtiles = archive == nil ? try ImportTileset(path: options.tiles) : nil
        try layout.checkPaths(file: options.regions)

        let (area, outputName, _) = try ImportOutput.stage(options.output)
        var fetched: (bytes: UInt64, requests: Int)?
        do {
            let converted = area.path + "/.tileset.mbtiles"
            let tileset: ImportTileset
            // An MBTiles shard's run; a PMTiles shard's scratch tileset holds its run only.
            var bounds: ImportShardPlan.Bounds?
            let scratch = area.path + "/.placement.sqlite"
            // A PMTiles shard places its tiles as its fill meets them.
            var placement: ImportPlacement.Pass?
            var overview: ImportOverview?
            // Each place goes to its regions as it is read; only this shard's are kept, on disk. The
            // places' half of the work runs beside the tiles' from here (`ImportSearchWork`).
            let search = options.places.map { ImportSearchWork.start(file: $0, layout: layout, shard: shard.index - 1, folder: area.path) }
            let inputs: String
            do {
                if let archive {
                    // The archive's walk checks every entry, so the rows need no check of their own.
                    let database = try archive.create(converted)
                    var survey: ImportPMTiles.Survey
                    if let count = options.shard?.count {
                        // A first walk counts the tiles and their bytes; a second, over this shard's leaves
                        // only, finds where its share of them begins and the next begins (the same ids in
                        // every shard) and reads the run's tiles that meet a region.
                        // Each tile of the run is tested against the regions once, when met: placed, and its
                        // bytes read, when it meets one.
                        survey = try archive.survey(into: database)
                        let shares = [shard.index - 1, shard.index].map { Double($0) / Double(count) }
                        overview = try ImportOverview(zooms: options.overview, tilesetMaxZoom: survey.zooms?.upperBound, layout: layout)
                        let placer = try ImportPlacement.Placer(layout: layout, overview: overview, scratch: scratch)
                        try archive.fill(database, wanted: ImportShardPlan.reads(layout: layout), totals: survey, shares: shares, place: placer.place)
                        placement = try placer.finish(tiles: survey.tiles)
                    } else {
                        survey = try archive.fill(database, wanted: nil)
                    }
                    try archive.finish(database)
                    tileset = try ImportTileset(converted: converted, name: options.tiles, survey: survey)
                } else {
                    tileset = mbtiles!
                    // The shard's run of the index order (every row without shards): its rows checked
                    // (`startRowCheck`), then its first and last.
                    try rowCheck?.value()
                    if let count = options.shard?.count {
                        bounds = try ImportShardPlan.bounds(
                            of: ImportShardPlan.share(shard: shard.index - 1, of: count, tiles: tileset.count), in: tileset)
                    }
                }
                inputs = try fingerprint(tileset: tileset)
            } catch {
                // What failed here came before the places were read: its error is the one reported.
                search?.abandon()
                throw error
            }
            let tiles = Swift.Result { () throws -> (ImportPlacement.Pass, [String: ImportShardRecord.Bundle]) in
                if placement == nil { overview = try ImportOverview(zooms: options.overview, tilesetMaxZoom: try tileset.maxZoom(), layout: layout) }
                fetched = archive?.fetched
                let pass =
                    try placement ?? ImportPlacement.run(tileset: tileset, layout: layout, overview: overview, bounds: bounds, scratch: scratch)
                let bundles = try ImportDatabases.writeTileBundles(
                    of: pass, layout: layout, scratch: scratch, tileset: tileset.copying, folder: area.path, width: Self.writers)
                try FileSystem.removeFile(scratch)
                if archive != nil { try FileSystem.removeFile(converted) }
                return (pass, bundles)
            }
            let pass: ImportPlacement.Pass
            var bundles: [String: ImportShardRecord.Bundle]
            var placed = 0
            if let search {
                let (done, written) = try search.finish(beside: tiles)
                (pass, bundles) = done
                bundles.merge(written.bundles) { _, search in search }
                placed = written.places
            } else {
                (pass, bundles) = try tiles.get()
            }
            let record = ImportShardRecord(
                format: ImportShardRecord.formatTag.description, shard: shard.index, shards: shard.count, inputs: inputs, catalog: options.catalog,
                mapVersion: options.mapVersion,
                regions: regions.map {
                    SourceWorld.Region(
                        id: $0.id, parent: $0.parent, names: $0.names, center: $0.center, bbox: $0.bbox, cities: nil, released: nil, bundles: [])
                },
                bundles: bundles,
                counts: .init(tiles: pass.tiles, examined: pass.examined, placed: pass.placed, outside: pass.outside, places: placed),
                released: releaseTime(archive: archive))
            if options.shard == nil {
                try ImportOutput.compose([record], into: area.path)
            } else {
                try FileSystem.writeAtomically(try ImportOutput.encode(record), to: area.path + "/" + ImportShardRecord.fileName)
                try FileSystem.syncTree(area.path)
            }
            try area.commit(as: outputName)
            return Result(
                output: FileSystem.absolute(options.output), regions: regions.count, bundles: bundles.count, tiles: pass.tiles, placed: pass.placed,
                outside: pass.outside, places: placed, examined: pass.examined, shard: options.shard.map { ($0.index, $0.count) },
                fetched: fetched.map { ($0.bytes, $0.requests, archive!.size) })
        } catch {
            area.discard()
            throw error
        }
    }

    /// Starts the check of an MBTiles tileset's rows (`ImportPlacement.check`, of the shard's run) on a
    /// second thread, on a connection of its own, so it runs beside the regions' read: neither needs the
    /// other. Its failure is thrown where the check stood in the one-thread order (after the tileset
    /// opened: a tileset that does not open fails there first, the same way). Nil for a PMTiles
    /// archive, whose walk checks every entry, and for one read by range.
    private static func startRowCheck(_ tiles: String, shard: (index: Int, count: Int)?) -> PendingResult<Void>? {
        if RangedArchive.isRemote(tiles) { return nil }
        return BlockingPool.start {
            guard try ImportPMTiles.open(tiles) == nil else { return }
            let tileset = try ImportTileset(path: tiles)
            let run = shard.map { ImportShardPlan.share(shard: $0.index - 1, of: $0.count, tiles: tileset.count) }
            try ImportPlacement.check(tileset, positions: run)
        }
    }

    /// `tiles.db` files written at once: each is its own file and connection, and on two cores the
    /// second writer runs while the first waits for a folder or a file to be made.
    static let writers = min(4, max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// `mappack import --merge SHARD... --out DIR`.
    public static func merge(shards: [String], output: String) throws -> Result { try ImportOutput.merge(shards: shards, output: output) }

    /// SHA-256 over the boundaries and places files, the tileset's metadata and tile count, and the options that shape the output.
    /// `released` of the source folder: `SOURCE_DATE_EPOCH` when set (reproducible builds), else the
    /// newest modification time of the inputs (when the data was made, the same for the same files).
    private func releaseTime(archive: ImportPMTiles?) -> String? {
        if let epoch = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap(Int.init) {
            return UTCTime.format(Date(timeIntervalSince1970: TimeInterval(epoch)))
        }
        let inputs = [options.tiles, options.regions] + (options.places.map { [$0] } ?? [])
        var times = inputs.compactMap { ((try? FileSystem.status($0)) ?? nil)?.modifiedNanoseconds }
        // An archive read by range: its Last-Modified, as nginx gives the file's modification time.
        if let modified = archive?.modified { times.append(Int64(modified.timeIntervalSince1970) * 1_000_000_000) }
        let newest = times.max()
        return newest.flatMap { UTCTime.format(Date(timeIntervalSince1970: TimeInterval($0 / 1_000_000_000))) }
    }

    private func fingerprint(tileset: ImportTileset) throws -> String {
        var text = "regions " + (try SHA256.digestOfFile(options.regions).digest.hex) + "\n"
        text += "places " + (try options.places.map { try SHA256.digestOfFile($0).digest.hex } ?? "-") + "\n"
        for (name, value) in tileset.metadata.sorted(by: { $0.key < $1.key }) { text += "metadata \(name)=\(value)\n" }
        text += "tiles \(tileset.count)\ncatalog \(options.catalog)\nmapVersion \(options.mapVersion)\nshards \(options.shard?.count ?? 1)\n"
        text += "overview \(options.overview)\n"
        return SHA256.hex(Data(text.utf8))
    }
}
