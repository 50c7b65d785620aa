import Foundation
import MapFormat
import Testing

@Suite struct BundleURLTests {
    static let http = URL(string: "http://maps.example.com:8080/world/2026/catalog.json")!
    static let file = URL(fileURLWithPath: "/srv/world/catalog.json")

    @Test(arguments: ["b/ab/x.tar.zst", "/cdn/x.tar.zst", "http://maps.example.com:8080/other/x.tar.zst", "b/x.tar.zst?v=1", "b/%41.tar.zst"])
    func resolvesBesideTheCatalog(_ relative: String) {
        #expect(BundleURL.resolve(relative, catalog: Self.http) != nil, "\(relative)")
    }

    @Test(arguments: [
        "%2e%2e/x.tar.zst", "b/%2E%2E/x", "..%2fx", "%2e%2e%5cx", "http://evil.example.com/x.tar.zst",
        "https://maps.example.com:8080/x", "http://maps.example.com:9090/x", "//evil.example.com/x", "file:///etc/passwd",
        "http://user@maps.example.com:8080/x", "b/%00x", "%zz",
    ])
    func refusesWhatLeavesTheCatalog(_ relative: String) {
        #expect(BundleURL.resolve(relative, catalog: Self.http) == nil, "\(relative)")
    }

    @Test func fileCatalogKeepsBundlesBelowItsFolder() {
        #expect(BundleURL.resolve("b/x.tar.zst", catalog: Self.file)?.path == "/srv/world/b/x.tar.zst")
        #expect(BundleURL.resolve("b/x.tar.zst", catalog: URL(string: "file:///srv//world/./catalog.json")!) != nil)
        #expect(BundleURL.resolve("/etc/passwd", catalog: Self.file) == nil)
        #expect(BundleURL.resolve("file:///etc/passwd", catalog: Self.file) == nil)
        #expect(BundleURL.resolve("http://x/b.tar.zst", catalog: Self.file) == nil)
    }
}
