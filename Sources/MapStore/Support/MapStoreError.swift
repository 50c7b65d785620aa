import Foundation
import MapFormat

/// Why a MapStore operation was refused or failed.
public enum MapStoreError: Error, Sendable, CustomStringConvertible {
    /// The offered image is not a usable mappack image (`reason` says why).
    case invalidImage(path: String, reason: String)
    /// An interrupted operation or corruption must be repaired first.
    case repairNeeded(status: StoreStatus)
    /// `repair()` needs the preinstalled image to restore files or re-install, and none was offered.
    case imageNeededForRepair(reason: String)
    /// Repair ran but the store still does not verify.
    case repairFailed(problems: [StoreProblem])
    /// Nothing is installed.
    case notInstalled
    /// A region id that is not installed.
    case unknownRegion(RegionID)
    /// A cache seed whose map version is older than the store's.
    case seedOlderThanStore(seed: MapVersion, store: MapVersion)
    /// A file that is not a mappack cache database.
    case invalidCacheSeed(path: String, reason: String)
    /// `moveData(to:)` needs an empty or new destination.
    case destinationNotEmpty(path: String)
    /// A file-system or database step failed.
    case io(operation: String, path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidImage(let path, let reason): "\(path): not a usable preinstall image: \(reason)"
        case .repairNeeded(let status): "the map storage is \(status); call repair() (or `mappack store repair`) first"
        case .imageNeededForRepair(let reason): "repair needs the preinstalled image: \(reason); offer it with --image / preinstalled:"
        case .repairFailed(let problems): "repair could not restore the store: \(problems.prefix(5).map(\.description).joined(separator: "; "))"
        case .notInstalled: "no map data is installed in this storage; install a preinstall image first"
        case .unknownRegion(let id): "region '\(id)' is not installed; list installed regions with `mappack store regions`"
        case .seedOlderThanStore(let seed, let store): "cache seed is for map version \(seed), older than the store's \(store); refused"
        case .invalidCacheSeed(let path, let reason): "\(path): not a mappack cache seed: \(reason)"
        case .destinationNotEmpty(let path): "\(path): destination for moveData is not empty; choose a new or empty folder"
        case .io(let operation, let path, let reason): "\(path): \(operation) failed: \(reason)"
        }
    }
}
