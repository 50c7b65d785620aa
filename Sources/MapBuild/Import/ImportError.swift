import MapIO

/// Why `mappack import` could not write a source folder.
public enum ImportError: Error, Sendable, CustomStringConvertible {
    /// An input file (`--tiles`, `--regions`, `--places`) cannot be read or parsed as a whole.
    case unreadable(file: String, reason: String)
    /// One field of one feature of a GeoJSON input is wrong: the file, `features[3].properties.id`
    /// and what is wrong.
    case badFeature(file: String, field: String, problem: String)
    /// The tileset is not an MBTiles file mappack can copy from.
    case badTileset(file: String, reason: String)
    /// The tileset looks like PMTiles (magic or `.pmtiles`) but is not a PMTiles v3 archive mappack
    /// can read: the file and what is wrong (a section past the end, a directory that inflates
    /// too far, ids not ascending, …).
    case badPMTiles(file: String, reason: String)
    /// A bad `--shard`, `--merge` set, `--overview-maxzoom` or output folder.
    case badShards(reason: String)
    /// Writing the source folder failed (disk, SQLite).
    case failed(reason: String)
    /// Writing `path` (the source folder, or a scratch file beside it) failed for want of space.
    case diskFull(path: String)

    /// `error` as `diskFull` when it is a write that failed for want of space (`FileError.outOfSpace`:
    /// a file's `ENOSPC` or `EDQUOT`, or SQLite's `SQLITE_FULL` in the tile and scratch databases).
    package static func diskFull(from error: any Error) -> ImportError? {
        FileError.outOfSpace(in: error).map { .diskFull(path: $0.path) }
    }

    /// Whether the input was wrong (exit 2) rather than the work failing (exit 1).
    public var isBadInput: Bool {
        switch self {
        case .unreadable, .badFeature, .badTileset, .badPMTiles, .badShards: true
        case .failed, .diskFull: false
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let file, let reason): "\(file): \(reason)"
        case .badFeature(let file, let field, let problem): "\(file): \(field): \(problem)"
        case .badTileset(let file, let reason): "\(file): not a usable MBTiles tileset: \(reason)"
        case .badPMTiles(let file, let reason):
            "\(file): not a usable PMTiles v3 archive: \(reason); write it again (pmtiles convert) or pass the MBTiles it came from"
        case .badShards(let reason): reason
        case .failed(let reason): "import failed: \(reason)"
        case .diskFull(let path):
            "disk full: no space left writing \(path); free space on that filesystem, or choose another --out folder, then import again"
        }
    }
}
