import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// A device with trusted keys against a server that plays every attack on signed catalogs
/// (Tests/Support/catalog_attack_server.py): each refusal is its own `MapStoreError` case, and what the
/// device saw survives a restart.
@Suite struct SignedCatalogTests {
    /// A device with the fixture image installed, trusting `release`, and the attack server.
    final class Setup: @unchecked Sendable {
        let sets = SignedCatalogSets.shared
        let device = Device()
        let server: CatalogAttackServer

        init() async throws {
            let sets = self.sets
            _ = try await offPool { (StoreFixture.shared, sets) }
            server = try CatalogAttackServer(root: sets.served)
            // Installed from the (unsigned) fixture image first; trusted keys apply to images too.
            _ = try await device.open(image: StoreFixture.shared.image(archive: false))
        }

        /// Opens the device's store with `keys` trusted and the clock at `now`.
        func open(keys: [String] = ["release"], now: Int = SignedCatalogSets.signedAt + 86_400) async throws -> MapStore {
            let texts = try keys.map { try sets.publicKey($0) }
            let clock = Date(timeIntervalSince1970: TimeInterval(now))
            return try await MapStore.open(
                storage: URL(fileURLWithPath: device.storage), cache: URL(fileURLWithPath: device.cache),
                options: .init(trustedPublicKeys: texts, now: { clock }))
        }

        /// `checkForUpdate` at the server's catalog URL; the refusal, or nil when accepted.
        func check(_ store: MapStore) async -> MapStoreError? {
            // The API throws only MapStoreError (typed throws).
            do {
                _ = try await store.checkForUpdate(catalog: server.catalogURL)
                return nil
            } catch { return error }
        }
    }

