import Foundation
import MapFormat
import MapIO

/// `shard.json` of a shard output (`mappack build --shard I/N`): which build it belongs to and the
/// files of the bundles it unpacked (format `mappack-shard/1`). Beside it: `recipe.yaml` and
/// `catalog.json` (the exact bytes the shard was built from), `store/` and `seed/<hex>/`.
struct ShardRecord: Codable, Sendable {
    static let formatTag = FormatTag(name: "mappack-shard", major: 1)
    static let fileName = "shard.json"

    struct Bundle: Codable, Sendable {
        var digest: BundleDigest
        var forStore: Bool
        var files: [File]
    }

    struct File: Codable, Sendable {
        var path: String
        var size: Int64
        var sha256: SHA256Digest
    }

    var format: String
    var index: Int
    var count: Int
    var recipeName: String
    var recipeSHA256: SHA256Digest
    var catalogSHA256: SHA256Digest
    var mapVersion: MapVersion
    var mappackVersion: String
    var built: String
    var bundles: [Bundle]
}

/// How a build's bundles are split between shards: largest first, each to the shard with the
/// fewest bytes so far (lowest index on ties), so shards are balanced by bytes and every runner
/// computes the same split.
enum ShardAssignment {
    static func bundles(_ bundles: [BuildPlan.PlannedBundle], index: Int, count: Int) -> [BuildPlan.PlannedBundle] {
        var load = [Int64](repeating: 0, count: count)
        var chosen: [BuildPlan.PlannedBundle] = []
        let ordered = bundles.sorted { $0.info.size != $1.info.size ? $0.info.size > $1.info.size : $0.digest < $1.digest }
        for bundle in ordered {
            let target = load.indices.min { load[$0] != load[$1] ? load[$0] < load[$1] : $0 < $1 }!
            load[target] += bundle.info.size
            if target == index - 1 { chosen.append(bundle) }
        }
        return chosen
    }
}

/// Why shards cannot be merged; bad input, exit code 2.
package enum MergeError: Error, Sendable, CustomStringConvertible {
    case notAShard(path: String, reason: String)
    case mismatch(path: String, field: String, expected: String, found: String)
    case missingShard(index: Int, count: Int)
    case duplicateShard(index: Int, paths: [String])
    case incomplete(missing: [BundleDigest])
    case damaged(path: String, file: String)

    package var description: String {
        switch self {
        case .notAShard(let path, let reason): "\(path): not a mappack shard: \(reason)"
        case .mismatch(let path, let field, let expected, let found):
            "\(path): shard is from another build (\(field) \(found), the other shards have \(expected)); merge shards of one recipe, catalog and mappack version"
        case .missingShard(let index, let count): "shard \(index)/\(count) is missing; give all \(count) shards"
        case .duplicateShard(let index, let paths): "shard \(index) given twice: \(paths.joined(separator: ", "))"
        case .incomplete(let missing):
            "the shards lack \(missing.count) bundle(s) of the plan, e.g. \(missing[0]); rebuild the shards with one recipe"
        case .damaged(let path, let file): "\(path): file \(file) does not match its shard record; rebuild that shard"
        }
    }
}
