import Foundation
import MapFormat
import TestSupport
import Testing

/// Issue 29, item 1: a state database that is empty, blank (valid SQLite, no rows) or truncated is a
/// lost one. It is rebuilt from the kept manifest and the files, never read as an interrupted install
/// (which rolled back, deleting every store file, or re-installed the image over run-time changes).
@Suite struct BlankStateTests {
    enum Blank: String, CaseIterable, Sendable { case emptyFile, blankDatabase, freshSchema, truncated }

    static func blank(_ state: String, _ kind: Blank) throws {
        switch kind {
        case .emptyFile:
            try Data().write(to: URL(fileURLWithPath: state))
        case .blankDatabase:
            try FileManager.default.removeItem(atPath: state)
            #expect(try shell("sqlite3 '\(state)' 'CREATE TABLE x(a); DROP TABLE x;'").status == 0)
        case .freshSchema:
            // What a process killed right after creating the database would leave: the tables, no rows.
            #expect(
                try shell("sqlite3 '\(state)' 'DELETE FROM meta; DELETE FROM regions; DELETE FROM pending_operation; DELETE FROM downloads;'").status
                    == 0)
        case .truncated:
            #expect(try shell("truncate -s 2048 '\(state)'").status == 0)
        }
    }

    @Test(arguments: Blank.allCases)
    func aBlankStateDatabaseIsRebuiltNotRolledBack(_ kind: Blank) async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        try Self.blank(device.storage + "/state.sqlite", kind)
        let status = try await device.run(["status"])
        #expect(!status.stdout.contains("interrupted") && !status.stderr.contains("interrupted"), "\(status.stdout)\(status.stderr)")
        let repair = try await device.run(["repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(!repair.stderr.contains("rolled back") && !repair.stdout.contains("rolled back"), "\(repair.stderr)")
        #expect(repair.stderr.contains("rebuilt the state database"), "\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: device.storage + "/store/regions/europe/ch/zh/tiles.db"))
        #expect(FileManager.default.fileExists(atPath: device.storage + "/manifest.json"))
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
        #expect(try await device.run(["regions", "--json"]).stdout.split(separator: "\n").count == StoreFixture.allRegions.count)
    }

    /// With the image offered, repair must still rebuild from what is installed: re-installing the image
    /// would bring back a region the user deleted (and lose one downloaded at run time).
    @Test(arguments: [Blank.emptyFile, .freshSchema])
    func aBlankStateWithTheImageOfferedKeepsWhatIsInstalled(_ kind: Blank) async throws {
        let device = Device()
        let image = StoreFixture.shared.imageFolder
        #expect(try await device.run(["install", "--image", image]).status == 0)
        let delete = try await device.run(["delete", "europe/ch/be/thun"])
        #expect(delete.status == 0, "\(delete.stdout)\(delete.stderr)")
        let before = try await device.run(["regions", "--json"]).stdout
        try Self.blank(device.storage + "/state.sqlite", kind)
        let repair = try await device.run(["repair", "--image", image])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(!repair.stderr.contains("re-install") && repair.stderr.contains("rebuilt the state database"), "\(repair.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store/regions/europe/ch/be/thun/tiles.db"))
        #expect(try await device.run(["regions", "--json"]).stdout == before)
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }
}
