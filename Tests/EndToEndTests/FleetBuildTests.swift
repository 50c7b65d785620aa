import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@Suite struct RemoteCacheTests {
    func events(_ result: Tool.Result) -> [[String: Any]] {
        result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func secondRunnerGetsEverythingFromTheRemoteCache() throws {
        let world = try ServedWorld()
        let origin = try NginxServer(root: world.published)
        let remoteRoot = world.folder.join("remote")
        try FileManager.default.createDirectory(atPath: remoteRoot, withIntermediateDirectories: true)
        let remote = try NginxServer(root: remoteRoot, webdav: true)
        let recipe = try world.recipe(catalog: origin.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let remoteURL = remote.baseURL.appendingPathComponent("mappack").absoluteString
        let first = try world.build(recipe, cache: "runner-1", out: "one", extra: ["--remote-cache", remoteURL, "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let uploaded = events(first).filter { $0["event"] as? String == "remote-uploaded" }.count
        let fetched = events(first).filter { $0["event"] as? String == "bundle-verified" }.count
        #expect(uploaded == fetched && fetched > 50)
        let originBefore = origin.bytesSent(prefix: "/bundles/")

        let second = try world.build(recipe, cache: "runner-2", out: "two", extra: ["--remote-cache", remoteURL, "--json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(origin.bytesSent(prefix: "/bundles/") == originBefore)
        #expect(events(second).filter { $0["event"] as? String == "remote-hit" }.count == fetched)
        #expect(try world.same("one", "two"))
    }

    @Test func poisonedRemoteEntryIsRejectedAndFetchedFromTheOrigin() throws {
        let world = try ServedWorld()
        let origin = try NginxServer(root: world.published)
        let remoteRoot = world.folder.join("remote")
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: world.published + "/catalog.json")))
        // Seed the remote with every bundle, one of them with a flipped byte.
        try FileManager.default.createDirectory(atPath: remoteRoot + "/mappack/cas", withIntermediateDirectories: true)
        let poisoned = catalog.bundles.keys.sorted()[0]
        for (digest, info) in catalog.bundles {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: world.published + "/" + info.url))
            if digest == poisoned { bytes[bytes.count / 2] ^= 0x55 }
            try bytes.write(to: URL(fileURLWithPath: remoteRoot + "/mappack/cas/" + digest.hex))
        }
        let remote = try NginxServer(root: remoteRoot, webdav: true)
        let recipe = try world.recipe(catalog: origin.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let result = try world.build(
            recipe, cache: "c", out: "out",
            extra: ["--remote-cache", remote.baseURL.appendingPathComponent("mappack").absoluteString, "--remote-cache-readonly", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rejected = events(result).filter { $0["event"] as? String == "remote-rejected" }
        #expect(rejected.count == 1)
        #expect((rejected.first?["url"] as? String)?.hasSuffix("/cas/" + poisoned.hex) == true)
        #expect(origin.bytesSent(prefix: "/bundles/") == Int(catalog.bundles[poisoned]!.size))
        #expect(try Tool.mappack(["verify", world.folder.join("out/net-2026.11.0")]).status == 0)
        // Read-only: nothing was uploaded to repair the entry.
        #expect(!events(result).contains { $0["event"] as? String == "remote-uploaded" })
    }

    @Test(arguments: ["down", "500"])
    func unavailableRemoteCacheFallsBackToTheOrigin(_ failure: String) throws {
        let world = try ServedWorld()
        let origin = try NginxServer(root: world.published)
        let faults = try FaultServer(root: world.folder.join("src"))
        let remoteURL = failure == "down" ? "http://127.0.0.1:9/cache" : faults.url("cache", fault: "status", ["code": "500"]).absoluteString
        let recipe = try world.recipe(catalog: origin.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let result = try world.build(recipe, cache: "c", out: "out", extra: ["--remote-cache", remoteURL])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Tool.mappack(["verify", world.folder.join("out/net-2026.11.0")]).status == 0)
    }
}

@Suite struct ShardTests {
    @Test func threeShardsMergeIntoTheSingleRunnerImage() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let single = try world.build(recipe, cache: "c0", out: "single")
        #expect(single.status == 0, "\(single.stderr)")
        var shards: [String] = []
        for index in 1...3 {
            let result = try world.build(recipe, cache: "c\(index)", out: "shards", extra: ["--shard", "\(index)/3"])
            #expect(result.status == 0, "\(result.stderr)")
            shards.append(world.folder.join("shards/net-2026.11.0.shard-\(index)-of-3"))
        }
        // Balanced by bytes: no shard holds more than half of all bundle bytes.
        let sizes = try shards.map { shard in
            try DirectoryWalker.walkSize(shard + "/store")
        }
        #expect(sizes.allSatisfy { $0 > 0 })
        let merged = try Tool.mappack(["merge"] + shards + ["--out", world.folder.join("merged")])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try world.same("single", "merged"))

        let missing = try Tool.mappack(["merge", shards[0], shards[2], "--out", world.folder.join("bad")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("shard 2/3 is missing"), "\(missing.stderr)")
    }

    @Test func shardFromAnotherRecipeIsRefused() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        #expect(try world.build(recipe, cache: "c", out: "a", extra: ["--shard", "1/2"]).status == 0)
        let other = world.folder.join("other.yaml")
        try Data(
            "name: net\ncatalog: www/catalog.json\nregions:\n  include: [europe/ch]\n  exclude: [europe/ch/zh]\noutput:\n  formats: [directory, tar.zst]\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: other))
        #expect(try world.build(other, cache: "c", out: "b", extra: ["--shard", "2/2"]).status == 0)
        let result = try Tool.mappack([
            "merge", world.folder.join("a/net-2026.11.0.shard-1-of-2"), world.folder.join("b/net-2026.11.0.shard-2-of-2"), "--out",
            world.folder.join("m"),
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("b/net-2026.11.0.shard-2-of-2") && result.stderr.contains("another build"), "\(result.stderr)")
    }
}

extension DirectoryWalker {
    /// Total bytes of regular files under `root`.
    static func walkSize(_ root: String) throws -> Int64 {
        try walk(root).filter(\.isRegular).reduce(0) { $0 + $1.size }
    }
}
