/// Payload bytes that behave like real map data under compression (about 2–4× with zstd):
/// vector tiles and routing graphs mix near-random coordinate deltas with small command codes,
/// repeated tag strings and repeated runs, so neither pure noise nor zeros would be honest.
enum SyntheticBytes {
    private static let tags: [[UInt8]] = [
        "highway", "residential", "primary", "secondary", "name", "name:de", "name:fr", "building", "yes",
        "water", "landuse", "forest", "railway", "amenity", "school", "oneway", "surface", "asphalt",
        "maxspeed", "50", "bridge", "layer", "place", "village",
    ].map { Array($0.utf8) }

    /// `count` bytes starting with `header`; `noise` is the share (in percent) of incompressible runs.
    static func make(count: Int, header: [UInt8], noise: Int, random: inout SeededRandom) -> [UInt8] {
        if count <= header.count { return Array(header.prefix(count)) }
        var bytes = header
        bytes.reserveCapacity(count + 64)
        while bytes.count < count {
            let pick = random.below(100)
            if pick < noise {
                // Coordinates after delta and zigzag coding: effectively random.
                for _ in 0..<4 {
                    var word = random.next()
                    for _ in 0..<8 {
                        bytes.append(UInt8(truncatingIfNeeded: word))
                        word >>= 8
                    }
                }
            } else if pick < noise + 35 {
                // Geometry commands and small deltas: three bits of information per byte.
                var word = random.next()
                for _ in 0..<21 {
                    bytes.append(UInt8(truncatingIfNeeded: word & 7) | 0x08)
                    word >>= 3
                }
            } else if pick < noise + 60 {
                let tag = tags[random.below(tags.count)]
                bytes.append(UInt8(tag.count))
                bytes += tag
            } else if bytes.count > 64 {
                // Features repeat (the same road in two layers): copy an earlier run.
                let length = 16 + random.below(33)
                let start = random.below(bytes.count - length)
                bytes += bytes[start..<start + length]
            }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
