import Foundation
import MapFormat
import MapIO

/// The image's tiles as one MBTiles 1.3 file, `<image>.mbtiles`: every tile of the tile databases
/// of the recipe's regions (not of its cache seed; see `TileDatabases`: where two hold the same
/// tile, the region first by id wins), with the metadata the spec asks for (`name`, `format`, and
/// for `pbf` the `json` row with the sources' `vector_layers` merged) and recommends (`bounds` and
/// `center` of those regions, `TilesetExtent`; `minzoom`, `maxzoom`, `type`, `version`,
/// `description`). Sources of different formats are refused (`mixedTileFormats`).
struct MBTilesOutput: SingleFileOutput {
    static let fileExtension = ".mbtiles"

    var phase: BuildPhase? { .mbtiles }

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        let regions = try source.regions()
        let tiles = try source.tileDatabases(regions)
        let format = try tiles.commonFormat()
        let path = source.stagingFolder + "/" + name
        let database = try TileDatabases.createMBTiles(path)
        for tileSource in tiles.sources {
            // Between databases: a large build stops here at a signal instead of copying every tile.
            try Task.checkCancellation()
            try TileDatabases.attached(tileSource, to: database) {
                try database.execute(
                    """
                    INSERT OR IGNORE INTO tiles (zoom_level, tile_column, tile_row, tile_data)
                    SELECT zoom_level, tile_column, tile_row, tile_data FROM src.tiles ORDER BY zoom_level, tile_column, tile_row
                    """)
            }
        }
        try database.transaction {
            let zooms = try database.firstRow("SELECT min(zoom_level) AS low, max(zoom_level) AS high FROM tiles")
            let low = try zooms?["low", as: Int64?.self] ?? 0
            let high = try zooms?["high", as: Int64?.self] ?? 0
            let extent = TilesetExtent(
                regions: TilesetExtent.regions(regions, holdingTilesOf: tiles), minZoom: Int(low), maxZoom: Int(high))
            let metadata: [(String, String)] = [
                ("name", source.imageName),
                ("format", format ?? "application/octet-stream"),
                ("type", "baselayer"),
                ("version", source.mapVersion.rawValue),
                ("description", "Tiles of \(source.imageName) (catalog \(source.catalog)), written by mappack"),
                ("bounds", extent.bounds.map(MBTilesOutput.degrees).joined(separator: ",")),
                ("center", extent.center.map(MBTilesOutput.degrees).joined(separator: ",") + ",\(extent.centerZoom)"),
                ("minzoom", "\(low)"),
                ("maxzoom", "\(high)"),
            ]
            let json = format == "pbf" ? try tiles.vectorLayersJSON().map { [("json", $0)] } ?? [] : []
            try database.executeMany("INSERT INTO metadata (name, value) VALUES (?, ?)", (metadata + json).map { [.text($0.0), .text($0.1)] })
        }
        try TileDatabases.finish(database, path: path, sync: source.sync)
        return name
    }

    static func degrees(_ value: Double) -> String { String(format: "%.6f", value) }
}
