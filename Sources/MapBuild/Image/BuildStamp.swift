import Foundation
import MapFormat
import MapIO
import MapVerify

/// What an image says about itself in one line of a report, without decoding its manifest.
package struct ImageSummary: Codable, Sendable, Equatable {
    package var name: String
    package var mapVersion: MapVersion
    package var imageID: String
    package var regions: Int
    package var files: Int
    /// Size on disk of the image's root regions (the whole store).
    package var sizeOnDiskInBytes: Int64

    init(name: String, mapVersion: MapVersion, imageID: String, regions: Int, files: Int, sizeOnDiskInBytes: Int64) {
        self.name = name
        self.mapVersion = mapVersion
        self.imageID = imageID
        self.regions = regions
        self.files = files
        self.sizeOnDiskInBytes = sizeOnDiskInBytes
    }

    init(_ manifest: ImageManifest) {
        name = manifest.name
        mapVersion = manifest.mapVersion
        imageID = manifest.imageID
        regions = manifest.regions.count
        files = manifest.files.count
        sizeOnDiskInBytes = manifest.files.reduce(0) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: manifest.blockSize) }
    }
}

/// `.<name>-<mapVersion>.build.json` beside the outputs: the inputs a build consumed (as one
/// key) and what it wrote, so an unchanged rebuild is recognised without unpacking anything.
///
/// Outputs are re-checked by size and modification time (ns) of `manifest.json` and of the
/// `.tar.zst`: a new build always writes a new manifest, so a replaced image is noticed. Files
/// changed inside an image's store are not looked for (that would mean walking the whole store,
/// more than the no-op build may cost): `mappack verify` finds them, `--force` rebuilds.
struct BuildStamp: Codable, Sendable {
    static let formatTag = FormatTag(name: "mappack-buildstamp", major: 1)

    struct Output: Codable, Sendable, Equatable {
        var name: String
        var size: Int64
        var modified: Int64
        /// The file's SHA-256 (hex), for a single-file output of a build that did not sync: what a
        /// run after a reboot checks it against. An image folder's manifest needs none: the manifest
        /// itself lists every file's digest.
        var sha256: String?
    }

    var format: String
    var key: String
    var summary: ImageSummary
    var outputs: [Output]
    /// Bundles in the plan (for the report of an up-to-date build); absent in older stamps.
    var bundles: Int?
    /// Whether the build synced its outputs (`--sync`); absent in older stamps, whose builds always did.
    var synced: Bool?
    /// The boot the build ran in (`/proc/sys/kernel/random/boot_id`). Outputs a build did not sync may
    /// have lost writes in a power cut: after a reboot they are checked in full (`checkedInFull`)
    /// before they are called up to date, and built again when anything differs.
    var bootID: String?

    /// The key of everything that decides an image's bytes, from the raw inputs, so it can be
    /// computed before the catalog is decoded: the recipe's and catalog's bytes, mappack's version,
    /// `SOURCE_DATE_EPOCH` (without it the build time comes from the catalog, already covered),
    /// the output formats and the signing key.
    static func key(recipeSource: Data, catalogSHA256: SHA256Digest, epoch: Int?, formats: [Recipe.OutputFormat], signingKey: String?) -> String {
        let hasher = SHA256()
        for part in [
            recipeSource, Data(catalogSHA256.hex.utf8), Data(MappackVersion.current.utf8), Data((epoch.map { "epoch \($0)" } ?? "catalog").utf8),
            Data(formats.map(\.rawValue).joined(separator: ",").utf8), Data((signingKey.map { SHA256.hex(Data($0.utf8)) } ?? "").utf8),
        ] {
            hasher.update(Data(SHA256.hex(part).utf8))  // a digest of a digest for the catalog: same either way
        }
        return hasher.finalizeHex()
    }

    static func path(root: String, imageName: String) -> String { root + "/.\(imageName).build.json" }

