import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// A cache seed an attacker made: the image's own seed with `entries` or `meta` turned into SQL that
/// runs when it is read (issue 29's siblings, item 1).
enum HostileSeed: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `entries` is a view that never ends (a recursive CTE under an aggregate: no rows, no memory).
    case endlessEntriesView = "view"
    /// `meta` is a view that never ends.
    case endlessMetaView = "meta view"
    /// `entries` carries a trigger.
    case trigger
    /// `entries.accessed` is a generated column.
    case generatedColumn = "generated column"

    var description: String { rawValue }

    /// The word the refusal must hold.
    var reason: String {
        switch self {
        case .endlessEntriesView, .endlessMetaView: "view"
        case .trigger: "trigger"
        case .generatedColumn: "generated column"
        }
    }

    /// The statements that turn a real seed into this one.
    var sql: String {
        let endless = "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c)"
        switch self {
        case .endlessEntriesView:
            return """
                ALTER TABLE entries RENAME TO stored;
                CREATE VIEW entries AS \(endless) SELECT stored.* FROM stored, (SELECT max(x) AS top FROM c);
                """
        case .endlessMetaView:
            return """
                ALTER TABLE meta RENAME TO stored;
                CREATE VIEW meta AS \(endless) SELECT stored.* FROM stored, (SELECT max(x) AS top FROM c);
                """
        case .trigger:
            return "CREATE TRIGGER entries_touch AFTER DELETE ON entries BEGIN SELECT 1; END;"
        case .generatedColumn:
            return """
                CREATE TABLE rebuilt (key TEXT PRIMARY KEY, region TEXT NOT NULL, data BLOB NOT NULL, size INTEGER NOT NULL,
                                      sha256 BLOB NOT NULL, accessed INTEGER GENERATED ALWAYS AS (0) VIRTUAL);
                INSERT INTO rebuilt(key, region, data, size, sha256) SELECT key, region, data, size, sha256 FROM entries;
                DROP TABLE entries;
                ALTER TABLE rebuilt RENAME TO entries;
                VACUUM;
                """
        }
    }

    /// Writes this seed at `path`, a copy of a real one.
    func write(from seed: String, to path: String) throws {
        try FileManager.default.copyItem(atPath: seed, toPath: path)
        let database = try SQLiteDatabase(path: path)
        try database.execute(sql)
    }
}

@Suite struct HostileSeedTests {
    /// An unsigned copy of the fixture image whose seed is `hostile`, its manifest re-made for it:
    /// what anyone can make, since nothing but the manifest vouches for the seed.
    static func imageWith(_ hostile: HostileSeed, in work: TemporaryFolder) throws -> String {
        let image = try SignedStoreFixture.shared.copyOfFolder(in: work)
        try FileManager.default.removeItem(atPath: image + "/manifest.sig")
        let seed = image + "/cache-seed.sqlite"
        try FileManager.default.removeItem(atPath: seed)
        try hostile.write(from: SignedStoreFixture.shared.imageFolder + "/cache-seed.sqlite", to: seed)
        var manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: image + "/manifest.json")), file: "manifest.json")
        let (digest, size) = try SHA256.digestOfFile(seed)
        manifest.cacheSeed?.sha256 = digest
        manifest.cacheSeed?.size = size
        try manifest.sealed(hash: { SHA256.hex($0) }).bytes.write(to: URL(fileURLWithPath: image + "/manifest.json"))
        return image
    }

    @Test(arguments: HostileSeed.allCases)
    func installRefusesASeedWhoseTablesRunSQLAndLeavesTheStorageEmpty(_ hostile: HostileSeed) async throws {
        let work = TemporaryFolder("hostile-seed")
        let device = Device()
        let image = try Self.imageWith(hostile, in: work)
        let install = try await device.run(["install", "--image", image], timeout: 180)
        #expect(!install.timedOut, "store install of a seed with an endless \(hostile) did not end")
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("cache-seed.sqlite") && install.stderr.contains(hostile.reason), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
        let status = try await device.run(["status"], timeout: 180)
        #expect(status.stdout.hasPrefix("empty"), "\(status.stdout)\(status.stderr)")
    }

    /// The app's own import (`importCacheSeed`) applies the same rule; only the kinds that end on
    /// old code run in-process, the endless ones go through `store install` above, under a timeout.
    @Test(arguments: [HostileSeed.trigger, .generatedColumn])
    func appImportRefusesASeedWhoseTablesRunSQL(_ hostile: HostileSeed) async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try store.clearCache()
        let seed = device.folder.join("hostile-seed.sqlite")
        try hostile.write(from: StoreFixture.shared.imageFolder + "/cache-seed.sqlite", to: seed)
        await #expect {
            try await store.importCacheSeed(at: URL(fileURLWithPath: seed))
        } throws: { error in
            guard case MapStoreError.invalidCacheSeed(let path, let reason) = error else { return false }
            return path.hasSuffix("/hostile-seed.sqlite") && reason.contains(hostile.reason)
        }
        #expect(try store.cacheEntryCount() == 0)
    }
}
