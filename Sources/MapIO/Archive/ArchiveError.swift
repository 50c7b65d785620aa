import Foundation
import MapFormat

/// Why an archive was refused or could not be read or written. The caller adds which bundle and region.
package enum ArchiveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An entry path that is absolute, climbs with `..`, is empty, or has odd components.
    case unsafePath(entry: String, reason: String)
    /// An entry that is not a regular file or a directory (symlink, hard link, device, FIFO, socket).
    case forbiddenType(entry: String, type: String)
    /// The same path twice.
    case duplicatePath(entry: String)
    /// Two paths equal once case and Unicode normalization are ignored.
    case collidingPath(entry: String, earlier: String)
    /// An entry under a path that an earlier entry made a regular file.
    case underFile(entry: String, file: String)
    /// A name that is not valid UTF-8 (shown with invalid bytes escaped).
    case invalidName(entry: String)
    /// More bytes than declared (stopped at the first byte over).
    case tooLarge(entry: String, limit: Int64)
    /// More entries than declared.
    case tooManyEntries(limit: Int)
    /// A zstd frame that needs a larger window than allowed.
    case windowTooLarge(limitLog: Int32)
    /// zstd refused the stream.
    case zstd(String)
    /// libarchive refused the stream.
    case malformed(String)
    /// The file system said no.
    case io(FileError)
    /// The archive file's SHA-256 is not the one it was fetched and stored under.
    case digestMismatch(expected: SHA256Digest, actual: SHA256Digest)
    /// The writer was asked to stop (`ArchiveWriter.addFile(_:from:size:stop:)`) before the entry was whole.
    case stopped(entry: String)

    /// True for `.digestMismatch`.
    package var isDigestMismatch: Bool { if case .digestMismatch = self { true } else { false } }

    package var description: String {
        switch self {
        case .unsafePath(let entry, let reason): "entry '\(entry)': \(reason)"
        case .forbiddenType(let entry, let type): "entry '\(entry)' is a \(type); only regular files and directories are allowed"
        case .duplicatePath(let entry): "entry '\(entry)' appears twice"
        case .collidingPath(let entry, let earlier): "entry '\(entry)' collides with '\(earlier)' on case-insensitive or normalizing filesystems"
        case .underFile(let entry, let file): "entry '\(entry)' lies under '\(file)', which is a file"
        case .invalidName(let entry): "entry name '\(entry)' is not valid UTF-8"
        case .tooLarge(let entry, let limit): "unpacks to more than the declared \(limit) bytes (stopped at entry '\(entry)')"
        case .tooManyEntries(let limit): "has more than the allowed \(limit) entries"
        case .windowTooLarge(let log): "zstd frame needs a window over 2^\(log) bytes; refusing to allocate it"
        case .stopped(let entry): "stopped while writing entry '\(entry)'"
        case .zstd(let message): "zstd: \(message)"
        case .malformed(let message): "not a valid tar stream: \(message)"
        case .io(let error): error.description
        case .digestMismatch(let expected, let actual):
            "archive bytes do not match their digest sha256:\(expected) (they hash to sha256:\(actual)); the file was damaged after it was verified"
        }
    }
}

/// What an extraction may use at most.
package struct ExtractionLimits: Sendable {
    /// Total bytes of regular files.
    package var maxBytes: Int64
    /// Number of entries (files and directories).
    package var maxEntries: Int
    /// zstd window log cap (`ZSTD_d_windowLogMax`).
    package var windowLogMax: Int32 = 27

    /// Limits from a catalog's declared unpacked size and file count (directories get headroom).
    package init(maxBytes: Int64, maxEntries: Int) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
    }

    /// Limits for a declared bundle: its bytes exactly; its files plus room for their folders.
    package static func declared(unpackedSize: Int64, files: Int?) -> ExtractionLimits {
        ExtractionLimits(maxBytes: unpackedSize, maxEntries: (files ?? 50_000) * 2 + 256)
    }
}
