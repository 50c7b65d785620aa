import Foundation
import MapFormat
import MapIO
import MapVerify
import TestSupport
import Testing

/// An image folder written file by file: a store, and a sealed canonical manifest that two
/// regions (`world`, `world/a`) and two bundles share.
private struct ImageFixture {
    let folder = TemporaryFolder("stream-verify")
    var path: String { folder.path }
    var store: String { folder.join("store") }
    static let bundleA = BundleDigest(hex: String(repeating: "a", count: 64))
    static let bundleB = BundleDigest(hex: String(repeating: "b", count: 64))

    /// Writes `files` (path → content) and a manifest listing them, in `order` when given.
    init(_ files: [String: Data], order: [String]? = nil) throws {
        for (path, content) in files {
            try FileManager.default.createDirectory(atPath: FileSystem.parent(store + "/" + path), withIntermediateDirectories: true)
            try content.write(to: URL(fileURLWithPath: store + "/" + path))
        }
        let paths = order ?? files.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let entries = try paths.enumerated().map { index, path in
            ImageFile(
                path: try StorePath(validating: path), size: Int64(files[path]!.count), sha256: SHA256.digest(files[path]!),
                bundle: index % 3 == 0 ? Self.bundleB : Self.bundleA
            )
        }
        var manifest = ImageManifest(
            name: "fixture", catalog: "test", mapVersion: MapVersion("1.0"), built: "2026-11-20T00:00:00Z", mappackVersion: "0.1.0", blockSize: 4096,
            language: "en",
            regions: [
                ImageRegion(id: "world", parent: nil, name: "World", names: ["en": "World"], bundles: [Self.bundleB], sizeOnDiskInBytes: 0),
                ImageRegion(id: "world/a", parent: "world", name: "A", names: ["en": "A"], bundles: [Self.bundleA], sizeOnDiskInBytes: 0),
            ],
            bundles: [
                ImageBundle(digest: Self.bundleA, size: 1, url: "a.tar.zst", files: 1, unpackedSize: 1),
                ImageBundle(digest: Self.bundleB, size: 1, url: "b.tar.zst", files: 1, unpackedSize: 1),
            ],
            files: entries, cacheSeed: nil)
        let sizes = manifest.derivedSizesOnDisk()
        for index in manifest.regions.indices { manifest.regions[index].sizeOnDiskInBytes = sizes[manifest.regions[index].id]! }
        try writeManifest(manifest.sealed(hash: SHA256.hex).bytes)
    }

    var manifestBytes: Data { get throws { try Data(contentsOf: URL(fileURLWithPath: folder.join("manifest.json"))) } }

    func writeManifest(_ bytes: Data) throws { try bytes.write(to: URL(fileURLWithPath: folder.join("manifest.json"))) }

    /// Replaces the first `old` in the manifest's text with `new`.
    func editManifest(_ old: String, _ new: String) throws {
        let text = String(decoding: try manifestBytes, as: UTF8.self)
        let range = try #require(text.range(of: old))
        try writeManifest(Data(text.replacingCharacters(in: range, with: new).utf8))
    }

    func write(_ path: String, _ content: Data) throws {
        try FileManager.default.createDirectory(atPath: FileSystem.parent(store + "/" + path), withIntermediateDirectories: true)
        try content.write(to: URL(fileURLWithPath: store + "/" + path))
    }

    func remove(_ path: String) throws { try FileManager.default.removeItem(atPath: store + "/" + path) }

    /// Both verifications, which must agree; returns the streaming one's report.
    func verify(
        hashContents: Bool = true, jobs: Int = 2, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> VerifyReport<ManifestHeader> {
        let streamed = try ImageVerifier.verifyFolderStreaming(path, hashContents: hashContents, jobs: jobs)
        let whole = try ImageVerifier.verifyFolder(path, hashContents: hashContents, jobs: jobs)
        #expect(streamed.problems == whole.problems, sourceLocation: sourceLocation)
        #expect(streamed.filesChecked == whole.filesChecked, sourceLocation: sourceLocation)
        #expect(streamed.bytesHashed == whole.bytesHashed, sourceLocation: sourceLocation)
        #expect(streamed.manifest.imageID == whole.manifest.imageID, sourceLocation: sourceLocation)
        // The streamed report keeps the header, all of it as the whole read has it.
        #expect(streamed.manifest == whole.manifest.header, sourceLocation: sourceLocation)
        return streamed
    }
}

private func bytes(_ count: Int, _ seed: UInt8) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }) }

