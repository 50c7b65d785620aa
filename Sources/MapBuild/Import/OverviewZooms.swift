/// `mappack import --overview-maxzoom`: the zooms of the overview bundle an import writes for each
/// region with children and each root (`ImportOverview`).
public enum OverviewZooms: Sendable, Equatable {
    /// Zooms 0 to `standardMaxZoom`, or to the tileset's highest zoom when it ends lower.
    case standard
    /// Zooms 0 to this one, which the tileset must reach.
    case upTo(Int)
    /// No overview bundles (`--overview-maxzoom none`): the source folder an import wrote before
    /// overviews. Not named `none`, which reads as `Optional.none` wherever the type is optional.
    case off

    /// Zoom 5: a country's low zooms in tens of tiles, a continent's in a few hundred; enough for a
    /// device to show where it is before it has the region's own data.
    public static let standardMaxZoom = 5

    /// The highest zoom for a tileset whose zooms end at `tilesetMaxZoom` (nil: no tiles), or nil
    /// for no overviews; refuses a zoom the tileset does not reach.
    func maxZoom(tilesetMaxZoom: Int?) throws(ImportError) -> Int? {
        guard let tilesetMaxZoom else { return nil }
        switch self {
        case .standard:
            return min(Self.standardMaxZoom, tilesetMaxZoom)
        case .upTo(let zoom):
            guard (0...tilesetMaxZoom).contains(zoom) else {
                throw .badShards(
                    reason: "--overview-maxzoom \(zoom): the tileset's zooms end at \(tilesetMaxZoom); give 0 to \(tilesetMaxZoom), or none")
            }
            return zoom
        case .off:
            return nil
        }
    }
}
