import Foundation
import MapFormat
import Testing

@testable import MapBuild

/// The bounds and centre the `.mbtiles` metadata and the `.pmtiles` header take (issue 42 item 5).
@Suite struct TilesetExtentTests {
    static func region(_ id: String, bbox: [Double]?, center: [Double]? = nil) -> OutputRegion {
        OutputRegion(id: RegionID(id), broughtBy: RegionID(id), name: id, bbox: bbox, center: center, files: [])
    }

    // Austria and Liechtenstein, as the real-world catalog has them.
    static let austria = region("europe/at", bbox: [9.521155, 46.378643, 17.148338, 49.009774], center: [47.518859, 14.130515])
    static let liechtenstein = region("europe/li", bbox: [9.475886, 47.0524, 9.615723, 47.262801], center: [47.111405, 9.559439])

    @Test func boundsAreTheUnionAndTheCentreTheLargestRegionsCatalogCentre() {
        let extent = TilesetExtent(regions: [Self.liechtenstein, Self.austria], minZoom: 6, maxZoom: 7)
        #expect(extent.bounds == [9.475886, 46.378643, 17.148338, 49.009774])
        #expect(extent.center == [14.130515, 47.518859])
        // 7.7° of longitude fit one 512 px tile at zoom 5; the tiles start at 6.
        #expect(TilesetExtent.fittingZoom(extent.bounds) == 5)
        #expect(extent.centerZoom == 6)
    }

    @Test func theZoomIsTheOneAtWhichTheBoundsFitOneTileWithinTheTilesZooms() {
        #expect(TilesetExtent(regions: [Self.liechtenstein], minZoom: 0, maxZoom: 14).centerZoom == 10)
        #expect(TilesetExtent(regions: [Self.liechtenstein], minZoom: 0, maxZoom: 9).centerZoom == 9)
        #expect(TilesetExtent(regions: [Self.austria], minZoom: 0, maxZoom: 14).centerZoom == 5)
        let world = Self.region("world", bbox: [-180, -85.0511, 180, 85.0511])
        #expect(TilesetExtent(regions: [world], minZoom: 0, maxZoom: 5).centerZoom == 0)
    }

    @Test func aCentreOutsideItsRegionsBoxGivesWayToTheBoxsMiddle() {
        let misplaced = Self.region("europe/li", bbox: [9.475886, 47.0524, 9.615723, 47.262801], center: [0, 0])
        let extent = TilesetExtent(regions: [misplaced], minZoom: 0, maxZoom: 14)
        #expect(abs(extent.center[0] - 9.5458045) < 1e-9 && abs(extent.center[1] - 47.1576005) < 1e-9)
    }

    @Test func aBoxAcrossTheAntimeridianCentresOnItsOwnMiddle() {
        let fiji = Self.region("oceania/fj", bbox: [177, -19, -179, -16])
        let extent = TilesetExtent(regions: [fiji], minZoom: 0, maxZoom: 14)
        #expect(extent.bounds == [-180, -19, 180, -16])
        #expect(extent.center == [179, -17.5])
    }

    @Test func regionsWithoutBoxesGiveTheWholeWorld() {
        let extent = TilesetExtent(regions: [Self.region("x", bbox: nil)], minZoom: 2, maxZoom: 4)
        #expect(extent.bounds == TilesetExtent.world)
        #expect(extent.center == [0, 0])
        #expect(extent.centerZoom == 2)
    }
}
