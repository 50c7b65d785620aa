import MapFormat
import MapIO

/// What an entry of a packed image (`.tar.zst`) is, by the one rule `mappack verify` and
/// MapStore's install both apply: the first regular file is `manifest.json`; after it only
/// `manifest.sig`, `cache-seed.sqlite` and files under `store/`; folders only `store` and below.
package enum PackedImageEntry: Equatable, Sendable {
    case manifest
    case signature
    case cacheSeed
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

        package var description: String {
            switch self {
            case .manifestNotFirst(let entry):
                "entry '\(entry)' comes before \(ImageManifest.fileName); an image's first file must be its manifest"
            case .notPartOfImage(let entry):
                "entry '\(entry)' is not part of an image (only \(ImageManifest.fileName), \(ImageManifest.signatureFileName), "
                    + "\(ImageManifest.cacheSeedFileName) and \(ImageManifest.storeFolder)/ may be at the top)"
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
}
