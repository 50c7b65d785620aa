import Foundation
import MapFormat

/// Where a tile output's regions lie, as its metadata tells a map: the union of the boxes of the
/// regions whose tiles it holds (`regions(_:holdingTilesOf:)`), and the point and zoom a map opens at. The point is inside a region, the largest by area: its
/// catalog `center` when that lies in its box, else the middle of its box. The zoom is the one at
/// which the bounds fit one 512 px tile, within the tiles' zooms. The `.mbtiles` metadata and the
/// `.pmtiles` header both take it, so the two say the same.
package struct TilesetExtent: Equatable {
    /// `[west, south, east, north]`; the whole web-mercator world when no region has a box.
    package let bounds: [Double]
    /// `[longitude, latitude]`.
    package let center: [Double]
    package let centerZoom: Int

    /// Web mercator's world, where no region says more.
    static let world: [Double] = [-180, -85.0511, 180, 85.0511]

    /// The extent of `regions` (every region whose tiles the output holds) for tiles from `minZoom`
    /// to `maxZoom`.
    package init(regions: [OutputRegion], minZoom: Int, maxZoom: Int) {
        let bounds = TileDatabases.union(regions.map(\.bbox)) ?? TilesetExtent.world
        self.bounds = bounds
        let boxed = regions.filter { $0.bbox?.count == 4 }.sorted { $0.id < $1.id }
        // The first of equal areas, in id order: the same recipe gives the same bytes.
        var largest: (region: OutputRegion, area: Double)?
        for region in boxed {
            let area = TilesetExtent.mercatorArea(region.bbox!)
            if area > largest?.area ?? -1 { largest = (region, area) }
        }
        if let (region, _) = largest {
            let box = region.bbox!
            if let given = region.center, given.count == 2, TilesetExtent.contains(box, longitude: given[1], latitude: given[0]) {
                center = [given[1], given[0]]
            } else {
                center = TilesetExtent.middle(of: box)
            }
        } else {
            center = TilesetExtent.middle(of: bounds)
        }
        centerZoom = min(max(TilesetExtent.fittingZoom(bounds), minZoom), max(minZoom, maxZoom))
    }

    /// The regions among `regions` whose tile databases `tiles` holds, in their order; all of them
    /// when none does. A parent included with a child excluded keeps its catalog box, which covers
    /// the child, but its own bundles hold no tiles there: only the regions that bring tiles say
    /// where the tiles are.
    package static func regions(_ regions: [OutputRegion], holdingTilesOf tiles: TileDatabases) -> [OutputRegion] {
        let holding = Set(tiles.sources.map(\.region.id))
        let found = regions.filter { holding.contains($0.id) }
        return found.isEmpty ? regions : found
    }

    /// The box's width in degrees of longitude (across the antimeridian when west is east of east).
    private static func width(_ box: [Double]) -> Double { box[0] <= box[2] ? box[2] - box[0] : box[2] + 360 - box[0] }

    /// Web mercator's y of `latitude`, 0 at the north edge of the world and 1 at the south.
    private static func mercatorY(_ latitude: Double) -> Double {
        let radians = min(max(latitude, world[1]), world[3]) * .pi / 180
        return (1 - log(tan(.pi / 4 + radians / 2)) / .pi) / 2
    }

    /// The share of the web-mercator world the box covers (what a map shows of it).
    private static func mercatorArea(_ box: [Double]) -> Double {
        width(box) / 360 * abs(mercatorY(box[1]) - mercatorY(box[3]))
    }

    /// The highest zoom at which the box fits one 512 px tile: at zoom z the world is 512·2^z pixels.
    static func fittingZoom(_ box: [Double]) -> Int {
        let span = max(width(box) / 360, abs(mercatorY(box[1]) - mercatorY(box[3])))
        guard span > 0 else { return PMTiles.maxZoom }
        return max(0, Int(floor(log2(1 / span))))
    }

    private static func contains(_ box: [Double], longitude: Double, latitude: Double) -> Bool {
        guard box[1] <= latitude, latitude <= box[3] else { return false }
        return box[0] <= box[2] ? (box[0] <= longitude && longitude <= box[2]) : (longitude >= box[0] || longitude <= box[2])
    }

    /// `[longitude, latitude]` of the box's middle (across the antimeridian too).
    private static func middle(of box: [Double]) -> [Double] {
        var longitude = box[0] + width(box) / 2
        if longitude > 180 { longitude -= 360 }
        return [longitude, (box[1] + box[3]) / 2]
    }
}