    /// Size and modification time (ns) of `path`.
    static func output(root: String, name: String) -> Output? {
        var info = stat()
        guard unsafe stat(root + "/" + name, &info) == 0 else { return nil }
        return Output(name: name, size: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// Whether `name` is an image folder's manifest (`<image>/manifest.json`), which stands for the folder.
    private static func isImageFolder(_ name: String) -> Bool { name.hasSuffix("/" + ImageManifest.fileName) }

    /// Records what a build wrote. Without `synced`, each single-file output's SHA-256 too (one more
    /// read of files the build just wrote, from the page cache), for the check after a reboot.
    static func write(root: String, imageName: String, key: String, summary: ImageSummary, outputNames: [String], bundles: Int, synced: Bool)
        throws
    {
        var outputs = outputNames.compactMap { output(root: root, name: $0) }
        if !synced {
            for index in outputs.indices where !isImageFolder(outputs[index].name) {
                // One that cannot be read now has no digest: the check after a reboot then builds it again.
                outputs[index].sha256 = (try? SHA256.digestOfFile(root + "/" + outputs[index].name))?.digest.hex
            }
        }
        let stamp = BuildStamp(
            format: formatTag.description, key: key, summary: summary, outputs: outputs, bundles: bundles, synced: synced,
            bootID: currentBootID)
        // The stamp says the outputs are done: after them, on disk (with `--sync`) like them.
        try FileSystem.writeAtomically(try CanonicalJSON.encode(stamp), to: path(root: root, imageName: imageName))
    }

    /// This boot's id: `/proc/sys/kernel/random/boot_id`, new at every boot (nil where there is none).
    /// Test builds may set it with `MAPPACK_TEST_BOOT_ID` to play a reboot.
    static var currentBootID: String? {
        #if MAPPACK_TEST_HOOKS
            if let playing = ProcessInfo.processInfo.environment["MAPPACK_TEST_BOOT_ID"] { return playing }
        #endif
        guard let data = try? ReadableFile.contents(of: "/proc/sys/kernel/random/boot_id", limit: 128) else { return nil }
        let id = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// The stamp when the outputs are still exactly what a build with `key` wrote. `checking` is
    /// called before outputs written without syncs in another boot are checked in full.
    static func upToDate(root: String, imageName: String, key: String, checking: () -> Void = {}) -> BuildStamp? {
        upToDate(stampAt: path(root: root, imageName: imageName), root: root, key: key, checking: checking)
    }

    /// Like `upToDate(root:imageName:key:checking:)` without knowing the image's name (the catalog's
    /// map version is part of it and is not decoded yet): tries every stamp in `root`.
    static func upToDate(root: String, key: String, checking: () -> Void = {}) -> BuildStamp? {
        guard let names = try? DirectoryWalker.entries(of: root) else { return nil }
        for name in names where name.hasPrefix(".") && name.hasSuffix(".build.json") {
            if let stamp = upToDate(stampAt: root + "/" + name, root: root, key: key, checking: checking) { return stamp }
        }
        return nil
    }

    private static func upToDate(stampAt path: String, root: String, key: String, checking: () -> Void) -> BuildStamp? {
        guard let data = try? ReadableFile.contents(of: path, limit: 1 << 20),
            let stamp = try? JSONDecoder().decode(BuildStamp.self, from: data),
            stamp.format == formatTag.description, stamp.key == key, !stamp.outputs.isEmpty
        else { return nil }
        // Output names are `<image>/manifest.json` or `<image>.tar.zst`: a stamp naming anything else
        // (outside the output folder) is not ours.
        for recorded in stamp.outputs where StorePath.problem(recorded.name) != nil || recorded.name.hasPrefix(".") { return nil }
        for recorded in stamp.outputs {
            guard let now = output(root: root, name: recorded.name), now.size == recorded.size, now.modified == recorded.modified else { return nil }
        }
        // Outputs written without syncs are trusted as they are only in the boot that wrote them.
        let boot = currentBootID
        if stamp.synced != false || (boot != nil && stamp.bootID == boot) { return stamp }
        checking()
        guard checkedInFull(stamp, root: root) else {
            // Not up to date: the build that follows must not check them again.
            try? FileSystem.removeFile(path)
            return nil
        }
        // Read back after the reboot, so from the disk: trusted for the rest of this boot (where
        // the system names no boot, every run checks them).
        var renewed = stamp
        renewed.bootID = boot
        if let bytes = try? CanonicalJSON.encode(renewed) { try? FileSystem.writeAtomically(bytes, to: path) }
        return renewed
    }

    /// Whether every output still holds what the build wrote, every byte read: an image folder
    /// verified against its manifest (each file's size and SHA-256, the manifest's id), any other
    /// file against the digest the stamp recorded. A stamp without those digests (an older
    /// mappack's) fails.
    private static func checkedInFull(_ stamp: BuildStamp, root: String) -> Bool {
        for recorded in stamp.outputs {
            if isImageFolder(recorded.name) {
                let folder = root + "/" + String(recorded.name.dropLast(ImageManifest.fileName.utf8.count + 1))
                guard let report = try? ImageVerifier.verifyFolderStreaming(folder, hashContents: true), report.ok else { return false }
            } else {
                guard let expected = recorded.sha256, let (digest, size) = try? SHA256.digestOfFile(root + "/" + recorded.name),
                    size == recorded.size, digest.hex == expected
                else { return false }
            }
        }
        return true
    }
}
