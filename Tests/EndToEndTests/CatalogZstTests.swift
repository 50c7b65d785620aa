import Foundation
import TestSupport
import Testing

/// Issue 43 (Network): a build takes `catalog.json.zst` when the server offers one that is bound to the
/// catalog: by the timestamp that names it (before), or by the signature's SHA-256 of the catalog when
/// there is no timestamp. A stale `.zst` (other bytes than the signed catalog) is set aside with a
/// warning and the plain catalog fetched; an unsigned catalog without a timestamp is fetched plain, its
/// `.zst` never asked for (nothing binds it to the plain bytes).
@Suite struct CatalogZstTests {
    /// A signed publish of the demo world whose server has no `catalog.json.timestamp` (an older
    /// publish, or a server that dropped it; kept with `keepingTimestamp`), and the public key to trust.
    struct SignedWithoutTimestamp {
        let world: ServedWorld
        let root: String
        let publicKey: String

        init(keepingTimestamp: Bool = false) throws {
            world = try ServedWorld()
            let key = world.folder.join("release")
            let keygen = try Tool.mappack(["keygen", "--out", key])
            try #require(keygen.status == 0, "\(keygen.stderr)")
            root = world.folder.join("signed")
            let publish = try Tool.mappack(["publish", world.folder.join("src"), "--out", root, "--sign", key + ".key"])
            try #require(publish.status == 0, "\(publish.stderr)")
            if !keepingTimestamp { try FileManager.default.removeItem(atPath: root + "/catalog.json.timestamp") }
            try #require(FileManager.default.fileExists(atPath: root + "/catalog.json.zst"))
            publicKey = key + ".pub"
        }

        /// A build of the world from the catalog at `url`, trusting the key.
        func build(_ url: String) throws -> Tool.Result {
            try world.build(try world.recipe(catalog: url), cache: "cache", out: "out", extra: ["--trust", publicKey])
        }

        func size(_ name: String) throws -> Int {
            try #require((try FileManager.default.attributesOfItem(atPath: root + "/" + name))[.size] as? Int)
        }
    }

    @Test func aSignedCatalogWithoutATimestampIsFetchedAsItsZst() throws {
        let signed = try SignedWithoutTimestamp()
        let nginx = try NginxServer(root: signed.root)
        defer { nginx.stop() }
        let recipe = try signed.world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let build = try signed.world.build(recipe, cache: "cache", out: "out", extra: ["--trust", signed.publicKey])
        #expect(build.status == 0, "\(build.stderr)")
        let zstSize = try signed.size("catalog.json.zst")
        #expect(nginx.bytesSent(path: "/catalog.json.zst") == zstSize, "\(nginx.wireLog())")
        #expect(nginx.bytesSent(path: "/catalog.json") == 0, "the plain catalog was downloaded: \(nginx.wireLog())")
        #expect(!build.stderr.contains("warning"), "\(build.stderr)")
        #expect(try Tool.mappack(["verify", signed.world.folder.join("out/net-2026.11.0")]).status == 0)
    }

