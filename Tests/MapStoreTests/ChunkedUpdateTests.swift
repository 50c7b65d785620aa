import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// `MapStore.update` over catalogs published with `--chunked` (issue 21): a changed bundle whose
/// previous version is installed comes as the chunks the device lacks, by range through nginx,
/// never as the whole `.tar.zst`; the updated store verifies in full.
@Suite struct ChunkedUpdateTests {
    /// Two versions of a small world published with `--chunked` under `served/cat-VERSION`, and the old image built from the first.
    /// `publishEnvironment` is the publisher's (`MAPPACK_ZCK_CHUNK`).
    static func world(publishEnvironment: [String: String] = [:]) async throws -> (folder: TemporaryFolder, served: String) {
        let folder = TemporaryFolder("store-chunked")
        let served = folder.join("served")
        try await offPool {
            for version in ["2026.11.0", "2026.12.0"] {
                let gen = try Tool.run(
                    Tool.path("demo-world"),
                    [
                        "--out", folder.join("src-\(version)"), "--only", "europe/ch", "--scale", "10",
                        "--map-version", version, "--base-version", "2026.11.0", "--change-fraction", "0.2",
                        "--edit-fraction", "0.02",
                    ])
                #expect(gen.status == 0, "\(gen.stderr)")
                let publish = try Tool.mappack(
                    ["publish", folder.join("src-\(version)"), "--out", served + "/cat-\(version)", "--chunked"], environment: publishEnvironment)
                #expect(publish.status == 0, "\(publish.stderr)")
            }
            let recipe =
                "name: ch\ncatalog: \(served)/cat-2026.11.0/catalog.json\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n"
            try Data(recipe.utf8).write(to: URL(fileURLWithPath: folder.join("ch.yaml")))
            let build = try Tool.mappack(
                ["build", folder.join("ch.yaml"), "--cache", folder.join("cache"), "--out", folder.join("old")],
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            #expect(build.status == 0, "\(build.stderr)")
        }
        return (folder, served)
    }

    @Test func anUpdateFetchesOnlyTheMissingChunksOfChangedBundles() async throws {
        try await expectOnlyMissingChunks(try await Self.world())
    }

    /// The device cuts and compresses its old files with the chunk size the catalog names, not its
    /// own default (8 KiB): a publisher that chose 4 KiB still gets only the changed chunks fetched
    /// (with the device's own size, no chunk matched and about 89% of the bytes travelled).
    @Test func anUpdateCutsWithTheCatalogsChunkSizeNotTheDevicesDefault() async throws {
        let world = try await Self.world(publishEnvironment: ["MAPPACK_ZCK_CHUNK": "4096"])
        let catalog = try JSONDecoder().decode(
            Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: world.served + "/cat-2026.12.0/catalog.json")))
        #expect(catalog.bundles.values.allSatisfy { $0.chunked?.chunkSize == 4096 && $0.chunked?.level == 6 })
        // Fixed 4 KiB chunks (normalized): about 13% (with the device's own 8 KiB: 89%).
        try await expectOnlyMissingChunks(world, share: 0.3)
    }

    /// The update fetches no changed bundle whole, and less than `share` of their bytes as chunks.
    func expectOnlyMissingChunks(_ world: (folder: TemporaryFolder, served: String), share: Double = 0.10) async throws {
        let (folder, served) = world
        let nginx = try NginxServer(root: served)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(image: PreinstalledImage(url: URL(fileURLWithPath: folder.join("old/ch-2026.11.0"))))
        let catalogURL = URL(string: "cat-2026.12.0/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let info = try await store.checkForUpdate(catalog: catalogURL)
        #expect(info.bundlesToFetch > 0)

        try await store.update(catalog: catalogURL) { _ in }
        #expect(store.mapVersion == MapVersion("2026.12.0"))
        let old = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: served + "/cat-2026.11.0/catalog.json")))
        let new = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: served + "/cat-2026.12.0/catalog.json")))
        let changed = new.bundles.filter { old.bundles[$0.key] == nil }
        #expect(!changed.isEmpty)
        let whole = changed.values.reduce(0) { $0 + nginx.bytesSent(path: "/cat-2026.12.0/" + $1.url) }
        let chunks = changed.values.reduce(0) { $0 + nginx.bytesSent(path: "/cat-2026.12.0/" + ($1.chunked?.url ?? "")) }
        let changedBytes = changed.values.reduce(Int64(0)) { $0 + $1.size }
        #expect(whole == 0, "no changed bundle was downloaded whole (\(whole) bytes)")
        // The header, then every missing chunk in one multi-range request.
        #expect(changed.values.allSatisfy { nginx.requests(path: "/cat-2026.12.0/" + ($0.chunked?.url ?? "")) == 2 })
        // 2% of the records edited: about 6% of the changed bundles' bytes travel with the publisher's
        // per-bundle normalized cuts and its databases cut on their pages (8% with content-defined cuts
        // only, 27% with the first publishers' plain 8 KiB cuts; Benchmarks/HISTORY.md, "Delta updates: measured"). A device
        // that cut the databases by content would find almost none of their chunks.
        #expect(chunks > 0 && Double(chunks) < share * Double(changedBytes), "\(chunks) bytes of chunks for \(changedBytes) bytes of changed bundles")
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try store.regions().allSatisfy { $0.state == .completed && $0.mapVersion == MapVersion("2026.12.0") })
    }

    @Test func aServerThatIgnoresRangeUpdatesWithOneRequestPerChangedBundle() async throws {
        let (folder, served) = try await Self.world()
        // The new catalog's .zck files are served ignoring Range; its .tar.zst files normally.
        let catalogPath = served + "/cat-2026.12.0/catalog.json"
        let text = try String(contentsOfFile: catalogPath, encoding: .utf8).replacingOccurrences(of: ".zck\"", with: ".zck?fault=ignore-range\"")
        try Data(text.utf8).write(to: URL(fileURLWithPath: catalogPath))
        let server = try FaultServer(root: served)
        defer { server.stop() }
        let device = Device()
        let store = try await device.open(image: PreinstalledImage(url: URL(fileURLWithPath: folder.join("old/ch-2026.11.0"))))
        try await store.update(catalog: server.url("cat-2026.12.0/catalog.json")) { _ in }
        #expect(store.mapVersion == MapVersion("2026.12.0"))
        let old = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: served + "/cat-2026.11.0/catalog.json")))
        let new = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: catalogPath)))
        let changed = new.bundles.filter { old.bundles[$0.key] == nil }
        #expect(!changed.isEmpty)
        let stats = try server.stats()
        for bundle in changed.values {
            let zck = "/cat-2026.12.0/" + (bundle.chunked?.url.split(separator: "?").first.map(String.init) ?? "")
            // One answer (the whole .zck), taken as the bundle; the .tar.zst never asked for.
            #expect(stats[zck]?.requests == 1, "\(zck): \(String(describing: stats[zck]))")
            #expect(Int64(stats[zck]?.bytes ?? 0) == bundle.chunked?.size)
            #expect(stats["/cat-2026.12.0/" + bundle.url] == nil)
        }
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try store.regions().allSatisfy { $0.state == .completed && $0.mapVersion == MapVersion("2026.12.0") })
    }
}
