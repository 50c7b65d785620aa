import Foundation
import MapFormat

/// One region of `--regions`: a GeoJSON feature's id, parent, names and polygons (longitude,
/// latitude in degrees), with the box and centre the catalog gets.
struct ImportRegion: Sendable {
    typealias Position = (longitude: Double, latitude: Double)
    /// Rings of one polygon: the outer ring first, then its holes.
    typealias Polygon = [[Position]]

    let id: RegionID
    let parent: RegionID?
    let names: [String: String]
    /// Every ring of every polygon, for the tile cover: all that is kept of the polygons.
    let shape: MercatorShape
    /// `[west, south, east, north]`: the shortest longitude arc holding every polygon's outer ring
    /// (west > east when that arc crosses the antimeridian), rounded to 6 decimals.
    let bbox: [Double]
    /// `[latitude, longitude]`: the area centroid of the largest polygon's outer ring (the mean of
    /// its vertices when it has no area), rounded to 6 decimals.
    let center: [Double]
    /// Its place in the file, for messages.
    let featureIndex: Int

    /// A region from its polygons, which it does not keep: import needs their shape, box and
    /// centre, and the Web-Mercator shape is what the tile cover reads.
    init(id: RegionID, parent: RegionID?, names: [String: String], polygons: [Polygon], featureIndex: Int) {
        self.id = id
        self.parent = parent
        self.names = names
        self.featureIndex = featureIndex
        bbox = ImportRegion.bbox(of: polygons)
        center = ImportRegion.center(of: polygons)
        shape = MercatorShape(rings: polygons.flatMap { $0 })
    }

    private static func bbox(of polygons: [Polygon]) -> [Double] {
        var intervals: [(west: Double, east: Double)] = []
        var south = Double.infinity
        var north = -Double.infinity
        for polygon in polygons {
            guard let outer = polygon.first, !outer.isEmpty else { continue }
            intervals.append((outer.map(\.longitude).min()!, outer.map(\.longitude).max()!))
            south = min(south, outer.map(\.latitude).min()!)
            north = max(north, outer.map(\.latitude).max()!)
        }
        let (west, east) = ImportRegion.shortestArc(intervals)
        return [west, south, east, north].map(ImportRegion.rounded)
    }

    private static func center(of polygons: [Polygon]) -> [Double] {
        var best: (area: Double, latitude: Double, longitude: Double) = (-1, 0, 0)
        for polygon in polygons {
            guard let ring = polygon.first, !ring.isEmpty else { continue }
            var twiceArea = 0.0
            var sumX = 0.0
            var sumY = 0.0
            for index in ring.indices {
                let a = ring[index]
                let b = ring[(index + 1) % ring.count]
                let cross = a.longitude * b.latitude - b.longitude * a.latitude
                twiceArea += cross
                sumX += (a.longitude + b.longitude) * cross
                sumY += (a.latitude + b.latitude) * cross
            }
            let area = abs(twiceArea) / 2
            guard area > best.area else { continue }
            if twiceArea != 0 {
                best = (area, sumY / (3 * twiceArea), sumX / (3 * twiceArea))
            } else {
                best = (area, ring.map(\.latitude).reduce(0, +) / Double(ring.count), ring.map(\.longitude).reduce(0, +) / Double(ring.count))
            }
        }
        return [best.latitude, best.longitude].map(ImportRegion.rounded)
    }

    /// The shortest arc `(west, east)` holding every interval (west <= east each): the circle minus
    /// the widest gap between the merged intervals, the gap across the antimeridian included.
    static func shortestArc(_ intervals: [(west: Double, east: Double)]) -> (Double, Double) {
        var merged: [(west: Double, east: Double)] = []
        for interval in intervals.sorted(by: { $0.west < $1.west }) {
            if let last = merged.last, interval.west <= last.east {
                merged[merged.count - 1].east = max(last.east, interval.east)
            } else {
                merged.append(interval)
            }
        }
        guard let first = merged.first, let last = merged.last else { return (-180, 180) }
        var widest = first.west + 360 - last.east
        var arc = (first.west, last.east)
        for index in merged.indices.dropFirst() where merged[index].west - merged[index - 1].east > widest {
            widest = merged[index].west - merged[index - 1].east
            arc = (merged[index].west, merged[index - 1].east)
        }
        return arc
    }

    static func rounded(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 + 0 }
}
