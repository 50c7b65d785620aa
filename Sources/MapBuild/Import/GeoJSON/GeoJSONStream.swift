import MapIO

/// A GeoJSON FeatureCollection (RFC 7946) read one Feature at a time, with the errors
/// `mappack import` gave when it parsed the file whole.
///
/// That parse decided in a fixed order, and the stream keeps it: the file not JSON anywhere wins
/// (even past a bad feature); then the top level not a FeatureCollection (its `type` may come
/// after `features`); then `features` not an array; then the first element that is not a Feature
/// object; then the first feature the caller refused, and only then what the caller checks across
/// features. So after a refused feature the stream only checks the rest (that each element is a
/// Feature, and the JSON), and after an element that is not a Feature only the JSON. A repeated key
/// counts once, its last value (as Foundation kept it): a second `features` starts over (`restart`).
struct GeoJSONStream {
    /// The message Foundation's parser gave for every syntax error, kept word for word.
    static let notJSON =
        "not JSON (The operation could not be completed. The data is not in the correct format.); expected a GeoJSON FeatureCollection"

    let file: String
    /// The property keys to keep (with every `name:…` key); the rest are dropped unread.
    let propertyKeys: Set<String>
    /// Property keys whose array or object values are kept (one level deep).
    let containerKeys: Set<String>
    /// Property keys that name a Feature's `id` (a region's `parent`): read by the rule of `id`.
    var idKeys: Set<String> = []
    /// Where a feature's coordinates wait past what memory holds (`GeoJSONCoordinates`).
    private let spill = GeoJSONSpill()

    /// What the stream still does for each element.
    private enum Stage {
        /// Reads each Feature for the caller.
        case reading
        /// A feature was refused: checks that each element is a Feature.
        case checkingKinds(refused: ImportError)
        /// An element is not a Feature: checks the JSON only.
        case checkingJSON(notFeature: Int)
    }

    /// Reads the file, calling `restart` before each `features` array and `feature` with each
    /// element's index and Feature.
    func read(restart: () -> Void, feature: (Int, inout GeoJSONFeature) throws(ImportError) -> Void) throws(ImportError) {
        let handle: ReadableFile
        do { handle = try ReadableFile(path: file) } catch { throw .unreadable(file: file, reason: error.description) }
        var reader = JSONStreamReader(file: handle)
        var isCollection = false
        var stage: Stage?
        do throws(JSONStreamReader.Failure) {
            // Foundation read an object or an array at the top, nothing else.
            let top = try reader.peekKind()
            guard top == .object || top == .array else { throw reader.failure("a value that is no array or object at the top") }
            if top == .object {
                try reader.beginObject()
                var first = true
                while try reader.nextMember(first: &first) {
                    switch try reader.readKey() {
                    case "type": isCollection = try readString(&reader, limit: 64) == "FeatureCollection"
                    case "features":
                        restart()
                        if try reader.peekKind() == .array {
                            stage = try readFeatures(&reader, feature: feature)
                        } else {
                            try reader.skipValue()
                            stage = nil
                        }
                    default: try reader.skipValue()
                    }
                }
            } else {
                try reader.skipValue()
            }
            try reader.expectEnd()
        } catch {
            switch error {
            case .syntax: throw .unreadable(file: file, reason: GeoJSONStream.notJSON)
            case .io(let failure): throw .unreadable(file: file, reason: failure.description)
            case .scratch(let failure): throw .failed(reason: "\(file): keeping a polygon's coordinates: \(failure)")
            }
        }
        guard isCollection else {
            throw .unreadable(file: file, reason: "not a GeoJSON FeatureCollection (no \"type\": \"FeatureCollection\" at the top)")
        }
        switch stage {
        case nil: throw .badFeature(file: file, field: "features", problem: "missing or not an array")
        case .reading: return
        case .checkingKinds(let refused): throw refused
        case .checkingJSON(let index): throw .badFeature(file: file, field: "features[\(index)]", problem: "not a GeoJSON Feature object")
        }
    }

    /// The string that comes next, or nil for any other value (checked and dropped) or a longer string.
    private func readString(_ reader: inout JSONStreamReader, limit: Int) throws(JSONStreamReader.Failure) -> String? {
        guard try reader.peekKind() == .string else {
            try reader.skipValue()
            return nil
        }
        return try reader.readString(limit: limit)
    }

    private func readFeatures(
        _ reader: inout JSONStreamReader, feature: (Int, inout GeoJSONFeature) throws(ImportError) -> Void
    ) throws(JSONStreamReader.Failure) -> Stage {
        var stage = Stage.reading
        try reader.beginArray()
        var first = true
        var index = 0
        while try reader.nextElement(first: &first) {
            defer { index += 1 }
            switch stage {
            case .checkingJSON: try reader.skipValue()
            case .checkingKinds:
                if try !readFeature(&reader, keeping: false).isFeature { stage = .checkingJSON(notFeature: index) }
            case .reading:
                var read = try readFeature(&reader, keeping: true)
                guard read.isFeature else {
                    stage = .checkingJSON(notFeature: index)
                    continue
                }
                do { try feature(index, &read.feature) } catch { stage = .checkingKinds(refused: error) }
            }
        }
        return stage
    }

