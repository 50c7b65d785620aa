import Foundation
import MapFormat
import MapIO

/// Reads the GeoJSON inputs of `mappack import`: region boundaries and places, each a
/// FeatureCollection (RFC 7946). Every problem names the file, the feature's index and its field.
///
/// Both are streamed (`GeoJSONStream`): one feature at a time, each turned at once into what import
/// keeps of it (a region's polygons as flat arrays of positions, a place's fields), so memory
/// follows that, not the file.
enum GeoJSONInput {
    /// One `[longitude, latitude]` position, checked: `node` is the position's node.
    static func position(
        _ node: (node: GeoJSONCoordinates.Node, longitude: Double, latitude: Double), file: String, field: String
    ) throws(ImportError) -> ImportRegion.Position {
        guard case .position = node.node else {
            throw .badFeature(file: file, field: field, problem: "expected a position [longitude, latitude]")
        }
        let (longitude, latitude) = (node.longitude, node.latitude)
        guard (-180...180).contains(longitude) else {
            throw .badFeature(
                file: file, field: field, problem: "longitude \(longitude) is outside -180...180; GeoJSON positions are [longitude, latitude]")
        }
        guard (-90...90).contains(latitude) else {
            throw .badFeature(
                file: file, field: field, problem: "latitude \(latitude) is outside -90...90; GeoJSON positions are [longitude, latitude]")
        }
        return (longitude, latitude)
    }

    /// The names of a feature: `names` (an object of language → name), `name:xx` properties, and
    /// `name`, which counts as English when no English name is given otherwise.
    static func names(_ properties: GeoJSONProperties, file: String, field: String) throws(ImportError) -> [String: String] {
        var names: [String: String] = [:]
        if let object = properties["names"] {
            guard case .object(let members) = object else {
                throw .badFeature(file: file, field: field + ".names", problem: "expected an object of language → name")
            }
            // A repeated language counts once, its last name (as Foundation kept it).
            var last: [String: Int] = [:]
            for (position, member) in members.enumerated() { last[member.key] = position }
            for (position, member) in members.enumerated() where last[member.key] == position {
                let (language, name) = (member.key, member.value)
                guard let name = name.string else {
                    throw .badFeature(file: file, field: field + ".names.\(language)", problem: "expected a string")
                }
                if !name.isEmpty { names[language] = name }
            }
        }
        for (key, value) in properties.entries where key.hasPrefix("name:") && key.count > 5 {
            guard let name = value.string else { throw .badFeature(file: file, field: field + ".\(key)", problem: "expected a string") }
            if !name.isEmpty { names[String(key.dropFirst(5))] = name }
        }
        if let name = properties["name"] {
            guard let name = name.string else { throw .badFeature(file: file, field: field + ".name", problem: "expected a string") }
            if !name.isEmpty, names["en"] == nil { names["en"] = name }
        }
        return names
    }

