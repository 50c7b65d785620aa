import Foundation
import TestSupport
import Testing

/// The `erofs` output: a device partition image made with Debian's mkfs.erofs, a dm-verity hash
/// tree appended by veritysetup, and a signed sidecar. Checked by the stock tools (veritysetup,
/// minisign, the kernel's erofs through a loop mount) and by `mappack verify`.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/mkfs.erofs")
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/veritysetup"),
        "needs Debian's erofs-utils and cryptsetup-bin (make deps)"))
struct ErofsOutputTests {
    /// A signed build of the fixture with the folder and the partition image.
    struct Built {
        let world: PublishedWorld
        let keys: String
        var erofs: String { world.out + "/fixture-1.0.erofs" }
        var sidecar: String { erofs + ".verity.json" }
        var folder: String { world.out + "/fixture-1.0" }

        init() throws {
            world = try PublishedWorld()
            keys = world.folder.join("release")
            let keygen = try Tool.mappack(["keygen", "--out", keys])
            precondition(keygen.status == 0, keygen.stderr)
        }

        func build(_ extra: [String] = []) throws -> Tool.Result {
            let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory, erofs]"))
            return try world.build(recipe, ["--sign", keys + ".key"] + extra)
        }

        /// The sidecar's `verity` object.
        func verity() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sidecar))) as? [String: Any]
            return try #require(object?["verity"] as? [String: Any])
        }

        /// `veritysetup verify` of the image against the sidecar's root hash and parameters.
        func veritysetupVerify() throws -> Tool.Result {
            let verity = try verity()
            let options = [
                "--no-superblock", "--hash=\(verity["hashAlgorithm"]!)", "--data-block-size=\(verity["dataBlockSize"]!)",
                "--hash-block-size=\(verity["hashBlockSize"]!)", "--data-blocks=\(verity["dataBlocks"]!)",
                "--hash-offset=\(verity["hashOffset"]!)", "--salt=\(verity["salt"]!)",
            ]
            return try Tool.run("/usr/sbin/veritysetup", ["verify", erofs, erofs, "\(verity["rootHash"]!)"] + options, timeout: 300)
        }

        /// Flips one byte of the image at `offset`.
        func flipByte(at offset: UInt64) throws {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: erofs))
            defer { try? handle.close() }
            try handle.seek(toOffset: offset)
            let byte = try #require(try handle.read(upToCount: 1)).first!
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data([byte ^ 0x5A]))
        }
    }

    @Test func partitionImageIsReproducibleAndVerifiedByStockTools() throws {
        let built = try Built()
        let first = try built.build()
        #expect(first.status == 0, "\(first.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: built.erofs))
        let sidecar = try Data(contentsOf: URL(fileURLWithPath: built.sidecar))
        let signature = try Data(contentsOf: URL(fileURLWithPath: built.sidecar + ".minisig"))
        let again = try built.build(["--force"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: built.erofs)) == bytes, "two builds of one image differ")
        #expect(try Data(contentsOf: URL(fileURLWithPath: built.sidecar)) == sidecar)
        #expect(try Data(contentsOf: URL(fileURLWithPath: built.sidecar + ".minisig")) == signature)

        let verity = try built.verity()
        #expect((verity["hashOffset"] as? Int ?? 0) % 4096 == 0)
        #expect((verity["hashOffset"] as? Int ?? 0) < bytes.count, "the hash tree follows the filesystem")
        let good = try built.veritysetupVerify()
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")

        let minisign = try Tool.run("/usr/bin/minisign", ["-V", "-p", built.keys + ".minisign.pub", "-m", built.sidecar], timeout: 60)
        #expect(minisign.status == 0, "\(minisign.stdout) \(minisign.stderr)")
        #expect(minisign.stdout.contains("fixture-1.0.erofs.verity.json"), "\(minisign.stdout)")

        let verify = try Tool.mappack(["verify", built.erofs, "--trust", built.keys + ".pub"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stdout.contains("sidecar signature ok"), "\(verify.stdout)")

        // Another key does not verify the sidecar.
        #expect(try Tool.mappack(["keygen", "--out", built.world.folder.join("other")]).status == 0)
        let otherKey = try Tool.mappack(["verify", built.erofs, "--trust", built.world.folder.join("other.pub")])
        #expect(otherKey.status == 1, "\(otherKey.stdout) \(otherKey.stderr)")

        // One byte of the filesystem changed: the hash tree no longer matches its root hash.
        try built.flipByte(at: UInt64((verity["hashOffset"] as? Int ?? 8192) / 2))
        let bad = try built.veritysetupVerify()
        #expect(bad.status != 0, "\(bad.stdout)")
        let refused = try Tool.mappack(["verify", built.erofs, "--trust", built.keys + ".pub"])
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("hash tree"), "\(refused.stderr)")
    }

    @Test func aChangedSidecarFailsItsSignature() throws {
        let built = try Built()
        #expect(try built.build().status == 0)
        let text = try String(contentsOfFile: built.sidecar, encoding: .utf8)
        try text.replacingOccurrences(of: "\"mapVersion\":\"1.0\"", with: "\"mapVersion\":\"1.1\"").write(
            toFile: built.sidecar, atomically: true, encoding: .utf8)
        let minisign = try Tool.run("/usr/bin/minisign", ["-V", "-p", built.keys + ".minisign.pub", "-m", built.sidecar], timeout: 60)
        #expect(minisign.status != 0)
        let verify = try Tool.mappack(["verify", built.erofs, "--trust", built.keys + ".pub"])
        #expect(verify.status == 1, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stderr.contains(".minisig does not match"), "\(verify.stderr)")
    }

    /// A sidecar that is a link or too large is bad input like any other unreadable sidecar (exit 2,
    /// naming it): the link is not followed (it could point anywhere), a large file is not read.
    @Test func aLinkedOrOversizedSidecarIsBadInput() throws {
        let built = try Built()
        #expect(try built.build().status == 0)
        let elsewhere = built.world.folder.join("elsewhere.json")
        try FileManager.default.moveItem(atPath: built.sidecar, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: built.sidecar, withDestinationPath: elsewhere)
        let linked = try Tool.mappack(["verify", built.erofs])
        #expect(linked.status == 2, "\(linked.stdout) \(linked.stderr)")
        #expect(linked.stderr.contains(built.sidecar) && linked.stderr.contains("symbolic link"), "\(linked.stderr)")
        try FileManager.default.removeItem(atPath: built.sidecar)
        try Data(repeating: 0x20, count: 1 << 20).write(to: URL(fileURLWithPath: built.sidecar))
        let large = try Tool.mappack(["verify", built.erofs])
        #expect(large.status == 2, "\(large.stdout) \(large.stderr)")
        #expect(large.stderr.contains(built.sidecar), "\(large.stderr)")
    }

    @Test(.enabled(if: LoopMount.canMount, "mounting the partition image needs root"))
    func mountedPartitionImageHoldsTheFolderImage() throws {
        let built = try Built()
        let result = try built.build()
        #expect(result.status == 0, "\(result.stderr)")
        let mount = try LoopMount(image: built.erofs, at: built.world.folder.join("mnt"), type: "erofs", options: ["ro"])
        defer { mount.unmount() }
        let inside = try Data(contentsOf: URL(fileURLWithPath: mount.point + "/manifest.json"))
        #expect(inside == (try Data(contentsOf: URL(fileURLWithPath: built.folder + "/manifest.json"))))
        let diff = try Tool.run("/usr/bin/diff", ["-r", built.folder, mount.point], timeout: 120)
        #expect(diff.status == 0, "\(diff.stdout) \(diff.stderr)")
        // The mounted image is an image folder `mappack verify` accepts, signature and all.
        let verify = try Tool.mappack(["verify", mount.point, "--trust", built.keys + ".pub"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    /// Issue 44: the mounted partition image is a store's read-only base, used in place by the real
    /// binary: signature and every file checked, nothing copied, the files read from the mount.
    @Test(.enabled(if: LoopMount.canMount, "mounting the partition image needs root"))
    func mountedPartitionImageIsUsedInPlace() throws {
        let built = try Built()
        let result = try built.build()
        #expect(result.status == 0, "\(result.stderr)")
        let mount = try LoopMount(image: built.erofs, at: built.world.folder.join("mnt"), type: "erofs", options: ["ro"])
        defer { mount.unmount() }
        let storage = built.world.folder.join("storage")
        let folders = ["--storage", storage, "--cache", built.world.folder.join("device-cache"), "--trust", built.keys + ".pub"]
        let install = try Tool.mappack(["store", "install", "--image", mount.point, "--in-place"] + folders)
        #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
        let written = try FileManager.default.subpathsOfDirectory(atPath: storage + "/store")
        #expect(written.isEmpty, "\(written)")
        #expect(!FileManager.default.fileExists(atPath: storage + "/manifest.json"))
        let verify = try Tool.mappack(["store", "verify"] + folders)
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let regions = try Tool.mappack(["store", "regions"] + folders)
        #expect(regions.status == 0 && regions.stdout.contains("read-only base"), "\(regions.stdout) \(regions.stderr)")
        let checked = try Tool.mappack(["verify", storage, "--trust", built.keys + ".pub"])
        #expect(checked.status == 0, "\(checked.stdout) \(checked.stderr)")
    }

    @Test func missingMkfsErofsNamesThePackageToInstall() throws {
        let built = try Built()
        let recipe = try built.world.recipe(SourceFixture.recipe(catalog: built.world.catalog, formats: "[erofs]"))
        // Without /usr/bin on PATH mappack finds no mkfs.erofs (it adds only the sbin folders).
        let result = try Tool.mappack(
            ["build", recipe, "--cache", built.world.cache, "--out", built.world.out], environment: ["PATH": "/nonexistent"])
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("mkfs.erofs is not installed"), "\(result.stderr)")
        #expect(result.stderr.contains("erofs-utils"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: built.erofs))
    }

    @Test func misspelledFormatIsABadRecipe() throws {
        let built = try Built()
        let recipe = try built.world.recipe(SourceFixture.recipe(catalog: built.world.catalog, formats: "[erof]"))
        let result = try built.world.build(recipe)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("did you mean 'erofs'"), "\(result.stderr)")
    }
}
