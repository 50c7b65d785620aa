import Foundation
import MapBuild
import MapFormat

/// The JSON documents `mappack serve` answers with, made once when it starts: TileJSON 3.0.0, a
/// MapLibre style and the regions as GeoJSON. URLs are absolute (`base`, e.g.
/// `http://127.0.0.1:8080`): MapLibre fetches tiles from a web worker, where a relative URL has no page to resolve against.
enum ServeDocuments {
    /// The style's colours (the same as `Tools/realworld/check_outputs.py`'s palette, which the
    /// screenshot check reads back): where the image holds no tile the background says so
    /// (`notInstalled`, a pale paper tone, apart from water and every land colour); where it holds one,
    /// water unless a polygon covers it; a country without its own colour is land.
    static let notInstalled = "rgb(240,236,228)"
    static let water = "rgb(30,144,255)"
    static let land = "rgb(204,204,204)"
    static let border = "rgb(60,60,60)"
    static let countryColours: [(code: String, colour: String)] = [
        ("CH", "rgb(228,26,28)"), ("LI", "rgb(77,175,74)"), ("AT", "rgb(255,127,0)"), ("DE", "rgb(152,78,163)"),
        ("IT", "rgb(255,255,51)"), ("FR", "rgb(166,86,40)"),
    ]
    /// Colours for the image's other countries, in region id order after the six above (then again from
    /// the start): every country the image holds is drawn in a colour, none grey like land it lacks.
    static let moreColours = [
        "rgb(247,129,191)", "rgb(102,194,165)", "rgb(141,160,203)", "rgb(231,138,195)", "rgb(166,216,84)", "rgb(255,217,47)",
        "rgb(229,196,148)", "rgb(179,179,179)", "rgb(27,158,119)", "rgb(217,95,2)", "rgb(117,112,179)", "rgb(231,41,138)",
    ]

    /// The colour of each country of `image`: the six fixed ones, then one of `moreColours` for each
    /// other region whose id ends in a two-letter code (the ISO 3166-1 code of a country region).
    static func countryColours(of image: ServedImage) -> [(code: String, colour: String)] {
        var colours = countryColours
        let fixed = Set(countryColours.map(\.code))
        let codes = image.manifest.regions.map { $0.id.rawValue.split(separator: "/").last.map(String.init) ?? "" }
            .filter { $0.count == 2 && $0.allSatisfy(\.isLetter) }.map { $0.uppercased() }
        for (index, code) in Set(codes).subtracting(fixed).sorted().enumerated() {
            colours.append((code, moreColours[index % moreColours.count]))
        }
        return colours
    }

    /// The feature property colours are matched on, when a layer has one of these fields (first wins).
    static let countryCodeFields = ["ISO_A2", "iso_a2", "ISO_A2_EH", "iso_3166_1"]

    /// The tile URL template's extension for a tile format.
    static func tileExtension(_ format: String?) -> String { format ?? "pbf" }

    /// The merged `vector_layers` of the image's tile databases (empty when none says).
    static func vectorLayers(_ image: ServedImage) throws -> [[String: Any]] {
        guard let text = try image.tiles.vectorLayersJSON(),
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { return [] }
        return object["vector_layers"] as? [[String: Any]] ?? []
    }

    /// `[west, south, east, north]` around the image's own regions (what the viewer first shows).
    static func regionBounds(_ image: ServedImage) -> [Double] {
        TileDatabases.union(image.manifest.regions.map(\.bbox)) ?? [-180, -85.0511, 180, 85.0511]
    }

    /// Where the image's own regions lie and the point and zoom a map opens at (as its tile outputs
    /// say, `TilesetExtent`): the seed's overview, whose region may hold tiles anywhere, does not
    /// stretch them to the world.
    static func extent(_ image: ServedImage) -> TilesetExtent {
        let zooms = image.zooms ?? 0...0
        let regions = image.manifest.regions.map {
            OutputRegion(id: $0.id, broughtBy: $0.id, name: $0.name, bbox: $0.bbox, center: $0.center, files: [])
        }
        return TilesetExtent(
            regions: TilesetExtent.regions(regions, holdingTilesOf: image.tiles), minZoom: zooms.lowerBound, maxZoom: zooms.upperBound)
    }

