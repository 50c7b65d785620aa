import MapIO

/// Why a zchunk file could not be written or read (libzck's message, with the file concerned).
package enum ZchunkError: Error, Sendable, CustomStringConvertible {
    /// libzck refused: `what` it was doing, on `path`, and its message.
    case library(what: String, path: String, message: String)
    /// Reading or writing the file failed.
    case io(FileError)
    /// A header that does not describe the bundle the catalog names (sizes or digests differ).
    case headerMismatch(path: String, reason: String)

    package var description: String {
        switch self {
        case .library(let what, let path, let message): "\(path): zchunk \(what) failed: \(message)"
        case .io(let error): error.description
        case .headerMismatch(let path, let reason):
            "\(path): the zchunk header does not match the catalog (\(reason)); the server's .zck and catalog.json disagree: publish again"
        }
    }
}
