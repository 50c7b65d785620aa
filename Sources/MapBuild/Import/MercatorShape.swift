import Foundation
import MapIO

/// A region's polygons in Web-Mercator world space (`x` from 0 at 180° W to 1 at 180° E, `y` from 0
/// at 85.0511° N to 1 at 85.0511° S), where tile `z/x/y` is the square `[x, x+1] × [y, y+1]` / 2^z.
/// Edges are straight lines between the projected vertices, as tile renderers draw them.
///
/// The edges of every ring (outer rings and holes of every polygon) are bucketed in a uniform grid
/// over the shape's box, so a tile looks only at the edges near it; inside-ness is the even-odd rule
/// over all rings (a point inside a hole is outside). The grid is not in memory: it lives in a
/// scratch file (`ShapeStore`), cell by cell in column-major order, each edge as its two points in
/// every cell its box covers, and is read back a grid column or a cell at a time through the
/// store's bounded cache. Memory holds the box and where the grid is, whatever the vertices.
struct MercatorShape: Sendable {
    /// A point in world space.
    struct Point: Sendable, Equatable {
        var x: Double
        var y: Double
    }

    /// An axis-aligned box in world space (closed).
    struct Box: Sendable, Equatable {
        var minX: Double
        var minY: Double
        var maxX: Double
        var maxY: Double

        func overlaps(_ other: Box) -> Bool { minX <= other.maxX && other.minX <= maxX && minY <= other.maxY && other.minY <= maxY }

        /// Tile `zoom/x/y` (XYZ rows, y down).
        static func tile(zoom: Int, x: Int, y: Int) -> Box {
            let scale = 1 / Double(1 << zoom)
            return Box(minX: Double(x) * scale, minY: Double(y) * scale, maxX: Double(x + 1) * scale, maxY: Double(y + 1) * scale)
        }

        /// No box: the start of a union.
        static let empty = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
    }

    /// The latitude where Web Mercator's square ends.
    static let latitudeLimit = 85.051_128_779_806_59

    /// Longitude, latitude in degrees → world space (latitudes clamped to the square).
    static func project(longitude: Double, latitude: Double) -> Point {
        let clamped = min(max(latitude, -latitudeLimit), latitudeLimit) * .pi / 180
        let y = (1 - log(tan(clamped) + 1 / cos(clamped)) / .pi) / 2
        return Point(x: (longitude + 180) / 360, y: min(max(y, 0), 1))
    }

    /// The box around every vertex.
    let box: Box
    /// Where the grid is.
    let grid: ShapeStore.Grid

    /// Whether the shape has no edges (no rings).
    var isEmpty: Bool { grid.edges == 0 }

    /// The column of `x` in the grid (clamped).
    private func column(_ x: Double) -> Int { CellLocator(box: box, columns: grid.columns, rows: grid.rows).column(x) }

    /// The row of `y` in the grid (clamped).
    private func row(_ y: Double) -> Int { CellLocator(box: box, columns: grid.columns, rows: grid.rows).row(y) }

    /// Whether the shape meets the closed square `tile`: an edge crosses or touches it, or the
    /// square lies inside the shape (then its centre does).
    ///
    /// The centre is tested with a ray down its grid column (the cells a tile's test reads already),
    /// not `contains`' ray along its row: when no edge meets the square its centre is half a tile
    /// from every edge, where the even-odd rule gives the same answer for every ray.
    func intersects(_ tile: Box) -> Bool {
        guard !isEmpty, tile.overlaps(box), let starts = grid.store.starts(of: grid) else { return false }
        let rows = row(tile.minY)...row(tile.maxY)
        for column in column(tile.minX)...column(tile.maxX) {
            var met = false
            grid.store.forEachEdge(of: grid, starts: starts, column: column, rows: rows, wholeColumn: true) { a, b, _ in
                met = MercatorShape.segment(a, b, meets: tile)
                return !met
            }
            if met { return true }
        }
        let centre = Point(x: (tile.minX + tile.maxX) / 2, y: (tile.minY + tile.maxY) / 2)
        guard centre.x >= box.minX, centre.x <= box.maxX, centre.y >= box.minY, centre.y <= box.maxY else { return false }
        let centreColumn = column(centre.x)
        let centreRow = row(centre.y)
        // A centre in a cell that no edge is in gives the whole cell's answer: no edge reaches the
        // cell, so the rays down from any two of its points cross the boundary an even number of
        // times between them. The ray then runs once a cell, not once a tile: at a deep zoom, every
        // tile inside a large region walked all the edges below it in its grid column.
        let cell = centreColumn * grid.rows + centreRow
        let empty = starts[cell] == starts[cell + 1]
        if empty, let known = grid.store.insideCell(cell, of: grid) { return known }
        var inside = false
        grid.store.forEachEdge(of: grid, starts: starts, column: centreColumn, rows: centreRow...(grid.rows - 1), wholeColumn: true) {
            a, b, cellRow in
            guard (a.x > centre.x) != (b.x > centre.x) else { return true }
            let crossing = min(max(a.y + (centre.x - a.x) * (b.y - a.y) / (b.x - a.x), min(a.y, b.y)), max(a.y, b.y))
            if crossing > centre.y, row(crossing) == cellRow { inside.toggle() }
            return true
        }
        if empty { grid.store.remember(insideCell: cell, of: grid, inside) }
        return inside
    }

