import Foundation
import MapFormat
import MapIO

/// One region of `--regions`: a GeoJSON feature's id, parent, names and polygons (longitude,
/// latitude in degrees), with the box and centre the catalog gets.
struct ImportRegion: Sendable {
    typealias Position = (longitude: Double, latitude: Double)

    let id: RegionID
    let parent: RegionID?
    let names: [String: String]
    /// Every ring of every polygon, for the tile cover: all that is kept of the polygons (on disk).
    let shape: MercatorShape
    /// `[west, south, east, north]`: the shortest longitude arc holding every polygon's outer ring
    /// (west > east when that arc crosses the antimeridian), rounded to 6 decimals.
    let bbox: [Double]
    /// `[latitude, longitude]`: the area centroid of the largest polygon's outer ring (the mean of
    /// its vertices when it has no area), rounded to 6 decimals.
    let center: [Double]
    /// Its place in the file, for messages.
    let featureIndex: Int

    /// A region from what it keeps of its polygons (`Outline`).
    init(id: RegionID, parent: RegionID?, names: [String: String], outline: Outline, featureIndex: Int) {
        self.id = id
        self.parent = parent
        self.names = names
        self.featureIndex = featureIndex
        bbox = outline.bbox
        center = outline.center
        shape = outline.shape
    }

    /// What import keeps of a region's polygons: its box and centre, and the Web-Mercator shape the
    /// tile cover reads.
    struct Outline {
        let bbox: [Double]
        let center: [Double]
        let shape: MercatorShape
    }

    /// Makes an `Outline` from polygons fed one vertex at a time, never holding them: each polygon's
    /// outer ring widens the box and may give the centre as it passes, and every ring's edges go to
    /// the shape's scratch file. The sums run in the order a ring held in memory gave them.
    struct OutlineBuilder {
        private var shape: MercatorShape.Builder
        /// Each polygon's outer ring's longitudes, for the box.
        private var intervals: [(west: Double, east: Double)] = []
        private var south = Double.infinity
        private var north = -Double.infinity
        /// The centre so far: the largest outer ring's area and centroid.
        private var best: (area: Double, latitude: Double, longitude: Double) = (-1, 0, 0)
        /// The ring being fed: its number in its polygon, and the outer ring's sums.
        private var ring = 0
        private var ringVertices = 0
        private var first: Position = (0, 0)
        private var previous: Position = (0, 0)
        private var west = Double.infinity
        private var east = -Double.infinity
        private var twiceArea = 0.0
        private var sumX = 0.0
        private var sumY = 0.0
        private var sumLongitude = 0.0
        private var sumLatitude = 0.0

        init(store: ShapeStore) { shape = MercatorShape.Builder(store: store) }

        mutating func beginPolygon() { ring = 0 }

        mutating func beginRing() {
            shape.beginRing()
            ringVertices = 0
            (west, east, twiceArea, sumX, sumY, sumLongitude, sumLatitude) = (.infinity, -.infinity, 0, 0, 0, 0, 0)
        }

        mutating func add(_ position: Position) throws(FileError) {
            try shape.add(longitude: position.longitude, latitude: position.latitude)
            guard ring == 0 else { return }
            if ringVertices == 0 { first = position } else { addEdge(previous, position) }
            west = min(west, position.longitude)
            east = max(east, position.longitude)
            south = min(south, position.latitude)
            north = max(north, position.latitude)
            sumLongitude += position.longitude
            sumLatitude += position.latitude
            previous = position
            ringVertices += 1
        }

        private mutating func addEdge(_ a: Position, _ b: Position) {
            let cross = a.longitude * b.latitude - b.longitude * a.latitude
            twiceArea += cross
            sumX += (a.longitude + b.longitude) * cross
            sumY += (a.latitude + b.latitude) * cross
        }

        mutating func endRing() throws(FileError) {
            try shape.endRing()
            defer { ring += 1 }
            guard ring == 0, ringVertices > 0 else { return }
            addEdge(previous, first)
            intervals.append((west, east))
            let area = abs(twiceArea) / 2
            guard area > best.area else { return }
            if twiceArea != 0 {
                best = (area, sumY / (3 * twiceArea), sumX / (3 * twiceArea))
            } else {
                best = (area, sumLatitude / Double(ringVertices), sumLongitude / Double(ringVertices))
            }
        }

        /// `bbox`: the shortest longitude arc holding every polygon's outer ring (west > east when that
        /// arc crosses the antimeridian); `center`: the area centroid of the largest outer ring (the
        /// mean of its vertices when it has no area); both rounded to 6 decimals.
        mutating func finish() throws(FileError) -> Outline {
            let (west, east) = ImportRegion.shortestArc(intervals)
            return Outline(
                bbox: [west, south, east, north].map(ImportRegion.rounded), center: [best.latitude, best.longitude].map(ImportRegion.rounded),
                shape: try shape.finish())
        }
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
