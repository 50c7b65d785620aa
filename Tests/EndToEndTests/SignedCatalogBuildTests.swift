import Foundation
import TestSupport
import Testing

/// `mappack publish --sign` and `mappack build --trust` against a server that plays every attack on
/// signed catalogs (Tests/Support/catalog_attack_server.py).
@Suite struct SignedCatalogBuildTests {
    /// What a hostile mirror serves at the recipe's catalog URL, after `before` (served and built first, if any).
    enum Attack: String, CaseIterable, Sendable {
        case unsigned, malformedSignature, otherKey, signatureOfAnotherPublish, expired, rollback, mixAndMatch, tamperedNextKey, newKeyWithoutRotation
    }

    /// A recipe at the server's catalog URL, a download cache and an output folder of its own.
    final class Workspace: @unchecked Sendable {
        let sets = SignedCatalogSets.shared
        let folder = TemporaryFolder("signed-build")
        let server: CatalogAttackServer
        var recipe: String { folder.join("recipe.yaml") }

        init() throws {
            server = try CatalogAttackServer(root: sets.served)
            try Data(SourceFixture.recipe(catalog: server.catalogURL.absoluteString, formats: "[directory]").utf8)
                .write(to: URL(fileURLWithPath: recipe))
        }

        /// `mappack build RECIPE --trust release.pub` with the device clock at `now` (default: a day after signing).
        func build(trust: String? = "release", now: String = SignedCatalogSets.dayLater) throws -> Tool.Result {
            let trustArguments = trust.map { ["--trust", sets.key($0) + ".pub"] } ?? []
            return try Tool.mappack(
                ["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("Output"), "--force"] + trustArguments,
                environment: ["MAPPACK_NOW": now, "SOURCE_DATE_EPOCH": "1790000000"])
        }
    }

    @Test(arguments: Attack.allCases)
    func buildWithTrustRefusesAttack(_ attack: Attack) throws {
        let work = try Workspace()
        var now = SignedCatalogSets.dayLater
        let expected: String
        switch attack {
        case .unsigned:
            try work.server.serve(catalog: "v1", signature: .some(nil))
            expected = "not signed"
        case .malformedSignature:
            try work.server.serve(catalog: "v1", signature: "garbage")
            expected = "signature is not valid"
        case .otherKey:
            try work.server.serve(catalog: "other")
            expected = "not by a trusted key"
        case .signatureOfAnotherPublish:
            try work.server.serve(catalog: "v2b", signature: "v2")
            expected = "sha256"
        case .expired:
            try work.server.serve(catalog: "short")
            now = String(SignedCatalogSets.signedAt + 7200)
            expected = "expired"
        case .rollback:
            try work.server.serve(catalog: "v2")
            let first = try work.build()
            #expect(first.status == 0, "\(first.stderr)")
            try work.server.serve(catalog: "v1")
            expected = "rollback"
        case .mixAndMatch:
            try work.server.serve(catalog: "v2")
            #expect(try work.build().status == 0)
            try work.server.serve(catalog: "v2b")
            expected = "mix-and-match"
        case .tamperedNextKey:
            try work.server.serve(catalog: "rot3", nextKey: try work.sets.publicKey("other"))
            expected = "does not match"
        case .newKeyWithoutRotation:
            try work.server.serve(catalog: "rot4")
            expected = "not by a trusted key"
        }
        let refused = try work.build(now: now)
        #expect(refused.status == 1, "\(attack): \(refused.stderr)")
        #expect(refused.stderr.contains(expected), "\(attack): \(refused.stderr)")
        #expect(refused.stderr.contains(work.server.catalogURL.absoluteString), "\(refused.stderr)")
        if attack != .rollback && attack != .mixAndMatch {
            #expect(!FileManager.default.fileExists(atPath: work.folder.join("Output/fixture-1.0")))
        }
        #expect(try work.server.requests("/catalog.json.sig") >= 1)
    }

