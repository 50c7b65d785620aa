import Foundation
import TestSupport
import Testing

/// A signed image is checked by stock `minisign -V` (Debian's `minisign`), with the public key
/// file `mappack keygen` writes in minisign's format: no mappack needed on the checking side.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "needs Debian's minisign (make deps)"))
struct MinisignTests {
    @Test func stockMinisignVerifiesASignedImageAndRefusesAnEditedOne() throws {
        let world = try PublishedWorld()
        let keys = world.folder.join("release")
        let keygen = try Tool.mappack(["keygen", "--out", keys])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        #expect(FileManager.default.fileExists(atPath: keys + ".minisign.pub"))
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try world.build(recipe, ["--sign", keys + ".key"])
        #expect(build.status == 0, "\(build.stderr)")
        let manifest = world.out + "/fixture-1.0/manifest.json"

        let good = try Tool.run("/usr/bin/minisign", ["-V", "-p", keys + ".minisign.pub", "-m", manifest])
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        // The trusted comment names the image and its id, signed with the rest.
        #expect(good.stdout.contains("fixture-1.0"), "\(good.stdout)")
        #expect(good.stdout.contains("imageID:"), "\(good.stdout)")

        // Another key, an edited manifest: refused by minisign.
        #expect(try Tool.mappack(["keygen", "--out", world.folder.join("other")]).status == 0)
        let wrongKey = try Tool.run("/usr/bin/minisign", ["-V", "-p", world.folder.join("other.minisign.pub"), "-m", manifest])
        #expect(wrongKey.status != 0)
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "\"name\":\"fixture\"", with: "\"name\":\"fixturX\"").write(
            toFile: manifest, atomically: true, encoding: .utf8)
        let edited = try Tool.run("/usr/bin/minisign", ["-V", "-p", keys + ".minisign.pub", "-m", manifest])
        #expect(edited.status != 0)
    }

    /// The minisign files of one key and one image are the same bytes every time (reproducible
    /// builds), and a build with the signature still verifies with mappack's own key.
    @Test func minisignFilesAreReproducibleAndRecreatedFromThePrivateKey() throws {
        let world = try PublishedWorld()
        let keys = world.folder.join("release")
        #expect(try Tool.mappack(["keygen", "--out", keys]).status == 0)
        let publicFile = try String(contentsOfFile: keys + ".minisign.pub", encoding: .utf8)
        #expect(publicFile.hasPrefix("untrusted comment: minisign public key "))
        // `--from` writes the public files again from the private key alone (minisign -R's job).
        let again = world.folder.join("again")
        let recreate = try Tool.mappack(["keygen", "--from", keys + ".key", "--out", again])
        #expect(recreate.status == 0, "\(recreate.stderr)")
        #expect(try String(contentsOfFile: again + ".minisign.pub", encoding: .utf8) == publicFile)
        #expect(try String(contentsOfFile: again + ".pub", encoding: .utf8) == String(contentsOfFile: keys + ".pub", encoding: .utf8))
        #expect(!FileManager.default.fileExists(atPath: again + ".key"))

        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe, ["--sign", keys + ".key"]).status == 0)
        let first = try Data(contentsOf: URL(fileURLWithPath: world.out + "/fixture-1.0/manifest.json.minisig"))
        #expect(try world.build(recipe, ["--sign", keys + ".key", "--force"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: world.out + "/fixture-1.0/manifest.json.minisig")) == first)
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0", "--trust", keys + ".pub"]).status == 0)
    }
}
