import Foundation
import MapFormat
import MapIO

/// Reads the GeoJSON inputs of `mappack import`: region boundaries and places, each a
/// FeatureCollection (RFC 7946). Every problem names the file, the feature's index and its field.
enum GeoJSONInput {
    /// Largest GeoJSON file read (they are parsed whole).
    static let maxBytes = 4 << 30

    /// The features of the FeatureCollection in `file`.
    static func features(in file: String) throws(ImportError) -> [[String: Any]] {
        let data: Data
        do { data = try ReadableFile.contents(of: file, limit: maxBytes) } catch { throw .unreadable(file: file, reason: error.description) }
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw .unreadable(file: file, reason: "not JSON (\(error.localizedDescription)); expected a GeoJSON FeatureCollection")
        }
        guard let collection = object as? [String: Any], collection["type"] as? String == "FeatureCollection" else {
            throw .unreadable(file: file, reason: "not a GeoJSON FeatureCollection (no \"type\": \"FeatureCollection\" at the top)")
        }
        guard let list = collection["features"] as? [Any] else {
            throw .badFeature(file: file, field: "features", problem: "missing or not an array")
        }
        var features: [[String: Any]] = []
        for (index, item) in list.enumerated() {
            guard let feature = item as? [String: Any], feature["type"] as? String == "Feature" else {
                throw .badFeature(file: file, field: "features[\(index)]", problem: "not a GeoJSON Feature object")
            }
            features.append(feature)
        }
        return features
    }

    /// A JSON number as a Double (Foundation gives Int, Double or NSNumber).
    static func number(_ value: Any?) -> Double? {
        if let value = value as? Int { return Double(value) }
        if let value = value as? Double { return value }
        if let value = value as? NSNumber { return value.doubleValue }
        return nil
    }

    /// One `[longitude, latitude]` position, checked.
    static func position(_ value: Any, file: String, field: String) throws(ImportError) -> ImportRegion.Position {
        guard let pair = value as? [Any], pair.count >= 2, let longitude = number(pair[0]), let latitude = number(pair[1]) else {
            throw .badFeature(file: file, field: field, problem: "expected a position [longitude, latitude]")
        }
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
    static func names(_ properties: [String: Any], file: String, field: String) throws(ImportError) -> [String: String] {
        var names: [String: String] = [:]
        if let object = properties["names"] {
            guard let object = object as? [String: Any] else {
                throw .badFeature(file: file, field: field + ".names", problem: "expected an object of language → name")
            }
            for (language, name) in object {
                guard let name = name as? String else {
                    throw .badFeature(file: file, field: field + ".names.\(language)", problem: "expected a string")
                }
                if !name.isEmpty { names[language] = name }
            }
        }
        for (key, value) in properties where key.hasPrefix("name:") && key.count > 5 {
            guard let name = value as? String else { throw .badFeature(file: file, field: field + ".\(key)", problem: "expected a string") }
            if !name.isEmpty { names[String(key.dropFirst(5))] = name }
        }
        if let name = properties["name"] {
            guard let name = name as? String else { throw .badFeature(file: file, field: field + ".name", problem: "expected a string") }
            if !name.isEmpty, names["en"] == nil { names["en"] = name }
        }
        return names
    }

    /// The regions of a boundaries file: Polygon or MultiPolygon features with `id`, optional
    /// `parent` (another feature's id) and names. Ids are unique, parents known, chains acyclic.
    static func regions(file: String) throws(ImportError) -> [ImportRegion] {
        var regions: [ImportRegion] = []
        var seen: [RegionID: Int] = [:]
        for (index, feature) in try features(in: file).enumerated() {
            let at = "features[\(index)]"
            let properties = feature["properties"] as? [String: Any] ?? [:]
            // The id: `properties.id`, else the Feature's own `id` member (RFC 7946, 3.2).
            let idField = properties["id"] != nil || feature["id"] == nil ? at + ".properties.id" : at + ".id"
            guard let rawID = properties["id"] ?? feature["id"] else {
                throw .badFeature(
                    file: file, field: at + ".properties.id",
                    problem: "missing; every region needs a string id such as europe/ch (in properties.id or the Feature's id)")
            }
            guard let text = rawID as? String else { throw .badFeature(file: file, field: idField, problem: "expected a string") }
            if let reason = PathName.regionIDProblem(text) {
                throw .badFeature(file: file, field: idField, problem: "'\(text)' \(reason); an id is names joined by '/', and \(PathName.rule)")
            }
            let id = RegionID(text)
            if let first = seen[id] {
                throw .badFeature(file: file, field: idField, problem: "'\(text)' is also the id of features[\(first)]; ids are unique")
            }
            seen[id] = index
            var parent: RegionID?
            if let raw = properties["parent"], !(raw is NSNull) {
                guard let text = raw as? String else {
                    throw .badFeature(file: file, field: at + ".properties.parent", problem: "expected a string or null")
                }
                parent = RegionID(text)
            }
            let names = try names(properties, file: file, field: at + ".properties")
            if names.isEmpty { throw .badFeature(file: file, field: at + ".properties.name", problem: "missing; give name, name:xx or names") }
            regions.append(
                ImportRegion(
                    id: id, parent: parent, names: names, polygons: try polygons(feature["geometry"], file: file, field: at + ".geometry"),
                    featureIndex: index))
        }
        for region in regions {
            guard let parent = region.parent else { continue }
            guard seen[parent] != nil else {
                throw .badFeature(
                    file: file, field: "features[\(region.featureIndex)].properties.parent",
                    problem: "'\(parent)' is not the id of any feature in this file")
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: regions.map { ($0.id, $0) })
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
                step = byID[current]?.parent
            }
        }
        return regions
    }

    /// A Polygon's or MultiPolygon's polygons; each ring has at least 4 positions.
    static func polygons(_ value: Any?, file: String, field: String) throws(ImportError) -> [ImportRegion.Polygon] {
        guard let geometry = value as? [String: Any] else {
            throw .badFeature(file: file, field: field, problem: "missing; a region needs a Polygon or MultiPolygon")
        }
        let type = geometry["type"] as? String ?? "nothing"
        let coordinates = geometry["coordinates"] as? [Any]
        let raw: [Any]
        switch type {
        case "Polygon": raw = coordinates.map { [$0] } ?? []
        case "MultiPolygon": raw = coordinates ?? []
        default: throw .badFeature(file: file, field: field + ".type", problem: "expected Polygon or MultiPolygon, got \(type)")
        }
        guard coordinates != nil else { throw .badFeature(file: file, field: field + ".coordinates", problem: "missing or not an array") }
        var polygons: [ImportRegion.Polygon] = []
        for (p, polygon) in raw.enumerated() {
            let prefix = type == "Polygon" ? field + ".coordinates" : field + ".coordinates[\(p)]"
            guard let rings = polygon as? [Any], !rings.isEmpty else {
                throw .badFeature(file: file, field: prefix, problem: "expected a list of rings")
            }
            var parsed: [[ImportRegion.Position]] = []
            for (r, ring) in rings.enumerated() {
                guard let positions = ring as? [Any], positions.count >= 4 else {
                    throw .badFeature(file: file, field: prefix + "[\(r)]", problem: "a ring needs at least 4 positions (the first repeated last)")
                }
                var points: [ImportRegion.Position] = []
                points.reserveCapacity(positions.count)
                for (i, position) in positions.enumerated() { points.append(try self.position(position, file: file, field: prefix + "[\(r)][\(i)]")) }
                parsed.append(points)
            }
            polygons.append(parsed)
        }
        if polygons.isEmpty { throw .badFeature(file: file, field: field + ".coordinates", problem: "no polygons") }
        return polygons
    }

    /// The places of a places file: Point features with `name`, optional `population`,
    /// `alternate_names` (a list or a comma-separated string), `name:xx`, `names`, `kind` and `geonameid`.
    static func places(file: String) throws(ImportError) -> [ImportPlace] {
        var places: [ImportPlace] = []
        for (index, feature) in try features(in: file).enumerated() {
            let at = "features[\(index)]"
            guard let geometry = feature["geometry"] as? [String: Any], geometry["type"] as? String == "Point" else {
                throw .badFeature(
                    file: file, field: at + ".geometry.type",
                    problem: "expected Point, got \((feature["geometry"] as? [String: Any])?["type"] as? String ?? "nothing")")
            }
            let position = try position(geometry["coordinates"] as Any, file: file, field: at + ".geometry.coordinates")
            let properties = feature["properties"] as? [String: Any] ?? [:]
            guard let name = properties["name"] as? String, !name.isEmpty else {
                throw .badFeature(file: file, field: at + ".properties.name", problem: "missing; every place needs a name")
            }
            var alternates = Set(try names(properties, file: file, field: at + ".properties").values)
            switch properties["alternate_names"] {
            case let list as [Any]: alternates.formUnion(list.compactMap { $0 as? String })
            case let text as String: alternates.formUnion(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            default: break
            }
            alternates.remove(name)
            alternates.remove("")
            var population: Int64?
            if let raw = properties["population"], !(raw is NSNull) {
                guard let value = number(raw), value >= 0, value < 1e15 else {
                    throw .badFeature(file: file, field: at + ".properties.population", problem: "expected a number ≥ 0")
                }
                population = Int64(value)
            }
            places.append(
                ImportPlace(
                    name: name, alternateNames: alternates.sorted(), kind: properties["kind"] as? String ?? "place",
                    longitude: position.longitude, latitude: position.latitude, population: population,
                    geonameid: number(properties["geonameid"]).map { Int64($0) }))
        }
        return places
    }
}

/// One place of `--places`, for the search databases.
struct ImportPlace: Sendable {
    let name: String
    let alternateNames: [String]
    let kind: String
    let longitude: Double
    let latitude: Double
    let population: Int64?
    let geonameid: Int64?
}