    /// A timestamp attack on `mappack build --trust` (issue 33), as `CatalogTimestampTests` plays them on a device.
    enum TimestampAttack: String, CaseIterable, Sendable {
        case stale, replayed, expired, mismatched
        /// The timestamp deleted after the ledger trusted one (issue 41): not judged by the signature's expiry.
        case deleted
    }

    @Test(arguments: TimestampAttack.allCases)
    func buildWithTrustRefusesTimestampAttack(_ attack: TimestampAttack) throws {
        let work = try Workspace()
        var now = SignedCatalogSets.dayLater
        let expected: String
        switch attack {
        case .stale:
            try work.server.serve(catalog: "v2", timestamp: "v2")
            let first = try work.build()
            #expect(first.status == 0, "\(first.stderr)")
            try work.server.serve(catalog: "v1", timestamp: "v1")
            expected = "stale timestamp refused: catalog.json.timestamp names catalog version 1, older than version 2"
        case .replayed:
            try work.server.serve(catalog: "ts7b", timestamp: "ts7b")
            let first = try work.build()
            #expect(first.status == 0, "\(first.stderr)")
            try work.server.serve(catalog: "ts7b", timestamp: "ts7")
            expected = "replayed timestamp refused: catalog.json.timestamp is timestamp version \(SignedCatalogSets.signedAt)"
        case .expired:
            try work.server.serve(catalog: "ts8", timestamp: "ts8")
            now = String(SignedCatalogSets.signedAt + 7200)
            expected = "the catalog's timestamp expired at 2027-01-15T09:00:00Z"
        case .mismatched:
            try work.server.serve(catalog: "v2b", timestamp: "v2")
            // The .zst is set aside (a warning), then the plain catalog is refused.
            expected = "the catalog does not match its timestamp: the catalog"
        case .deleted:
            try work.server.serve(catalog: "v2", timestamp: "v2")
            let first = try work.build()
            #expect(first.status == 0, "\(first.stderr)")
            try work.server.serve(catalog: "v2")
            expected = "missing timestamp refused: catalog.json.timestamp is gone"
        }
        let refused = try work.build(now: now)
        #expect(refused.status == 1, "\(attack): \(refused.stderr)")
        #expect(refused.stderr.contains(expected), "\(attack): \(refused.stderr)")
        // Named as every catalog refusal of a build is: the recipe's catalog URL (the text names the document).
        #expect(refused.stderr.contains("catalog \(work.server.catalogURL.absoluteString): "), "\(attack): \(refused.stderr)")
        // Each attack has its own words: none of the others' is said.
        let others = ["stale timestamp", "replayed timestamp", "timestamp expired", "does not match its timestamp", "missing timestamp"]
        #expect(others.filter { refused.stderr.contains($0) }.count == 1, "\(refused.stderr)")
        if attack == .expired || attack == .mismatched {
            #expect(!FileManager.default.fileExists(atPath: work.folder.join("Output/fixture-1.0")))
        }
    }

