import Foundation

/// The tile `mappack serve` answers at `/coverage/{z}/{x}/{y}.pbf` wherever the image holds a tile:
/// a Mapbox Vector Tile 2.1 with one layer, `coverage`, whose one polygon covers the whole tile (and
/// a little beyond, so neighbours meet without a seam). The style paints it under the image's own
/// layers, so the map tells an area the image holds (water where no land polygon lies) from one it
/// does not (the background, "not installed"), whatever the tiles themselves carry. Where the image
/// has no tile the answer is 404, as for the tile itself.
enum CoverageTile {
    /// The layer's name in the tile (the style's `source-layer`).
    static let layer = "coverage"

    /// The tile's bytes: the same for every address, made once.
    static let bytes: Data = {
        let extent: Int64 = 4096
        let buffer: Int64 = 64
        let side = extent + 2 * buffer
        // One ring, clockwise in tile coordinates (y down), as MVT wants an outer ring: MoveTo the
        // top left corner, LineTo the other three, ClosePath.
        var geometry: [UInt64] = [command(1, count: 1), zigzag(-buffer), zigzag(-buffer), command(2, count: 3)]
        geometry += [zigzag(side), zigzag(0), zigzag(0), zigzag(side), zigzag(-side), zigzag(0), command(7, count: 1)]
        var packed = Data()
        for value in geometry { varint(value, into: &packed) }

        var feature = Data()
        field(3, varint: 3, into: &feature)  // type: POLYGON
        field(4, bytes: packed, into: &feature)  // geometry
        var layer = Data()
        field(15, varint: 2, into: &layer)  // version
        field(1, bytes: Data(CoverageTile.layer.utf8), into: &layer)  // name
        field(2, bytes: feature, into: &layer)  // features
        field(5, varint: UInt64(extent), into: &layer)  // extent
        var tile = Data()
        field(3, bytes: layer, into: &tile)  // layers
        return tile
    }()

    /// A geometry command integer: the command id in the low 3 bits, the count above.
    private static func command(_ id: UInt64, count: UInt64) -> UInt64 { id | count << 3 }

    /// A signed parameter as the geometry encodes it (zigzag).
    private static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    /// A protobuf base-128 varint.
    private static func varint(_ value: UInt64, into data: inout Data) {
        var rest = value
        while rest >= 0x80 {
            data.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        data.append(UInt8(rest))
    }

    /// A protobuf field of wire type 0 (varint).
    private static func field(_ number: UInt64, varint value: UInt64, into data: inout Data) {
        varint(number << 3, into: &data)
        varint(value, into: &data)
    }

    /// A protobuf field of wire type 2 (length-delimited).
    private static func field(_ number: UInt64, bytes: Data, into data: inout Data) {
        varint(number << 3 | 2, into: &data)
        varint(UInt64(bytes.count), into: &data)
        data.append(bytes)
    }
}
