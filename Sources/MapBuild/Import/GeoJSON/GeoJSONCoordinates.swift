/// A `coordinates` array in two flat buffers: the shape of its arrays in pre-order, and the
/// longitude and latitude of every position. 24 bytes a position while a feature is read, where
/// Foundation's objects took hundreds.
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

    private(set) var nodes: [Int] = []
    private(set) var values: ContiguousArray<Double> = []

    // A node is one Int: the count shifted left by two, and a tag.
    private static let positionTag = 0
    private static let arrayTag = 1
    private static let leafTag = 2

    mutating func appendPosition(count: Int, longitude: Double, latitude: Double) {
        nodes.append(count << 2 | GeoJSONCoordinates.positionTag)
        values.append(longitude)
        values.append(latitude)
    }

    /// Starts an array node; `closeArray` gives it its count.
    mutating func openArray() -> Int {
        nodes.append(GeoJSONCoordinates.arrayTag)
        return nodes.count - 1
    }

    mutating func closeArray(_ node: Int, count: Int) { nodes[node] = count << 2 | GeoJSONCoordinates.arrayTag }

    mutating func appendLeaf() { nodes.append(GeoJSONCoordinates.leafTag) }

    /// Reads the nodes in order.
    struct Cursor {
        let coordinates: GeoJSONCoordinates
        private var node = 0
        private var pair = 0

        init(_ coordinates: GeoJSONCoordinates) { self.coordinates = coordinates }

        /// The next node, and for a position its longitude and latitude.
        mutating func next() -> (node: Node, longitude: Double, latitude: Double) {
            let raw = coordinates.nodes[node]
            node += 1
            switch raw & 3 {
            case GeoJSONCoordinates.positionTag:
                defer { pair += 2 }
                return (.position(count: raw >> 2), coordinates.values[pair], coordinates.values[pair + 1])
            case GeoJSONCoordinates.arrayTag: return (.array(count: raw >> 2), 0, 0)
            default: return (.leaf, 0, 0)
            }
        }
    }
}
