import MapIO

/// Why `demo-world` could not write a world. Usage mistakes exit with 2, everything else with 1.
enum DemoWorldError: Error {
    /// A command-line mistake: what was wrong.
    case usage(String)
    /// `--only` named a region the tree does not have; `suggestion` is the nearest id, when one is close.
    case unknownRegion(id: String, suggestion: String?, needsFull: Bool)
    /// An iso-codes JSON file could not be read or parsed.
    case badIsoCodes(path: String, reason: String)
    /// A gettext `.mo` file was malformed.
    case badTranslationFile(path: String, reason: String)
    /// `--out` names something that is not a directory.
    case outputNotDirectory(path: String)
    /// A file system call failed.
    case file(FileError)
    /// A SQLite call failed.
    case sqlite(SQLiteError)
    /// Something else failed while writing a bundle.
    case bundle(name: String, reason: String)

    /// The process exit status for this failure (2: bad usage or input, 1: the work failed).
    var exitCode: Int32 {
        switch self {
        case .usage, .unknownRegion, .outputNotDirectory: 2
        case .badIsoCodes, .badTranslationFile, .file, .sqlite, .bundle: 1
        }
    }
}

extension DemoWorldError: CustomStringConvertible {
    var description: String {
        switch self {
        case .usage(let message):
            "\(message); see 'demo-world --help'"
        case .unknownRegion(let id, let suggestion, let needsFull):
            if needsFull {
                "--only: region '\(id)' is a subdivision outside Europe; add --full to generate it"
            } else if let suggestion {
                "--only: unknown region '\(id)'; did you mean '\(suggestion)'?"
            } else {
                "--only: unknown region '\(id)'; ids look like 'europe/ch' or 'europe/ch/be'"
            }
        case .badIsoCodes(let path, let reason):
            "\(path): \(reason); install Debian's iso-codes package (apt-get install iso-codes)"
        case .badTranslationFile(let path, let reason):
            "\(path): \(reason); reinstall iso-codes or remove the file"
        case .outputNotDirectory(let path):
            "--out \(path): exists and is not a directory; choose another path"
        case .file(let error):
            error.description
        case .sqlite(let error):
            error.description
        case .bundle(let name, let reason):
            "bundle '\(name)': \(reason)"
        }
    }
}
