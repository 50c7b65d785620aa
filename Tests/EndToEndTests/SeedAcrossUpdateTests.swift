import Foundation
import TestSupport
import Testing

/// Issue 42: a device installed from an image keeps its preinstalled cache across its first
/// update when the update leaves the seed's regions alone. Such a store has no kept catalog (it
/// never downloaded), and the seed's world overview is no installed region, so only the seed's own
/// record of its regions' bundles (`meta.bundles`) tells that those entries are still current.
@Suite struct SeedAcrossUpdateTests {
    @Test func theFirstUpdateOfAnImageInstallKeepsTheSeedsUnchangedEntries() throws {
        let folder = TemporaryFolder("seed-update")
        for version in ["2026.11.0", "2026.12.0"] {
            let made = try Tool.run(
                Tool.path("demo-world"),
                [
                    "--out", folder.join("src-\(version)"), "--only", "europe/ch,europe/li", "--scale", "0.02", "--map-version", version,
                    "--base-version", "2026.11.0", "--change-fraction", "0.3",
                ])
            try #require(made.status == 0, "\(made.stderr)")
            let published = try Tool.mappack(["publish", folder.join("src-\(version)"), "--out", folder.join("served/cat-\(version)")])
            try #require(published.status == 0, "\(published.stderr)")
        }
        let recipe = """
            name: pc
            catalog: \(folder.join("served/cat-2026.11.0/catalog.json"))
            mapVersion: 2026.11.0
            regions:
              include: [europe/ch]
            cacheSeed:
              include: [world]
              maxBytes: 64 MiB
            output:
              formats: [directory]

            """
        try Data(recipe.utf8).write(to: URL(fileURLWithPath: folder.join("pc.yaml")))
        let build = try Tool.mappack(["build", folder.join("pc.yaml"), "--cache", folder.join("cache"), "--out", folder.join("out")])
        try #require(build.status == 0, "\(build.stderr)")
        let store = ["--storage", folder.join("device/maps"), "--cache", folder.join("device/cache")]
        let install = try Tool.mappack(["store", "install", "--image", folder.join("out/pc-2026.11.0")] + store)
        try #require(install.status == 0, "\(install.stderr)")
        let seeded = try Tool.mappack(["store", "cache", "size"] + store)
        let entries = try #require(Int(seeded.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").dropLast().last ?? ""))
        try #require(entries > 0, "\(seeded.stdout)")

        let update = try Tool.mappack(["store", "update", "--catalog", folder.join("served/cat-2026.12.0/catalog.json")] + store)
        try #require(update.status == 0, "\(update.stderr)")
        // The world's overview bundle is the same in both versions: every seed entry stays.
        #expect(update.stdout.contains("map cache: \(entries) of \(entries) entries kept"), "\(update.stdout)")
        let after = try Tool.mappack(["store", "cache", "size"] + store)
        #expect(after.stdout.hasSuffix("\(entries) entries\n"), "\(after.stdout)")
    }
}
