import Foundation

/// The command line of `mappack-storebench`: a mode and its `--name value` options.
struct BenchArguments {
    /// What to measure.
    enum Mode: String {
        case path, open
        case inPlace = "inplace"
    }

    var mode: Mode
    private var values: [String: String]
    /// Options given without a value.
    private var flags: Set<String>

    static let usage = """
        usage: mappack-storebench path --image DIR --storage DIR --cache DIR --update-catalog URL
                                       [--interval-ms MS] [--baseline-calls N] [--sample-files N]
               mappack-storebench open --image DIR --storage DIR --cache DIR [--runs N] [--open-only]
               mappack-storebench inplace --image DIR --storage DIR --cache DIR [--runs N] [--in-place-only]
        path: installs the folder image into an emptied storage, then calls path(of:) in a loop with no
              write running (the baseline) and while an update to --update-catalog runs; one JSON line.
        open: installs the image once (hard links; kept for later runs), then times MapStore.open of the
              installed store against opening its state database and reading one row, and open with the
              image offered, in alternating rounds; one JSON line. --open-only: open alone, no line
              (for strace -c).
        inplace: the first start with the image used in place against the copy install of it, in
              alternating rounds into an emptied storage (removed after): time and bytes left; one JSON line.
              --in-place-only: the in-place start alone (copy fields null), for quick rounds and profiles.
        """

    private static let valued: [Mode: Set<String>] = [
        .path: ["--image", "--storage", "--cache", "--update-catalog", "--interval-ms", "--baseline-calls", "--sample-files"],
        .open: ["--image", "--storage", "--cache", "--runs"],
        .inPlace: ["--image", "--storage", "--cache", "--runs"],
    ]
    private static let boolean: [Mode: Set<String>] = [.path: [], .open: ["--open-only"], .inPlace: ["--in-place-only"]]

    /// Parses `arguments` (without the program name); the error says what is wrong.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchArguments {
        var rest = arguments[...]
        guard let first = rest.popFirst(), first != "--help", first != "-h" else { throw BenchUsageError(message: nil) }
        guard let mode = Mode(rawValue: first) else { throw BenchUsageError(message: "unknown mode '\(first)' (use path, open or inplace)") }
        var values: [String: String] = [:]
        var flags: Set<String> = []
        while let name = rest.popFirst() {
            if name == "--help" || name == "-h" { throw BenchUsageError(message: nil) }
            if boolean[mode, default: []].contains(name) {
                flags.insert(name)
                continue
            }
            guard valued[mode, default: []].contains(name) else { throw BenchUsageError(message: "\(mode.rawValue): unknown option '\(name)'") }
            guard let value = rest.popFirst() else { throw BenchUsageError(message: "\(name) needs a value") }
            values[name] = value
        }
        let parsed = BenchArguments(mode: mode, values: values, flags: flags)
        for name in ["--image", "--storage", "--cache"] where values[name] == nil {
            throw BenchUsageError(message: "\(mode.rawValue): \(name) is required")
        }
        if mode == .path, values["--update-catalog"] == nil { throw BenchUsageError(message: "path: --update-catalog is required") }
        return parsed
    }

    /// A folder option as an absolute file URL.
    func folder(_ name: String) -> URL {
        let text = values[name] ?? ""
        return URL(fileURLWithPath: text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text)
    }

    /// A URL option (http://, https://, file:// or an absolute path).
    func url(_ name: String) throws(BenchUsageError) -> URL {
        let text = values[name] ?? ""
        if text.hasPrefix("/") { return URL(fileURLWithPath: text) }
        guard let url = URL(string: text), url.scheme != nil else {
            throw BenchUsageError(message: "\(name) '\(text)' is not a URL (http://…, file://… or an absolute path)")
        }
        return url
    }

    /// A whole-number option of at least `minimum`, or `fallback` when absent.
    func count(_ name: String, default fallback: Int, minimum: Int = 1) throws(BenchUsageError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), value >= minimum else {
            throw BenchUsageError(message: "\(name) '\(text)': expected a whole number >= \(minimum)")
        }
        return value
    }

    /// Whether a flag was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A command line the benchmark cannot use; nil message asks for the usage text alone.
struct BenchUsageError: Error {
    let message: String?
}
