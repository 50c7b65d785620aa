import Foundation
import MapFormat
import TestSupport
import Testing

@Suite struct SigningTests {
    enum Case: String, CaseIterable, Sendable { case good, missing, wrongKey, manifestEdited, fileEdited }

    @Test(arguments: Case.allCases)
    func signatureIsCheckedAgainstTrustedKey(_ testCase: Case) throws {
        let world = try PublishedWorld()
        let keys = world.folder.join("release")
        #expect(try Tool.mappack(["keygen", "--out", keys]).status == 0)
        #expect(try Tool.mappack(["keygen", "--out", world.folder.join("other")]).status == 0)
        var mode = stat()
        unsafe stat(keys + ".key", &mode)
        #expect(mode.st_mode & 0o077 == 0)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let sign = testCase == .missing ? [] : ["--sign", keys + ".key"]
        let build = try world.build(recipe, sign)
        #expect(build.status == 0, "\(build.stderr)")
        let image = world.out + "/fixture-1.0"
        var trust = keys + ".pub"
        switch testCase {
        case .good, .missing: break
        case .wrongKey: trust = world.folder.join("other.pub")
        case .manifestEdited:
            let path = image + "/manifest.json"
            let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(
                of: "\"name\":\"fixture\"", with: "\"name\":\"fixturX\"")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        case .fileEdited:
            try Data("x".utf8).write(to: URL(fileURLWithPath: image + "/store/regions/europe/ch/be/routing/1/a.rt"))
        }
        let verify = try Tool.mappack(["verify", image, "--trust", trust])
        #expect(verify.status == (testCase == .good ? 0 : 1), "\(verify.stderr)")
        switch testCase {
        case .good: break
        case .missing: #expect(verify.stderr.contains("not signed"))
        case .wrongKey, .manifestEdited: #expect(verify.stderr.contains("manifest.sig"), "\(verify.stderr)")
        case .fileEdited: #expect(verify.stderr.contains("regions/europe/ch/be/routing/1/a.rt"))
        }
        if testCase == .good {
            // The packed form carries the signature too and verifies without unpacking.
            #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0.tar.zst", "--trust", trust]).status == 0)
            let listing = try Tool.run("/usr/bin/tar", ["--zstd", "-tf", world.out + "/fixture-1.0.tar.zst"]).stdout.split(separator: "\n")
            #expect(listing.prefix(2) == ["manifest.json", "manifest.sig"])
        }
    }
}

@Suite struct InspectAndDiffTests {
    @Test func inspectDescribesTheImage() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let result = try Tool.mappack(["inspect", world.out + "/fixture-1.0.tar.zst", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["mapVersion"] as? String == "1.0")
        #expect(object["format"] as? String == "mappack-image/1")
        #expect(object["mappackVersion"] as? String != nil)
        #expect(object["built"] as? String == "2026-09-21T14:13:20Z")
        #expect(object["signature"] as? String == "unsigned")
        #expect((object["regions"] as? [[String: Any]])?.first?["name"] as? String == "Schweiz")
        #expect((object["cacheSeed"] as? [String: Any])?["entries"] as? Int == 2)
    }

    @Test func diffBetweenTwoDemoWorldVersionsReportsExactlyTheChangedBundles() throws {
        let folder = TemporaryFolder("diff")
        for (version, base) in [("2026.11.0", "2026.11.0"), ("2026.12.0", "2026.11.0")] {
            let gen = try Tool.run(
                Tool.path("demo-world"),
                [
                    "--out", folder.join("src-\(version)"), "--only", "europe/ch,europe/li", "--scale", "0.2",
                    "--map-version", version, "--base-version", base, "--change-fraction", "0.3",
                ])
            #expect(gen.status == 0, "\(gen.stderr)")
            #expect(try Tool.mappack(["publish", folder.join("src-\(version)"), "--out", folder.join("cat-\(version)")]).status == 0)
        }
        let source =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("src-2026.12.0/source.json")))) as! [String: Any]
        let changed = Set(source["changed"] as! [String])
        #expect(!changed.isEmpty)
        let result = try Tool.mappack(["diff", folder.join("cat-2026.11.0/catalog.json"), folder.join("cat-2026.12.0/catalog.json"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let diff = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((diff["bundlesAdded"] as? [String])?.count == changed.count)
        #expect((diff["bundlesDropped"] as? [String])?.count == changed.count)
        // Exactly the regions owning changed bundles changed.
        let regions = source["regions"] as! [[String: Any]]
        let owners = Set(regions.filter { !Set($0["bundles"] as! [String]).isDisjoint(with: changed) }.map { $0["id"] as! String })
        #expect(Set(diff["regionsChanged"] as! [String]) == owners)
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: folder.join("cat-2026.12.0/catalog.json"))))
        let added = Set((diff["bundlesAdded"] as! [String]).compactMap(BundleDigest.init))
        #expect(diff["downloadBytes"] as? Int == Int(added.reduce(Int64(0)) { $0 + catalog.bundles[$1]!.size }))
    }
}
