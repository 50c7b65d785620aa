import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// A signed fixture image (folder and `.tar.zst`) and its key pair, built once per test process.
final class SignedStoreFixture: @unchecked Sendable {
    static let shared = SignedStoreFixture()

    let folder = TemporaryFolder("signed-image")
    var imageFolder: String { folder.join("Output/fixture-1.0") }
    var imageArchive: String { folder.join("Output/fixture-1.0.tar.zst") }
    var publicKey: String { folder.join("release.pub") }
    var privateKey: String { folder.join("release.key") }

    private init() {
        do {
            try SourceFixture.write(to: folder.join("source"))
            let publish = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")])
            precondition(publish.status == 0, publish.stderr)
            let keygen = try Tool.mappack(["keygen", "--out", folder.join("release")])
            precondition(keygen.status == 0, keygen.stderr)
            let recipe = folder.join("recipe.yaml")
            try Data(SourceFixture.recipe(catalog: folder.join("catalog/catalog.json")).utf8).write(to: URL(fileURLWithPath: recipe))
            let build = try Tool.mappack(
                ["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("Output"), "--sign", privateKey],
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            precondition(build.status == 0, build.stderr)
        } catch {
            preconditionFailure("signed fixture image: \(error)")
        }
    }

    /// A writable copy of the image folder in `into`.
    func copyOfFolder(in into: TemporaryFolder) throws -> String {
        let copy = into.join("image")
        #expect(try shell("cp -a '\(imageFolder)' '\(copy)'").status == 0)
        return copy
    }
}

/// Runs `command` with `/bin/sh -c`.
@discardableResult
func shell(_ command: String) throws -> Tool.Result {
    try Tool.run("/bin/sh", ["-c", command])
}

/// Replaces the `sha256` of `path`'s entry in the manifest at `manifest` with `sha256`, keeping every other byte.
func editManifestDigest(_ manifest: String, path: String, to sha256: String) throws {
    var text = try String(contentsOfFile: manifest, encoding: .utf8)
    let key = "\"path\":\"\(path)\",\"sha256\":\""
    let start = try #require(text.range(of: key)).upperBound
    let end = text.index(start, offsetBy: 64)
    text.replaceSubrange(start..<end, with: sha256)
    try Data(text.utf8).write(to: URL(fileURLWithPath: manifest))
}

@Suite struct StoreTrustTests {
    static let zhTiles = "regions/europe/ch/zh/tiles.db"

    // MARK: item 2: a trusted folder image is hashed in full; the cache seed always

    @Test func trustedFolderInstallRefusesAStoreFileRewrittenAtTheSameSize() async throws {
        let work = TemporaryFolder("trust-folder")
        let device = Device()
        let image = try SignedStoreFixture.shared.copyOfFolder(in: work)
        try flipBit(in: image + "/store/" + Self.zhTiles, at: 100)
        let install = try await device.run(["install", "--image", image, "--trust", SignedStoreFixture.shared.publicKey])
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains(Self.zhTiles), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
        #expect(try await device.run(["status"]).stdout.hasPrefix("empty"))
    }

    @Test(arguments: [false, true])
    func folderInstallRefusesACacheSeedRewrittenAtTheSameSize(trusted: Bool) async throws {
        let work = TemporaryFolder("trust-seed")
        let device = Device()
        let image = try SignedStoreFixture.shared.copyOfFolder(in: work)
        let seed = image + "/cache-seed.sqlite"
        let before = try FileSystem.status(seed)?.size
        #expect(try shell("sqlite3 '\(seed)' 'UPDATE entries SET size = -size'").status == 0)
        #expect(try FileSystem.status(seed)?.size == before)
        let install = try await device.run(["install", "--image", image] + (trusted ? ["--trust", SignedStoreFixture.shared.publicKey] : []))
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("cache-seed.sqlite"), "\(install.stderr)")
        let size = try await device.run(["cache", "size"])
        #expect(!size.stdout.contains("-"), "\(size.stdout)")
    }

    @Test func seedImportRefusesRowsWithNegativeSizes() async throws {
        // An unsigned image whose manifest was re-made for a poisoned seed: its hash matches, its rows do not.
        let work = TemporaryFolder("trust-seed-rows")
        let device = Device()
        let image = try SignedStoreFixture.shared.copyOfFolder(in: work)
        try FileManager.default.removeItem(atPath: image + "/manifest.sig")
        let seed = image + "/cache-seed.sqlite"
        #expect(try shell("sqlite3 '\(seed)' 'UPDATE entries SET size = -size'").status == 0)
        var manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: image + "/manifest.json")), file: "manifest.json")
        let (digest, size) = try SHA256.digestOfFile(seed)
        manifest.cacheSeed?.sha256 = digest
        manifest.cacheSeed?.size = size
        try manifest.sealed(hash: { SHA256.hex($0) }).bytes.write(to: URL(fileURLWithPath: image + "/manifest.json"))
        let verify = try Tool.mappack(["verify", image])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let install = try await device.run(["install", "--image", image])
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("cache-seed.sqlite") && install.stderr.contains("size"), "\(install.stderr)")
        let cacheSize = try await device.run(["cache", "size"])
        #expect(!cacheSize.stdout.contains("-"), "\(cacheSize.stdout)")
    }

    // MARK: item 3: repair validates the offered image before it touches the store

    @Test func repairWithABrokenNewerImageKeepsTheStore() async throws {
        let work = TemporaryFolder("trust-repair")
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        #expect(try await device.run(["install", "--image", SignedStoreFixture.shared.imageFolder, "--trust", key]).status == 0)
        let bad = try SignedStoreFixture.shared.copyOfFolder(in: work)
        var manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: bad + "/manifest.json")), file: "manifest.json")
        manifest.mapVersion = MapVersion("9.0")
        try manifest.sealed(hash: { SHA256.hex($0) }).bytes.write(to: URL(fileURLWithPath: bad + "/manifest.json"))
        let repair = try await device.run(["repair", "--image", bad, "--trust", key])
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stderr.contains("preinstall image"), "\(repair.stderr)")
        let status = try await device.run(["status", "--full"])
        #expect(status.stdout.hasPrefix("ok: "), "\(status.stdout)\(status.stderr)")
        #expect(try await device.run(["verify"]).status == 0)
    }

    // MARK: item 4: the kept manifest is checked at every full check and at repair

    @Test func editedKeptManifestAndFileAreFoundAndRepaired() async throws {
        let device = Device()
        let image = StoreFixture.shared.imageFolder
        #expect(try await device.run(["install", "--image", image]).status == 0)
        let file = device.storage + "/store/" + Self.zhTiles
        try flipBit(in: file, at: 100)
        try editManifestDigest(device.storage + "/manifest.json", path: Self.zhTiles, to: try SHA256.digestOfFile(file).digest.hex)
        let status = try await device.run(["status", "--full"])
        #expect(status.status == 1 && status.stdout.hasPrefix("corrupted"), "\(status.stdout)\(status.stderr)")
        let storeVerify = try await device.run(["verify"])
        #expect(storeVerify.status == 1, "\(storeVerify.stdout)\(storeVerify.stderr)")
        #expect(storeVerify.stderr.contains("manifest.json"), "\(storeVerify.stderr)")
        let verify = try Tool.mappack(["verify", device.storage])
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("manifest.json"), "\(verify.stderr)")
        let repair = try await device.run(["repair", "--image", image])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(try SHA256.digestOfFile(file).digest == SHA256.digestOfFile(image + "/store/" + Self.zhTiles).digest)
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
        #expect(try Tool.mappack(["verify", device.storage]).status == 0)
    }

    @Test func keptManifestResignedByNoOneFailsTrustedChecks() async throws {
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        #expect(try await device.run(["install", "--image", SignedStoreFixture.shared.imageFolder, "--trust", key]).status == 0)
        #expect(try Tool.mappack(["verify", device.storage, "--trust", key]).status == 0)
        // A consistent forgery: file, manifest entry, image id in the manifest and in the state.
        let file = device.storage + "/store/" + Self.zhTiles
        try flipBit(in: file, at: 100)
        let kept = device.storage + "/manifest.json"
        var manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: kept)), file: "manifest.json")
        let index = try #require(manifest.files.firstIndex { $0.path.string == Self.zhTiles })
        manifest.files[index].sha256 = try SHA256.digestOfFile(file).digest
        let bytes = try manifest.sealed(hash: { SHA256.hex($0) }).bytes
        try bytes.write(to: URL(fileURLWithPath: kept))
        let forged = try ManifestReader.read(bytes, file: "manifest.json").imageID
        #expect(try StoreTrustTests.setMeta(.imageID, to: forged, in: device.storage) == 0)
        #expect(try Tool.mappack(["verify", device.storage]).status == 0)
        let trusted = try Tool.mappack(["verify", device.storage, "--trust", key])
        #expect(trusted.status == 1, "\(trusted.stdout)\(trusted.stderr)")
        #expect(trusted.stderr.contains("manifest.sig"), "\(trusted.stderr)")
        let status = try await device.run(["status", "--full", "--trust", key])
        #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
        #expect(try await device.run(["verify", "--trust", key]).status == 1)
    }

    @Test func keptSignatureOfAPackedImageTravelsWithAMove() async throws {
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        #expect(try await device.run(["install", "--image", SignedStoreFixture.shared.imageArchive, "--trust", key]).status == 0)
        #expect(FileManager.default.fileExists(atPath: device.storage + "/manifest.sig"))
        let before = try Tool.mappack(["verify", device.storage, "--trust", key])
        #expect(before.status == 0, "\(before.stdout)\(before.stderr)")
        let moved = device.folder.join("moved")
        #expect(try await device.run(["move", "--to", moved]).status == 0)
        let after = try Tool.mappack(["verify", moved, "--trust", key])
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/manifest.sig"))
    }

    @Test func anUpdateEndsTheImageSignaturesSayOverTheKeptManifest() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        let store = try await device.open(image: fixture.image)
        // Installed from an unsigned image: no trusted key vouches for it.
        let unsigned = try await device.run(["status", "--full", "--trust", key])
        #expect(unsigned.status == 1, "\(unsigned.stdout)\(unsigned.stderr)")
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        #expect(store.mapVersion == UpdateFixture.newVersion)
        // The updated manifest was checked bundle by bundle against the catalog; no image signature applies.
        let updated = try await device.run(["status", "--full", "--trust", key])
        #expect(updated.status == 0, "\(updated.stdout)\(updated.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/manifest.sig"))
    }

    // MARK: item 8: a broken state database is rebuilt; repair without an image never wipes intact files

    @Test(arguments: [false, true])
    func repairRebuildsAGarbageStateDatabase(withImage: Bool) async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        try Data(repeating: 0x5a, count: 5000).write(to: URL(fileURLWithPath: device.storage + "/state.sqlite"))
        let repair = try await device.run(["repair"] + (withImage ? ["--image", StoreFixture.shared.imageFolder] : []))
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stderr.contains("state"), "\(repair.stderr)")
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
        #expect(try await device.run(["regions", "--json"]).stdout.split(separator: "\n").count == 4)
    }

    @Test func repairWithoutImageKeepsIntactFilesWhenTheStateNamesAnotherImage() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        #expect(try StoreTrustTests.setMeta(.imageID, to: "abc", in: device.storage) == 0)
        let repair = try await device.run(["repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(!repair.stderr.contains("rolled back"), "\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: device.storage + "/store/" + Self.zhTiles))
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    @Test func repairWithoutImageKeepsFilesWhenTheKeptManifestIsGone() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        try FileManager.default.removeItem(atPath: device.storage + "/manifest.json")
        let repair = try await device.run(["repair"])
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stderr.contains("manifest.json") && repair.stderr.contains("--image"), "\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: device.storage + "/store/" + Self.zhTiles))
        let withImage = try await device.run(["repair", "--image", StoreFixture.shared.imageFolder])
        #expect(withImage.status == 0, "\(withImage.stdout)\(withImage.stderr)")
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    @Test func repairWithoutImageRestoresDeletedRegionRowsInsteadOfFiles() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        #expect(try shell("sqlite3 '\(device.storage)/state.sqlite' \"DELETE FROM regions WHERE id LIKE 'europe/ch/%'\"").status == 0)
        let repair = try await device.run(["repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(!repair.stderr.contains("from the image"), "\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: device.storage + "/store/" + Self.zhTiles))
        #expect(try await device.run(["regions", "--json"]).stdout.split(separator: "\n").count == 4)
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    @Test func repairWithoutImageKeepsACommittedStoreWhosePendingRowIsGarbage() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        let insert = "INSERT INTO pending_operation(id, kind, detail, started) VALUES (1, 'bogus', '', 'x')"
        #expect(try shell("sqlite3 '\(device.storage)/state.sqlite' \"\(insert)\"").status == 0)
        #expect(try await device.run(["status"]).status == 1)
        let repair = try await device.run(["repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(!repair.stderr.contains("rolled back"), "\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: device.storage + "/store/" + Self.zhTiles))
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    @Test func repairOfAPendingMoveNeverRemovesAnotherFoldersData() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        let other = device.folder.join("other")
        try FileManager.default.createDirectory(atPath: other + "/store", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: other + "/store/data.bin"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: other + "/manifest.json"))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: other + "/notes.txt"))
        let insert = "INSERT INTO pending_operation(id, kind, detail, started) VALUES (1, 'move', '\(other)', 'x')"
        #expect(try shell("sqlite3 '\(device.storage)/state.sqlite' \"\(insert)\"").status == 0)
        let repair = try await device.run(["repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: other + "/store/data.bin"))
        #expect(FileManager.default.fileExists(atPath: other + "/manifest.json"))
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    // MARK: item 9b

    @Test(arguments: ["extraTopLevel", "signatureFirst"])
    func packedInstallUsesTheSameEntryRuleAsVerify(_ kind: String) async throws {
        let work = TemporaryFolder("trust-packed")
        let device = Device()
        let unpacked = work.join("unpacked")
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        #expect(try shell("zstd -dc '\(SignedStoreFixture.shared.imageArchive)' | tar -x -C '\(unpacked)'").status == 0)
        let order: String
        if kind == "extraTopLevel" {
            try Data("hello".utf8).write(to: URL(fileURLWithPath: unpacked + "/README.txt"))
            order = "manifest.json manifest.sig README.txt cache-seed.sqlite store"
        } else {
            order = "manifest.sig manifest.json cache-seed.sqlite store"
        }
        let archive = work.join("image.tar.zst")
        #expect(try shell("cd '\(unpacked)' && tar -c --format=ustar \(order) | zstd -q -o '\(archive)'").status == 0)
        let verify = try Tool.mappack(["verify", archive])
        #expect(verify.status != 0, "\(verify.stdout)\(verify.stderr)")
        let install = try await device.run(["install", "--image", archive])
        #expect(install.status != 0, "\(install.stdout)\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
    }

    // MARK: issue 29, item 6: one entry rule for verify and install

    /// A bad `manifest.sig` and a good one under the same name: whichever a reader keeps, the two
    /// verbs must not disagree; both refuse the archive and name the entry.
    @Test(arguments: ["badFirst", "goodFirst"])
    func duplicateEntryIsRefusedByVerifyAndInstall(_ order: String) async throws {
        let work = TemporaryFolder("trust-duplicate")
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        let unpacked = work.join("unpacked")
        let bad = work.join("bad")
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        #expect(try shell("zstd -dc '\(SignedStoreFixture.shared.imageArchive)' | tar -x -C '\(unpacked)'").status == 0)
        try Data((Data(repeating: 7, count: 64).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: bad + "/manifest.sig"))
        let signatures =
            order == "badFirst" ? "-C '\(bad)' manifest.sig -C '\(unpacked)' manifest.sig" : "manifest.sig -C '\(bad)' manifest.sig -C '\(unpacked)'"
        let archive = work.join("image.tar.zst")
        let pack = "tar -c --format=ustar -C '\(unpacked)' manifest.json \(signatures) cache-seed.sqlite store | zstd -q -o '\(archive)'"
        #expect(try shell(pack).status == 0)
        #expect(try shell("zstd -dc '\(archive)' | tar -t | grep -c '^manifest.sig$'").stdout.hasPrefix("2"))
        let verify = try Tool.mappack(["verify", "--trust", key, archive])
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("'manifest.sig' appears twice"), "\(verify.stderr)")
        let install = try await device.run(["install", "--image", archive, "--trust", key])
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("'manifest.sig' appears twice"), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
    }

    /// An image holds `manifest.json`, `manifest.sig`, `cache-seed.sqlite` and `store/` at its top,
    /// nothing else: a signature covers the manifest only, so a file beside it would ride along unchecked.
    @Test(arguments: ["folder", "archive"])
    func extraTopLevelFileIsRefusedByVerifyAndInstall(_ shape: String) async throws {
        let work = TemporaryFolder("trust-extra")
        let device = Device()
        let key = SignedStoreFixture.shared.publicKey
        let folder = try SignedStoreFixture.shared.copyOfFolder(in: work)
        try Data("#!/bin/sh\necho owned\n".utf8).write(to: URL(fileURLWithPath: folder + "/evil.sh"))
        var image = folder
        if shape == "archive" {
            image = work.join("image.tar.zst")
            let pack = "cd '\(folder)' && tar -c --format=ustar manifest.json manifest.sig evil.sh cache-seed.sqlite store | zstd -q -o '\(image)'"
            #expect(try shell(pack).status == 0)
        }
        let verify = try Tool.mappack(["verify", "--trust", key, image])
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("'evil.sh' is not part of an image"), "\(verify.stderr)")
        let install = try await device.run(["install", "--image", image, "--trust", key])
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("'evil.sh' is not part of an image"), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
    }

    @Test func editedMapVersionInTheStateIsNoticed() async throws {
        let device = Device()
        #expect(try await device.run(["install", "--image", StoreFixture.shared.imageFolder]).status == 0)
        #expect(try StoreTrustTests.setMeta(.mapVersion, to: "7.0", in: device.storage) == 0)
        let status = try await device.run(["status"])
        #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
        #expect(try await device.run(["verify"]).status == 1)
        let verify = try Tool.mappack(["verify", device.storage])
        #expect(verify.status == 1 && verify.stderr.contains("mapVersion"), "\(verify.stdout)\(verify.stderr)")
        #expect(try await device.run(["repair"]).status == 0)
        #expect(try await device.run(["status", "--full"]).stdout.hasPrefix("ok: "))
    }

    /// Packed: 24k: the state database does not fit; 48k: the image is seen not to fit; 80k: a write
    /// fails with ENOSPC. A trusted folder (hashed while copied) at 80k: a copy's write fails.
    @Test(.enabled(if: getuid() == 0, "mounts a tmpfs"), arguments: [("24k", true), ("48k", true), ("80k", true), ("80k", false)])
    func diskFullDuringInstallIsReportedAsOutOfSpace(size: String, packed: Bool) async throws {
        let work = TemporaryFolder("trust-full")
        let mount = work.join("small")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try shell("mount -t tmpfs -o size=\(size) tmpfs '\(mount)'")
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? shell("umount '\(mount)'") }
        let storage = mount + "/storage"
        let image =
            packed
            ? ["--image", StoreFixture.shared.imageArchive]
            : ["--image", SignedStoreFixture.shared.imageFolder, "--trust", SignedStoreFixture.shared.publicKey]
        let install = try Tool.mappack(["store", "install"] + image + ["--storage", storage, "--cache", work.join("cache")])
        #expect(install.status == 1, "\(install.stdout)\(install.stderr)")
        #expect(install.stderr.contains("out of space") && install.stderr.contains(folderPath(storage)), "\(install.stderr)")
        #expect(!install.stderr.contains("not a usable preinstall image"), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: storage + "/store"))
        #expect(!FileManager.default.fileExists(atPath: storage + "/state.sqlite"))
    }

    /// Edits a `meta` row of the storage's `state.sqlite` with the sqlite3 tool, as a person (or damage)
    /// would; the tool's exit status.
    static func setMeta(_ key: StateMetaKey, to value: String, in storage: String) throws -> Int32 {
        try shell("sqlite3 '\(storage)/state.sqlite' \"UPDATE meta SET value = '\(value)' WHERE key = '\(key.rawValue)'\"").status
    }
}
