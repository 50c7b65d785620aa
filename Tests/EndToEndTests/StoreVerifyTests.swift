import Foundation
import TestSupport
import Testing

@Suite struct StoreVerifyTests {
    @Test func verifyAcceptsAnInstalledStoreAndNamesADamagedFile() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let storage = world.folder.join("device/maps")
        let cache = world.folder.join("device/cache")
        let install = try Tool.mappack(["store", "install", "--image", world.out + "/fixture-1.0.tar.zst", "--storage", storage, "--cache", cache])
        #expect(install.status == 0, "\(install.stderr)")
        let good = try Tool.mappack(["verify", storage])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("installed store"))
        #expect(try Tool.mappack(["store", "delete", "europe/ch/be/thun", "--storage", storage, "--cache", cache]).status == 0)
        #expect(try Tool.mappack(["verify", storage]).status == 0)

        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: storage + "/store/regions/europe/ch/be/tiles.db"))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0x42, 0x42]))
        try handle.close()
        let bad = try Tool.mappack(["verify", storage])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("regions/europe/ch/be/tiles.db") && bad.stderr.contains("europe/ch/be"), "\(bad.stderr)")
        // repair restores it from the image, after which verify passes again.
        let repair = try Tool.mappack(["store", "repair", "--image", world.out + "/fixture-1.0", "--storage", storage, "--cache", cache, "--full"])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(try Tool.mappack(["verify", storage]).status == 0)
    }

    @Test(arguments: ["image.tar.zst", "folder"])
    func installRefusesImagesNotSignedByATrustedKey(_ form: String) throws {
        let world = try PublishedWorld()
        let keys = world.folder.join("k")
        let other = world.folder.join("o")
        #expect(try Tool.mappack(["keygen", "--out", keys]).status == 0)
        #expect(try Tool.mappack(["keygen", "--out", other]).status == 0)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe, ["--sign", keys + ".key"]).status == 0)
        let image = form == "folder" ? world.out + "/fixture-1.0" : world.out + "/fixture-1.0.tar.zst"
        let refused = try Tool.mappack([
            "store", "install", "--image", image, "--storage", world.folder.join("s1"), "--cache", world.folder.join("c1"), "--trust", other + ".pub",
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("manifest.sig"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.folder.join("s1/store")))
        let accepted = try Tool.mappack([
            "store", "install", "--image", image, "--storage", world.folder.join("s2"), "--cache", world.folder.join("c2"), "--trust", keys + ".pub",
        ])
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }
}