    /// The regions of a boundaries file: Polygon or MultiPolygon features with `id`, optional
    /// `parent` (another feature's id) and names. Ids are unique, parents known, chains acyclic.
    static func regions(file: String) throws(ImportError) -> [ImportRegion] {
        var regions: [ImportRegion] = []
        let store: ShapeStore
        do { store = try ShapeStore() } catch { throw .failed(reason: "scratch files for \(file): \(error)") }
        var seen: [RegionID: Int] = [:]
        let stream = GeoJSONStream(file: file, propertyKeys: ["id", "parent", "names", "name"], containerKeys: ["names"], idKeys: ["parent"])
        try stream.read(
            restart: {
                regions = []
                seen = [:]
            },
            feature: { (index, feature: inout GeoJSONFeature) throws(ImportError) in
                let at = "features[\(index)]"
                let properties = feature.properties
                // The id: `properties.id`, else the Feature's own `id` member (RFC 7946, 3.2: a string
                // or a number, read as its text); `"id": null` is none.
                let ownID = feature.id?.isNull == true ? nil : feature.id
                let idField = properties["id"] != nil || ownID == nil ? at + ".properties.id" : at + ".id"
                guard let rawID = properties["id"] ?? ownID else {
                    throw .badFeature(
                        file: file, field: at + ".properties.id",
                        problem: "missing; every region needs a string id such as europe/ch (in properties.id or the Feature's id)")
                }
                guard let text = rawID.string else {
                    let expected = properties["id"] != nil ? "expected a string" : "expected a string or a number"
                    throw .badFeature(file: file, field: idField, problem: expected)
                }
                if let reason = PathName.regionIDProblem(text) {
                    throw .badFeature(file: file, field: idField, problem: "'\(text)' \(reason); an id is names joined by '/', and \(PathName.rule)")
                }
                let id = RegionID(text)
                if let first = seen[id] {
                    throw .badFeature(file: file, field: idField, problem: "'\(text)' is also the id of features[\(first)]; ids are unique")
                }
                seen[id] = index
                var parent: RegionID?
                if let raw = properties["parent"] {
                    switch raw {
                    case .null: break
                    // A number is read as its text, by the rule of a Feature's numeric `id` (`GeoJSONStream.readID`).
                    case .string(let text): parent = RegionID(text)
                    default: throw .badFeature(file: file, field: at + ".properties.parent", problem: "expected a string, a number or null")
                    }
                }
                let names = try names(properties, file: file, field: at + ".properties")
                if names.isEmpty { throw .badFeature(file: file, field: at + ".properties.name", problem: "missing; give name, name:xx or names") }
                let outline = try outline(feature.geometry, file: file, field: at + ".geometry", store: store)
                feature.geometry = nil
                regions.append(ImportRegion(id: id, parent: parent, names: names, outline: outline, featureIndex: index))
            })
        for region in regions {
            guard let parent = region.parent else { continue }
            guard seen[parent] != nil else {
                throw .badFeature(
                    file: file, field: "features[\(region.featureIndex)].properties.parent",
                    problem: "'\(parent)' is not the id of any feature in this file")
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: regions.map { ($0.id, $0.parent) })
        for region in regions {
            var step = region.parent
            var depth = 0
            while let current = step {
                depth += 1
                guard current != region.id, depth <= regions.count else {
                    throw .badFeature(
                        file: file, field: "features[\(region.featureIndex)].properties.parent",
                        problem: "parents form a cycle through '\(region.id)'; every chain must end at a region without parent")
                }
                step = byID[current] ?? nil
            }
        }
        return regions
    }

    /// What import keeps of a Polygon's or MultiPolygon's polygons (`ImportRegion.Outline`), its
    /// shape in `store`; each ring has at least 4 positions. The checks go polygon by polygon, ring
    /// by ring, a ring's length before its positions; the polygons pass one position at a time.
    static func outline(
        _ geometry: GeoJSONGeometry?, file: String, field: String, store: ShapeStore
    ) throws(ImportError) -> ImportRegion.Outline {
        guard let geometry else { throw .badFeature(file: file, field: field, problem: "missing; a region needs a Polygon or MultiPolygon") }
        let type = geometry.type ?? "nothing"
        guard type == "Polygon" || type == "MultiPolygon" else {
            throw .badFeature(file: file, field: field + ".type", problem: "expected Polygon or MultiPolygon, got \(type)")
        }
        guard let coordinates = geometry.coordinates else {
            throw .badFeature(file: file, field: field + ".coordinates", problem: "missing or not an array")
        }
        var cursor = GeoJSONCoordinates.Cursor(coordinates)
        var outline = ImportRegion.OutlineBuilder(store: store)
        var polygons = 0
        if type == "Polygon" {
            try polygon(try cursor.next().node, &cursor, into: &outline, file: file, prefix: field + ".coordinates")
            polygons = 1
        } else {
            let root = try cursor.next().node
            for p in 0..<root.elements {
                // The elements of a position are its numbers, which are no list of rings.
                let node = root.isPosition ? GeoJSONCoordinates.Node.leaf : try cursor.next().node
                try polygon(node, &cursor, into: &outline, file: file, prefix: field + ".coordinates[\(p)]")
                polygons += 1
            }
        }
        if polygons == 0 { throw .badFeature(file: file, field: field + ".coordinates", problem: "no polygons") }
        do { return try outline.finish() } catch { throw .failed(reason: "\(file): \(field): keeping the polygons' shape: \(error)") }
    }

    /// One polygon whose node is `node`, its rings next in `cursor`, into `outline`.
    private static func polygon(
        _ node: GeoJSONCoordinates.Node, _ cursor: inout GeoJSONCoordinates.Cursor, into outline: inout ImportRegion.OutlineBuilder,
        file: String, prefix: String
    ) throws(ImportError) {
        guard node.elements > 0 else { throw .badFeature(file: file, field: prefix, problem: "expected a list of rings") }
        outline.beginPolygon()
        for r in 0..<node.elements {
            let ring = node.isPosition ? GeoJSONCoordinates.Node.leaf : try cursor.next().node
            guard ring.elements >= 4, case .array = ring else {
                // A position's first element is a number, not a position.
                if ring.elements >= 4 {
                    throw .badFeature(file: file, field: prefix + "[\(r)][0]", problem: "expected a position [longitude, latitude]")
                }
                throw .badFeature(file: file, field: prefix + "[\(r)]", problem: "a ring needs at least 4 positions (the first repeated last)")
            }
            outline.beginRing()
            for i in 0..<ring.elements {
                let position = try position(try cursor.next(), file: file, field: prefix + "[\(r)][\(i)]")
                do { try outline.add(position) } catch { throw .failed(reason: "\(file): \(prefix): keeping the polygon's edges: \(error)") }
            }
            do { try outline.endRing() } catch { throw .failed(reason: "\(file): \(prefix): keeping the polygon's edges: \(error)") }
        }
    }

    /// Calls `body` with each place of a places file, in the file's order: Point features with
    /// `name`, optional `population`, `alternate_names` (a list or a comma-separated string),
    /// `name:xx`, `names`, `kind` and `geonameid`. `restart` comes before each `features` array
    /// (a repeated `features` key counts its last array).
    static func forEachPlace(
        file: String, restart: () throws(ImportError) -> Void, _ body: (ImportPlace) throws(ImportError) -> Void
    ) throws(ImportError) {
        // `restart` cannot throw out of the stream: its failure waits for the end.
        var restartFailure: ImportError?
        let stream = GeoJSONStream(
            file: file, propertyKeys: ["name", "names", "alternate_names", "population", "kind", "geonameid"],
            containerKeys: ["names", "alternate_names"])
        try stream.read(
            restart: {
                do throws(ImportError) { try restart() } catch { restartFailure = restartFailure ?? error }
            },
            feature: { (index, feature: inout GeoJSONFeature) throws(ImportError) in
                let at = "features[\(index)]"
                guard let geometry = feature.geometry, geometry.type == "Point" else {
                    throw .badFeature(file: file, field: at + ".geometry.type", problem: "expected Point, got \(feature.geometry?.type ?? "nothing")")
                }
                let point: (node: GeoJSONCoordinates.Node, longitude: Double, latitude: Double)
                if let coordinates = geometry.coordinates {
                    var cursor = GeoJSONCoordinates.Cursor(coordinates)
                    point = try cursor.next()
                } else {
                    point = (.leaf, 0, 0)
                }
                let position = try position(point, file: file, field: at + ".geometry.coordinates")
                let properties = feature.properties
                guard let name = properties["name"]?.string, !name.isEmpty else {
                    throw .badFeature(file: file, field: at + ".properties.name", problem: "missing; every place needs a name")
                }
                var alternates = Set(try names(properties, file: file, field: at + ".properties").values)
                switch properties["alternate_names"] {
                case .array(let list)?: alternates.formUnion(list.compactMap(\.string))
                case .string(let text)?: alternates.formUnion(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                default: break
                }
                alternates.remove(name)
                alternates.remove("")
                var population: Int64?
                if let raw = properties["population"], !raw.isNull {
                    guard let value = raw.number, value >= 0, value < 1e15 else {
                        throw .badFeature(file: file, field: at + ".properties.population", problem: "expected a number ≥ 0")
                    }
                    population = Int64(value)
                }
                try body(
                    ImportPlace(
                        name: name, alternateNames: alternates.sorted().joined(separator: " | "), kind: properties["kind"]?.string ?? "place",
                        longitude: position.longitude, latitude: position.latitude, population: population,
                        geonameid: properties["geonameid"]?.number.flatMap { Int64(exactly: $0.rounded(.towardZero)) }))
            })
        if let restartFailure { throw restartFailure }
    }
}

/// One place of `--places`, for the search databases.
struct ImportPlace: Sendable {
    let name: String
    /// Its other names, sorted, joined by " | " as `search.db` holds them.
    let alternateNames: String
    let kind: String
    let longitude: Double
    let latitude: Double
    let population: Int64?
    let geonameid: Int64?
}
