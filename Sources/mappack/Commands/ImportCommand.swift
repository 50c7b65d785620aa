import Foundation
import MapBuild
import MapFormat

/// `mappack import --tiles T --regions R [--places P] --out DIR [--catalog ID] [--map-version V] [--shard I/N]
/// [--overview-maxzoom N|none]`
/// and `mappack import --merge SHARD... --out DIR`.
enum ImportCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.`import`)
        guard let out = arguments.option(Verbs.Import.out) else { throw UsageError(message: "import needs --out DIR (the source folder to write)") }
        let result: TileImporter.Result
        if arguments.flag(Verbs.Import.merge) {
            guard !arguments.positionals.isEmpty else {
                throw UsageError(message: "import --merge needs the shard folders: mappack import --merge shard-1 shard-2 … --out DIR")
            }
            for option in Verbs.Import.choices where arguments.option(option) != nil {
                throw UsageError(message: "--\(option.name) does not go with --merge: the shards already hold what it chose")
            }
            let shards = arguments.positionals
            result = try await run { try TileImporter.merge(shards: shards, output: out) }
        } else {
            guard arguments.positionals.isEmpty else {
                throw UsageError(message: "import takes no folders (\(arguments.positionals.joined(separator: " "))) unless --merge is given")
            }
            guard let tiles = arguments.option(Verbs.Import.tiles), let regions = arguments.option(Verbs.Import.regions) else {
                throw UsageError(message: "import needs --tiles TILESET (.mbtiles or .pmtiles) and --regions BOUNDARIES.geojson")
            }
            var options = TileImporter.Options(
                tiles: tiles, regions: regions, places: arguments.option(Verbs.Import.places), output: out,
                catalog: arguments.option(Verbs.Import.catalog) ?? "imported",
                mapVersion: MapVersion(arguments.option(Verbs.Import.mapVersion) ?? "1.0"))
            if let text = arguments.option(Verbs.Import.shard) {
                let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
                guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, (1...count).contains(index) else {
                    throw UsageError(message: "--shard must be I/N with 1 ≤ I ≤ N (e.g. --shard 2/3), not '\(text)'")
                }
                options.shard = (index, count)
            }
            if let text = arguments.option(Verbs.Import.overviewMaxZoom) {
                // The tileset's highest zoom bounds it further, checked once the tileset is open.
                if text == "none" {
                    options.overview = .off
                } else if let zoom = Int(text), (0...30).contains(zoom) {
                    options.overview = .upTo(zoom)
                } else {
                    throw UsageError(
                        message: "--overview-maxzoom must be a zoom from 0 to the tileset's highest (30 at most), or none, not '\(text)'")
                }
            }
            let importer = TileImporter(options: options)
            result = try await run { try importer.run() }
        }
        if terminal.json {
            terminal.event(
                ImportedEvent(
                    output: result.output, regions: result.regions, bundles: result.bundles, tiles: result.tiles, placed: result.placed,
                    outside: result.outside, places: result.places))
        } else {
            // Every tile accounted for: placed, or meeting no region (far from every region too), or,
            // for a shard, left to the other shards.
            let counts =
                if let shard = result.shard {
                    "\(result.placed) of \(result.tiles) tiles placed by shard \(shard.index)/\(shard.count), "
                        + "\(result.outside) of its run near a region meet none (left out), "
                        + "\(result.tiles - (result.examined ?? result.tiles)) are the other shards' or far from every region"
                } else {
                    "\(result.placed) of \(result.tiles) tiles placed, \(result.tiles - result.placed) meet no region (left out)"
                }
            terminal.line("imported \(result.regions) regions, \(result.bundles) bundles: \(counts), \(result.places) places → \(result.output)")
            if let fetched = result.fetched {
                terminal.line(
                    "fetched \(fetched.bytes) of the archive's \(fetched.archive) bytes by range in \(fetched.requests) requests")
            }
        }
        return .success
    }

    /// Runs blocking import work on its own thread, off the cooperative pool; a full disk is said
    /// plainly, not as the raw file or SQLite error.
    private static func run(_ body: @escaping @Sendable () throws -> TileImporter.Result) async throws -> TileImporter.Result {
        do { return try await BlockingWork.map([0], width: 1) { _ in try body() }[0] } catch {
            throw ImportError.diskFull(from: error) ?? error
        }
    }
}
