import Foundation

/// A region's polygons in Web-Mercator world space (`x` from 0 at 180° W to 1 at 180° E, `y` from 0
/// at 85.0511° N to 1 at 85.0511° S), where tile `z/x/y` is the square `[x, x+1] × [y, y+1]` / 2^z.
/// Edges are straight lines between the projected vertices, as tile renderers draw them.
///
/// The edges of every ring (outer rings and holes of every polygon) sit in one list, bucketed in a
/// uniform grid over the shape's box, so a tile looks only at the edges near it; inside-ness is the
/// even-odd rule over all rings (a point inside a hole is outside).
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
    }

    /// The latitude where Web Mercator's square ends.
    static let latitudeLimit = 85.051_128_779_806_59

    /// Longitude, latitude in degrees → world space (latitudes clamped to the square).
    static func project(longitude: Double, latitude: Double) -> Point {
        let clamped = min(max(latitude, -latitudeLimit), latitudeLimit) * .pi / 180
        let y = (1 - log(tan(clamped) + 1 / cos(clamped)) / .pi) / 2
        return Point(x: (longitude + 180) / 360, y: min(max(y, 0), 1))
    }

    /// Every edge, as start and end points.
    private let starts: [Point]
    private let ends: [Point]
    /// The box around every vertex.
    let box: Box
    /// The grid: `columns × rows` cells over `box`; cell `c` holds `cellEdges[cellStarts[c]..<cellStarts[c + 1]]`.
    private let columns: Int
    private let rows: Int
    private let cellStarts: [Int32]
    private let cellEdges: [Int32]

    /// A shape from rings of longitude, latitude pairs (each ring closed or not; every ring of
    /// every polygon, holes included). Rings with fewer than 3 distinct points add no area and are
    /// kept as edges (they still touch tiles).
    init(rings: [[(longitude: Double, latitude: Double)]]) {
        var starts: [Point] = []
        var ends: [Point] = []
        // At most one edge a vertex: no spare capacity on a shape of millions of vertices.
        let vertices = rings.reduce(0) { $0 + $1.count }
        starts.reserveCapacity(vertices)
        ends.reserveCapacity(vertices)
        var box = Box(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
        for ring in rings where !ring.isEmpty {
            // Each vertex projected once, as the loop reaches it (no projected copy of the ring).
            let first = MercatorShape.project(longitude: ring[0].longitude, latitude: ring[0].latitude)
            var point = first
            for index in ring.indices {
                let next =
                    index + 1 < ring.count ? MercatorShape.project(longitude: ring[index + 1].longitude, latitude: ring[index + 1].latitude) : first
                box = Box(minX: min(box.minX, point.x), minY: min(box.minY, point.y), maxX: max(box.maxX, point.x), maxY: max(box.maxY, point.y))
                if point != next {
                    starts.append(point)
                    ends.append(next)
                } else if ring.count == 1 {
                    starts.append(point)
                    ends.append(point)
                }
                point = next
            }
        }
        self.starts = starts
        self.ends = ends
        self.box = box
        // About four edges per cell, at most 1024 × 1024 cells.
        let side = max(1, min(1024, Int((Double(starts.count) / 4).squareRoot())))
        columns = side
        rows = side
        var counts = [Int32](repeating: 0, count: side * side + 1)
        let grid = (box: box, columns: side, rows: side)
        for index in starts.indices {
            let cells = MercatorShape.cells(of: starts[index], ends[index], grid: grid)
            for row in cells.rows { for column in cells.columns { counts[row * side + column + 1] += 1 } }
        }
        for cell in 0..<(side * side) { counts[cell + 1] += counts[cell] }
        var next = counts
        var cellEdges = [Int32](repeating: 0, count: Int(counts[side * side]))
        for index in starts.indices {
            let cells = MercatorShape.cells(of: starts[index], ends[index], grid: grid)
            for row in cells.rows {
                for column in cells.columns {
                    cellEdges[Int(next[row * side + column])] = Int32(index)
                    next[row * side + column] += 1
                }
            }
        }
        cellStarts = counts
        self.cellEdges = cellEdges
    }

    /// Whether the shape has no edges (no rings).
    var isEmpty: Bool { starts.isEmpty }

    /// The column of `x` in the grid (clamped).
    private static func column(_ x: Double, grid: (box: Box, columns: Int, rows: Int)) -> Int {
        let width = grid.box.maxX - grid.box.minX
        guard width > 0 else { return 0 }
        return min(max(Int((x - grid.box.minX) / width * Double(grid.columns)), 0), grid.columns - 1)
    }

    /// The row of `y` in the grid (clamped).
    private static func row(_ y: Double, grid: (box: Box, columns: Int, rows: Int)) -> Int {
        let height = grid.box.maxY - grid.box.minY
        guard height > 0 else { return 0 }
        return min(max(Int((y - grid.box.minY) / height * Double(grid.rows)), 0), grid.rows - 1)
    }

    private var grid: (box: Box, columns: Int, rows: Int) { (box, columns, rows) }

    /// The cells an edge's box covers.
    private static func cells(of start: Point, _ end: Point, grid: (box: Box, columns: Int, rows: Int)) -> (
        rows: ClosedRange<Int>, columns: ClosedRange<Int>
    ) {
        (
            row(min(start.y, end.y), grid: grid)...row(max(start.y, end.y), grid: grid),
            column(min(start.x, end.x), grid: grid)...column(max(start.x, end.x), grid: grid)
        )
    }

    /// Whether the shape meets the closed square `tile`: an edge crosses or touches it, or the
    /// square lies inside the shape (then its centre does).
    func intersects(_ tile: Box) -> Bool {
        guard !isEmpty, tile.overlaps(box) else { return false }
        let grid = self.grid
        for row in MercatorShape.row(tile.minY, grid: grid)...MercatorShape.row(tile.maxY, grid: grid) {
            for column in MercatorShape.column(tile.minX, grid: grid)...MercatorShape.column(tile.maxX, grid: grid) {
                let cell = row * columns + column
                for slot in Int(cellStarts[cell])..<Int(cellStarts[cell + 1]) {
                    let edge = Int(cellEdges[slot])
                    if MercatorShape.segment(starts[edge], ends[edge], meets: tile) { return true }
                }
            }
        }
        return contains(Point(x: (tile.minX + tile.maxX) / 2, y: (tile.minY + tile.maxY) / 2))
    }

    /// Whether `point` is inside the shape (even-odd over every ring). A ray runs from the point
    /// towards +x through the grid cells of its row; a crossing counts in the one cell that holds
    /// its x, so an edge bucketed in several cells counts once.
    func contains(_ point: Point) -> Bool {
        guard !isEmpty, point.x >= box.minX, point.x <= box.maxX, point.y >= box.minY, point.y <= box.maxY else { return false }
        let grid = self.grid
        let row = MercatorShape.row(point.y, grid: grid)
        var inside = false
        for column in MercatorShape.column(point.x, grid: grid)..<columns {
            let cell = row * columns + column
            for slot in Int(cellStarts[cell])..<Int(cellStarts[cell + 1]) {
                let edge = Int(cellEdges[slot])
                let (a, b) = (starts[edge], ends[edge])
                guard (a.y > point.y) != (b.y > point.y) else { continue }
                let crossing = min(max(a.x + (point.y - a.y) * (b.x - a.x) / (b.y - a.y), min(a.x, b.x)), max(a.x, b.x))
                if crossing > point.x, MercatorShape.column(crossing, grid: grid) == column { inside.toggle() }
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
