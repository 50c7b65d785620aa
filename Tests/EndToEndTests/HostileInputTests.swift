import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// A catalog with one region whose only bundle is `archive`, written by hand.
func hostileCatalog(_ archive: String, in folder: TemporaryFolder, declaredUnpacked: Int64 = 1 << 20) throws -> String {
    let (digest, size) = try SHA256.digestOfFile(archive)
    let hex = digest.hex
    try FileManager.default.createDirectory(atPath: folder.join("cat/b"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: archive, toPath: folder.join("cat/b/\(hex).tar.zst"))
    let json = """
        {"format":"mappack-catalog/1","catalog":"evil","mapVersion":"1.0","regions":[
          {"id":"evil","parent":null,"names":{"en":"Evil"},"bundles":["sha256:\(hex)"]}],
         "bundles":{"sha256:\(hex)":{"url":"b/\(hex).tar.zst","size":\(size),"unpackedSize":\(declaredUnpacked),"files":3}}}
        """
    try Data(json.utf8).write(to: URL(fileURLWithPath: folder.join("cat/catalog.json")))
    try Data("name: evil\ncatalog: cat/catalog.json\nregions:\n  include: [evil]\n".utf8).write(to: URL(fileURLWithPath: folder.join("evil.yaml")))
    return "sha256:" + hex
}

@Suite struct HostileInputTests {
    @Test(arguments: ["dotdot", "symlink", "bomb", "window31"])
    func buildRejectsHostileBundleNamingBundleRegionAndEntry(_ name: String) throws {
        let folder = TemporaryFolder("hostile-build")
        let digest = try hostileCatalog(HostileArchives.path(name), in: folder)
        let result = try Tool.mappack(["build", folder.join("evil.yaml"), "--cache", folder.join("cache"), "--out", folder.join("Output")])
        #expect(result.status == 1)
        #expect(result.stderr.contains(digest) && result.stderr.contains("evil"), "\(result.stderr)")
        let output = (try? FileManager.default.contentsOfDirectory(atPath: folder.join("Output"))) ?? []
        #expect(output.isEmpty, "\(output)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("evil-dotdot.txt")))
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/evil-dotdot.txt")))
    }

    static let malformedRecipes: [(String, String, String)] = [
        ("not yaml", "name: [unclosed\n", "r.yaml:2:1"),
        ("wrong type", "name: x\ncatalog: c.json\nregions: [a, b]\n", "r.yaml:3:10"),
        ("missing include", "name: x\ncatalog: c.json\nregions:\n  exclude: [a]\n", "regions.include"),
        ("huge number", "name: x\ncatalog: c.json\nregions:\n  include: [a]\ntarget:\n  capacity: 99999999999999999999999\n", "r.yaml:6:13"),
        (
            "deep nesting",
            "name: x\ncatalog: c.json\nregions:\n  include: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "\n",
            "nesting deeper"
        ),
        (
            "alias bomb",
            "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
            "r.yaml"
        ),
        (
            "unknown nested key", "name: x\ncatalog: c.json\nregions:\n  include: [a]\ntarget:\n  blocksize: 4096\n",
            "r.yaml:6:3: unknown key 'target.blocksize'; did you mean 'target.blockSize'?"
        ),
    ]

    @Test(arguments: 0..<malformedRecipes.count)
    func malformedRecipeExitsTwoWithLocation(_ index: Int) throws {
        let (_, text, needle) = HostileInputTests.malformedRecipes[index]
        let folder = TemporaryFolder("bad-recipe")
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.join("r.yaml")))
        let result = try Tool.mappack(["plan", "r.yaml"], in: folder.path)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(needle), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("crashed"))
    }

    static let malformedCatalogs: [(String, String)] = [
        ("{not json", "catalog.json"),
        ("[1,2,3]", "catalog.json"),
        ("{\"format\":\"mappack-catalog/9\",\"x\":1}", "mappack-catalog/9"),
        (
            "{\"format\":\"mappack-catalog/1\",\"catalog\":\"c\",\"mapVersion\":\"1\",\"regions\":[{\"id\":\"a\",\"parent\":null,\"names\":{\"en\":\"A\"},\"bundles\":[]}],\"bundles\":{\"sha256:zz\":{}}}",
            "sha256:zz"
        ),
        (
            "{\"format\":\"mappack-catalog/1\",\"catalog\":\"c\",\"mapVersion\":\"1\",\"regions\":[{\"id\":\"a\",\"parent\":null,\"names\":{\"en\":\"A\"},\"bundles\":5}],\"bundles\":{}}",
            "regions[0].bundles"
        ),
        (
            "{\"format\":\"mappack-catalog/1\",\"catalog\":\"c\",\"mapVersion\":\"1\",\"regions\":[{\"id\":\"a\",\"parent\":null,\"names\":{\"en\":\"A\"},\"bundles\":[]}],\"bundles\":{\"sha256:\(String(repeating: "a", count: 64))\":{\"url\":\"x\",\"size\":99999999999999999999999,\"unpackedSize\":1}}}",
            "catalog.json"
        ),
        (String(repeating: "[", count: 100_000), "catalog.json"),
    ]

    @Test(arguments: 0..<malformedCatalogs.count)
    func malformedCatalogExitsTwoNamingTheProblem(_ index: Int) throws {
        let (text, needle) = HostileInputTests.malformedCatalogs[index]
        let folder = TemporaryFolder("bad-catalog")
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        let result = try Tool.mappack(["regions", folder.join("catalog.json")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(needle), "\(result.stderr)")
        #expect(!result.stderr.contains("crashed"))
    }

    @Test func manifestWithUnknownMajorIsRefused() throws {
        let folder = TemporaryFolder("bad-manifest")
        try Data("{\"format\":\"mappack-image/7\"}".utf8).write(to: URL(fileURLWithPath: folder.join("manifest.json")))
        let result = try Tool.mappack(["verify", folder.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("mappack-image/7"), "\(result.stderr)")
    }
}