    /// Whether `point` is inside the shape (even-odd over every ring). A ray runs from the point
    /// towards +x through the grid cells of its row; a crossing counts in the one cell that holds
    /// its x, so an edge bucketed in several cells counts once.
    func contains(_ point: Point) -> Bool {
        guard !isEmpty, point.x >= box.minX, point.x <= box.maxX, point.y >= box.minY, point.y <= box.maxY,
            let starts = grid.store.starts(of: grid)
        else { return false }
        let row = row(point.y)
        var inside = false
        for column in column(point.x)..<grid.columns where starts[column * grid.rows + row] < starts[column * grid.rows + row + 1] {
            grid.store.forEachEdge(of: grid, starts: starts, column: column, rows: row...row, wholeColumn: false) { a, b, _ in
                guard (a.y > point.y) != (b.y > point.y) else { return true }
                let crossing = min(max(a.x + (point.y - a.y) * (b.x - a.x) / (b.y - a.y), min(a.x, b.x)), max(a.x, b.x))
                if crossing > point.x, self.column(crossing) == column { inside.toggle() }
                return true
            }
        }
        return inside
    }

    /// Whether the segment `a`–`b` meets the closed box: the boxes overlap and the box's corners
    /// are not all strictly on one side of the segment's line.
    static func segment(_ a: Point, _ b: Point, meets box: Box) -> Bool {
        guard max(a.x, b.x) >= box.minX, min(a.x, b.x) <= box.maxX, max(a.y, b.y) >= box.minY, min(a.y, b.y) <= box.maxY else { return false }
        let dx = b.x - a.x
        let dy = b.y - a.y
        var positive = false
        var negative = false
        for (x, y) in [(box.minX, box.minY), (box.maxX, box.minY), (box.minX, box.maxY), (box.maxX, box.maxY)] {
            let side = dx * (y - a.y) - dy * (x - a.x)
            if side > 0 { positive = true } else if side < 0 { negative = true } else { return true }
        }
        return positive && negative
    }
}

extension MercatorShape {
    /// Makes a shape from rings of longitude, latitude pairs fed one vertex at a time (each ring
    /// closed or not; every ring of every polygon, holes included), its edges going to the store's
    /// scratch file as they come. A ring with fewer than 3 distinct points adds no area; a ring of
    /// one point is kept as an edge (it still touches tiles).
    struct Builder {
        let store: ShapeStore
        private var box = Box.empty
        private var edges = 0
        /// Edges not yet in the store's scratch file: four values each.
        private var pending: [Double] = []
        private var first = Point(x: 0, y: 0)
        private var previous = Point(x: 0, y: 0)
        private var ringVertices = 0

        init(store: ShapeStore) { self.store = store }

        mutating func beginRing() { ringVertices = 0 }

        mutating func add(longitude: Double, latitude: Double) throws(FileError) {
            let point = MercatorShape.project(longitude: longitude, latitude: latitude)
            if ringVertices == 0 { first = point } else { try edge(from: previous, to: point) }
            previous = point
            ringVertices += 1
        }

        mutating func endRing() throws(FileError) {
            if ringVertices == 1 {
                box = Builder.union(box, previous)
                try append(previous, previous)
            } else if ringVertices > 1 {
                try edge(from: previous, to: first)
            }
            ringVertices = 0
        }

        /// The edge from a vertex to the next: the vertex widens the box; an edge of no length is none.
        private mutating func edge(from point: Point, to next: Point) throws(FileError) {
            box = Builder.union(box, point)
            if point != next { try append(point, next) }
        }

        private static func union(_ box: Box, _ point: Point) -> Box {
            Box(minX: min(box.minX, point.x), minY: min(box.minY, point.y), maxX: max(box.maxX, point.x), maxY: max(box.maxY, point.y))
        }

        private mutating func append(_ a: Point, _ b: Point) throws(FileError) {
            pending.append(a.x)
            pending.append(a.y)
            pending.append(b.x)
            pending.append(b.y)
            if pending.count >= ShapeStore.chunkValues {
                try store.raw.write(pending, at: (edges + 1) * 4 - pending.count)
                pending.removeAll(keepingCapacity: true)
            }
            edges += 1
        }

        /// The shape: its grid made in the store.
        mutating func finish() throws(FileError) -> MercatorShape {
            if !pending.isEmpty { try store.raw.write(pending, at: edges * 4 - pending.count) }
            pending = []
            return MercatorShape(box: box, grid: try store.makeGrid(edges: edges, box: box))
        }
    }
}
