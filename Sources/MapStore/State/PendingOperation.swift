import Foundation
import MapFormat

/// Work recorded in the state database before it starts and cleared when it commits,
/// so a process killed half way leaves evidence for the next open.
enum PendingOperation: Equatable {
    case install(imageID: String)
    case delete([RegionID])
    case cacheImport
    case move(to: String)

    var kind: String {
        switch self {
        case .install: "install"
        case .delete: "delete"
        case .cacheImport: "cacheImport"
        case .move: "move"
        }
    }

    var detail: String {
        switch self {
        case .install(let imageID): imageID
        case .delete(let ids): ids.map(\.rawValue).joined(separator: "\n")
        case .cacheImport: ""
        case .move(let to): to
        }
    }

    init?(kind: String, detail: String) {
        switch kind {
        case "install": self = .install(imageID: detail)
        case "delete": self = .delete(detail.split(separator: "\n").map { RegionID(String($0)) })
        case "cacheImport": self = .cacheImport
        case "move": self = .move(to: detail)
        default: return nil
        }
    }
}
