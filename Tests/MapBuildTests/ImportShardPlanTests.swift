import MapFormat
import Testing

@testable import MapBuild

/// `ImportShardPlan`: the runs of the tile order each shard takes, and the regions whose places it
/// writes, the same in every shard.
@Suite struct ImportShardPlanTests {
    static func ids(_ names: [String]) -> [RegionID] { names.map { RegionID($0) } }

    @Test(arguments: [(10, 4), (97_898, 4), (3, 4), (0, 3), (1_000_003, 7), (5, 1)])
    func runsCoverEveryPositionOnceAndDifferByOneAtMost(tiles: Int, shards: Int) {
        let runs = (0..<shards).map { ImportShardPlan.share(shard: $0, of: shards, tiles: tiles) }
        #expect(runs.first?.lowerBound == 0 && runs.last?.upperBound == tiles, "\(runs)")
        for index in runs.indices.dropFirst() { #expect(runs[index].lowerBound == runs[index - 1].upperBound, "\(runs)") }
        let counts = runs.map(\.count)
        #expect(counts.max()! - counts.min()! <= 1, "\(counts)")
    }

    @Test func searchDatabasesAreDealtInIdOrderWhateverTheFileOrder() {
        let ids = Self.ids(["r/c", "r", "r/a", "r/b", "r/d"])
        #expect(ImportShardPlan.searchShards(ids: ids, shards: 2) == [1, 0, 1, 0, 0])
        #expect(ImportShardPlan.searchShards(ids: ids, shards: 1) == [0, 0, 0, 0, 0])
    }
}