    /// TileJSON 3.0.0 for the image's tiles.
    static func tileJSON(_ image: ServedImage, base: String) throws -> Data {
        let format = image.formats.values.first
        let zooms = image.zooms ?? 0...0
        let extent = extent(image)
        var document: [String: Any] = [
            "tilejson": "3.0.0",
            "name": "\(image.manifest.name) \(image.manifest.mapVersion.rawValue)",
            "description": "Tiles of \(image.manifest.name) (catalog \(image.manifest.catalog)), served by mappack",
            "version": "1.0.0",
            "scheme": "xyz",
            "tiles": ["\(base)/tiles/{z}/{x}/{y}.\(tileExtension(format))"],
            "minzoom": zooms.lowerBound,
            "maxzoom": zooms.upperBound,
            "bounds": extent.bounds,
            "center": [extent.center[0], extent.center[1], Double(extent.centerZoom)],
        ]
        if format == "pbf" || format == nil { document["vector_layers"] = try vectorLayers(image) }
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// Vector layers whose polygons are water (OpenMapTiles' `water`, others' `ocean`): tiles with
    /// one draw land as the ground under it, tiles without (land polygons only) draw water there.
    static let waterLayers: Set<String> = ["water", "ocean"]

    /// A MapLibre style: the "not installed" colour as background; over it, where the image holds a
    /// tile (`CoverageTile`), the ground: water, or land when the tiles have a water layer of their
    /// own; per vector layer a fill for its polygons (by country code when the layer has one, water
    /// for a water layer), a line for their borders and a circle for points; a raster layer for
    /// image tiles. No symbol layers: glyphs are not available offline.
    static func style(_ image: ServedImage, base: String) throws -> Data {
        let format = image.formats.values.first
        let isVector = format == "pbf" || format == nil
        let vectorLayers = isVector ? try vectorLayers(image) : []
        let hasWater = vectorLayers.contains { ($0["id"] as? String).map { waterLayers.contains($0.lowercased()) } ?? false }
        let zooms = image.zooms ?? 0...0
        var layers: [[String: Any]] = [
            ["id": "not-installed", "type": "background", "paint": ["background-color": notInstalled]],
            [
                "id": "installed", "type": "fill", "source": "coverage", "source-layer": CoverageTile.layer,
                "paint": ["fill-color": isVector && !hasWater ? water : land, "fill-antialias": false],
            ],
        ]
        let source: [String: Any] = ["type": isVector ? "vector" : "raster", "url": "\(base)/tilejson.json"]
        // The TileJSON's zooms and bounds: MapLibre asks for no image tile outside them, so the ground
        // there is "not installed" too, whatever the seed holds.
        let coverage: [String: Any] = [
            "type": "vector", "tiles": ["\(base)/coverage/{z}/{x}/{y}.pbf"], "minzoom": zooms.lowerBound, "maxzoom": zooms.upperBound,
            "bounds": extent(image).bounds,
        ]
        if isVector {
            let polygons: [Any] = ["match", ["geometry-type"], ["Polygon", "MultiPolygon"], true, false]
            let points: [Any] = ["match", ["geometry-type"], ["Point", "MultiPoint"], true, false]
            for layer in vectorLayers {
                guard let id = layer["id"] as? String else { continue }
                let fields = layer["fields"] as? [String: Any] ?? [:]
                var fill: Any = waterLayers.contains(id.lowercased()) ? water : land
                if let code = countryCodeFields.first(where: { fields[$0] != nil }) {
                    var match: [Any] = ["match", ["get", code]]
                    for entry in countryColours(of: image) { match += [entry.code, entry.colour] }
                    match.append(land)
                    fill = match
                }
                layers.append([
                    "id": "\(id)-fill", "type": "fill", "source": "image", "source-layer": id, "filter": polygons,
                    "paint": ["fill-color": fill],
                ])
                layers.append([
                    "id": "\(id)-borders", "type": "line", "source": "image", "source-layer": id, "filter": polygons,
                    "paint": ["line-color": border, "line-width": 1],
                ])
                layers.append([
                    "id": "\(id)-points", "type": "circle", "source": "image", "source-layer": id, "filter": points,
                    "paint": ["circle-color": border, "circle-radius": 2],
                ])
            }
        } else {
            layers.append(["id": "tiles", "type": "raster", "source": "image"])
        }
        let document: [String: Any] = [
            "version": 8, "name": "\(image.manifest.name) (mappack serve)", "sources": ["image": source, "coverage": coverage],
            "layers": layers,
        ]
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// Each region of the manifest with a bounding box, as a polygon of that box with its id, name
    /// and the point its label hangs from (the middle of the box's north edge).
    static func regionsGeoJSON(_ image: ServedImage) throws -> Data {
        var features: [[String: Any]] = []
        for region in image.manifest.regions {
            guard let box = region.bbox, box.count == 4 else { continue }
            let (west, south, east, north) = (box[0], box[1], box[2], box[3])
            let ring: [[Double]] = [[west, south], [east, south], [east, north], [west, north], [west, south]]
            var properties: [String: Any] = ["id": region.id.rawValue, "name": region.name, "labelAt": [(west + east) / 2, north]]
            if let parent = region.parent { properties["parent"] = parent.rawValue }
            let geometry: [String: Any] = ["type": "Polygon", "coordinates": [ring]]
            features.append(["type": "Feature", "properties": properties, "geometry": geometry])
        }
        let document: [String: Any] = ["type": "FeatureCollection", "features": features]
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
