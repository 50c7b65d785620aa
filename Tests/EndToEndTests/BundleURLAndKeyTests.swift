import Foundation
import TestSupport
import Testing

/// Bundle URLs that leave the catalog, repeated JSON keys, and URL arguments that do not parse.
@Suite struct BundleURLAndKeyTests {
    /// The first bundle's `url` value in `world`'s catalog.
    static func firstURL(_ world: PublishedWorld) throws -> String {
        let text = try String(contentsOfFile: world.catalog, encoding: .utf8)
        let start = try #require(text.range(of: #""url":""#))
        let end = try #require(text[start.upperBound...].firstIndex(of: "\""))
        return String(text[start.upperBound..<end])
    }

    @Test(arguments: ["%2e%2e/catalog/", "%2E%2E%2fcatalog/", "..%2fcatalog/", "b/%2e%2e/"])
    func percentEncodedDotDotInABundleURLIsRefused(_ prefix: String) throws {
        let world = try PublishedWorld()
        let url = try Self.firstURL(world)
        try PathGrammarTests.edit(world, #""url":"\#(url)""#, #""url":"\#(prefix)\#(url)""#)
        let plan = try Tool.mappack(["plan", try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: ["world", "europe"]))])
        #expect(plan.status == 2, "\(plan.stderr)")
        #expect(plan.stderr.contains(prefix + url) && plan.stderr.contains("climbs out"), "\(plan.stderr)")
    }

    @Test func bundleURLOnAnotherHostIsRefusedBeforeAnyDownload() throws {
        let world = try PublishedWorld()
        let url = try Self.firstURL(world)
        try PathGrammarTests.edit(world, #""url":"\#(url)""#, #""url":"http://127.0.0.1:9/\#(url)""#)
        let result = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: ["world", "europe"])))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("http://127.0.0.1:9/" + url) && result.stderr.contains("leaves the catalog"), "\(result.stderr)")
    }

    @Test(arguments: [
        (#""mapVersion":"1.0""#, #""mapVersion":"1.0","mapVersion":"2.0""#, "mapVersion"),
        (#""names":{"#, #""names":{"en":"Twice","#, "names.en"),
    ])
    func repeatedKeyInACatalogIsRefused(_ replace: String, _ with: String, _ key: String) throws {
        let world = try PublishedWorld()
        try PathGrammarTests.edit(world, replace, with)
        let result = try Tool.mappack(["regions", world.catalog])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains(/catalog\.json:\d+:\d+:/) && result.stderr.contains("appears twice") && result.stderr.contains(key),
            "\(result.stderr)")
    }

    @Test func repeatedKeyInAManifestIsRefused() throws {
        let world = try PublishedWorld()
        #expect(try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog))).status == 0)
        let manifest = world.out + "/fixture-1.0/manifest.json"
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        try Data(text.replacingOccurrences(of: #""name":"fixture""#, with: #""name":"fixture","name":"other""#).utf8).write(
            to: URL(fileURLWithPath: manifest))
        let result = try Tool.mappack(["verify", world.out + "/fixture-1.0"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains("manifest.json: not a valid manifest: line 1") && result.stderr.contains("\"name\" appears twice"),
            "\(result.stderr)")
    }

    @Test(arguments: [
        ["regions", "http://exa mple.com/catalog.json"], ["regions", "http://"], ["diff", "http://a b/x.json", "other.json"],
        ["diff", "https://[::1/x.json", "other.json"],
    ])
    func unparsableURLArgumentIsBadUsage(_ arguments: [String]) throws {
        let result = try Tool.mappack(arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("is not a valid file://, http:// or https:// URL"), "\(result.stderr)")
    }
}