    @Test func unsignedCatalogIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v1", signature: .some(nil))
        let store = try await setup.open()
        guard case .catalogUnsigned(let url) = await setup.check(store) else {
            Issue.record("unsigned catalog accepted")
            return
        }
        #expect(url == setup.server.catalogURL)
        #expect(store.catalogURL == nil)
        #expect(MapStoreError.catalogUnsigned(url: url).description.contains("catalog.json.sig"))
    }

    @Test func catalogSignedByAnotherKeyIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "other")
        let store = try await setup.open()
        guard case .catalogSignatureInvalid(_, let reason) = await setup.check(store) else {
            Issue.record("other key accepted")
            return
        }
        #expect(reason.contains("not by a trusted key"), "\(reason)")
    }

    @Test func signatureOfAnotherPublishIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2b", signature: "v2")
        let store = try await setup.open()
        guard case .catalogSignatureInvalid(_, let reason) = await setup.check(store) else {
            Issue.record("foreign signature accepted")
            return
        }
        #expect(reason.contains("sha256"), "\(reason)")
    }

    @Test func olderCatalogIsRefusedAlsoAfterRestart() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2")
        #expect(await setup.check(try await setup.open()) == nil)
        try setup.server.serve(catalog: "v1")
        // A new process: the newest version seen comes from state.sqlite.
        let store = try await setup.open()
        guard case .catalogRollback(_, let seen, let offered) = await setup.check(store) else {
            Issue.record("rollback accepted")
            return
        }
        #expect(seen == 2 && offered == 1)
        await #expect(throws: MapStoreError.self) { try await store.update(catalog: setup.server.catalogURL) }
    }

    @Test func sameVersionWithOtherBytesIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2")
        let store = try await setup.open()
        #expect(await setup.check(store) == nil)
        #expect(await setup.check(store) == nil, "the same version and bytes again is fine")
        try setup.server.serve(catalog: "v2b")
        guard case .catalogMixAndMatch(_, let version) = await setup.check(store) else {
            Issue.record("mix-and-match accepted")
            return
        }
        #expect(version == 2)
    }

    @Test func expiredCatalogIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "short")
        #expect(await setup.check(try await setup.open(now: SignedCatalogSets.signedAt + 1800)) == nil)
        let later = try await setup.open(now: SignedCatalogSets.signedAt + 7200)
        guard case .catalogExpired(_, let expires) = await setup.check(later) else {
            Issue.record("expired catalog accepted")
            return
        }
        #expect(expires == "2027-01-15T09:00:00Z")
    }

    @Test func keyRotationIsFollowedAndPersisted() async throws {
        let setup = try await Setup()
        let store = try await setup.open()
        // Signed only by `next` before any catalog named it: refused.
        try setup.server.serve(catalog: "rot4")
        guard case .catalogSignatureInvalid = await setup.check(store) else {
            Issue.record("unknown key accepted")
            return
        }
        // A next key edited into release's signature: refused, and not trusted afterwards.
        try setup.server.serve(catalog: "rot3", nextKey: try setup.sets.publicKey("other"))
        guard case .catalogSignatureInvalid = await setup.check(store) else {
            Issue.record("tampered next key accepted")
            return
        }
        try setup.server.serve(catalog: "other")
        guard case .catalogSignatureInvalid = await setup.check(store) else {
            Issue.record("slipped-in key trusted")
            return
        }
        // release names `next`; after a restart a catalog signed by `next` alone is trusted.
        try setup.server.serve(catalog: "rot3")
        #expect(await setup.check(store) == nil)
        try setup.server.serve(catalog: "rot4")
        #expect(await setup.check(try await setup.open()) == nil)
    }

    @Test func everyVerbThatFetchesACatalogChecksIt() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v1", signature: .some(nil))
        let store = try await setup.open()
        await #expect(throws: MapStoreError.self) { try await store.setCatalogURL(setup.server.catalogURL) }
        await #expect(throws: MapStoreError.self) { try await store.update(catalog: setup.server.catalogURL) }
        #expect(store.catalogURL == nil)
        // Remembered without fetching (Options.catalogURL), then used by a download: refused too.
        let texts = [try setup.sets.publicKey("release")]
        let remembered = try await MapStore.open(
            storage: URL(fileURLWithPath: setup.device.storage), cache: URL(fileURLWithPath: setup.device.cache),
            options: .init(trustedPublicKeys: texts, catalogURL: setup.server.catalogURL))
        try await remembered.deleteRegions(["europe/ch/zh"])
        let task = try remembered.download(regions: ["europe/ch/zh"])
        do {
            try await task.wait()
            Issue.record("download used an unsigned catalog")
        } catch MapStoreError.catalogUnsigned {}
    }

    @Test func withoutTrustedKeysUnsignedCatalogsAreAcceptedAsBefore() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v1", signature: .some(nil))
        #expect(await setup.check(try await setup.open(keys: [])) == nil)
        #expect(try setup.server.requests("/catalog.json.sig") == 0)
    }

    @Test func storeWithoutTrustTableIsMigrated() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v1")
        #expect(await setup.check(try await setup.open()) == nil)
        // A store written before signed catalogs has no trust table.
        let drop = try Tool.run("/usr/bin/sqlite3", [setup.device.storage + "/state.sqlite", "DROP TABLE catalog_trust"])
        #expect(drop.status == 0, "\(drop.stderr)")
        let store = try await setup.open()
        #expect(store.initialStatus == .ok)
        try setup.server.serve(catalog: "v2")
        #expect(await setup.check(store) == nil)
        try setup.server.serve(catalog: "v1")
        guard case .catalogRollback = await setup.check(store) else {
            Issue.record("rollback accepted after migration")
            return
        }
    }

    @Test func storeCommandWithTrustRefusesUnsignedCatalog() async throws {
        let setup = try await Setup()
        let arguments = [
            "store", "update", "--check", "--catalog", setup.server.catalogURL.absoluteString, "--trust", setup.sets.key("release") + ".pub",
            "--storage", setup.device.storage, "--cache", setup.device.cache,
        ]
        let environment = ["MAPPACK_NOW": SignedCatalogSets.dayLater]
        try setup.server.serve(catalog: "v1", signature: .some(nil))
        let refused = try await offPool { try Tool.mappack(arguments, environment: environment) }
        #expect(refused.status == 1 && refused.stderr.contains("not signed"), "\(refused.stderr)")
        try setup.server.serve(catalog: "v1")
        let accepted = try await offPool { try Tool.mappack(arguments, environment: environment) }
        #expect(accepted.status == 0, "\(accepted.stderr)")
        try setup.server.serve(catalog: "short")
        let expired = try await offPool { try Tool.mappack(arguments, environment: ["MAPPACK_NOW": String(SignedCatalogSets.signedAt + 7200)]) }
        #expect(expired.status == 1 && expired.stderr.contains("expired"), "\(expired.stderr)")
    }
}
