import MapFormat
import MapIO

extension SourceWorld {
    /// The first field of this `source.json` (read from `file` in `folder`) that breaks
    /// `mappack-source/1` beyond its JSON types (`docs/source-format.md`,
    /// `Schemas/mappack-source-1.schema.json`), in document order: names, coordinates, bundle
    /// references and the bundle folders they name. Thrown as `PublishError.invalidSource`, which
    /// names the file and the field.
    func validate(file: String, folder: String) throws(PublishError) {
        func refuse(_ field: String, _ problem: String) -> PublishError { .invalidSource(file: file, field: field, problem: problem) }
        if let reason = PathName.problem(catalog) { throw refuse("catalog", "'\(catalog)' \(reason); \(PathName.rule)") }
        if let reason = PathName.problem(mapVersion.rawValue) { throw refuse("mapVersion", "'\(mapVersion)' \(reason); \(PathName.rule)") }
        for (index, region) in regions.enumerated() {
            let at = "regions[\(index)]"
            if let reason = PathName.regionIDProblem(region.id.rawValue) {
                throw refuse(at + ".id", "'\(region.id)' \(reason); an id is names joined by '/', and \(PathName.rule)")
            }
            if region.names.isEmpty { throw refuse(at + ".names", "empty; give at least one name, e.g. {\"en\": \"Switzerland\"}") }
            if let center = region.center, let problem = SourceWorld.centerProblem(center) { throw refuse(at + ".center", problem) }
            if let bbox = region.bbox, let problem = SourceWorld.bboxProblem(bbox) { throw refuse(at + ".bbox", problem) }
            for (position, bundle) in region.bundles.enumerated() where bundles[bundle] == nil {
                throw refuse(
                    at + ".bundles[\(position)]", "'\(bundle)' is not a key of \"bundles\"; declare it there with its folder bundles/\(bundle)/")
            }
        }
        for name in bundles.keys.sorted() {
            let field = "bundles.\(name)"
            guard SourceWorld.isBundleName(name) else {
                throw refuse(field, "'\(name)' is not a folder name: use letters, digits, '.', '_', '-', '+', not starting with '.' or '-'")
            }
            if let kind = bundles[name]?.kind, !SourceWorld.isKind(kind) {
                throw refuse(field + ".kind", "'\(kind)' is not a kind: a lower-case word such as tiles, search, overview, border, routing")
            }
            guard FileSystem.isDirectory(folder + "/bundles/" + name) else {
                throw refuse(field, "no folder \(folder)/bundles/\(name)/; every declared bundle is a folder there")
            }
        }
        try validateRegionPaths(file: file, folder: folder)
    }

    /// Why `center` is not `[latitude, longitude]` in degrees; nil when it is.
    /// Refuses two region ids whose files would share a path on a device (`RegionPathClash`): the
    /// files a region keeps in `regions/ID/` are those its bundles, or the bundles of the id below
    /// it, hold there.
    private func validateRegionPaths(file: String, folder: String) throws(PublishError) {
        let bundlesOf = Dictionary(regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first })
        let clash = try RegionPathClash.find(regions.map(\.id)) { owner, below throws(PublishError) in
            var names: [String] = []
            for bundle in Set((bundlesOf[owner] ?? []) + (bundlesOf[below] ?? [])).sorted() {
                let place = folder + "/bundles/" + bundle + "/regions/" + owner.rawValue
                guard FileSystem.isDirectory(place) else { continue }
                let entries: [String]
                do { entries = try DirectoryWalker.entries(of: place) } catch { throw .badBundleFolder(bundle: bundle, reason: "\(error)") }
                names += entries.filter { !FileSystem.isDirectory(place + "/" + $0) }
            }
            return names
        }
        if let clash, let index = regions.firstIndex(where: { $0.id == clash.second }) {
            throw .invalidSource(file: file, field: "regions[\(index)].id", problem: clash.problem)
        }
    }

    static func centerProblem(_ center: [Double]) -> String? {
        guard center.count == 2 else { return "expected 2 numbers [latitude, longitude], got \(center.count)" }
        if !(-90...90).contains(center[0]) { return "latitude \(center[0]) is outside -90...90; the order is [latitude, longitude]" }
        if !(-180...180).contains(center[1]) { return "longitude \(center[1]) is outside -180...180" }
        return nil
    }

    /// Why `bbox` is not `[west, south, east, north]` in degrees; nil when it is. West above east
    /// is a box across the antimeridian, and allowed.
    static func bboxProblem(_ bbox: [Double]) -> String? {
        guard bbox.count == 4 else { return "expected 4 numbers [west, south, east, north], got \(bbox.count)" }
        let (west, south, east, north) = (bbox[0], bbox[1], bbox[2], bbox[3])
        for (name, value) in [("west", west), ("east", east)] where !(-180...180).contains(value) {
            return "\(name) \(value) is outside -180...180; the order is [west, south, east, north]"
        }
        for (name, value) in [("south", south), ("north", north)] where !(-90...90).contains(value) {
            return "\(name) \(value) is outside -90...90; the order is [west, south, east, north]"
        }
        if south > north { return "south \(south) is above north \(north); the order is [west, south, east, north]" }
        return nil
    }

    /// A bundle folder's name: one path name (no `/`), as `PathName` defines it.
    static func isBundleName(_ name: String) -> Bool { PathName.problem(name) == nil }

    /// A bundle kind: a lower-case word (letters, digits, `-`), at most 32 bytes.
    static func isKind(_ kind: String) -> Bool {
        let bytes = Array(kind.utf8)
        guard let first = bytes.first, bytes.count <= 32, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
        }
    }
}
