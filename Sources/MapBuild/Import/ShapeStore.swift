import MapIO
import Synchronization

/// Where the regions' shapes (`MercatorShape`) live during an import: two scratch files and a
/// bounded cache, so memory holds neither the polygons nor their grids, whatever their vertices.
///
/// - `raw`: one region's edges as its feature is read (four values an edge), from the start of the
///   file each time.
/// - `grids`: each region's grid, one after the other: the start of each cell's edges (cells in
///   column-major order, then one more: `UInt64` record numbers), then the records, each an edge's
///   two points (four `Double`s) in every cell its box covers.
///
/// A grid is made from `raw` with bounded memory: a pass counts each cell's records, then passes
/// each fill `recordsPerPass` records in their final order and write them at once.
///
/// Reading goes through one cache of at most `cacheBytes` (a grid's starts, whole grid columns for
/// the tile tests, single cells for the place tests), oldest out first; a piece larger than an
/// eighth of it is read in chunks each time instead of kept. A scratch file that fails to read
/// leaves the answers it feeds wrong: the first failure is kept and `check` throws it.
final class ShapeStore: Sendable {
    /// Where one region's grid is.
    struct Grid: Sendable {
        let store: ShapeStore
        /// Its number in the cache.
        let id: Int
        let edges: Int
        let columns: Int
        let rows: Int
        /// Value offsets in `grids`: the cells' starts, then the records.
        let starts: Int
        let records: Int

        var cells: Int { columns * rows }
    }

    /// Values read or written at once: 1 MiB.
    static let chunkValues = 1 << 17
    /// The cache's bound.
    static let cacheBytes = 16 << 20
    /// Records a pass of `makeGrid` places (8 MiB).
    static let recordsPerPass = 1 << 18
    /// The grid's side at most: 64 Ki cells, whose starts take 512 KiB.
    static let maxSide = 256

    let raw: ScratchFile
    private let grids: ScratchFile
    private let state = Mutex(State())

    private struct State {
        /// The values `grids` holds.
        var end = 0
        var shapes = 0
        var cache = Cache()
        var failure: FileError?
    }

    init() throws(FileError) {
        raw = try ScratchFile(prefix: "mappack-edges-")
        grids = try ScratchFile(prefix: "mappack-grids-")
    }

