import Foundation

/// The facts of PMTiles v3 (protomaps' `spec/v3/spec.md`) a writer and a reader need: tile ids on
/// the Hilbert curve and back, directory entries and their varint encoding and decoding, and the
/// 127-byte header written and parsed.
package enum PMTiles {
    /// The highest zoom whose tile ids fit the 64-bit ids (4^32 tiles would not).
    package static let maxZoom = 31
    /// The header's length; the header and the compressed root directory must fit in 16 KiB.
    package static let headerLength = 127
    /// The largest compressed root directory (16384 − 127 bytes), so a reader gets it with the header.
    package static let maxRootLength = 16384 - headerLength

    /// The header's compression byte (for the directories and metadata, and for the tiles).
    package enum Compression: UInt8 {
        case unknown = 0
        case none = 1
        case gzip = 2
        case brotli = 3
        case zstd = 4
    }

    /// The header's tile type byte.
    package enum TileType: UInt8 {
        case unknown = 0
        case mvt = 1
        case png = 2
        case jpeg = 3
        case webp = 4
        case avif = 5

        /// The type of tiles an MBTiles `format` names (`pbf`, `png`, `jpg`, …); unknown for others.
        package init(mbtilesFormat format: String?) {
            switch format?.lowercased() {
            case "pbf", "mvt": self = .mvt
            case "png": self = .png
            case "jpg", "jpeg": self = .jpeg
            case "webp": self = .webp
            case "avif": self = .avif
            default: self = .unknown
            }
        }
    }

    /// The id of tile `z/x/y` (XYZ rows): the tiles of every lower zoom, counted, then the tile's
    /// position on zoom `z`'s Hilbert curve (0 at the top-left tile, 1…4 for zoom 1's
    /// 0/0, 0/1, 1/1, 1/0). Nil outside zoom `z`'s grid or past `maxZoom`.
    package static func tileID(z: Int, x: Int64, y: Int64) -> UInt64? {
        guard (0...maxZoom).contains(z), x >= 0, y >= 0, x < Int64(1) << z, y < Int64(1) << z else { return nil }
        // 4^0 + 4^1 + … + 4^(z−1) tiles come before zoom z.
        let before = ((UInt64(1) << (2 * UInt64(z))) - 1) / 3
        let side = UInt64(1) << z
        var x = UInt64(x)
        var y = UInt64(y)
        var position: UInt64 = 0
        var half = side >> 1
        while half > 0 {
            let right: UInt64 = x & half != 0 ? 1 : 0
            let lower: UInt64 = y & half != 0 ? 1 : 0
            position += half * half * ((3 * right) ^ lower)
            // Turn the quadrant so the curve's sub-square starts where the whole one does.
            if lower == 0 {
                if right == 1 {
                    x = side - 1 - x
                    y = side - 1 - y
                }
                swap(&x, &y)
            }
            half >>= 1
        }
        return before + position
    }

    /// The tile `z/x/y` (XYZ rows) of `id`, the inverse of `tileID(z:x:y:)`: the zoom whose range
    /// holds the id, then the position on that zoom's Hilbert curve walked from the smallest
    /// quadrant out. Nil past `maxZoom`'s last id.
    package static func tile(id: UInt64) -> (z: Int, x: Int64, y: Int64)? {
        var before: UInt64 = 0
        for z in 0...maxZoom {
            let count = UInt64(1) << (2 * UInt64(z))
            guard id - before >= count else { return tile(z: z, position: id - before) }
            before += count
        }
        return nil
    }

    /// The tile at `position` on zoom `z`'s Hilbert curve.
    private static func tile(z: Int, position: UInt64) -> (z: Int, x: Int64, y: Int64) {
        var x: UInt64 = 0
        var y: UInt64 = 0
        var rest = position
        var size: UInt64 = 1
        while size < UInt64(1) << z {
            let right = 1 & (rest / 2)
            let lower = 1 & (rest ^ right)
            // Undo the turn `tileID` gave this quadrant's sub-square.
            if lower == 0 {
                if right == 1 {
                    x = size - 1 - x
                    y = size - 1 - y
                }
                swap(&x, &y)
            }
            x += size * right
            y += size * lower
            rest /= 4
            size *= 2
        }
        return (z, Int64(x), Int64(y))
    }

    /// What is wrong with bytes read as PMTiles (the header, a directory); the reader adds the file.
    package struct Malformed: Error, Equatable, CustomStringConvertible {
        package let reason: String
        package var description: String { reason }

        package init(reason: String) { self.reason = reason }
    }

    /// One directory entry: a run of `runLength` tiles from `tileID` on with the same bytes at
    /// `offset` (from the tile data section's start), or with `runLength` 0 a leaf directory at
    /// `offset` from the leaf directories section's start.
    package struct Entry: Equatable {
        package var tileID: UInt64
        package var offset: UInt64
        package var length: UInt64
        package var runLength: UInt64

        package init(tileID: UInt64, offset: UInt64, length: UInt64, runLength: UInt64) {
            self.tileID = tileID
            self.offset = offset
            self.length = length
            self.runLength = runLength
        }
    }

    /// A directory's bytes before compression: the entry count, then every entry's tile id as the
    /// difference to the previous one, run length, length, and offset + 1 (0 when it starts where
    /// the previous entry ends), each a varint.
    package static func directory(_ entries: [Entry]) -> Data {
        var bytes = Data()
        appendVarint(UInt64(entries.count), to: &bytes)
        var previousID: UInt64 = 0
        for entry in entries {
            appendVarint(entry.tileID - previousID, to: &bytes)
            previousID = entry.tileID
        }
        for entry in entries { appendVarint(entry.runLength, to: &bytes) }
        for entry in entries { appendVarint(entry.length, to: &bytes) }
        var end: UInt64 = 0
        for (index, entry) in entries.enumerated() {
            appendVarint(index > 0 && entry.offset == end ? 0 : entry.offset + 1, to: &bytes)
            end = entry.offset + entry.length
        }
        return bytes
    }

    /// The entry count a directory's bytes (after decompression) begin with, read before the
    /// entries so a reader can refuse a directory too large for it without decoding it.
    package static func entryCount(ofDirectory bytes: Data) throws(Malformed) -> UInt64 {
        var reader = VarintReader(bytes: bytes)
        return try reader.next("the entry count")
    }

    /// The entries of a directory's bytes (after decompression), the inverse of `directory(_:)`.
    /// Refused: a count the bytes cannot hold, a varint past the bytes or over 64 bits, ids past
    /// 64 bits, the first entry continuing a previous one (offset 0).
    package static func entries(ofDirectory bytes: Data) throws(Malformed) -> [Entry] {
        var reader = VarintReader(bytes: bytes)
        let count = try reader.next("the entry count")
        // Every entry takes at least four bytes (four varints), so a larger count is a lie.
        guard count <= UInt64(bytes.count / 4) else {
            throw Malformed(reason: "the directory claims \(count) entries in \(bytes.count) bytes")
        }
        var entries = [Entry](repeating: Entry(tileID: 0, offset: 0, length: 0, runLength: 0), count: Int(count))
        var id: UInt64 = 0
        for index in entries.indices {
            let (sum, overflow) = id.addingReportingOverflow(try reader.next("tile id \(index)"))
            guard !overflow else { throw Malformed(reason: "entry \(index)'s tile id is past 64 bits") }
            id = sum
            entries[index].tileID = id
        }
        for index in entries.indices { entries[index].runLength = try reader.next("run length \(index)") }
        for index in entries.indices { entries[index].length = try reader.next("length \(index)") }
        for index in entries.indices {
            let value = try reader.next("offset \(index)")
            if value > 0 {
                entries[index].offset = value - 1
            } else if index > 0 {
                let previous = entries[index - 1]
                let (end, overflow) = previous.offset.addingReportingOverflow(previous.length)
                guard !overflow else { throw Malformed(reason: "entry \(index)'s offset is past 64 bits") }
                entries[index].offset = end
            } else {
                throw Malformed(reason: "the first entry's offset is 0 (\"after the previous entry\") but no entry precedes it")
            }
        }
        return entries
    }

    /// Reads the varints of a directory in order.
    private struct VarintReader {
        let bytes: Data
        var index: Data.Index

        init(bytes: Data) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        /// The next varint; `what` names it in the error (made only then: a planet's directories
        /// hold tens of millions of varints, and every shard decodes them all).
        mutating func next(_ what: @autoclosure () -> String) throws(Malformed) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex {
                let byte = bytes[index]
                index += 1
                // The tenth byte holds bit 63 only.
                guard shift < 63 || byte <= 1 else { throw Malformed(reason: "\(what()) is a varint over 64 bits") }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw Malformed(reason: "the directory ends inside \(what())")
        }
    }

    /// `value` as a protobuf varint: seven bits a byte, low bits first, the high bit set on every
    /// byte but the last.
    package static func appendVarint(_ value: UInt64, to bytes: inout Data) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// The 127-byte header: where each section is, the counts, the compressions and tile type,
    /// the zooms, and the bounds and center as degrees × 10^7.
    package struct Header {
        package var rootOffset: UInt64 = 0
        package var rootLength: UInt64 = 0
        package var metadataOffset: UInt64 = 0
        package var metadataLength: UInt64 = 0
        package var leafDirectoriesOffset: UInt64 = 0
        package var leafDirectoriesLength: UInt64 = 0
        package var tileDataOffset: UInt64 = 0
        package var tileDataLength: UInt64 = 0
        package var addressedTiles: UInt64 = 0
        package var tileEntries: UInt64 = 0
        package var tileContents: UInt64 = 0
        package var clustered = true
        package var internalCompression = Compression.gzip
        package var tileCompression = Compression.none
        package var tileType = TileType.unknown
        package var minZoom: UInt8 = 0
        package var maxZoom: UInt8 = 0
        /// `[west, south, east, north]` in degrees.
        package var bounds: [Double] = [-180, -85.0511, 180, 85.0511]
        package var centerZoom: UInt8 = 0
        /// `[longitude, latitude]` in degrees.
        package var center: [Double] = [0, 0]

        /// The header's bytes: magic `PMTiles`, version 3, then the fields little-endian.
        package var bytes: Data {
            var bytes = Data("PMTiles".utf8)
            bytes.append(3)
            for value in [
                rootOffset, rootLength, metadataOffset, metadataLength, leafDirectoriesOffset, leafDirectoriesLength,
                tileDataOffset, tileDataLength, addressedTiles, tileEntries, tileContents,
            ] {
                Header.append(littleEndian: value, count: 8, to: &bytes)
            }
            bytes.append(contentsOf: [clustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue, tileType.rawValue])
            bytes.append(contentsOf: [minZoom, maxZoom])
            for degrees in [bounds[0], bounds[1], bounds[2], bounds[3]] { Header.append(position: degrees, to: &bytes) }
            bytes.append(centerZoom)
            for degrees in [center[0], center[1]] { Header.append(position: degrees, to: &bytes) }
            return bytes
        }

        /// A header with the defaults above, for a writer to fill in.
        package init() {}

        /// The header in the first 127 bytes of `bytes`, the inverse of `bytes`. Refused: fewer
        /// bytes, no `PMTiles` magic, a version other than 3, a compression or tile type byte the
        /// spec does not define.
        package init(parsing bytes: Data) throws(Malformed) {
            let bytes = [UInt8](bytes.prefix(headerLength))
            guard bytes.count == headerLength else {
                throw Malformed(reason: "the file is \(bytes.count) bytes, shorter than the \(headerLength)-byte header")
            }
            guard bytes[0..<7].elementsEqual("PMTiles".utf8) else { throw Malformed(reason: "no 'PMTiles' magic in its first 7 bytes") }
            guard bytes[7] == 3 else { throw Malformed(reason: "PMTiles version \(bytes[7]); mappack reads version 3") }
            func integer(_ at: Int, _ count: Int) -> UInt64 {
                (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
            }
            func degrees(_ at: Int) -> Double { Double(Int32(bitPattern: UInt32(integer(at, 4)))) / 10_000_000 }
            func compression(_ at: Int, _ what: String) throws(Malformed) -> Compression {
                guard let value = Compression(rawValue: bytes[at]) else {
                    throw Malformed(reason: "\(what) compression byte \(bytes[at]) is not 0-4")
                }
                return value
            }
            rootOffset = integer(8, 8)
            rootLength = integer(16, 8)
            metadataOffset = integer(24, 8)
            metadataLength = integer(32, 8)
            leafDirectoriesOffset = integer(40, 8)
            leafDirectoriesLength = integer(48, 8)
            tileDataOffset = integer(56, 8)
            tileDataLength = integer(64, 8)
            addressedTiles = integer(72, 8)
            tileEntries = integer(80, 8)
            tileContents = integer(88, 8)
            clustered = bytes[96] == 1
            internalCompression = try compression(97, "internal")
            tileCompression = try compression(98, "tile")
            guard let type = TileType(rawValue: bytes[99]) else { throw Malformed(reason: "tile type byte \(bytes[99]) is not 0-5") }
            tileType = type
            minZoom = bytes[100]
            maxZoom = bytes[101]
            bounds = [degrees(102), degrees(106), degrees(110), degrees(114)]
            centerZoom = bytes[118]
            center = [degrees(119), degrees(123)]
        }

        /// A longitude or latitude as the spec's little-endian int32 of degrees × 10^7.
        private static func append(position degrees: Double, to bytes: inout Data) {
            let scaled = Int32(clamping: Int64((degrees * 10_000_000).rounded()))
            append(littleEndian: UInt64(UInt32(bitPattern: scaled)), count: 4, to: &bytes)
        }

        /// The low `count` bytes of `value`, least significant first.
        private static func append(littleEndian value: UInt64, count: Int, to bytes: inout Data) {
            for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
        }
    }
}
