import Foundation
import MapBuild

/// Every text made from the verbs' declarations: `mappack help`, `VERB --help`, shell
/// completions and the man page, so none of them can disagree with what the parser accepts.
enum Help {
    /// `mappack help`: every verb, its arguments and what it does.
    static var usage: String {
        let width = Verbs.all.map { $0.name.count + 1 + $0.positionals.count }.max() ?? 0
        let lines = Verbs.all.map { verb in
            let head = verb.name + " " + verb.positionals
            return "  " + head + String(repeating: " ", count: width - head.count + 3) + verb.summary
        }
        return """
            usage: mappack <command> [options]

            \(lines.joined(separator: "\n"))

            every command: -h/--help (its options), -q/--quiet, -v/--verbose, --json
            mappack --version   the version of mappack and of the C libraries it links
            exit codes: 0 ok, 1 the work failed, 2 bad usage or bad input
            """
    }

    /// `mappack VERB --help`: the verb's arguments and every option it takes.
    static func verb(_ verb: VerbSpec) -> String {
        let options = verb.allOptions
        let width = options.map(\.synopsis.count).max() ?? 0
        let lines = options.map { "  " + $0.synopsis + String(repeating: " ", count: width - $0.synopsis.count + 3) + $0.help }
        var text = "usage: mappack \(verb.name)\(verb.positionals.isEmpty ? "" : " " + verb.positionals) [options]\n\n\(verb.summary)\n\noptions:\n"
        text += lines.joined(separator: "\n")
        if verb.name == "store" { text += "\n\n" + StoreCommand.usage }
        return text
    }

    /// `mappack help --json`: the verbs as declared, for tools that drive mappack (the store's
    /// own verbs under `verbs`).
    static func json(_ verbs: [VerbSpec]) -> [String: any Sendable] {
        let described = verbs.map { verb -> [String: any Sendable] in
            var object: [String: any Sendable] = [
                "name": verb.name, "positionals": verb.positionals, "summary": verb.summary,
                "options": verb.allOptions.map { option -> [String: any Sendable] in
                    [
                        "name": option.name, "short": option.short.map { String($0) as any Sendable } ?? NSNull(),
                        "value": option.value ?? NSNull(), "help": option.help,
                    ]
                },
            ]
            if verb.name == "store" { object["verbs"] = StoreCommand.verbs }
            return object
        }
        return ["verbs": described]
    }

    /// `mappack --version`.
    static func version(libraries: [String]) -> String {
        "mappack \(MappackVersion.current)\n" + libraries.map { "  " + $0 }.joined(separator: "\n")
    }

    /// `mappack completions SHELL`.
    static func completions(_ shell: String) throws(UsageError) -> String {
        switch shell {
        case "bash": return bash
        case "zsh": return zsh
        case "fish": return fish
        default:
            let suggestion = Spelling.nearest(to: shell, among: ["bash", "zsh", "fish"]).map { "; did you mean \($0)?" } ?? ""
            throw UsageError(message: "no completions for shell '\(shell)'\(suggestion) (bash, zsh or fish)")
        }
    }

    private static var bash: String {
        let cases = Verbs.all.map { verb -> String in
            let words = verb.allOptions.flatMap { option in ["--" + option.name] + (option.short.map { ["-\($0)"] } ?? []) }
            let files = verb.allOptions.filter { $0.completion != .none }.map { "--" + $0.name }
            let fileCase =
                files.isEmpty
                ? "" : "            case \"$prev\" in \(files.joined(separator: "|"))) COMPREPLY=($(compgen -f -- \"$cur\")); return;; esac\n"
            return "        \(verb.name))\n\(fileCase)            words=\"\(words.joined(separator: " "))\";;"
        }
        return """
            # bash completion for mappack (made by `mappack completions bash`)
            _mappack() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(Verbs.all.map(\.name).joined(separator: " ")) --version" -- "$cur")); return
                fi
                case "${COMP_WORDS[1]}" in
            \(cases.joined(separator: "\n"))
                    *) words="";;
                esac
                if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
            }
            complete -o filenames -F _mappack mappack

            """
    }

    private static var zsh: String {
        let verbs = Verbs.all.map { "'\($0.name):\($0.summary.replacingOccurrences(of: "'", with: "'\\''"))'" }
        let cases = Verbs.all.map { verb -> String in
            let specs = verb.allOptions.map { option -> String in
                let help = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(").replacingOccurrences(
                    of: "]", with: ")")
                let value =
                    option.value.map { ":\($0):" + (option.completion == .none ? "" : option.completion == .directory ? "_directories" : "_files") }
                    ?? ""
                return "'--\(option.name)[\(help)]\(value)'"
            }
            return "        \(verb.name)) _arguments \(specs.joined(separator: " ")) '*:file:_files';;"
        }
        return """
            #compdef mappack
            # zsh completion for mappack (made by `mappack completions zsh`)
            _mappack() {
                if (( CURRENT == 2 )); then
                    local -a verbs; verbs=(\(verbs.joined(separator: " ")))
                    _describe 'command' verbs; return
                fi
                case $words[2] in
            \(cases.joined(separator: "\n"))
                esac
            }
            compdef _mappack mappack

            """
    }

    private static var fish: String {
        var lines = ["# fish completion for mappack (made by `mappack completions fish`)", "complete -c mappack -f"]
        for verb in Verbs.all {
            lines.append(
                "complete -c mappack -n __fish_use_subcommand -a \(verb.name) -d '\(verb.summary.replacingOccurrences(of: "'", with: "\\'"))'")
            for option in verb.allOptions {
                var line = "complete -c mappack -n '__fish_seen_subcommand_from \(verb.name)' -l \(option.name)"
                if let short = option.short { line += " -s \(short)" }
                if option.value != nil { line += option.completion == .none ? " -x" : " -r -F" }
                lines.append(line + " -d '\(option.help.replacingOccurrences(of: "'", with: "\\'"))'")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `mappack help --man`: a man page (roff) for `make man`.
    static var manPage: String {
        func roff(_ text: String) -> String { text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-") }
        var page = [
            ".TH MAPPACK 1", ".SH NAME", "mappack \\- build and verify preinstalled offline map images",
            ".SH SYNOPSIS", ".B mappack", "\\fICOMMAND\\fR [\\fIoptions\\fR]", ".SH COMMANDS",
        ]
        for verb in Verbs.all {
            page += [".SS \(verb.name) \(roff(verb.positionals))", roff(verb.summary)]
            for option in verb.allOptions { page += [".TP", "\\fB\(roff(option.synopsis))\\fR", roff(option.help)] }
        }
        page += [
            ".SH EXIT STATUS", "0 ok, 1 the work failed, 2 bad usage or bad input, 141 output closed by its reader.",
            ".SH SEE ALSO", "README.md and ARCHITECTURE.md in the mappack repository.",
        ]
        return page.joined(separator: "\n") + "\n"
    }
}
