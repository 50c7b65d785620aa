import Foundation
import MapFormat

extension ImageVerifier {
    /// Verifies a packed image (`.tar.zst`) in one streaming pass, without unpacking to disk:
    /// the manifest must come first; every other entry is hashed as it streams by.
    package static func verifyPacked(_ path: String, trusted: [TrustedKey] = []) throws(ImageOpenError) -> VerifyReport {
        let reader: ArchiveReader
        do { reader = try ArchiveReader(path: path) } catch { throw .archive(path: path, error) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var manifest: ImageManifest?
        var problems: [VerifyProblem] = []
        var seen: [String: (size: Int64, sha256: String)] = [:]
        var seedDigest: (hex: String, size: Int64)?
        var bytes: Int64 = 0
        var manifestBytes = Data()
        var signature: Data?
        do throws(ArchiveError) {
            while let entry = try reader.next() {
                let name = try SafeExtractor.cleanPath(entry)
                switch entry.kind {
                case .directory: continue
                case .regular: break
                default: throw ArchiveError.forbiddenType(entry: name, type: "\(entry.kind)")
                }
                if manifest == nil {
                    guard name == ImageManifest.fileName else { throw ImageOpenError.notAnImage(path: path).asArchive }
                    guard entry.size <= maxManifestBytes else { throw ArchiveError.tooLarge(entry: name, limit: Int64(maxManifestBytes)) }
                    var data = Data()
                    while true {
                        let n = try reader.readData(into: buffer)
                        if n == 0 { break }
                        data.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    }
                    let (decoded, found): (ImageManifest, [VerifyProblem])
                    do { (decoded, found) = try readManifest(data, file: path + ":" + name) } catch { throw ArchiveError.malformed("\(error)") }
                    manifest = decoded
                    manifestBytes = data
                    problems += found
                    continue
                }
                if name == ImageManifest.signatureFileName {
                    var data = Data()
                    while true {
                        let n = try reader.readData(into: buffer)
                        if n == 0 { break }
                        data.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                        if data.count > 4096 { throw ArchiveError.tooLarge(entry: name, limit: 4096) }
                    }
                    signature = data
                    continue
                }
                let hasher = SHA256()
                var size: Int64 = 0
                while true {
                    let n = try reader.readData(into: buffer)
                    if n == 0 { break }
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                    size += Int64(n)
                }
                bytes += size
                let digest = hasher.finalizeHex()
                if name == ImageManifest.cacheSeedFileName {
                    seedDigest = (digest, size)
                } else if name.hasPrefix(ImageManifest.storeFolder + "/") {
                    seen[String(name.dropFirst(ImageManifest.storeFolder.count + 1))] = (size, digest)
                } else {
                    problems.append(VerifyProblem(kind: .extra, path: name, regions: [], detail: "entry is not part of an image"))
                }
            }
        } catch {
            if case .malformed(let message) = error, message == notAnImageMarker { throw .notAnImage(path: path) }
            // Unreadable before a manifest was found: this is not an image at all.
            if manifest == nil { throw .notAnImage(path: path) }
            throw .archive(path: path, error)
        }
        guard let manifest else { throw .notAnImage(path: path) }
        if let problem = try checkSignature(manifestBytes: manifestBytes, signature: signature, trusted: trusted) { problems.append(problem) }
        var owners: [BundleDigest: [RegionID]] = [:]
        for region in manifest.regions { for bundle in region.bundles { owners[bundle, default: []].append(region.id) } }
        let expected = Set(manifest.files.map(\.path))
        for name in seen.keys.sorted() where !expected.contains(name) {
            problems.append(VerifyProblem(kind: .extra, path: name, regions: [], detail: "file is not in the manifest"))
        }
        for file in manifest.files {
            let regions = owners[file.bundle] ?? []
            guard let found = seen[file.path] else {
                problems.append(VerifyProblem(kind: .missing, path: file.path, regions: regions, detail: "file is missing")); continue
            }
            if found.size != file.size {
                problems.append(VerifyProblem(kind: .sizeMismatch, path: file.path, regions: regions, detail: "size \(found.size), manifest says \(file.size)"))
            } else if found.sha256 != file.sha256 {
                problems.append(VerifyProblem(kind: .digestMismatch, path: file.path, regions: regions, detail: "content differs (sha256 \(found.sha256), manifest says \(file.sha256))"))
            }
        }
        if let seed = manifest.cacheSeed, seedDigest?.hex != seed.sha256 || seedDigest?.size != seed.size {
            problems.append(VerifyProblem(kind: .cacheSeedMismatch, path: ImageManifest.cacheSeedFileName, regions: seed.regions,
                                          detail: seedDigest == nil ? "cache seed is missing" : "cache seed differs from the manifest"))
        }
        problems.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        var report = VerifyReport(manifest: manifest, problems: problems, filesChecked: manifest.files.count, bytesHashed: bytes)
        report.signed = signature != nil
        return report
    }

    fileprivate static let notAnImageMarker = "first entry is not manifest.json"
}

private extension ImageOpenError {
    /// Carries "not an image" through the archive loop's typed error.
    var asArchive: ArchiveError { .malformed(ImageVerifier.notAnImageMarker) }
}
