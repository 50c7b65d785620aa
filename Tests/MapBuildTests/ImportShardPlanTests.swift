import MapFormat
import Testing

@testable import MapBuild

/// `ImportShardPlan.deal`: regions dealt to shards by their tiles, the same way in every shard.
@Suite struct ImportShardPlanTests {
    static func ids(_ names: [String]) -> [RegionID] { names.map { RegionID($0) } }

    @Test func dealsLargestFirstToTheLightestShard() throws {
        // 9 alone; 5 + 4 and 6 + 3 even out beside it.
        let ids = Self.ids(["r/a", "r/b", "r/c", "r/d", "r/e"])
        let shardOf = ImportShardPlan.deal(loads: [3, 9, 4, 6, 5], ids: ids, parents: [nil, nil, nil, nil, nil], shards: 3)
        #expect(shardOf == [1, 0, 2, 1, 2])
    }

    @Test func equalLoadsGoByIdWhateverTheFileOrder() throws {
        let shardOf = ImportShardPlan.deal(loads: [7, 7, 7], ids: Self.ids(["r/c", "r/a", "r/b"]), parents: [nil, nil, nil], shards: 2)
        // r/a to shard 0, r/b to shard 1, then r/c to the lower number of two equal shards.
        #expect(shardOf == [0, 0, 1])
    }

    @Test func aParentWithoutTilesFollowsItsHeaviestChild() throws {
        // europe heads nothing; europe/ru is its heaviest child; europe/xx has no children and no tiles.
        let ids = Self.ids(["europe", "europe/ru", "europe/no", "europe/fi", "europe/xx"])
        let shardOf = ImportShardPlan.deal(loads: [0, 80, 10, 9, 0], ids: ids, parents: [nil, 0, 0, 0, 0], shards: 3)
        #expect(shardOf[1] == 0 && shardOf[2] == 1 && shardOf[3] == 2)
        #expect(shardOf[0] == shardOf[1], "\(shardOf)")
        // A tileless leaf goes to the lightest shard.
        #expect(shardOf[4] == 2, "\(shardOf)")
    }

    @Test func oneShardTakesEverything() throws {
        let shardOf = ImportShardPlan.deal(loads: [5, 0, 2], ids: Self.ids(["a", "a/b", "a/c"]), parents: [nil, 0, 0], shards: 1)
        #expect(shardOf == [0, 0, 0])
    }
}
