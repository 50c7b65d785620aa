import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Two demo-world versions (2026.11.0, and 2026.12.0 with 10% of leaf payloads changed), both
/// published, and a preinstall image of the first; built once per test process.
final class UpdateFixture: @unchecked Sendable {
    static let shared = UpdateFixture()

    /// The shared fixture, built on a thread of its own on first use (not on a cooperative thread).
    static func ready() async throws -> UpdateFixture { try await offPool { UpdateFixture.shared } }

    let folder = TemporaryFolder("store-update")
    static let oldVersion = MapVersion("2026.11.0")
    static let newVersion = MapVersion("2026.12.0")
    /// Served root: `cat-2026.11.0/` and `cat-2026.12.0/`.
    var served: String { folder.join("served") }
    var imageFolder: String { folder.join("old/ch-2026.11.0") }
    func catalogPath(_ version: MapVersion) -> String { served + "/cat-\(version)/catalog.json" }
    func catalogURL(_ version: MapVersion) -> URL { URL(fileURLWithPath: catalogPath(version)) }

    private init() {
        do {
            for version in [UpdateFixture.oldVersion, UpdateFixture.newVersion] {
                let gen = try Tool.run(
                    Tool.path("demo-world"),
                    [
                        "--out", folder.join("src-\(version)"), "--only", "europe/ch", "--scale", "0.2",
                        "--map-version", version.rawValue, "--base-version", UpdateFixture.oldVersion.rawValue,
                        "--change-fraction", "0.1",
                    ])
                precondition(gen.status == 0, gen.stderr)
                let publish = try Tool.mappack(["publish", folder.join("src-\(version)"), "--out", served + "/cat-\(version)"])
                precondition(publish.status == 0, publish.stderr)
            }
            let recipe =
                "name: ch\ncatalog: \(catalogPath(UpdateFixture.oldVersion))\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n"
            try Data(recipe.utf8).write(to: URL(fileURLWithPath: folder.join("ch.yaml")))
            let build = try Tool.mappack(
                ["build", folder.join("ch.yaml"), "--cache", folder.join("cache"), "--out", folder.join("old")],
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            precondition(build.status == 0, build.stderr)
        } catch {
            preconditionFailure("update fixture: \(error)")
        }
    }

    var image: PreinstalledImage { PreinstalledImage(url: URL(fileURLWithPath: imageFolder)) }

    /// Regions in the old image.
    var manifestRegionCount: Int {
        ((try? ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: imageFolder + "/manifest.json")), file: "manifest.json")) ?? nil)?
            .regions.count ?? -1
    }

    func catalog(_ version: MapVersion) throws -> Catalog {
        try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: catalogURL(version)))
    }

    /// Bundles (digest → catalog info) the new version's installed regions need that the old image lacks.
    func changedBundles() throws -> [BundleDigest: BundleInfo] {
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: imageFolder + "/manifest.json")), file: "manifest.json")
        let old = Set(manifest.bundles.map(\.digest))
        let new = try catalog(UpdateFixture.newVersion)
        let installed = Set(manifest.regions.map(\.id))
        var out: [BundleDigest: BundleInfo] = [:]
        for region in new.regions where installed.contains(region.id) {
            for digest in region.bundles where !old.contains(digest) { out[digest] = new.bundles[digest] }
        }
        return out
    }

    /// The new version's catalog as `name` on `server`, every bundle's first request sending half
    /// its bytes and then holding the rest until the client goes away: an update is always
    /// mid-fetch when it is paused or cancelled, however loaded the machine (a trickle that ended
    /// after 6 s let a slow pause find every bundle fetched), and the next request for a bundle
    /// comes at full speed.
    func tricklingCatalog(_ name: String, on server: FaultServer) throws -> URL {
        _ = try writeCatalog(UpdateFixture.newVersion, as: name) { catalog in
            for key in catalog.bundles.keys { catalog.bundles[key]!.url += "?fault=hold&after=\(catalog.bundles[key]!.size / 2)&times=1" }
        }
        return server.url("cat-\(UpdateFixture.newVersion)/" + name)
    }

    /// Writes a copy of `version`'s catalog beside it as `name`, with `edit` applied.
    func writeCatalog(_ version: MapVersion, as name: String, edit: (inout Catalog) -> Void) throws -> URL {
        var catalog = try self.catalog(version)
        edit(&catalog)
        let path = served + "/cat-\(version)/" + name
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: path))
        return URL(fileURLWithPath: path)
    }
}

/// Polls `condition` every 20 ms for up to `seconds`, sleeping without holding a cooperative thread
/// (the downloads being watched need those threads).
func eventually(_ seconds: Double = 10, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

/// Bytes in the storage's partial downloads.
func partialBytes(_ storage: String) -> Int64 {
    let folder = storage + "/downloads/partial"
    return ((try? DirectoryWalker.walk(folder)) ?? []).filter { $0.isRegular && $0.relativePath.hasSuffix(".part") }.reduce(0) { $0 + $1.size }
}
