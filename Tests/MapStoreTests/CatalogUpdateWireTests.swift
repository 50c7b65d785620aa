import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// What an update check costs on the wire, counted by a real nginx on 127.0.0.1 (`$bytes_sent`,
/// headers included): with nothing new, the conditional GET of `catalog.json.timestamp` answered
/// `304` (at most 1 KiB); with a new version, the timestamp, the compressed catalog and its signature.
@Suite struct CatalogUpdateWireTests {
    @Test func checkWithNothingNewCostsAt304AndANewVersionTheCompressedCatalog() async throws {
        let setup = try await SignedCatalogTests.Setup()
        let folder = TemporaryFolder("wire")
        let site = folder.join("www/world")
        try FileManager.default.createDirectory(atPath: folder.join("www"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: setup.sets.served + "/ts7", toPath: site)
        let nginx = try NginxServer(root: folder.join("www"))
        let url = nginx.baseURL.appendingPathComponent("world/catalog.json")
        let store = try await setup.open()

        _ = try await store.checkForUpdate(catalog: url)
        let first = nginx.wireLog()
        #expect(first.map(\.path) == ["/world/catalog.json.timestamp", "/world/catalog.json.zst", "/world/catalog.json.sig"])

        _ = try await store.checkForUpdate(catalog: url)
        let nothingNew = Array(nginx.wireLog().dropFirst(first.count))
        #expect(nothingNew.map(\.path) == ["/world/catalog.json.timestamp"])
        #expect(nothingNew.map(\.status) == [304])
        #expect(nothingNew.reduce(0) { $0 + $1.bytes } <= 1024, "\(nothingNew)")

        try FileManager.default.removeItem(atPath: site)
        try FileManager.default.copyItem(atPath: setup.sets.served + "/ts9", toPath: site)
        // nginx's ETag is the file's mtime and size: a publish an hour later, as a real one would be
        // (copyItem keeps the fixture's mtime, and both fixtures were published within a second).
        for name in ["catalog.json.timestamp", "catalog.json.zst", "catalog.json.sig", "catalog.json"] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: site + "/" + name)
        }
        let before = nginx.wireLog().count
        _ = try await store.checkForUpdate(catalog: url)
        let newVersion = Array(nginx.wireLog().dropFirst(before))
        #expect(newVersion.map(\.path) == ["/world/catalog.json.timestamp", "/world/catalog.json.zst", "/world/catalog.json.sig"])
        let size = { (name: String) in try FileManager.default.attributesOfItem(atPath: site + "/" + name)[.size] as! Int }
        let bodies = try size("catalog.json.timestamp") + size("catalog.json.zst") + size("catalog.json.sig")
        let wire = newVersion.reduce(0) { $0 + $1.bytes }
        #expect(wire >= bodies && wire <= bodies + 3 * 512, "\(wire) bytes for \(bodies) bytes of bodies")
        #expect(try size("catalog.json.zst") < size("catalog.json"))
        #expect(nginx.requests(path: "/world/catalog.json") == 0)
    }
}
