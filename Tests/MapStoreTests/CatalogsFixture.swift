import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// A second catalog for a store beside the world of `UpdateFixture`: `japan`, with its own regions
/// (`japan`, `japan/tokyo`, `japan/osaka`), published in two versions (Tokyo's data changes in the
/// second), and `clash`, a catalog that offers the world's `europe` again. Built once per test process.
final class CatalogsFixture: @unchecked Sendable {
    static let shared = CatalogsFixture()

    /// The shared fixture, built on a thread of its own on first use.
    static func ready() async throws -> CatalogsFixture { try await offPool { CatalogsFixture.shared } }

    let folder = TemporaryFolder("store-catalogs")
    static let japanOld = MapVersion("2026.10.0")
    static let japanNew = MapVersion("2026.11.5")
    /// Served root: `japan-2026.10.0/`, `japan-2026.11.5/`, `japan-2026.11.0/`, `japan-2026.12.0/` and `clash/`.
    var served: String { folder.join("served") }
    static let japanRegions = CatalogSourceFixture.japanRegions.map { RegionID($0) }

    private init() {
        do {
            for version in [CatalogsFixture.japanOld, CatalogsFixture.japanNew] {
                let source = folder.join("japan-src-\(version)")
                try CatalogSourceFixture.writeJapan(to: source, version: version.rawValue, tokyoChanged: version == CatalogsFixture.japanNew)
                let publish = try Tool.mappack(["publish", source, "--out", served + "/japan-\(version)"])
                precondition(publish.status == 0, publish.stderr)
            }
            // Japan at the world's first version too (`UpdateFixture.oldVersion`): a store that takes any
            // catalog of its version for its own would keep this one in the world's place.
            let same = folder.join("japan-src-\(UpdateFixture.oldVersion)")
            try CatalogSourceFixture.writeJapan(to: same, version: UpdateFixture.oldVersion.rawValue, tokyoChanged: false)
            let samePublish = try Tool.mappack(["publish", same, "--out", served + "/japan-\(UpdateFixture.oldVersion)"])
            precondition(samePublish.status == 0, samePublish.stderr)
            // Japan at the world's new version (`UpdateFixture.newVersion`, Tokyo changed): two catalogs
            // offering the same version string, whose automatic updates are decided each on its own.
            let newer = folder.join("japan-src-\(UpdateFixture.newVersion)")
            try CatalogSourceFixture.writeJapan(to: newer, version: UpdateFixture.newVersion.rawValue, tokyoChanged: true)
            let newerPublish = try Tool.mappack(["publish", newer, "--out", served + "/japan-\(UpdateFixture.newVersion)"])
            precondition(newerPublish.status == 0, newerPublish.stderr)
            try CatalogSourceFixture.writeClash(to: folder.join("clash-src"))
            let publish = try Tool.mappack(["publish", folder.join("clash-src"), "--out", served + "/clash"])
            precondition(publish.status == 0, publish.stderr)
        } catch {
            preconditionFailure("catalogs fixture: \(error)")
        }
    }

    /// The `japan` catalog of `version` on `server`.
    func japanURL(_ version: MapVersion, on server: NginxServer) -> URL {
        URL(string: "japan-\(version)/catalog.json", relativeTo: server.baseURL)!.absoluteURL
    }

    /// The `clash` catalog on `server`.
    func clashURL(on server: NginxServer) -> URL { URL(string: "clash/catalog.json", relativeTo: server.baseURL)!.absoluteURL }
}
