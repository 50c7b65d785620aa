import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// Without `SOURCE_DATE_EPOCH`, an image's `built` comes from the catalog's `released`, which its
/// publisher wrote: it is written as exactly `YYYY-MM-DDTHH:MM:SSZ` (`UTCTime`), a `released` that
/// is not a time is refused, and images whose `built` an older mappack copied as it was still open.
@Suite struct BuiltTimeTests {
    /// A published fixture whose catalog says `released` (every `released` in it rewritten).
    static func world(released: String) throws -> PublishedWorld {
        let world = try PublishedWorld()
        let text = try String(contentsOfFile: world.catalog, encoding: .utf8)
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: released, options: .fragmentsAllowed), as: UTF8.self)
        let rewritten = text.replacingOccurrences(of: "\"released\":\"2026-11-20T00:00:00Z\"", with: "\"released\":\(encoded)")
        #expect(rewritten != text)
        try rewritten.write(toFile: world.catalog, atomically: true, encoding: .utf8)
        return world
    }

    /// `mappack build` with no `SOURCE_DATE_EPOCH` (nor any other build-time source) into `out`.
    static func buildFromReleased(_ world: PublishedWorld, recipe: String, out: String) throws -> Tool.Result {
        try Tool.run(
            "/usr/bin/env", ["-u", "SOURCE_DATE_EPOCH", Tool.path("mappack"), "build", recipe, "--cache", world.cache, "--out", out], timeout: 600)
    }

    @Test(arguments: [
        ("2026-11-20T01:30:00+01:00", "2026-11-20T00:30:00Z"), ("2026-11-20T08:00:00.750Z", "2026-11-20T08:00:00Z"),
        ("2026-11-20", "2026-11-20T00:00:00Z"), ("2026-11-20T08:00:00Z", "2026-11-20T08:00:00Z"),
        ("2026-11-19T20:15:00-0545", "2026-11-20T02:00:00Z"),
    ])
    func builtIsTheReleaseTimeInTheOneFormAndReproducible(_ released: String, _ built: String) throws {
        let world = try Self.world(released: released)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        for out in ["first", "second"] {
            let build = try Self.buildFromReleased(world, recipe: recipe, out: world.folder.join(out))
            #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        }
        let first = try Data(contentsOf: URL(fileURLWithPath: world.folder.join("first/fixture-1.0/manifest.json")))
        let second = try Data(contentsOf: URL(fileURLWithPath: world.folder.join("second/fixture-1.0/manifest.json")))
        #expect(try ManifestReader.read(first, file: "manifest.json").built == built)
        #expect(first == second)
        #expect(try Tool.mappack(["verify", world.folder.join("first/fixture-1.0")], timeout: 300).status == 0)
    }

    @Test(arguments: [
        "next Tuesday", "", "2026-13-20T00:00:00Z", "10000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2026-11-20T08:00:00",
        "2026-11-20T08:00:00Z and later", "1970-01-01T00:30:00+01:00",
    ])
    func aReleasedThatIsNotATimeIsRefusedNamingTheField(_ released: String) throws {
        let world = try Self.world(released: released)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try Self.buildFromReleased(world, recipe: recipe, out: world.out)
        #expect(build.status == 2, "\(build.stdout)\(build.stderr)")
        #expect(build.stderr.contains("\"released\"") && build.stderr.contains("'\(released)'"), "\(build.stderr)")
        #expect(build.stderr.contains("/catalog/catalog.json: ") && build.stderr.contains("SOURCE_DATE_EPOCH"), "\(build.stderr)")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: world.out)) ?? []).filter { !$0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
        // The build time given outright needs no release time.
        let given = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out], environment: ["SOURCE_DATE_EPOCH": "1790000000"], timeout: 600)
        #expect(given.status == 0, "\(given.stderr)")
    }

    @Test func anImageWhoseBuiltAnOlderMappackCopiedAsItWasStillOpens() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let image = world.out + "/fixture-1.0"
        let path = image + "/manifest.json"
        var manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: path)), file: "manifest.json")
        manifest.built = "sometime in November"
        try manifest.sealed(hash: { SHA256.hex($0) }).bytes.write(to: URL(fileURLWithPath: path))
        let verify = try Tool.mappack(["verify", image], timeout: 300)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let inspect = try Tool.mappack(["inspect", image], timeout: 300)
        #expect(inspect.status == 0 && inspect.stdout.contains("sometime in November"), "\(inspect.stdout)\(inspect.stderr)")
        let device = ["--storage", world.folder.join("device/maps"), "--cache", world.folder.join("device/cache")]
        let install = try Tool.mappack(["store", "install", "--image", image] + device, timeout: 300)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        let status = try Tool.mappack(["store", "status", "--full"] + device, timeout: 300)
        #expect(status.status == 0 && status.stdout.hasPrefix("ok: "), "\(status.stdout)\(status.stderr)")
    }
}
