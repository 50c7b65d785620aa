import Foundation
import MapIO

/// Bad command-line usage; exit code 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message + "\nrun `mappack help` for usage" }
}

/// A verb's arguments: positionals, `--flag`s and `--option value`s, checked against what the verb accepts.
struct Arguments {
    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags = Set<String>()

    init(_ raw: [String], flags allowedFlags: Set<String>, options allowedOptions: Set<String>) throws(UsageError) {
        var index = 0
        while index < raw.count {
            let item = raw[index]
            if item.hasPrefix("--") {
                var name = String(item.dropFirst(2))
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") { inlineValue = String(name[name.index(after: equals)...]); name = String(name[..<equals]) }
                if allowedFlags.contains(name) && inlineValue == nil {
                    flags.insert(name)
                } else if allowedOptions.contains(name) {
                    if let inlineValue { options[name] = inlineValue } else {
                        guard index + 1 < raw.count else { throw UsageError(message: "option --\(name) needs a value") }
                        index += 1
                        options[name] = raw[index]
                    }
                } else {
                    let known = (allowedFlags.union(allowedOptions)).sorted().map { "--" + $0 }.joined(separator: ", ")
                    throw UsageError(message: "unknown option --\(name)" + (known.isEmpty ? "" : "; this command takes: \(known)"))
                }
            } else {
                positionals.append(item)
            }
            index += 1
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func option(_ name: String) -> String? { options[name] }

    func int(_ name: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else { throw UsageError(message: "--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'") }
        return value
    }

    /// A catalog location from the command line: a `file://`, `http://` or `https://` URL, or a
    /// path (relative to the current folder). A text with `://` that does not parse as such a URL
    /// is bad usage, not a crash.
    static func catalogURL(_ location: String) throws(UsageError) -> URL {
        guard location.contains("://") else { return URL(fileURLWithPath: FileSystem.absolute(location)).standardizedFileURL }
        guard let url = URL(string: location), let scheme = url.scheme?.lowercased(), ["file", "http", "https"].contains(scheme),
              scheme == "file" || url.host?.isEmpty == false else {
            throw UsageError(message: "'\(location)' is not a valid file://, http:// or https:// URL; percent-encode spaces and other special characters, or give a path")
        }
        return url
    }

    /// Exactly `count` positionals, named in the message when missing.
    func expect(_ names: [String]) throws(UsageError) -> [String] {
        guard positionals.count == names.count else {
            throw UsageError(message: "expected \(names.map { $0.uppercased() }.joined(separator: " ")), got \(positionals.isEmpty ? "nothing" : positionals.joined(separator: " "))")
        }
        return positionals
    }
}
