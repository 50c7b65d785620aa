import MapFormat
import MapIO
import MapVerify

/// One way the installed store differs from its manifest.
public struct StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// What is wrong: `missing`, `extra`, `notRegularFile`, `sizeMismatch`, `digestMismatch`, ….
    public let kind: String
    /// Store-relative path concerned.
    public let path: String
    /// Installed regions the file belongs to.
    public let regions: [RegionID]
    /// Detail for people.
    public let detail: String

    init(kind: String, path: String, regions: [RegionID], detail: String) {
        self.kind = kind; self.path = path; self.regions = regions; self.detail = detail
    }

    init(_ problem: VerifyProblem) {
        kind = problem.kind.rawValue; path = problem.path; regions = problem.regions; detail = problem.detail
    }

    public var description: String {
        let owners = regions.isEmpty ? "" : " (region \(regions.map(\.rawValue).joined(separator: ", ")))"
        return "\(path)\(owners): \(detail)"
    }
}
