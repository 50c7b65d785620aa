import Foundation
import MapFormat
import TestSupport
import Testing

/// Times mappack writes and reads are `YYYY-MM-DDTHH:MM:SSZ` with a four-digit year (issue 29 item
/// 10a): a clock past year 9999 is bad usage, and a signature's `expires` in any other form is refused.
@Suite struct TimeRangeTests {
    @Test func publishRefusesAnExpiryPastYear9999() throws {
        let world = try PublishedWorld()
        let key = world.folder.join("release")
        #expect(try Tool.mappack(["keygen", "--out", key]).status == 0)
        let publish = try Tool.mappack(
            ["publish", world.folder.join("source"), "--out", world.folder.join("signed"), "--sign", key + ".key"],
            environment: ["SOURCE_DATE_EPOCH": "253402300000"])
        #expect(publish.status == 2, "\(publish.stdout)\(publish.stderr)")
        #expect(publish.stderr.contains("9999") && publish.stderr.contains("--expires"), "\(publish.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.folder.join("signed/catalog.json.sig")))
    }

    @Test func buildRefusesASourceDateEpochPastYear9999() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out], environment: ["SOURCE_DATE_EPOCH": "253402300800"])
        #expect(build.status == 2, "\(build.stdout)\(build.stderr)")
        #expect(build.stderr.contains("SOURCE_DATE_EPOCH") && build.stderr.contains("10000"), "\(build.stderr)")
    }

    @Test(arguments: [
        "10009-12-28T23:46:40Z", "+10000-01-01T00:00:00Z", "2027-01-15T08:00:00.5Z", "2027-01-15T08:00:00+00:00", "2027-1-15T08:00:00Z",
        "2027-02-30T08:00:00Z",
    ])
    func signatureExpiryInAnyOtherFormIsRefused(_ expires: String) throws {
        let record = CatalogSignature(
            catalog: "fixture", version: 1, expires: expires, sha256: try #require(SHA256Digest(hex: String(repeating: "a", count: 64))),
            nextKey: nil, keyID: "k")
        let data = try CanonicalJSON.encode(record)
        #expect(throws: CatalogTrustError.self) { try CatalogSignature.parse(data, source: "catalog.json.sig") }
    }

    @Test func signatureExpiryInTheStrictFormIsRead() throws {
        let record = CatalogSignature(
            catalog: "fixture", version: 1, expires: "9999-12-31T23:59:59Z",
            sha256: try #require(SHA256Digest(hex: String(repeating: "a", count: 64))), nextKey: nil, keyID: "k")
        let parsed = try CatalogSignature.parse(try CanonicalJSON.encode(record), source: "catalog.json.sig")
        #expect(parsed.expiryDate == Date(timeIntervalSince1970: 253_402_300_799))
    }
}
