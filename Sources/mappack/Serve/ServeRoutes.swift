import Foundation
import MapBuild
import MapFormat
import MapIO

/// What each path of `mappack serve` answers. Every answer comes from the served image's tile
/// databases or from a document made at start; no path of a request ever becomes a file path.
///
///     /                          the viewer page (MapLibre GL JS)
///     /{z}/{x}/{y}               a tile (XYZ rows; MBTiles' TMS rows are flipped)
///     /tiles/{z}/{x}/{y}.{ext}   the same tile (TileJSON's template; ext pbf, png, ...)
///     /coverage/{z}/{x}/{y}.pbf  where the image holds that tile, one polygon over it (`CoverageTile`)
///     /tilejson.json             TileJSON 3.0.0
///     /style.json                a MapLibre style
///     /regions.geojson           the regions' boxes and names
///     /maplibre-gl.js, .css      MapLibre GL JS from the PyPI wheel `maplibre`
struct ServeRoutes: Sendable {
    let image: ServedImage
    /// Path → (content type, bytes), for everything but tiles.
    let documents: [String: (type: String, body: Data)]

    init(image: ServedImage, base: String, maplibre: MapLibreAssets?) throws {
        self.image = image
        var documents: [String: (type: String, body: Data)] = [
            "/": (
                "text/html; charset=utf-8",
                ViewerPage.html(
                    title: "\(image.manifest.name) \(image.manifest.mapVersion.rawValue) (mappack serve)",
                    bounds: ServeDocuments.regionBounds(image), maplibre: maplibre != nil)
            ),
            "/tilejson.json": ("application/json", try ServeDocuments.tileJSON(image, base: base)),
            "/style.json": ("application/json", try ServeDocuments.style(image, base: base)),
            "/regions.geojson": ("application/geo+json", try ServeDocuments.regionsGeoJSON(image)),
        ]
        if let maplibre {
            documents["/" + MapLibreAssets.script] = ("text/javascript; charset=utf-8", maplibre.scriptBytes)
            documents["/" + MapLibreAssets.stylesheet] = ("text/css; charset=utf-8", maplibre.stylesheetBytes)
        }
        documents["/index.html"] = documents["/"]
        self.documents = documents
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if segments.contains(where: { $0 == ".." || $0 == "." }) || request.path.contains("\\") || request.path.contains("\0") {
            return .text(400, "\(request.path): a path with '..' or '.' segments is refused")
        }
        if let document = documents[request.path] {
            return HTTPResponse(status: 200, headers: [("Content-Type", document.type), ("Cache-Control", "no-cache")], body: document.body)
        }
        if segments.first == "coverage", let address = ServeRoutes.tileAddress(["tiles"] + segments.dropFirst()) {
            return coverage(zoom: address.zoom, x: address.x, y: address.y)
        }
        if let address = ServeRoutes.tileAddress(Array(segments)) {
            return tile(zoom: address.zoom, x: address.x, y: address.y)
        }
        // Browsers ask for it on their own: nothing to show, and no error in their console (issue 43).
        if request.path == "/favicon.ico" { return HTTPResponse(status: 204, headers: [("Cache-Control", "max-age=86400")]) }
        if request.path == "/maplibre-gl.js" || request.path == "/maplibre-gl.css" {
            return .text(404, "MapLibre GL JS is not available: run `make venv` (PyPI wheel maplibre) or give --maplibre-js DIR")
        }
        return .text(404, "\(request.path): not served; try /, /tilejson.json, /style.json, /regions.geojson or /{z}/{x}/{y}")
    }

    /// `z/x/y` or `tiles/z/x/y.ext`, as numbers.
    static func tileAddress(_ segments: [Substring]) -> (zoom: Int, x: Int, y: Int)? {
        var parts = segments
        if parts.count == 4, parts[0] == "tiles" {
            parts.removeFirst()
            guard let dot = parts[2].firstIndex(of: ".") else { return nil }
            parts[2] = parts[2][..<dot]
        }
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.count <= 10 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let zoom = Int(parts[0]), let x = Int(parts[1]), let y = Int(parts[2])
        else { return nil }
        return (zoom, x, y)
    }

    /// The stored tile with its type, and `Content-Encoding` when its bytes are gzip or zlib (sent as stored).
    func tile(zoom: Int, x: Int, y: Int) -> HTTPResponse {
        let found: TileDatabases.Tile?
        do { found = try image.tiles.tile(zoom: zoom, x: x, y: y) } catch {
            return .text(500, "tile \(zoom)/\(x)/\(y): \(error)")
        }
        guard let found else { return .text(404, "no tile \(zoom)/\(x)/\(y) in \(image.path)") }
        var headers = [("Content-Type", ServeRoutes.contentType(image.formats[found.source.path]))]
        switch Zlib.wrapping(of: found.data) {
        case .gzip: headers.append(("Content-Encoding", "gzip"))
        case .zlib: headers.append(("Content-Encoding", "deflate"))  // HTTP's deflate is the zlib format (RFC 9110)
        case .none: break
        }
        return HTTPResponse(status: 200, headers: headers, body: found.data)
    }

    /// `CoverageTile` where the image holds the tile at `zoom/x/y`, else 404 (as the tile itself).
    func coverage(zoom: Int, x: Int, y: Int) -> HTTPResponse {
        let found: TileDatabases.Tile?
        do { found = try image.tiles.tile(zoom: zoom, x: x, y: y) } catch {
            return .text(500, "tile \(zoom)/\(x)/\(y): \(error)")
        }
        guard found != nil else { return .text(404, "no tile \(zoom)/\(x)/\(y) in \(image.path)") }
        return HTTPResponse(status: 200, headers: [("Content-Type", ServeRoutes.contentType("pbf"))], body: CoverageTile.bytes)
    }

    /// The media type of an MBTiles format.
    static func contentType(_ format: String?) -> String {
        switch format {
        case "pbf", nil: "application/x-protobuf"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }
}
