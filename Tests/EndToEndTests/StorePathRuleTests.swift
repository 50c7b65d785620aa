import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// One rule for the store-relative paths a manifest lists: `mappack verify` and `mappack store install`
/// refuse the same paths, with an error naming the path and the manifest, where verify once accepted
/// `a//b` and `a/./b` and the store skipped such a file silently.
@Suite struct StorePathRuleTests {
    /// A built image folder whose manifest lists its first file in a folder with `separator` for each
    /// `/` (the file on disk is where that spelling leads), with the image id made right again.
    static func image(separator: String) throws -> (world: PublishedWorld, image: String, path: String) {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try world.build(recipe)
        #expect(build.status == 0, "\(build.stderr)")
        let image = world.out + "/fixture-1.0"
        let manifest = try world.manifest(image)
        let original = try #require(manifest.files.first { $0.path.string.contains("/") }).path.string
        let edited = original.replacingOccurrences(of: "/", with: separator)
        // No `ImageFile` holds such a path (it is a `StorePath`): the bytes are edited, then sealed again.
        let blank = String(decoding: try manifest.bytesForID(), as: UTF8.self)
            .replacingOccurrences(of: "\"path\":\"\(original)\"", with: "\"path\":\"\(edited)\"")
        let sealed = blank.replacingOccurrences(of: "\"imageID\":\"\"", with: "\"imageID\":\"\(SHA256.hex(Data(blank.utf8)))\"")
        try Data(sealed.utf8).write(to: URL(fileURLWithPath: image + "/manifest.json"))
        return (world, image, edited)
    }

    /// `a//b` and `a/./b`.
    @Test(arguments: ["//", "/./"])
    func verifyAndInstallRefuseTheSamePathNamingIt(_ separator: String) throws {
        let (world, image, path) = try Self.image(separator: separator)
        let verify = try Tool.mappack(["verify", image])
        #expect(verify.status == 2, "\(path): \(verify.stdout) \(verify.stderr)")
        #expect(verify.stderr.contains("'\(path)'") && verify.stderr.contains("manifest.json"), "\(verify.stderr)")

        let storage = world.folder.join("device/maps")
        let install = try Tool.mappack(["store", "install", "--image", image, "--storage", storage, "--cache", world.folder.join("device/cache")])
        // Bad input, as verify says (exit 2): the manifest breaks the format (`MapStoreError.notAnImage`).
        #expect(install.status == 2, "\(path): \(install.stdout) \(install.stderr)")
        #expect(install.stderr.contains("'\(path)'") && install.stderr.contains("manifest.json"), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: storage + "/store"))
    }

    /// What is no image at all — nothing at the path, a folder without a manifest or with one that is
    /// not JSON, a file that is no `.tar.zst` — is bad input to install as to verify: exit 2 naming
    /// the path, nothing installed. A damaged image, whose manifest reads, stays failed work (exit 1,
    /// `invalidImage`), as verify's problems do.
    @Test(arguments: ["missing", "no manifest", "manifest not JSON", "file not an archive"])
    func installOfWhatIsNoImageIsBadInput(_ kind: String) throws {
        let work = TemporaryFolder()
        var offered = work.join("not-an-image")
        switch kind {
        case "missing": break
        case "file not an archive":
            offered += ".tar.zst"
            try Data("no archive".utf8).write(to: URL(fileURLWithPath: offered))
        default:
            try FileManager.default.createDirectory(atPath: offered, withIntermediateDirectories: true)
            if kind == "manifest not JSON" {
                try Data("{not json".utf8).write(to: URL(fileURLWithPath: offered + "/manifest.json"))
            } else {
                // Said to be no image, not an image with a stray entry.
                try Data("x".utf8).write(to: URL(fileURLWithPath: offered + "/tiles.db"))
            }
        }
        let verify = try Tool.mappack(["verify", offered])
        #expect(verify.status == 2, "\(kind): \(verify.stdout) \(verify.stderr)")
        let storage = work.join("device/maps")
        let install = try Tool.mappack(["store", "install", "--image", offered, "--storage", storage, "--cache", work.join("device/cache")])
        #expect(install.status == 2, "\(kind): \(install.stdout) \(install.stderr)")
        #expect(install.stderr.contains("/not-an-image") && install.stderr.contains("not a mappack image"), "\(kind): \(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: storage + "/store"))
    }
}
