import Foundation
import TestSupport
import Testing

/// Issue 29, items 2–5, through the real binary: a signed catalog's id is the lineage a recipe's
/// catalog URL follows (pinned at first trust), versions are bounded, a frozen counter has a way
/// out (a reset signed by the old key and cosigned by the new one), repeated keys in a signature
/// are refused, and publish never signs without its rollback guard.
@Suite struct CatalogLineageTests {
    typealias Workspace = SignedCatalogBuildTests.Workspace

    @Test func buildRefusesAnotherLineageAtThePinnedURL() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "v1")
        #expect(try work.build().status == 0)
        try work.server.serve(catalog: "beta")
        let swapped = try work.build()
        #expect(swapped.status == 1, "\(swapped.stderr)")
        #expect(swapped.stderr.contains("fixture-beta") && swapped.stderr.contains("another catalog"), "\(swapped.stderr)")
        // The lineage's own counter is untouched: the real next catalog is no rollback.
        try work.server.serve(catalog: "v2")
        let real = try work.build()
        #expect(real.status == 0, "\(real.stderr)")
    }

    @Test func buildRefusesASignatureWithARepeatedKey() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "dupkey")
        let refused = try work.build()
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("\"version\" appears twice"), "\(refused.stderr)")
    }

    @Test func aFrozenVersionIsRecoveredByALineageReset() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "frozen")
        #expect(try work.build().status == 0)
        try work.server.serve(catalog: "v2")
        let frozen = try work.build()
        #expect(frozen.status == 1 && frozen.stderr.contains("rollback"), "\(frozen.stderr)")
        try work.server.serve(catalog: "reset")
        let reset = try work.build()
        #expect(reset.status == 0, "\(reset.stderr)")
        // The new key the reset named signs the next catalog of the new epoch alone.
        try work.server.serve(catalog: "after")
        let after = try work.build()
        #expect(after.status == 0, "\(after.stderr)")
        // The frozen catalog of the old epoch is a replay now.
        try work.server.serve(catalog: "frozen")
        let replay = try work.build()
        #expect(replay.status == 1 && replay.stderr.contains("version reset refused"), "\(replay.stderr)")
    }

    @Test func aResetWithoutTheNewKeysCosignatureIsRefused() throws {
        let work = try Workspace()
        try work.server.serve(catalog: "v2")
        #expect(try work.build().status == 0)
        // `reset`'s signature with its cosignature removed: the old key alone cannot reset the counter.
        let sets = SignedCatalogSets.shared
        let forged = sets.served + "/reset-uncosigned"
        if !FileManager.default.fileExists(atPath: forged) {
            try? FileManager.default.copyItem(atPath: sets.served + "/reset", toPath: forged)
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: forged + "/catalog.json.sig"))) as? [String: Any])
            object["cosignature"] = nil
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: URL(fileURLWithPath: forged + "/catalog.json.sig"))
        }
        try work.server.serve(catalog: "reset-uncosigned")
        let refused = try work.build()
        #expect(refused.status == 1 && refused.stderr.contains("version reset refused"), "\(refused.stderr)")
    }

    @Test func publishBoundsVersionsAndKeepsItsRollbackGuard() throws {
        let sets = SignedCatalogSets.shared
        let folder = TemporaryFolder("lineage-publish")
        let out = folder.join("catalog")
        func publish(_ extra: [String], key: String = "release") throws -> Tool.Result {
            try Tool.mappack(
                ["publish", sets.folder.join("source"), "--out", out, "--sign", sets.key(key) + ".key"] + extra,
                environment: ["SOURCE_DATE_EPOCH": String(SignedCatalogSets.signedAt)])
        }
        func envelope() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/catalog.json.sig"))) as? [String: Any])
        }
        let huge = try publish(["--catalog-version", "9223372036854775807"])
        #expect(huge.status == 2 && huge.stderr.contains("9007199254740991"), "\(huge.stderr)")
        let jump = try publish(["--catalog-version", "1000000000000"])
        #expect(jump.status == 2 && jump.stderr.contains("--force"), "\(jump.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/catalog.json.sig"))
        #expect(try publish([]).status == 0)
        let signed = try envelope()["version"] as? Int
        // A damaged previous signature: the guard has nothing to go by, so publish refuses unless forced.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: out + "/catalog.json.sig"))
        let blind = try publish(["--catalog-version", "100"])
        #expect(blind.status == 2 && blind.stderr.contains("previous signature cannot be read"), "\(blind.stderr)")
        #expect(try publish(["--catalog-version", "100", "--force"]).status == 0)
        #expect(try envelope()["version"] as? Int == 100 && signed != 100)
        // Frozen at the largest version: only a reset follows.
        #expect(try publish(["--catalog-version", "9007199254740991", "--force"]).status == 0)
        let next = try publish([])
        #expect(next.status == 2 && next.stderr.contains("--reset-lineage"), "\(next.stderr)")
        let reset = try publish(["--reset-lineage", sets.key("next") + ".key", "--catalog-version", "7"])
        #expect(reset.status == 0, "\(reset.stderr)")
        let record = try envelope()
        #expect(record["epoch"] as? Int == 1 && record["version"] as? Int == 7)
        #expect(record["nextKey"] as? String == (try sets.publicKey("next")))
        #expect((record["cosignature"] as? [String: Any])?["signature"] is String)
        // The new epoch's next version is compared with 7, not with the frozen one.
        let after = try publish(["--catalog-version", "8"], key: "next")
        #expect(after.status == 0, "\(after.stderr)")
        #expect(try envelope()["epoch"] as? Int == 1)
    }
}
