import MapFormat
import MapIO
import MapVerify

/// One way the installed store differs from its manifest.
public struct StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// An installed file is missing.
        case missing
        /// A file no installed region lists.
        case extra
        /// A listed path that is a folder, a link or another non-regular file.
        case notRegularFile
        /// A file with another size than the manifest's.
        case sizeMismatch
        /// A file with another SHA-256 than the manifest's.
        case digestMismatch
        /// A region whose recorded size on disk disagrees with its files.
        case sizeOnDiskMismatch
        /// The kept manifest's image id disagrees with its content or with the state.
        case imageIDMismatch
        /// The kept manifest's map version disagrees with the state.
        case mapVersionMismatch
        /// The cache seed disagrees with the manifest.
        case cacheSeedMismatch
        /// The kept signature is missing or does not verify.
        case signature
        /// A region state this library does not know.
        case unknownRegionState
        /// An operation did not finish; call `repair()`.
        case pendingOperation
    }

    /// What is wrong.
    public let kind: Kind
    /// Store-relative path concerned.
    public let path: String
    /// Installed regions the file belongs to.
    public let regions: [RegionID]
    /// Detail for people.
    public let detail: String

    init(kind: Kind, path: String, regions: [RegionID], detail: String) {
        self.kind = kind
        self.path = path
        self.regions = regions
        self.detail = detail
    }

    init(_ problem: VerifyProblem) {
        kind = Kind(problem.kind)
        path = problem.path
        regions = problem.regions
        detail = problem.detail
    }

    public var description: String {
        let owners = regions.isEmpty ? "" : " (region \(regions.map(\.rawValue).joined(separator: ", ")))"
        return "\(path)\(owners): \(detail)"
    }
}

extension StoreProblem.Kind {
    /// The store's kind for a verifier's.
    init(_ kind: VerifyProblem.Kind) {
        switch kind {
        case .missing: self = .missing
        case .extra: self = .extra
        case .notRegularFile: self = .notRegularFile
        case .sizeMismatch: self = .sizeMismatch
        case .digestMismatch: self = .digestMismatch
        case .sizeOnDiskMismatch: self = .sizeOnDiskMismatch
        case .imageIDMismatch: self = .imageIDMismatch
        case .cacheSeedMismatch: self = .cacheSeedMismatch
        case .signature: self = .signature
        }
    }
}
