import Foundation
import TestSupport
import Testing

/// Issue 32 item 8: messages say what happened, where, and what to do — through the real binary.
@Suite struct MessageTests {
    @Test func storeRepairSaysWhatItFoundAndStatusAdvisesARepairThatWorks() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let storage = world.folder.join("device/maps")
        let cache = world.folder.join("device/cache")
        let device = ["--storage", storage, "--cache", cache]
        let install = try Tool.mappack(["store", "install", "--image", world.out + "/fixture-1.0.tar.zst"] + device)
        #expect(install.status == 0, "\(install.stderr)")
        let damaged = storage + "/store/regions/europe/ch/zh/search.db"
        // No catalog known: only the image can give the file back.
        try FileManager.default.removeItem(atPath: damaged)
        let status = try Tool.mappack(["store", "status"] + device)
        #expect(status.status == 1)
        #expect(status.stdout.hasPrefix("corrupted: "), "\(status.stdout)")
        #expect(status.stderr.contains(": mappack store repair --image IMAGE --storage "), "\(status.stderr)")
        let repair = try Tool.mappack(["store", "repair", "--image", world.out + "/fixture-1.0"] + device)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("(was corrupted)"), "\(repair.stdout)")
        #expect(try Tool.mappack(["store", "status"] + device).status == 0)
        // With the catalog known, a plain repair fetches the file again, and status says so.
        let download = try Tool.mappack(["store", "download", "europe/li", "--catalog", world.catalog] + device)
        #expect(download.status == 0, "\(download.stderr)")
        try FileManager.default.removeItem(atPath: damaged)
        let again = try Tool.mappack(["store", "status"] + device)
        #expect(again.stderr.contains(": mappack store repair --storage "), "\(again.stderr)")
        let plain = try Tool.mappack(["store", "repair"] + device)
        #expect(plain.status == 0 && plain.stdout.contains("(was corrupted)"), "\(plain.stdout)\(plain.stderr)")
        #expect(try Tool.mappack(["store", "status"] + device).status == 0)
    }

    @Test func catalogErrorsNameTheRecipeLineOnlyWhenThereIsOne() throws {
        let folder = TemporaryFolder("messages")
        let listed = try Tool.mappack(["regions", folder.join("missing.json")])
        #expect(listed.status == 2)
        #expect(listed.stderr.contains("no such file") && !listed.stderr.contains("recipe"), "\(listed.stderr)")

        let server = try NginxServer(root: folder.join("served"))
        defer { server.stop() }
        let url = server.baseURL.appendingPathComponent("nowhere/catalog.json").absoluteString
        let recipe = folder.join("r.yaml")
        try "name: x\ncatalog: \(url)\nregions:\n  include: [europe]\n".write(toFile: recipe, atomically: true, encoding: .utf8)
        let plan = try Tool.mappack(["plan", recipe, "--cache", folder.join("cache")])
        #expect(plan.status == 1)
        #expect(plan.stderr.contains("HTTP status 404 (not found)"), "\(plan.stderr)")
        #expect(plan.stderr.contains("\(recipe):2"), "no recipe line: \(plan.stderr)")
        #expect(plan.stderr.contains("check the URL"), "no advice: \(plan.stderr)")
    }

    @Test func inspectOfNothingSaysNoSuchFile() throws {
        for verb in ["inspect", "verify"] {
            let result = try Tool.mappack([verb, "/no/such/path"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("/no/such/path: no such file"), "\(verb): \(result.stderr)")
        }
    }

    @Test func unknownOutputFormatIsEchoedWithTheNearestName() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory, mbtile]"))
        let plan = try Tool.mappack(["plan", recipe, "--cache", world.cache])
        #expect(plan.status == 2)
        #expect(plan.stderr.contains("unknown output format 'mbtile'; did you mean 'mbtiles'?"), "\(plan.stderr)")
    }

    @Test func aMistypedNameSuggestsTheRegionItIsNearestToFirst() throws {
        let folder = TemporaryFolder("typo")
        let catalog = try DemoWorldFixture.publish(in: folder, only: "africa/bj,europe/at", scale: 0.05)
        let recipe = folder.join("r.yaml")
        try "name: x\ncatalog: \(catalog)\nregions:\n  include: [europe/at/1, Wein]\n".write(toFile: recipe, atomically: true, encoding: .utf8)
        let plan = try Tool.mappack(["plan", recipe, "--cache", folder.join("cache")])
        #expect(plan.status == 2)
        #expect(plan.stderr.contains("unknown region 'Wein'; did you mean 'europe/at/9'"), "\(plan.stderr)")
    }

    /// A build that cannot fit says so before it downloads anything; it is not a rejected bundle.
    @Test func aBuildThatDoesNotFitTheDiskSaysSoBeforeItStarts() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out], environment: ["MAPPACK_TEST_FREE_BYTES": "20000"])
        #expect(build.status == 1)
        #expect(build.stderr.contains("not enough free space for this build in \(world.out)"), "\(build.stderr)")
        #expect(!build.stderr.contains("rejected"))
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/sha256"))
    }
}
