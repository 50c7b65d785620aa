import MapIO

/// A `coordinates` array as one stream of 64-bit words: the shape of its arrays in pre-order, each
/// position's node followed by its longitude and latitude (24 bytes a position). The first words
/// past `held` go to a scratch file (`GeoJSONSpill`), so a polygon of millions of positions waits on
/// disk while its feature is read (import checks it only once the whole feature is known: its `id`
/// may come after its geometry); memory holds at most `held` words of it.
///
/// A position is any array whose first two elements are numbers (what import's checks accept);
/// its other elements are checked as JSON and dropped. Arrays deeper than a MultiPolygon's
/// positions are never looked into by import's checks, and are kept as leaves.
struct GeoJSONCoordinates {
    /// One node of the pre-order list.
    enum Node: Equatable {
        /// An array of `count` elements whose first two are numbers: the next pair of `values`.
        case position(count: Int)
        /// Any other array; its `count` elements' nodes follow.
        case array(count: Int)
        /// A number, string, boolean, null, object, or an array below the depth import looks at.
        case leaf

        /// How many elements it has (0 for a leaf, which is no array).
        var elements: Int {
            switch self {
            case .position(let count), .array(let count): count
            case .leaf: 0
            }
        }

        var isPosition: Bool {
            if case .position = self { return true }
            return false
        }
    }

    /// Array nesting below `coordinates` that import's checks look into: polygons, rings,
    /// positions.
    static let depth = 3

    /// Words kept in memory before they go to the scratch file (512 KiB).
    static let held = 1 << 16

    /// The scratch file the words past `held` go to, from its start (one array's at a time).
    private let spill: GeoJSONSpill
    /// The words after the first `spilled`, which are in the scratch file.
    private var words: [UInt64] = []
    private var spilled = 0

    /// An empty array whose words past `held` go to `spill`, replacing what it held.
    init(spill: GeoJSONSpill) { self.spill = spill }

    // A node is one word: the count shifted left by two, and a tag.
    private static let positionTag: UInt64 = 0
    private static let arrayTag: UInt64 = 1
    private static let leafTag: UInt64 = 2

    mutating func appendPosition(count: Int, longitude: Double, latitude: Double) throws(FileError) {
        try append(UInt64(count) << 2 | GeoJSONCoordinates.positionTag)
        try append(longitude.bitPattern)
        try append(latitude.bitPattern)
    }

    /// Starts an array node; `closeArray` gives it its count.
    mutating func openArray() throws(FileError) -> Int {
        try append(GeoJSONCoordinates.arrayTag)
        return spilled + words.count - 1
    }

    mutating func closeArray(_ node: Int, count: Int) throws(FileError) {
        let word = UInt64(count) << 2 | GeoJSONCoordinates.arrayTag
        if node >= spilled {
            words[node - spilled] = word
        } else {
            try spill.file().write([word], at: node)
        }
    }

    mutating func appendLeaf() throws(FileError) { try append(GeoJSONCoordinates.leafTag) }

    private mutating func append(_ word: UInt64) throws(FileError) {
        if words.count == GeoJSONCoordinates.held {
            try spill.file().write(words, at: spilled)
            spilled += words.count
            words.removeAll(keepingCapacity: true)
        }
        words.append(word)
    }

    /// Reads the nodes in order.
    struct Cursor {
        let coordinates: GeoJSONCoordinates
        /// The next word.
        private var word = 0
        /// Words read back from the scratch file, from `chunkStart`.
        private var chunk: [UInt64] = []
        private var chunkStart = 0

        init(_ coordinates: GeoJSONCoordinates) { self.coordinates = coordinates }

        /// The next node, and for a position its longitude and latitude.
        mutating func next() throws(ImportError) -> (node: Node, longitude: Double, latitude: Double) {
            let raw = try nextWord()
            switch raw & 3 {
            case GeoJSONCoordinates.positionTag:
                let longitude = Double(bitPattern: try nextWord())
                return (.position(count: Int(raw >> 2)), longitude, Double(bitPattern: try nextWord()))
            case GeoJSONCoordinates.arrayTag: return (.array(count: Int(raw >> 2)), 0, 0)
            default: return (.leaf, 0, 0)
            }
        }

        private mutating func nextWord() throws(ImportError) -> UInt64 {
            defer { word += 1 }
            guard word < coordinates.spilled else { return coordinates.words[word - coordinates.spilled] }
            if word >= chunkStart + chunk.count {
                let count = min(GeoJSONCoordinates.held, coordinates.spilled - word)
                do { try coordinates.spill.file().read(into: &chunk, at: word, count: count) } catch {
                    throw .failed(reason: "reading back a polygon's coordinates: \(error)")
                }
                chunkStart = word
            }
            return chunk[word - chunkStart]
        }
    }
}

/// The scratch file of one GeoJSON read, made when a `coordinates` array first outgrows memory.
final class GeoJSONSpill {
    private var made: ScratchFile?

    func file() throws(FileError) -> ScratchFile {
        if let made { return made }
        let file = try ScratchFile(prefix: "mappack-geojson-")
        made = file
        return file
    }
}
