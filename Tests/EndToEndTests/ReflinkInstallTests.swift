import Foundation
import TestSupport
import Testing

/// A first-start install that copies (the quick install, the image folder on the storage's
/// filesystem) shares the image's extents on XFS with reflinks instead of writing the bytes again.
@Suite(
    .enabled(if: LoopMount.canMount, "mounting XFS needs root"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.xfs"), "needs Debian's xfsprogs (make deps)"))
struct ReflinkInstallTests {
    @Test func installOnXFSSharesTheImagesExtents() throws {
        let world = try PublishedWorld()
        let mount = try LoopMount.xfs(image: world.folder.join("xfs.img"), at: world.folder.join("mnt"))
        defer { mount.unmount() }
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory]"))
        let build = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", mount.point + "/out"], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(build.status == 0, "\(build.stderr)")
        let image = mount.point + "/out/fixture-1.0"
        let storage = mount.point + "/storage"
        let install = try Tool.mappack(["store", "install", "--image", image, "--storage", storage, "--cache", mount.point + "/cache"])
        #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
        #expect(try Tool.mappack(["verify", storage]).status == 0)

        // Every installed store file with data shares its extents with the image's copy.
        let store = storage + "/store"
        let files = try FileManager.default.subpathsOfDirectory(atPath: store).filter {
            ((try? FileManager.default.attributesOfItem(atPath: store + "/" + $0))?[.size] as? Int ?? 0) > 0
                && !FileManager.default.fileExists(atPath: store + "/" + $0 + "/")
        }
        #expect(!files.isEmpty)
        for file in files {
            let extents = try Tool.run("/usr/sbin/filefrag", ["-v", store + "/" + file], timeout: 60)
            #expect(extents.stdout.contains("shared"), "\(file): \(extents.stdout)")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: store + "/" + file)) == Data(contentsOf: URL(fileURLWithPath: image + "/store/" + file)))
        }
    }
}