/// Names that sort differently per component than as whole paths (`a-b` < `a/x` because `-` < `/`),
/// files of 0 bytes, of one read and of several reads, and a folder deep enough to need a stack.
private let trickyFiles: [String: Data] = [
    "a-b": bytes(10, 1), "a/x": bytes(20, 2), "a.b/y": bytes(30, 3), "a/x-y/z": bytes(5, 4), "a0": bytes(0, 5),
    "b/empty": Data(), "b/large.bin": bytes(300_000, 6), "b/c/d/e/f/g/h/deep.db": bytes(4096, 7), "b/c/d/e/f/g/h-i": bytes(4097, 8),
    "é/地図.db": bytes(100, 9), "e/x y": bytes(1, 10), "z": bytes(128 << 10, 11), "z.one-past-buffer": bytes((128 << 10) + 1, 12),
]

@Suite struct StreamingVerifyTests {
    @Test(arguments: [1, 2, 4])
    func cleanImagePassesWithEveryByteHashed(_ jobs: Int) throws {
        let image = try ImageFixture(trickyFiles)
        let report = try image.verify(jobs: jobs)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.filesChecked == trickyFiles.count)
        #expect(report.bytesHashed == Int64(trickyFiles.values.reduce(0) { $0 + $1.count }))
        #expect(report.manifest.name == "fixture")
        #expect(report.manifest.regions.map(\.id) == ["world", "world/a"])
    }

    @Test func extraFilesAnywhereInTheOrderAreNamed() throws {
        let image = try ImageFixture(trickyFiles)
        let extras = ["0-first", "a-a", "a/w", "a/x-y/z0", "b/c/d/e/f/g/h/deep.db0", "b/new/folder/file", "zz-last"]
        for path in extras { try image.write(path, Data("x".utf8)) }
        try FileManager.default.createSymbolicLink(atPath: image.store + "/a/link", withDestinationPath: "x")
        // An empty folder is not a file: nothing to report.
        try FileManager.default.createDirectory(atPath: image.store + "/b/hollow", withIntermediateDirectories: true)
        let report = try image.verify()
        let expected = (extras + ["a/link"]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(report.problems.map(\.path) == expected)
        #expect(report.problems.allSatisfy { $0.kind == .extra && $0.regions.isEmpty })
        #expect(report.problems.first { $0.path == "a/link" }?.detail == "is not a regular file or folder, and not in the manifest")
        #expect(report.problems.first { $0.path == "a-a" }?.detail == "file is not in the manifest")
    }

    @Test func missingFilesAreNamedWithTheirRegions() throws {
        let image = try ImageFixture(trickyFiles)
        for path in ["a-b", "b/large.bin", "z.one-past-buffer"] { try image.remove(path) }
        try FileManager.default.removeItem(atPath: image.store + "/b/c")
        let report = try image.verify()
        #expect(report.problems.map(\.path) == ["a-b", "b/c/d/e/f/g/h-i", "b/c/d/e/f/g/h/deep.db", "b/large.bin", "z.one-past-buffer"])
        #expect(report.problems.allSatisfy { $0.kind == .missing && $0.detail == "file is missing" && !$0.regions.isEmpty })
    }

    @Test func folderOrLinkWhereAFileShouldBeIsNotARegularFile() throws {
        let image = try ImageFixture(trickyFiles)
        try image.remove("a/x")
        try image.write("a/x/inside", Data("y".utf8))
        try image.remove("a0")
        try FileManager.default.createSymbolicLink(atPath: image.store + "/a0", withDestinationPath: "a-b")
        let report = try image.verify()
        #expect(report.problems.map { "\($0.kind) \($0.path)" } == ["notRegularFile a/x", "extra a/x/inside", "notRegularFile a0"])
    }

    @Test(arguments: [true, false])
    func sizeAndContentDifferencesAreNamed(_ hashContents: Bool) throws {
        let image = try ImageFixture(trickyFiles)
        try image.write("a/x", bytes(21, 2))  // one byte longer
        try image.write("b/large.bin", bytes(299_999, 6))  // one byte shorter, several reads
        try image.write("e/x y", Data("!".utf8))  // same size, other bytes
        try image.write("z.one-past-buffer", bytes((128 << 10) + 1, 13))
        try image.write("b/empty", Data("not empty".utf8))
        let report = try image.verify(hashContents: hashContents)
        let kinds = report.problems.map { "\($0.kind) \($0.path)" }
        if hashContents {
            #expect(
                kinds == [
                    "sizeMismatch a/x", "sizeMismatch b/empty", "sizeMismatch b/large.bin", "digestMismatch e/x y",
                    "digestMismatch z.one-past-buffer",
                ])
            let digest = try #require(report.problems.first { $0.path == "e/x y" })
            #expect(digest.detail == "content differs (sha256 \(SHA256.hex(Data("!".utf8))), manifest says \(SHA256.hex(bytes(1, 10))))")
        } else {
            #expect(kinds == ["sizeMismatch a/x", "sizeMismatch b/empty", "sizeMismatch b/large.bin"])
        }
        #expect(report.problems.first { $0.path == "b/large.bin" }?.detail == "size 299999, manifest says 300000")
    }

    @Test func largeFileDifferingInItsLastByteIsFound() throws {
        let image = try ImageFixture(["big": bytes(1 << 20, 1), "small": bytes(3, 2)])
        var changed = bytes(1 << 20, 1)
        changed[(1 << 20) - 1] ^= 0xFF
        try image.write("big", changed)
        #expect(try image.verify().problems.map(\.kind) == [.digestMismatch])
    }

    @Test func filesOutOfOrderInTheManifestAreRefused() throws {
        let files = ["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)]
        let image = try ImageFixture(files, order: ["a/1", "c", "b"])
        #expect(throws: ImageOpenError.self) { _ = try ImageVerifier.verifyFolderStreaming(image.path) }
        do {
            _ = try ImageVerifier.verifyFolderStreaming(image.path)
        } catch {
            #expect(error.description.contains("files[2] 'b' comes after 'c'"), "\(error)")
            #expect(error.description.contains("sorted by path"), "\(error)")
        }
        // The whole-list verification still takes it, in any order.
        #expect(try ImageVerifier.verifyFolder(image.path).problems.isEmpty)
    }

    @Test(arguments: [
        ("\"size\":1}", "\"size\":1"),  // truncated object
        ("\"blockSize\":4096", "\"blockSize\":4000"),  // not a power of two
        ("\"path\":\"a/1\"", "\"path\":\"../a/1\""),  // leaves the store
        ("\"path\":\"b\"", "\"path\":\"a/1\""),  // the same path twice
        ("\"path\":\"a/1\"", "\"path\":\"\""),  // empty path
        ("\"size\":2}", "\"size\":-2}"),  // negative size
        ("\"format\":\"mappack-image/1\"", "\"format\":\"mappack-image/2\""),
        ("\"sha256\":", "\"sha257\":"),  // a required field missing
        ("\"name\":\"fixture\"", "\"name\":7"),  // wrong type, after the files
        ("\"id\":\"world/a\"", "\"id\":\"world\""),  // a region id twice
    ])
    func brokenManifestsGetTheErrorsTheWholeReaderGives(_ edit: (String, String)) throws {
        let image = try ImageFixture(["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)])
        try image.editManifest(edit.0, edit.1)
        let data = try image.manifestBytes
        var expected: ImageOpenError?
        do { _ = try ImageVerifier.readManifest(data, file: image.path + "/manifest.json") } catch { expected = error }
        let wanted = try #require(expected)
        var found: ImageOpenError?
        do { _ = try ImageVerifier.verifyFolderStreaming(image.path) } catch { found = error }
        #expect(found?.description == wanted.description)
    }

    /// Entries are refused where the manifest is read (their paths become `StorePath`s there), yet a
    /// manifest with several faults names the same one as when entries were checked after decoding:
    /// a decoding error first, then the format and block size, then the first bad entry in file order.
    @Test(arguments: [
        (
            [("\"path\":\"a/1\"", "\"path\":\"../a/1\""), ("\"blockSize\":4096", "\"blockSize\":4000")],
            "blockSize 4000 is not a power of two from 512 to 1 MiB"
        ),
        ([("\"size\":1}", "\"size\":-1}"), ("\"path\":\"c\"", "\"path\":\"/c\"")], "file entry 'a/1' has a negative size"),
        (
            [("\"path\":\"b\"", "\"path\":\"b/./x\""), ("\"size\":3}", "\"size\":-3}")],
            "file entry 'b/./x' is not a path inside the store (empty or '.' path component); the manifest was edited or written by another tool"
        ),
        ([("\"path\":\"b\"", "\"path\":\"b/../x\""), ("\"sha256\":", "\"sha257\":")], "not a valid manifest: "),
    ])
    func aRefusedEntryKeepsItsPlaceAmongTheManifestsFaults(_ edits: [(String, String)], _ reason: String) throws {
        let image = try ImageFixture(["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)])
        for (old, new) in edits { try image.editManifest(old, new) }
        let file = image.path + "/manifest.json"
        let data = try image.manifestBytes
        var found: ImageOpenError?
        do { _ = try ImageVerifier.readManifest(data, file: file) } catch { found = error }
        #expect(found?.description.hasPrefix(file + ": " + reason) == true, "\(String(describing: found))")
        var streamed: ImageOpenError?
        do { _ = try ImageVerifier.verifyFolderStreaming(image.path) } catch { streamed = error }
        #expect(streamed?.description == found?.description)
    }

    @Test func editedManifestReportsTheSameProblemsAsTheWholeReader() throws {
        let image = try ImageFixture(trickyFiles)
        let original = String(decoding: try image.manifestBytes, as: UTF8.self)
        // The id no longer matches; a region's size on disk is wrong.
        try image.editManifest("\"name\":\"fixture\"", "\"name\":\"edited\"")
        try image.editManifest(
            "\"id\":\"world/a\",\"name\":\"A\",\"names\":{\"en\":\"A\"},\"parent\":\"world\",\"sizeOnDiskInBytes\":",
            "\"id\":\"world/a\",\"name\":\"A\",\"names\":{\"en\":\"A\"},\"parent\":\"world\",\"sizeOnDiskInBytes\":1")
        let report = try image.verify()
        #expect(report.problems.map(\.kind) == [.imageIDMismatch, .sizeOnDiskMismatch])

        // Written by another tool: spaces, keys in another order, the id field spelt differently.
        // The id is then checked by re-encoding, and sizes are summed after reading blockSize.
        var text = original.replacingOccurrences(of: "\"imageID\":\"", with: "\"imageID\" : \"")
        text = text.replacingOccurrences(of: "{\"blockSize\":4096,", with: "{")
        text = String(text.dropLast()) + ",\"blockSize\":4096}"
        try image.writeManifest(Data(text.utf8))
        #expect(try image.verify().problems.isEmpty)
    }

    @Test func anIDFieldInsideAStringDoesNotConfuseTheIDCheck() throws {
        let image = try ImageFixture(["a/1": bytes(1, 1), "b": bytes(2, 2)])
        // A region name holding the id field's text, escaped as JSON must: still one real id field.
        let sealedID = try ImageVerifier.verifyFolderStreaming(image.path).manifest.imageID
        try image.editManifest("\"name\":\"World\"", "\"name\":\"\\\"imageID\\\":\\\"\(sealedID)\\\"\"")
        let report = try image.verify()
        #expect(report.problems.map(\.kind) == [.imageIDMismatch])
    }

    @Test(arguments: [true, false])
    func idFieldTextBeforeTheRealOneIsBlankedOnlyWhenItHoldsTheID(_ sameID: Bool) throws {
        let image = try ImageFixture(["a/1": bytes(1, 1), "b": bytes(2, 2)])
        let sealedID = try ImageVerifier.verifyFolderStreaming(image.path).manifest.imageID
        // An unknown key ending in an escaped quote puts `"imageID":"…"` in the raw bytes first.
        let value = sameID ? sealedID : String(repeating: "0", count: 64)
        try image.editManifest("{", "{\"x\\\"imageID\":\"\(value)\",")
        #expect(try image.verify().problems.map(\.kind) == [.imageIDMismatch])
    }

    @Test func missingStoreFolderIsOneProblem() throws {
        let image = try ImageFixture(["a": bytes(1, 1)])
        try FileManager.default.removeItem(atPath: image.store)
        let report = try image.verify()
        #expect(report.problems.map(\.path) == ["store"])
        #expect(report.filesChecked == 0)
    }

    @Test func sortedWalkYieldsEveryNonFolderInBytewisePathOrder() throws {
        let image = try ImageFixture(trickyFiles)
        try FileManager.default.createSymbolicLink(atPath: image.store + "/a/link", withDestinationPath: "x")
        try FileManager.default.createDirectory(atPath: image.store + "/hollow/inside", withIntermediateDirectories: true)
        var walk = try DirectoryWalker.SortedWalk(root: image.store)
        var seen: [String] = []
        while try walk.next() { seen.append(String(decoding: walk.path, as: UTF8.self) + (walk.kind == .regular ? "" : "@")) }
        let expected = try DirectoryWalker.walk(image.store).filter { !$0.isDirectory }.map { $0.relativePath + ($0.isRegular ? "" : "@") }
        #expect(seen == expected)
        #expect(seen.count == trickyFiles.count + 1)
    }

    /// The POSIX listing a non-Linux build uses (`-DMAPPACK_PORTABLE`) walks the same tree in the
    /// same order, with the same kinds, as `getdents64` does.
    @Test func portableFolderListingWalksLikeGetdents() throws {
        let image = try ImageFixture(trickyFiles)
        try FileManager.default.createSymbolicLink(atPath: image.store + "/a/link", withDestinationPath: "x")
        try FileManager.default.createDirectory(atPath: image.store + "/hollow/inside", withIntermediateDirectories: true)
        func walked() throws -> [String] {
            var walk = try DirectoryWalker.SortedWalk(root: image.store)
            var seen: [String] = []
            while try walk.next() { seen.append(String(decoding: walk.path, as: UTF8.self) + (walk.kind == .regular ? "" : "@")) }
            return seen
        }
        let native = try walked()
        DirectoryEntryReader.forcePortable = true
        defer { DirectoryEntryReader.forcePortable = false }
        #expect(!DirectoryEntryReader.usesGetdents)
        let portable = try walked()
        #expect(portable == native)
        #expect(portable.count == trickyFiles.count + 1)
    }

    @Test(arguments: [["--sort=name"], []])
    func packedImageInAnyEntryOrderReportsWhatTheFolderDoes(_ order: [String]) throws {
        let image = try ImageFixture(trickyFiles)
        try image.remove("a-b")
        try image.remove("b/c/d/e/f/g/h-i")
        try image.write("a/w", Data("x".utf8))
        try image.write("a.b/z", Data())
        try image.write("b/large.bin", bytes(299_999, 6))
        try image.write("e/x y", Data("!".utf8))
        let folder = try ImageVerifier.verifyFolder(image.path)
        #expect(folder.problems.count == 6)
        let packed = image.folder.join("image.tar.zst")
        let pack = try Tool.run("/usr/bin/tar", order + ["--zstd", "-cf", packed, "-C", image.path, "manifest.json", "store"])
        #expect(pack.status == 0, "\(pack.stderr)")
        let whole = try ImageVerifier.verifyPacked(packed)
        #expect(whole.problems == folder.problems)
        #expect(whole.filesChecked == folder.filesChecked)
        #expect(whole.manifest == folder.manifest)
        let streamed = try ImageVerifier.verifyPackedStreaming(packed)
        #expect(streamed.problems == folder.problems)
        #expect(streamed.filesChecked == folder.filesChecked)
        #expect(streamed.manifest == folder.manifest.header)
    }

    @Test func treeCheckOfAnInMemoryListTakesAnyOrder() throws {
        let image = try ImageFixture(trickyFiles)
        var manifest = try ImageVerifier.readManifest(image.manifestBytes, file: "manifest.json").0
        manifest.files.reverse()
        let clean = ImageVerifier.verifyTree(image.store, manifest: manifest, hashContents: true, jobs: 2)
        #expect(clean.problems.isEmpty)
        #expect(clean.files == trickyFiles.count)
        try image.remove("a/x")
        try image.write("a/w", Data())
        #expect(
            ImageVerifier.verifyTree(image.store, manifest: manifest, hashContents: true, jobs: 2).problems.map { "\($0.kind) \($0.path)" }
                == ["extra a/w", "missing a/x"])
    }

    @Test(arguments: [1, 2])
    func copyWhileHashingStartsEachCopysWritebackAndHoldsTheSameBytes(_ jobs: Int) throws {
        let image = try ImageFixture(trickyFiles)
        let manifest = try ImageVerifier.readManifest(image.manifestBytes, file: "manifest.json").0
        let copy = image.folder.join("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        let started = Writeback.Counter()
        let (problems, failure) = ImageVerifier.copyVerified(
            image.store, to: copy, manifest: manifest, jobs: jobs, writeback: .counting(into: started))
        #expect(problems.isEmpty && failure == nil, "\(problems) \(String(describing: failure))")
        #expect(started.count == trickyFiles.count, "every copied file, once it is whole")
        for (path, content) in trickyFiles { #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/" + path)) == content, "\(path)") }
    }
}

/// The quick install's copy (issue 34): one pass over the streamed manifest and a sorted walk
/// that checks what `verify --quick` checks and copies each file as it reads it, making the copy's
/// folders as the sorted entries come.
@Suite struct StreamingCopyTests {
    /// Copies `image` into a new folder (outside the image); returns the outcome and the folder.
    private func copy(
        _ image: ImageFixture, hashContents: Bool = false, jobs: Int = 2, stop: @escaping @Sendable () -> Bool = { false }
    ) throws -> (ImageVerifier.StreamedCopy, TemporaryFolder) {
        let destination = TemporaryFolder("stream-copy")
        try FileManager.default.createDirectory(atPath: destination.path, withIntermediateDirectories: true)
        let copy = try ImageVerifier.copyFolderStreaming(
            image.path, manifest: image.folder.join("manifest.json"), to: destination.path, hashContents: hashContents, jobs: jobs,
            writeback: nil, stop: stop)
        return (copy, destination)
    }

    private func copiedFiles(_ destination: TemporaryFolder) throws -> Set<String> {
        Set(try DirectoryWalker.walk(destination.path).filter(\.isRegular).map(\.relativePath))
    }

    @Test(arguments: [1, 2, 4])
    func copiesEveryFileIntoFoldersMadeInPathOrder(_ jobs: Int) throws {
        let image = try ImageFixture(trickyFiles)
        let (copy, destination) = try copy(image, jobs: jobs)
        #expect(copy.problems.isEmpty, "\(copy.problems)")
        #expect(copy.copyFailure == nil)
        #expect(copy.files == trickyFiles.count)
        #expect(copy.manifest == (try ImageVerifier.readManifest(image.manifestBytes, file: "manifest.json").0.header))
        #expect(copy.manifest.regions.map(\.id) == ["world", "world/a"])
        #expect(try copiedFiles(destination) == Set(trickyFiles.keys))
        for (path, content) in trickyFiles { #expect(FileManager.default.contents(atPath: destination.join(path)) == content, "\(path)") }
    }

    @Test func findsWhatTheQuickVerificationFinds() throws {
        let image = try ImageFixture(trickyFiles)
        try image.write("a/x", bytes(21, 2))  // one byte longer
        try image.write("b/large.bin", bytes(299_999, 6))  // one byte shorter, several reads
        try image.write("e/x y", Data("!".utf8))  // same size, other bytes: not a quick check's business
        try image.remove("a-b")
        try image.write("b/new/folder/file", Data("x".utf8))
        let (copy, _) = try copy(image)
        let quick = try ImageVerifier.verifyFolderStreaming(image.path, hashContents: false, jobs: 2)
        #expect(copy.problems == quick.problems)
        #expect(
            copy.problems.map { "\($0.kind) \($0.path)" } == [
                "missing a-b", "sizeMismatch a/x", "sizeMismatch b/large.bin", "extra b/new/folder/file",
            ])
        let (hashed, _) = try self.copy(try ImageFixture(trickyFiles), hashContents: true)
        #expect(hashed.problems.isEmpty)
    }

    @Test func sameSizeEditIsFoundWhenHashing() throws {
        let image = try ImageFixture(trickyFiles)
        try image.write("e/x y", Data("!".utf8))
        #expect(try copy(image, hashContents: true).0.problems.map { "\($0.kind) \($0.path)" } == ["digestMismatch e/x y"])
    }

    @Test func editedManifestIsAProblemAsInVerify() throws {
        let image = try ImageFixture(trickyFiles)
        try image.editManifest("\"name\":\"fixture\"", "\"name\":\"edited\"")
        #expect(try copy(image).0.problems.map(\.kind) == [.imageIDMismatch])
    }

    @Test func filesOutOfOrderInTheManifestAreRefused() throws {
        let image = try ImageFixture(["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)], order: ["a/1", "c", "b"])
        #expect(throws: ImageOpenError.self) { _ = try copy(image) }
    }

    @Test func stopsBeforeTheFirstFileWhenAsked() throws {
        let image = try ImageFixture(trickyFiles)
        let (copy, destination) = try copy(image, stop: { true })
        #expect(copy.files == 0)
        #expect(try copiedFiles(destination).isEmpty)
    }

    @Test func aFileInTheWayOfAFolderIsTheCopysFailure() throws {
        let image = try ImageFixture(trickyFiles)
        let destination = TemporaryFolder("stream-copy-blocked")
        // A file where the copy's folder `b` should go.
        try FileManager.default.createDirectory(atPath: destination.path, withIntermediateDirectories: true)
        try Data("in the way".utf8).write(to: URL(fileURLWithPath: destination.join("b")))
        let copy = try ImageVerifier.copyFolderStreaming(
            image.path, manifest: image.folder.join("manifest.json"), to: destination.path, hashContents: false, jobs: 2, writeback: nil)
        let failure = try #require(copy.copyFailure)
        #expect(failure.description.contains(destination.join("b")), "\(failure)")
    }
}

/// An in-place first start reads its base's manifest without checking paths
/// (`readManifestStreaming(at:checkingPaths: false)`): whatever else it accepts and refuses, and why,
/// are the whole reader's.
@Suite struct ManifestWithoutPathsTests {
    private static let files = ["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)]

    @Test(arguments: [
        ("\"size\":1}", "\"size\":1"),  // truncated object
        ("\"blockSize\":4096", "\"blockSize\":4000"),  // not a power of two
        ("\"size\":2}", "\"size\":-2}"),  // negative size
        ("\"format\":\"mappack-image/1\"", "\"format\":\"mappack-image/2\""),
        ("\"sha256\":", "\"sha257\":"),  // a required field missing
        ("\"name\":\"fixture\"", "\"name\":7"),  // wrong type, after the files
        ("\"name\":\"fixture\"", "\"name\":\"edited\""),  // the id no longer matches
        ("\"id\":\"world/a\"", "\"id\":\"world\""),  // a region id twice
        ("\"sizeOnDiskInBytes\":", "\"sizeOnDiskInBytes\":1"),  // a region's size is not what its files take
        ("}],\"format\":", "},{}],\"format\":"),  // an entry that is no entry, last in the list
        ("\"regions\":[{", "\"regions\":[{\"x\":[1],\"format\":\"y\","),  // the list's end marker again, later
        ("\"regions\":[{", "\"regions\":[{\"x\":\"],\\\"format\\\":\","),  // the marker's text in a string
        ("{\"blockSize\":4096,", "{"),  // no block size before the list: sizes summed after
        (",\"format\":", " ,\"format\":"),  // not where mappack puts it
    ])
    func aManifestReadWithoutPathsGetsTheWholeReadersResult(_ edit: (String, String)) throws {
        let image = try ImageFixture(Self.files)
        try image.editManifest(edit.0, edit.1)
        let file = image.path + "/manifest.json"
        var whole: (ImageManifest, [VerifyProblem])?
        var expected: ImageOpenError?
        let bytes = try image.manifestBytes
        do { whole = try ImageVerifier.readManifest(bytes, file: file) } catch { expected = error }
        var read: (manifest: ManifestHeader, problems: [VerifyProblem])?
        var found: ImageOpenError?
        do { read = try ImageVerifier.readManifestStreaming(at: file, checkingPaths: false) } catch { found = error }
        #expect(found?.description == expected?.description)
        #expect(read?.manifest == whole?.0.header)
        #expect(read?.problems.map(\.kind) == whole?.1.map(\.kind))
    }
}

/// Issue 44: an in-place first start reads its base's manifest without the file list
/// (`readManifestSkippingFiles`): the members around the list, found where the list ends, are the
/// ones the whole reader reads, or the skim gives up (nil) and the whole reader decides.
@Suite struct ManifestSkippingFilesTests {
    private static let files = ["a/1": bytes(1, 1), "b": bytes(2, 2), "c": bytes(3, 3)]

    @Test func aManifestAsMappackWritesItIsReadWithoutItsList() throws {
        let image = try ImageFixture(Self.files)
        let file = image.path + "/manifest.json"
        let skimmed = try #require(ImageVerifier.readManifestSkippingFiles(at: file))
        let (whole, _) = try ImageVerifier.readManifest(try image.manifestBytes, file: file)
        #expect(skimmed.manifest == whole.header)
        #expect(try skimmed.idProblem() == nil)
    }

    @Test func anEditedManifestsIDProblemIsFound() throws {
        let image = try ImageFixture(Self.files)
        try image.editManifest("\"name\":\"fixture\"", "\"name\":\"edited\"")
        let skimmed = try #require(ImageVerifier.readManifestSkippingFiles(at: image.path + "/manifest.json"))
        #expect(try skimmed.idProblem()?.kind == .imageIDMismatch)
    }

    /// Where the list's end marker appears again (in an entry, in a region, in a string), the skim reads
    /// what the whole reader reads, or nothing.
    @Test(arguments: [
        // In an entry: brackets left open after it, so the rest does not read as the manifest's end.
        ("\"size\":1}", "\"size\":1,\"x\":[1],\"format\":\"mappack-image/1\",\"regions\":[]}", false),
        ("\"regions\":[{", "\"regions\":[{\"x\":[1],\"format\":\"y\",", true),  // in a region, after the list
        ("\"regions\":[{", "\"regions\":[{\"x\":\"],\\\"format\\\":\",", true),  // the marker's text in a string
        ("},{\"bundle\"", "},\"x\",{\"bundle\"", true),  // not JSON inside the list: left to the list's readers
        ("\"blockSize\":4096", "\"blockSize\":4000", false),  // a header the whole reader refuses
        (",\"format\":", " ,\"format\":", false),  // not where mappack puts it
    ])
    func theSkimReadsTheWholeReadersMembersOrNothing(_ edit: (String, String, Bool)) throws {
        let image = try ImageFixture(Self.files)
        try image.editManifest(edit.0, edit.1)
        let file = image.path + "/manifest.json"
        let skimmed = ImageVerifier.readManifestSkippingFiles(at: file)
        #expect((skimmed != nil) == edit.2)
        guard let skimmed else { return }
        let header: ManifestHeader? = try? ImageVerifier.readManifestStreaming(at: file, checkingPaths: false).manifest
        // The only manifests the skim takes that the whole reader refuses are bad inside the list.
        if let header { #expect(skimmed.manifest == header) } else { #expect(edit.1.contains("\"x\",{")) }
    }
}
