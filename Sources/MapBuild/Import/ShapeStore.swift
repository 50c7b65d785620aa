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
/// A grid is made from `raw` with bounded memory: a pass counts each cell's records; a second puts
/// each record in its slot, in memory for a grid of up to `recordsPerPass` records, else in bands of
/// that many slots staged in `raw` and each put in order apart (`distribute`).
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
    /// Records `makeGrid` puts in order at once (4 MiB; 5 MiB more while staged).
    static let recordsPerPass = 1 << 17
    /// The grid's side at most: 64 Ki cells, whose starts take 512 KiB.
    static let maxSide = 256
    /// Empty cells whose side of their shape `insideCell` keeps at most (about 4 MiB), then forgets.
    static let insideCellsBound = 1 << 18

    let raw: ScratchFile
    private let grids: ScratchFile
    private let state = Mutex(State())

    private struct State {
        /// The values `grids` holds.
        var end = 0
        var shapes = 0
        var cache = Cache()
        var failure: FileError?
        /// Whether an empty cell (no edge in it) is inside its shape, by shape id and cell number.
        var insideCells: [Int: Bool] = [:]
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
        if total <= ShapeStore.recordsPerPass {
            // Pass 2: every record into its slot, written at once.
            var buffer = [Double](repeating: 0, count: total * 4)
            var next = first
            try forEachRawEdge(edges) { a, b in
                let (rows, columns) = locate.cells(a, b)
                for column in columns {
                    for row in rows {
                        let at = next[column * side + row] * 4
                        next[column * side + row] += 1
                        (buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]) = (a.x, a.y, b.x, b.y)
                    }
                }
            }
            try grids.write(buffer, at: records)
        } else {
            try distribute(edges: edges, total: total, first: first, locate: locate, to: records)
        }
        state.withLock { $0.end = records + total * 4 }
        return Grid(store: self, id: id, edges: edges, columns: side, rows: side, starts: starts, records: records)
    }

    /// Pass 2 for a grid of more than `recordsPerPass` records: each record, with its slot, goes to
    /// the part of `raw` after the edges that holds its band of `recordsPerPass` slots (through a
    /// small buffer per band); pass 3 reads each band back, puts its records in order and writes
    /// them to `grids` at `records`.
    private func distribute(edges: Int, total: Int, first: [Int], locate: CellLocator, to records: Int) throws(FileError) {
        let band = ShapeStore.recordsPerPass
        let bands = (total + band - 1) / band
        // Five values a record: its slot, then its edge.
        let staging = edges * 4
        let held = max(64, min(4096, (4 << 20) / 40 / bands))
        var pending = [[Double]](repeating: [], count: bands)
        var written = [Int](repeating: 0, count: bands)
        var next = first
        var failure: FileError?
        func flush(_ index: Int) {
            guard failure == nil, !pending[index].isEmpty else { return }
            do { try raw.write(pending[index], at: staging + index * band * 5 + written[index]) } catch { failure = error }
            written[index] += pending[index].count
            pending[index].removeAll(keepingCapacity: true)
        }
        try forEachRawEdge(edges) { a, b in
            let (rows, columns) = locate.cells(a, b)
            for column in columns {
                for row in rows {
                    let slot = next[column * locate.rows + row]
                    next[column * locate.rows + row] += 1
                    let index = slot / band
                    pending[index].append(Double(slot))
                    pending[index].append(a.x)
                    pending[index].append(a.y)
                    pending[index].append(b.x)
                    pending[index].append(b.y)
                    if pending[index].count >= held * 5 { flush(index) }
                }
            }
        }
        for index in 0..<bands { flush(index) }
        if let failure { throw failure }
        pending = []
        var staged: [Double] = []
        var buffer: [Double] = []
        for index in 0..<bands {
            let low = index * band
            let count = min(band, total - low)
            try raw.read(into: &staged, at: staging + low * 5, count: count * 5)
            buffer = [Double](repeating: 0, count: count * 4)
            for record in 0..<count {
                let at = (Int(staged[record * 5]) - low) * 4
                (buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]) =
                    (staged[record * 5 + 1], staged[record * 5 + 2], staged[record * 5 + 3], staged[record * 5 + 4])
            }
            try grids.write(buffer, at: records + low * 4)
        }
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
    /// `starts` is the grid's (`starts(of:)`).
    func forEachEdge(
        of grid: Grid, starts: [UInt64], column: Int, rows: ClosedRange<Int>, wholeColumn: Bool,
        _ body: (MercatorShape.Point, MercatorShape.Point, Int) -> Bool
    ) {
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

    /// Whether the empty cell `cell` of `grid` is inside its shape, when `remember` was told.
    func insideCell(_ cell: Int, of grid: Grid) -> Bool? { state.withLock { $0.insideCells[grid.id << 17 | cell] } }

    /// Keeps whether the empty cell `cell` of `grid` is inside its shape (at most
    /// `insideCellsBound` cells, then all are forgotten and found again).
    func remember(insideCell cell: Int, of grid: Grid, _ inside: Bool) {
        state.withLock { state in
            if state.insideCells.count >= ShapeStore.insideCellsBound { state.insideCells.removeAll(keepingCapacity: true) }
            state.insideCells[grid.id << 17 | cell] = inside
        }
    }

    /// Where each cell of `grid` starts in its records, then their end; nil after a failure to read.
    func starts(of grid: Grid) -> [UInt64]? { words(Cache.Key(shape: grid.id, part: -1), at: grid.starts, count: grid.cells + 1) }

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
