import MapFormat
import MapIO

/// What an entry of an image is, by the one rule `mappack verify` and MapStore's install both
/// apply, to a packed image (`.tar.zst`) and to an image folder alike: at the top only
/// `manifest.json`, `manifest.sig`, `cache-seed.sqlite` (files) and `store/` (a folder), each once
/// (a folder may also hold `manifest.json.minisig`); in an archive the first regular file is
/// `manifest.json`, and folders are only `store` and below.
package enum PackedImageEntry: Equatable, Sendable {
    case manifest
    case signature
    case cacheSeed
    /// `manifest.json.minisig`, beside the manifest of an image folder (never packed).
    case minisignSignature
    /// A store file, by its store-relative path.
    case store(String)
    /// The `store` folder or a folder below it.
    case storeFolder

    /// Why an entry has no place in an image.
    package enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The first regular file is not `manifest.json` (it names the file that came first).
        case manifestNotFirst(entry: String)
        /// An entry outside the image's layout.
        case notPartOfImage(entry: String)
        /// A file entry that came before under the same name: readers could disagree on which one counts.
        case duplicate(entry: String)

        /// The entry refused.
        package var entry: String {
            switch self {
            case .manifestNotFirst(let entry), .notPartOfImage(let entry), .duplicate(let entry): entry
            }
        }

        package var description: String {
            switch self {
            case .manifestNotFirst(let entry):
                "entry '\(entry)' comes before \(ImageManifest.fileName); an image's first file must be its manifest"
            case .notPartOfImage(let entry):
                "entry '\(entry)' is not part of an image (only \(ImageManifest.fileName), \(ImageManifest.signatureFileName), "
                    + "\(ImageManifest.cacheSeedFileName) and \(ImageManifest.storeFolder)/ may be at the top, "
                    + "and \(ImageManifest.minisignFileName) in a folder); remove it"
            case .duplicate(let entry):
                "entry '\(entry)' appears twice; an image holds each file once (readers could disagree on which one counts), rebuild or repack it"
            }
        }
    }

    /// The rule applied to an archive's entries in order: it keeps what spans entries. Every
    /// repeated top-level file is refused here, a repeated store file when it follows its twin (as
    /// in a sorted archive); the extractor's ledger refuses every other repeat, and `mappack
    /// verify` finds it as a store file the manifest does not hold (memory does not grow with the
    /// file count).
    package struct Rule: Sendable {
        private var filesBefore = 0
        private var topLevelFiles: Set<String> = []
        private var lastStoreFile = ""

        package init() {}

        /// The role of the next entry, at the clean relative `path`.
        package mutating func admit(_ path: String, isDirectory: Bool) -> Result<PackedImageEntry, Refusal> {
            let role = PackedImageEntry.classify(path, isDirectory: isDirectory, filesBefore: filesBefore)
            guard !isDirectory else { return role }
            filesBefore += 1
            switch role {
            case .success(.store):
                defer { lastStoreFile = path }
                return path == lastStoreFile ? .failure(.duplicate(entry: path)) : role
            case .success:
                return topLevelFiles.insert(path).inserted ? role : .failure(.duplicate(entry: path))
            case .failure(.notPartOfImage) where path == ImageManifest.fileName:
                // A second manifest is a repeat, not a stranger.
                return .failure(.duplicate(entry: path))
            case .failure:
                return role
            }
        }
    }

    /// The role of the entry at the clean relative `path`; `filesBefore` counts the regular files before it.
    package static func classify(_ path: String, isDirectory: Bool, filesBefore: Int) -> Result<PackedImageEntry, Refusal> {
        let storePrefix = ImageManifest.storeFolder + "/"
        if isDirectory {
            return path == ImageManifest.storeFolder || path.hasPrefix(storePrefix) ? .success(.storeFolder) : .failure(.notPartOfImage(entry: path))
        }
        if filesBefore == 0 {
            return path == ImageManifest.fileName ? .success(.manifest) : .failure(.manifestNotFirst(entry: path))
        }
        switch path {
        case ImageManifest.signatureFileName: return .success(.signature)
        case ImageManifest.cacheSeedFileName: return .success(.cacheSeed)
        default:
            guard path.hasPrefix(storePrefix), path.count > storePrefix.count else { return .failure(.notPartOfImage(entry: path)) }
            return .success(.store(String(path.dropFirst(storePrefix.count))))
        }
    }

    /// The role of `name`, an entry directly in an image folder (where order means nothing and a
    /// name is there once): the top-level part of the rule above.
    package static func classifyInFolder(_ name: String, isDirectory: Bool) -> Result<PackedImageEntry, Refusal> {
        switch (name, isDirectory) {
        case (ImageManifest.fileName, false): .success(.manifest)
        case (ImageManifest.signatureFileName, false): .success(.signature)
        case (ImageManifest.cacheSeedFileName, false): .success(.cacheSeed)
        case (ImageManifest.minisignFileName, false): .success(.minisignSignature)
        case (ImageManifest.storeFolder, true): .success(.storeFolder)
        default: .failure(.notPartOfImage(entry: name))
        }
    }

    /// The entries of the image folder at `folder` the rule refuses, by name; empty when the folder
    /// cannot be listed (reading its manifest then says why).
    package static func refusals(inFolder folder: String) -> [Refusal] {
        guard let names = try? DirectoryWalker.entries(of: folder) else { return [] }
        return names.compactMap { name in
            let isDirectory = (try? FileSystem.status(folder + "/" + name))??.isDirectory ?? false
            if case .failure(let refusal) = classifyInFolder(name, isDirectory: isDirectory) { return refusal }
            return nil
        }
    }
}