    /// A second build with nothing new costs `304`s, counted in nginx's access log: with a signed
    /// catalog the timestamp's alone (the catalog is not asked for), from a server without timestamps
    /// the catalog's conditional GET.
    @Test(arguments: [true, false])
    func secondBuildWithNothingNewGets304(signed: Bool) throws {
        let sets = SignedCatalogSets.shared
        let folder = TemporaryFolder("build-304")
        let site = folder.join("www/world")
        try FileManager.default.createDirectory(atPath: folder.join("www"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: sets.served + "/v1", toPath: site)
        if !signed {
            for name in ["catalog.json.sig", "catalog.json.timestamp"] { try FileManager.default.removeItem(atPath: site + "/" + name) }
        }
        let nginx = try NginxServer(root: folder.join("www"))
        let url = nginx.baseURL.appendingPathComponent("world/catalog.json").absoluteString
        try Data(SourceFixture.recipe(catalog: url, formats: "[directory]").utf8).write(to: URL(fileURLWithPath: folder.join("recipe.yaml")))
        func build() throws -> Tool.Result {
            try Tool.mappack(
                ["build", folder.join("recipe.yaml"), "--cache", folder.join("cache"), "--out", folder.join("Output")]
                    + (signed ? ["--trust", sets.key("release") + ".pub"] : []),
                environment: ["MAPPACK_NOW": SignedCatalogSets.dayLater, "SOURCE_DATE_EPOCH": "1790000000"])
        }
        let first = try build()
        #expect(first.status == 0, "\(first.stderr)")
        let before = nginx.wireLog().count
        let second = try build()
        #expect(second.status == 0, "\(second.stderr)")
        let log = nginx.wireLog().dropFirst(before).filter { $0.path.hasPrefix("/world/catalog.json") }
        if signed {
            #expect(log.map(\.path) == ["/world/catalog.json.timestamp"], "\(log)")
            #expect(log.map(\.status) == [304], "\(log)")
        } else {
            #expect(log.map(\.path) == ["/world/catalog.json.timestamp", "/world/catalog.json"], "\(log)")
            #expect(log.map(\.status) == [404, 304], "\(log)")
        }
        #expect(log.reduce(0) { $0 + $1.bytes } <= 1024, "\(log)")
    }

    @Test func buildWithTrustAcceptsSignedCatalogAndFollowsKeyRotation() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "v1")
        let first = try work.build()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: work.folder.join("Output/fixture-1.0/manifest.json")))
        // The same version and bytes again is fine (a rebuild).
        #expect(try work.build().status == 0)
        // release signs version 3 naming `next`; then a catalog signed by `next` alone is trusted.
        try work.server.serve(catalog: "rot3")
        #expect(try work.build().status == 0)
        try work.server.serve(catalog: "rot4")
        let rotated = try work.build()
        #expect(rotated.status == 0, "\(rotated.stderr)")
    }

    @Test func buildWithoutTrustStillAcceptsUnsignedCatalog() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "v1", signature: .some(nil))
        let build = try work.build(trust: nil)
        #expect(build.status == 0, "\(build.stderr)")
        #expect(try work.server.requests("/catalog.json.sig") == 0)
    }

    @Test func publishedVersionGrowsAndALowerOneIsRefused() throws {
        let sets = SignedCatalogSets.shared
        let folder = TemporaryFolder("signed-publish")
        let out = folder.join("catalog")
        func publish(_ extra: [String]) throws -> Tool.Result {
            try Tool.mappack(
                ["publish", sets.folder.join("source"), "--out", out, "--sign", sets.key("release") + ".key"] + extra,
                environment: ["SOURCE_DATE_EPOCH": String(SignedCatalogSets.signedAt)])
        }
        func envelope() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/catalog.json.sig"))) as? [String: Any])
        }
        #expect(try publish(["--expires", "14d"]).status == 0)
        let first = try envelope()
        #expect(first["format"] as? String == "mappack-catalog-sig/1")
        #expect(first["version"] as? Int == SignedCatalogSets.signedAt)
        #expect(first["expires"] as? String == "2027-01-29T08:00:00Z")
        #expect(try publish([]).status == 0)
        #expect(try envelope()["version"] as? Int == SignedCatalogSets.signedAt + 1)
        #expect(try envelope()["expires"] as? String == "2027-02-14T08:00:00Z")
        let lower = try publish(["--catalog-version", "5"])
        #expect(lower.status == 2, "\(lower.stderr)")
        #expect(lower.stderr.contains("--catalog-version"), "\(lower.stderr)")
        #expect(try envelope()["version"] as? Int == SignedCatalogSets.signedAt + 1)
        for bad in [
            ["--expires", "14"], ["--expires", "0d"], ["--expires", "9223372036854775807h"], ["--expires", "3651d"], ["--catalog-version", "-1"],
            ["--next-key", folder.join("missing.pub")],
        ] {
            #expect(try publish(bad).status == 2, "\(bad)")
        }
        // Without --sign there is no signature, as before.
        #expect(try Tool.mappack(["publish", sets.folder.join("source"), "--out", folder.join("plain")]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.join("plain/catalog.json.sig")))
    }
}
