import Foundation
import Testing

@testable import MapBuild

/// `MercatorShape.intersects` keeps the answer of a tile centre in an empty grid cell for the whole
/// cell (issue 45: a planet's deep tiles inside a large region each walked the edges below them).
/// Every tile of a deep zoom over a concave polygon with a hole, many to a cell, must get the answer
/// of a test over all edges: an edge meets the square, or the centre is inside by the even-odd rule.
@Suite struct MercatorShapeCellTests {
    /// A star of `points` points around `centre` (degrees), with a square hole in the middle.
    static func rings(centre: (Double, Double), points: Int) -> [[(Double, Double)]] {
        var star: [(Double, Double)] = []
        for step in 0..<(points * 2) {
            let angle = Double(step) * .pi / Double(points)
            // Spikes of two lengths, and a wobble so that no two edges are alike.
            let radius = (step % 2 == 0 ? 9.0 : 8.0) + 0.3 * sin(Double(step) * 1.7)
            star.append((centre.0 + radius * cos(angle), centre.1 + radius * sin(angle)))
        }
        let hole = [(-3.0, -3.0), (3.0, -3.0), (3.0, 3.0), (-3.0, 3.0)].map { (centre.0 + $0.0, centre.1 + $0.1) }
        return [star, hole]
    }

    @Test func deepTilesInEmptyCellsGetTheAnswerOfEveryEdge() throws {
        let store = try ShapeStore()
        let rings = Self.rings(centre: (10.3, 45.7), points: 100)
        var builder = MercatorShape.Builder(store: store)
        for ring in rings {
            builder.beginRing()
            for (longitude, latitude) in ring { try builder.add(longitude: longitude, latitude: latitude) }
            try builder.endRing()
        }
        let shape = try builder.finish()
        let edges = rings.flatMap { ring in
            ring.indices.map {
                (
                    MercatorShape.project(longitude: ring[$0].0, latitude: ring[$0].1),
                    MercatorShape.project(longitude: ring[($0 + 1) % ring.count].0, latitude: ring[($0 + 1) % ring.count].1)
                )
            }
        }
        func inside(_ point: MercatorShape.Point) -> Bool {
            var inside = false
            for (a, b) in edges where (a.y > point.y) != (b.y > point.y) {
                if a.x + (point.y - a.y) * (b.x - a.x) / (b.y - a.y) > point.x { inside.toggle() }
            }
            return inside
        }
        let zoom = 11
        let scale = Double(1 << zoom)
        let columns = Int(shape.box.minX * scale)...Int(shape.box.maxX * scale)
        let rows = Int(shape.box.minY * scale)...Int(shape.box.maxY * scale)
        // Many tiles to a cell (204 edges: a grid of 7 x 7 cells over about 25 degrees).
        #expect(columns.count > 5 * shape.grid.columns)
        var met = 0
        var outside = 0
        var inHole = 0
        for x in columns {
            for y in rows {
                let tile = MercatorShape.Box.tile(zoom: zoom, x: x, y: y)
                let centre = MercatorShape.Point(x: (tile.minX + tile.maxX) / 2, y: (tile.minY + tile.maxY) / 2)
                let expected = edges.contains { MercatorShape.segment($0.0, $0.1, meets: tile) } || inside(centre)
                #expect(shape.intersects(tile) == expected, "tile \(zoom)/\(x)/\(y)")
                if expected { met += 1 } else { outside += 1 }
                let hole = (MercatorShape.project(longitude: 7.8, latitude: 43.2), MercatorShape.project(longitude: 12.8, latitude: 48.2))
                if centre.x > hole.0.x, centre.x < hole.1.x, centre.y < hole.0.y, centre.y > hole.1.y { inHole += expected ? 0 : 1 }
            }
        }
        // Tiles inside, outside, and in the hole all came up, and empty cells kept their answers.
        #expect(met > 1000 && outside > 1000 && inHole > 100)
        let kept = (0..<shape.grid.cells).filter { store.insideCell($0, of: shape.grid) != nil }
        #expect(kept.contains { store.insideCell($0, of: shape.grid) == true } && kept.contains { store.insideCell($0, of: shape.grid) == false })
        // Asked again, now from what the cells kept: the same answers.
        for x in columns where x % 3 == 0 {
            for y in rows where y % 3 == 0 {
                let tile = MercatorShape.Box.tile(zoom: zoom, x: x, y: y)
                let centre = MercatorShape.Point(x: (tile.minX + tile.maxX) / 2, y: (tile.minY + tile.maxY) / 2)
                #expect(shape.intersects(tile) == (edges.contains { MercatorShape.segment($0.0, $0.1, meets: tile) } || inside(centre)))
            }
        }
    }
}
