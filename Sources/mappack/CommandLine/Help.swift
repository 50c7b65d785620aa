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

    /// `mappack VERB --help` (and `mappack store VERB --help`): the verb's arguments and every
    /// option it takes; for a verb with subcommands, those too, each with its own options.
    static func verb(_ verb: VerbSpec) -> String {
        let options = verb.allOptions
        let width = options.map(\.synopsis.count).max() ?? 0
        let lines = options.map { "  " + $0.synopsis + String(repeating: " ", count: width - $0.synopsis.count + 3) + $0.help }
        // `store <verb> --storage DIR --cache DIR`, `store install --image PATH [--full] --storage DIR …`, `build RECIPE`.
        let head: [String]
        if !verb.subcommands.isEmpty {
            head = [verb.command, "<verb>"] + verb.options.filter(\.required).map(\.usage)
        } else if verb.parent != nil {
            head = [verb.command, verb.usage] + verb.inherited.filter(\.required).map(\.usage)
        } else {
            head = [verb.command, verb.positionals]
        }
        var text = "usage: mappack \(head.filter { !$0.isEmpty }.joined(separator: " ")) [options]\n\n\(verb.summary)\n\n"
        if !verb.subcommands.isEmpty {
            text += "verbs (mappack \(verb.command) VERB --help shows one verb's options):\n" + subcommandList(verb) + "\n\n"
            text += "options of every verb:\n"
        } else {
            text += "options:\n"
        }
        text += lines.joined(separator: "\n")
        if let notes = verb.notes ?? (verb.parent.flatMap(Verbs.named)?.notes) { text += "\n\n" + notes }
        return text
    }

    /// One line per subcommand: its arguments and what it does.
    static func subcommandList(_ verb: VerbSpec) -> String {
        let heads = verb.subcommands.map { $0.name + ($0.usage.isEmpty ? "" : " " + $0.usage) }
        let width = min(44, heads.map(\.count).max() ?? 0)
        return zip(verb.subcommands, heads).map { subcommand, head in
            "  " + head + String(repeating: " ", count: max(1, width - head.count + 2)) + subcommand.summary
        }.joined(separator: "\n")
    }

    /// The store's verbs, for an unknown one.
    static var storeVerbs: String { "mappack store VERB, where VERB is one of:\n" + subcommandList(Verbs.store) }

    /// `mappack help --json`: the verbs as declared, for tools that drive mappack (the store's
    /// own verbs by name under `verbs`, and each with its options under `subcommands`).
    static func json(_ verbs: [VerbSpec]) -> HelpRecord {
        func describe(_ verb: VerbSpec) -> HelpRecord.Verb {
            HelpRecord.Verb(
                name: verb.name, positionals: verb.positionals, summary: verb.summary,
                options: verb.allOptions.map { HelpRecord.Option(name: $0.name, short: $0.short.map { String($0) }, value: $0.value, help: $0.help) },
                verbs: verb.subcommands.isEmpty ? nil : verb.subcommands.map(\.name),
                subcommands: verb.subcommands.isEmpty ? nil : verb.subcommands.map(describe))
        }
        return HelpRecord(verbs: verbs.map(describe))
    }

    /// `mappack --version`.
    static func version(libraries: [String]) -> String {
        "mappack \(MappackVersion.current)\n" + libraries.map { "  " + $0 }.joined(separator: "\n")
    }

    /// The shells `mappack completions` writes for.
    static let shells = ["bash", "zsh", "fish"]

    /// The words a verb's first positional completes to; nil when it is a file.
    static func words(_ verb: VerbSpec) -> [String]? {
        switch verb.words {
        case .files, .recipes: nil
        case .verbs: Verbs.all.map(\.name)
        case .list(let words): words
        }
    }

    /// `mappack completions SHELL`.
    static func completions(_ shell: String) throws(UsageError) -> String {
        switch shell {
        case "bash": return bash
        case "zsh": return zsh
        case "fish": return fish
        default:
            let suggestion = Spelling.nearest(to: shell, among: shells).map { "; did you mean \($0)?" } ?? ""
            throw UsageError(message: "no completions for shell '\(shell)'\(suggestion) (bash, zsh or fish)")
        }
    }

    private static var bash: String {
        let cases = Verbs.all.map { verb -> String in
            let words = verb.completionOptions.flatMap { option in ["--" + option.name] + (option.short.map { ["-\($0)"] } ?? []) }
            let files = verb.completionOptions.filter { $0.completion != .none }.map { "--" + $0.name }
            let fileCase =
                files.isEmpty
                ? ""
                : "            case \"$prev\" in \(files.joined(separator: "|"))) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return;; esac\n"
            // A recipe: `.yaml`/`.yml` files and folders (to walk into), not every file. Names are
            // read one a line (`mapfile`), so a name with a space stays one completion.
            let recipeCase =
                verb.words.isRecipes
                ? "            if [[ \"$cur\" != -* ]]; then mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"; compgen -f -X '!*.y*ml' -- \"$cur\"); return; fi\n"
                : ""
            let firstWords =
                Help.words(verb).map {
                    "            if [ \"$COMP_CWORD\" -eq 2 ] && [[ \"$cur\" != -* ]]; then COMPREPLY=($(compgen -W \"\($0.joined(separator: " "))\" -- \"$cur\")); return; fi\n"
                } ?? ""
            return "        \(verb.name))\n\(fileCase)\(firstWords)\(recipeCase)            words=\"\(words.joined(separator: " "))\";;"
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
                if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); else mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
            }
            complete -o filenames -F _mappack mappack

            """
    }

    private static var zsh: String {
        let verbs = Verbs.all.map { "'\($0.name):\($0.summary.replacingOccurrences(of: "'", with: "'\\''"))'" }
        let cases = Verbs.all.map { verb -> String in
            let specs = verb.completionOptions.map { option -> String in
                let help = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(").replacingOccurrences(
                    of: "]", with: ")")
                let value =
                    option.value.map { ":\($0):" + (option.completion == .none ? "" : option.completion == .directory ? "_directories" : "_files") }
                    ?? ""
                return "'--\(option.name)[\(help)]\(value)'"
            }
            let first = Help.words(verb).map { "'1:verb:(\($0.joined(separator: " ")))' " } ?? ""
            let rest = verb.words.isRecipes ? "'*:recipe:_files -g \"*.(yaml|yml)\"'" : "'*:file:_files'"
            return "        \(verb.name)) _arguments \(specs.joined(separator: " ")) \(first)\(rest);;"
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
            // `-f` above turns file names off for every verb; the ones that take files turn them back on.
            if let words = Help.words(verb) {
                lines.append("complete -c mappack -n '__fish_seen_subcommand_from \(verb.name)' -a '\(words.joined(separator: " "))'")
            } else if verb.words.isRecipes {
                lines.append(
                    "complete -c mappack -n '__fish_seen_subcommand_from \(verb.name)' -a '(__fish_complete_suffix .yaml; __fish_complete_suffix .yml)'"
                )
            } else if !verb.positionals.isEmpty {
                lines.append("complete -c mappack -n '__fish_seen_subcommand_from \(verb.name)' -F")
            }
            for option in verb.completionOptions {
                var line = "complete -c mappack -n '__fish_seen_subcommand_from \(verb.name)' -l \(option.name)"
                if let short = option.short { line += " -s \(short)" }
                if option.value != nil { line += option.completion == .none ? " -x" : " -r -F" }
                lines.append(line + " -d '\(option.help.replacingOccurrences(of: "'", with: "\\'"))'")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `mappack help --man`: a man page (roff) for `make man`, with what a machine without the
    /// README needs: every verb and store verb, the recipe, the environment, exit status, examples.
    static var manPage: String {
        var page = [
            ".TH MAPPACK 1", ".SH NAME", "mappack \\- build and verify preinstalled offline map images",
            ".SH SYNOPSIS", ".B mappack", "\\fICOMMAND\\fR [\\fIoptions\\fR]", ".SH COMMANDS",
        ]
        for verb in Verbs.all {
            page += [".SS \(verb.name) \(roff(verb.positionals))", roff(verb.summary)]
            for option in verb.allOptions { page += [".TP", "\\fB\(roff(option.synopsis))\\fR", roff(option.help)] }
        }
        page += [
            ".SH STORE VERBS",
            "\\fBmappack store\\fR \\fIVERB\\fR \\fB\\-\\-storage\\fR \\fIDIR\\fR \\fB\\-\\-cache\\fR \\fIDIR\\fR [\\fIoptions\\fR]",
        ]
        for verb in Verbs.store.subcommands {
            page += [".SS store \(verb.name)" + (verb.usage.isEmpty ? "" : " " + roff(verb.usage)), roff(verb.summary)]
            for option in verb.options { page += [".TP", "\\fB\(roff(option.synopsis))\\fR", roff(option.help)] }
        }
        page += [".SH RECIPE", "A build reads a YAML recipe:"]
        for (key, text) in recipeKeys { page += [".TP", "\\fB\(key)\\fR", roff(text)] }
        page += [".SH ENVIRONMENT"]
        for (name, text) in environment { page += [".TP", ".B \(name)", roff(text)] }
        page += [
            ".SH EXIT STATUS", ".TP", ".B 0", "ok.", ".TP", ".B 1",
            "the work failed (a download, a check, a full disk, a store that is not ok).", ".TP", ".B 2",
            "bad usage or bad input (an unknown option, a recipe or catalog with a mistake, a path that is no image).",
            ".TP", ".B 141", "the output was closed by its reader.",
            ".SH EXAMPLES",
        ]
        for (what, command) in examples { page += [".TP", roff(what), ".EX", roff(command), ".EE"] }
        page += [
            ".SH SEE ALSO",
            "\\fBzstd\\fR(1), \\fBtar\\fR(1), \\fBsqlite3\\fR(1), \\fBminisign\\fR(1), \\fBcurl\\fR(1);",
            "\\fBmappack help\\fR \\fIVERB\\fR for one verb's options, \\fBmappack help \\-\\-json\\fR for tools.",
        ]
        return page.joined(separator: "\n") + "\n"
    }

    /// Text as roff: backslashes and hyphens escaped, and a line starting with `.` or `'` (a
    /// request to roff) guarded with `\&`.
    private static func roff(_ text: String) -> String {
        // roff's own names for what a terminal font may lack (`→` printed raw made groff warn).
        let escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            .replacingOccurrences(of: "→", with: "\\(->").replacingOccurrences(of: "≤", with: "\\(<=").replacingOccurrences(of: "≥", with: "\\(>=")
            .replacingOccurrences(of: "—", with: "\\(em").replacingOccurrences(of: "–", with: "\\(en")
        return escaped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    /// The recipe's keys, for the man page (docs/formats.md, "Recipes", says more).
    private static let recipeKeys: [(String, String)] = [
        ("name", "the image's name: Output/<name>-<mapVersion>/"),
        ("catalog", "the catalog: a path relative to the recipe, or a file://, http:// or https:// URL"),
        ("mapVersion", "optional; must equal the catalog's, or the build stops"),
        ("language", "names in the manifest (falls back de-CH → de → en → id)"),
        ("regions.include", "region ids or exact names in any language; each brings all its descendants"),
        ("regions.exclude", "regions left out with their whole subtree, also inside an included one"),
        ("cacheSeed.include", "regions whose files seed the device's map cache"),
        ("cacheSeed.maxBytes", "the cache seed's limit, e.g. 64 MiB"),
        ("target.blockSize", "the device's file system block size for sizes on disk (default 4096)"),
        ("target.capacity", "the most the image may take on disk; a plan over it fails"),
        ("output.formats", "any of: " + Recipe.OutputFormat.allCases.map(\.rawValue).joined(separator: ", ") + " (default: directory)"),
    ]

    /// The environment variables mappack reads (test hooks are left out).
    private static let environment: [(String, String)] = [
        ("SOURCE_DATE_EPOCH", "the build time (seconds since 1970) recorded in images; without it, the catalog's release time"),
        ("XDG_CACHE_HOME", "the download cache is $XDG_CACHE_HOME/mappack (else ~/.cache/mappack) unless --cache is given"),
        ("MAPPACK_REMOTE_CACHE", "a shared bundle cache URL, as --remote-cache"),
        ("MAPPACK_REMOTE_CACHE_HEADER", "one HTTP header line sent to the remote cache (e.g. Authorization); never printed"),
        ("MAPPACK_REMOTE_CACHE_READONLY", "1: never upload to the remote cache, as --remote-cache-readonly"),
        ("MAPPACK_NOW", "the time (seconds since 1970) that signature expiry is judged against, instead of the clock"),
        ("MAPPACK_PROGRESS_INTERVAL", "seconds between progress lines off a terminal"),
        ("MAPPACK_SERVE_MAX_CONNECTIONS", "connections mappack serve answers at once (default: half the open-file limit, at most 512)"),
        ("MAPPACK_SERVE_HEAD_TIMEOUT", "seconds mappack serve waits for a whole request head (default 10)"),
        ("NO_COLOR", "set: no colours on a terminal"),
    ]

    /// Commands worth copying, for the man page.
    private static let examples: [(String, String)] = [
        ("See what a recipe would build, and its sizes:", "mappack plan recipe.yaml --html plan.html"),
        ("Build it into ./Output:", "mappack build recipe.yaml"),
        ("Build from the last image, fetching only changed bundles:", "mappack build recipe.yaml --from Output/demo-2026.11.0"),
        ("Check an image:", "mappack verify Output/demo-2026.12.0.tar.zst"),
        (
            "Install it as a device would, then check the store:",
            "mappack store install --image Output/demo-2026.12.0 --storage maps --cache cache\nmappack store status --storage maps --cache cache"
        ),
        ("Load bash completions:", "source <(mappack completions bash)"),
    ]
}
