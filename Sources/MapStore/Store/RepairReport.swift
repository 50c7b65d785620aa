import Foundation
import MapFormat

/// What `repair()` did.
public struct RepairReport: Sendable, Equatable {
    /// One step repair took.
    public enum Action: Sendable, Equatable, CustomStringConvertible {
        /// An interrupted install was wiped and installed again from the image.
        case reinstalled
        /// An interrupted install was wiped; no image was offered, so the storage is empty.
        case rolledBackInstall
        /// An interrupted region deletion was completed.
        case finishedDelete
        /// An interrupted cache seed import was run again (or dropped when no image was offered).
        case finishedCacheImport
        /// A move that had committed at its destination (a file URL) was finished: the old copy was removed.
        case finishedMove(to: URL)
        /// A move that had not committed was rolled back: the destination's partial copy was removed.
        case rolledBackMove
        /// An update or download whose new store tree was complete was switched in and committed.
        case finishedUpdate(to: MapVersion)
        /// An update or download that had not staged its new tree completely was rolled back.
        case rolledBackUpdate
        /// Missing or corrupt files were restored from `source`.
        case restoredFiles(count: Int, from: Source)
        /// Files that no installed region lists were removed.
        case removedFiles(count: Int)
        /// The kept manifest (missing, edited, or with a signature that no longer verifies) was restored
        /// from the image, which is the installed one.
        case restoredManifest
        /// A pending-operation record no interrupted work matches (unknown, or an install beside a
        /// committed image) was dropped; the committed store was kept and checked.
        case discardedPendingRecord
        /// The state database was rebuilt from the kept manifest and the files (`reason` says what was wrong with it).
        case rebuiltState(reason: String, regions: Int)
        /// Regions a process that ended while downloading or updating them had left `downloading` now read
        /// `paused` (settled at open, or after rolling back its interrupted switch): their installed data,
        /// if any, is the committed version, and a later download or update resumes from the fetched bytes.
        case pausedInterruptedFetch(regions: Int)
        /// An in-place store's new base (the image at its base's place replaced) taken over, now at map
        /// version `to`; an interrupted take-over (a kill while the store switched to it) is taken up again.
        case tookOverNewBase(to: MapVersion)
        /// After a lost state database: installed regions the kept manifest lists that the image's kept
        /// catalog does not offer. They were of catalogs added to the store, which only the lost database
        /// named (with their kept copies and trust records). They stay installed and readable, listed as
        /// the image catalog's, until their catalog is added again (`addCatalog`), which takes back those
        /// whose data it offers unchanged.
        case regionsOfForgottenCatalogs([RegionID])

        public var description: String {
            switch self {
            case .reinstalled: "re-installed from the image"
            case .rolledBackInstall: "rolled back an interrupted install"
            case .finishedDelete: "finished an interrupted region deletion"
            case .finishedCacheImport: "finished an interrupted cache seed import"
            case .finishedMove(let to): "finished moving the storage to \(to.path)"
            case .rolledBackMove: "rolled back an interrupted move"
            case .finishedUpdate(let version): "finished an interrupted update or download (now map version \(version))"
            case .rolledBackUpdate: "rolled back an interrupted update or download"
            case .restoredFiles(let count, let source): "restored \(count) file\(count == 1 ? "" : "s") from \(source)"
            case .removedFiles(let count): "removed \(count) file\(count == 1 ? "" : "s") no installed region lists"
            case .discardedPendingRecord: "dropped a pending-operation record that matches no interrupted work (the store had committed)"
            case .restoredManifest: "restored the kept manifest.json from the image"
            case .regionsOfForgottenCatalogs(let ids):
                "the lost state database had named the catalogs added to the store; kept \(ids.count) region\(ids.count == 1 ? "" : "s") "
                    + "of them (\(ids.map(\.rawValue).joined(separator: ", "))), listed as the image catalog's until their catalog "
                    + "is added again (`mappack store catalogs add URL`), which takes them back"
            case .tookOverNewBase(let version): "took over the new base image (now map version \(version)); added catalogs kept"
            case .pausedInterruptedFetch(let regions):
                "paused \(regions) region\(regions == 1 ? "" : "s") an interrupted download or update was fetching "
                    + "(a later download or update resumes from the bytes fetched)"
            case .rebuiltState(let reason, let regions):
                "rebuilt the state database from the kept manifest and the files (\(regions) region\(regions == 1 ? "" : "s")): \(reason)"
            }
        }
    }

    /// Where repair found an installed file's bytes.
    public enum Source: String, Sendable, Equatable, CustomStringConvertible {
        /// The offered preinstall image (files it shipped, unchanged since).
        case image
        /// A verified bundle archive in the storage's download cache.
        case downloadCache
        /// The bundle fetched again by digest from the store's catalog (obeying the network policy).
        case network

        public var description: String {
            switch self {
            case .image: "the image"
            case .downloadCache: "the download cache"
            case .network: "bundles fetched again from the catalog"
            }
        }
    }

    /// Steps taken, in order; empty when nothing needed repair.
    public var actions: [Action]
    /// The storage folder in use after repair, a file URL (differs from the opened one after a finished move).
    public var storage: URL
    /// The status after repair: `ok`, or `empty` when an install was rolled back.
    public var status: StoreStatus
}

extension RepairReport {
    /// `actions` of a repair that took several passes (it waited between them for a bundle's next
    /// attempt), with the files restored from one source, and the files removed, counted once.
    static func merged(_ actions: [Action]) -> [Action] {
        var merged: [Action] = []
        for action in actions {
            switch action {
            case .restoredFiles(let count, let source):
                if let index = merged.firstIndex(where: { if case .restoredFiles(_, source) = $0 { true } else { false } }),
                    case .restoredFiles(let before, _) = merged[index]
                {
                    merged[index] = .restoredFiles(count: before + count, from: source)
                } else {
                    merged.append(action)
                }
            case .removedFiles(let count):
                if let index = merged.firstIndex(where: { if case .removedFiles = $0 { true } else { false } }),
                    case .removedFiles(let before) = merged[index]
                {
                    merged[index] = .removedFiles(count: before + count)
                } else {
                    merged.append(action)
                }
            default: merged.append(action)
            }
        }
        return merged
    }
}
