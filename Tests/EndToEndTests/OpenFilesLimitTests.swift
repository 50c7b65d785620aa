import Foundation
import TestSupport
import Testing

/// A check of a tree holds a bounded number of folders open, whatever the tree's shape. The walk
/// handed each listed folder's descriptor to the files queued behind it, so a tree of many small
/// folders (routing tiles, one or two files per folder) had every folder of the in-flight batches
/// open at once: a 224-file image of 310 folders needed more than 128 descriptors to verify, and
/// a large one up to about 2,900. Under the soft limit of 1,024 open files many systems set, a first
/// start then failed with "opendir failed: Too many open files" and called the image unusable.
@Suite struct OpenFilesLimitTests {
    /// Runs `mappack` with at most `limit` open files (prlimit(1), util-linux).
    static func mappack(limit: Int, _ arguments: [String]) throws -> Tool.Result {
        try Tool.run("/usr/bin/prlimit", ["--nofile=\(limit):\(limit)", Tool.path("mappack")] + arguments)
    }

    @Test func aTreeOfManySmallFoldersIsCheckedAndInstalledUnderALowOpenFilesLimit() throws {
        let folder = TemporaryFolder("open-files-limit")
        let catalog = try DemoWorldFixture.publish(in: folder, only: "europe/ch", scale: 0.2)
        let recipe = folder.join("ch.yaml")
        try Data("name: ch\ncatalog: \(catalog)\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory, tar.zst]\n".utf8)
            .write(to: URL(fileURLWithPath: recipe))
        let build = try Tool.mappack(["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("out")])
        try #require(build.status == 0, "\(build.stderr)")
        let image = folder.join("out/ch-2026.11.0")
        let folders = try Tool.run("/usr/bin/find", [image, "-type", "d"], timeout: 60).stdout.split(separator: "\n")
        // The tree has more folders than the process may hold open: holding each one is what failed.
        let limit = 128
        try #require(folders.count > 2 * limit, "the demo tree has only \(folders.count) folders")

        let verified = try Self.mappack(limit: limit, ["verify", image])
        #expect(verified.status == 0, "verify of the image folder: \(verified.stderr)")
        for (name, source) in [("folder", image), ("archive", image + ".tar.zst")] {
            let storage = folder.join("device-\(name)/maps")
            let installed = try Self.mappack(
                limit: limit, ["store", "install", "--image", source, "--storage", storage, "--cache", folder.join("device-\(name)/cache")])
            #expect(installed.status == 0, "install from the \(name): \(installed.stderr)")
            let checked = try Self.mappack(limit: limit, ["verify", storage])
            #expect(checked.status == 0, "verify of the store installed from the \(name): \(checked.stderr)")
        }
    }
}
