import Foundation
import MapFormat

/// Work recorded in the state database before it starts and cleared when it commits,
/// so a process killed half way leaves evidence for the next open.
enum PendingOperation: Equatable {
    case install(imageID: String)
    case delete([RegionID])
    case cacheImport
    case move(to: String)
    /// An update or a run-time download switching the store to a new manifest (see `TransitionRecord`).
    case transition(TransitionRecord)

    var kind: String {
        switch self {
        case .install: "install"
        case .delete: "delete"
        case .cacheImport: "cacheImport"
        case .move: "move"
        case .transition: "transition"
        }
    }

    var detail: String {
        switch self {
        case .install(let imageID): imageID
        case .delete(let ids): ids.map(\.rawValue).joined(separator: "\n")
        case .cacheImport: ""
        case .move(let to): to
        case .transition(let record): (try? String(decoding: JSONEncoder().encode(record), as: UTF8.self)) ?? ""
        }
    }

    init?(kind: String, detail: String) {
        switch kind {
        case "install": self = .install(imageID: detail)
        case "delete": self = .delete(detail.split(separator: "\n").map { RegionID(String($0)) })
        case "cacheImport": self = .cacheImport
        case "move": self = .move(to: detail)
        case "transition":
            guard let record = try? JSONDecoder().decode(TransitionRecord.self, from: Data(detail.utf8)) else { return nil }
            self = .transition(record)
        default: return nil
        }
    }
}

/// What a pending transition commits: the new manifest's identity and every region's state after it.
/// Kept in the pending row so repair can finish the switch without the process that started it.
struct TransitionRecord: Codable, Equatable {
    /// `update` or `download`, for reports.
    var kind: String
    /// The image id of the manifest the transition installs.
    var imageID: String
    /// Its map version.
    var mapVersion: String
    /// Region id → state after the commit (regions of the new manifest).
    var states: [String: String]
    /// Meta keys set with the commit (catalog URL, support window), as stored: `StateMetaKey` raw values.
    var meta: [String: String]
    /// The rows of an added catalog the commit records (its regions; for an update its version); nil for
    /// the image's catalog, and in records written before several catalogs.
    var catalog: CatalogCommit?

    /// A record of a transition to `manifest` whose commit sets `states`, the `meta` rows and `catalog`'s.
    init(kind: String, manifest: ImageManifest, states: [RegionID: RegionState], meta: [StateMetaKey: String], catalog: CatalogCommit? = nil) {
        self.kind = kind
        self.catalog = catalog
        imageID = manifest.imageID
        mapVersion = manifest.mapVersion.rawValue
        self.states = Dictionary(uniqueKeysWithValues: states.map { ($0.key.rawValue, $0.value.storedValue) })
        self.meta = Dictionary(uniqueKeysWithValues: meta.map { ($0.key.rawValue, $0.value) })
    }

    /// A record of a transition that has not staged its manifest yet.
    init(startingTransition kind: String) {
        (self.kind, imageID, mapVersion, states, meta, catalog) = (kind, "", "", [:], [:], nil)
    }

    /// The meta rows the commit sets; a key this library does not know (from a newer library) is left out.
    var metaRows: [StateMetaKey: String] {
        Dictionary(uniqueKeysWithValues: meta.compactMap { key, value in StateMetaKey(rawValue: key).map { ($0, value) } })
    }

    /// The states the commit records, by region.
    var regionStates: [RegionID: RegionState] {
        Dictionary(uniqueKeysWithValues: states.map { (RegionID($0.key), RegionState(stored: $0.value)) })
    }
}
