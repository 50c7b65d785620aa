import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@Suite struct VerifyCommandTests {
    /// A freshly built folder image of the fixture world (which must outlive its use: its folder
    /// goes with it).
    private func builtImage() throws -> (PublishedWorld, String) {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory]"))
        #expect(try world.build(recipe).status == 0)
        return (world, world.out + "/fixture-1.0")
    }

    private func events(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func jsonReportNamesMissingAndExtraFilesAndExitsOne() throws {
        let (world, image) = try builtImage()
        defer { withExtendedLifetime(world) {} }
        let manifest = try world.manifest(image)
        let ok = try Tool.mappack(["verify", image, "--json"])
        #expect(ok.status == 0, "\(ok.stderr)")
        let done = try #require(try events(ok.stdout).last)
        #expect(done["ok"] as? Bool == true)
        #expect(done["files"] as? Int == manifest.files.count)
        #expect(done["bytesHashed"] as? Int == Int(manifest.files.reduce(0) { $0 + $1.size }))
        #expect(done["imageID"] as? String == manifest.imageID)

        try FileManager.default.removeItem(atPath: image + "/store/regions/europe/ch/zh/tiles.db")
        try Data("x".utf8).write(to: URL(fileURLWithPath: image + "/store/regions/europe/ch/zh-extra.bin"))
        let bad = try Tool.mappack(["verify", image, "--json"])
        #expect(bad.status == 1)
        let lines = try events(bad.stdout)
        let problems = lines.filter { $0["event"] as? String == "problem" }
        #expect(problems.map { $0["kind"] as? String ?? "" } == ["extra", "missing"])
        #expect(problems.map { $0["path"] as? String ?? "" } == ["regions/europe/ch/zh-extra.bin", "regions/europe/ch/zh/tiles.db"])
        #expect(problems[1]["regions"] as? [String] == ["europe/ch/zh"])
        #expect(lines.last?["problems"] as? Int == 2 && lines.last?["ok"] as? Bool == false)
    }

    @Test func quickSkipsContentsButNotSizes() throws {
        let (world, image) = try builtImage()
        defer { withExtendedLifetime(world) {} }
        let target = image + "/store/regions/europe/ch/zh/tiles.db"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: target))
        bytes[0] ^= 1
        try bytes.write(to: URL(fileURLWithPath: target))
        #expect(try Tool.mappack(["verify", image, "--quick"]).status == 0)
        #expect(try Tool.mappack(["verify", image]).status == 1)
        try (bytes + Data([0])).write(to: URL(fileURLWithPath: target))
        let quick = try Tool.mappack(["verify", image, "--quick"])
        #expect(quick.status == 1)
        #expect(quick.stderr.contains("regions/europe/ch/zh/tiles.db (region europe/ch/zh): size"), "\(quick.stderr)")
    }

    @Test func manifestWithFilesOutOfOrderIsBadInput() throws {
        let (world, image) = try builtImage()
        defer { withExtendedLifetime(world) {} }
        var manifest = try world.manifest(image)
        manifest.files.reverse()
        try manifest.sealed(hash: SHA256.hex).bytes.write(to: URL(fileURLWithPath: image + "/manifest.json"))
        let result = try Tool.mappack(["verify", image])
        #expect(result.status == 2)
        #expect(result.stderr.contains("sorted by path"), "\(result.stderr)")
    }

    /// Every file and folder under `folder`, itself included.
    /// A packed image whose manifest is damaged (cut short) or lists a file twice (issue 41): verify
    /// said "no manifest.json", sending people to look for a file that is there; it says what is wrong.
    @Test(arguments: ["damaged", "duplicated"]) func packedImageWithABadManifestSaysWhatIsWrong(fault: String) throws {
        let (world, image) = try builtImage()
        defer { withExtendedLifetime(world) {} }
        var manifest = try world.manifest(image)
        let manifestPath = image + "/manifest.json"
        if fault == "damaged" {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: manifestPath))
        } else {
            manifest.files.insert(manifest.files[0], at: 1)
            try manifest.sealed(hash: SHA256.hex).bytes.write(to: URL(fileURLWithPath: manifestPath))
        }
        let packed = world.out + "/bad-\(fault).tar.zst"
        // manifest.json first, as every packed image has it.
        let tar = try Tool.run("/usr/bin/tar", ["--zstd", "-cf", packed, "-C", image, "manifest.json", "store"], timeout: 120)
        try #require(tar.status == 0, "\(tar.stderr)")
        let result = try Tool.mappack(["verify", packed])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(!result.stderr.contains("no manifest.json"), "\(result.stderr)")
        let reason = fault == "damaged" ? "not a valid manifest" : "twice"
        #expect(result.stderr.contains("manifest.json") && result.stderr.contains(reason), "\(result.stderr)")
    }

    private func entries(under folder: String) throws -> [String] {
        let below = try #require(FileManager.default.subpathsOfDirectory(atPath: folder) as [String]?)
        return [folder] + below.map { folder + "/" + $0 }
    }

    private func accessTime(_ path: String) -> Int {
        var info = stat()
        return unsafe lstat(path, &info) == 0 ? info.st_atim.tv_sec : -1
    }

    /// Sets `path`'s access time to `seconds`, leaving its modification time (older access than
    /// modification is what makes a `relatime` filesystem record the next read).
    private func setAccessTime(_ path: String, _ seconds: Int) {
        let omit = (1 << 30) - 2  // UTIME_OMIT, a macro Swift does not import
        let times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: omit)]
        _ = unsafe utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW)
    }

    /// A check reads every file and lists every folder, and leaves their access times as they were
    /// (`O_NOATIME`): on a filesystem that records reads, the first verification after a build would
    /// otherwise write every inode of the store back to the disk.
    @Test func fullCheckLeavesAccessTimesAlone() throws {
        let (world, image) = try builtImage()
        defer { withExtendedLifetime(world) {} }
        let old = 978_307_200  // 2001-01-01
        // Does this filesystem record reads at all? (Not with `noatime`; then there is nothing to see.)
        let control = world.folder.join("control.txt")
        try Data("control".utf8).write(to: URL(fileURLWithPath: control))
        setAccessTime(control, old)
        _ = try Data(contentsOf: URL(fileURLWithPath: control))
        guard accessTime(control) != old else { return }

        let paths = try entries(under: image + "/store")
        for path in paths { setAccessTime(path, old) }
        let result = try Tool.mappack(["verify", image])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(paths.filter { accessTime($0) != old } == [])
    }
}