    /// Throws the first failure to read a grid back, if any.
    func check() throws(FileError) {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    // MARK: Making a grid

    /// The grid of the `edges` edges at the start of `raw`, whose vertices' box is `box`: about four
    /// edges a cell, at most `maxSide` × `maxSide` cells.
    func makeGrid(edges: Int, box: MercatorShape.Box) throws(FileError) -> Grid {
        let side = max(1, min(ShapeStore.maxSide, Int((Double(edges) / 4).squareRoot())))
        let (id, starts) = state.withLock { state in
            defer { state.shapes += 1 }
            return (state.shapes, state.end)
        }
        let cellCount = side * side
        let locate = CellLocator(box: box, columns: side, rows: side)
        // Pass 1: how many records each cell holds, then where each cell's start.
        var first = [Int](repeating: 0, count: cellCount + 1)
        try forEachRawEdge(edges) { a, b in
            let (rows, columns) = locate.cells(a, b)
            for column in columns { for row in rows { first[column * side + row + 1] += 1 } }
        }
        for cell in 0..<cellCount { first[cell + 1] += first[cell] }
        let total = first[cellCount]
        let records = starts + cellCount + 1
        try grids.write(first.map { UInt64($0) }, at: starts)
        // Then the records, `recordsPerPass` at a time: each pass places those whose slot is in its range.
        var next = first
        var low = 0
        var buffer: [Double] = []
        while low < total {
            let high = min(total, low + ShapeStore.recordsPerPass)
            // The cells whose records meet low..<high: from the last starting at or before low.
            var lowCell = 0
            var stepCount = cellCount
            while stepCount > 0 {
                let half = stepCount / 2
                if first[lowCell + half + 1] <= low {
                    lowCell += half + 1
                    stepCount -= half + 1
                } else {
                    stepCount = half
                }
            }
            var highCell = lowCell
            while highCell + 1 < cellCount && first[highCell + 1] < high { highCell += 1 }
            for cell in lowCell...highCell { next[cell] = first[cell] }
            let columnRange = (lowCell / side)...(highCell / side)
            buffer = [Double](repeating: 0, count: (high - low) * 4)
            try forEachRawEdge(edges) { a, b in
                let (rows, columns) = locate.cells(a, b)
                guard columns.overlaps(columnRange) else { return }
                for column in columns where columnRange.contains(column) {
                    for row in rows {
                        let cell = column * side + row
                        guard cell >= lowCell, cell <= highCell else { continue }
                        let slot = next[cell]
                        next[cell] += 1
                        guard slot >= low, slot < high else { continue }
                        let at = (slot - low) * 4
                        buffer[at] = a.x
                        buffer[at + 1] = a.y
                        buffer[at + 2] = b.x
                        buffer[at + 3] = b.y
                    }
                }
            }
            try grids.write(buffer, at: records + low * 4)
            low = high
        }
        state.withLock { $0.end = records + total * 4 }
        return Grid(store: self, id: id, edges: edges, columns: side, rows: side, starts: starts, records: records)
    }

    /// Calls `body` with each of the first `count` edges of `raw`, in order.
    private func forEachRawEdge(_ count: Int, _ body: (MercatorShape.Point, MercatorShape.Point) -> Void) throws(FileError) {
        var values: [Double] = []
        var done = 0
        while done < count {
            let edges = min(count - done, ShapeStore.chunkValues / 4)
            try raw.read(into: &values, at: done * 4, count: edges * 4)
            for edge in 0..<edges {
                let at = edge * 4
                body(MercatorShape.Point(x: values[at], y: values[at + 1]), MercatorShape.Point(x: values[at + 2], y: values[at + 3]))
            }
            done += edges
        }
    }

    // MARK: Reading a grid

    /// Calls `body` with each edge of the cells of `column` in `rows`, and the row of the cell it
    /// is in, until `body` returns false. With `wholeColumn` the column's cells are cached
    /// together (the tile tests walk down a column); else only the cell (the place tests walk along
    /// a row).
    func forEachEdge(
        of grid: Grid, column: Int, rows: ClosedRange<Int>, wholeColumn: Bool,
        _ body: (MercatorShape.Point, MercatorShape.Point, Int) -> Bool
    ) {
        guard let starts = words(Cache.Key(shape: grid.id, part: -1), at: grid.starts, count: grid.cells + 1) else { return }
        let base = column * grid.rows
        let wanted = Int(starts[base + rows.lowerBound])..<Int(starts[base + rows.upperBound + 1])
        guard !wanted.isEmpty else { return }
        // The records at hand and the record number of their first.
        var held: [UInt64]
        var heldFirst: Int
        let whole = Int(starts[base])..<Int(starts[base + grid.rows])
        if wholeColumn || rows.count > 1 {
            if whole.count * 32 <= ShapeStore.cacheBytes / 8 {
                guard let column = words(Cache.Key(shape: grid.id, part: column), at: grid.records + whole.lowerBound * 4, count: whole.count * 4)
                else { return }
                held = column
                heldFirst = whole.lowerBound
            } else {
                held = []
                heldFirst = wanted.lowerBound
            }
        } else if wanted.count * 32 <= ShapeStore.cacheBytes / 8 {
            guard
                let cell = words(
                    Cache.Key(shape: grid.id, part: grid.columns + base + rows.lowerBound), at: grid.records + wanted.lowerBound * 4,
                    count: wanted.count * 4)
            else { return }
            held = cell
            heldFirst = wanted.lowerBound
        } else {
            held = []
            heldFirst = wanted.lowerBound
        }
        var row = rows.lowerBound
        var record = wanted.lowerBound
        while record < wanted.upperBound {
            if record >= heldFirst + held.count / 4 {
                // A piece too large to keep: read in chunks.
                let count = min(wanted.upperBound - record, ShapeStore.chunkValues / 4)
                do { try grids.read(into: &held, at: grid.records + record * 4, count: count * 4) } catch {
                    state.withLock { $0.failure = $0.failure ?? error }
                    return
                }
                heldFirst = record
            }
            while record >= Int(starts[base + row + 1]) { row += 1 }
            let at = (record - heldFirst) * 4
            let a = MercatorShape.Point(x: Double(bitPattern: held[at]), y: Double(bitPattern: held[at + 1]))
            let b = MercatorShape.Point(x: Double(bitPattern: held[at + 2]), y: Double(bitPattern: held[at + 3]))
            if !body(a, b, row) { return }
            record += 1
        }
    }

    /// `count` values at `offset` of `grids`, through the cache; nil after a failure to read.
    private func words(_ key: Cache.Key, at offset: Int, count: Int) -> [UInt64]? {
        if let cached = state.withLock({ $0.cache.entries[key]?.words }) { return cached }
        var words: [UInt64] = []
        do { try grids.read(into: &words, at: offset, count: count) } catch {
            state.withLock { $0.failure = $0.failure ?? error }
            return nil
        }
        let read = words
        state.withLock { $0.cache.insert(read, for: key) }
        return words
    }

    /// Pieces of grids read back, at most `cacheBytes`, the oldest out first.
    private struct Cache {
        struct Key: Hashable {
            let shape: Int
            /// -1 for the starts, a column number, or the number of columns plus a cell's.
            let part: Int
        }

        var entries: [Key: (words: [UInt64], stamp: Int)] = [:]
        /// Keys in the order they came, from `head` on.
        private var order: [(key: Key, stamp: Int)] = []
        private var head = 0
        private var stamp = 0
        private var bytes = 0

        mutating func insert(_ words: [UInt64], for key: Key) {
            let size = words.count * 8 + 64
            guard size <= ShapeStore.cacheBytes / 8 else { return }
            while bytes + size > ShapeStore.cacheBytes, head < order.count {
                let oldest = order[head]
                head += 1
                if let entry = entries[oldest.key], entry.stamp == oldest.stamp {
                    bytes -= entry.words.count * 8 + 64
                    entries[oldest.key] = nil
                }
            }
            if head > 4096, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            stamp += 1
            if let replaced = entries.updateValue((words, stamp), forKey: key) { bytes -= replaced.words.count * 8 + 64 }
            order.append((key, stamp))
            bytes += size
        }
    }
}

/// The cells of a uniform grid over a box that a point or an edge's box falls in (clamped).
struct CellLocator {
    let box: MercatorShape.Box
    let columns: Int
    let rows: Int

    func column(_ x: Double) -> Int {
        let width = box.maxX - box.minX
        guard width > 0 else { return 0 }
        return min(max(Int((x - box.minX) / width * Double(columns)), 0), columns - 1)
    }

    func row(_ y: Double) -> Int {
        let height = box.maxY - box.minY
        guard height > 0 else { return 0 }
        return min(max(Int((y - box.minY) / height * Double(rows)), 0), rows - 1)
    }

    /// The cells an edge's box covers.
    func cells(_ a: MercatorShape.Point, _ b: MercatorShape.Point) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>) {
        (row(min(a.y, b.y))...row(max(a.y, b.y)), column(min(a.x, b.x))...column(max(a.x, b.x)))
    }
}
