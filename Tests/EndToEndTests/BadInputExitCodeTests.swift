import Foundation
import TestSupport
import Testing

/// Bad input exits 2 in every verb, failed work 1 (issue 32 item 6): a region id the store does not
/// hold, or a store verb that needs a catalog when none is known, is the caller's to fix. Global
/// options (`--json`, `-q`, `-v`) work before the verb as after it.
@Suite struct BadInputExitCodeTests {
    @Test func storeVerbsExitTwoOnAnUnknownRegionOrWithoutACatalog() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let device = ["--storage", world.folder.join("device/maps"), "--cache", world.folder.join("device/cache")]
        let install = try Tool.mappack(["store", "install", "--image", world.out + "/fixture-1.0"] + device)
        #expect(install.status == 0, "\(install.stderr)")

        let delete = try Tool.mappack(["store", "delete", "europe/xx"] + device)
        #expect(delete.status == 2, "\(delete.status): \(delete.stderr)")
        #expect(delete.stderr.contains("europe/xx"), "\(delete.stderr)")

        // No catalog was given to this store yet: each verb that needs one says how to give it.
        for verb in [["available"], ["update"], ["download", "europe/ch/zh"]] {
            let run = try Tool.mappack(["store"] + verb + device)
            #expect(run.status == 2, "store \(verb[0]): \(run.status): \(run.stderr)")
            #expect(run.stderr.contains("--catalog"), "store \(verb[0]): \(run.stderr)")
            let json = try Tool.mappack(["store"] + verb + device + ["--json"])
            #expect(json.status == 2 && json.stdout.contains("\"event\":\"failed\""), "store \(verb[0]) --json: \(json.stdout)")
        }

        // A region the catalog does not have, once a catalog is known.
        let download = try Tool.mappack(["store", "download", "europe/xx", "--catalog", world.catalog] + device)
        #expect(download.status == 2, "\(download.status): \(download.stderr)")

        // A folder to move to that is not empty.
        let occupied = world.folder.join("occupied")
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: occupied + "/file"))
        let move = try Tool.mappack(["store", "move", "--to", occupied] + device)
        #expect(move.status == 2, "\(move.status): \(move.stderr)")
        #expect(move.stderr.contains(occupied), "\(move.stderr)")
    }

    @Test func globalOptionsWorkBeforeTheVerb() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let environment = ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_PROGRESS_INTERVAL": "0.01"]
        let quiet = try Tool.mappack(["-q", "build", recipe, "--cache", world.cache, "--out", world.out], environment: environment)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.status): \(quiet.stderr)")
        #expect(quiet.stdout.contains("built fixture"), "\(quiet.stdout)")

        let json = try Tool.mappack(
            ["--json", "build", recipe, "--cache", world.cache, "--out", world.folder.join("json")], environment: environment)
        #expect(json.status == 0 && json.stderr.isEmpty, "\(json.status): \(json.stderr)")
        #expect(json.stdout.contains("\"event\":\"done\""), "\(json.stdout)")

        // A failure before the verb's work starts is still one JSON line, and bad input.
        let missing = try Tool.mappack(["--json", "-v", "build", world.folder.join("missing.yaml")])
        #expect(missing.status == 2, "\(missing.status): \(missing.stderr)")
        #expect(missing.stdout.contains("\"event\":\"failed\""), "\(missing.stdout)")
        #expect(!missing.stderr.contains("unknown command"), "\(missing.stderr)")

        let grouped = try Tool.mappack(["-qv", "--version"])
        #expect(grouped.status == 0 && grouped.stdout.contains("mappack"), "\(grouped.stderr)")
        let alone = try Tool.mappack(["-q"])
        #expect(alone.status == 2, "\(alone.stderr)")
    }
}