    /// A `.zst` that decodes to other bytes than the signed catalog (here an edited copy, compressed by
    /// the zstd tool) is not built from: a warning names it, the plain catalog comes instead, the build
    /// succeeds on the signed bytes.
    @Test func aStaleZstBesideASignedCatalogIsSetAsideWithAWarning() throws {
        let signed = try SignedWithoutTimestamp()
        let plain = try Data(contentsOf: URL(fileURLWithPath: signed.root + "/catalog.json"))
        let edited = signed.world.folder.join("edited.json")
        try (plain + Data(" ".utf8)).write(to: URL(fileURLWithPath: edited))
        let zstd = try Tool.run("/usr/bin/zstd", ["-q", "-f", edited, "-o", signed.root + "/catalog.json.zst"])
        try #require(zstd.status == 0, "\(zstd.stderr)")
        let nginx = try NginxServer(root: signed.root)
        defer { nginx.stop() }
        let recipe = try signed.world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let build = try signed.world.build(recipe, cache: "cache", out: "out", extra: ["--trust", signed.publicKey])
        #expect(build.status == 0, "\(build.stderr)")
        #expect(
            build.stderr.contains("warning: catalog: \(nginx.baseURL.appendingPathComponent("catalog.json.zst").absoluteString) is not the catalog"),
            "\(build.stderr)")
        #expect(nginx.bytesSent(path: "/catalog.json") == plain.count, "\(nginx.wireLog())")
    }

    /// The `.zst` goes through the retry policy as the plain catalog does: its first request answers 503.
    @Test func aPassing503OnTheZstIsRetried() throws {
        let signed = try SignedWithoutTimestamp()
        let server = try FaultServer(root: signed.root)
        defer { server.stop() }
        let recipe = try signed.world.recipe(
            catalog: server.url("catalog.json").absoluteString + "?fault=status&code=503&retry-after=1&times=1")
        let build = try signed.world.build(recipe, cache: "cache", out: "out", extra: ["--trust", signed.publicKey])
        #expect(build.status == 0, "\(build.stderr)")
        let zst = try server.served("/catalog.json.zst")
        let zstSize = try signed.size("catalog.json.zst")
        #expect(zst.requests == 2 && zst.bytes == zstSize, "\(zst)")
        #expect(try server.served("/catalog.json").bytes == 0, "the plain catalog was downloaded")
    }

    /// Beside a timestamp that names it, a `.zst` that is not the one named (damaged on a mirror:
    /// garbage, empty, cut short) is set aside as a missing one is: a warning names its URL, and the
    /// plain catalog, checked against the timestamp's digest, is built from.
    @Test(arguments: ["garbage", "empty", "cut"]) func aDamagedZstBesideATimestampFallsBackToThePlainCatalog(_ damage: String) throws {
        let signed = try SignedWithoutTimestamp(keepingTimestamp: true)
        let root = signed.root
        let zst = URL(fileURLWithPath: root + "/catalog.json.zst")
        let good = try Data(contentsOf: zst)
        switch damage {
        case "garbage": try Data(repeating: 0x5A, count: good.count).write(to: zst)
        case "empty": try Data().write(to: zst)
        default: try good.prefix(good.count / 2).write(to: zst)
        }
        let nginx = try NginxServer(root: root)
        defer { nginx.stop() }
        let url = nginx.baseURL.appendingPathComponent("catalog.json").absoluteString
        let build = try signed.build(url)
        #expect(build.status == 0, "\(damage): \(build.stderr)")
        #expect(build.stderr.contains("warning: catalog: \(url).zst"), "\(damage): \(build.stderr)")
        #expect(nginx.bytesSent(path: "/catalog.json") > 0, "\(nginx.wireLog())")
    }

    /// A server that refuses the `.zst` for good (403) but serves the plain catalog: the build
    /// takes the plain one, with a warning naming the `.zst`'s URL.
    @Test func aRefusedZstFallsBackToThePlainCatalog() throws {
        let signed = try SignedWithoutTimestamp(keepingTimestamp: true)
        let server = try FaultServer(root: signed.root)
        defer { server.stop() }
        let url = server.url("catalog.json").absoluteString + "?fault=status&code=403&only=.zst"
        let build = try signed.build(url)
        #expect(build.status == 0, "\(build.stderr)")
        #expect(build.stderr.contains("warning: catalog: \(server.url("catalog.json.zst").absoluteString)"), "\(build.stderr)")
        #expect(try server.served("/catalog.json").bytes > 0)
    }

    /// A signature that keeps failing (500 after every retry) is the URL the error names, not the
    /// catalog beside it.
    @Test func aLastingFailureOfTheSignatureNamesTheSignature() throws {
        let signed = try SignedWithoutTimestamp(keepingTimestamp: true)
        let server = try FaultServer(root: signed.root)
        defer { server.stop() }
        let url = server.url("catalog.json").absoluteString + "?fault=status&code=500&retry-after=0&only=.sig"
        let build = try signed.build(url)
        #expect(build.status == 1, "\(build.stderr)")
        #expect(build.stderr.contains("error: catalog \(server.url("catalog.json.sig").absoluteString)"), "\(build.stderr)")
        #expect(try server.served("/catalog.json.sig").requests == 5)
    }

    /// Unsigned and without a timestamp: the plain catalog, the `.zst` not even asked for.
    @Test func anUnsignedCatalogWithoutATimestampIsFetchedPlain() throws {
        let world = try ServedWorld()
        try #require(FileManager.default.fileExists(atPath: world.published + "/catalog.json.zst"))
        let nginx = try NginxServer(root: world.published)
        defer { nginx.stop() }
        let recipe = try world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let build = try world.build(recipe, cache: "cache", out: "out")
        #expect(build.status == 0, "\(build.stderr)")
        #expect(nginx.requests(path: "/catalog.json.zst") == 0, "\(nginx.wireLog())")
        #expect(nginx.bytesSent(path: "/catalog.json") > 0, "\(nginx.wireLog())")
    }
}
