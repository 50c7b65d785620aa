import Foundation
import MapFormat
import TestSupport
import Testing

/// `Examples/StoreDemo`, the first-start flow as an app writes it, run as a program against nginx and a
/// demo world of two versions.
@Suite struct StoreDemoTests {
    @Test func storeDemoInstallsListsDownloadsWithPauseAndUpdates() throws {
        let folder = TemporaryFolder("store-demo")
        let old = try DemoWorldFixture.publish(in: folder, only: "europe/ch", scale: 0.2, mapVersion: "2026.11.0")
        try DemoWorldFixture.publish(in: folder, only: "europe/ch", scale: 0.2, mapVersion: "2026.12.0", baseVersion: "2026.11.0")
        let recipe = """
            name: ch
            catalog: \(old)
            regions:
              include: [europe/ch]
              exclude: [europe/ch/ge]
            cacheSeed:
              include: [europe/ch]
              maxBytes: 64 KiB
            output:
              formats: [directory, tar.zst]

            """
        try Data(recipe.utf8).write(to: URL(fileURLWithPath: folder.join("ch.yaml")))
        let build = try Tool.mappack(["build", folder.join("ch.yaml"), "--cache", folder.join("cache"), "--out", folder.join("out")])
        try #require(build.status == 0, "\(build.stderr)")
        // Slow enough that the demo's pause lands while Geneva's bundles are still arriving.
        let nginx = try NginxServer(root: folder.path, limitRate: "4k")
        defer { nginx.stop() }

        let run = try Tool.run(
            "StoreDemo",
            [
                "--image", folder.join("out/ch-2026.11.0.tar.zst"), "--storage", folder.join("device/maps"), "--cache", folder.join("device/cache"),
                "--catalog", nginx.baseURL.absoluteString + "cat-2026.11.0/catalog.json", "--download", "europe/ch/ge",
                "--update-catalog", nginx.baseURL.absoluteString + "cat-2026.12.0/catalog.json",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)

        // What the demo lists for Geneva, computed here from the catalog and the image's block size.
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: old)))
        let manifest = try ManifestReader.read(
            Data(contentsOf: URL(fileURLWithPath: folder.join("out/ch-2026.11.0/manifest.json"))), file: "manifest.json")
        let geneva = try #require(catalog.regions.first { $0.id == "europe/ch/ge" })
        // Bundles the image already brought (shared with installed regions) are not downloaded again.
        let shipped = Set(manifest.bundles.map(\.digest))
        let download = geneva.bundles.filter { !shipped.contains($0) }.reduce(Int64(0)) { $0 + catalog.bundles[$1]!.size }
        let onDisk = try geneva.bundles.reduce(Int64(0)) { $0 + (try #require(catalog.bundles[$1]!.sizeOnDisk(blockSize: manifest.blockSize))) }
        let offered = try #require(lines.first { $0.hasPrefix("europe/ch/ge ") }, "\(run.stdout)")
        #expect(offered.contains("download \(ByteCount.format(download))") && offered.contains("on disk \(ByteCount.format(onDisk))"), "\(offered)")
        #expect(offered.hasSuffix("available"), "\(offered)")

        #expect(lines.contains("status: ok") && lines.contains("map version: 2026.11.0"), "\(run.stdout)")
        #expect(lines.contains { $0.hasPrefix("installed: europe/ch/zh ") })
        let paused = try #require(lines.first { $0.hasPrefix("paused: europe/ch/ge at ") }, "\(run.stdout)")
        let counts = paused.split(separator: " ")[3].split(separator: "/").compactMap { Int64($0) }
        #expect(counts.count == 2 && counts[0] > 0 && counts[0] < counts[1], "\(paused)")
        for expected in [
            "resume: europe/ch/ge", "downloaded: europe/ch/ge", "event: europe/ch/ge paused", "event: download finished europe/ch/ge",
            "event: update available 2026.12.0", "event: update started 2026.11.0 -> 2026.12.0", "updated: 2026.12.0",
            "event: update finished 2026.12.0",
        ] {
            #expect(lines.contains(expected), "missing '\(expected)' in:\n\(run.stdout)")
        }
        #expect(lines.contains { $0.hasPrefix("check: oldData 2026.11.0 -> 2026.12.0, ") }, "\(run.stdout)")
        // The check moved the catalog the next update reads, not the one downloads resolve against; the update
        // made its catalog both. (Event lines come from the consumer task and interleave: left out here.)
        let oldCatalog = nginx.baseURL.absoluteString + "cat-2026.11.0/catalog.json"
        let newCatalog = nginx.baseURL.absoluteString + "cat-2026.12.0/catalog.json"
        let flow = lines.filter { !$0.hasPrefix("event: ") }
        #expect(
            Array(flow.drop { !$0.hasPrefix("check: ") }.dropFirst().prefix(2)) == [
                "catalog installed: \(oldCatalog)", "catalog checked: \(newCatalog)",
            ], "\(run.stdout)")
        #expect(
            Array(flow.drop { !$0.hasPrefix("updated: ") }.dropFirst().prefix(2)) == [
                "catalog installed: \(newCatalog)", "catalog checked: \(newCatalog)",
            ], "\(run.stdout)")
        // The update kept the image's cache seed entries of unchanged regions, dropped the others, and said so.
        let cacheLine = try #require(lines.first { $0.hasPrefix("event: map cache for 2026.12.0: ") }, "\(run.stdout)")
        #expect(!cacheLine.hasSuffix(": 0 entries kept (unchanged), 0 removed"), "\(cacheLine)")
        // The states at the end: Geneva installed beside the image's regions, all at the new version.
        let final = lines.drop { $0 != "== regions" }
        #expect(final.contains { $0.hasPrefix("installed: europe/ch/ge ") && $0.hasSuffix(" completed") }, "\(run.stdout)")
        #expect(final.filter { $0.hasPrefix("installed: ") }.count == manifest.regions.count + 1, "\(run.stdout)")
        // One name for Geneva, on offer and installed.
        let installedGeneva = try #require(final.first { $0.hasPrefix("installed: europe/ch/ge ") })
        #expect(
            installedGeneva.components(separatedBy: "  ")[1] == offered.components(separatedBy: "  ")[1], "\(offered) / \(installedGeneva)")
        // The demo's own full check, then the CLI's: the store the demo left verifies.
        #expect(lines.contains("verify: ok"), "\(run.stdout)")
        let verify = try Tool.mappack(["verify", folder.join("device/maps")])
        #expect(verify.status == 0, "\(verify.stderr)")
    }

    @Test func storeDemoRefusesAMissingOptionWithExitCode2() throws {
        let run = try Tool.run("StoreDemo", ["--image", "/nonexistent"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--storage is required") && run.stderr.contains("usage: StoreDemo"), "\(run.stderr)")
    }
}