    /// One element of `features`: whether it is an object whose `type` is "Feature", and with
    /// `keeping`, what import keeps of it.
    private func readFeature(_ reader: inout JSONStreamReader, keeping: Bool) throws(JSONStreamReader.Failure) -> (
        isFeature: Bool, feature: GeoJSONFeature
    ) {
        var feature = GeoJSONFeature()
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return (false, feature)
        }
        var isFeature = false
        try reader.beginObject()
        var first = true
        while try reader.nextMember(first: &first) {
            switch try reader.readKey() {
            case "type": isFeature = try readString(&reader, limit: 64) == "Feature"
            case "id" where keeping: feature.id = try readID(&reader)
            case "properties" where keeping: feature.properties = try readProperties(&reader)
            case "geometry" where keeping: feature.geometry = try readGeometry(&reader)
            default: try reader.skipValue()
            }
        }
        return (isFeature, feature)
    }

    private func readProperties(_ reader: inout JSONStreamReader) throws(JSONStreamReader.Failure) -> GeoJSONProperties {
        var properties = GeoJSONProperties()
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return properties
        }
        try reader.beginObject()
        var first = true
        while try reader.nextMember(first: &first) {
            // `name:xx` keys are kept whatever their length; any other key import wants is short.
            let key = try reader.readKey(limit: 256, keepLonger: { $0.starts(with: "name:".utf8) })
            guard let key, propertyKeys.contains(key) || (key.hasPrefix("name:") && key.count > 5) else {
                try reader.skipValue()
                continue
            }
            properties.set(key, idKeys.contains(key) ? try readID(&reader) : try readValue(&reader, containers: containerKeys.contains(key)))
        }
        return properties
    }

    /// A value: scalars whole; arrays and objects (with `containers`) one level deep.
    private func readValue(_ reader: inout JSONStreamReader, containers: Bool) throws(JSONStreamReader.Failure) -> GeoJSONValue {
        switch try reader.peekKind() {
        case .string: return .string(try reader.readString() ?? "")
        case .number: return .number(try reader.readNumber())
        case .bool: return .number(try reader.readBool() ? 1 : 0)
        case .null:
            try reader.readNull()
            return .null
        case .array where containers:
            var elements: [GeoJSONValue] = []
            try reader.beginArray()
            var first = true
            while try reader.nextElement(first: &first) { elements.append(try readValue(&reader, containers: false)) }
            return .array(elements)
        case .object where containers:
            var members: [GeoJSONMember] = []
            try reader.beginObject()
            var first = true
            while try reader.nextMember(first: &first) {
                let key = try reader.readKey(limit: .max) ?? ""
                members.append(GeoJSONMember(key: key, value: try readValue(&reader, containers: false)))
            }
            return .object(members)
        case .array, .object:
            try reader.skipValue()
            return .other
        }
    }

    /// A Feature's own `id` (RFC 7946 3.2: a string or a number), or a property naming one
    /// (`idKeys`): a number as its text, an integer in plain decimal (`1e3` stays as written, `-0`
    /// is `0`); `true` or `false` as `other`, which no id is. One rule for both, so a child's
    /// numeric `parent` is its parent's numeric `id` whenever the two are written alike.
    private func readID(_ reader: inout JSONStreamReader) throws(JSONStreamReader.Failure) -> GeoJSONValue {
        switch try reader.peekKind() {
        case .number:
            let (literal, integer) = try reader.readNumberLiteral()
            if integer, let exact = Int64(literal) { return .string(String(exact)) }
            return .string(literal)
        case .bool:
            _ = try reader.readBool()
            return .other
        default: return try readValue(&reader, containers: false)
        }
    }

    private func readGeometry(_ reader: inout JSONStreamReader) throws(JSONStreamReader.Failure) -> GeoJSONGeometry? {
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return nil
        }
        var geometry = GeoJSONGeometry()
        try reader.beginObject()
        var first = true
        while try reader.nextMember(first: &first) {
            switch try reader.readKey() {
            case "type": geometry.type = try readString(&reader, limit: .max)
            case "coordinates":
                if try reader.peekKind() == .array {
                    var coordinates = GeoJSONCoordinates(spill: spill)
                    try readCoordinateArray(&reader, into: &coordinates, level: 0)
                    geometry.coordinates = coordinates
                } else {
                    try reader.skipValue()
                    geometry.coordinates = nil
                }
            default: try reader.skipValue()
            }
        }
        return geometry
    }

    /// The array that comes next, at `level` below `coordinates`, into `coordinates`' nodes.
    private func readCoordinateArray(
        _ reader: inout JSONStreamReader, into coordinates: inout GeoJSONCoordinates, level: Int
    ) throws(JSONStreamReader.Failure) {
        try reader.beginArray()
        var first = true
        var more = try reader.nextElement(first: &first)
        var count = 0
        if more, let longitude = try readNumberElement(&reader) {
            count = 1
            more = try reader.nextElement(first: &first)
            if more, let latitude = try readNumberElement(&reader) {
                // A position; what follows the pair is checked and dropped.
                count = 2
                while try reader.nextElement(first: &first) {
                    try reader.skipValue()
                    count += 1
                }
                do { try coordinates.appendPosition(count: count, longitude: longitude, latitude: latitude) } catch { throw .scratch(error) }
                return
            }
        }
        let node: Int
        do { node = try coordinates.openArray() } catch { throw .scratch(error) }
        if count == 1 { do { try coordinates.appendLeaf() } catch { throw .scratch(error) } }
        while more {
            if level < GeoJSONCoordinates.depth, try reader.peekKind() == .array {
                try readCoordinateArray(&reader, into: &coordinates, level: level + 1)
            } else {
                try reader.skipValue()
                do { try coordinates.appendLeaf() } catch { throw .scratch(error) }
            }
            count += 1
            more = try reader.nextElement(first: &first)
        }
        do { try coordinates.closeArray(node, count: count) } catch { throw .scratch(error) }
    }

    /// A number (or boolean) element, consumed; nil, consuming nothing, for any other value.
    private func readNumberElement(_ reader: inout JSONStreamReader) throws(JSONStreamReader.Failure) -> Double? {
        switch try reader.peekKind() {
        case .number: return try reader.readNumber()
        case .bool: return try reader.readBool() ? 1 : 0
        default: return nil
        }
    }
}
