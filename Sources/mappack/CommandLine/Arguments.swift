import Foundation
import MapFormat
import MapIO

/// Bad command-line usage; exit code 2. Or, with `help`, a request for a verb's help (`--help`,
/// `-h`), which `main` answers on standard output with exit code 0.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var help: VerbSpec?
    init(message: String, help: VerbSpec? = nil) {
        self.message = message
        self.help = help
    }
    var description: String { message + "\nrun `mappack help` for usage" }
}

/// A verb's arguments: positionals, `--flag`s and `--option value`s (also `--option=value`,
/// `-j 4`, `-j4`, `-qv`), checked against the verb's `VerbSpec`; `--` ends the options.
struct Arguments {
    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags = Set<String>()

    init(_ raw: [String], verb: VerbSpec) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        /// Takes `option`'s value: the inline text, else the next argument.
        func take(_ option: VerbSpec.Option, inline: String?, as written: String) throws(UsageError) -> String {
            if let inline { return inline }
            guard index + 1 < raw.count else { throw UsageError(message: "option \(written) needs a value (\(option.synopsis))") }
            index += 1
            return raw[index]
        }
        while index < raw.count {
            let item = raw[index]
            if optionsEnded || item == "-" || !item.hasPrefix("-") {
                positionals.append(item)
            } else if item == "--" {
                optionsEnded = true
            } else if item.hasPrefix("--") {
                var name = String(item.dropFirst(2))
                var inline: String?
                if let equals = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let option = verb.option(named: name) else { throw Arguments.unknown("--" + name, verb: verb) }
                if option.isFlag {
                    if inline != nil { throw UsageError(message: "--\(name) takes no value") }
                    flags.insert(name)
                } else {
                    options[name] = try take(option, inline: inline, as: "--" + name)
                }
            } else {
                // Short options: flags may be grouped (-qv); one with a value takes the rest (-j4) or the next argument.
                var letters = Substring(item.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let option = verb.option(short: letter) else { throw Arguments.unknown("-" + String(letter), verb: verb) }
                    if option.isFlag {
                        flags.insert(option.name)
                        continue
                    }
                    options[option.name] = try take(option, inline: letters.isEmpty ? nil : String(letters), as: "-" + String(letter))
                    break
                }
            }
            index += 1
        }
        if flags.contains("help") { throw UsageError(message: "help", help: verb) }
    }

    /// An option the verb does not take, with the nearest one it does.
    private static func unknown(_ written: String, verb: VerbSpec) -> UsageError {
        let names = verb.allOptions.map { "--" + $0.name }
        let suggestion = Spelling.nearest(to: written, among: names).map { "; did you mean \($0)?" } ?? ""
        return UsageError(
            message: "unknown option \(written) for mappack \(verb.command)\(suggestion) (mappack \(verb.command) --help lists its options)")
    }

    /// Whether the flag was given.
    func flag(_ key: VerbSpec.Option) -> Bool { flags.contains(key.name) }
    /// The option's value, nil when it was not given.
    func option(_ key: VerbSpec.Option) -> String? { options[key.name] }

    /// The value of an option the verb cannot run without (`store install --image PATH`).
    func required(_ key: VerbSpec.Option, by verb: VerbSpec) throws(UsageError) -> String {
        guard let value = options[key.name] else { throw UsageError(message: "mappack \(verb.command) needs \(key.usage)") }
        return value
    }

    func int(_ key: VerbSpec.Option, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = options[key.name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "--\(key.name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// `path`, the output folder given as `--option` (or its default). A symbolic link is bad usage:
    /// mappack writes only into real folders, so an output cannot be redirected elsewhere (and the
    /// link is never replaced by a folder of its own).
    static func outputFolder(_ path: String, option key: VerbSpec.Option) throws(UsageError) -> String {
        let option = key.name
        // `link/` names the folder behind the link to the kernel: the link itself is what is refused.
        var bare = Substring(path)
        while bare.count > 1, bare.hasSuffix("/") { bare = bare.dropLast() }
        if let status = try? FileSystem.status(String(bare)), status.isSymlink {
            throw UsageError(
                message: "--\(option) \(bare) is a symbolic link; mappack writes only into real folders (symlinks are refused so an output "
                    + "can't be redirected); pass the folder it points to")
        }
        return path
    }

    /// A catalog location from the command line: a `file://`, `http://` or `https://` URL, or a
    /// path (relative to the current folder). A text with `://` that does not parse as such a URL
    /// is bad usage, not a crash.
    static func catalogURL(_ location: String) throws(UsageError) -> URL {
        guard location.contains("://") else { return URL(fileURLWithPath: FileSystem.absolute(location)).standardizedFileURL }
        guard let url = URL(string: location), let scheme = url.scheme?.lowercased(), ["file", "http", "https"].contains(scheme),
            scheme == "file" || url.host?.isEmpty == false
        else {
            throw UsageError(
                message:
                    "'\(location)' is not a valid file://, http:// or https:// URL; percent-encode spaces and other special characters, or give a path"
            )
        }
        return url
    }

    /// Exactly `count` positionals, named in the message when missing.
    func expect(_ names: [String]) throws(UsageError) -> [String] {
        guard positionals.count == names.count else {
            throw UsageError(
                message:
                    "expected \(names.map { $0.uppercased() }.joined(separator: " ")), got \(positionals.isEmpty ? "nothing" : positionals.joined(separator: " "))"
            )
        }
        return positionals
    }
}

extension UsageError: CategorizedError {
    /// A command line that does not parse: input.
    var failureCategory: FailureCategory { .badInput }
}
