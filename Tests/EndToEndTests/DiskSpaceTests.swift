import Foundation
import TestSupport
import Testing

/// A full disk at any phase of a build gives the friendly error naming the folder, never a raw SQLite or
/// file error, and the up-front estimate is an upper bound of what the build writes (issue 43 item 3):
/// builds into small tmpfs mounts of sizes around what the build needs.
@Suite(.serialized) struct DiskSpaceTests {
    /// Mounts a tmpfs of `bytes` at a new folder; nil where mounting is not allowed (not root).
    static func tmpfs(_ bytes: Int64, in folder: TemporaryFolder, name: String) throws -> String? {
        let mount = folder.join(name)
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let result = try Tool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", mount], timeout: 30)
        return result.status == 0 ? mount : nil
    }

    static func unmount(_ mount: String) { _ = try? Tool.run("/bin/umount", ["-l", mount], timeout: 30) }

    /// Bytes under `path` (files' sizes).
    static func bytes(under path: String) -> Int64 {
        var total: Int64 = 0
        for case let name as String in FileManager.default.enumerator(atPath: path) ?? FileManager.DirectoryEnumerator() {
            total += ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? Int64) ?? 0
        }
        return total
    }

    @Test func aFullDiskAtAnyPhaseIsSaidPlainly() throws {
        let world = try PublishedWorld()
        // The output formats this fixture can make (its tiles are no PMTiles'), so the disk fills in each
        // one's phase at some size (erofs where its tools are).
        let erofs = FileManager.default.isExecutableFile(atPath: "/usr/bin/mkfs.erofs") ? ", erofs" : ""
        let recipe = try world.recipe(
            SourceFixture.recipe(catalog: world.catalog, formats: "[directory, tar.zst, mbtiles, maplibre-offline\(erofs)]"))
        let full = try world.build(recipe)
        try #require(full.status == 0, "\(full.stderr)")
        let needed = Self.bytes(under: world.out)
        var outcomes: [String] = []
        // Each size twice: with the real free space (the check before the build says it), and with the
        // check told the disk is large, so that the disk fills while the build writes, at any phase.
        let runs = [0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 1.3, 3.0].flatMap { [($0, false), ($0, true)] }
        for (fraction, pretend) in runs {
            let size = max(Int64(64 << 10), Int64(Double(needed) * fraction))
            guard let mount = try Self.tmpfs(size, in: world.folder, name: "tmpfs-\(fraction)-\(pretend)") else {
                print("DiskSpaceTests skipped: tmpfs cannot be mounted here (needs root)")
                return
            }
            defer { Self.unmount(mount) }
            let result = try Tool.mappack(
                ["build", recipe, "--cache", world.cache, "--out", mount + "/out"],
                environment: pretend ? ["MAPPACK_TEST_FREE_BYTES": "\(1 << 40)"] : [:])
            outcomes.append("\(fraction)\(pretend ? " filling" : ""): \(result.status)")
            if result.status == 0 {
                #expect(try Tool.mappack(["verify", mount + "/out/fixture-1.0"]).status == 0)
                // Whole outputs and no room left for their record: said, not failed, no temporary file left.
                let stamped = FileManager.default.fileExists(atPath: mount + "/out/.fixture-1.0.build.json")
                #expect(stamped || result.stderr.contains("before this build's record was written"), "\(fraction): \(result.stderr)")
                #expect(!leftoversOnceTrashIsGone(in: mount + "/out").contains { $0.contains(".tmp") }, "\(fraction)")
                continue
            }
            #expect(result.status == 1, "\(fraction): \(result.stderr)")
            let friendly = result.stderr.contains("not enough free space") || result.stderr.contains("disk full")
            #expect(friendly && result.stderr.contains(mount), "\(fraction) of \(needed) bytes, \(pretend): \(result.stderr)")
            #expect(!result.stderr.contains("SQLite error") && !result.stderr.contains("failed (exit status"), "\(result.stderr)")
            #expect(leftoversOnceTrashIsGone(in: mount + "/out").isEmpty, "\(fraction): \(result.stderr)")
        }
        // With room to spare it builds.
        #expect(outcomes.suffix(2) == ["3.0: 0", "3.0 filling: 0"], "\(outcomes)")
        print("DiskSpaceTests: \(needed) bytes written; outcomes by fraction of that: \(outcomes.joined(separator: ", "))")
    }

    /// `build --shard` into a small tmpfs, the check told the disk is large: the disk fills while the
    /// shard unpacks or writes its record, and either is said as a build says it.
    @Test func aFullDiskUnderAShardIsSaidPlainly() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let whole = world.folder.join("whole")
        let first = try Tool.mappack(["build", recipe, "--shard", "1/2", "--cache", world.folder.join("cache"), "--out", whole])
        try #require(first.status == 0, "\(first.stderr)")
        let needed = Self.bytes(under: whole)
        // Sizes 16 KiB apart from a third of the shard's bytes up: some fill it while bundles
        // unpack, some while it writes its record (recipe, catalog, shard.json) after them.
        var outcomes: [Int64: Int32] = [:]
        var inTheRecord = 0
        for size in stride(from: needed / 3, through: needed * 3 / 2, by: 16 << 10) {
            guard let mount = try Self.tmpfs(size, in: world.folder, name: "shard-\(size)") else {
                print("DiskSpaceTests skipped: tmpfs cannot be mounted here (needs root)")
                return
            }
            defer { Self.unmount(mount) }
            let result = try Tool.mappack(
                ["build", recipe, "--shard", "1/2", "--cache", world.folder.join("cache"), "--out", mount + "/out"],
                environment: ["MAPPACK_TEST_FREE_BYTES": "\(1 << 40)"])
            outcomes[size] = result.status
            if result.status == 0 { continue }
            if result.stderr.contains(".tmp-") { inTheRecord += 1 }
            #expect(result.status == 1 && result.stderr.contains("disk full") && result.stderr.contains(mount), "\(size): \(result.stderr)")
            #expect(!result.stderr.contains("write failed"), "\(size): \(result.stderr)")
            #expect(leftoversOnceTrashIsGone(in: mount + "/out").isEmpty, "\(size): \(result.stderr)")
        }
        #expect(inTheRecord > 0, "no size filled the disk while the shard wrote its record: \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes.values.contains(0), "\(outcomes)")
        print("DiskSpaceTests: a \(needed)-byte shard; \(outcomes.count) sizes, \(inTheRecord) full in its record")
    }

    /// `mappack import` into a small tmpfs: a full disk (its tile databases, its scratch databases
    /// beside the output) is said plainly, never as SQLite's "database or disk is full".
    @Test func aFullDiskUnderAnImportIsSaidPlainly() throws {
        let folder = TemporaryFolder("import-space")
        let made = try Tool.run("/usr/bin/python3", [ImportGeoJSONStreamTests.fixtures, "inputs", "--out", folder.join("in")], timeout: 120)
        try #require(made.status == 0, "\(made.stderr)")
        var outcomes: [String] = []
        for kib in [8, 32, 64, 128, 256, 512, 8192] {
            guard let mount = try Self.tmpfs(Int64(kib) << 10, in: folder, name: "import-\(kib)") else {
                print("DiskSpaceTests skipped: tmpfs cannot be mounted here (needs root)")
                return
            }
            defer { Self.unmount(mount) }
            let result = try Tool.mappack([
                "import", "--tiles", folder.join("in/tiles.mbtiles"), "--regions", folder.join("in/regions.geojson"), "--places",
                folder.join("in/places.geojson"), "--out", mount + "/out",
            ])
            outcomes.append("\(kib) KiB: \(result.status)")
            if result.status == 0 { continue }
            #expect(result.status == 1 && result.stderr.contains("disk full") && result.stderr.contains(mount), "\(kib) KiB: \(result.stderr)")
            #expect(!result.stderr.contains("SQLite error") && !result.stderr.contains("write failed"), "\(kib) KiB: \(result.stderr)")
        }
        #expect(outcomes.last == "8192 KiB: 0", "\(outcomes)")
        print("DiskSpaceTests: import outcomes by tmpfs size: \(outcomes.joined(separator: ", "))")
    }

    /// The download cache on a small tmpfs (the output folder elsewhere): a bundle download that finds
    /// the disk full says so as a full output folder does, naming the cache's filesystem, and the
    /// check before the build counts what the cache's files take (whole blocks each), so a build it
    /// lets start never fills the cache.
    @Test func aFullDownloadCacheIsSaidPlainly() throws {
        // Many small bundles (84, 5.5 KiB on average), where whole blocks cost most.
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let full = try world.build(recipe, cache: "cache", out: "out")
        try #require(full.status == 0, "\(full.stderr)")
        let needed = Self.bytes(under: world.folder.join("cache/sha256"))
        var outcomes: [String] = []
        let runs = [0.3, 0.7, 1.0, 1.3, 2.0, 8.0].flatMap { [($0, false), ($0, true)] }
        for (fraction, pretend) in runs {
            let size = max(Int64(16 << 10), Int64(Double(needed) * fraction))
            guard let mount = try Self.tmpfs(size, in: world.folder, name: "cache-\(fraction)-\(pretend)") else {
                print("DiskSpaceTests skipped: tmpfs cannot be mounted here (needs root)")
                return
            }
            defer { Self.unmount(mount) }
            let out = world.folder.join("out-\(fraction)-\(pretend)")
            let result = try Tool.mappack(
                ["build", recipe, "--cache", mount + "/cache", "--out", out],
                environment: pretend ? ["MAPPACK_TEST_FREE_BYTES": "\(1 << 40)"] : [:])
            outcomes.append("\(fraction)\(pretend ? " filling" : ""): \(result.status)")
            if result.status == 0 { continue }
            #expect(result.status == 1, "\(fraction): \(result.stderr)")
            if pretend {
                #expect(result.stderr.contains("disk full") && result.stderr.contains(mount), "\(fraction), filling: \(result.stderr)")
            } else {
                // Refused before it began, not stopped half way: the estimate is an upper bound.
                #expect(result.stderr.contains("not enough free space") && result.stderr.contains(mount), "\(fraction): \(result.stderr)")
            }
            #expect(!result.stderr.contains("write failed"), "\(result.stderr)")
            #expect(leftoversOnceTrashIsGone(in: out).isEmpty, "\(fraction): \(result.stderr)")
        }
        #expect(outcomes.suffix(2) == ["8.0: 0", "8.0 filling: 0"], "\(outcomes)")
        print("DiskSpaceTests: a \(needed)-byte cache; outcomes by fraction of that: \(outcomes.joined(separator: ", "))")
    }
}
