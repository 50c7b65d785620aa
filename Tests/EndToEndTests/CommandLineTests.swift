import Foundation
import TestSupport
import Testing

/// The command line behaves as users of cargo, git and curl expect (issue 19 items 2 and 3):
/// `--version`, `--help`/`-h` on every verb, short options, "did you mean", completions, and a
/// README whose command list says what `mappack help` says.
@Suite struct CommandLineTests {
    static let verbs = [
        "build", "merge", "plan", "regions", "verify", "serve", "inspect", "diff", "store", "keygen", "publish", "import", "completions",
        "help",
    ]

    @Test func versionNamesMappackAndTheLibrariesItLinks() throws {
        let result = try Tool.mappack(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        for name in ["mappack ", "libcurl", "libarchive", "zstd", "SQLite", "libyaml", "OpenSSL"] {
            #expect(result.stdout.contains(name), "\(name) missing from: \(result.stdout)")
        }
    }

    @Test(arguments: verbs)
    func everyVerbAnswersHelpAndH(_ verb: String) throws {
        for flag in ["--help", "-h"] {
            let result = try Tool.mappack([verb, flag])
            #expect(result.status == 0, "\(verb) \(flag): \(result.stderr)")
            #expect(result.stdout.contains("usage: mappack \(verb)") || verb == "help", "\(verb) \(flag): \(result.stdout)")
            #expect(result.stdout.contains("--quiet") || verb == "help", "\(verb) \(flag): \(result.stdout)")
        }
    }

    @Test func shortOptionsWorkAndTyposGetASuggestion() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let built = try Tool.mappack(["build", recipe, "-j", "4", "-q", "-o", world.folder.join("out"), "--cache", world.folder.join("cache")])
        #expect(built.status == 0, "\(built.stderr)")
        #expect(FileManager.default.fileExists(atPath: world.folder.join("out/net-2026.11.0/manifest.json")))
        let grouped = try Tool.mappack(["plan", recipe, "-qv", "--cache", world.folder.join("cache")])
        #expect(grouped.status == 0, "\(grouped.stderr)")
        let typo = try Tool.mappack(["build", recipe, "--jsno"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("did you mean --json?"), "\(typo.stderr)")
        let verb = try Tool.mappack(["biuld", recipe])
        #expect(verb.status == 2)
        #expect(verb.stderr.contains("did you mean 'build'?"), "\(verb.stderr)")
        let check = try Tool.mappack(["store", "update", "--check", "--storage", world.folder.join("s"), "--cache", world.folder.join("c")])
        #expect(!check.stderr.contains("unknown option"), "\(check.stderr)")
    }

    @Test func bashCompletionsLoad() throws {
        let script = try Tool.mappack(["completions", "bash"])
        #expect(script.status == 0)
        let folder = TemporaryFolder("completions")
        try Data(script.stdout.utf8).write(to: URL(fileURLWithPath: folder.join("mappack.bash")))
        let loaded = try Tool.run("/bin/bash", ["-c", "source \(folder.join("mappack.bash")) && complete -p mappack"])
        #expect(loaded.status == 0 && loaded.stdout.contains("_mappack"), "\(loaded.stdout)\(loaded.stderr)")
        // What it completes for `mappack build --j`.
        let words = try Tool.run(
            "/bin/bash",
            ["-c", "source \(folder.join("mappack.bash")); COMP_WORDS=(mappack build --j); COMP_CWORD=2; _mappack; echo ${COMPREPLY[@]}"])
        #expect(words.stdout.contains("--jobs") && words.stdout.contains("--json"), "\(words.stdout)")
        for shell in ["zsh", "fish"] { #expect(try Tool.mappack(["completions", shell]).status == 0) }
        #expect(try Tool.mappack(["completions", "tcsh"]).status == 2)
    }

    @Test func readmeCommandListAgreesWithHelp() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let help = try Tool.mappack(["help"]).stdout
        for verb in CommandLineTests.verbs {
            #expect(help.contains("  \(verb) "), "mappack help does not list \(verb)")
            #expect(readme.contains("mappack \(verb)"), "README does not list mappack \(verb)")
            // Every option a verb takes is in the README.
            let options = try Tool.mappack([verb, "--help"]).stdout.split(separator: "\n").compactMap { line -> String? in
                guard let range = line.range(of: "--") else { return nil }
                return String(line[range.lowerBound...].prefix { !$0.isWhitespace })
            }
            for option in options { #expect(readme.contains(option), "README does not mention \(option) (mappack \(verb))") }
        }
        // And every store verb `mappack help --json` declares.
        let described = try #require(
            try JSONSerialization.jsonObject(with: Data(try Tool.mappack(["help", "store", "--json"]).stdout.utf8)) as? [String: Any])
        let storeVerbs = try #require((described["verbs"] as? [[String: Any]])?.first?["verbs"] as? [String])
        #expect(storeVerbs.count >= 12)
        for verb in storeVerbs { #expect(readme.contains("`\(verb)"), "README does not list mappack store \(verb)") }
    }

    /// The commands the documents show (their `sh` and `yaml` blocks: the README's walk-through, the
    /// examples in `docs/`) name verbs and options `mappack` has, so an example never teaches a
    /// flag that was renamed or removed.
    @Test func documentedCommandsUseVerbsAndOptionsMappackHas() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/docs").filter { $0.hasSuffix(".md") }
        var commands: [(document: String, words: [String])] = []
        for document in ["README.md"] + docs.sorted().map({ "docs/" + $0 }) {
            let text = try String(contentsOfFile: Tool.repositoryRoot + "/" + document, encoding: .utf8)
            for line in Self.commandLines(in: text) { commands.append((document, line)) }
        }
        #expect(commands.count >= 15, "\(commands.map(\.words))")
        var known: [String: Set<String>] = [:]
        for (document, words) in commands {
            guard let verb = words.first, verb != "--version" else { continue }
            guard CommandLineTests.verbs.contains(verb) else {
                Issue.record("\(document): mappack \(words.joined(separator: " ")): no verb \(verb)")
                continue
            }
            // A store verb's own options: `mappack store VERB --help`.
            let asked = verb == "store" ? Array(words.prefix(2)) : [verb]
            let key = asked.joined(separator: " ")
            if known[key] == nil {
                let help = try Tool.mappack(asked + ["--help"])
                #expect(help.status == 0, "\(document): mappack \(key) --help: \(help.stderr)")
                known[key] = Set(help.stdout.split(whereSeparator: { $0.isWhitespace || $0 == "," }).filter { $0.hasPrefix("--") }.map(String.init))
            }
            for word in words {
                let option = word.drop { $0 == "[" }
                guard option.hasPrefix("--") else { continue }
                let name = String(option.prefix { $0 != "=" && $0 != "]" })
                #expect(known[key]?.contains(name) == true, "\(document): mappack \(words.joined(separator: " ")): \(key) has no \(name)")
            }
        }
    }

    /// The words after each `mappack ` of the `sh` and `yaml` code blocks of a Markdown text: lines
    /// joined where they end in `\`, comments cut, up to the end of the command (`&&`, `|`, `;`).
    static func commandLines(in text: String) -> [[String]] {
        var commands: [[String]] = []
        var inBlock = false
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = !inBlock && (line == "```sh" || line == "```yaml")
                continue
            }
            guard inBlock else { continue }
            var code = String(line.prefix { $0 != "#" })
            if code.hasSuffix("\\") || code.hasSuffix("\\ ") {
                pending += code.replacingOccurrences(of: "\\", with: " ")
                continue
            }
            code = pending + code
            pending = ""
            for command in code.components(separatedBy: "mappack ").dropFirst() {
                let words = command.split(whereSeparator: \.isWhitespace).map(String.init)
                commands.append(Array(words.prefix { !["&&", "|", ";", "||"].contains($0) }))
            }
        }
        return commands
    }

    /// docs/cli.md lists every environment variable the man page names (from the same declarations as `--help`).
    @Test func cliDocumentListsTheManPagesEnvironment() throws {
        let page = try Tool.mappack(["help", "--man"]).stdout
        let environment = try #require(page.components(separatedBy: ".SH ENVIRONMENT\n").dropFirst().first?.components(separatedBy: "\n.SH ").first)
        let variables = environment.split(separator: "\n").filter { $0.hasPrefix(".B ") }.map { String($0.dropFirst(3)) }
        #expect(variables.count >= 5, "\(variables)")
        let document = try String(contentsOfFile: Tool.repositoryRoot + "/docs/cli.md", encoding: .utf8)
        for variable in variables { #expect(document.contains("`\(variable)`"), "docs/cli.md does not list \(variable)") }
    }

    /// Issue 32 item 7: a verb's words, not the folder's files, where the verb takes words.
    @Test func completionsOfferStoreVerbsVerbNamesAndShells() throws {
        let folder = TemporaryFolder("completions-words")
        let script = folder.join("mappack.bash")
        try Data(try Tool.mappack(["completions", "bash"]).stdout.utf8).write(to: URL(fileURLWithPath: script))
        try Data().write(to: URL(fileURLWithPath: folder.join("a-file-here")))
        func complete(_ words: [String]) throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let result = try Tool.run(
                "/bin/bash", ["-c", "source \(script); COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1); _mappack; echo ${COMPREPLY[@]}"],
                in: folder.path)
            return result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        let store = try complete(["mappack", "store", ""])
        #expect(store.contains("install") && store.contains("repair") && !store.contains("a-file-here"), "\(store)")
        #expect(try complete(["mappack", "store", "rep"]) == ["repair"])
        let help = try complete(["mappack", "help", ""])
        #expect(help.contains("build") && help.contains("store") && !help.contains("a-file-here"), "\(help)")
        #expect(try complete(["mappack", "completions", ""]).sorted() == ["bash", "fish", "zsh"])
        // A recipe is a .yaml (or .yml) file, or a folder to walk into; not any file (issue 43).
        try Data().write(to: URL(fileURLWithPath: folder.join("a-recipe.yaml")))
        try FileManager.default.createDirectory(atPath: folder.join("a-folder"), withIntermediateDirectories: true)
        #expect(try complete(["mappack", "build", "a-"]).sorted() == ["a-folder", "a-recipe.yaml"])
        #expect(try complete(["mappack", "plan", "a-r"]) == ["a-recipe.yaml"])
        #expect(try complete(["mappack", "verify", "a-f"]).sorted() == ["a-file-here", "a-folder"])
        // A name with a space is one completion, not two words.
        try Data().write(to: URL(fileURLWithPath: folder.join("my recipe.yaml")))
        for verb in ["build", "verify"] {
            let spaced = try Tool.run(
                "/bin/bash", ["-c", "source \(script); COMP_WORDS=(mappack \(verb) my); COMP_CWORD=2; _mappack; printf '%s|' \"${COMPREPLY[@]}\""],
                in: folder.path)
            #expect(spaced.stdout == "my recipe.yaml|", "\(verb): \(spaced.stdout)")
        }
        #expect(try Tool.mappack(["completions", "zsh"]).stdout.contains("build) _arguments") == true)
        // The man page names arrows as roff does (a raw `→` made groff warn).
        let page = try Tool.mappack(["help", "--man"]).stdout
        #expect(!page.contains("→") && page.contains("\\(->"), "raw arrows in the man page")
        let zsh = try Tool.mappack(["completions", "zsh"]).stdout
        #expect(zsh.contains("store) _arguments") && zsh.contains("'1:verb:(install status repair"), "\(zsh)")
        let fish = try Tool.mappack(["completions", "fish"]).stdout
        #expect(fish.contains("-n '__fish_seen_subcommand_from store' -a 'install status repair"), "\(fish)")
        for extra in [[], ["--storage", folder.join("s"), "--cache", folder.join("c")]] {
            let typo = try Tool.mappack(["store", "instal"] + extra)
            #expect(typo.status == 2)
            #expect(typo.stderr.contains("unknown store verb 'instal'; did you mean 'install'?"), "\(typo.stderr)")
        }
    }

    /// Issue 32 item 7: the man page says what the README would, for a machine without it.
    @Test func manPageHasStoreVerbsRecipeEnvironmentExitStatusAndExamples() throws {
        let page = try Tool.mappack(["help", "--man"]).stdout
        for section in [".SH RECIPE", ".SH ENVIRONMENT", ".SH EXIT STATUS", ".SH EXAMPLES", ".SH SEE ALSO"] {
            #expect(page.contains("\n\(section)\n"), "no \(section)")
        }
        for verb in ["install", "status", "repair", "update", "download", "available"] {
            #expect(page.contains(".SS store \(verb)"), "no store \(verb)")
        }
        for variable in ["SOURCE_DATE_EPOCH", "MAPPACK_REMOTE_CACHE", "MAPPACK_REMOTE_CACHE_HEADER", "XDG_CACHE_HOME", "NO_COLOR"] {
            #expect(page.contains(".B \(variable)"), "ENVIRONMENT lacks \(variable)")
        }
        for key in ["name", "catalog", "mapVersion", "regions.include", "output.formats"] {
            #expect(page.contains("\\fB\(key)\\fR"), "recipe lacks \(key)")
        }
        let seeAlso = try #require(page.components(separatedBy: ".SH SEE ALSO\n").last)
        #expect(!seeAlso.contains("README.md") && seeAlso.contains("\\fBzstd\\fR(1)"), "\(seeAlso)")
        // Every line roff reads is a request or text; no stray unescaped leading dot or quote.
        for line in page.split(separator: "\n") where line.hasPrefix("'") { Issue.record("line starts with a quote: \(line)") }
    }

    @Test func manPageIsRoff() throws {
        let page = try Tool.mappack(["help", "--man"])
        #expect(page.status == 0 && page.stdout.hasPrefix(".TH MAPPACK 1"))
        #expect(page.stdout.contains(".SS build"))
    }
}

/// A file that is no image, given where an image goes, is called that (issue 19 item 9), not a
/// zstd decoding error.
@Suite struct NotAnImageTests {
    @Test(arguments: ["verify", "inspect"])
    func aRecipeGivenAsAnImageIsNotAnImage(_ verb: String) throws {
        let folder = TemporaryFolder("not-an-image")
        try Data("name: x\ncatalog: c.json\nregions:\n  include: [a]\n".utf8).write(to: URL(fileURLWithPath: folder.join("r.yaml")))
        let result = try Tool.mappack([verb, folder.join("r.yaml")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not a mappack image") && !result.stderr.contains("zstd"), "\(result.stderr)")
    }
}
